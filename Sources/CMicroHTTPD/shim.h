// libmicrohttpd's declarations from Debian's libmicrohttpd-dev. Not linked: CServerShims defines the functions and
// opens libmicrohttpd on the first call.
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdarg.h>
#include <microhttpd.h>
