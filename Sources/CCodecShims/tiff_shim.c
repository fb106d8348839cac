// libtiff with per-handle error capture: each handle keeps its first error message for Tessera's errors instead of
// libtiff printing to stderr, and the variadic TIFFGetField/TIFFSetField get typed wrappers.
#include "CCodecShims.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct tessera_tiff {
    TIFF *tiff;
    char message[512];
    // Bytes in memory for handles opened with tessera_tiff_open_memory.
    unsigned char *bytes;
    size_t count;
    size_t offset;
    // The callbacks of handles opened with tessera_tiff_open_client.
    void *context;
    tessera_read_callback read;
    tessera_seek_callback seek;
    tessera_size_callback size;
};

static int tessera_tiff_error(TIFF *tiff, void *user_data, const char *module, const char *format, va_list args) {
    (void)tiff;
    struct tessera_tiff *state = user_data;
    if (state->message[0] == 0) {
        char detail[400];
        vsnprintf(detail, sizeof(detail), format, args);
        if (module && *module)
            snprintf(state->message, sizeof(state->message), "%s: %s", module, detail);
        else
            snprintf(state->message, sizeof(state->message), "%s", detail);
    }
    return 1;  // handled: libtiff's global handler stays silent
}

static int tessera_tiff_warning(TIFF *tiff, void *user_data, const char *module, const char *format, va_list args) {
    // Warnings (unknown tags, odd but readable fields) are not failures; keep stderr quiet.
    (void)tiff;
    (void)user_data;
    (void)module;
    (void)format;
    (void)args;
    return 1;
}

// A new handle's state and the options its open call takes (errors routed into the state's message, allocations
// capped at max_alloc bytes when positive); the caller frees the options once the open returns. NULL when out of memory.
static struct tessera_tiff *tessera_tiff_new(long long max_alloc, TIFFOpenOptions **options) {
    struct tessera_tiff *state = calloc(1, sizeof(*state));
    *options = state ? TIFFOpenOptionsAlloc() : NULL;
    if (!*options) {
        free(state);
        return NULL;
    }
    TIFFOpenOptionsSetErrorHandlerExtR(*options, tessera_tiff_error, state);
    TIFFOpenOptionsSetWarningHandlerExtR(*options, tessera_tiff_warning, state);
    if (max_alloc > 0) TIFFOpenOptionsSetMaxSingleMemAlloc(*options, (tmsize_t)max_alloc);
    return state;
}

tessera_tiff *tessera_tiff_open_fd(int fd, const char *name, const char *mode, long long max_alloc) {
    TIFFOpenOptions *options;
    struct tessera_tiff *state = tessera_tiff_new(max_alloc, &options);
    if (!state) return NULL;
    state->tiff = TIFFFdOpenExt(fd, name, mode, options);
    TIFFOpenOptionsFree(options);
    return state;
}

// MARK: - Reading from memory

static tmsize_t tessera_tiff_memory_read(thandle_t handle, void *buffer, tmsize_t size) {
    struct tessera_tiff *state = (struct tessera_tiff *)handle;
    if (size <= 0) return 0;
    size_t available = state->count - state->offset;
    size_t wanted = (size_t)size < available ? (size_t)size : available;
    memcpy(buffer, state->bytes + state->offset, wanted);
    state->offset += wanted;
    return (tmsize_t)wanted;
}

static tmsize_t tessera_tiff_memory_write(thandle_t handle, void *buffer, tmsize_t size) {
    (void)handle;
    (void)buffer;
    (void)size;
    return -1;
}

static toff_t tessera_tiff_memory_seek(thandle_t handle, toff_t offset, int whence) {
    struct tessera_tiff *state = (struct tessera_tiff *)handle;
    uint64_t base = whence == SEEK_CUR ? state->offset : whence == SEEK_END ? state->count : 0;
    uint64_t target = base + offset;
    // Seeking past the end is allowed (reads there return nothing), as with a file.
    state->offset = target > state->count ? state->count : (size_t)target;
    return target;
}

static int tessera_tiff_memory_close(thandle_t handle) {
    (void)handle;
    return 0;
}

static toff_t tessera_tiff_memory_size(thandle_t handle) { return ((struct tessera_tiff *)handle)->count; }

static int tessera_tiff_memory_map(thandle_t handle, void **base, toff_t *size) {
    (void)handle;
    (void)base;
    (void)size;
    return 0;
}

static void tessera_tiff_memory_unmap(thandle_t handle, void *base, toff_t size) {
    (void)handle;
    (void)base;
    (void)size;
}

tessera_tiff *tessera_tiff_open_memory(const unsigned char *bytes, size_t count, const char *name,
                                       long long max_alloc) {
    TIFFOpenOptions *options;
    struct tessera_tiff *state = tessera_tiff_new(max_alloc, &options);
    if (!state) return NULL;
    state->bytes = malloc(count ? count : 1);
    if (!state->bytes) {
        free(state);
        TIFFOpenOptionsFree(options);
        return NULL;
    }
    memcpy(state->bytes, bytes, count);
    state->count = count;
    state->tiff = TIFFClientOpenExt(name, "rm", (thandle_t)state, tessera_tiff_memory_read, tessera_tiff_memory_write,
                                    tessera_tiff_memory_seek, tessera_tiff_memory_close, tessera_tiff_memory_size,
                                    tessera_tiff_memory_map, tessera_tiff_memory_unmap, options);
    TIFFOpenOptionsFree(options);
    return state;
}

// MARK: - Reading through callbacks

static tmsize_t tessera_tiff_client_read(thandle_t handle, void *buffer, tmsize_t size) {
    struct tessera_tiff *state = (struct tessera_tiff *)handle;
    if (size <= 0) return 0;
    long got = state->read(state->context, buffer, (size_t)size);
    return got < 0 ? -1 : (tmsize_t)got;
}

static toff_t tessera_tiff_client_seek(thandle_t handle, toff_t offset, int whence) {
    struct tessera_tiff *state = (struct tessera_tiff *)handle;
    long long position = state->seek(state->context, (long long)offset, whence);
    return position < 0 ? (toff_t)-1 : (toff_t)position;
}

static toff_t tessera_tiff_client_size(thandle_t handle) {
    struct tessera_tiff *state = (struct tessera_tiff *)handle;
    return (toff_t)state->size(state->context);
}

tessera_tiff *tessera_tiff_open_client(void *context, tessera_read_callback read, tessera_seek_callback seek,
                                       tessera_size_callback size, const char *name, const char *mode,
                                       long long max_alloc) {
    TIFFOpenOptions *options;
    struct tessera_tiff *state = tessera_tiff_new(max_alloc, &options);
    if (!state) return NULL;
    state->context = context;
    state->read = read;
    state->seek = seek;
    state->size = size;
    state->tiff = TIFFClientOpenExt(name, mode, (thandle_t)state, tessera_tiff_client_read, tessera_tiff_memory_write,
                                    tessera_tiff_client_seek, tessera_tiff_memory_close, tessera_tiff_client_size,
                                    tessera_tiff_memory_map, tessera_tiff_memory_unmap, options);
    TIFFOpenOptionsFree(options);
    return state;
}

// MARK: - Handles

void tessera_tiff_destroy(tessera_tiff *state) {
    if (!state) return;
    if (state->tiff) TIFFClose(state->tiff);
    free(state->bytes);
    free(state);
}

TIFF *tessera_tiff_handle(tessera_tiff *state) { return state->tiff; }
const char *tessera_tiff_message(tessera_tiff *state) { return state->message; }
void tessera_tiff_clear_message(tessera_tiff *state) { state->message[0] = 0; }

// MARK: - Fields

int tessera_tiff_get_u16(TIFF *tiff, uint32_t tag, uint16_t *value) { return TIFFGetField(tiff, tag, value); }
int tessera_tiff_get_u32(TIFF *tiff, uint32_t tag, uint32_t *value) { return TIFFGetField(tiff, tag, value); }
int tessera_tiff_get_extra_samples(TIFF *tiff, uint16_t *count, const uint16_t **types) {
    return TIFFGetFieldDefaulted(tiff, TIFFTAG_EXTRASAMPLES, count, types);
}
int tessera_tiff_get_colormap(TIFF *tiff, const uint16_t **red, const uint16_t **green, const uint16_t **blue) {
    return TIFFGetField(tiff, TIFFTAG_COLORMAP, red, green, blue);
}
int tessera_tiff_has_icc_profile(TIFF *tiff) {
    uint32_t count = 0;
    const void *data = NULL;
    return TIFFGetField(tiff, TIFFTAG_ICCPROFILE, &count, &data) && count > 0 ? 1 : 0;
}

int tessera_tiff_set_int(TIFF *tiff, uint32_t tag, int value) { return TIFFSetField(tiff, tag, value); }
int tessera_tiff_set_u32(TIFF *tiff, uint32_t tag, uint32_t value) { return TIFFSetField(tiff, tag, value); }
int tessera_tiff_set_u16_pair(TIFF *tiff, uint32_t tag, uint16_t first, uint16_t second) {
    return TIFFSetField(tiff, tag, (int)first, (int)second);
}
int tessera_tiff_set_extra_samples(TIFF *tiff, uint16_t count, const uint16_t *types) {
    return TIFFSetField(tiff, TIFFTAG_EXTRASAMPLES, (int)count, types);
}
