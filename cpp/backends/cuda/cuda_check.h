// Error checking for every CUDA runtime, cuBLAS and cuDNN call in the backend. A failing call
// throws BackendError carrying the call's text, file and line and the library's own error name,
// mapped to a GPUACCEL_CUDA_* status; `guarded()` turns that into the C ABI's status + message
// at the library boundary, so no C++ exception ever crosses into the core.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "core/cuda_backend_abi.h"

#if GPUACCEL_HAVE_CUDNN
#include <cudnn.h>
#endif

namespace gpuaccel::cuda {

class BackendError : public std::runtime_error {
 public:
  BackendError(int status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
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
inline int status_for_cuda_error(cudaError_t e) {
  switch (e) {
    case cudaErrorInsufficientDriver: {
      int driver = 0;
      if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
      return driver == 0 ? GPUACCEL_CUDA_NO_DRIVER : GPUACCEL_CUDA_DRIVER_TOO_OLD;
    }
    case cudaErrorCompatNotSupportedOnDevice:
      return GPUACCEL_CUDA_DRIVER_TOO_OLD;
    case cudaErrorNoDevice:
      return GPUACCEL_CUDA_NO_DEVICE;
    case cudaErrorMemoryAllocation:
      return GPUACCEL_CUDA_OUT_OF_MEMORY;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevice:
    case cudaErrorInvalidDevicePointer:
      return GPUACCEL_CUDA_INVALID_ARGUMENT;
    default:
      return GPUACCEL_CUDA_ERROR;
  }
}

inline void check_cuda(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  const int status = status_for_cuda_error(e);
  (void)cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  throw BackendError(status, call_site(call, file, line) + " failed: " + cudaGetErrorName(e) +
                                 " (" + cudaGetErrorString(e) + ")");
}

inline void check_cublas(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  int status = GPUACCEL_CUDA_ERROR;
  if (s == CUBLAS_STATUS_ALLOC_FAILED) status = GPUACCEL_CUDA_OUT_OF_MEMORY;
  if (s == CUBLAS_STATUS_INVALID_VALUE) status = GPUACCEL_CUDA_INVALID_ARGUMENT;
  if (s == CUBLAS_STATUS_NOT_INITIALIZED) {
    // cublasCreate fails this way when the driver/runtime underneath cannot start.
    int driver = 0;
    if (cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0) status = GPUACCEL_CUDA_NO_DRIVER;
  }
  throw BackendError(status, call_site(call, file, line) + " failed: " + cublasGetStatusName(s) +
                                 " (" + cublasGetStatusString(s) + ")");
}

#if GPUACCEL_HAVE_CUDNN
inline void check_cudnn(cudnnStatus_t s, const char* call, const char* file, int line) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  const int status = s == CUDNN_STATUS_ALLOC_FAILED ? GPUACCEL_CUDA_OUT_OF_MEMORY
                     : s == CUDNN_STATUS_BAD_PARAM  ? GPUACCEL_CUDA_INVALID_ARGUMENT
                                                    : GPUACCEL_CUDA_ERROR;
  throw BackendError(status, call_site(call, file, line) + " failed: " + cudnnGetErrorString(s));
}
#endif

// Runs `body` and converts whatever it throws into a status code and a message in `err`.
template <typename Body>
int guarded(char* err, size_t err_len, Body&& body) noexcept {
  auto write = [&](const char* text) {
    if (err != nullptr && err_len > 0) std::snprintf(err, err_len, "%s", text);
  };
  try {
    body();
    write("");
    return GPUACCEL_CUDA_OK;
  } catch (const BackendError& e) {
    write(e.what());
    return e.status();
  } catch (const std::bad_alloc&) {
    write("gpuaccel CUDA backend: out of host memory");
    return GPUACCEL_CUDA_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    write(e.what());
    return GPUACCEL_CUDA_ERROR;
  } catch (...) {
    write("gpuaccel CUDA backend: unknown error");
    return GPUACCEL_CUDA_ERROR;
  }
}

}  // namespace gpuaccel::cuda

#define GA_CUDA_CHECK(call) ::gpuaccel::cuda::check_cuda((call), #call, __FILE__, __LINE__)
#define GA_CUBLAS_CHECK(call) ::gpuaccel::cuda::check_cublas((call), #call, __FILE__, __LINE__)
#if GPUACCEL_HAVE_CUDNN
#define GA_CUDNN_CHECK(call) ::gpuaccel::cuda::check_cudnn((call), #call, __FILE__, __LINE__)
#endif
// Argument checks that need no GPU; they fail with GPUACCEL_CUDA_INVALID_ARGUMENT.
#define GA_CUDA_REQUIRE(cond, what)                                                            \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      throw ::gpuaccel::cuda::BackendError(GPUACCEL_CUDA_INVALID_ARGUMENT,                     \
                                           std::string(what) + " (" #cond " is false)");      \
    }                                                                                          \
  } while (0)
