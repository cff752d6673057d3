// The CUDA backend library's one exported symbol, gpuaccel_cuda_backend_v1, and the functions of
// its table (core/cuda_backend_abi.h); the op entries of ABI 2 wrap the functions of ops.h. The CUDA runtime is linked statically, so the only thing
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

#include "backends/cuda/context.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/generate_kernels.h"
#include "backends/cuda/ops.h"
#include "core/cuda_backend_abi.h"

namespace gpuaccel::cuda {

namespace {

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


// ---- ABI 2: async copies and events ----

int copy_to_device_async(int device, void* dst, const void* src, size_t bytes, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    if (bytes == 0) return;
    GA_CUDA_REQUIRE(dst != nullptr && src != nullptr, "copy_to_device_async: null pointer");
    DeviceGuard guard(device);
    GA_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, device_stream(device)));
  });
}

int copy_to_host_async(int device, void* dst, const void* src, size_t bytes, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    if (bytes == 0) return;
    GA_CUDA_REQUIRE(dst != nullptr && src != nullptr, "copy_to_host_async: null pointer");
    DeviceGuard guard(device);
    GA_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, device_stream(device)));
  });
}

int record_event(int device, void** event, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    GA_CUDA_REQUIRE(event != nullptr, "record_event: null output");
    *event = nullptr;
    DeviceGuard guard(device);
    cudaEvent_t e = nullptr;
    GA_CUDA_CHECK(cudaEventCreate(&e));
    const cudaError_t recorded = cudaEventRecord(e, device_stream(device));
    if (recorded != cudaSuccess) cudaEventDestroy(e);
    GA_CUDA_CHECK(recorded);
    *event = e;
  });
}

int create_event(int device, void** event, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    GA_CUDA_REQUIRE(event != nullptr, "create_event: null output");
    *event = nullptr;
    DeviceGuard guard(device);
    cudaEvent_t e = nullptr;
    GA_CUDA_CHECK(cudaEventCreate(&e));
    *event = e;
  });
}

int record_existing_event(int device, void* event, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    GA_CUDA_REQUIRE(event != nullptr, "record_existing_event: null event");
    DeviceGuard guard(device);
    GA_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), device_stream(device)));
  });
}

int elapsed_ms(void* start, void* end, float* ms, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    GA_CUDA_REQUIRE(start != nullptr && end != nullptr && ms != nullptr, "elapsed_ms: null argument");
    GA_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(end)));
    GA_CUDA_CHECK(cudaEventElapsedTime(ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)));
  });
}

int destroy_event(void* event, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    if (event == nullptr) return;
    GA_CUDA_CHECK(cudaEventDestroy(static_cast<cudaEvent_t>(event)));
  });
}

// ---- ABI 2: the op kernels ----

// Every op entry: null views are argument errors, then the device is made current and the op of
// ops.h runs; whatever it throws becomes the status and message.
template <typename... Views>
void require_views(const char* op, const Views*... views) {
  const bool all = ((views != nullptr) && ...);
  GA_CUDA_REQUIRE(all, std::string(op) + ": null tensor view");
}

template <typename Body>
int op_entry(int device, char* err, size_t err_len, Body&& body) {
  return guarded(err, err_len, [&] {
    DeviceGuard guard(device);
    body();
  });
}

int unary_entry(int device, UnaryOp op, const TensorView* x, const TensorView* y, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("unary", x, y);
    unary(device, op, *x, *y);
  });
}

int unary_backward_entry(int device, UnaryOp op, const TensorView* x, const TensorView* y,
                         const TensorView* dy, const TensorView* dx, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("unary_backward", x, y, dy, dx);
    unary_backward(device, op, *x, *y, *dy, *dx);
  });
}

int binary_entry(int device, BinaryOp op, const TensorView* a, const TensorView* b,
                 const TensorView* out, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("binary", a, b, out);
    binary(device, op, *a, *b, *out);
  });
}

int copy_entry(int device, const TensorView* src, const TensorView* dst, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("copy", src, dst);
    copy(device, *src, *dst);
  });
}

int fill_entry(int device, const TensorView* dst, double value, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("fill", dst);
    fill(device, *dst, value);
  });
}

int arange_entry(int device, const TensorView* dst, double start, double step, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("arange", dst);
    arange(device, *dst, start, step);
  });
}

int random_entry(int device, RandomDistribution distribution, uint64_t seed, uint64_t offset,
                 const TensorView* dst, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("random", dst);
    random(device, distribution, seed, offset, *dst);
  });
}

int reduce_entry(int device, ReduceOp op, const TensorView* x, uint32_t axes_mask,
                 const TensorView* out, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("reduce", x, out);
    reduce(device, op, *x, axes_mask, *out);
  });
}

int dropout_entry(int device, const TensorView* x, double rate, uint64_t seed, uint64_t offset,
                  const TensorView* y, const TensorView* mask, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("dropout", x, y, mask);
    dropout(device, *x, rate, seed, offset, *y, *mask);
  });
}

int matmul_entry(int device, const TensorView* a, const TensorView* b, const TensorView* bias,
                 const TensorView* out, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("matmul", a, b, out);
    matmul(device, *a, *b, bias, *out);
  });
}

int conv2d_forward_entry(int device, const TensorView* x, const TensorView* w, const TensorView* bias,
                         const gpuaccel_conv2d_params* p, const TensorView* y, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("conv2d_forward", x, w, p, y);
    conv2d_forward(device, *x, *w, bias, *p, *y);
  });
}

int conv2d_backward_data_entry(int device, const TensorView* dy, const TensorView* w,
                               const gpuaccel_conv2d_params* p, const TensorView* dx, char* err,
                               size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("conv2d_backward_data", dy, w, p, dx);
    conv2d_backward_data(device, *dy, *w, *p, *dx);
  });
}

int conv2d_backward_weights_entry(int device, const TensorView* x, const TensorView* dy,
                                  const gpuaccel_conv2d_params* p, const TensorView* dw,
                                  const TensorView* dbias, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("conv2d_backward_weights", x, dy, p, dw);
    conv2d_backward_weights(device, *x, *dy, *p, *dw, dbias);
  });
}

int pool2d_workspace_bytes_entry(int /*device*/, const TensorView* x, const gpuaccel_pool2d_params* p,
                                 const TensorView* y, int64_t* bytes, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {  // pure arithmetic: no device needed
    require_views("pool2d_workspace_bytes", x, p, y, bytes);
    *bytes = pool2d_workspace_bytes(*x, *p, *y);
  });
}

int pool2d_forward_entry(int device, const TensorView* x, const gpuaccel_pool2d_params* p,
                         const TensorView* y, void* workspace, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("pool2d_forward", x, p, y);
    pool2d_forward(device, *x, *p, *y, workspace);
  });
}

int pool2d_backward_entry(int device, const TensorView* dy, const gpuaccel_pool2d_params* p,
                          const void* workspace, const TensorView* dx, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("pool2d_backward", dy, p, dx);
    pool2d_backward(device, *dy, *p, workspace, *dx);
  });
}

int softmax_forward_entry(int device, const TensorView* x, int log, const TensorView* y, char* err,
                          size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("softmax_forward", x, y);
    softmax_forward(device, *x, log != 0, *y);
  });
}

int softmax_backward_entry(int device, const TensorView* y, const TensorView* dy, int log,
                           const TensorView* dx, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("softmax_backward", y, dy, dx);
    softmax_backward(device, *y, *dy, log != 0, *dx);
  });
}

int batch_norm_forward_entry(int device, const TensorView* x, const TensorView* gamma,
                             const TensorView* beta, const TensorView* mean, const TensorView* var,
                             double epsilon, int training, const TensorView* y, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("batch_norm_forward", x, gamma, beta, mean, var, y);
    batch_norm_forward(device, *x, *gamma, *beta, *mean, *var, epsilon, training != 0, *y);
  });
}

int batch_norm_backward_entry(int device, const TensorView* x, const TensorView* dy,
                              const TensorView* gamma, const TensorView* mean, const TensorView* var,
                              double epsilon, const TensorView* dx, const TensorView* dgamma,
                              const TensorView* dbeta, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("batch_norm_backward", x, dy, gamma, mean, var, dx, dgamma, dbeta);
    batch_norm_backward(device, *x, *dy, *gamma, *mean, *var, epsilon, *dx, *dgamma, *dbeta);
  });
}

int layer_norm_forward_entry(int device, const TensorView* x, const TensorView* gamma,
                             const TensorView* beta, double epsilon, const TensorView* y,
                             const TensorView* mean, const TensorView* var, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("layer_norm_forward", x, gamma, beta, y, mean, var);
    layer_norm_forward(device, *x, *gamma, *beta, epsilon, *y, *mean, *var);
  });
}

int layer_norm_backward_entry(int device, const TensorView* x, const TensorView* dy,
                              const TensorView* gamma, const TensorView* mean, const TensorView* var,
                              double epsilon, const TensorView* dx, const TensorView* dgamma,
                              const TensorView* dbeta, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("layer_norm_backward", x, dy, gamma, mean, var, dx, dgamma, dbeta);
    layer_norm_backward(device, *x, *dy, *gamma, *mean, *var, epsilon, *dx, *dgamma, *dbeta);
  });
}

// ---- ABI 3 ----

int optimizer_update_entry(int device, const OptimizerUpdate* u, const TensorView* param,
                           const TensorView* grad, const TensorView* slot0, const TensorView* slot1,
                           const TensorView* slot2, char* err, size_t err_len) {
  return op_entry(device, err, err_len, [&] {
    require_views("optimizer_update", param, grad);
    GA_CUDA_REQUIRE(u != nullptr, "optimizer_update: null update parameters");
    optimizer_update(device, *u, *param, *grad, slot0, slot1, slot2);
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
      // ABI 2
      c::copy_to_device_async,
      c::copy_to_host_async,
      c::record_event,
      c::elapsed_ms,
      c::destroy_event,
      c::unary_entry,
      c::unary_backward_entry,
      c::binary_entry,
      c::copy_entry,
      c::fill_entry,
      c::arange_entry,
      c::random_entry,
      c::reduce_entry,
      c::dropout_entry,
      c::matmul_entry,
      c::conv2d_forward_entry,
      c::conv2d_backward_data_entry,
      c::conv2d_backward_weights_entry,
      c::pool2d_workspace_bytes_entry,
      c::pool2d_forward_entry,
      c::pool2d_backward_entry,
      c::softmax_forward_entry,
      c::softmax_backward_entry,
      c::batch_norm_forward_entry,
      c::batch_norm_backward_entry,
      c::layer_norm_forward_entry,
      c::layer_norm_backward_entry,
      // ABI 3
      c::optimizer_update_entry,
      // ABI 4
      c::create_event,
      c::record_existing_event,
  };
  return &table;
}

static_assert(std::is_same_v<decltype(&gpuaccel_cuda_backend_v1), gpuaccel_cuda_backend_entry_fn>,
              "the exported entry must match gpuaccel_cuda_backend_entry_fn");
