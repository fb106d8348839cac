// libwebp's and libwebpdemux's declarations from Debian's libwebp-dev. Not linked: CCodecShims defines the
// functions and opens each library on the first call.
#include <webp/decode.h>
#include <webp/encode.h>
#include <webp/demux.h>
