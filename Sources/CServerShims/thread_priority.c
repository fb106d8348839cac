// SCHED_IDLE is a Linux extension that <sched.h> declares only with _GNU_SOURCE, which Swift's Glibc module does
// not see; this shim sets it.
#define _GNU_SOURCE
#include "CServerShims.h"
#include <sched.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

int tessera_thread_run_only_when_idle(void) {
#ifdef __linux__
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
#ifdef SCHED_IDLE
    struct sched_param parameters = {.sched_priority = 0};
    return sched_setscheduler(0, SCHED_IDLE, &parameters) == 0;
#else
    return 0;
#endif
}
