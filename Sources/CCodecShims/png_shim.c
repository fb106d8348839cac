// libpng under setjmp: each entry point returns 1 on success and 0 after a fatal error, whose message is kept.
#include "CCodecShims.h"
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

struct tessera_png {
    png_structp png;
    png_infop info;
    int writing;
    jmp_buf jump;
    char message[256];
    const unsigned char *bytes;
    size_t count;
    size_t offset;
    unsigned char *output;
    size_t output_count;
    size_t output_capacity;
};

static void tessera_png_error(png_structp png, png_const_charp message) {
    struct tessera_png *state = png_get_error_ptr(png);
    snprintf(state->message, sizeof(state->message), "%s", message);
    longjmp(state->jump, 1);
}

static void tessera_png_warning(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

static void tessera_png_read_memory(png_structp png, png_bytep out, size_t length) {
    struct tessera_png *state = png_get_io_ptr(png);
    if (length > state->count - state->offset) png_error(png, "unexpected end of data");
    memcpy(out, state->bytes + state->offset, length);
    state->offset += length;
}

static void tessera_png_write_memory(png_structp png, png_bytep data, size_t length) {
    struct tessera_png *state = png_get_io_ptr(png);
    if (length > state->output_capacity - state->output_count) {
        size_t capacity = state->output_capacity ? state->output_capacity : 65536;
        while (capacity - state->output_count < length) capacity *= 2;
        unsigned char *grown = realloc(state->output, capacity);
        if (!grown) png_error(png, "out of memory");
        state->output = grown;
        state->output_capacity = capacity;
    }
    memcpy(state->output + state->output_count, data, length);
    state->output_count += length;
}

static void tessera_png_flush_memory(png_structp png) { (void)png; }

#define GUARDED(state, body)                       \
    do {                                           \
        if (setjmp((state)->jump)) return 0;       \
        body;                                      \
        return 1;                                  \
    } while (0)

static tessera_png *tessera_png_create(int writing) {
    tessera_png *state = calloc(1, sizeof(*state));
    if (!state) return NULL;
    state->writing = writing;
    state->png = writing
        ? png_create_write_struct(PNG_LIBPNG_VER_STRING, state, tessera_png_error, tessera_png_warning)
        : png_create_read_struct(PNG_LIBPNG_VER_STRING, state, tessera_png_error, tessera_png_warning);
    if (!state->png) {
        free(state);
        return NULL;
    }
    state->info = png_create_info_struct(state->png);
    if (!state->info) {
        tessera_png_destroy(state);
        return NULL;
    }
    return state;
}

tessera_png *tessera_png_reader_create(FILE *file, const unsigned char *bytes, size_t count) {
    tessera_png *state = tessera_png_create(0);
    if (!state) return NULL;
    if (setjmp(state->jump)) {
        tessera_png_destroy(state);
        return NULL;
    }
    // Dimensions are checked against Tessera's own limits, not libpng's default of 1,000,000.
    png_set_user_limits(state->png, 0x7fffffff, 0x7fffffff);
    png_set_chunk_malloc_max(state->png, 64 * 1024 * 1024);
    if (file) {
        png_init_io(state->png, file);
    } else {
        state->bytes = bytes;
        state->count = count;
        png_set_read_fn(state->png, state, tessera_png_read_memory);
    }
    return state;
}

tessera_png *tessera_png_writer_create(FILE *file) {
    tessera_png *state = tessera_png_create(1);
    if (!state) return NULL;
    if (setjmp(state->jump)) {
        tessera_png_destroy(state);
        return NULL;
    }
    if (file)
        png_init_io(state->png, file);
    else
        png_set_write_fn(state->png, state, tessera_png_write_memory, tessera_png_flush_memory);
    return state;
}

const unsigned char *tessera_png_writer_output(tessera_png *state, size_t *count) {
    *count = state->output_count;
    return state->output;
}

void tessera_png_destroy(tessera_png *state) {
    if (!state) return;
    if (state->writing)
        png_destroy_write_struct(&state->png, &state->info);
    else
        png_destroy_read_struct(&state->png, &state->info, NULL);
    free(state->output);
    free(state);
}

png_structp tessera_png_struct(tessera_png *state) { return state->png; }
png_infop tessera_png_info(tessera_png *state) { return state->info; }
const char *tessera_png_message(tessera_png *state) { return state->message; }

int tessera_png_read_info(tessera_png *state) { GUARDED(state, png_read_info(state->png, state->info)); }
int tessera_png_read_update_info(tessera_png *state) {
    GUARDED(state, png_read_update_info(state->png, state->info));
}
int tessera_png_read_row(tessera_png *state, unsigned char *row) {
    GUARDED(state, png_read_row(state->png, row, NULL));
}
int tessera_png_read_image(tessera_png *state, unsigned char **rows) {
    GUARDED(state, png_read_image(state->png, rows));
}

int tessera_png_write_header(tessera_png *state, png_uint_32 width, png_uint_32 height, int bit_depth,
                             int color_type, int level) {
    GUARDED(state, {
        png_set_IHDR(state->png, state->info, width, height, bit_depth, color_type, PNG_INTERLACE_NONE,
                     PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
        png_set_compression_level(state->png, level);
        // Stored data gains nothing from row filters, and choosing them costs a pass over every row.
        if (level == 0) png_set_filter(state->png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
        png_write_info(state->png, state->info);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        // Tessera keeps 16-bit samples in native byte order; PNG stores them big-endian.
        if (bit_depth == 16) png_set_swap(state->png);
#endif
    });
}
int tessera_png_write_rows(tessera_png *state, unsigned char **rows, png_uint_32 count) {
    GUARDED(state, png_write_rows(state->png, rows, count));
}
int tessera_png_write_end(tessera_png *state) { GUARDED(state, png_write_end(state->png, state->info)); }
