// The per-device state of the CUDA backend (see context.h).
#include "backends/cuda/context.h"

#include <memory>
#include <mutex>
#include <vector>

namespace gpuaccel::cuda {

namespace {

// A lazily filled per-device table guarded by one mutex.
template <typename T, typename Make>
T per_device(std::vector<T>& slots, std::mutex& mutex, int device, T empty, Make make) {
  GA_CUDA_REQUIRE(device >= 0, "negative CUDA device index " + std::to_string(device));
  std::lock_guard<std::mutex> lock(mutex);
  if (static_cast<int>(slots.size()) <= device) slots.resize(device + 1, empty);
  if (slots[device] == empty) slots[device] = make();
  return slots[device];
}

}  // namespace

DeviceGuard::DeviceGuard(int device) {
  GA_CUDA_CHECK(cudaGetDevice(&previous_));
  if (device != previous_) GA_CUDA_CHECK(cudaSetDevice(device));
}

DeviceGuard::~DeviceGuard() {
  int current = previous_;
  if (cudaGetDevice(&current) == cudaSuccess && current != previous_) cudaSetDevice(previous_);
}

namespace {

// The compute stream the calling thread's op is routed to instead, if any (ComputeStreamRoute).
thread_local int routed_device = -1;
thread_local cudaStream_t routed_stream = nullptr;

// Backend::Stream's roles, then the side stream, each made on first use.
constexpr int kSideStream = 2;
constexpr int kStreamsPerDevice = 3;

cudaStream_t stream_of(int device, int index) {
  static std::mutex mutex;
  static std::vector<cudaStream_t> streams;  // kStreamsPerDevice per device
  GA_CUDA_REQUIRE(device >= 0, "negative CUDA device index " + std::to_string(device));
  std::lock_guard<std::mutex> lock(mutex);
  const size_t slot = static_cast<size_t>(device) * kStreamsPerDevice + index;
  if (streams.size() <= slot) streams.resize(slot + 1, nullptr);
  if (streams[slot] == nullptr) {
    DeviceGuard guard(device);
    GA_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[slot], cudaStreamNonBlocking));
  }
  return streams[slot];
}

}  // namespace

cudaStream_t device_stream(int device) { return device_stream(device, Backend::Stream::kCompute); }

cudaStream_t device_stream(int device, Backend::Stream role) {
  const int r = static_cast<int>(role);
  GA_CUDA_REQUIRE(r >= 0 && r < kSideStream, "unknown stream role " + std::to_string(r));
  if (role == Backend::Stream::kCompute && device == routed_device) return routed_stream;
  return stream_of(device, r);
}

cudaStream_t capture_side_stream(int device) { return stream_of(device, kSideStream); }

bool compute_stream_routed(int device) { return device == routed_device; }

ComputeStreamRoute::ComputeStreamRoute(int device, cudaStream_t stream)
    : previous_device_(routed_device), previous_stream_(routed_stream) {
  routed_device = device;
  routed_stream = stream;
}

ComputeStreamRoute::~ComputeStreamRoute() {
  routed_device = previous_device_;
  routed_stream = previous_stream_;
}

namespace {
std::mutex services_mutex;
std::vector<BackendServices*> services_by_device;
}  // namespace

void set_device_services(int device, BackendServices* services) {
  GA_CUDA_REQUIRE(device >= 0, "negative CUDA device index " + std::to_string(device));
  std::lock_guard<std::mutex> lock(services_mutex);
  if (static_cast<int>(services_by_device.size()) <= device) services_by_device.resize(device + 1, nullptr);
  services_by_device[device] = services;
}

BackendServices& device_services(int device) {
  std::lock_guard<std::mutex> lock(services_mutex);
  BackendServices* s =
      device >= 0 && device < static_cast<int>(services_by_device.size()) ? services_by_device[device] : nullptr;
  if (s == nullptr) {
    throw BackendError(CudaStatus::kError, "GPU " + std::to_string(device) + " has no backend yet");
  }
  return *s;
}

namespace {

// One SharedHandle per device, made on first use and kept for the process.
template <typename Handle>
SharedHandle<Handle>& device_handle(std::vector<std::unique_ptr<SharedHandle<Handle>>>& slots, std::mutex& mutex,
                                    int device) {
  GA_CUDA_REQUIRE(device >= 0, "negative CUDA device index " + std::to_string(device));
  std::lock_guard<std::mutex> lock(mutex);
  if (static_cast<int>(slots.size()) <= device) slots.resize(device + 1);
  if (!slots[device]) slots[device] = std::make_unique<SharedHandle<Handle>>();
  return *slots[device];
}

}  // namespace

CublasLtLease cublaslt_lease(int device) {
  static std::mutex mutex;
  static auto* handles = new std::vector<std::unique_ptr<SharedHandle<cublasLtHandle_t>>>();
  return device_handle(*handles, mutex, device).lease([] {
    cublasLtHandle_t h = nullptr;
    GA_CUBLAS_CHECK(cublasLtCreate(&h));
    return h;
  });
}

#if GPUACCEL_HAVE_CUDNN
CudnnLease cudnn_lease(int device) {
  static std::mutex mutex;
  static auto* handles = new std::vector<std::unique_ptr<SharedHandle<cudnnHandle_t>>>();
  CudnnLease lease = device_handle(*handles, mutex, device).lease([&] {
    cudnnHandle_t h = nullptr;
    GA_CUDNN_CHECK(cudnnCreate(&h));
    return h;
  });
  // At each lease: the calling thread's compute stream is the side stream while another thread
  // captures (ComputeStreamRoute). A host-side setting; it queues nothing.
  GA_CUDNN_CHECK(cudnnSetStream(lease.get(), device_stream(device)));
  return lease;
}
#endif

int compute_capability(int device) {
  static std::mutex mutex;
  static std::vector<int> cc;
  return per_device<int>(cc, mutex, device, 0, [&] {
    int major = 0, minor = 0;
    GA_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    GA_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    return major * 10 + minor;
  });
}

void require_dtype_supported(int device, DType dtype, const char* op) {
  if (dtype != DType::kBFloat16) return;
  const int cc = compute_capability(device);
  if (cc >= 80) return;
  char name[256] = "?";
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
    std::snprintf(name, sizeof(name), "%s", prop.name);
  }
  throw BackendError(
      CudaStatus::kUnimplemented,
      std::string(op) + ": bfloat16 on the GPU needs compute capability 8.0+ (Ampere or newer); GPU " +
          std::to_string(device) + " (" + name + ") has " + std::to_string(cc / 10) + "." +
          std::to_string(cc % 10) +
          ". Use float16 ('mixed_float16') or float32 on this GPU, or bfloat16 on the CPU.");
}

ScratchBuffer::ScratchBuffer(int device, size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  services_ = &device_services(device);
  ptr_ = services_->allocate(bytes, "CUDA scratch buffer");
}

ScratchBuffer::~ScratchBuffer() {
  if (ptr_ != nullptr) services_->deallocate(ptr_);
}

}  // namespace gpuaccel::cuda
