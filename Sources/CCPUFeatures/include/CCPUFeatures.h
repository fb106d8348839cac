#ifndef TESSERA_CPU_FEATURES_H
#define TESSERA_CPU_FEATURES_H

/// 1 when the CPU (and the system, for AVX's registers) runs code built for Haswell: AVX2, with the FMA, BMI1 and
/// BMI2 instructions that come with it (x86-64 only, from cpuid as libgcc reads it once), else 0.
int tessera_cpu_runs_haswell_code(void);

#endif
