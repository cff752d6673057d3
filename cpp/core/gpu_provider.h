// Where GPUs come from. The registry asks a GpuProvider once, at discovery; the real one loads
// the CUDA backend library (cuda_backend_loader.h), tests install a simulated one so every GPU
// configuration rule runs on a machine without a GPU.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpuaccel {

struct GpuInfo {
  std::string name;                 // "Tesla T4"
  int64_t total_memory = 0;         // bytes
  int major = 0;                    // compute capability
  int minor = 0;
  int multi_processor_count = 0;
  int memory_bus_width_bits = 0;
  int memory_clock_khz = 0;
  std::string pci_bus_id;           // "0000:00:04.0"; empty when unknown

  // Peak DRAM bandwidth in GB/s from bus width and clock (DDR: two transfers per clock).
  double memory_bandwidth_gbps() const {
    return 2.0 * memory_clock_khz * 1e3 * (memory_bus_width_bits / 8.0) / 1e9;
  }
};

class GpuProvider {
 public:
  virtual ~GpuProvider() = default;
  // The GPUs this process can use (after CUDA_VISIBLE_DEVICES). Empty when none; then
  // unavailable_reason() says why, in words a student can act on.
  virtual std::vector<GpuInfo> discover() = 0;
  virtual std::string unavailable_reason() const = 0;
  // "cuda" for the real backend, "simulated" for the test provider.
  virtual std::string kind() const = 0;
};

// Test provider: reports the GPUs it was given. Nothing can execute on them.
class SimulatedGpuProvider : public GpuProvider {
 public:
  explicit SimulatedGpuProvider(std::vector<GpuInfo> gpus) : gpus_(std::move(gpus)) {}
  std::vector<GpuInfo> discover() override { return gpus_; }
  std::string unavailable_reason() const override {
    return gpus_.empty() ? "the simulated GPU provider was given no GPUs" : "";
  }
  std::string kind() const override { return "simulated"; }

 private:
  std::vector<GpuInfo> gpus_;
};

// The real provider: loads the CUDA backend library (if it was built and is found) and asks it.
// Defined in cuda_backend_loader.cc.
std::unique_ptr<GpuProvider> make_cuda_gpu_provider();

}  // namespace gpuaccel
