// Error checking for every CUDA runtime, cuBLAS and cuDNN call in the backend. A failing call
// throws BackendError carrying the call's text, file and line and the library's own error name,
// with the CudaStatus it stands for. An op turns it into the core's typed error at the library
// boundary (backends/library/library_backend_call.h); a query returns the status and message
// (`query()` below), so no exception of this library's types crosses into the core.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "backends/library/library_backend_call.h"
#include "core/cuda_loader/cuda_library.h"

#if GPUACCEL_HAVE_CUDNN
#include <cudnn.h>

#include "backends/cuda/cudnn_status.h"
#endif

namespace gpuaccel::cuda {

// The core's error code for an op that failed with `status`.
inline ErrorCode error_code_for(CudaStatus status) {
  switch (status) {
    case CudaStatus::kOutOfMemory: return ErrorCode::kResourceExhausted;
    case CudaStatus::kUnimplemented: return ErrorCode::kUnimplemented;
    case CudaStatus::kInvalidArgument: return ErrorCode::kInvalidArgument;
    default: return ErrorCode::kInternal;
  }
}

class BackendError : public LibraryOpError {
 public:
  BackendError(CudaStatus status, const std::string& message)
      : LibraryOpError(error_code_for(status), message), status_(status) {}
  CudaStatus status() const { return status_; }

 private:
  CudaStatus status_;
};

// "cpp/backends/cuda/x.cc" rather than the absolute path of the build machine.
inline const char* short_file(const char* file) {
  const char* p = std::strstr(file, "cpp/backends/");
  return p ? p : file;
}

inline std::string call_site(const char* call, const char* file, int line) {
  return std::string(call) + " at " + short_file(file) + ":" + std::to_string(line);
}

// The status a CUDA runtime error stands for. cudaErrorInsufficientDriver means either "no
// driver at all" (the runtime reports driver version 0 then) or "driver older than the runtime".
inline CudaStatus status_for_cuda_error(cudaError_t e) {
  switch (e) {
    case cudaErrorInsufficientDriver: {
      int driver = 0;
      if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
      return driver == 0 ? CudaStatus::kNoDriver : CudaStatus::kDriverTooOld;
    }
    case cudaErrorCompatNotSupportedOnDevice:
      return CudaStatus::kDriverTooOld;
    case cudaErrorNoDevice:
      return CudaStatus::kNoDevice;
    case cudaErrorMemoryAllocation:
      return CudaStatus::kOutOfMemory;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevice:
    case cudaErrorInvalidDevicePointer:
      return CudaStatus::kInvalidArgument;
    default:
      return CudaStatus::kError;
  }
}

// Errors that leave the device's context unusable ("sticky": every later call of the process
// fails with the same error, and cudaGetLastError cannot clear it). They come from a kernel that
// already ran, so the call that reports one is usually not the one at fault.
inline bool is_sticky_cuda_error(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

inline void check_cuda(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  const CudaStatus status = status_for_cuda_error(e);
  (void)cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  std::string message = call_site(call, file, line) + " failed: " + cudaGetErrorName(e) + " (" +
                        cudaGetErrorString(e) + ")";
  if (is_sticky_cuda_error(e)) {
    message += ". This error is sticky: the GPU can no longer be used in this process (restart it). "
               "An earlier kernel launch likely caused it; CUDA_LAUNCH_BLOCKING=1 makes the failing "
               "launch report itself";
  }
  throw BackendError(status, message);
}

inline void check_cublas(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  CudaStatus status = CudaStatus::kError;
  if (s == CUBLAS_STATUS_ALLOC_FAILED) status = CudaStatus::kOutOfMemory;
  if (s == CUBLAS_STATUS_INVALID_VALUE) status = CudaStatus::kInvalidArgument;
  if (s == CUBLAS_STATUS_NOT_INITIALIZED) {
    // cublasCreate fails this way when the driver/runtime underneath cannot start.
    int driver = 0;
    if (cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0) status = CudaStatus::kNoDriver;
  }
  throw BackendError(status, call_site(call, file, line) + " failed: " + cublasGetStatusName(s) +
                                 " (" + cublasGetStatusString(s) + ")");
}

#if GPUACCEL_HAVE_CUDNN
inline void check_cudnn(cudnnStatus_t s, const char* call, const char* file, int line) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  // By the status's family (cudnn_status.h), so that every BAD_PARAM_* sub-code is an invalid
  // argument like BAD_PARAM itself.
  throw BackendError(cuda_status_for_cudnn(static_cast<int>(s)),
                     call_site(call, file, line) + " failed: " + cudnnGetErrorString(s));
}
#endif

// Runs a query's `body` and converts whatever it throws into its status and the message in
// *error (which may be null).
template <typename Body>
CudaStatus query(std::string* error, Body&& body) noexcept {
  auto write = [&](const char* text) {
    if (error != nullptr) *error = text;
  };
  try {
    body();
    write("");
    return CudaStatus::kOk;
  } catch (const BackendError& e) {
    write(e.what());
    return e.status();
  } catch (const std::bad_alloc&) {
    write("gpuaccel CUDA backend: out of host memory");
    return CudaStatus::kOutOfMemory;
  } catch (const std::exception& e) {
    write(e.what());
    return CudaStatus::kError;
  } catch (...) {
    write("gpuaccel CUDA backend: unknown error");
    return CudaStatus::kError;
  }
}

}  // namespace gpuaccel::cuda

#define GA_CUDA_CHECK(call) ::gpuaccel::cuda::check_cuda((call), #call, __FILE__, __LINE__)
#define GA_CUBLAS_CHECK(call) ::gpuaccel::cuda::check_cublas((call), #call, __FILE__, __LINE__)
#if GPUACCEL_HAVE_CUDNN
#define GA_CUDNN_CHECK(call) ::gpuaccel::cuda::check_cudnn((call), #call, __FILE__, __LINE__)
#endif
// Argument checks that need no GPU; they fail with CudaStatus::kInvalidArgument.
#define GA_CUDA_REQUIRE(cond, what)                                                            \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      throw ::gpuaccel::cuda::BackendError(CudaStatus::kInvalidArgument,                     \
                                           std::string(what) + " (" #cond " is false)");      \
    }                                                                                          \
  } while (0)
