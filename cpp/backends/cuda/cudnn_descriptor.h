// A cuDNN descriptor owned by a LibraryHandle, created on construction (cuDNN's create functions
// take nothing but the handle to write): what cudnn_ops.cc and cudnn_rnn.cc hold their
// descriptors in.
#pragma once

#if GPUACCEL_HAVE_CUDNN

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/library_handle.h"

namespace gpuaccel::cuda {

template <class Handle, auto Create, auto Destroy>
struct CudnnDescriptor : LibraryHandle<Handle, Destroy> {
  CudnnDescriptor() { GA_CUDNN_CHECK(Create(this->out())); }
};

}  // namespace gpuaccel::cuda

#endif  // GPUACCEL_HAVE_CUDNN
