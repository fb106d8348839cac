// libjpeg fed incrementally: a suspending data source over a window of the caller's bytes. fill_input_buffer
// returns FALSE, so libjpeg suspends (JPEG_SUSPENDED, 0 rows) when the window runs out and resumes from the
// first unconsumed byte, which the caller passes again at the start of the next window. Nothing is copied.
#include "CCodecShims.h"
#include "jpeg_error.h"
#include <jpegint.h>
#include <stdlib.h>

struct tessera_jpeg_stream {
    struct jpeg_decompress_struct info;
    struct tessera_jpeg_error error;
    struct jpeg_source_mgr source;
    /// Bytes libjpeg asked to skip beyond the end of the window (an unsaved marker segment not yet received).
    size_t pending_skip;
    int completed_scans;
    int finish_pending;
    /// Whether libjpeg's end-of-image flag is set for the output pass only (see start_output), and its value.
    int pretending_end;
    boolean eoi_reached;
};

static void tessera_stream_init_source(j_decompress_ptr info) { (void)info; }

static boolean tessera_stream_fill_input_buffer(j_decompress_ptr info) {
    (void)info;
    return FALSE;
}

static void tessera_stream_skip_input_data(j_decompress_ptr info, long count) {
    tessera_jpeg_stream *stream = (tessera_jpeg_stream *)info;
    if (count <= 0) return;
    struct jpeg_source_mgr *source = info->src;
    if ((size_t)count <= source->bytes_in_buffer) {
        source->next_input_byte += count;
        source->bytes_in_buffer -= (size_t)count;
    } else {
        stream->pending_skip += (size_t)count - source->bytes_in_buffer;
        source->next_input_byte += source->bytes_in_buffer;
        source->bytes_in_buffer = 0;
    }
}

static void tessera_stream_term_source(j_decompress_ptr info) { (void)info; }

#define GUARDED_STEP(stream, body)                    \
    do {                                              \
        if (setjmp((stream)->error.jump)) return 0;   \
        body;                                         \
    } while (0)

tessera_jpeg_stream *tessera_jpeg_stream_create(void) {
    tessera_jpeg_stream *stream = calloc(1, sizeof(*stream));
    if (!stream) return NULL;
    tessera_jpeg_error_init(&stream->error);
    stream->info.err = &stream->error.manager;
    if (setjmp(stream->error.jump)) {
        free(stream);
        return NULL;
    }
    jpeg_create_decompress(&stream->info);
    stream->source.init_source = tessera_stream_init_source;
    stream->source.fill_input_buffer = tessera_stream_fill_input_buffer;
    stream->source.skip_input_data = tessera_stream_skip_input_data;
    stream->source.resync_to_restart = jpeg_resync_to_restart;
    stream->source.term_source = tessera_stream_term_source;
    stream->info.src = &stream->source;
    jpeg_save_markers(&stream->info, JPEG_APP0 + 1, 0xFFFF);
    jpeg_save_markers(&stream->info, JPEG_APP0 + 2, 0xFFFF);
    jpeg_save_markers(&stream->info, JPEG_APP0 + 14, 0xFFFF);
    return stream;
}

void tessera_jpeg_stream_destroy(tessera_jpeg_stream *stream) {
    if (!stream) return;
    jpeg_destroy_decompress(&stream->info);
    free(stream);
}

struct jpeg_decompress_struct *tessera_jpeg_stream_info(tessera_jpeg_stream *stream) { return &stream->info; }
const char *tessera_jpeg_stream_message(tessera_jpeg_stream *stream) { return stream->error.message; }
int tessera_jpeg_stream_completed_scans(tessera_jpeg_stream *stream) { return stream->completed_scans; }

void tessera_jpeg_stream_set_input(tessera_jpeg_stream *stream, const unsigned char *bytes, size_t count) {
    size_t skipped = stream->pending_skip < count ? stream->pending_skip : count;
    stream->pending_skip -= skipped;
    stream->source.next_input_byte = count > skipped ? bytes + skipped : NULL;
    stream->source.bytes_in_buffer = count - skipped;
}

size_t tessera_jpeg_stream_unconsumed(tessera_jpeg_stream *stream) { return stream->source.bytes_in_buffer; }

int tessera_jpeg_stream_read_header(tessera_jpeg_stream *stream) {
    GUARDED_STEP(stream, {
        int status = jpeg_read_header(&stream->info, TRUE);
        if (status == JPEG_SUSPENDED) return 2;
        if (status != JPEG_HEADER_OK) {
            snprintf(stream->error.message, sizeof(stream->error.message), "no image in the data");
            return 0;
        }
        return 1;
    });
}

int tessera_jpeg_stream_start(tessera_jpeg_stream *stream, int buffered) {
    GUARDED_STEP(stream, {
        stream->info.buffered_image = buffered ? TRUE : FALSE;
        return jpeg_start_decompress(&stream->info) ? 1 : 2;
    });
}

int tessera_jpeg_stream_read_rows(tessera_jpeg_stream *stream, JSAMPARRAY rows, JDIMENSION count, JDIMENSION *read) {
    *read = 0;
    GUARDED_STEP(stream, {
        while (*read < count) {
            JDIMENSION got = jpeg_read_scanlines(&stream->info, rows + *read, count - *read);
            if (got == 0) return 2;
            *read += got;
        }
        return 1;
    });
}

int tessera_jpeg_stream_consume(tessera_jpeg_stream *stream) {
    GUARDED_STEP(stream, {
        if (stream->finish_pending) {
            if (!jpeg_finish_output(&stream->info)) return 2;
            stream->finish_pending = 0;
        }
        for (;;) {
            int status = jpeg_consume_input(&stream->info);
            if (status == JPEG_SUSPENDED) return 2;
            if (status == JPEG_SCAN_COMPLETED) stream->completed_scans = stream->info.input_scan_number;
            if (status == JPEG_REACHED_EOI) {
                stream->completed_scans = stream->info.input_scan_number;
                return 1;
            }
        }
    });
}

int tessera_jpeg_stream_start_output(tessera_jpeg_stream *stream, int scan) {
    GUARDED_STEP(stream, {
        if (stream->finish_pending) {
            if (!jpeg_finish_output(&stream->info)) return 2;
            stream->finish_pending = 0;
        }
        jpeg_start_output(&stream->info, scan);
        // The scan is complete, but block smoothing of a DC scan still waits for input two rows ahead until the
        // end of the image has been seen. Nothing more of this scan can come: say so for this output pass, which
        // then computes exactly what a one-shot decode of the file cut after this scan does.
        stream->eoi_reached = stream->info.inputctl->eoi_reached;
        stream->info.inputctl->eoi_reached = TRUE;
        stream->pretending_end = 1;
        return 1;
    });
}

int tessera_jpeg_stream_finish_output(tessera_jpeg_stream *stream) {
    GUARDED_STEP(stream, {
        if (stream->pretending_end) {
            stream->info.inputctl->eoi_reached = stream->eoi_reached;
            stream->pretending_end = 0;
        }
        // Finishing looks for the next scan's marker, which may not have arrived: finish on the next consume.
        if (jpeg_finish_output(&stream->info)) return 1;
        stream->finish_pending = 1;
        return 2;
    });
}

int tessera_jpeg_stream_finish(tessera_jpeg_stream *stream) {
    GUARDED_STEP(stream, return jpeg_finish_decompress(&stream->info) ? 1 : 2);
}
