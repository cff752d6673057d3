// The CUDA library's NcclLibrary (core/nccl_library.h): NCCL opened with dlopen on first use;
// null when the library was built without nccl.h.
#pragma once

#include "core/nccl_library.h"

namespace gpuaccel::cuda {

NcclLibrary* nccl_library();

}  // namespace gpuaccel::cuda
