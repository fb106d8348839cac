// Every OpenJPEG function Tessera calls, defined here with OpenJPEG's own signature and forwarded to
// libopenjp2.so.7, opened on the first call, so only JPEG 2000 work loads it.
#include <openjpeg-2.5/openjpeg.h>

#include "CCodecShims.h"
#include "library_loader.h"

#define OPENJPEG_FUNCTIONS(F, V, P) \
    F(opj_create_compress, opj_codec_t *, (OPJ_CODEC_FORMAT format), (format)) \
    F(opj_create_decompress, opj_codec_t *, (OPJ_CODEC_FORMAT format), (format)) \
    F(opj_decode, OPJ_BOOL, (opj_codec_t *codec, opj_stream_t *stream, opj_image_t *image), (codec, stream, image)) \
    F(opj_decoder_set_strict_mode, OPJ_BOOL, (opj_codec_t *codec, OPJ_BOOL strict), (codec, strict)) \
    V(opj_destroy_codec, (opj_codec_t *codec), (codec)) \
    V(opj_destroy_cstr_info, (opj_codestream_info_v2_t **info), (info)) \
    F(opj_encoder_set_extra_options, OPJ_BOOL, (opj_codec_t *codec, const char *const *options), (codec, options)) \
    F(opj_end_compress, OPJ_BOOL, (opj_codec_t *codec, opj_stream_t *stream), (codec, stream)) \
    F(opj_get_cstr_info, opj_codestream_info_v2_t *, (opj_codec_t *codec), (codec)) \
    F(opj_get_decoded_tile, OPJ_BOOL, (opj_codec_t *codec, opj_stream_t *stream, opj_image_t *image, OPJ_UINT32 tile), \
      (codec, stream, image, tile)) \
    V(opj_image_data_free, (void *data), (data)) \
    V(opj_image_destroy, (opj_image_t *image), (image)) \
    F(opj_image_tile_create, opj_image_t *, \
      (OPJ_UINT32 count, opj_image_cmptparm_t *components, OPJ_COLOR_SPACE space), (count, components, space)) \
    F(opj_read_header, OPJ_BOOL, (opj_stream_t *stream, opj_codec_t *codec, opj_image_t **image), \
      (stream, codec, image)) \
    F(opj_set_decode_area, OPJ_BOOL, \
      (opj_codec_t *codec, opj_image_t *image, OPJ_INT32 x0, OPJ_INT32 y0, OPJ_INT32 x1, OPJ_INT32 y1), \
      (codec, image, x0, y0, x1, y1)) \
    F(opj_set_decoded_resolution_factor, OPJ_BOOL, (opj_codec_t *codec, OPJ_UINT32 factor), (codec, factor)) \
    V(opj_set_default_decoder_parameters, (opj_dparameters_t *parameters), (parameters)) \
    V(opj_set_default_encoder_parameters, (opj_cparameters_t *parameters), (parameters)) \
    F(opj_set_error_handler, OPJ_BOOL, (opj_codec_t *codec, opj_msg_callback callback, void *data), \
      (codec, callback, data)) \
    F(opj_set_info_handler, OPJ_BOOL, (opj_codec_t *codec, opj_msg_callback callback, void *data), \
      (codec, callback, data)) \
    F(opj_set_warning_handler, OPJ_BOOL, (opj_codec_t *codec, opj_msg_callback callback, void *data), \
      (codec, callback, data)) \
    F(opj_setup_decoder, OPJ_BOOL, (opj_codec_t *codec, opj_dparameters_t *parameters), (codec, parameters)) \
    F(opj_setup_encoder, OPJ_BOOL, (opj_codec_t *codec, opj_cparameters_t *parameters, opj_image_t *image), \
      (codec, parameters, image)) \
    F(opj_start_compress, OPJ_BOOL, (opj_codec_t *codec, opj_image_t *image, opj_stream_t *stream), \
      (codec, image, stream)) \
    F(opj_stream_create, opj_stream_t *, (OPJ_SIZE_T bufferSize, OPJ_BOOL isInput), (bufferSize, isInput)) \
    V(opj_stream_destroy, (opj_stream_t *stream), (stream)) \
    V(opj_stream_set_read_function, (opj_stream_t *stream, opj_stream_read_fn function), (stream, function)) \
    V(opj_stream_set_seek_function, (opj_stream_t *stream, opj_stream_seek_fn function), (stream, function)) \
    V(opj_stream_set_skip_function, (opj_stream_t *stream, opj_stream_skip_fn function), (stream, function)) \
    V(opj_stream_set_user_data, (opj_stream_t *stream, void *data, opj_stream_free_user_data_fn free), \
      (stream, data, free)) \
    V(opj_stream_set_user_data_length, (opj_stream_t *stream, OPJ_UINT64 length), (stream, length)) \
    V(opj_stream_set_write_function, (opj_stream_t *stream, opj_stream_write_fn function), (stream, function)) \
    F(opj_write_tile, OPJ_BOOL, \
      (opj_codec_t *codec, OPJ_UINT32 tile, OPJ_BYTE *data, OPJ_UINT32 size, opj_stream_t *stream), \
      (codec, tile, data, size, stream))

TESSERA_LAZY_LIBRARY("libopenjp2.so.7", OPENJPEG_FUNCTIONS, tessera_openjpeg_load)
