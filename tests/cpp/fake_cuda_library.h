// The tests' fake CUDA backend library (fake_cuda_library.cc, built as its own shared library
// with hidden symbols, like libgpuaccel_cuda.so): what it counts, and how a test picks what it
// pretends. It exports the real factory (gpuaccel_cuda_library) plus the counters below.
#pragma once

#include <cstdint>

// GPUACCEL_FAKE_CUDA, read at every query: unset or "ok" (two 256 MiB GPUs), "no_driver",
// "driver_too_old", "driver_too_old_generic" (a CUDA 12.4 driver and a generic error), "no_device",
// or "version=N" (the factory claims interface version N).
#define GPUACCEL_FAKE_CUDA_ENV "GPUACCEL_FAKE_CUDA"
#define GPUACCEL_FAKE_CUDA_COUNTERS "gpuaccel_fake_cuda_counters"
// The cuDNN version the fake reports as loaded (cuDNN 9's encoding, 91000); unset: 91900.
#define GPUACCEL_FAKE_CUDA_CUDNN_VERSION_ENV "GPUACCEL_FAKE_CUDA_CUDNN_VERSION"

// Device memory is host memory (aligned_alloc), so copies are memcpy and every op is computed
// by the CPU backend on it. memory_info reports 256 MiB less what is allocated on the device and
// not yet freed; matmul keeps a 1 MiB workspace from the pool, as the CUDA backend keeps
// cuBLASLt's, until Backend::release_cached_memory. A fake device clock times the profiler's events: matmul takes 1.5 ms
// of it (and computes nothing when its output has no memory), a host-to-device copy 0.25 ms.
// With GPUACCEL_FAKE_CUDA_FAULTS set, ops fail on purpose: unary kLog throws the library's typed
// error (InvalidArgument), kSqrt a plain std::runtime_error, kTanh and softmax Unimplemented,
// and kAbs asks the core's pool for a workspace of 1 MiB per element (so a memory limit turns it
// into the pool's out-of-memory error).
#define GPUACCEL_FAKE_CUDA_FAULTS_ENV "GPUACCEL_FAKE_CUDA_FAULTS"
// Streams run as on the slowest GPU: the compute stream runs each call at once, while copies
// queued on the copy stream (Backend::copy_from_host_on) run only when something waits for an
// event recorded behind them (the compute stream or the host). An upload the compute stream
// reads without waiting for, or a pinned buffer refilled before its DMA ran, gives wrong bytes.
// Graph capture works as on a GPU (launches recorded while capturing, replayed on launch, memory
// from the graph's arena); with GPUACCEL_FAKE_CUDA_NO_CAPTURE set, begin_capture fails instead.
#define GPUACCEL_FAKE_CUDA_NO_CAPTURE_ENV "GPUACCEL_FAKE_CUDA_NO_CAPTURE"

struct FakeCudaCounters {
  int64_t backends_created;
  int64_t ops;  // op calls that reached a fake backend (copies and synchronize included)
  int64_t copies_to_device;
  int64_t copies_to_host;
  int64_t device_mallocs;
  int64_t device_frees;
  int64_t events_created;
  int64_t events_recorded;
  int64_t events_destroyed;
  int64_t synchronizes;
  int64_t graph_captures;   // graphs made by end_capture
  int64_t graph_launches;   // replays (the launch right after a capture included)
  int64_t graphs_destroyed;
  // Streams and events of the Backend interface (Backend::Stream): uploads queued on the copy
  // stream (also counted in copies_to_device), events made and recorded, stream waits, host
  // waits, and waits on an event never recorded (an ordering mistake: tests expect none).
  int64_t copy_stream_copies;
  int64_t backend_events_created;
  int64_t backend_events_recorded;
  int64_t stream_waits;
  int64_t host_event_waits;
  int64_t unrecorded_waits;
  // HWIO -> KRSC kernel copies made for convolutions (forward and backward-data), as the CUDA
  // backend makes them (backends/cuda/krsc_kernel.h): once per weights version, or per call while
  // capturing. The fake's convolutions compute from that copy, so a stale one gives wrong numbers.
  int64_t kernel_layout_copies;
  // Backend::any_nonfinite launches: the loss-scale finite check's one launch per step over all
  // gradients (optim/loss_scale_optimizer.cc).
  int64_t nonfinite_checks;
};

extern "C" {
typedef FakeCudaCounters* (*gpuaccel_fake_cuda_counters_fn)(void);
}

#ifdef GPUACCEL_TEST_FAKE_CUDA_LIBRARY  // in the test binary: open the fake in-process
#include <dlfcn.h>

#include "core/cuda_loader/cuda_library.h"

namespace gpuaccel {

struct FakeCuda {
  CudaLibrary* library = nullptr;
  FakeCudaCounters* counters = nullptr;
};

// The fake library, loaded like the loader loads the real one (null members when it fails).
inline FakeCuda open_fake_cuda() {
  FakeCuda f;
  void* handle = dlopen(GPUACCEL_TEST_FAKE_CUDA_LIBRARY, RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) return f;
  auto factory = reinterpret_cast<gpuaccel_cuda_library_factory_fn>(dlsym(handle, GPUACCEL_CUDA_LIBRARY_FACTORY));
  auto counters = reinterpret_cast<gpuaccel_fake_cuda_counters_fn>(dlsym(handle, GPUACCEL_FAKE_CUDA_COUNTERS));
  int version = 0;
  if (factory != nullptr) f.library = factory(kCudaLibraryInterfaceVersion, &version);
  if (counters != nullptr) f.counters = counters();
  return f;
}

}  // namespace gpuaccel
#endif
