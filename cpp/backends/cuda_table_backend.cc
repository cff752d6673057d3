// The CUDA backend as a Backend: forwards to the function table of the dlopen'ed CUDA library.
// PLACEHOLDER until the library's op table (ABI v2) lands: returns null, so GPU ops report
// UnimplementedError instead of crashing.
#include "backends/backend.h"

namespace gpuaccel {

Backend* cuda_backend_ops() { return nullptr; }

}  // namespace gpuaccel
