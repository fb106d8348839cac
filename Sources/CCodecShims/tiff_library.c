// Every libtiff function Tessera calls, defined here with libtiff's own signature and forwarded to libtiff.so.6,
// opened on the first call: linked, it loaded libtiff and the seven libraries it needs (Lerc, JBIG, deflate, zstd,
// LZMA, WebP) into every run, a millisecond of each command's start. The varargs TIFFGetField,
// TIFFGetFieldDefaulted and TIFFSetField are defined over their va_list forms.
#include <stdarg.h>
#include <tiffio.h>

#include "CCodecShims.h"
#include "library_loader.h"

#define TIFF_FUNCTIONS(F, V, P) \
    F(TIFFClientOpenExt, TIFF *, (const char *name, const char *mode, thandle_t client, TIFFReadWriteProc read, \
      TIFFReadWriteProc write, TIFFSeekProc seek, TIFFCloseProc close, TIFFSizeProc size, TIFFMapFileProc map, \
      TIFFUnmapFileProc unmap, TIFFOpenOptions *options), \
      (name, mode, client, read, write, seek, close, size, map, unmap, options)) \
    V(TIFFClose, (TIFF *tiff), (tiff)) \
    F(TIFFComputeStrip, uint32_t, (TIFF *tiff, uint32_t row, uint16_t sample), (tiff, row, sample)) \
    F(TIFFComputeTile, uint32_t, (TIFF *tiff, uint32_t x, uint32_t y, uint32_t z, uint16_t sample), \
      (tiff, x, y, z, sample)) \
    F(TIFFFdOpenExt, TIFF *, (int fd, const char *name, const char *mode, TIFFOpenOptions *options), \
      (fd, name, mode, options)) \
    F(TIFFFlush, int, (TIFF *tiff), (tiff)) \
    F(TIFFGetStrileByteCount, uint64_t, (TIFF *tiff, uint32_t strile), (tiff, strile)) \
    F(TIFFGetStrileOffset, uint64_t, (TIFF *tiff, uint32_t strile), (tiff, strile)) \
    F(TIFFIsCODECConfigured, int, (uint16_t scheme), (scheme)) \
    F(TIFFIsTiled, int, (TIFF *tiff), (tiff)) \
    F(TIFFNumberOfDirectories, tdir_t, (TIFF *tiff), (tiff)) \
    F(TIFFOpenOptionsAlloc, TIFFOpenOptions *, (void), ()) \
    V(TIFFOpenOptionsFree, (TIFFOpenOptions *options), (options)) \
    V(TIFFOpenOptionsSetErrorHandlerExtR, (TIFFOpenOptions *options, TIFFErrorHandlerExtR handler, void *data), \
      (options, handler, data)) \
    V(TIFFOpenOptionsSetMaxSingleMemAlloc, (TIFFOpenOptions *options, tmsize_t bytes), (options, bytes)) \
    V(TIFFOpenOptionsSetWarningHandlerExtR, (TIFFOpenOptions *options, TIFFErrorHandlerExtR handler, void *data), \
      (options, handler, data)) \
    F(TIFFRGBAImageOK, int, (TIFF *tiff, char message[1024]), (tiff, message)) \
    F(TIFFReadEncodedStrip, tmsize_t, (TIFF *tiff, uint32_t strip, void *buffer, tmsize_t size), \
      (tiff, strip, buffer, size)) \
    F(TIFFReadEncodedTile, tmsize_t, (TIFF *tiff, uint32_t tile, void *buffer, tmsize_t size), \
      (tiff, tile, buffer, size)) \
    F(TIFFReadRGBAStripExt, int, (TIFF *tiff, uint32_t row, uint32_t *raster, int stopOnError), \
      (tiff, row, raster, stopOnError)) \
    F(TIFFReadRGBATileExt, int, (TIFF *tiff, uint32_t x, uint32_t y, uint32_t *raster, int stopOnError), \
      (tiff, x, y, raster, stopOnError)) \
    F(TIFFScanlineSize64, uint64_t, (TIFF *tiff), (tiff)) \
    F(TIFFSetDirectory, int, (TIFF *tiff, tdir_t directory), (tiff, directory)) \
    F(TIFFSetSubDirectory, int, (TIFF *tiff, uint64_t offset), (tiff, offset)) \
    F(TIFFStripSize64, uint64_t, (TIFF *tiff), (tiff)) \
    F(TIFFTileRowSize64, uint64_t, (TIFF *tiff), (tiff)) \
    F(TIFFTileSize64, uint64_t, (TIFF *tiff), (tiff)) \
    F(TIFFVGetField, int, (TIFF *tiff, uint32_t tag, va_list arguments), (tiff, tag, arguments)) \
    F(TIFFVGetFieldDefaulted, int, (TIFF *tiff, uint32_t tag, va_list arguments), (tiff, tag, arguments)) \
    F(TIFFVSetField, int, (TIFF *tiff, uint32_t tag, va_list arguments), (tiff, tag, arguments)) \
    F(TIFFWriteEncodedStrip, tmsize_t, (TIFF *tiff, uint32_t strip, void *data, tmsize_t size), \
      (tiff, strip, data, size)) \
    F(TIFFWriteEncodedTile, tmsize_t, (TIFF *tiff, uint32_t tile, void *data, tmsize_t size), \
      (tiff, tile, data, size))

TESSERA_LAZY_LIBRARY("libtiff.so.6", TIFF_FUNCTIONS, tessera_tiff_load)

// A varargs function defined over its va_list form.
#define TIFF_VARARGS(name, va_list_form) \
    int name(TIFF *tiff, uint32_t tag, ...) { \
        va_list arguments; \
        va_start(arguments, tag); \
        int result = va_list_form(tiff, tag, arguments); \
        va_end(arguments); \
        return result; \
    }

TIFF_VARARGS(TIFFGetField, TIFFVGetField)
TIFF_VARARGS(TIFFGetFieldDefaulted, TIFFVGetFieldDefaulted)
TIFF_VARARGS(TIFFSetField, TIFFVSetField)
