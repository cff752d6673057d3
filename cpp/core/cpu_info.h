// What the CPU can do, read from the CPU itself (cpuid, and xgetbv for what the OS has enabled).
// The CPU backend's speed depends on it -- bf16 matmuls on AMX or AVX512-BF16 are several times
// faster than f32 -- so `python -m gpuaccel.info` shows it and the mixed-precision policy can
// say when a dtype will be slow.
#pragma once

#include <string>
#include <vector>

namespace gpuaccel {

struct CpuInfo {
  std::string vendor;      // "GenuineIntel", "AuthenticAMD"; empty off x86
  std::string model_name;  // the brand string, e.g. "Intel(R) Xeon(R) Platinum 8480+"
  int logical_cpus = 0;    // online logical CPUs (hardware threads)
  int usable_cpus = 0;     // the ones this process may run on (affinity, cgroup cpusets)
  int physical_cores = 0;  // distinct cores; equals logical_cpus when topology is unknown
  // Usable instruction sets: the CPU has them *and* the OS saves their registers (xgetbv), the
  // same rule Linux applies to the flags in /proc/cpuinfo, whose names these mirror.
  bool avx2 = false;
  bool fma = false;
  bool avx512f = false;
  bool avx512_vnni = false;
  bool avx512_bf16 = false;
  bool avx512_fp16 = false;
  bool amx_tile = false;
  bool amx_bf16 = false;
  bool amx_int8 = false;

  // ("avx2", true), ... in the order above.
  std::vector<std::pair<std::string, bool>> flags() const;
};

// Reads it once per call (cheap); never throws.
CpuInfo cpu_info();

}  // namespace gpuaccel
