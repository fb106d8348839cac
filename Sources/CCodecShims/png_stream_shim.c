// libpng's progressive reader under setjmp: bytes are pushed as they arrive (png_process_data keeps only an
// unfinished chunk's bytes), and rows land in one image buffer. Interlaced images are read without libpng's
// interlace handling: each Adam7 pass's pixels are stored at their own positions, so the image after any pass
// can be made from the pixels stored so far.
#include "CCodecShims.h"
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct tessera_png_stream {
    png_structp png;
    png_infop info;
    jmp_buf jump;
    char message[256];
    size_t max_bytes;
    tessera_png_stream_state state;
};

static const int adam7_x_start[7] = {0, 4, 0, 2, 0, 1, 0};
static const int adam7_x_step[7] = {8, 8, 4, 4, 2, 2, 1};
static const int adam7_y_start[7] = {0, 0, 4, 0, 2, 0, 1};
static const int adam7_y_step[7] = {8, 8, 8, 4, 4, 2, 2};

static void tessera_png_stream_error(png_structp png, png_const_charp message) {
    tessera_png_stream *stream = png_get_error_ptr(png);
    snprintf(stream->message, sizeof(stream->message), "%s", message);
    longjmp(stream->jump, 1);
}

static void tessera_png_stream_warning(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

static void tessera_png_stream_info(png_structp png, png_infop info) {
    tessera_png_stream *stream = png_get_progressive_ptr(png);
    tessera_png_stream_state *state = &stream->state;
    state->color_type = png_get_color_type(png, info);
    state->bit_depth = png_get_bit_depth(png, info);
    state->channels = png_get_channels(png, info);
    state->has_transparency = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    state->interlaced = png_get_interlace_type(png, info) == PNG_INTERLACE_ADAM7;
    png_set_expand(png);  // palette to RGB, gray below 8 bits to 8, tRNS to alpha
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    png_set_swap(png);  // Tessera keeps 16-bit samples in native byte order
#endif
    png_read_update_info(png, info);
    state->width = png_get_image_width(png, info);
    state->height = png_get_image_height(png, info);
    state->bytes_per_pixel = png_get_channels(png, info) * (png_get_bit_depth(png, info) == 16 ? 2 : 1);
    state->row_bytes = (size_t)state->width * (size_t)state->bytes_per_pixel;
    if (state->height != 0 && state->row_bytes > stream->max_bytes / state->height) {
        state->needed_bytes = state->row_bytes > SIZE_MAX / state->height ? SIZE_MAX : state->row_bytes * state->height;
        png_error(png, "the image is over the memory limit");
    }
    state->pixels = calloc(state->height ? state->height : 1, state->row_bytes ? state->row_bytes : 1);
    if (!state->pixels) png_error(png, "out of memory");
    state->has_header = 1;
}

static void tessera_png_stream_row(png_structp png, png_bytep row, png_uint_32 row_number, int pass) {
    tessera_png_stream *stream = png_get_progressive_ptr(png);
    tessera_png_stream_state *state = &stream->state;
    if (!row || row_number >= state->height) return;
    if (!state->interlaced) {
        memcpy(state->pixels + (size_t)row_number * state->row_bytes, row, state->row_bytes);
        state->rows_in_pass = row_number + 1;
        return;
    }
    if (pass != state->pass) {
        // libpng skips empty passes: every pass before this one is complete.
        state->pass = pass;
        state->completed_passes = pass;
        state->rows_in_pass = 0;
    }
    size_t y = adam7_y_start[pass] + (size_t)row_number * adam7_y_step[pass];
    if (y >= state->height) return;
    size_t pixel = (size_t)state->bytes_per_pixel;
    unsigned char *target = state->pixels + y * state->row_bytes;
    size_t index = 0;
    for (size_t x = adam7_x_start[pass]; x < state->width; x += adam7_x_step[pass], index += 1)
        memcpy(target + x * pixel, row + index * pixel, pixel);
    state->rows_in_pass = row_number + 1;
}

static void tessera_png_stream_end(png_structp png, png_infop info) {
    (void)info;
    tessera_png_stream *stream = png_get_progressive_ptr(png);
    stream->state.complete = 1;
    stream->state.completed_passes = 7;
}

tessera_png_stream *tessera_png_stream_create(size_t max_bytes) {
    tessera_png_stream *stream = calloc(1, sizeof(*stream));
    if (!stream) return NULL;
    stream->max_bytes = max_bytes;
    stream->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, stream, tessera_png_stream_error,
                                         tessera_png_stream_warning);
    if (!stream->png) {
        free(stream);
        return NULL;
    }
    stream->info = png_create_info_struct(stream->png);
    if (!stream->info || setjmp(stream->jump)) {
        tessera_png_stream_destroy(stream);
        return NULL;
    }
    // Dimensions are checked against Tessera's own limits, not libpng's default of 1,000,000.
    png_set_user_limits(stream->png, 0x7fffffff, 0x7fffffff);
    png_set_chunk_malloc_max(stream->png, 64 * 1024 * 1024);
    png_set_progressive_read_fn(stream->png, stream, tessera_png_stream_info, tessera_png_stream_row,
                                tessera_png_stream_end);
    return stream;
}

void tessera_png_stream_destroy(tessera_png_stream *stream) {
    if (!stream) return;
    png_destroy_read_struct(&stream->png, stream->info ? &stream->info : NULL, NULL);
    free(stream->state.pixels);
    free(stream);
}

png_structp tessera_png_stream_struct(tessera_png_stream *stream) { return stream->png; }
png_infop tessera_png_stream_info_struct(tessera_png_stream *stream) { return stream->info; }
const char *tessera_png_stream_message(tessera_png_stream *stream) { return stream->message; }
const tessera_png_stream_state *tessera_png_stream_progress(tessera_png_stream *stream) { return &stream->state; }

int tessera_png_stream_process(tessera_png_stream *stream, const unsigned char *bytes, size_t count) {
    if (setjmp(stream->jump)) return 0;
    png_process_data(stream->png, stream->info, (png_bytep)bytes, count);
    return 1;
}
