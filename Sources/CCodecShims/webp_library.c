// Every libwebp function Tessera calls, defined here with libwebp's own signature and forwarded to libwebp.so.7,
// opened on the first call, so only commands that read or write WebP load it. The *Internal functions are what
// the header's inline initialisers (WebPConfigInit, WebPPictureInit, WebPGetFeatures, ...) call.
#include <webp/decode.h>
#include <webp/encode.h>

#include "CCodecShims.h"
#include "library_loader.h"

#define WEBP_FUNCTIONS(F, V, P) \
    F(WebPConfigInitInternal, int, (WebPConfig *config, WebPPreset preset, float quality, int version), \
      (config, preset, quality, version)) \
    F(WebPEncode, int, (const WebPConfig *config, WebPPicture *picture), (config, picture)) \
    F(WebPGetFeaturesInternal, VP8StatusCode, \
      (const uint8_t *data, size_t size, WebPBitstreamFeatures *features, int version), \
      (data, size, features, version)) \
    F(WebPIAppend, VP8StatusCode, (WebPIDecoder *decoder, const uint8_t *data, size_t size), (decoder, data, size)) \
    F(WebPIDecGetRGB, uint8_t *, (const WebPIDecoder *decoder, int *lastRow, int *width, int *height, int *stride), \
      (decoder, lastRow, width, height, stride)) \
    F(WebPIDecode, WebPIDecoder *, (const uint8_t *data, size_t size, WebPDecoderConfig *config), \
      (data, size, config)) \
    V(WebPIDelete, (WebPIDecoder *decoder), (decoder)) \
    F(WebPInitDecoderConfigInternal, int, (WebPDecoderConfig *config, int version), (config, version)) \
    F(WebPMemoryWrite, int, (const uint8_t *data, size_t size, const WebPPicture *picture), (data, size, picture)) \
    V(WebPMemoryWriterClear, (WebPMemoryWriter *writer), (writer)) \
    V(WebPMemoryWriterInit, (WebPMemoryWriter *writer), (writer)) \
    V(WebPPictureFree, (WebPPicture *picture), (picture)) \
    F(WebPPictureImportRGB, int, (WebPPicture *picture, const uint8_t *rgb, int stride), (picture, rgb, stride)) \
    F(WebPPictureImportRGBA, int, (WebPPicture *picture, const uint8_t *rgba, int stride), (picture, rgba, stride)) \
    F(WebPPictureInitInternal, int, (WebPPicture *picture, int version), (picture, version)) \
    F(WebPValidateConfig, int, (const WebPConfig *config), (config))

TESSERA_LAZY_LIBRARY("libwebp.so.7", WEBP_FUNCTIONS, tessera_webp_load)
