// A shared library opened on the first call of one of its functions, for libraries only some commands need
// (libSDL2 for `tessera view`, libcurl for remote inputs, libmicrohttpd for `tessera serve`): linking them would
// load them, and the dozens of libraries they need, into every run. Each shim lists the library's functions once,
// as an X-macro of `F(name, return type, (parameters), (arguments))`, `V(name, (parameters), (arguments))` for void
// ones and `P(name)` for varargs ones the shim calls itself through `functions.name`, and defines each F and V
// function with the library's own signature, forwarding through a pointer looked up with dlsym.
#ifndef TESSERA_LIBRARY_LOADER_H
#define TESSERA_LIBRARY_LOADER_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

/// One lazily opened library: its versioned soname, the function that looks up its symbols into the shim's table
/// (false when one is missing), and the outcome of the one attempt to open it.
struct tessera_library {
    const char *soname;
    bool (*resolve)(void *handle);
    pthread_mutex_t lock;
    atomic_int state;
    char failure[512];
};

#define TESSERA_LIBRARY(soname, resolve) { soname, resolve, PTHREAD_MUTEX_INITIALIZER, 0, "" }

/// Opens `library` unless done already (thread-safe; tried once): NULL when it is loaded, else dlerror's message.
const char *tessera_library_load(struct tessera_library *library);

/// Opens `library` or, when it cannot be loaded, prints why and aborts: the Swift side checks with
/// `tessera_library_load` before its first call, so this is reached only by a call made without that check.
void tessera_library_require(struct tessera_library *library);

/// A field of the shim's table of pointers, typed by the library's own declaration.
#define TESSERA_LIBRARY_POINTER(name, ...) __typeof__(&name) name;
/// One lookup of the table's `resolve`; the list of them is joined with `&&`.
#define TESSERA_LIBRARY_RESOLVE(name, ...) && (functions.name = (__typeof__(&name))dlsym(handle, #name)) != 0
/// A definition of `name` with the library's signature that forwards to the loaded library.
#define TESSERA_LIBRARY_FORWARD(name, type, parameters, arguments) \
    type name parameters { tessera_library_require(&library); return functions.name arguments; }
#define TESSERA_LIBRARY_FORWARD_VOID(name, parameters, arguments) \
    void name parameters { tessera_library_require(&library); functions.name arguments; }

/// A varargs function gets a field and a lookup but no definition.
#define TESSERA_LIBRARY_NOTHING(name)
#define TESSERA_LIBRARY_VARARGS_POINTER(name) TESSERA_LIBRARY_POINTER(name, )
#define TESSERA_LIBRARY_VARARGS_RESOLVE(name) TESSERA_LIBRARY_RESOLVE(name, )

/// The table `functions`, its `resolve`, the `library` opened from `soname`, the forwarding definitions for the
/// X-macro `LIST`, and `load`, the shim's public `const char *load(void)` opening it (`tessera_library_load`).
#define TESSERA_LAZY_LIBRARY(soname, LIST, load) \
    static struct { \
        LIST(TESSERA_LIBRARY_POINTER, TESSERA_LIBRARY_POINTER, TESSERA_LIBRARY_VARARGS_POINTER) \
    } functions; \
    static bool resolve(void *handle) { \
        return true LIST(TESSERA_LIBRARY_RESOLVE, TESSERA_LIBRARY_RESOLVE, TESSERA_LIBRARY_VARARGS_RESOLVE); \
    } \
    static struct tessera_library library = TESSERA_LIBRARY(soname, resolve); \
    const char *load(void) { return tessera_library_load(&library); } \
    LIST(TESSERA_LIBRARY_FORWARD, TESSERA_LIBRARY_FORWARD_VOID, TESSERA_LIBRARY_NOTHING)

#endif
