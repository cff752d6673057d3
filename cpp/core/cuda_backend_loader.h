// Finds and loads the CUDA backend library (libgpuaccel_cuda.so, see cuda_backend_abi.h) on
// first use, never at import. Where it is: $GPUACCEL_CUDA_BACKEND if set (an explicit path; a
// missing file there is reported, which is how tests prove the no-CUDA path), else next to the
// binary that holds the core (the Python module _C). Every failure becomes a reason in plain
// words with the fix, so `gpuaccel.cuda.diagnose()` can explain it.
#pragma once

#include <string>

#include "core/cuda_backend_abi.h"

namespace gpuaccel {

struct CudaBackendStatus {
  bool built = false;         // this gpuaccel was compiled with the CUDA backend
  bool loaded = false;        // the library was found and loaded
  std::string library_path;   // where it was looked for / loaded from
  std::string reason;         // empty when loaded and at least one GPU is usable
  int device_count = 0;       // visible CUDA devices (0 when not usable)
  int status = GPUACCEL_CUDA_OK;  // GPUACCEL_CUDA_* code of the failure, if any
};

// Loads on first call (thread-safe); never throws.
const CudaBackendStatus& cuda_backend_status();
// The loaded backend's function table, or nullptr when it is not loaded.
const gpuaccel_cuda_backend* cuda_backend();
// The table, or a FailedPreconditionError for `op` that carries the reason.
const gpuaccel_cuda_backend& require_cuda_backend(const std::string& op);

}  // namespace gpuaccel
