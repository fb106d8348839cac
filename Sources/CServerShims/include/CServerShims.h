// libmicrohttpd is opened on the first call rather than linked (http_shim.c). Its start and info functions take C
// varargs, which Swift cannot pass; these shims do.
#ifndef TESSERA_SERVER_SHIMS_H
#define TESSERA_SERVER_SHIMS_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>
// epoll_wait is interposed by epoll_drain.c (a call right after one that filled its whole array does not wait).
#include <sys/epoll.h>

/// Opens libmicrohttpd.so.12 unless done already: NULL when it is loaded, else why it could not be (dlerror's
/// message). Call it before the first libmicrohttpd function: those abort with the message when it cannot be loaded.
const char *tessera_microhttpd_load(void);

/// Starts a daemon on `address:port` (IPv4, network byte order not needed: host order) with an internal pool of
/// `threads` polling threads and keep-alive, closing a connection silent for `connection_timeout` seconds, whose
/// connections can be suspended and resumed (MHD_suspend_connection); URLs reach `handler` undecoded so
/// percent-encoded slashes in identifiers survive. `request_started` sees each request's whole URI (query included) as soon as its request
/// line arrives and returns the request's state; `request_completed` is called once the request is answered or
/// abandoned; `connection_notified` is called when a connection opens or closes, on the polling thread that serves it.
/// The daemon can be quiesced (stop accepting, keep serving). Returns NULL if the port cannot be bound.
struct MHD_Daemon *tessera_http_start(const char *address, uint16_t port, unsigned int threads,
                                      unsigned int connection_timeout, unsigned int connection_limit,
                                      MHD_AccessHandlerCallback handler, void *context,
                                      void *(*request_started)(void *context, const char *uri,
                                                               struct MHD_Connection *connection),
                                      MHD_RequestCompletedCallback request_completed,
                                      MHD_NotifyConnectionCallback connection_notified);

/// The connections the daemon has open now.
unsigned int tessera_http_connections(struct MHD_Daemon *daemon);

/// The port the daemon listens on (useful after asking for port 0).
uint16_t tessera_http_port(struct MHD_Daemon *daemon);

// Sets glibc's malloc thresholds: blocks below `mapping_threshold` bytes come from the heap, free memory past
// `trim_threshold` at a heap's top is given back, and threads share at most `arenas` heaps (mallopt's
// M_MMAP_THRESHOLD, M_TRIM_THRESHOLD and M_ARENA_MAX). Returns 1 when all were set, 0 otherwise (another C library).
int tessera_set_malloc_thresholds(int mapping_threshold, int trim_threshold, int arenas);

// Has the calling thread run only when a core would otherwise be idle (Linux's SCHED_IDLE: any other thread that
// wants the core takes it at once), its timers' slack 1 ns (its short sleeps as short as asked, not 50 us more).
// Returns 1 when set, 0 where the system has no such policy.
int tessera_thread_run_only_when_idle(void);

#endif
