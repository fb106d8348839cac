// C shims for the codec libraries: libjpeg and libpng report fatal errors by longjmp, which Swift cannot
// catch, so every call that may fail runs here under setjmp and returns 0 with a message instead.
#ifndef TESSERA_CODEC_SHIMS_H
#define TESSERA_CODEC_SHIMS_H

#include <stdio.h>
#include <stddef.h>
#include <jpeglib.h>
#include <png.h>
#include <tiffio.h>

// MARK: - Readers over callbacks

/// Reads up to `count` bytes into `buffer` from `context`'s position and moves it: the count read, 0 at the end,
/// -1 on an error (which the caller keeps; stdio and libtiff see only a failed read).
typedef long (*tessera_read_callback)(void *context, void *buffer, size_t count);
/// Moves `context`'s position as lseek does; the new position, or -1.
typedef long long (*tessera_seek_callback)(void *context, long long offset, int whence);
/// The size in bytes of what `context` reads.
typedef long long (*tessera_size_callback)(void *context);

/// A read-only stdio `FILE` over the callbacks (glibc's fopencookie), buffered by `buffer_size` bytes, for the
/// libraries that read a `FILE` (libjpeg, libpng) and the readers that use stdio. NULL when out of memory.
FILE *tessera_open_reader(void *context, tessera_read_callback read, tessera_seek_callback seek, size_t buffer_size);

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
/// jpeg_read_raw_data (with `raw_data_out` set before starting): one iMCU row of each component's samples,
/// before upsampling and colour conversion; `lines` is the output rows it covers.
int tessera_jpeg_read_raw_data(tessera_jpeg_decoder *decoder, JSAMPIMAGE planes, JDIMENSION lines, JDIMENSION *read);
int tessera_jpeg_finish_decompress(tessera_jpeg_decoder *decoder);
/// Reads every scan into libjpeg's whole-image coefficient arrays (`jpeg_read_coefficients`), instead of
/// starting decompression; `tessera_jpeg_decoder_block_row` then gives block row `row` of `component`.
int tessera_jpeg_read_coefficients(tessera_jpeg_decoder *decoder);
JBLOCKROW tessera_jpeg_decoder_block_row(tessera_jpeg_decoder *decoder, int component, JDIMENSION row);

// MARK: - libjpeg decompression fed coefficients

/// Gives the blocks of the next MCU in libjpeg's order (each component of the scan in turn, its blocks row by row),
/// `count` of them, zeroed; `blocks` is NULL when libjpeg skips the MCU (its blocks are not needed, but the MCU
/// counts as given). Returns 1, or 0 to stop the decode with an error that the caller keeps.
typedef int (*tessera_jpeg_mcu_source)(void *context, JBLOCKROW *blocks, int count);
/// Makes a started single-scan sequential decode (after `tessera_jpeg_start_decompress`) take each MCU's
/// coefficients from `source`, in raster order, instead of decoding the data after the header; the rest of the
/// decode (crop, skip, scaling, upsampling, colour conversion) is libjpeg's as usual.
int tessera_jpeg_feed_coefficients(tessera_jpeg_decoder *decoder, tessera_jpeg_mcu_source source, void *context);

// MARK: - libjpeg decompression fed incrementally

/// A decompressor over a suspending source: the caller passes a window of bytes before each step, starting at
/// the first byte libjpeg has not consumed (the window's length minus `tessera_jpeg_stream_unconsumed` was
/// consumed). Steps return 1 when done, 2 when suspended for more data, 0 after a fatal error.
typedef struct tessera_jpeg_stream tessera_jpeg_stream;

tessera_jpeg_stream *tessera_jpeg_stream_create(void);
void tessera_jpeg_stream_destroy(tessera_jpeg_stream *stream);
struct jpeg_decompress_struct *tessera_jpeg_stream_info(tessera_jpeg_stream *stream);
const char *tessera_jpeg_stream_message(tessera_jpeg_stream *stream);
/// The number of scans whose data has been wholly consumed (buffered-image mode).
int tessera_jpeg_stream_completed_scans(tessera_jpeg_stream *stream);
/// Sets the window libjpeg reads from next; NULL and 0 make the next read suspend.
void tessera_jpeg_stream_set_input(tessera_jpeg_stream *stream, const unsigned char *bytes, size_t count);
/// The bytes at the end of the window libjpeg has not consumed.
size_t tessera_jpeg_stream_unconsumed(tessera_jpeg_stream *stream);
/// Reads the header, keeping APP1 (EXIF), APP2 (ICC) and APP14 (Adobe) markers.
int tessera_jpeg_stream_read_header(tessera_jpeg_stream *stream);
/// jpeg_start_decompress, in buffered-image mode when `buffered` is 1.
int tessera_jpeg_stream_start(tessera_jpeg_stream *stream, int buffered);
int tessera_jpeg_stream_read_rows(tessera_jpeg_stream *stream, JSAMPARRAY rows, JDIMENSION count, JDIMENSION *read);
/// Buffered-image mode: consumes input until it runs out (2) or the end of the image is reached (1).
int tessera_jpeg_stream_consume(tessera_jpeg_stream *stream);
int tessera_jpeg_stream_start_output(tessera_jpeg_stream *stream, int scan);
/// Ends an output pass; 2 when libjpeg needs more data to finish it, which the next consume then does.
int tessera_jpeg_stream_finish_output(tessera_jpeg_stream *stream);
int tessera_jpeg_stream_finish(tessera_jpeg_stream *stream);

// MARK: - libjpeg compression

typedef struct tessera_jpeg_encoder tessera_jpeg_encoder;

tessera_jpeg_encoder *tessera_jpeg_encoder_create(void);
void tessera_jpeg_encoder_destroy(tessera_jpeg_encoder *encoder);
struct jpeg_compress_struct *tessera_jpeg_encoder_info(tessera_jpeg_encoder *encoder);
const char *tessera_jpeg_encoder_message(tessera_jpeg_encoder *encoder);

/// Sets the destination and the parameters; `subsampling` is 1 for 4:4:4 and 2 for 4:2:0.
/// With `file` NULL the output goes to memory, read with `tessera_jpeg_encoder_output` after finishing.
/// `planar` 1 takes YCbCr (or gray) planes at the JPEG's own sampling through `tessera_jpeg_write_raw_data`
/// instead of RGB rows: libjpeg neither converts colour nor subsamples chroma.
int tessera_jpeg_encoder_setup(tessera_jpeg_encoder *encoder, FILE *file, JDIMENSION width, JDIMENSION height,
                               int components, int quality, int progressive, int subsampling, int optimize,
                               int planar);
/// Sets up a sequential JPEG in memory, `width` x `height` pixels, with the frame parameters and quantisation tables
/// of `source` (its header read), to be written from coefficients: fill each component's block rows through
/// `tessera_jpeg_encoder_block_row`, then `tessera_jpeg_finish_compress`.
int tessera_jpeg_encoder_setup_coefficients(tessera_jpeg_encoder *encoder, tessera_jpeg_decoder *source,
                                            JDIMENSION width, JDIMENSION height);
/// Block row `row` of `component` of an encoder set up from coefficients, writable; NULL after an error.
JBLOCKROW tessera_jpeg_encoder_block_row(tessera_jpeg_encoder *encoder, int component, JDIMENSION row);
int tessera_jpeg_write_scanlines(tessera_jpeg_encoder *encoder, JSAMPARRAY rows, JDIMENSION count);
/// jpeg_write_raw_data: one iMCU row of each component's rows (`lines` is the luma rows it covers).
int tessera_jpeg_write_raw_data(tessera_jpeg_encoder *encoder, JSAMPIMAGE planes, JDIMENSION lines);
int tessera_jpeg_finish_compress(tessera_jpeg_encoder *encoder);
/// The bytes written to memory; valid until the encoder is destroyed.
const unsigned char *tessera_jpeg_encoder_output(tessera_jpeg_encoder *encoder, unsigned long *count);

/// Has libjpeg-turbo detect the CPU's SIMD extensions for the calling thread, which it does once per thread, on the
/// thread's first encode or decode: encodes an 8 x 8 gray JPEG to memory, the first time a thread calls it (a
/// failure there only leaves the detection to the thread's first JPEG). Returns 1 when this call did it, 0 when an
/// earlier one on the thread had.
int tessera_jpeg_prepare_thread(void);

/// A destination that passes each `capacity` bytes of output to `write` as they are produced; `write` returns 0 to
/// stop the encoder (which then fails with a write error). Attach it before `tessera_jpeg_encoder_setup` with
/// a NULL file, and destroy it after the encoder.
typedef int (*tessera_jpeg_write_callback)(void *context, const unsigned char *bytes, size_t count);
typedef struct tessera_jpeg_callback_destination tessera_jpeg_callback_destination;

tessera_jpeg_callback_destination *tessera_jpeg_callback_destination_create(size_t capacity,
                                                                            tessera_jpeg_write_callback write,
                                                                            void *context);
void tessera_jpeg_callback_destination_attach(tessera_jpeg_callback_destination *destination,
                                              struct jpeg_compress_struct *info);
void tessera_jpeg_callback_destination_destroy(tessera_jpeg_callback_destination *destination);

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

// MARK: - libpng's progressive reader

/// What a progressive PNG read has produced so far.
typedef struct {
    /// Whether the header was read and `pixels` allocated.
    int has_header;
    /// The header as stored, before expansion.
    int color_type;
    int bit_depth;
    int channels;
    int has_transparency;
    int interlaced;
    /// The decoded image: 8- or 16-bit (native order) gray, gray+alpha, RGB or RGBA rows, `row_bytes` apart.
    png_uint_32 width;
    png_uint_32 height;
    int bytes_per_pixel;
    size_t row_bytes;
    unsigned char *pixels;
    /// The Adam7 pass being received (0-6), the passes wholly received, and the rows of the current pass (or of
    /// the image, when not interlaced) received.
    int pass;
    int completed_passes;
    png_uint_32 rows_in_pass;
    /// Whether the end of the image (IEND) was reached.
    int complete;
    /// When the header asked for more than the limit: the bytes it needs.
    size_t needed_bytes;
} tessera_png_stream_state;

typedef struct tessera_png_stream tessera_png_stream;

/// A progressive reader whose image buffer may take at most `max_bytes`.
tessera_png_stream *tessera_png_stream_create(size_t max_bytes);
void tessera_png_stream_destroy(tessera_png_stream *stream);
png_structp tessera_png_stream_struct(tessera_png_stream *stream);
png_infop tessera_png_stream_info_struct(tessera_png_stream *stream);
const char *tessera_png_stream_message(tessera_png_stream *stream);
const tessera_png_stream_state *tessera_png_stream_progress(tessera_png_stream *stream);
/// Pushes the next bytes; 0 after a fatal error (the message says which).
int tessera_png_stream_process(tessera_png_stream *stream, const unsigned char *bytes, size_t count);

// MARK: - libtiff

// libtiff reports errors through handlers rather than longjmp; these shims give each handle its own handler that
// keeps the first error message, and wrap the variadic field accessors Swift cannot call.
typedef struct tessera_tiff tessera_tiff;

/// Opens a file descriptor for writing, mode "w" or "w8" (classic or BigTIFF); libtiff closes `fd` when the handle
/// is destroyed. Each opening returns NULL only when out of memory; check `tessera_tiff_handle` for the open
/// itself. `max_alloc` caps any single allocation libtiff makes for this handle (0: libtiff's default).
tessera_tiff *tessera_tiff_open_fd(int fd, const char *name, const char *mode, long long max_alloc);
/// Opens bytes in memory for reading; the bytes are copied, so the caller's buffer need not outlive the call.
tessera_tiff *tessera_tiff_open_memory(const unsigned char *bytes, size_t count, const char *name,
                                       long long max_alloc);
/// Opens for reading ("rm", or "rmO" to load tile offsets on demand) what the callbacks read: libtiff seeks and
/// reads only the directories and tiles it needs.
tessera_tiff *tessera_tiff_open_client(void *context, tessera_read_callback read, tessera_seek_callback seek,
                                       tessera_size_callback size, const char *name, const char *mode,
                                       long long max_alloc);
/// Closes the TIFF (which, when writing, flushes it) and frees the handle.
void tessera_tiff_destroy(tessera_tiff *tiff);
/// The open TIFF, or NULL when opening failed (the message says why).
TIFF *tessera_tiff_handle(tessera_tiff *tiff);
/// The first error since the last clear, or "" if none.
const char *tessera_tiff_message(tessera_tiff *tiff);
void tessera_tiff_clear_message(tessera_tiff *tiff);

int tessera_tiff_get_u16(TIFF *tiff, uint32_t tag, uint16_t *value);
int tessera_tiff_get_u32(TIFF *tiff, uint32_t tag, uint32_t *value);
int tessera_tiff_get_extra_samples(TIFF *tiff, uint16_t *count, const uint16_t **types);
int tessera_tiff_get_colormap(TIFF *tiff, const uint16_t **red, const uint16_t **green, const uint16_t **blue);
/// Whether the directory has an ICC profile (tag 34675).
int tessera_tiff_has_icc_profile(TIFF *tiff);

/// TIFFSetField for tags taking one integer (16- or 32-bit tags and pseudo-tags such as JPEGCOLORMODE).
int tessera_tiff_set_int(TIFF *tiff, uint32_t tag, int value);
int tessera_tiff_set_u32(TIFF *tiff, uint32_t tag, uint32_t value);
/// TIFFSetField for tags taking two 16-bit values (YCbCrSubsampling).
int tessera_tiff_set_u16_pair(TIFF *tiff, uint32_t tag, uint16_t first, uint16_t second);
int tessera_tiff_set_extra_samples(TIFF *tiff, uint16_t count, const uint16_t *types);

// MARK: - Codec libraries opened on first use

// libtiff, libwebp, libwebpdemux, OpenJPEG and libxml2 are not linked: each *_library.c defines the functions
// Tessera calls and opens the library on the first one. Each of these opens its library unless done already and
// returns NULL when it is loaded, else why it could not be (dlerror's message); call it before the library's first
// function, which aborts with the message when the library cannot be loaded.
const char *tessera_tiff_load(void);
const char *tessera_webp_load(void);
const char *tessera_webp_demux_load(void);
const char *tessera_openjpeg_load(void);
const char *tessera_xml2_load(void);

// MARK: - libxml2

/// A parsed XML document (libxml2's tree) and one of its elements, opaque to Swift.
typedef struct tessera_xml_document tessera_xml_document;
typedef struct tessera_xml_element tessera_xml_element;

/// Parses `count` bytes of XML without network access; NULL on failure, with the first line of libxml2's message
/// in `message`. Free the document with tessera_xml_free.
tessera_xml_document *tessera_xml_parse(const char *bytes, int count, char *message, size_t capacity);
void tessera_xml_free(tessera_xml_document *document);
/// The first element whose local name is `name` among the root element and what follows and is below it (`below`
/// NULL), or below `below`, depth first; NULL when there is none.
const tessera_xml_element *tessera_xml_find(tessera_xml_document *document, const tessera_xml_element *below,
                                            const char *name);
/// The text of `element`'s attribute with the local name `name` ("" when empty), valid while its document is;
/// NULL when it has none.
const char *tessera_xml_attribute(const tessera_xml_element *element, const char *name);

#endif
