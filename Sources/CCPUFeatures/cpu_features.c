#include "CCPUFeatures.h"

int tessera_cpu_runs_haswell_code(void) {
#if defined(__x86_64__)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi")
        && __builtin_cpu_supports("bmi2");
#else
    return 0;
#endif
}
