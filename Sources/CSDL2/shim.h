// SDL2's declarations from Debian's libsdl2-dev: windows, renderers, textures and input for `tessera view`. Not
// linked: CSDL2Shims defines the functions and opens libSDL2 on the first call.
#include <SDL2/SDL.h>
