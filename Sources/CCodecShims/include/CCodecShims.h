// C shims for the codec libraries: libjpeg and libpng report fatal errors by longjmp, which Swift cannot
// catch, so every call that may fail runs here under setjmp and returns 0 with a message instead.
#ifndef TESSERA_CODEC_SHIMS_H
#define TESSERA_CODEC_SHIMS_H

#include <stdio.h>
#include <stddef.h>
#include <jpeglib.h>
#include <png.h>

// MARK: - libjpeg decompression

typedef struct tessera_jpeg_decoder tessera_jpeg_decoder;

tessera_jpeg_decoder *tessera_jpeg_decoder_create(void);
void tessera_jpeg_decoder_destroy(tessera_jpeg_decoder *decoder);
struct jpeg_decompress_struct *tessera_jpeg_decoder_info(tessera_jpeg_decoder *decoder);
/// The last fatal error's message, or "" if none.
const char *tessera_jpeg_decoder_message(tessera_jpeg_decoder *decoder);
/// The number of corrupt-data warnings so far.
int tessera_jpeg_decoder_warnings(tessera_jpeg_decoder *decoder);
/// Whether libjpeg ran out of data and filled the rest of the image: 1 when the file ended, 2 when a marker
/// cut the compressed data short, 0 if neither happened.
int tessera_jpeg_decoder_missing_data(tessera_jpeg_decoder *decoder);

int tessera_jpeg_set_source_file(tessera_jpeg_decoder *decoder, FILE *file);
int tessera_jpeg_set_source_memory(tessera_jpeg_decoder *decoder, const unsigned char *bytes, unsigned long count);
/// Reads the header, keeping APP1 (EXIF), APP2 (ICC) and APP14 (Adobe) markers.
int tessera_jpeg_read_header(tessera_jpeg_decoder *decoder);
int tessera_jpeg_start_decompress(tessera_jpeg_decoder *decoder);
int tessera_jpeg_crop_scanline(tessera_jpeg_decoder *decoder, JDIMENSION *xoffset, JDIMENSION *width);
int tessera_jpeg_skip_scanlines(tessera_jpeg_decoder *decoder, JDIMENSION count, JDIMENSION *skipped);
int tessera_jpeg_read_scanlines(tessera_jpeg_decoder *decoder, JSAMPARRAY rows, JDIMENSION count, JDIMENSION *read);
int tessera_jpeg_finish_decompress(tessera_jpeg_decoder *decoder);

// MARK: - libjpeg compression

typedef struct tessera_jpeg_encoder tessera_jpeg_encoder;

tessera_jpeg_encoder *tessera_jpeg_encoder_create(void);
void tessera_jpeg_encoder_destroy(tessera_jpeg_encoder *encoder);
struct jpeg_compress_struct *tessera_jpeg_encoder_info(tessera_jpeg_encoder *encoder);
const char *tessera_jpeg_encoder_message(tessera_jpeg_encoder *encoder);

/// Sets the destination and the parameters; `subsampling` is 1 for 4:4:4 and 2 for 4:2:0.
/// With `file` NULL the output goes to memory, read with `tessera_jpeg_encoder_output` after finishing.
int tessera_jpeg_encoder_setup(tessera_jpeg_encoder *encoder, FILE *file, JDIMENSION width, JDIMENSION height,
                               int components, int quality, int progressive, int subsampling, int optimize);
int tessera_jpeg_write_scanlines(tessera_jpeg_encoder *encoder, JSAMPARRAY rows, JDIMENSION count);
int tessera_jpeg_finish_compress(tessera_jpeg_encoder *encoder);
/// The bytes written to memory; valid until the encoder is destroyed.
const unsigned char *tessera_jpeg_encoder_output(tessera_jpeg_encoder *encoder, unsigned long *count);

// MARK: - libpng

typedef struct tessera_png tessera_png;

/// A reader over a FILE, or over bytes in memory when `file` is NULL.
tessera_png *tessera_png_reader_create(FILE *file, const unsigned char *bytes, size_t count);
/// A writer to a FILE, or to memory when `file` is NULL (read with `tessera_png_writer_output`).
tessera_png *tessera_png_writer_create(FILE *file);
/// The bytes written to memory; valid until the writer is destroyed.
const unsigned char *tessera_png_writer_output(tessera_png *png, size_t *count);
void tessera_png_destroy(tessera_png *png);
png_structp tessera_png_struct(tessera_png *png);
png_infop tessera_png_info(tessera_png *png);
const char *tessera_png_message(tessera_png *png);

int tessera_png_read_info(tessera_png *png);
int tessera_png_read_update_info(tessera_png *png);
int tessera_png_read_row(tessera_png *png, unsigned char *row);
int tessera_png_read_image(tessera_png *png, unsigned char **rows);

int tessera_png_write_header(tessera_png *png, png_uint_32 width, png_uint_32 height, int bit_depth, int color_type,
                             int level);
int tessera_png_write_rows(tessera_png *png, unsigned char **rows, png_uint_32 count);
int tessera_png_write_end(tessera_png *png);

#endif
