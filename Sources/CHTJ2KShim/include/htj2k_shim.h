#ifndef TESSERA_HTJ2K_SHIM_H
#define TESSERA_HTJ2K_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An HTJ2K (JPEG 2000 Part 15) codestream being written through OpenJPH, a row at a time. */
typedef struct tessera_htj2k_encoder tessera_htj2k_encoder;

/* Starts a codestream of `components` components of `bit_depth` bits (8 or 16 in the rows), `width` x `height`,
   written to `file` from its current position: reversible 5/3 when `reversible`, else 9/7 quantized by
   `quantization_step`; `decompositions` wavelet levels, RPCL, the colour transform for three or more components.
   NULL on failure, with OpenJPH's message in `error`. */
tessera_htj2k_encoder *tessera_htj2k_start(FILE *file, uint32_t width, uint32_t height, uint32_t components,
                                           uint32_t bit_depth, int reversible, float quantization_step,
                                           uint32_t decompositions, char *error, size_t error_size);

/* Writes the next row: `width` pixels of `components` interleaved samples, 8- or 16-bit as started. 0 on failure,
   with the message in `error`. */
int tessera_htj2k_write_row(tessera_htj2k_encoder *encoder, const void *row, char *error, size_t error_size);

/* Writes the end of the codestream after the last row. 0 on failure, with the message in `error`. */
int tessera_htj2k_finish(tessera_htj2k_encoder *encoder, char *error, size_t error_size);

/* Frees the encoder (the file stays open: it is the caller's). */
void tessera_htj2k_destroy(tessera_htj2k_encoder *encoder);

#ifdef __cplusplus
}
#endif

#endif
