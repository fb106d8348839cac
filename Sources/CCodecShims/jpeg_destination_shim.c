// A libjpeg destination that hands each filled buffer to a callback, so encoded bytes can leave (to a socket)
// while later scans are still being encoded.
#include "CCodecShims.h"
#include <jerror.h>
#include <stdlib.h>

struct tessera_jpeg_callback_destination {
    struct jpeg_destination_mgr manager;
    tessera_jpeg_write_callback write;
    void *context;
    size_t capacity;
    unsigned char buffer[];
};

static void tessera_callback_init(j_compress_ptr info) {
    tessera_jpeg_callback_destination *destination = (tessera_jpeg_callback_destination *)info->dest;
    destination->manager.next_output_byte = destination->buffer;
    destination->manager.free_in_buffer = destination->capacity;
}

static boolean tessera_callback_empty(j_compress_ptr info) {
    tessera_jpeg_callback_destination *destination = (tessera_jpeg_callback_destination *)info->dest;
    if (!destination->write(destination->context, destination->buffer, destination->capacity))
        ERREXIT(info, JERR_FILE_WRITE);
    tessera_callback_init(info);
    return TRUE;
}

static void tessera_callback_term(j_compress_ptr info) {
    tessera_jpeg_callback_destination *destination = (tessera_jpeg_callback_destination *)info->dest;
    size_t count = destination->capacity - destination->manager.free_in_buffer;
    if (count > 0 && !destination->write(destination->context, destination->buffer, count))
        ERREXIT(info, JERR_FILE_WRITE);
}

tessera_jpeg_callback_destination *tessera_jpeg_callback_destination_create(size_t capacity,
                                                                            tessera_jpeg_write_callback write,
                                                                            void *context) {
    tessera_jpeg_callback_destination *destination = malloc(sizeof(*destination) + capacity);
    if (!destination) return NULL;
    destination->manager.init_destination = tessera_callback_init;
    destination->manager.empty_output_buffer = tessera_callback_empty;
    destination->manager.term_destination = tessera_callback_term;
    destination->write = write;
    destination->context = context;
    destination->capacity = capacity;
    return destination;
}

void tessera_jpeg_callback_destination_attach(tessera_jpeg_callback_destination *destination,
                                              struct jpeg_compress_struct *info) {
    info->dest = &destination->manager;
}

void tessera_jpeg_callback_destination_destroy(tessera_jpeg_callback_destination *destination) { free(destination); }
