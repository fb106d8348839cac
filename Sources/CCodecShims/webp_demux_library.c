// Every libwebpdemux function Tessera calls (a WebP file's canvas and metadata chunks), defined here with its own
// signature and forwarded to libwebpdemux.so.2, opened on the first call.
#include <webp/demux.h>

#include "CCodecShims.h"
#include "library_loader.h"

#define WEBP_DEMUX_FUNCTIONS(F, V, P) \
    V(WebPDemuxDelete, (WebPDemuxer *demuxer), (demuxer)) \
    F(WebPDemuxGetChunk, int, (const WebPDemuxer *demuxer, const char fourcc[4], int number, WebPChunkIterator *chunk), \
      (demuxer, fourcc, number, chunk)) \
    F(WebPDemuxGetI, uint32_t, (const WebPDemuxer *demuxer, WebPFormatFeature feature), (demuxer, feature)) \
    F(WebPDemuxInternal, WebPDemuxer *, (const WebPData *data, int partial, WebPDemuxState *state, int version), \
      (data, partial, state, version)) \
    V(WebPDemuxReleaseChunkIterator, (WebPChunkIterator *chunk), (chunk))

TESSERA_LAZY_LIBRARY("libwebpdemux.so.2", WEBP_DEMUX_FUNCTIONS, tessera_webp_demux_load)
