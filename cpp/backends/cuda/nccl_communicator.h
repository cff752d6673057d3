// The CUDA library's NcclLibrary (core/cuda_loader/nccl_library.h): NCCL opened with dlopen on
// first use; null when the library was built without nccl.h.
#pragma once

#include "core/cuda_loader/nccl_library.h"

namespace gpuaccel::cuda {

NcclLibrary* nccl_library();

}  // namespace gpuaccel::cuda
