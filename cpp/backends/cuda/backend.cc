// The CUDA backend library's one exported symbol, gpuaccel_cuda_backend_v1, and the functions of
// its table (core/cuda_backend_abi.h). The CUDA runtime is linked statically, so the only thing
// this needs at run time for device queries is the driver (libcuda.so.1); cuBLAS and cuDNN are
// shared libraries found through the RPATH. Every library call goes through a GA_*_CHECK macro.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <library_types.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/generate_kernels.h"
#include "core/cuda_backend_abi.h"

namespace gpuaccel::cuda {

namespace {

// Makes `device` current for the scope and restores the caller's device afterwards, so the
// backend never changes which GPU the calling thread works on.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    GA_CUDA_CHECK(cudaGetDevice(&previous_));
    if (device != previous_) GA_CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceGuard() {
    int current = previous_;
    if (cudaGetDevice(&current) == cudaSuccess && current != previous_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

int visible_device_count() {
  int count = 0;
  GA_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count == 0) {
    throw BackendError(GPUACCEL_CUDA_NO_DEVICE, "cudaGetDeviceCount reported 0 CUDA devices");
  }
  return count;
}

void require_device(int device) {
  const int count = visible_device_count();
  GA_CUDA_REQUIRE(device >= 0 && device < count,
                  "CUDA device " + std::to_string(device) + " does not exist; valid devices are 0.." +
                      std::to_string(count - 1));
}

// One cuBLAS handle per device, created on first use. They are deliberately never destroyed:
// at process exit the driver may already be gone, and destroying then can crash.
cublasHandle_t cublas_handle(int device) {
  static std::mutex mutex;
  static std::vector<cublasHandle_t> handles;
  std::lock_guard<std::mutex> lock(mutex);
  if (static_cast<int>(handles.size()) <= device) handles.resize(device + 1, nullptr);
  if (handles[device] == nullptr) GA_CUBLAS_CHECK(cublasCreate(&handles[device]));
  return handles[device];
}

int driver_version(int* version, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    GA_CUDA_REQUIRE(version != nullptr, "driver_version: null output");
    *version = 0;
    GA_CUDA_CHECK(cudaDriverGetVersion(version));
    if (*version == 0) {
      throw BackendError(GPUACCEL_CUDA_NO_DRIVER,
                         "cudaDriverGetVersion reported no NVIDIA driver (libcuda.so.1 not loadable)");
    }
  });
}

int cudnn_version() {
#if GPUACCEL_HAVE_CUDNN
  return static_cast<int>(cudnnGetVersion());
#else
  return 0;
#endif
}

int cublas_version() {
  int version = 0;
  const int status = guarded(nullptr, 0, [&] {
    int major = 0, minor = 0, patch = 0;
    GA_CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &major));
    GA_CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &minor));
    GA_CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &patch));
    version = major * 10000 + minor * 100 + patch;  // the CUBLAS_VERSION layout
  });
  return status == GPUACCEL_CUDA_OK ? version : 0;
}

int device_count(int* count, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    GA_CUDA_REQUIRE(count != nullptr, "device_count: null output");
    *count = 0;
    *count = visible_device_count();
  });
}

int device_properties(int device, gpuaccel_cuda_device_properties* out, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    GA_CUDA_REQUIRE(out != nullptr, "device_properties: null output");
    require_device(device);
    *out = gpuaccel_cuda_device_properties{};
    cudaDeviceProp prop{};
    GA_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    std::snprintf(out->name, sizeof(out->name), "%s", prop.name);
    out->total_memory = static_cast<int64_t>(prop.totalGlobalMem);
    out->major = prop.major;
    out->minor = prop.minor;
    out->multi_processor_count = prop.multiProcessorCount;
    out->memory_bus_width_bits = prop.memoryBusWidth;
    // CUDA 13 removed cudaDeviceProp::memoryClockRate; the attribute works on every version.
    GA_CUDA_CHECK(cudaDeviceGetAttribute(&out->memory_clock_khz, cudaDevAttrMemoryClockRate, device));
    GA_CUDA_CHECK(cudaDeviceGetPCIBusId(out->pci_bus_id, sizeof(out->pci_bus_id), device));
  });
}

int memory_info(int device, size_t* free_bytes, size_t* total_bytes, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    GA_CUDA_REQUIRE(free_bytes != nullptr && total_bytes != nullptr, "memory_info: null output");
    DeviceGuard guard(device);
    GA_CUDA_CHECK(cudaMemGetInfo(free_bytes, total_bytes));
  });
}

int malloc_device(int device, size_t bytes, void** ptr, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    GA_CUDA_REQUIRE(ptr != nullptr, "malloc_device: null output");
    *ptr = nullptr;
    if (bytes == 0) return;
    try {
      DeviceGuard guard(device);
      GA_CUDA_CHECK(cudaMalloc(ptr, bytes));
    } catch (const BackendError& e) {
      throw BackendError(e.status(), "allocating " + std::to_string(bytes) + " bytes on GPU " +
                                         std::to_string(device) + ": " + e.what());
    }
  });
}

int free_device(int device, void* ptr, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    if (ptr == nullptr) return;
    DeviceGuard guard(device);
    GA_CUDA_CHECK(cudaFree(ptr));
  });
}

int malloc_host_pinned(size_t bytes, void** ptr, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    GA_CUDA_REQUIRE(ptr != nullptr, "malloc_host_pinned: null output");
    *ptr = nullptr;
    if (bytes == 0) return;
    // Portable: the pages count as pinned for every device's context, not only the current one.
    GA_CUDA_CHECK(cudaHostAlloc(ptr, bytes, cudaHostAllocPortable));
  });
}

int free_host_pinned(void* ptr, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    if (ptr == nullptr) return;
    GA_CUDA_CHECK(cudaFreeHost(ptr));
  });
}

int copy_to_device(int device, void* dst, const void* src, size_t bytes, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    if (bytes == 0) return;
    GA_CUDA_REQUIRE(dst != nullptr && src != nullptr, "copy_to_device: null pointer");
    DeviceGuard guard(device);
    GA_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  });
}

int copy_to_host(int device, void* dst, const void* src, size_t bytes, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    if (bytes == 0) return;
    GA_CUDA_REQUIRE(dst != nullptr && src != nullptr, "copy_to_host: null pointer");
    DeviceGuard guard(device);
    GA_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
  });
}

int synchronize(int device, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    DeviceGuard guard(device);
    GA_CUDA_CHECK(cudaDeviceSynchronize());
  });
}

// Row-major C[m,n] = A[m,k] B[k,n]. cuBLAS is column-major, and a row-major matrix read as
// column-major is its transpose, so we ask cuBLAS for C^T[n,m] = B^T[n,k] A^T[k,m]: the same
// memory, no copies, leading dimensions n (B, C) and k (A).
int matmul_f32(int device, const float* a, const float* b, float* c, int m, int n, int k,
               char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    GA_CUDA_REQUIRE(m >= 0 && n >= 0 && k >= 0,
                    "matmul_f32: negative size m=" + std::to_string(m) + " n=" + std::to_string(n) +
                        " k=" + std::to_string(k));
    if (m == 0 || n == 0) return;
    GA_CUDA_REQUIRE(c != nullptr, "matmul_f32: null output");
    DeviceGuard guard(device);
    if (k == 0) {  // an empty sum: C is all zeros (BLAS leaves k == 0 to beta, we are explicit)
      GA_CUDA_CHECK(launch_fill_f32(c, static_cast<int64_t>(m) * n, 0.0f, /*stream=*/nullptr));
      return;
    }
    GA_CUDA_REQUIRE(a != nullptr && b != nullptr, "matmul_f32: null input");
    const float alpha = 1.0f;
    const float beta = 0.0f;
    GA_CUBLAS_CHECK(cublasSgemm(cublas_handle(device), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha,
                                b, n, a, k, &beta, c, n));
  });
}

}  // namespace

}  // namespace gpuaccel::cuda

extern "C" __attribute__((visibility("default"))) const gpuaccel_cuda_backend*
gpuaccel_cuda_backend_v1(void) {
  namespace c = gpuaccel::cuda;
  static const gpuaccel_cuda_backend table = {
      GPUACCEL_CUDA_BACKEND_ABI_VERSION,
      CUDART_VERSION,
      c::driver_version,
      c::cudnn_version,
      c::cublas_version,
      c::device_count,
      c::device_properties,
      c::memory_info,
      c::malloc_device,
      c::free_device,
      c::malloc_host_pinned,
      c::free_host_pinned,
      c::copy_to_device,
      c::copy_to_host,
      c::synchronize,
      c::matmul_f32,
  };
  return &table;
}

static_assert(std::is_same_v<decltype(&gpuaccel_cuda_backend_v1), gpuaccel_cuda_backend_entry_fn>,
              "the exported entry must match gpuaccel_cuda_backend_entry_fn");
