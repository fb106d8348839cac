#include "CServerShims.h"
#include <arpa/inet.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>

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
                                      MHD_RequestCompletedCallback request_completed) {
    struct sockaddr_in bind_address;
    memset(&bind_address, 0, sizeof(bind_address));
    bind_address.sin_family = AF_INET;
    bind_address.sin_port = htons(port);
    if (inet_pton(AF_INET, address, &bind_address.sin_addr) != 1) return NULL;
    return MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG, port, NULL, NULL,
                            handler, context,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&bind_address,
                            MHD_OPTION_THREAD_POOL_SIZE, threads,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout,
                            MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)1024,
                            MHD_OPTION_UNESCAPE_CALLBACK, tessera_keep_escaped, NULL,
                            MHD_OPTION_URI_LOG_CALLBACK, request_started, context,
                            MHD_OPTION_NOTIFY_COMPLETED, request_completed, context,
                            MHD_OPTION_END);
}

uint16_t tessera_http_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

unsigned int tessera_http_connections(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info ? info->num_connections : 0;
}

int tessera_set_malloc_thresholds(int mapping_threshold, int trim_threshold) {
#ifdef __GLIBC__
    return mallopt(M_MMAP_THRESHOLD, mapping_threshold) == 1 && mallopt(M_TRIM_THRESHOLD, trim_threshold) == 1;
#else
    (void)mapping_threshold;
    (void)trim_threshold;
    return 0;
#endif
}
