// What a cuDNN status means to the backend, decided from its number alone so that the CPU tests
// check every status of the installed header (tests/cpp/cuda_cudnn_status_test.cc) without
// cuDNN. cuDNN 9 numbers its statuses by family, in thousands (cudnn_graph.h,
// CUDNN_STATUS_CATEGORY): 1000s uncategorized, 2000s BAD_PARAM and its sub-codes
// (BAD_PARAM_NULL_POINTER, _MISALIGNED_POINTER, _SHAPE_MISMATCH, ...), 3000s NOT_SUPPORTED and
// its sub-codes, 4000s INTERNAL_ERROR and its sub-codes, 5000s EXECUTION_FAILED and its
// sub-codes. Deciding by family means a sub-code a later header adds is classified with its
// family, not taken for an unknown error. This is the one owner of the rules: the error check
// (cuda_check.h), the convolution candidate walk and batch norm's fallbacks (cudnn_ops.cc) all
// ask these functions.
#pragma once

#include "core/cuda_loader/cuda_library.h"

namespace gpuaccel::cuda {

enum class CudnnStatusFamily {
  kSuccess,          // 0
  kUncategorized,    // 1000s: NOT_INITIALIZED, SUBLIBRARY_VERSION_MISMATCH, LICENSE_ERROR, ...
  kBadParam,         // 2000s
  kNotSupported,     // 3000s
  kInternalError,    // 4000s
  kExecutionFailed,  // 5000s
  kUnknown,          // any other number
};

constexpr CudnnStatusFamily cudnn_status_family(int status) {
  if (status == 0) return CudnnStatusFamily::kSuccess;
  switch (status / 1000) {
    case 1: return CudnnStatusFamily::kUncategorized;
    case 2: return CudnnStatusFamily::kBadParam;
    case 3: return CudnnStatusFamily::kNotSupported;
    case 4: return CudnnStatusFamily::kInternalError;
    case 5: return CudnnStatusFamily::kExecutionFailed;
    default: return CudnnStatusFamily::kUnknown;
  }
}

// cuDNN refused the call before queuing anything: it does not support the problem (algorithm,
// shape, dtype, layout) or rejects a parameter of it. A caller with another way (the next
// convolution algorithm, batch norm in float32 or in the backend's own kernels) takes it; a
// failed execution or an internal error is never retried.
constexpr bool cudnn_refused(int status) {
  const CudnnStatusFamily f = cudnn_status_family(status);
  return f == CudnnStatusFamily::kBadParam || f == CudnnStatusFamily::kNotSupported;
}

// The backend's status for a failed cuDNN call (so the core's typed error): the BAD_PARAM family
// is an invalid argument, the NOT_SUPPORTED family unimplemented (for these shapes, dtypes or
// this GPU), a failed allocation inside cuDNN (INTERNAL_ERROR_HOST_ALLOCATION_FAILED, which the
// deprecated CUDNN_STATUS_ALLOC_FAILED names, and _DEVICE_ALLOCATION_FAILED) out of memory, and
// everything else an internal error whose message carries cuDNN's own text.
constexpr int kCudnnHostAllocationFailed = 4003;
constexpr int kCudnnDeviceAllocationFailed = 4004;

constexpr CudaStatus cuda_status_for_cudnn(int status) {
  if (status == kCudnnHostAllocationFailed || status == kCudnnDeviceAllocationFailed) {
    return CudaStatus::kOutOfMemory;
  }
  switch (cudnn_status_family(status)) {
    case CudnnStatusFamily::kSuccess: return CudaStatus::kOk;
    case CudnnStatusFamily::kBadParam: return CudaStatus::kInvalidArgument;
    case CudnnStatusFamily::kNotSupported: return CudaStatus::kUnimplemented;
    default: return CudaStatus::kError;
  }
}

}  // namespace gpuaccel::cuda
