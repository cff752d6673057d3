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

TEST(CpuInfo, FlagsAgreeWithTheKernel) {
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
  const CpuInfo info = cpu_info();
  if (info.avx512_bf16 || info.avx512_fp16 || info.avx512_vnni) EXPECT_TRUE(info.avx512f);
  if (info.amx_bf16 || info.amx_int8) EXPECT_TRUE(info.amx_tile);
  if (info.avx512f) EXPECT_TRUE(info.avx2);
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
