// An nvidia-smi-like snapshot of the machine's NVIDIA GPUs through NVML, the management library
// that ships with the driver. It is loaded with dlopen when asked for (no link dependency), so
// gpuaccel runs where there is no driver, and `gpuaccel.utils.smi()` then says why there is no
// table. NVML sees every GPU of the machine; CUDA_VISIBLE_DEVICES does not apply to it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuaccel {

struct NvmlGpu {
  int index = 0;
  std::string name;
  std::optional<unsigned> temperature_c;
  std::optional<unsigned> gpu_utilization_pct;     // kernels running, over the last sample
  std::optional<unsigned> memory_utilization_pct;  // memory being read or written
  std::optional<uint64_t> memory_used_bytes;
  std::optional<uint64_t> memory_total_bytes;
  std::optional<double> power_draw_w;
  std::optional<double> power_limit_w;
  std::string error;  // set when the device could not be queried at all
};

struct NvmlReport {
  bool available = false;     // NVML loaded and initialized
  std::string reason;         // why not, with the fix; empty when available
  std::string library;        // the library that was loaded or tried
  std::string driver_version; // "550.54.15"
  int cuda_driver_version = 0;  // 12040: the CUDA version the driver supports
  std::vector<NvmlGpu> gpus;
};

// Loads NVML (once), initializes it, reads every GPU, shuts it down again. Never throws.
NvmlReport nvml_report();

}  // namespace gpuaccel
