// Per-device state shared by every file of the CUDA backend: the device guard, the stream the
// backend queues its work on, library handles (cuBLAS, cuBLASLt, cuDNN) created on first use,
// the device's compute capability, and stream-ordered scratch memory for workspaces. Handles are
// never destroyed (at process exit the driver may already be gone).
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "backends/cuda/cuda_check.h"
#include "core/dtype.h"

namespace gpuaccel::cuda {

// Makes `device` current for the scope and restores the caller's device afterwards.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

// The stream all of the backend's work on `device` goes to. It is the legacy default stream, so
// the synchronous copies and cudaDeviceSynchronize of ABI 1 stay ordered with it.
cudaStream_t device_stream(int device);

cublasHandle_t cublas_handle(int device);
cublasLtHandle_t cublaslt_handle(int device);
#if GPUACCEL_HAVE_CUDNN
cudnnHandle_t cudnn_handle(int device);  // already bound to device_stream(device)
#endif

// Compute capability as major * 10 + minor (75 for a T4), cached per device.
int compute_capability(int device);

// Throws GPUACCEL_CUDA_UNIMPLEMENTED for bfloat16 library ops on GPUs before compute capability
// 8.0, naming the op, the GPU and what to do instead.
void require_dtype_supported(int device, DType dtype, const char* op);

// Bytes per element (the core's dtype_size, which this library does not link).
size_t element_size(DType dtype);
const char* dtype_text(DType dtype);

// Device memory that lives until the end of the scope, allocated and freed in stream order
// (cudaMallocAsync), for library workspaces and temporary layouts.
class ScratchBuffer {
 public:
  ScratchBuffer(int device, size_t bytes);
  ~ScratchBuffer();
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  void* get() const { return ptr_; }
  size_t size() const { return bytes_; }

 private:
  cudaStream_t stream_;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace gpuaccel::cuda
