// Every SDL function the viewer calls, defined here with SDL's own signature and forwarded to libSDL2-2.0.so.0,
// opened on the first call. Add a function the viewer starts calling to the list; the compiler checks each entry
// against SDL's header.
#include <SDL2/SDL.h>

#include "library_loader.h"
#include "sdl_shim.h"

#define SDL_FUNCTIONS(F, V, P) \
    F(SDL_CreateRenderer, SDL_Renderer *, (SDL_Window *window, int index, Uint32 flags), (window, index, flags)) \
    F(SDL_CreateTexture, SDL_Texture *, (SDL_Renderer *renderer, Uint32 format, int access, int w, int h), \
      (renderer, format, access, w, h)) \
    F(SDL_CreateWindow, SDL_Window *, (const char *title, int x, int y, int w, int h, Uint32 flags), \
      (title, x, y, w, h, flags)) \
    V(SDL_DestroyRenderer, (SDL_Renderer *renderer), (renderer)) \
    V(SDL_DestroyTexture, (SDL_Texture *texture), (texture)) \
    V(SDL_DestroyWindow, (SDL_Window *window), (window)) \
    F(SDL_GetCurrentVideoDriver, const char *, (void), ()) \
    F(SDL_GetError, const char *, (void), ()) \
    F(SDL_GetKeyFromName, SDL_Keycode, (const char *name), (name)) \
    F(SDL_GetMouseState, Uint32, (int *x, int *y), (x, y)) \
    F(SDL_GetRendererInfo, int, (SDL_Renderer *renderer, SDL_RendererInfo *info), (renderer, info)) \
    F(SDL_GetRendererOutputSize, int, (SDL_Renderer *renderer, int *w, int *h), (renderer, w, h)) \
    F(SDL_GetWindowFlags, Uint32, (SDL_Window *window), (window)) \
    V(SDL_GetWindowSize, (SDL_Window *window, int *w, int *h), (window, w, h)) \
    F(SDL_Init, int, (Uint32 flags), (flags)) \
    F(SDL_PollEvent, int, (SDL_Event *event), (event)) \
    F(SDL_PushEvent, int, (SDL_Event *event), (event)) \
    V(SDL_Quit, (void), ()) \
    F(SDL_RegisterEvents, Uint32, (int count), (count)) \
    F(SDL_RenderClear, int, (SDL_Renderer *renderer), (renderer)) \
    F(SDL_RenderCopyF, int, \
      (SDL_Renderer *renderer, SDL_Texture *texture, const SDL_Rect *source, const SDL_FRect *destination), \
      (renderer, texture, source, destination)) \
    F(SDL_RenderFillRects, int, (SDL_Renderer *renderer, const SDL_Rect *rects, int count), \
      (renderer, rects, count)) \
    V(SDL_RenderPresent, (SDL_Renderer *renderer), (renderer)) \
    F(SDL_RenderReadPixels, int, \
      (SDL_Renderer *renderer, const SDL_Rect *rect, Uint32 format, void *pixels, int pitch), \
      (renderer, rect, format, pixels, pitch)) \
    F(SDL_SetHint, SDL_bool, (const char *name, const char *value), (name, value)) \
    F(SDL_SetRenderDrawBlendMode, int, (SDL_Renderer *renderer, SDL_BlendMode mode), (renderer, mode)) \
    F(SDL_SetRenderDrawColor, int, (SDL_Renderer *renderer, Uint8 r, Uint8 g, Uint8 b, Uint8 a), \
      (renderer, r, g, b, a)) \
    F(SDL_SetTextureAlphaMod, int, (SDL_Texture *texture, Uint8 alpha), (texture, alpha)) \
    F(SDL_SetTextureBlendMode, int, (SDL_Texture *texture, SDL_BlendMode mode), (texture, mode)) \
    F(SDL_SetWindowFullscreen, int, (SDL_Window *window, Uint32 flags), (window, flags)) \
    V(SDL_SetWindowSize, (SDL_Window *window, int w, int h), (window, w, h)) \
    F(SDL_UpdateTexture, int, (SDL_Texture *texture, const SDL_Rect *rect, const void *pixels, int pitch), \
      (texture, rect, pixels, pitch)) \
    F(SDL_WaitEventTimeout, int, (SDL_Event *event, int timeout), (event, timeout))

TESSERA_LAZY_LIBRARY("libSDL2-2.0.so.0", SDL_FUNCTIONS, tessera_sdl_load)
