// The error manager the libjpeg shims share: fatal errors longjmp back to the shim's entry point with the
// message kept; corrupt-data warnings are counted, and running out of data is noted.
#ifndef TESSERA_JPEG_ERROR_H
#define TESSERA_JPEG_ERROR_H

#include <stdio.h>
#include <jpeglib.h>
#include <setjmp.h>

struct tessera_jpeg_error {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
    int warnings;
    int missing_data;
};

/// Sets up `error` with the standard manager and Tessera's exit and message handlers.
void tessera_jpeg_error_init(struct tessera_jpeg_error *error);

#endif
