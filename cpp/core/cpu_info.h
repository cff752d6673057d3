// What the CPU can do, read from the CPU itself (cpuid, and xgetbv for what the OS has enabled).
// The CPU backend's speed depends on it -- bf16 matmuls on AMX or AVX512-BF16 are several times
// faster than f32 -- so `python -m gpuaccel.info` shows it and the mixed-precision policy can
// say when a dtype will be slow.
#pragma once

#include <string>
#include <vector>

namespace gpuaccel {

// oneDNN's ISA ladder (dnnl::cpu_isa), lowest first; each rung includes those below it.
enum class IsaCeiling {
  kNone,
  kSse41,
  kAvx,
  kAvx2,
  kAvx2Vnni,
  kAvx2Vnni2,
  kAvx512Core,
  kAvx512CoreVnni,
  kAvx512CoreBf16,
  kAvx512CoreFp16,
  kAvx512CoreAmx,
  kAvx512CoreAmxFp16,
};

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

  // An instruction-set ceiling from the environment, as written, and the variable it came
  // from; empty when none is set. GPUACCEL_MAX_CPU_ISA caps gpuaccel alone (the CPU backend
  // passes it to its oneDNN with dnnl::set_max_cpu_isa, so TensorFlow's or PyTorch's oneDNN in
  // the same process are not affected); ONEDNN_MAX_CPU_ISA / DNNL_MAX_CPU_ISA cap every oneDNN
  // in the process, ours included. Either way the flags above are capped too, so our own kernels
  // pick what oneDNN picks: `GPUACCEL_MAX_CPU_ISA=AVX2` runs gpuaccel on an AVX-512 or AMX
  // machine as on an AVX2-only one (bf16 staged through f32 included).
  std::string isa_cap;
  std::string isa_cap_variable;
  IsaCeiling isa_ceiling = IsaCeiling::kNone;  // kNone also when isa_cap is not an ISA name
  bool isa_cap_recognized = false;

  // ("avx2", true), ... in the order above.
  std::vector<std::pair<std::string, bool>> flags() const;
};

// Reads it once per call (cheap), the ISA ceiling included; never throws.
CpuInfo cpu_info();

// Clears the flags above `cap`, a oneDNN ISA name (SSE41, AVX, AVX2, AVX2_VNNI, AVX2_VNNI_2,
// AVX512_CORE, AVX512_CORE_VNNI, AVX512_CORE_BF16, AVX512_CORE_FP16 / AVX10_1_512,
// AVX512_CORE_AMX / AVX10_1_512_AMX, AVX512_CORE_AMX_FP16 / AVX10_1_512_AMX_FP16, DEFAULT; any
// case). A cap never adds a flag the CPU lacks. Records the cap and its ceiling in `info`.
void apply_isa_cap(CpuInfo& info, const std::string& cap);

}  // namespace gpuaccel
