// SDL2 from Debian's libsdl2-dev: windows, renderers, textures and input for `tessera view`.
#include <SDL2/SDL.h>
