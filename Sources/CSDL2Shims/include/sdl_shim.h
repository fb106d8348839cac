// libSDL2 is opened on the first SDL call rather than linked (sdl_shim.c), so only `tessera view` loads it and the
// audio, X11, Wayland and DRM libraries it needs.
#ifndef TESSERA_SDL_SHIMS_H
#define TESSERA_SDL_SHIMS_H

/// Opens libSDL2-2.0.so.0 unless done already: NULL when it is loaded, else why it could not be (dlerror's message).
/// Call it before the first SDL function: those abort with the message when the library cannot be loaded.
const char *tessera_sdl_load(void);

#endif
