// A fake CUDA backend library for tests on machines without a GPU (see fake_cuda_library.h).
// It crosses the same boundary as libgpuaccel_cuda.so: the same factory, a CudaLibrary, one
// Backend per device made with the core's BackendServices, ops run through run_library_op. So
// the loader's version check and diagnosis, the typed errors out of another shared library,
// pool workspaces and the profiler's device timeline are all tested here, and whole training
// steps can run on a "GPU" whose calls are counted. Its ops are computed by the CPU backend of
// a copy of the core linked into this library with hidden symbols (a test artifact; the real
// library links none of the core).
#include "fake_cuda_library.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/cuda/capture_owner.h"
#include "backends/cuda/krsc_kernel.h"
#include "backends/library/library_backend_call.h"
#include "core/cuda_loader/cuda_library.h"
#include "cpu_launched_ops.h"

namespace gpuaccel {
Backend& cpu_backend();  // backends/cpu/cpu_backend.cc, of the core compiled into this library
}

namespace gpuaccel::fake_cuda {

namespace {

FakeCudaCounters counters{};
// The fake device clock, in microseconds: matmul "runs" 1.5 ms, a host-to-device copy 0.25 ms,
// and an event records the clock's value.
std::atomic<int64_t> clock_us{0};
constexpr int kDevices = 2;
constexpr size_t kDeviceBytes = size_t{256} << 20;
// The workspace matmul keeps from its first eager call on, as the CUDA backend keeps cuBLASLt's
// (given back by release_cached_memory).
constexpr size_t kMatmulWorkspaceBytes = size_t{1} << 20;

// Device memory allocated and not yet freed, per device: memory_info reports the rest as free.
std::mutex device_bytes_mutex;
std::map<void*, std::pair<int, size_t>> device_allocations;
size_t device_bytes_in_use[kDevices] = {};

std::string mode() {
  const char* m = std::getenv(GPUACCEL_FAKE_CUDA_ENV);
  return m == nullptr ? "ok" : m;
}

[[noreturn]] void unimplemented(const char* op) {
  throw LibraryOpError(ErrorCode::kUnimplemented, std::string(op) + " is not implemented by the fake CUDA library");
}

size_t bytes_of(const TensorView& v) { return static_cast<size_t>(v.numel()) * dtype_size(v.dtype); }

// Faults on request (GPUACCEL_FAKE_CUDA_FAULTS set), so tests can make an op fail in each way.
bool faults_on() { return std::getenv(GPUACCEL_FAKE_CUDA_FAULTS_ENV) != nullptr; }

// The fake GPU's ops: the CPU backend of the core compiled into this library (its own copy,
// hidden), over the fake device memory, which is host memory. Counts every op.
class FakeBackend final : public CpuLaunchedOps<FakeBackend> {
 public:
  FakeBackend(int device, BackendServices& services)
      : CpuLaunchedOps(cpu_backend()), device_(device), services_(services), cpu_(compute()) {}
  ~FakeBackend() override;
  const char* name() const override { return "cuda"; }

  void unary(UnaryOp op, const TensorView& x, const TensorView& y) override {
    launch(__func__, [=] {
      if (faults_on() && op == UnaryOp::kLog) throw LibraryOpError(ErrorCode::kInvalidArgument, "fake: log refused");
      if (faults_on() && op == UnaryOp::kSqrt) throw std::runtime_error("fake: a plain std::runtime_error");
      if (faults_on() && op == UnaryOp::kAbs) {
        void* w = services_.allocate(static_cast<size_t>(x.numel()) << 20, "unary");
        services_.deallocate(w);
        return;
      }
      if (faults_on() && op == UnaryOp::kTanh) unimplemented("unary");
      cpu_.unary(op, x, y);
    });
  }
  // A capture refuses transfers from and to the host, as the CUDA backend does: a copy from the
  // host would read the host buffer again at every replay, one to the host cannot wait for data
  // that does not exist yet.
  void copy_from_host(const void* host, const TensorView& dst) override {
    run("copy_to_device", [&] {
      if (capture_.captures_here()) return refuse("copy_from_host");
      ++counters.copies_to_device;
      clock_us += 250;
      if (dst.data != nullptr) std::memcpy(dst.data, host, bytes_of(dst));
    }, LaunchKind::kCopy, static_cast<int64_t>(bytes_of(dst)));
  }
  void copy_to_host(const TensorView& src, void* host) override {
    run("copy_to_host", [&] {
      if (capture_.captures_here()) {
        refuse("copy_to_host");
        std::memset(host, 0, bytes_of(src));
        return;
      }
      ++counters.copies_to_host;
      std::memcpy(host, src.data, bytes_of(src));
    }, LaunchKind::kCopy, static_cast<int64_t>(bytes_of(src)));
  }
  // Waits for every stream of the device, as the CUDA backend's does: the copy stream's queued
  // DMAs run now.
  void synchronize() override {
    run("synchronize", [&] {
      if (capture_.captures_here()) return refuse("synchronize");
      wait_for_device();
    }, LaunchKind::kNone);
  }
  // CudaLibrary::synchronize (cuda.synchronize()) on this backend's device.
  void synchronize_for_library() {
    if (capture_.captures_here()) throw std::logic_error("synchronize: this thread is capturing on this device");
    const CaptureOwner::OpScope scope(capture_);
    wait_for_device();
  }

  // Streams and events (fake_cuda_library.h): compute runs at once, the copy stream's DMAs wait
  // in copy_queue_ until an event behind them is waited for.
  EventHandle create_event() override {
    EventHandle event = nullptr;
    run("create_event", [&] {
      ++counters.backend_events_created;
      event = new FakeEvent{};
    }, LaunchKind::kNone);
    return event;
  }
  void destroy_event(EventHandle event) override { delete static_cast<FakeEvent*>(event); }
  void record_event(EventHandle event, Stream stream) override {
    run("record_event", [&] {
      ++counters.backend_events_recorded;
      std::lock_guard<std::mutex> lock(copy_mutex_);
      auto* e = static_cast<FakeEvent*>(event);
      e->recorded = true;
      e->copy_position = stream == Stream::kCopy ? copies_queued_ : -1;
    }, LaunchKind::kNone);
  }
  void stream_wait_event(Stream waiter, EventHandle event) override {
    run("stream_wait_event", [&] {
      ++counters.stream_waits;
      // The copy stream waiting for the compute stream finds it done: compute runs at once.
      if (waiter != Stream::kCopy) reach(static_cast<FakeEvent*>(event));
    }, LaunchKind::kNone);
  }
  void host_wait_event(EventHandle event) override {
    run("host_wait_event", [&] {
      if (capture_.captures_here()) return refuse("host_wait_event");
      ++counters.host_event_waits;
      reach(static_cast<FakeEvent*>(event));
    }, LaunchKind::kNone);
  }
  bool event_completed(EventHandle event) override {
    std::lock_guard<std::mutex> lock(copy_mutex_);
    return static_cast<FakeEvent*>(event)->copy_position <= copies_run_;
  }
  void copy_from_host_on(Stream stream, const void* host, const TensorView& dst) override {
    if (stream == Stream::kCompute) return copy_from_host(host, dst);
    run("copy_to_device", [&] {
      if (capture_.captures_here()) return refuse("copy_from_host_on");
      ++counters.copies_to_device;
      ++counters.copy_stream_copies;
      std::lock_guard<std::mutex> lock(copy_mutex_);
      copy_queue_.push_back({dst.data, host, bytes_of(dst)});
      ++copies_queued_;
    }, LaunchKind::kNone);
  }

  // Graph capture as a stream capture does it: launches between begin and end are recorded,
  // not run, and a replay runs the recording; allocations meanwhile come from the graph's
  // arena (BackendServices::begin_capture_memory), exactly as on a GPU. So a replay that reused
  // memory wrongly computes wrong numbers here too. The capture is the capturing thread's, by
  // the CUDA backend's own rules (backends/cuda/capture_owner.h): other threads' ops meanwhile run
  // at once (on the GPU: on the side stream) and are neither recorded nor refused.
  bool supports_graph_capture() const override { return true; }
  void begin_capture() override {
    run_edge("begin_capture", [&] {
      if (std::getenv(GPUACCEL_FAKE_CUDA_NO_CAPTURE_ENV) != nullptr) {
        throw LibraryOpError(ErrorCode::kUnimplemented, "fake: stream capture refused on request");
      }
      capture_.begin([&] {
        capture_memory_ = services_.begin_capture_memory();
        refused_.clear();
        recording_.clear();
      });
    });
  }
  GraphHandle end_capture() override {
    GraphHandle graph = nullptr;
    run_edge("end_capture", [&] {
      capture_.end([&] { services_.end_capture_memory(); });
      auto* g = new FakeGraph{std::move(recording_), capture_memory_};
      recording_.clear();
      capture_memory_ = nullptr;
      if (!refused_.empty()) {
        release(g);
        throw LibraryOpError(ErrorCode::kUnimplemented, refused_ + " cannot be captured into a CUDA graph");
      }
      ++counters.graph_captures;
      graph = g;
    });
    return graph;
  }
  void replay(GraphHandle graph) override {
    run("replay", [&] {
      ++counters.graph_launches;
      for (const auto& launch : static_cast<FakeGraph*>(graph)->launches) launch();
    });
  }
  void destroy_graph(GraphHandle graph) override {
    run("destroy_graph", [&] {
      ++counters.graphs_destroyed;
      release(static_cast<FakeGraph*>(graph));
    }, LaunchKind::kNone);
  }
  void release_cached_memory() override {
    run("release_cached_memory", [&] {
      std::lock_guard<std::mutex> lock(workspace_mutex_);
      services_.deallocate(matmul_workspace_);
      matmul_workspace_ = nullptr;
    }, LaunchKind::kNone);
  }
  // Computes nothing when given no memory (the profiler test times it on the fake clock).
  void matmul(const TensorView& a, const TensorView& b, const TensorView* bias, const TensorView& out) override {
    const std::optional<TensorView> b_ = optional_view(bias);
    if (!capture_.captures_here()) {
      run_library_op(services_, __func__, LaunchKind::kNone, 0, [&] {
        std::lock_guard<std::mutex> lock(workspace_mutex_);
        if (matmul_workspace_ == nullptr) {
          matmul_workspace_ = services_.allocate(kMatmulWorkspaceBytes, "cuBLASLt workspace");
        }
      });
    }
    launch(__func__, [=] {
      clock_us += 1500;
      if (out.data != nullptr) cpu_.matmul(a, b, b_ ? &*b_ : nullptr, out);
    });
  }

  // The ops below give the fake extra behaviour; every other op is CpuLaunchedOps's launch.
  // The kernel goes to the CPU in the KRSC layout the CUDA backend gives cuDNN, so the copy
  // into that layout is counted and captured as on a GPU.
  void conv2d_forward(const TensorView& x, const TensorView& w, const TensorView* bias, const Conv2dParams& p,
                      const TensorView& y) override {
    const std::optional<TensorView> b = optional_view(bias);
    launch_with_krsc_kernel(__func__, w, [=](const TensorView& hwio) {
      cpu_.conv2d_forward(x, hwio, b ? &*b : nullptr, p, y);
    });
  }
  void conv2d_backward_data(const TensorView& dy, const TensorView& w, const Conv2dParams& p,
                            const TensorView& dx) override {
    launch_with_krsc_kernel(__func__, w, [=](const TensorView& hwio) {
      cpu_.conv2d_backward_data(dy, hwio, p, dx);
    });
  }
  void conv2d_transpose_forward(const TensorView& x, const TensorView& w, const TensorView* bias,
                                const Conv2dParams& p, const TensorView& y) override {
    const std::optional<TensorView> b = optional_view(bias);
    launch_with_krsc_kernel(__func__, w, [=](const TensorView& hwio) {
      cpu_.conv2d_transpose_forward(x, hwio, b ? &*b : nullptr, p, y);
    });
  }
  void softmax_forward(const TensorView& x, bool log, const TensorView& y) override {
    launch(__func__, [=] {
      if (faults_on()) unimplemented("softmax_forward");
      cpu_.softmax_forward(x, log, y);
    });
  }
  void any_nonfinite(const std::vector<TensorView>& tensors, const TensorView& flag) override {
    launch(__func__, [=] {
      ++counters.nonfinite_checks;
      cpu_.any_nonfinite(tensors, flag);
    });
  }

  // Device work (CpuLaunchedOps): run now, or recorded while capturing. `body` holds copies of
  // its arguments.
  template <typename Body>
  void launch(const char* op, Body body) {
    run(op, [&] {
      if (capture_.captures_here()) {
        recording_.emplace_back(body);
        return;
      }
      body();
    });
  }
  // A query (CpuLaunchedOps): answered at once, never counted as device work.
  template <typename Body>
  auto query(const char* op, Body body) {
    decltype(body()) answer{};
    run_library_op(services_, op, LaunchKind::kNone, 0, [&] { answer = body(); });
    return answer;
  }

 private:
  template <typename Body>
  void run(const char* op, Body&& body, LaunchKind kind = LaunchKind::kKernel, int64_t bytes = 0) {
    run_library_op(services_, op, kind, bytes, [&] {
      const CaptureOwner::OpScope scope(capture_);
      ++counters.ops;
      body();
    });
  }
  // A capture's begin or end: waits for other threads' ops in flight, so it holds no OpScope.
  template <typename Body>
  void run_edge(const char* op, Body&& body) {
    run_library_op(services_, op, LaunchKind::kNone, 0, [&] {
      ++counters.ops;
      try {
        body();
      } catch (const std::logic_error& e) {
        throw LibraryOpError(ErrorCode::kInternal, std::string("fake: ") + e.what());
      }
    });
  }

  struct FakeGraph {
    std::vector<std::function<void()>> launches;
    void* memory;  // the arena handle from begin_capture_memory
  };
  void release(FakeGraph* g) {
    if (g->memory != nullptr) services_.release_capture_memory(g->memory);
    delete g;
  }
  void refuse(const char* call) {
    if (refused_.empty()) refused_ = call;
  }
  // The kernel in KRSC as the CUDA backend makes it (backends/cuda/krsc_kernel.h); `keep` holds the
  // cached copy or the per-call scratch while a launch (or a recording) may read it.
  struct KernelCopy {
    TensorView krsc;
    std::shared_ptr<void> keep;
  };
  KernelCopy kernel_in_krsc(const TensorView& w) {
    KernelCopy k;
    std::shared_ptr<void> scratch;
    k.krsc = krsc_kernel(
        w, capture_.captures_here(),
        [&] {
          const size_t bytes = static_cast<size_t>(w.numel()) * dtype_size(w.dtype);
          BackendServices* services = &services_;
          scratch = std::shared_ptr<void>(services->allocate(bytes, "CUDA scratch buffer"),
                                          [services](void* p) { services->deallocate(p); });
          return scratch.get();
        },
        [&](const TensorView& src, const TensorView& dst) {
          launch("copy", [=] {
            ++counters.kernel_layout_copies;
            cpu_.copy(src, dst);
          });
        },
        k.keep);
    if (scratch) k.keep = scratch;
    return k;
  }
  // A contiguous HWIO kernel rebuilt from the KRSC copy, for the CPU backend to compute with.
  struct HwioFromKrsc {
    std::vector<char> bytes;
    TensorView view;
    HwioFromKrsc(Backend& cpu, const TensorView& w, const TensorView& krsc)
        : bytes(static_cast<size_t>(w.numel()) * dtype_size(w.dtype)) {
      view = w;
      view.data = bytes.data();
      view.derived = nullptr;  // host memory of this call only
      TensorView as_krsc = hwio_as_krsc(view);
      cpu.copy(krsc, as_krsc);
    }
  };
  // Launches `compute(hwio)` with w's KRSC copy made now (counted, and captured while a graph
  // is) and rebuilt as HWIO for the CPU when the launch runs.
  template <typename Compute>
  void launch_with_krsc_kernel(const char* op, const TensorView& w, Compute compute) {
    const KernelCopy k = kernel_in_krsc(w);
    launch(op, [=] {
      const HwioFromKrsc hwio(cpu_, w, k.krsc);
      compute(hwio.view);
      (void)k.keep;
    });
  }
  static std::optional<TensorView> optional_view(const TensorView* v) {
    return v != nullptr ? std::optional<TensorView>(*v) : std::nullopt;
  }

  struct FakeEvent {
    bool recorded = false;
    int64_t copy_position = -1;  // copies queued on the copy stream before its record; -1: compute
  };
  struct QueuedCopy {
    void* dst;
    const void* src;
    size_t bytes;
  };
  void wait_for_device() {
    ++counters.synchronizes;
    std::lock_guard<std::mutex> lock(copy_mutex_);
    run_queued_copies(copies_queued_);
  }
  // Runs the copy stream's DMAs up to position `until` (copy_mutex_ held).
  void run_queued_copies(int64_t until) {
    while (copies_run_ < until && !copy_queue_.empty()) {
      const QueuedCopy& c = copy_queue_.front();
      if (c.dst != nullptr) std::memcpy(c.dst, c.src, c.bytes);
      copy_queue_.pop_front();
      ++copies_run_;
    }
  }
  // Runs the copy stream's DMAs up to `event` (a wait on it has begun).
  void reach(FakeEvent* event) {
    std::lock_guard<std::mutex> lock(copy_mutex_);
    if (!event->recorded) {
      ++counters.unrecorded_waits;
      return;
    }
    run_queued_copies(event->copy_position);
  }

  const int device_;
  BackendServices& services_;
  Backend& cpu_;
  std::mutex copy_mutex_;
  std::deque<QueuedCopy> copy_queue_;
  int64_t copies_queued_ = 0, copies_run_ = 0;
  std::mutex workspace_mutex_;
  void* matmul_workspace_ = nullptr;
  CaptureOwner capture_;
  std::string refused_;  // these two: the capturing thread's only

  std::vector<std::function<void()>> recording_;
  void* capture_memory_ = nullptr;
};

// The backend made last for each device, for FakeLibrary::synchronize.
std::mutex backends_mutex;
std::map<int, FakeBackend*> backends_by_device;

FakeBackend::~FakeBackend() {
  std::lock_guard<std::mutex> lock(backends_mutex);
  auto found = backends_by_device.find(device_);
  if (found != backends_by_device.end() && found->second == this) backends_by_device.erase(found);
}

// The status a failing mode reports from the device queries.
CudaStatus mode_status(std::string* error) {
  const std::string m = mode();
  CudaStatus s = CudaStatus::kOk;
  if (m == "no_driver") s = CudaStatus::kNoDriver;
  if (m == "driver_too_old") s = CudaStatus::kDriverTooOld;
  if (m == "driver_too_old_generic") s = CudaStatus::kError;  // a CUDA 12 driver, any other code
  if (m == "no_device") s = CudaStatus::kNoDevice;
  if (s != CudaStatus::kOk && error != nullptr) *error = "fake CUDA: " + m;
  return s;
}

class FakeLibrary final : public CudaLibrary {
 public:
  int runtime_version() const override { return 13000; }
  // GPUACCEL_FAKE_CUDA_CUDNN_VERSION pretends another loaded cuDNN (an older one than the build's).
  int cudnn_version() const override {
    const char* pretended = std::getenv(GPUACCEL_FAKE_CUDA_CUDNN_VERSION_ENV);
    return pretended != nullptr ? std::atoi(pretended) : 91900;
  }
  int cublas_version() const override { return 130100; }
  CudaStatus driver_version(int* version, std::string* error) override {
    *version = mode() == "driver_too_old" || mode() == "driver_too_old_generic" ? 12040 : 13000;
    return mode() == "no_driver" ? mode_status(error) : CudaStatus::kOk;
  }
  CudaStatus device_count(int* count, std::string* error) override {
    const CudaStatus s = mode_status(error);
    *count = s == CudaStatus::kOk ? kDevices : 0;
    return s;
  }
  CudaStatus device_properties(int device, GpuInfo* out, std::string* error) override {
    if (device < 0 || device >= kDevices) {
      *error = "fake CUDA: no device " + std::to_string(device);
      return CudaStatus::kInvalidArgument;
    }
    *out = GpuInfo{};
    out->name = "Fake GPU " + std::to_string(device);
    out->total_memory = static_cast<int64_t>(kDeviceBytes);
    out->major = 8;
    out->minor = 0;
    out->multi_processor_count = 4;
    return CudaStatus::kOk;
  }
  CudaStatus memory_info(int device, size_t* free_bytes, size_t* total_bytes, std::string*) override {
    std::lock_guard<std::mutex> lock(device_bytes_mutex);
    const size_t in_use = device >= 0 && device < kDevices ? device_bytes_in_use[device] : 0;
    *total_bytes = kDeviceBytes;
    *free_bytes = in_use < kDeviceBytes ? kDeviceBytes - in_use : 0;
    return CudaStatus::kOk;
  }
  CudaStatus malloc_device(int device, size_t bytes, void** ptr, std::string* error) override {
    const CudaStatus s = malloc_host_pinned(bytes, ptr, error);
    if (s == CudaStatus::kOk && *ptr != nullptr && device >= 0 && device < kDevices) {
      std::lock_guard<std::mutex> lock(device_bytes_mutex);
      device_allocations[*ptr] = {device, bytes};
      device_bytes_in_use[device] += bytes;
    }
    return s;
  }
  CudaStatus free_device(int, void* ptr, std::string* error) override {
    {
      std::lock_guard<std::mutex> lock(device_bytes_mutex);
      auto found = device_allocations.find(ptr);
      if (found != device_allocations.end()) {
        device_bytes_in_use[found->second.first] -= found->second.second;
        device_allocations.erase(found);
      }
    }
    return free_host_pinned(ptr, error);
  }
  // Pinned host memory and device memory are both host memory here, counted alike.
  CudaStatus malloc_host_pinned(size_t bytes, void** ptr, std::string* error) override {
    // 256-byte aligned, as cudaMalloc's memory is (the pools check it).
    *ptr = bytes == 0 ? nullptr : std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (bytes != 0 && *ptr == nullptr) {
      *error = "fake CUDA: out of memory";
      return CudaStatus::kOutOfMemory;
    }
    ++counters.device_mallocs;
    return CudaStatus::kOk;
  }
  CudaStatus free_host_pinned(void* ptr, std::string*) override {
    if (ptr != nullptr) ++counters.device_frees;
    std::free(ptr);
    return CudaStatus::kOk;
  }

  // An event is the fake clock's value when it was recorded.
  bool create_event(int, void** event) override {
    *event = new (std::nothrow) int64_t(0);
    if (*event != nullptr) ++counters.events_created;
    return *event != nullptr;
  }
  bool record_event(int, void* event) override {
    *static_cast<int64_t*>(event) = clock_us;
    ++counters.events_recorded;
    return true;
  }
  bool elapsed_ms(void* start, void* end, float* ms) override {
    *ms = static_cast<float>(*static_cast<int64_t*>(end) - *static_cast<int64_t*>(start)) * 1e-3f;
    return true;
  }
  void destroy_event(void* event) override {
    if (event != nullptr) ++counters.events_destroyed;
    delete static_cast<int64_t*>(event);
  }
  // The whole device: through its backend when it has one (whose copy stream then runs).
  CudaStatus synchronize(int device, std::string* error) override {
    FakeBackend* backend = nullptr;
    {
      std::lock_guard<std::mutex> lock(backends_mutex);
      auto found = backends_by_device.find(device);
      if (found != backends_by_device.end()) backend = found->second;
    }
    if (backend == nullptr) {
      ++counters.synchronizes;
      return CudaStatus::kOk;
    }
    try {
      backend->synchronize_for_library();
    } catch (const std::exception& e) {
      if (error != nullptr) *error = e.what();
      return CudaStatus::kError;
    }
    return CudaStatus::kOk;
  }
  Backend* create_backend(int device, BackendServices& services) override {
    Backend* backend = nullptr;
    run_library_op(services, "backend_for", LaunchKind::kNone, 0, [&] {
      if (device < 0 || device >= kDevices) {
        throw LibraryOpError(ErrorCode::kInvalidArgument, "fake CUDA: no device " + std::to_string(device));
      }
      ++counters.backends_created;
      auto* made = new FakeBackend(device, services);
      std::lock_guard<std::mutex> lock(backends_mutex);
      backends_by_device[device] = made;
      backend = made;
    });
    return backend;
  }
  // No NCCL: the core's NCCL collective must say so (nccl_collective_test.cc).
  NcclLibrary* nccl() override { return nullptr; }
};

}  // namespace

}  // namespace gpuaccel::fake_cuda

extern "C" __attribute__((visibility("default"))) gpuaccel::CudaLibrary* gpuaccel_cuda_library(
    int core_interface_version, int* library_interface_version) {
  int version = gpuaccel::kCudaLibraryInterfaceVersion;
  const std::string m = gpuaccel::fake_cuda::mode();
  if (m.rfind("version=", 0) == 0) version = std::atoi(m.c_str() + 8);
  if (library_interface_version != nullptr) *library_interface_version = version;
  if (core_interface_version != version) return nullptr;
  static gpuaccel::fake_cuda::FakeLibrary library;
  return &library;
}

extern "C" __attribute__((visibility("default"))) FakeCudaCounters* gpuaccel_fake_cuda_counters() {
  return &gpuaccel::fake_cuda::counters;
}
