// Which CUDA backend library to load when an installation holds more than one: the release
// wheel carries libgpuaccel_cuda.so (built with CUDA 13) and libgpuaccel_cuda12.so (CUDA 12, for
// drivers such as Colab's that stop at CUDA 12). The choice is a pure function of three facts --
// the CUDA version the driver supports, which backend files exist, and which CUDA runtime major
// the process has already loaded (PyTorch cu12 on Colab) -- so every case is tested on the CPU
// (tests/cpp/cuda_backend_choice_test.cc); cuda_backend_loader.cc gathers the facts and loads the
// chosen file.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace gpuaccel {

// One backend file the installation may hold, and the CUDA version it was built with (13000).
struct CudaBackendCandidate {
  std::string file;      // "libgpuaccel_cuda12.so"
  int cuda_version = 0;  // CUDA APIs' encoding: 12000 = 12.0
  bool present = false;  // the file exists next to the core
};

struct CudaBackendChoice {
  std::string file;      // the candidate to load; empty when none is present
  int cuda_version = 0;  // its CUDA version
  std::string reason;    // why this one, in plain words
  // One line per present candidate not chosen, and per absent one: "<file>: <why not>".
  std::vector<std::string> refused;
};

// The backend to load among `candidates` (each with its own CUDA major).
// `driver_cuda_version`: cuDriverGetVersion's answer (12040), 0 when no driver or unknown.
// `loaded_runtime_major`: the CUDA runtime major already loaded in the process (12 when
// libcudart.so.12 is), 0 when none.
// Rules, in order: only present files; a runtime already loaded picks the backend of the same
// major, when the driver can run it (a second CUDA major's cuBLAS/cuDNN next to the first's
// would clash: both cuDNNs are libcudnn.so.9); else the newest CUDA major the driver supports;
// with no driver known, the newest present (its load then reports why no GPU is usable); when
// the driver supports none, the oldest present (the loader then reports driver_too_old for it,
// naming the smallest update).
CudaBackendChoice choose_cuda_backend(const std::vector<CudaBackendCandidate>& candidates,
                                      int driver_cuda_version, int loaded_runtime_major);

// The backend files a build may install next to the core: `primary_file` built with
// `primary_cuda_version` (this build's nvcc), and libgpuaccel_cuda12.so (CUDA 12, .ci/cuda12_build)
// when the primary is not itself CUDA 12. `present` is asked per file name.
std::vector<CudaBackendCandidate> cuda_backend_candidates(const std::string& primary_file,
                                                          int primary_cuda_version,
                                                          const std::function<bool(const std::string& file)>& present);

// The file name of the extra CUDA 12 backend a release wheel carries.
inline constexpr const char* kCuda12BackendFile = "libgpuaccel_cuda12.so";

}  // namespace gpuaccel
