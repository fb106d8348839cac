// libjpeg under setjmp: each entry point returns 1 on success and 0 after a fatal error, whose message is kept.
#include "CCodecShims.h"
#include "jpeg_error.h"
#include <jerror.h>
#include <stdlib.h>
#include <string.h>

static void tessera_jpeg_error_exit(j_common_ptr info) {
    struct tessera_jpeg_error *error = (struct tessera_jpeg_error *)info->err;
    (*info->err->format_message)(info, error->message);
    longjmp(error->jump, 1);
}

static void tessera_jpeg_emit_message(j_common_ptr info, int level) {
    // Level -1 is a warning about corrupt data; libjpeg continues with gray filler after it.
    struct tessera_jpeg_error *error = (struct tessera_jpeg_error *)info->err;
    if (level == -1) {
        error->warnings += 1;
        if (error->missing_data) return;
        if (info->err->msg_code == JWRN_JPEG_EOF) error->missing_data = 1;
        if (info->err->msg_code == JWRN_HIT_MARKER) error->missing_data = 2;
    }
}

void tessera_jpeg_error_init(struct tessera_jpeg_error *error) {
    jpeg_std_error(&error->manager);
    error->manager.error_exit = tessera_jpeg_error_exit;
    error->manager.emit_message = tessera_jpeg_emit_message;
    error->message[0] = 0;
}

// MARK: - Decompression

struct tessera_jpeg_decoder {
    struct jpeg_decompress_struct info;
    struct tessera_jpeg_error error;
    jvirt_barray_ptr *coefficients;
};

#define GUARDED(decoder, body)                        \
    do {                                              \
        if (setjmp((decoder)->error.jump)) return 0;  \
        body;                                         \
        return 1;                                     \
    } while (0)

tessera_jpeg_decoder *tessera_jpeg_decoder_create(void) {
    tessera_jpeg_decoder *decoder = calloc(1, sizeof(*decoder));
    if (!decoder) return NULL;
    tessera_jpeg_error_init(&decoder->error);
    decoder->info.err = &decoder->error.manager;
    if (setjmp(decoder->error.jump)) {
        free(decoder);
        return NULL;
    }
    jpeg_create_decompress(&decoder->info);
    return decoder;
}

void tessera_jpeg_decoder_destroy(tessera_jpeg_decoder *decoder) {
    if (!decoder) return;
    jpeg_destroy_decompress(&decoder->info);
    free(decoder);
}

struct jpeg_decompress_struct *tessera_jpeg_decoder_info(tessera_jpeg_decoder *decoder) { return &decoder->info; }
const char *tessera_jpeg_decoder_message(tessera_jpeg_decoder *decoder) { return decoder->error.message; }
int tessera_jpeg_decoder_warnings(tessera_jpeg_decoder *decoder) { return decoder->error.warnings; }
int tessera_jpeg_decoder_missing_data(tessera_jpeg_decoder *decoder) { return decoder->error.missing_data; }

int tessera_jpeg_set_source_file(tessera_jpeg_decoder *decoder, FILE *file) {
    GUARDED(decoder, jpeg_stdio_src(&decoder->info, file));
}

int tessera_jpeg_set_source_memory(tessera_jpeg_decoder *decoder, const unsigned char *bytes, unsigned long count) {
    GUARDED(decoder, jpeg_mem_src(&decoder->info, bytes, count));
}

int tessera_jpeg_read_header(tessera_jpeg_decoder *decoder) {
    GUARDED(decoder, {
        jpeg_save_markers(&decoder->info, JPEG_APP0 + 1, 0xFFFF);
        jpeg_save_markers(&decoder->info, JPEG_APP0 + 2, 0xFFFF);
        jpeg_save_markers(&decoder->info, JPEG_APP0 + 14, 0xFFFF);
        if (jpeg_read_header(&decoder->info, TRUE) != JPEG_HEADER_OK) {
            strcpy(decoder->error.message, "no image in the data");
            return 0;
        }
    });
}

int tessera_jpeg_start_decompress(tessera_jpeg_decoder *decoder) {
    GUARDED(decoder, jpeg_start_decompress(&decoder->info));
}

int tessera_jpeg_crop_scanline(tessera_jpeg_decoder *decoder, JDIMENSION *xoffset, JDIMENSION *width) {
    GUARDED(decoder, jpeg_crop_scanline(&decoder->info, xoffset, width));
}

int tessera_jpeg_skip_scanlines(tessera_jpeg_decoder *decoder, JDIMENSION count, JDIMENSION *skipped) {
    GUARDED(decoder, *skipped = jpeg_skip_scanlines(&decoder->info, count));
}

int tessera_jpeg_read_scanlines(tessera_jpeg_decoder *decoder, JSAMPARRAY rows, JDIMENSION count, JDIMENSION *read) {
    GUARDED(decoder, {
        JDIMENSION done = 0;
        while (done < count) {
            JDIMENSION got = jpeg_read_scanlines(&decoder->info, rows + done, count - done);
            if (got == 0) break;
            done += got;
        }
        *read = done;
    });
}

int tessera_jpeg_read_raw_data(tessera_jpeg_decoder *decoder, JSAMPIMAGE planes, JDIMENSION lines, JDIMENSION *read) {
    GUARDED(decoder, *read = jpeg_read_raw_data(&decoder->info, planes, lines));
}

int tessera_jpeg_finish_decompress(tessera_jpeg_decoder *decoder) {
    GUARDED(decoder, jpeg_finish_decompress(&decoder->info));
}

int tessera_jpeg_read_coefficients(tessera_jpeg_decoder *decoder) {
    GUARDED(decoder, decoder->coefficients = jpeg_read_coefficients(&decoder->info));
}

JBLOCKROW tessera_jpeg_decoder_block_row(tessera_jpeg_decoder *decoder, int component, JDIMENSION row) {
    if (setjmp(decoder->error.jump)) return NULL;
    j_common_ptr common = (j_common_ptr)&decoder->info;
    return (*common->mem->access_virt_barray)(common, decoder->coefficients[component], row, 1, FALSE)[0];
}

// MARK: - Compression

struct tessera_jpeg_encoder {
    struct jpeg_compress_struct info;
    struct tessera_jpeg_error error;
    unsigned char *memory;
    unsigned long memory_size;
    int writes_to_memory;  // libjpeg's memory destination was set on `memory`
    jvirt_barray_ptr coefficients[MAX_COMPONENTS];
};

tessera_jpeg_encoder *tessera_jpeg_encoder_create(void) {
    tessera_jpeg_encoder *encoder = calloc(1, sizeof(*encoder));
    if (!encoder) return NULL;
    tessera_jpeg_error_init(&encoder->error);
    encoder->info.err = &encoder->error.manager;
    if (setjmp(encoder->error.jump)) {
        free(encoder);
        return NULL;
    }
    jpeg_create_compress(&encoder->info);
    return encoder;
}

void tessera_jpeg_encoder_destroy(tessera_jpeg_encoder *encoder) {
    if (!encoder) return;
    // libjpeg's memory destination swaps in a larger buffer as the output grows, freeing the one before, and only
    // points `memory` at the buffer it holds when terminated: an encode abandoned part way (its reader failed)
    // would free a freed buffer and leak the one held. Terminating it again after a finished encode changes nothing.
    if (encoder->writes_to_memory) encoder->info.dest->term_destination(&encoder->info);
    jpeg_destroy_compress(&encoder->info);
    free(encoder->memory);
    free(encoder);
}

struct jpeg_compress_struct *tessera_jpeg_encoder_info(tessera_jpeg_encoder *encoder) { return &encoder->info; }
const char *tessera_jpeg_encoder_message(tessera_jpeg_encoder *encoder) { return encoder->error.message; }

int tessera_jpeg_encoder_setup(tessera_jpeg_encoder *encoder, FILE *file, JDIMENSION width, JDIMENSION height,
                               int components, int quality, int progressive, int subsampling, int optimize,
                               int planar) {
    GUARDED(encoder, {
        struct jpeg_compress_struct *info = &encoder->info;
        if (file)
            jpeg_stdio_dest(info, file);
        else if (!info->dest) {  // a destination attached before setup is kept
            jpeg_mem_dest(info, &encoder->memory, &encoder->memory_size);
            encoder->writes_to_memory = 1;
        }
        info->image_width = width;
        info->image_height = height;
        info->input_components = components;
        info->in_color_space = components == 1 ? JCS_GRAYSCALE : planar ? JCS_YCbCr : JCS_RGB;
        jpeg_set_defaults(info);
        info->raw_data_in = planar ? TRUE : FALSE;
        jpeg_set_quality(info, quality, TRUE);
        if (components == 3) {
            info->comp_info[0].h_samp_factor = subsampling;
            info->comp_info[0].v_samp_factor = subsampling;
        }
        info->optimize_coding = optimize ? TRUE : FALSE;
        if (progressive) jpeg_simple_progression(info);
        jpeg_start_compress(info, TRUE);
    });
}

int tessera_jpeg_prepare_thread(void) {
    static _Thread_local int prepared = 0;
    if (prepared) return 0;
    prepared = 1;
    tessera_jpeg_encoder *encoder = tessera_jpeg_encoder_create();
    if (!encoder) return 1;
    JSAMPLE row[8] = {0};
    JSAMPROW rows[8] = {row, row, row, row, row, row, row, row};
    if (tessera_jpeg_encoder_setup(encoder, NULL, 8, 8, 1, 75, 0, 1, 0, 0)
        && tessera_jpeg_write_scanlines(encoder, rows, 8))
        tessera_jpeg_finish_compress(encoder);
    tessera_jpeg_encoder_destroy(encoder);
    return 1;
}

// The arrays libjpeg would size in jpeg_write_coefficients, rounded up to whole MCUs as jpegtran does.
static void tessera_jpeg_request_coefficients(tessera_jpeg_encoder *encoder) {
    struct jpeg_compress_struct *info = &encoder->info;
    int max_h = 1;
    int max_v = 1;
    for (int c = 0; c < info->num_components; c++) {
        if (info->comp_info[c].h_samp_factor > max_h) max_h = info->comp_info[c].h_samp_factor;
        if (info->comp_info[c].v_samp_factor > max_v) max_v = info->comp_info[c].v_samp_factor;
    }
    for (int c = 0; c < info->num_components; c++) {
        jpeg_component_info *component = &info->comp_info[c];
        JDIMENSION h = (JDIMENSION)component->h_samp_factor;
        JDIMENSION v = (JDIMENSION)component->v_samp_factor;
        JDIMENSION across = (info->image_width * h + 8 * max_h - 1) / (8 * max_h);
        JDIMENSION down = (info->image_height * v + 8 * max_v - 1) / (8 * max_v);
        encoder->coefficients[c] = (*info->mem->request_virt_barray)(
            (j_common_ptr)info, JPOOL_IMAGE, TRUE, (across + h - 1) / h * h, (down + v - 1) / v * v, v);
    }
}

int tessera_jpeg_encoder_setup_coefficients(tessera_jpeg_encoder *encoder, tessera_jpeg_decoder *source,
                                            JDIMENSION width, JDIMENSION height) {
    GUARDED(encoder, {
        jpeg_mem_dest(&encoder->info, &encoder->memory, &encoder->memory_size);
        encoder->writes_to_memory = 1;
        jpeg_copy_critical_parameters(&source->info, &encoder->info);
        encoder->info.image_width = width;
        encoder->info.image_height = height;
        tessera_jpeg_request_coefficients(encoder);
        jpeg_write_coefficients(&encoder->info, encoder->coefficients);
    });
}

JBLOCKROW tessera_jpeg_encoder_block_row(tessera_jpeg_encoder *encoder, int component, JDIMENSION row) {
    if (setjmp(encoder->error.jump)) return NULL;
    j_common_ptr common = (j_common_ptr)&encoder->info;
    return (*common->mem->access_virt_barray)(common, encoder->coefficients[component], row, 1, TRUE)[0];
}

int tessera_jpeg_write_scanlines(tessera_jpeg_encoder *encoder, JSAMPARRAY rows, JDIMENSION count) {
    GUARDED(encoder, {
        JDIMENSION done = 0;
        while (done < count) done += jpeg_write_scanlines(&encoder->info, rows + done, count - done);
    });
}

int tessera_jpeg_write_raw_data(tessera_jpeg_encoder *encoder, JSAMPIMAGE planes, JDIMENSION lines) {
    GUARDED(encoder, jpeg_write_raw_data(&encoder->info, planes, lines));
}

int tessera_jpeg_finish_compress(tessera_jpeg_encoder *encoder) {
    GUARDED(encoder, jpeg_finish_compress(&encoder->info));
}

const unsigned char *tessera_jpeg_encoder_output(tessera_jpeg_encoder *encoder, unsigned long *count) {
    *count = encoder->memory_size;
    return encoder->memory;
}
