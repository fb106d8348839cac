// libtiff's declarations from Debian's libtiff-dev. Not linked: CCodecShims defines the functions and opens libtiff
// on the first call.
#include <tiffio.h>
