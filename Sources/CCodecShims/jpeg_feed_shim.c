// libjpeg decoding coefficients handed to it instead of its own entropy decoding. libjpeg has no public interface
// for that, so this shim replaces the decompressor's entropy decoder module (jpegint.h's
// `struct jpeg_entropy_decoder`, unchanged from IJG 6b to libjpeg-turbo 3) after jpeg_start_decompress: the
// single-pass coefficient controller then asks it for each MCU, zeroes the MCU's blocks before each call, and runs
// libjpeg's own (SIMD) IDCT, DCT scaling, upsampling and colour conversion on what it gets.
#include "CCodecShims.h"
#include "jpeg_error.h"
#include <jpegint.h>
#include <string.h>

struct tessera_coefficient_feed {
    struct jpeg_entropy_decoder module;
    tessera_jpeg_mcu_source source;
    void *context;
};

// The scan was started before the module was replaced: nothing to set up.
static void tessera_feed_start_pass(j_decompress_ptr info) { (void)info; }

static boolean tessera_feed_decode_mcu(j_decompress_ptr info, JBLOCKROW *blocks) {
    struct tessera_coefficient_feed *feed = (struct tessera_coefficient_feed *)info->entropy;
    if (!feed->source(feed->context, blocks, info->blocks_in_MCU)) {
        // The source keeps why; the shim's entry point returns 0 with this message.
        struct tessera_jpeg_error *error = (struct tessera_jpeg_error *)info->err;
        strcpy(error->message, "the coefficients fed to libjpeg could not be decoded");
        longjmp(error->jump, 1);
    }
    return TRUE;
}

int tessera_jpeg_feed_coefficients(tessera_jpeg_decoder *decoder, tessera_jpeg_mcu_source source, void *context) {
    struct jpeg_decompress_struct *info = tessera_jpeg_decoder_info(decoder);
    struct tessera_jpeg_error *error = (struct tessera_jpeg_error *)info->err;
    if (setjmp(error->jump)) return 0;
    if (info->global_state != DSTATE_SCANNING || info->progressive_mode || info->buffered_image ||
        info->inputctl->has_multiple_scans) {
        strcpy(error->message, "coefficients can only be fed to a started single-scan sequential decode");
        return 0;
    }
    struct tessera_coefficient_feed *feed = (struct tessera_coefficient_feed *)(*info->mem->alloc_small)(
        (j_common_ptr)info, JPOOL_IMAGE, sizeof(struct tessera_coefficient_feed));
    feed->module.start_pass = tessera_feed_start_pass;
    feed->module.decode_mcu = tessera_feed_decode_mcu;
    feed->module.insufficient_data = FALSE;
    feed->source = source;
    feed->context = context;
    info->entropy = &feed->module;
    return 1;
}
