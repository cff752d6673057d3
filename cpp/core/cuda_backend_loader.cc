// Loads the CUDA backend library at run time (see cuda_backend_abi.h). PLACEHOLDER: the
// hardware-discovery work replaces this with the real dlopen-based provider.
#include "core/gpu_provider.h"

namespace gpuaccel {

std::unique_ptr<GpuProvider> make_cuda_gpu_provider() {
  return std::make_unique<SimulatedGpuProvider>(std::vector<GpuInfo>{});
}

}  // namespace gpuaccel
