// libmicrohttpd 0.9.75 (Debian 12's) drains its epoll set in a loop that calls epoll_wait again while a call
// fills the whole event array (128 events), and passes every call of the loop the same timeout, up to the
// connection timeout. When the events ready add up to an exact multiple of 128 (all 256 kept-alive connections
// of a polling thread with a request waiting, say), the last call of the loop blocks with every one of those
// requests unanswered, until some other event (a late ACK, a new connection) wakes it: one polling thread with
// 256 connections answered a few hundred tiles/s instead of thousands. Later releases wait only on the first call.
//
// This definition interposes the C library's epoll_wait in the whole process (the executable's symbols come
// before the shared libraries'): a call made right after one that returned a full array on the same thread does
// not block, which is what draining means. Every other call (libdispatch's too) behaves exactly as before.
#include <sys/epoll.h>
#include <stddef.h>

int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout) {
    static __thread int previous_call_was_full = 0;
    int ready = epoll_pwait(epfd, events, maxevents, previous_call_was_full ? 0 : timeout, NULL);
    previous_call_was_full = ready == maxevents;
    return ready;
}
