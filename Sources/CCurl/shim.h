// libcurl's declarations from Debian's libcurl4-openssl-dev. Not linked: CCurlShims defines the functions and
// opens libcurl on the first call.
#include <curl/curl.h>
