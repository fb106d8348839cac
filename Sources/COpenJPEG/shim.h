// OpenJPEG's declarations from Debian's libopenjp2-7-dev, by their versioned folder: a pkg-config include path
// would come with the library's link flag. Not linked: CCodecShims defines the functions and opens libopenjp2 on
// the first call.
#include <openjpeg-2.5/openjpeg.h>
