// libmicrohttpd, opened on the first call rather than linked, so only `tessera serve` loads it and GnuTLS with the
// eight libraries GnuTLS needs; every function Tessera calls is defined here with libmicrohttpd's own signature and
// forwarded, and its varargs start and info functions are called through their pointers.
#include "CServerShims.h"
#include "library_loader.h"
#include <arpa/inet.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>

#define MICROHTTPD_FUNCTIONS(F, V, P) \
    F(MHD_add_response_header, enum MHD_Result, \
      (struct MHD_Response *response, const char *header, const char *content), (response, header, content)) \
    F(MHD_create_response_from_buffer, struct MHD_Response *, \
      (size_t size, void *buffer, enum MHD_ResponseMemoryMode mode), (size, buffer, mode)) \
    F(MHD_create_response_from_callback, struct MHD_Response *, \
      (uint64_t size, size_t block_size, MHD_ContentReaderCallback reader, void *context, \
       MHD_ContentReaderFreeCallback release), \
      (size, block_size, reader, context, release)) \
    V(MHD_destroy_response, (struct MHD_Response *response), (response)) \
    P(MHD_get_daemon_info) \
    F(MHD_lookup_connection_value, const char *, \
      (struct MHD_Connection *connection, enum MHD_ValueKind kind, const char *key), (connection, kind, key)) \
    F(MHD_queue_response, enum MHD_Result, \
      (struct MHD_Connection *connection, unsigned int status_code, struct MHD_Response *response), \
      (connection, status_code, response)) \
    F(MHD_quiesce_daemon, MHD_socket, (struct MHD_Daemon *daemon), (daemon)) \
    V(MHD_resume_connection, (struct MHD_Connection *connection), (connection)) \
    P(MHD_start_daemon) \
    V(MHD_stop_daemon, (struct MHD_Daemon *daemon), (daemon)) \
    V(MHD_suspend_connection, (struct MHD_Connection *connection), (connection))

TESSERA_LAZY_LIBRARY("libmicrohttpd.so.12", MICROHTTPD_FUNCTIONS, tessera_microhttpd_load)

// Leaves the URL as it arrived: identifiers are percent-decoded by the router, segment by segment.
static size_t tessera_keep_escaped(void *context, struct MHD_Connection *connection, char *text) {
    (void)context;
    (void)connection;
    return strlen(text);
}

struct MHD_Daemon *tessera_http_start(const char *address, uint16_t port, unsigned int threads,
                                      unsigned int connection_timeout, unsigned int connection_limit,
                                      MHD_AccessHandlerCallback handler, void *context,
                                      void *(*request_started)(void *context, const char *uri,
                                                               struct MHD_Connection *connection),
                                      MHD_RequestCompletedCallback request_completed,
                                      MHD_NotifyConnectionCallback connection_notified) {
    struct sockaddr_in bind_address;
    memset(&bind_address, 0, sizeof(bind_address));
    bind_address.sin_family = AF_INET;
    bind_address.sin_port = htons(port);
    if (inet_pton(AF_INET, address, &bind_address.sin_addr) != 1) return NULL;
    tessera_library_require(&library);
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    return functions.MHD_start_daemon(flags, port, NULL, NULL, handler, context,
                                      MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&bind_address,
                                      MHD_OPTION_THREAD_POOL_SIZE, threads,
                                      MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                                      MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout,
                                      MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)1024,
                                      MHD_OPTION_UNESCAPE_CALLBACK, tessera_keep_escaped, NULL,
                                      MHD_OPTION_URI_LOG_CALLBACK, request_started, context,
                                      MHD_OPTION_NOTIFY_COMPLETED, request_completed, context,
                                      MHD_OPTION_NOTIFY_CONNECTION, connection_notified, context,
                                      MHD_OPTION_END);
}

uint16_t tessera_http_port(struct MHD_Daemon *daemon) {
    tessera_library_require(&library);
    const union MHD_DaemonInfo *info = functions.MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

unsigned int tessera_http_connections(struct MHD_Daemon *daemon) {
    tessera_library_require(&library);
    const union MHD_DaemonInfo *info = functions.MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info ? info->num_connections : 0;
}

int tessera_set_malloc_thresholds(int mapping_threshold, int trim_threshold, int arenas) {
#ifdef __GLIBC__
    return mallopt(M_MMAP_THRESHOLD, mapping_threshold) == 1 && mallopt(M_TRIM_THRESHOLD, trim_threshold) == 1
        && mallopt(M_ARENA_MAX, arenas) == 1;
#else
    (void)mapping_threshold;
    (void)trim_threshold;
    (void)arenas;
    return 0;
#endif
}
