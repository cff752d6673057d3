// cpuid/xgetbv decoding for CpuInfo (see cpu_info.h). Leaf and bit numbers are from the Intel SDM
// (vol. 2A, CPUID) and match AMD's; each feature also needs its register state enabled in XCR0.
#include "core/cpu_info.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define GPUACCEL_X86 1
#else
#define GPUACCEL_X86 0
#endif

namespace gpuaccel {

namespace {

std::string trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t\n\r");
  if (begin == std::string::npos) return "";
  const size_t end = s.find_last_not_of(" \t\n\r");
  return s.substr(begin, end - begin + 1);
}

bool bit(uint32_t reg, int n) { return (reg >> n) & 1u; }

#if GPUACCEL_X86
struct Regs {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

// cpuid(leaf, subleaf); all zero when the leaf is beyond what the CPU supports.
Regs cpuid(uint32_t leaf, uint32_t subleaf = 0) {
  Regs r;
  if (__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx) == 0) return Regs{};
  return r;
}

uint64_t xgetbv0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (uint64_t{edx} << 32) | eax;
}

void read_x86(CpuInfo& info) {
  const Regs leaf0 = cpuid(0);
  char vendor[13] = {0};
  std::memcpy(vendor + 0, &leaf0.ebx, 4);
  std::memcpy(vendor + 4, &leaf0.edx, 4);
  std::memcpy(vendor + 8, &leaf0.ecx, 4);
  info.vendor = vendor;

  if (cpuid(0x80000000).eax >= 0x80000004) {
    char brand[49] = {0};
    for (uint32_t i = 0; i < 3; ++i) {
      const Regs r = cpuid(0x80000002 + i);
      std::memcpy(brand + 16 * i + 0, &r.eax, 4);
      std::memcpy(brand + 16 * i + 4, &r.ebx, 4);
      std::memcpy(brand + 16 * i + 8, &r.ecx, 4);
      std::memcpy(brand + 16 * i + 12, &r.edx, 4);
    }
    info.model_name = trim(brand);
  }

  const Regs leaf1 = cpuid(1);
  const bool osxsave = bit(leaf1.ecx, 27);
  const uint64_t xcr0 = osxsave ? xgetbv0() : 0;
  // XCR0: bit 1 SSE, 2 AVX (YMM upper halves), 5-7 AVX-512 (opmask, ZMM0-15 upper, ZMM16-31),
  // 17-18 AMX (tile config, tile data).
  const bool os_avx = (xcr0 & 0x6) == 0x6;
  const bool os_avx512 = os_avx && (xcr0 & 0xe0) == 0xe0;
  const bool os_amx = (xcr0 & 0x60000) == 0x60000;

  const uint32_t max_leaf = leaf0.eax;
  const Regs leaf7 = max_leaf >= 7 ? cpuid(7, 0) : Regs{};
  const Regs leaf7_1 = (max_leaf >= 7 && leaf7.eax >= 1) ? cpuid(7, 1) : Regs{};

  info.fma = os_avx && bit(leaf1.ecx, 12);
  info.avx2 = os_avx && bit(leaf7.ebx, 5);
  info.avx512f = os_avx512 && bit(leaf7.ebx, 16);
  info.avx512_vnni = os_avx512 && bit(leaf7.ecx, 11);
  info.avx512_bf16 = os_avx512 && bit(leaf7_1.eax, 5);
  info.avx512_fp16 = os_avx512 && bit(leaf7.edx, 23);
  info.amx_bf16 = os_amx && bit(leaf7.edx, 22);
  info.amx_tile = os_amx && bit(leaf7.edx, 24);
  info.amx_int8 = os_amx && bit(leaf7.edx, 25);
}
#endif

// Off x86 (or when cpuid has no brand string) the kernel's text is the best name we have.
std::string model_name_from_proc() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    for (const char* key : {"model name", "Model", "Hardware"}) {
      if (line.rfind(key, 0) == 0) {
        const size_t colon = line.find(':');
        if (colon != std::string::npos) return trim(line.substr(colon + 1));
      }
    }
  }
  return "";
}

// Distinct (package, core) pairs in sysfs topology; 0 when it cannot be read.
int count_physical_cores(int logical) {
  std::set<std::pair<std::string, std::string>> cores;
  for (int cpu = 0; cpu < logical; ++cpu) {
    const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    std::ifstream package(base + "physical_package_id");
    std::ifstream core(base + "core_id");
    std::string p, c;
    if (!(package >> p) || !(core >> c)) continue;  // offline CPU or no sysfs
    cores.insert({p, c});
  }
  return static_cast<int>(cores.size());
}

bool ceiling_of(const std::string& upper, IsaCeiling& ceiling) {
  static const std::pair<const char*, IsaCeiling> kNames[] = {
      {"SSE41", IsaCeiling::kSse41},
      {"AVX", IsaCeiling::kAvx},
      {"AVX2", IsaCeiling::kAvx2},
      {"AVX2_VNNI", IsaCeiling::kAvx2Vnni},
      {"AVX2_VNNI_2", IsaCeiling::kAvx2Vnni2},
      {"AVX512_CORE", IsaCeiling::kAvx512Core},
      {"AVX512_CORE_VNNI", IsaCeiling::kAvx512CoreVnni},
      {"AVX512_CORE_BF16", IsaCeiling::kAvx512CoreBf16},
      {"AVX512_CORE_FP16", IsaCeiling::kAvx512CoreFp16},
      {"AVX10_1_512", IsaCeiling::kAvx512CoreFp16},
      {"AVX512_CORE_AMX", IsaCeiling::kAvx512CoreAmx},
      {"AVX10_1_512_AMX", IsaCeiling::kAvx512CoreAmx},
      {"AVX512_CORE_AMX_FP16", IsaCeiling::kAvx512CoreAmxFp16},
      {"AVX10_1_512_AMX_FP16", IsaCeiling::kAvx512CoreAmxFp16},
      {"DEFAULT", IsaCeiling::kNone},
      {"ALL", IsaCeiling::kNone},
  };
  for (const auto& [name, value] : kNames) {
    if (upper == name) {
      ceiling = value;
      return true;
    }
  }
  return false;
}

}  // namespace

void apply_isa_cap(CpuInfo& info, const std::string& cap) {
  info.isa_cap = cap;
  std::string upper = trim(cap);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  IsaCeiling ceiling = IsaCeiling::kNone;
  info.isa_cap_recognized = ceiling_of(upper, ceiling);
  info.isa_ceiling = ceiling;
  if (ceiling == IsaCeiling::kNone) return;
  const auto below = [ceiling](IsaCeiling rung) { return ceiling < rung; };
  if (below(IsaCeiling::kAvx2)) info.avx2 = info.fma = false;
  if (below(IsaCeiling::kAvx512Core)) info.avx512f = false;
  if (below(IsaCeiling::kAvx512CoreVnni)) info.avx512_vnni = false;
  if (below(IsaCeiling::kAvx512CoreBf16)) info.avx512_bf16 = false;
  if (below(IsaCeiling::kAvx512CoreFp16)) info.avx512_fp16 = false;
  if (below(IsaCeiling::kAvx512CoreAmx)) info.amx_tile = info.amx_bf16 = info.amx_int8 = false;
}

std::vector<std::pair<std::string, bool>> CpuInfo::flags() const {
  return {{"avx2", avx2},
          {"fma", fma},
          {"avx512f", avx512f},
          {"avx512_vnni", avx512_vnni},
          {"avx512_bf16", avx512_bf16},
          {"avx512_fp16", avx512_fp16},
          {"amx_tile", amx_tile},
          {"amx_bf16", amx_bf16},
          {"amx_int8", amx_int8}};
}

CpuInfo cpu_info() {
  CpuInfo info;
#if GPUACCEL_X86
  read_x86(info);
#endif
  if (info.model_name.empty()) info.model_name = model_name_from_proc();

  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  info.logical_cpus = online > 0 ? static_cast<int>(online)
                                 : static_cast<int>(std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  info.usable_cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set)
                                                                  : info.logical_cpus;
  const long configured = sysconf(_SC_NPROCESSORS_CONF);
  const int physical = count_physical_cores(configured > 0 ? static_cast<int>(configured)
                                                           : info.logical_cpus);
  info.physical_cores = physical > 0 ? physical : info.logical_cpus;
  // Ours first (it is the narrower one); oneDNN reads its new name before the old one.
  for (const char* name : {"GPUACCEL_MAX_CPU_ISA", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"}) {
    if (const char* cap = std::getenv(name); cap != nullptr && *cap != '\0') {
      apply_isa_cap(info, cap);
      info.isa_cap_variable = name;
      break;
    }
  }
  return info;
}

}  // namespace gpuaccel
