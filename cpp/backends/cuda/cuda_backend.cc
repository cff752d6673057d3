// The CUDA backend library's one exported symbol, gpuaccel_cuda_library: the CudaLibrary the
// core loads (core/cuda_loader/cuda_library.h), and the Backend it makes per device, which runs
// each op of
// ops.h on the device's stream at the library boundary (backends/library/library_backend_call.h).
// The CUDA runtime is linked statically, so device queries need only the driver (libcuda.so.1);
// cuBLAS and cuDNN are shared libraries found through the RPATH. Every library call goes
// through a GA_*_CHECK macro.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <library_types.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>

#include "backends/backend.h"
#include "backends/cuda/context.h"
#include "backends/cuda/nccl_communicator.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/graph_capture.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/staging_ring.h"
#include "core/cuda_loader/cuda_library.h"

namespace gpuaccel::cuda {

namespace {

int visible_device_count() {
  int count = 0;
  GA_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count == 0) {
    throw BackendError(CudaStatus::kNoDevice, "cudaGetDeviceCount reported 0 CUDA devices");
  }
  return count;
}

void require_device(int device) {
  const int count = visible_device_count();
  GA_CUDA_REQUIRE(device >= 0 && device < count,
                  "CUDA device " + std::to_string(device) + " does not exist; valid devices are 0.." +
                      std::to_string(count - 1));
}

size_t bytes_of(const TensorView& v) { return static_cast<size_t>(v.numel()) * dtype_size(v.dtype); }

// The staging ring's side of one device (backends/cuda/staging_ring.h): pinned buffers, copies and
// events on the device's stream.
class CudaStagingEngine final : public StagingEngine {
 public:
  explicit CudaStagingEngine(int device) : device_(device) {}
  void* alloc_pinned(size_t bytes) override {
    void* p = nullptr;
    GA_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocPortable));
    return p;
  }
  void free_pinned(void* pinned) override { GA_CUDA_CHECK(cudaFreeHost(pinned)); }
  void* create_event() override {
    cudaEvent_t e = nullptr;
    GA_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return e;
  }
  void destroy_event(void* event) override { GA_CUDA_CHECK(cudaEventDestroy(static_cast<cudaEvent_t>(event))); }
  void copy_async(void* dst, const void* pinned, size_t bytes) override {
    GA_CUDA_CHECK(cudaMemcpyAsync(dst, pinned, bytes, cudaMemcpyHostToDevice, device_stream(device_)));
  }
  void record(void* event) override {
    GA_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), device_stream(device_)));
  }
  void host_wait(void* event) override { GA_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event))); }

 private:
  const int device_;
};

// Whether `host` is page-locked memory CUDA knows (the pinned pool's): then a copy from it is
// an asynchronous DMA that reads it after the call returns.
bool is_pinned(const void* host) {
  cudaPointerAttributes attributes{};
  GA_CUDA_CHECK(cudaPointerGetAttributes(&attributes, host));
  return attributes.type == cudaMemoryTypeHost;
}

// One GPU's Backend: every op makes the device current and queues its work on device_stream().
class CudaBackend final : public Backend {
 public:
  CudaBackend(int device, BackendServices& services)
      : device_(device), services_(services), capture_(device, services), staging_engine_(device),
        staging_(staging_engine_) {}
  ~CudaBackend() override;
  const char* name() const override { return "cuda"; }

  // Every kernel of the op list runs the cuda:: function of its name on this device, under the
  // list's name (error texts, the profiler's device plane); the composed ops keep Backend's
  // composition. A query does no device work (no launch bracket); it gets the device for the
  // libraries that answer per device (cuDNN's RNN sizes).
#define GPUACCEL_BACKEND_KERNEL(NAME, PARAMS, ARGS, TRACE) \
  void NAME PARAMS override {                                \
    run(#NAME, [&] { cuda::NAME(device_, GPUACCEL_UNPARENTHESIZE ARGS); }); \
  }
#define GPUACCEL_BACKEND_QUERY(TYPE, NAME, PARAMS, ARGS)                         \
  TYPE NAME PARAMS override {                                                    \
    TYPE answer{};                                                               \
    run_library_op(services_, #NAME, LaunchKind::kNone, 0, [&] {                 \
      answer = cuda::NAME(device_, GPUACCEL_UNPARENTHESIZE ARGS);                \
    });                                                                          \
    return answer;                                                               \
  }
#define GPUACCEL_BACKEND_COMPOSED(NAME, PARAMS, ARGS, TRACE)
#include "backends/backend_ops.def"

  // The source is the caller's (a NumPy array, or a PyTorch pin_memory() buffer seen through
  // zero-copy), and the caller may overwrite it as soon as this returns. So every source, pageable
  // or page-locked, is staged through our own pinned ring (backends/cuda/staging_ring.h): the host
  // copies it into a slot and the slot's DMA is queued. A DMA straight from a page-locked source
  // would still be reading it after the return; waiting for it instead would make the host wait
  // for the previous step, as cudaMemcpyAsync from pageable memory may. Batch uploads from the
  // pinned host pool, whose buffers we own, are copy_from_host_on's.
  void copy_from_host(const void* host, const TensorView& dst) override {
    const size_t bytes = bytes_of(dst);
    run("copy_to_device", [&] {
      if (bytes == 0) return;
      GA_CUDA_REQUIRE(dst.data != nullptr && host != nullptr, "copy_to_device: null pointer");
      if (capture_.captures_here()) return capture_.refuse("copy_from_host");
      staging_.copy(dst.data, host, bytes);
    }, LaunchKind::kCopy, static_cast<int64_t>(bytes));
  }
  // The caller reads `host` right after, so this waits for the stream. A thread that is
  // capturing cannot (the data does not exist yet): its capture is refused and `host` zeroed.
  // Another thread's copy meanwhile runs beside the capture (graph_capture.h) and waits.
  void copy_to_host(const TensorView& src, void* host) override {
    const size_t bytes = bytes_of(src);
    run("copy_to_host", [&] {
      if (bytes == 0) return;
      GA_CUDA_REQUIRE(src.data != nullptr && host != nullptr, "copy_to_host: null pointer");
      if (capture_.captures_here()) {
        capture_.refuse("copy_to_host");
        std::memset(host, 0, bytes);
        return;
      }
      const cudaStream_t stream = device_stream(device_);
      GA_CUDA_CHECK(cudaMemcpyAsync(host, src.data, bytes, cudaMemcpyDeviceToHost, stream));
      GA_CUDA_CHECK(cudaStreamSynchronize(stream));
    }, LaunchKind::kCopy, static_cast<int64_t>(bytes));
  }
  void synchronize() override {
    run("synchronize", [&] {
      if (capture_.captures_here()) return capture_.refuse("synchronize");
      wait_for_device();
    }, LaunchKind::kNone);
  }
  // CudaLibrary::synchronize (cuda.synchronize()): synchronize() outside the op machinery, and an
  // error instead of a refused capture on the capturing thread.
  void synchronize_for_library() {
    if (capture_.captures_here()) {
      throw BackendError(CudaStatus::kError,
                         "synchronize: this thread is capturing a CUDA graph on GPU " + std::to_string(device_));
    }
    const CaptureOwner::OpScope scope(capture_.owner());
    if (scope.beside_capture()) return capture_.run_beside([&] { wait_for_device(); });
    wait_for_device();
  }

  // Events and the device's other streams (context.h: device_stream(device, role)). Events
  // carry no timing: they only order streams and tell the host when a DMA has read its buffer.
  EventHandle create_event() override {
    cudaEvent_t event = nullptr;
    run("create_event", [&] {
      GA_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    }, LaunchKind::kNone);
    return event;
  }
  void destroy_event(EventHandle event) override {
    if (event == nullptr) return;
    run("destroy_event", [&] { GA_CUDA_CHECK(cudaEventDestroy(static_cast<cudaEvent_t>(event))); },
        LaunchKind::kNone);
  }
  void record_event(EventHandle event, Stream stream) override {
    run("record_event", [&] {
      GA_CUDA_REQUIRE(event != nullptr, "record_event: null event");
      GA_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), device_stream(device_, stream)));
    }, LaunchKind::kNone);
  }
  void stream_wait_event(Stream waiter, EventHandle event) override {
    run("stream_wait_event", [&] {
      GA_CUDA_REQUIRE(event != nullptr, "stream_wait_event: null event");
      GA_CUDA_CHECK(cudaStreamWaitEvent(device_stream(device_, waiter), static_cast<cudaEvent_t>(event), 0));
    }, LaunchKind::kNone);
  }
  void host_wait_event(EventHandle event) override {
    run("host_wait_event", [&] {
      if (capture_.captures_here()) return capture_.refuse("host_wait_event");
      GA_CUDA_REQUIRE(event != nullptr, "host_wait_event: null event");
      GA_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
    }, LaunchKind::kNone);
  }
  bool event_completed(EventHandle event) override {
    bool done = true;
    run("event_completed", [&] {
      GA_CUDA_REQUIRE(event != nullptr, "event_completed: null event");
      const cudaError_t status = cudaEventQuery(static_cast<cudaEvent_t>(event));
      if (status == cudaErrorNotReady) {
        done = false;
        return;
      }
      GA_CUDA_CHECK(status);
    }, LaunchKind::kNone);
    return done;
  }
  // An upload on another stream needs a pinned source: from pageable memory cudaMemcpyAsync
  // may stage and wait on the host, and the ring that avoids that orders its slots on the
  // compute stream.
  void copy_from_host_on(Stream stream, const void* host, const TensorView& dst) override {
    if (stream == Stream::kCompute) return copy_from_host(host, dst);
    const size_t bytes = bytes_of(dst);
    run("copy_to_device", [&] {
      if (bytes == 0) return;
      GA_CUDA_REQUIRE(dst.data != nullptr && host != nullptr, "copy_to_device: null pointer");
      if (capture_.captures_here()) return capture_.refuse("copy_from_host_on");
      GA_CUDA_REQUIRE(is_pinned(host), "copy_from_host_on: the source of an upload on a copy stream must be "
                                       "pinned memory (the pinned host pool)");
      GA_CUDA_CHECK(cudaMemcpyAsync(dst.data, host, bytes, cudaMemcpyHostToDevice,
                                    device_stream(device_, stream)));
    }, LaunchKind::kNone);  // the profiler's device timeline times the compute stream only
  }

  // Graph capture of a training step (graph_capture.h; train/step_capture_policy.h decides).
  bool supports_graph_capture() const override { return true; }
  void begin_capture() override {
    run_edge("begin_capture", [&] { capture_.begin(); });
  }
  GraphHandle end_capture() override {
    GraphHandle graph = nullptr;
    run_edge("end_capture", [&] { graph = capture_.end(); });
    return graph;
  }
  void replay(GraphHandle graph) override {
    run("replay", [&] { capture_.launch(graph); });
  }
  void destroy_graph(GraphHandle graph) override {
    run("destroy_graph", [&] { capture_.destroy(graph); }, LaunchKind::kNone);
  }

  void release_cached_memory() override {
    run("release_cached_memory", [&] {
      release_matmul_workspace(device_);
      release_conv_workspace(device_);
    }, LaunchKind::kNone);
  }

 private:
  template <typename Body>
  void run(const char* op, Body&& body, LaunchKind kind = LaunchKind::kKernel, int64_t bytes = 0) {
    run_library_op(services_, op, kind, bytes, [&] {
      // While another thread captures, this thread's op runs beside the capture, never in it.
      const CaptureOwner::OpScope scope(capture_.owner());
      DeviceGuard guard(device_);
      if (scope.beside_capture()) return capture_.run_beside(body);
      body();
    });
  }
  // A capture's begin or end: it waits for other threads' ops in flight (CaptureOwner), so it
  // holds no OpScope itself.
  template <typename Body>
  void run_edge(const char* op, Body&& body) {
    run_library_op(services_, op, LaunchKind::kNone, 0, [&] {
      DeviceGuard guard(device_);
      body();
    });
  }

  // Every stream of the device, as torch.cuda.synchronize: cudaDeviceSynchronize waits for the
  // compute, copy and side streams, NCCL's communication streams and any other library's work in
  // the process. Synchronizing the device while one of its streams is being captured is invalid
  // (CUDA programming guide, "Prohibited and Unhandled Operations"), so beside another thread's
  // capture it waits for the streams that are not captured: the side stream (behind everything
  // queued on the compute stream before the capture) and the copy stream.
  void wait_for_device() {
    if (compute_stream_routed(device_)) {
      GA_CUDA_CHECK(cudaStreamSynchronize(capture_side_stream(device_)));
      GA_CUDA_CHECK(cudaStreamSynchronize(device_stream(device_, Stream::kCopy)));
      return;
    }
    GA_CUDA_CHECK(cudaDeviceSynchronize());
  }

  const int device_;
  BackendServices& services_;
  StreamCapture capture_;
  CudaStagingEngine staging_engine_;
  StagingRing staging_;
};

// The backend made for each device (CudaLibrary::create_backend), for cuda.synchronize().
std::mutex backends_mutex;
std::map<int, CudaBackend*>& backends_by_device() {
  static auto* backends = new std::map<int, CudaBackend*>();
  return *backends;
}

CudaBackend::~CudaBackend() {
  std::lock_guard<std::mutex> lock(backends_mutex);
  auto found = backends_by_device().find(device_);
  if (found != backends_by_device().end() && found->second == this) backends_by_device().erase(found);
}

class CudaLibraryImpl final : public CudaLibrary {
 public:
  int runtime_version() const override { return CUDART_VERSION; }

  int cudnn_version() const override {
#if GPUACCEL_HAVE_CUDNN
    return static_cast<int>(cudnnGetVersion());
#else
    return 0;
#endif
  }

  int cublas_version() const override {
    int version = 0;
    const CudaStatus status = query(nullptr, [&] {
      int major = 0, minor = 0, patch = 0;
      GA_CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &major));
      GA_CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &minor));
      GA_CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &patch));
      version = major * 10000 + minor * 100 + patch;  // the CUBLAS_VERSION layout
    });
    return status == CudaStatus::kOk ? version : 0;
  }

  CudaStatus driver_version(int* version, std::string* error) override {
    return query(error, [&] {
      GA_CUDA_REQUIRE(version != nullptr, "driver_version: null output");
      *version = 0;
      GA_CUDA_CHECK(cudaDriverGetVersion(version));
      if (*version == 0) {
        throw BackendError(CudaStatus::kNoDriver,
                           "cudaDriverGetVersion reported no NVIDIA driver (libcuda.so.1 not loadable)");
      }
    });
  }

  // The driver is probed on its own first, so "no driver" is told apart from the runtime's codes
  // (libcuda stays open: the runtime opens it too, so this costs nothing).
  CudaStatus device_count(int* count, std::string* error) override {
    return query(error, [&] {
      GA_CUDA_REQUIRE(count != nullptr, "device_count: null output");
      *count = 0;
      dlerror();
      if (dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) == nullptr) {
        const char* why = dlerror();
        throw BackendError(CudaStatus::kNoDriver, why != nullptr ? why : "libcuda.so.1 cannot be loaded");
      }
      *count = visible_device_count();
    });
  }

  CudaStatus device_properties(int device, GpuInfo* out, std::string* error) override {
    return query(error, [&] {
      GA_CUDA_REQUIRE(out != nullptr, "device_properties: null output");
      require_device(device);
      *out = GpuInfo{};
      cudaDeviceProp prop{};
      GA_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
      out->name = prop.name;
      out->total_memory = static_cast<int64_t>(prop.totalGlobalMem);
      out->major = prop.major;
      out->minor = prop.minor;
      out->multi_processor_count = prop.multiProcessorCount;
      out->memory_bus_width_bits = prop.memoryBusWidth;
      // CUDA 13 removed cudaDeviceProp::memoryClockRate; the attribute works on every version.
      GA_CUDA_CHECK(cudaDeviceGetAttribute(&out->memory_clock_khz, cudaDevAttrMemoryClockRate, device));
      char pci[32] = {0};
      GA_CUDA_CHECK(cudaDeviceGetPCIBusId(pci, sizeof(pci), device));
      out->pci_bus_id = pci;
    });
  }

  CudaStatus memory_info(int device, size_t* free_bytes, size_t* total_bytes, std::string* error) override {
    return query(error, [&] {
      GA_CUDA_REQUIRE(free_bytes != nullptr && total_bytes != nullptr, "memory_info: null output");
      DeviceGuard guard(device);
      GA_CUDA_CHECK(cudaMemGetInfo(free_bytes, total_bytes));
    });
  }

  CudaStatus malloc_device(int device, size_t bytes, void** ptr, std::string* error) override {
    return query(error, [&] {
      GA_CUDA_REQUIRE(ptr != nullptr, "malloc_device: null output");
      *ptr = nullptr;
      if (bytes == 0) return;
      try {
        DeviceGuard guard(device);
        // A pool growing while a training step is captured (a graph's arena takes its regions
        // from the pool): cudaMalloc is not a stream operation, so the capture need not see it,
        // and relaxed mode lets it through instead of invalidating the capture.
        cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
        GA_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
        const cudaError_t allocated = cudaMalloc(ptr, bytes);
        GA_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
        GA_CUDA_CHECK(allocated);
      } catch (const BackendError& e) {
        throw BackendError(e.status(), "allocating " + std::to_string(bytes) + " bytes on GPU " +
                                           std::to_string(device) + ": " + e.what());
      }
    });
  }

  // cudaFree waits for the device, so memory the pool gives back is never in use by queued work.
  CudaStatus free_device(int device, void* ptr, std::string* error) override {
    return query(error, [&] {
      if (ptr == nullptr) return;
      DeviceGuard guard(device);
      GA_CUDA_CHECK(cudaFree(ptr));
    });
  }

  CudaStatus malloc_host_pinned(size_t bytes, void** ptr, std::string* error) override {
    return query(error, [&] {
      GA_CUDA_REQUIRE(ptr != nullptr, "malloc_host_pinned: null output");
      *ptr = nullptr;
      if (bytes == 0) return;
      // Portable: the pages count as pinned for every device's context, not only the current one.
      GA_CUDA_CHECK(cudaHostAlloc(ptr, bytes, cudaHostAllocPortable));
    });
  }

  CudaStatus free_host_pinned(void* ptr, std::string* error) override {
    return query(error, [&] {
      if (ptr == nullptr) return;
      GA_CUDA_CHECK(cudaFreeHost(ptr));
    });
  }

  bool create_event(int device, void** event) override {
    return query(nullptr, [&] {
      *event = nullptr;
      DeviceGuard guard(device);
      cudaEvent_t e = nullptr;
      GA_CUDA_CHECK(cudaEventCreate(&e));
      *event = e;
    }) == CudaStatus::kOk;
  }

  bool record_event(int device, void* event) override {
    return query(nullptr, [&] {
      GA_CUDA_REQUIRE(event != nullptr, "record_event: null event");
      DeviceGuard guard(device);
      GA_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), device_stream(device)));
    }) == CudaStatus::kOk;
  }

  bool elapsed_ms(void* start, void* end, float* ms) override {
    return query(nullptr, [&] {
      GA_CUDA_REQUIRE(start != nullptr && end != nullptr && ms != nullptr, "elapsed_ms: null argument");
      GA_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(end)));
      GA_CUDA_CHECK(cudaEventElapsedTime(ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)));
    }) == CudaStatus::kOk;
  }

  void destroy_event(void* event) override {
    if (event != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(event));
  }

  // The whole device, through its backend when it has one (which knows whether a capture is
  // under way): CudaBackend::wait_for_device.
  CudaStatus synchronize(int device, std::string* error) override {
    return query(error, [&] {
      DeviceGuard guard(device);
      CudaBackend* backend = nullptr;
      {
        std::lock_guard<std::mutex> lock(backends_mutex);
        auto found = backends_by_device().find(device);
        if (found != backends_by_device().end()) backend = found->second;
      }
      if (backend != nullptr) return backend->synchronize_for_library();
      GA_CUDA_CHECK(cudaDeviceSynchronize());
    });
  }

  Backend* create_backend(int device, BackendServices& services) override {
    Backend* backend = nullptr;
    run_library_op(services, "backend_for", LaunchKind::kNone, 0, [&] {
      require_device(device);
      set_device_services(device, &services);
      auto* made = new CudaBackend(device, services);
      std::lock_guard<std::mutex> lock(backends_mutex);
      backends_by_device()[device] = made;
      backend = made;
    });
    return backend;
  }

  NcclLibrary* nccl() override { return nccl_library(); }
};

}  // namespace

}  // namespace gpuaccel::cuda

extern "C" __attribute__((visibility("default"))) gpuaccel::CudaLibrary* gpuaccel_cuda_library(
    int core_interface_version, int* library_interface_version) {
  if (library_interface_version != nullptr) {
    *library_interface_version = gpuaccel::kCudaLibraryInterfaceVersion;
  }
  if (core_interface_version != gpuaccel::kCudaLibraryInterfaceVersion) return nullptr;
  static gpuaccel::cuda::CudaLibraryImpl library;
  return &library;
}

static_assert(std::is_same_v<decltype(&gpuaccel_cuda_library), gpuaccel_cuda_library_factory_fn>,
              "the exported factory must match gpuaccel_cuda_library_factory_fn");
