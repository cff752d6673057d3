// CpuInfo decodes cpuid/xgetbv itself; Linux decodes the same registers into /proc/cpuinfo. The
// two must agree flag by flag (Linux also hides what the OS does not enable), which catches a
// wrong leaf, bit or XCR0 mask. Also checks oneDNN's run-time version against its header.
#include "core/cpu_info.h"

#include <gtest/gtest.h>
#include <oneapi/dnnl/dnnl.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "backends/cpu/onednn_info.h"

namespace gpuaccel {
namespace {

// The first processor's "flags" line (x86) as a set; empty when there is none.
std::set<std::string> proc_cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      std::set<std::string> flags;
      for (std::string w; words >> w;) flags.insert(w);
      return flags;
    }
  }
  return {};
}

std::string proc_cpuinfo_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      std::string value = line.substr(line.find(':') + 1);
      value.erase(0, value.find_first_not_of(' '));
      value.erase(value.find_last_not_of(' ') + 1);
      return value;
    }
  }
  return "";
}

// cpu_info() applies ONEDNN_MAX_CPU_ISA; these tests read the machine itself.
void without_isa_cap() {
  unsetenv("GPUACCEL_MAX_CPU_ISA");
  unsetenv("ONEDNN_MAX_CPU_ISA");
  unsetenv("DNNL_MAX_CPU_ISA");
}

TEST(CpuInfo, FlagsAgreeWithTheKernel) {
  without_isa_cap();
  const std::set<std::string> kernel = proc_cpuinfo_flags();
  if (kernel.empty()) GTEST_SKIP() << "no x86 flags line in /proc/cpuinfo";
  const CpuInfo info = cpu_info();
  const auto flags = info.flags();
  ASSERT_EQ(flags.size(), 9u);
  for (const auto& [name, present] : flags) {
    EXPECT_EQ(present, kernel.count(name) == 1) << name;
  }
}

TEST(CpuInfo, ImpliedFeaturesAreConsistent) {
  without_isa_cap();
  const CpuInfo info = cpu_info();
  if (info.avx512_bf16 || info.avx512_fp16 || info.avx512_vnni) EXPECT_TRUE(info.avx512f);
  if (info.amx_bf16 || info.amx_int8) EXPECT_TRUE(info.amx_tile);
  if (info.avx512f) EXPECT_TRUE(info.avx2);
}

CpuInfo every_flag() {
  CpuInfo info;
  info.avx2 = info.fma = info.avx512f = info.avx512_vnni = info.avx512_bf16 = true;
  info.avx512_fp16 = info.amx_tile = info.amx_bf16 = info.amx_int8 = true;
  return info;
}

std::set<std::string> flags_set(const CpuInfo& info) {
  std::set<std::string> present;
  for (const auto& [name, on] : info.flags()) {
    if (on) present.insert(name);
  }
  return present;
}

TEST(CpuInfo, AnIsaCapClearsTheFlagsAboveIt) {
  CpuInfo avx2 = every_flag();
  apply_isa_cap(avx2, "AVX2");
  EXPECT_TRUE(avx2.isa_cap_recognized);
  EXPECT_EQ(avx2.isa_cap, "AVX2");
  EXPECT_EQ(avx2.isa_ceiling, IsaCeiling::kAvx2);
  EXPECT_EQ(flags_set(avx2), (std::set<std::string>{"avx2", "fma"}));

  CpuInfo bf16 = every_flag();
  apply_isa_cap(bf16, "avx512_core_bf16");  // any case, as oneDNN reads it
  EXPECT_EQ(flags_set(bf16),
            (std::set<std::string>{"avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16"}));

  CpuInfo core = every_flag();
  apply_isa_cap(core, "AVX512_CORE");
  EXPECT_EQ(flags_set(core), (std::set<std::string>{"avx2", "fma", "avx512f"}));

  CpuInfo sse = every_flag();
  apply_isa_cap(sse, "SSE41");
  EXPECT_TRUE(flags_set(sse).empty());

  CpuInfo amx = every_flag();
  apply_isa_cap(amx, "AVX512_CORE_AMX");
  EXPECT_EQ(flags_set(amx), flags_set(every_flag()));

  CpuInfo no_cap = every_flag();
  apply_isa_cap(no_cap, "default");
  EXPECT_TRUE(no_cap.isa_cap_recognized);
  EXPECT_EQ(no_cap.isa_ceiling, IsaCeiling::kNone);
  EXPECT_EQ(flags_set(no_cap), flags_set(every_flag()));
}

TEST(CpuInfo, AnIsaCapNeverAddsAFlagAndAnUnknownOneChangesNothing) {
  CpuInfo avx2_machine;
  avx2_machine.avx2 = avx2_machine.fma = true;
  apply_isa_cap(avx2_machine, "AVX512_CORE_AMX");
  EXPECT_EQ(flags_set(avx2_machine), (std::set<std::string>{"avx2", "fma"}));

  CpuInfo typo = every_flag();
  apply_isa_cap(typo, "AVX3");
  EXPECT_FALSE(typo.isa_cap_recognized);
  EXPECT_EQ(typo.isa_cap, "AVX3");
  EXPECT_EQ(typo.isa_ceiling, IsaCeiling::kNone);
  EXPECT_EQ(flags_set(typo), flags_set(every_flag()));
}

TEST(CpuInfo, TheEnvironmentCapReachesCpuInfoOursFirst) {
  without_isa_cap();
  setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE", 1);
  const CpuInfo onednn_capped = cpu_info();
  setenv("GPUACCEL_MAX_CPU_ISA", "AVX2", 1);
  const CpuInfo capped = cpu_info();
  without_isa_cap();
  EXPECT_EQ(onednn_capped.isa_cap_variable, "ONEDNN_MAX_CPU_ISA");
  EXPECT_FALSE(onednn_capped.avx512_vnni);
  EXPECT_EQ(capped.isa_cap_variable, "GPUACCEL_MAX_CPU_ISA");
  EXPECT_EQ(capped.isa_cap, "AVX2");
  EXPECT_FALSE(capped.avx512f);
  EXPECT_FALSE(capped.amx_tile);
  EXPECT_EQ(capped.avx2, cpu_info().avx2);  // what is below the cap stays as detected
}

TEST(CpuInfo, NameAndCountsMatchTheSystem) {
  const CpuInfo info = cpu_info();
  const std::string kernel_name = proc_cpuinfo_model_name();
  if (!kernel_name.empty()) EXPECT_EQ(info.model_name, kernel_name);
  EXPECT_FALSE(info.model_name.empty());
#if defined(__x86_64__)
  EXPECT_TRUE(info.vendor == "GenuineIntel" || info.vendor == "AuthenticAMD" ||
              !info.vendor.empty()) << info.vendor;
  EXPECT_EQ(info.vendor.size(), 12u);
#endif
  EXPECT_GE(info.logical_cpus, 1);
  EXPECT_GE(info.usable_cpus, 1);
  EXPECT_LE(info.usable_cpus, info.logical_cpus);
  EXPECT_GE(info.physical_cores, 1);
  EXPECT_LE(info.physical_cores, info.logical_cpus);
}

TEST(OneDnnInfo, RunTimeVersionIsTheOneWeBuiltAgainst) {
  const cpu::OneDnnVersion v = cpu::onednn_version();
  // The shared library may be a newer patch release, never another major version.
  EXPECT_EQ(v.major, DNNL_VERSION_MAJOR);
  EXPECT_GE(v.major * 100 + v.minor, DNNL_VERSION_MAJOR * 100 + DNNL_VERSION_MINOR);
  EXPECT_EQ(v.str(), std::to_string(v.major) + "." + std::to_string(v.minor) + "." +
                         std::to_string(v.patch));
  EXPECT_EQ(v.cpu_runtime, "OpenMP");  // how the core is linked (OpenMP::OpenMP_CXX)
}

}  // namespace
}  // namespace gpuaccel
