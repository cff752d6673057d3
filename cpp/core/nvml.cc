// NVML through dlopen/dlsym (see nvml.h). The handful of NVML types used are declared here as
// NVML's documentation defines them, so no NVML header is needed to build; every function is
// looked up by name and one that the installed driver lacks just leaves its column empty.
#include "core/nvml.h"

#include <dlfcn.h>

#include <exception>

namespace gpuaccel {

namespace {

constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";

// --- the NVML ABI pieces we use ---
using NvmlReturn = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
constexpr NvmlReturn kNvmlSuccess = 0;
using NvmlDevice = struct NvmlDeviceOpaque*;  // nvmlDevice_t
constexpr int kNvmlTemperatureGpu = 0;        // NVML_TEMPERATURE_GPU
constexpr unsigned kDriverVersionBufferSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
constexpr unsigned kNameBufferSize = 96;           // NVML_DEVICE_NAME_V2_BUFFER_SIZE
struct NvmlUtilization {  // nvmlUtilization_t
  unsigned gpu;
  unsigned memory;
};
struct NvmlMemory {  // nvmlMemory_t (v1)
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct Nvml {
  void* handle = nullptr;
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  const char* (*error_string)(NvmlReturn) = nullptr;
  NvmlReturn (*driver_version)(char*, unsigned) = nullptr;
  NvmlReturn (*cuda_driver_version)(int*) = nullptr;
  NvmlReturn (*device_count)(unsigned*) = nullptr;
  NvmlReturn (*handle_by_index)(unsigned, NvmlDevice*) = nullptr;
  NvmlReturn (*name)(NvmlDevice, char*, unsigned) = nullptr;
  NvmlReturn (*temperature)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*utilization)(NvmlDevice, NvmlUtilization*) = nullptr;
  NvmlReturn (*memory)(NvmlDevice, NvmlMemory*) = nullptr;
  NvmlReturn (*power_usage)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*power_limit)(NvmlDevice, unsigned*) = nullptr;
  std::string load_error;
};

template <typename Fn>
void sym(void* handle, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
}

// Loaded once and kept: unloading and reloading NVML buys nothing.
const Nvml& nvml() {
  static const Nvml lib = [] {
    Nvml n;
    dlerror();
    n.handle = dlopen(kNvmlLibrary, RTLD_LAZY | RTLD_LOCAL);
    if (n.handle == nullptr) {
      const char* e = dlerror();
      n.load_error = e ? e : "unknown dlopen error";
      return n;
    }
    sym(n.handle, "nvmlInit_v2", n.init);
    if (n.init == nullptr) sym(n.handle, "nvmlInit", n.init);
    sym(n.handle, "nvmlShutdown", n.shutdown);
    sym(n.handle, "nvmlErrorString", n.error_string);
    sym(n.handle, "nvmlSystemGetDriverVersion", n.driver_version);
    sym(n.handle, "nvmlSystemGetCudaDriverVersion", n.cuda_driver_version);
    sym(n.handle, "nvmlDeviceGetCount_v2", n.device_count);
    if (n.device_count == nullptr) sym(n.handle, "nvmlDeviceGetCount", n.device_count);
    sym(n.handle, "nvmlDeviceGetHandleByIndex_v2", n.handle_by_index);
    if (n.handle_by_index == nullptr) sym(n.handle, "nvmlDeviceGetHandleByIndex", n.handle_by_index);
    sym(n.handle, "nvmlDeviceGetName", n.name);
    sym(n.handle, "nvmlDeviceGetTemperature", n.temperature);
    sym(n.handle, "nvmlDeviceGetUtilizationRates", n.utilization);
    sym(n.handle, "nvmlDeviceGetMemoryInfo", n.memory);
    sym(n.handle, "nvmlDeviceGetPowerUsage", n.power_usage);
    sym(n.handle, "nvmlDeviceGetEnforcedPowerLimit", n.power_limit);
    if (n.init == nullptr || n.shutdown == nullptr || n.device_count == nullptr ||
        n.handle_by_index == nullptr) {
      n.load_error = std::string(kNvmlLibrary) + " lacks nvmlInit/nvmlDeviceGetCount";
    }
    return n;
  }();
  return lib;
}

std::string error_text(const Nvml& n, NvmlReturn r) {
  const char* text = n.error_string ? n.error_string(r) : nullptr;
  return (text ? std::string(text) : "NVML error") + " (code " + std::to_string(r) + ")";
}

NvmlGpu read_gpu(const Nvml& n, unsigned index) {
  NvmlGpu g;
  g.index = static_cast<int>(index);
  NvmlDevice device = nullptr;
  const NvmlReturn r = n.handle_by_index(index, &device);
  if (r != kNvmlSuccess) {
    g.error = "nvmlDeviceGetHandleByIndex: " + error_text(n, r);
    return g;
  }
  if (n.name) {
    char name[kNameBufferSize] = {0};
    if (n.name(device, name, kNameBufferSize) == kNvmlSuccess) g.name = name;
  }
  unsigned value = 0;
  if (n.temperature && n.temperature(device, kNvmlTemperatureGpu, &value) == kNvmlSuccess) {
    g.temperature_c = value;
  }
  NvmlUtilization util{};
  if (n.utilization && n.utilization(device, &util) == kNvmlSuccess) {
    g.gpu_utilization_pct = util.gpu;
    g.memory_utilization_pct = util.memory;
  }
  NvmlMemory mem{};
  if (n.memory && n.memory(device, &mem) == kNvmlSuccess) {
    g.memory_used_bytes = mem.used;
    g.memory_total_bytes = mem.total;
  }
  if (n.power_usage && n.power_usage(device, &value) == kNvmlSuccess) g.power_draw_w = value / 1000.0;
  if (n.power_limit && n.power_limit(device, &value) == kNvmlSuccess) g.power_limit_w = value / 1000.0;
  return g;
}

}  // namespace

NvmlReport nvml_report() {
  NvmlReport report;
  report.library = kNvmlLibrary;
  try {
    const Nvml& n = nvml();
    if (!n.load_error.empty()) {
      report.reason = "NVML, the NVIDIA driver's management library, cannot be loaded (" +
                      n.load_error + "): there is no NVIDIA driver on this machine, so there is "
                      "no GPU to show. Fix: on a machine with an NVIDIA GPU install its driver "
                      "(then nvidia-smi works); on Colab pick Runtime > Change runtime type > "
                      "T4 GPU.";
      return report;
    }
    const NvmlReturn init = n.init();
    if (init != kNvmlSuccess) {
      report.reason = "NVML is installed but failed to start: " + error_text(n, init) +
                      ". Fix: check that the NVIDIA kernel driver is loaded (nvidia-smi should "
                      "work); in a container, start it with GPU access (docker run --gpus all).";
      return report;
    }
    report.available = true;
    if (n.driver_version) {
      char version[kDriverVersionBufferSize] = {0};
      if (n.driver_version(version, kDriverVersionBufferSize) == kNvmlSuccess) {
        report.driver_version = version;
      }
    }
    if (n.cuda_driver_version) {
      int v = 0;
      if (n.cuda_driver_version(&v) == kNvmlSuccess) report.cuda_driver_version = v;
    }
    unsigned count = 0;
    const NvmlReturn r = n.device_count(&count);
    if (r != kNvmlSuccess) {
      report.reason = "nvmlDeviceGetCount failed: " + error_text(n, r);
    } else {
      for (unsigned i = 0; i < count; ++i) report.gpus.push_back(read_gpu(n, i));
      if (count == 0) report.reason = "the NVIDIA driver reports no GPU";
    }
    n.shutdown();
  } catch (const std::exception& e) {
    report.available = false;
    report.reason = std::string("querying NVML failed: ") + e.what();
  }
  return report;
}

}  // namespace gpuaccel
