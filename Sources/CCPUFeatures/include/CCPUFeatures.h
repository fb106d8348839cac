#ifndef TESSERA_CPU_FEATURES_H
#define TESSERA_CPU_FEATURES_H

/// 1 when the CPU runs AVX2 (x86-64 only; cpuid, read once), else 0.
int tessera_cpu_has_avx2(void);

#endif
