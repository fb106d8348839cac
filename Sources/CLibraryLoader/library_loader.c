#include "library_loader.h"

#include <stdio.h>
#include <stdlib.h>

enum { NOT_TRIED, LOADED, FAILED };

const char *tessera_library_load(struct tessera_library *library) {
    if (atomic_load_explicit(&library->state, memory_order_acquire) == NOT_TRIED) {
        pthread_mutex_lock(&library->lock);
        if (atomic_load_explicit(&library->state, memory_order_relaxed) == NOT_TRIED) {
            void *handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
            bool loaded = handle != NULL && library->resolve(handle);
            if (!loaded) {
                const char *reason = dlerror();
                snprintf(library->failure, sizeof library->failure, "%s", reason ? reason : library->soname);
            }
            atomic_store_explicit(&library->state, loaded ? LOADED : FAILED, memory_order_release);
        }
        pthread_mutex_unlock(&library->lock);
    }
    return atomic_load_explicit(&library->state, memory_order_acquire) == LOADED ? NULL : library->failure;
}

void tessera_library_require(struct tessera_library *library) {
    const char *failure = tessera_library_load(library);
    if (failure != NULL) {
        fprintf(stderr, "tessera: %s\n", failure);
        abort();
    }
}
