// A read-only stdio FILE over callbacks (glibc's fopencookie): libjpeg, libpng and Tessera's stdio readers read
// remote files through it as they read local ones.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include "CCodecShims.h"

struct tessera_reader {
    void *context;
    tessera_read_callback read;
    tessera_seek_callback seek;
    // stdio's buffer, ours: glibc's setvbuf ignores the size it is given with no buffer (and allocates BUFSIZ).
    char buffer[];
};

static ssize_t tessera_reader_read(void *cookie, char *buffer, size_t size) {
    struct tessera_reader *reader = cookie;
    long got = reader->read(reader->context, buffer, size);
    return got < 0 ? -1 : (ssize_t)got;
}

static int tessera_reader_seek(void *cookie, off64_t *offset, int whence) {
    struct tessera_reader *reader = cookie;
    long long position = reader->seek(reader->context, (long long)*offset, whence);
    if (position < 0) return -1;
    *offset = (off64_t)position;
    return 0;
}

static int tessera_reader_close(void *cookie) {
    free(cookie);
    return 0;
}

FILE *tessera_open_reader(void *context, tessera_read_callback read, tessera_seek_callback seek, size_t buffer_size) {
    struct tessera_reader *reader = malloc(sizeof(*reader) + buffer_size);
    if (!reader) return NULL;
    reader->context = context;
    reader->read = read;
    reader->seek = seek;
    cookie_io_functions_t functions = {tessera_reader_read, NULL, tessera_reader_seek, tessera_reader_close};
    FILE *file = fopencookie(reader, "rb", functions);
    if (!file) {
        free(reader);
        return NULL;
    }
    if (buffer_size > 0) setvbuf(file, reader->buffer, _IOFBF, buffer_size);
    return file;
}
