// Per-device state shared by every file of the CUDA backend: the device guard, the stream the
// backend queues all its work on, library handles (cuBLASLt, cuDNN) created on first use and
// leased to one thread at a time (shared_handle.h), the device's compute capability, the services the core lent the
// device's backend, and scratch memory from the device's pool. Streams and handles are never
// destroyed (at process exit the driver may already be gone).
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "backends/backend.h"
#include "backends/library/backend_services.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/shared_handle.h"
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

// The stream all of the backend's work on `device` goes to: copies, kernels, cuBLAS(Lt), cuDNN.
// A created non-blocking stream, not the legacy null stream, so work other libraries in the
// process queue on the null stream (PyTorch, TensorFlow) neither waits for ours nor stalls it,
// and the stream can be captured into a CUDA graph.
cudaStream_t device_stream(int device);
// The device's stream for `role` (backends/backend.h, Backend::Stream): kCompute is
// device_stream(device); kCopy (batch uploads) is a further non-blocking stream of the
// device, created on first use, ordered against the compute stream only by
// events (Backend::stream_wait_event).
cudaStream_t device_stream(int device, Backend::Stream role);

// The device's side stream: where the compute-stream work of a thread that is not capturing goes
// while another thread captures the compute stream (graph_capture.h, StreamCapture::run_beside).
cudaStream_t capture_side_stream(int device);

// Whether the calling thread's compute-stream work on `device` is routed elsewhere right now (it
// runs beside another thread's capture).
bool compute_stream_routed(int device);

// For its scope, device_stream(device) (the compute role) answers `stream` on the calling thread
// only: every kernel, copy and library call of this thread's op then goes there.
class ComputeStreamRoute {
 public:
  ComputeStreamRoute(int device, cudaStream_t stream);
  ~ComputeStreamRoute();
  ComputeStreamRoute(const ComputeStreamRoute&) = delete;
  ComputeStreamRoute& operator=(const ComputeStreamRoute&) = delete;

 private:
  int previous_device_;
  cudaStream_t previous_stream_;
};

// The services the core lent the backend of `device` (backends/library/backend_services.h): set
// once by CudaLibrary::create_backend, before any op of that device runs.
void set_device_services(int device, BackendServices* services);
BackendServices& device_services(int device);

// The device's cuBLASLt and cuDNN handles, locked for the calling thread while the lease lives:
// hold it across every call that takes the handle, never store the handle beyond it.
using CublasLtLease = SharedHandle<cublasLtHandle_t>::Lease;
CublasLtLease cublaslt_lease(int device);
#if GPUACCEL_HAVE_CUDNN
using CudnnLease = SharedHandle<cudnnHandle_t>::Lease;
CudnnLease cudnn_lease(int device);  // its handle is bound to device_stream(device) at each lease
#endif

// Compute capability as major * 10 + minor (75 for a T4), cached per device.
int compute_capability(int device);

// Throws CudaStatus::kUnimplemented for bfloat16 library ops on GPUs before compute capability
// 8.0, naming the op, the GPU and what to do instead.
void require_dtype_supported(int device, DType dtype, const char* op);

// Device memory that lives until the end of the scope, from the device's pool (so memory_limit
// and the memory stats count it), for temporary layouts. Freeing it before the queued work that
// uses it has run is safe: every user of the pool's memory on this device is ordered on the
// same stream.
class ScratchBuffer {
 public:
  ScratchBuffer(int device, size_t bytes);
  ~ScratchBuffer();
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  void* get() const { return ptr_; }
  size_t size() const { return bytes_; }

 private:
  BackendServices* services_ = nullptr;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace gpuaccel::cuda
