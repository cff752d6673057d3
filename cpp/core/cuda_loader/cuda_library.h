// What the CUDA backend library (libgpuaccel_cuda.so) offers the core. The library is built by
// the same compiler from the same tree and shipped in the same wheel, so the boundary is a C++
// interface: one exported extern "C" factory returns a CudaLibrary, which answers the device
// queries the loader and the memory pools need and makes one Backend (backends/backend.h) per
// device. Queries here report a status and never throw (the loader must explain every failure);
// exceptions of ops are turned into the core's typed errors inside the library, through
// BackendServices (backends/library/backend_services.h), so no exception type crosses the boundary.
// The core only forward-declares Backend and BackendServices: it hands them through, and
// core/ stays below backends/.
#pragma once

#include <cstddef>
#include <string>

#include "core/cuda_interface_hash.h"  // generated in the build folder
#include "core/gpu_provider.h"

namespace gpuaccel {

class Backend;
class BackendServices;
class NcclLibrary;  // core/cuda_loader/nccl_library.h

// A hash of the headers the boundary is made of (CudaLibrary, Backend and its op list,
// BackendServices and every type they pass; cmake/cuda_interface_hash.cmake), computed at build
// time on both sides, so no change to them goes unnoticed and none needs a hand bump. The
// factory refuses a core compiled with another value (and says which it has).
constexpr int kCudaLibraryInterfaceVersion = GPUACCEL_CUDA_INTERFACE_HASH;

// The one symbol the library exports (and the loader looks up).
#define GPUACCEL_CUDA_LIBRARY_FACTORY "gpuaccel_cuda_library"

// What went wrong in a query; kOk is success.
enum class CudaStatus {
  kOk = 0,
  kNoDriver = 1,        // libcuda missing or no NVIDIA kernel driver
  kDriverTooOld = 2,    // driver older than the runtime the library was built with
  kNoDevice = 3,        // driver fine, no (visible) device
  kOutOfMemory = 4,
  kInvalidArgument = 5,
  kError = 6,           // anything else; see the message
  kUnimplemented = 7,   // not available for these dtypes/shapes/this GPU (the message says why)
};

class CudaLibrary {
 public:
  // Versions as the CUDA APIs report them (13000 for 13.0, 90300 for cuDNN 9.3.0); 0 if unknown.
  virtual int runtime_version() const = 0;
  virtual int cudnn_version() const = 0;
  virtual int cublas_version() const = 0;

  // Queries: each returns kOk or the failure with its message in *error.
  virtual CudaStatus driver_version(int* version, std::string* error) = 0;
  // Visible devices (respects CUDA_VISIBLE_DEVICES).
  virtual CudaStatus device_count(int* count, std::string* error) = 0;
  virtual CudaStatus device_properties(int device, GpuInfo* out, std::string* error) = 0;
  virtual CudaStatus memory_info(int device, size_t* free_bytes, size_t* total_bytes,
                                 std::string* error) = 0;

  // Raw memory under the pools (memory/gpu_sub_allocator, memory/pinned_host_sub_allocator).
  // Out of memory is kOutOfMemory with *ptr null.
  virtual CudaStatus malloc_device(int device, size_t bytes, void** ptr, std::string* error) = 0;
  virtual CudaStatus free_device(int device, void* ptr, std::string* error) = 0;
  // Page-locked host memory: the source of asynchronous host-to-device copies.
  virtual CudaStatus malloc_host_pinned(size_t bytes, void** ptr, std::string* error) = 0;
  virtual CudaStatus free_host_pinned(void* ptr, std::string* error) = 0;

  // Timing events on a device's stream for the profiler's device timeline
  // (backends/library/device_timeline.h): created once, recorded many times. Failures return false
  // and never fail an op.
  virtual bool create_event(int device, void** event) = 0;
  virtual bool record_event(int device, void* event) = 0;
  // Waits for `end`, then the milliseconds from start to end.
  virtual bool elapsed_ms(void* start, void* end, float* ms) = 0;
  virtual void destroy_event(void* event) = 0;
  // Waits for everything queued on the device's stream.
  virtual CudaStatus synchronize(int device, std::string* error) = 0;

  // The backend of `device`, made once per device by the core (backends/cuda_backends.cc) and
  // kept for the process. `services` outlives it. Throws the core's typed error (through
  // services) when the device cannot be set up.
  virtual Backend* create_backend(int device, BackendServices& services) = 0;

  // NCCL communicators for data-parallel training (core/cuda_loader/nccl_library.h); null when this
  // library has none (the tests' fake).
  virtual NcclLibrary* nccl() = 0;

 protected:
  ~CudaLibrary() = default;  // the library owns its one instance; the core never deletes it
};

}  // namespace gpuaccel

extern "C" {
// Returns the library's instance when `core_interface_version` equals the library's
// kCudaLibraryInterfaceVersion, else null; either way *library_interface_version is set to the
// library's value, so the loader can say which side is stale.
typedef gpuaccel::CudaLibrary* (*gpuaccel_cuda_library_factory_fn)(int core_interface_version,
                                                                   int* library_interface_version);
}
