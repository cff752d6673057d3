// The C interface between the core and the CUDA backend library (libgpuaccel_cuda.so). The
// backend is a separate shared library loaded with dlopen only when asked for, so importing
// gpuaccel never needs the CUDA runtime or a driver. A plain C table of functions keeps the
// boundary free of C++ ABI and exception concerns: every call returns 0 on success or a
// non-zero status with a message written into `err` (a caller-owned buffer of `err_len` bytes).
#pragma once

#include <stddef.h>
#include <stdint.h>

// ABI 2 adds the op kernels, which take the kernels' own TensorView and op-kind enums by pointer
// or value (plain data with a fixed layout, see tensor/tensor_view.h and backends/op_kinds.h).
// They are only declared here, so this header keeps depending on nothing above core/.
#ifdef __cplusplus
namespace gpuaccel {
struct TensorView;
enum class UnaryOp;
enum class BinaryOp;
enum class ReduceOp;
enum class RandomDistribution;
struct OptimizerUpdate;  // ABI 3 (kernels/optimizer_functors.h)
}  // namespace gpuaccel
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define GPUACCEL_CUDA_BACKEND_ABI_VERSION 4
#define GPUACCEL_CUDA_BACKEND_ENTRY "gpuaccel_cuda_backend_v1"

typedef struct gpuaccel_cuda_device_properties {
  char name[256];
  int64_t total_memory;
  int major;
  int minor;
  int multi_processor_count;
  int memory_bus_width_bits;
  int memory_clock_khz;
  char pci_bus_id[32];
} gpuaccel_cuda_device_properties;

// Status codes beyond 0 (success).
enum {
  GPUACCEL_CUDA_OK = 0,
  GPUACCEL_CUDA_NO_DRIVER = 1,        // libcuda missing or no NVIDIA kernel driver
  GPUACCEL_CUDA_DRIVER_TOO_OLD = 2,   // driver older than the runtime we were built with
  GPUACCEL_CUDA_NO_DEVICE = 3,        // driver fine, no (visible) device
  GPUACCEL_CUDA_OUT_OF_MEMORY = 4,
  GPUACCEL_CUDA_INVALID_ARGUMENT = 5,
  GPUACCEL_CUDA_ERROR = 6,            // anything else; see the message
  GPUACCEL_CUDA_UNIMPLEMENTED = 7,    // not available for these dtypes/shapes/this GPU (says why)
};

// The CPU backend's cpu::Conv2dParams and cpu::Pool2dParams (backends/cpu/onednn_ops.h) as plain
// C structs, field for field, so the backend library needs no CPU header.
typedef struct gpuaccel_conv2d_params {
  int64_t stride_h, stride_w;
  int64_t dilation_h, dilation_w;
  int64_t pad_top, pad_bottom, pad_left, pad_right;
} gpuaccel_conv2d_params;

enum { GPUACCEL_POOL_MAX = 0, GPUACCEL_POOL_AVERAGE = 1 /* padding excluded, as Keras */ };
typedef struct gpuaccel_pool2d_params {
  int kind;  // GPUACCEL_POOL_*
  int64_t window_h, window_w, stride_h, stride_w;
  int64_t pad_top, pad_bottom, pad_left, pad_right;
} gpuaccel_pool2d_params;

typedef struct gpuaccel_cuda_backend {
  int abi_version;  // GPUACCEL_CUDA_BACKEND_ABI_VERSION
  // Versions as the CUDA APIs report them (e.g. 13000 for 13.0); 0 when unknown.
  int runtime_version;   // compiled-in runtime
  int (*driver_version)(int* version, char* err, size_t err_len);
  int (*cudnn_version)(void);  // cudnnGetVersion(), e.g. 90300
  int (*cublas_version)(void);
  // Number of visible devices (respects CUDA_VISIBLE_DEVICES); on failure the status says why.
  int (*device_count)(int* count, char* err, size_t err_len);
  int (*device_properties)(int device, gpuaccel_cuda_device_properties* out, char* err, size_t err_len);
  int (*memory_info)(int device, size_t* free_bytes, size_t* total_bytes, char* err, size_t err_len);
  int (*malloc_device)(int device, size_t bytes, void** ptr, char* err, size_t err_len);
  int (*free_device)(int device, void* ptr, char* err, size_t err_len);
  // Page-locked host memory for fast, asynchronous host-to-device staging.
  int (*malloc_host_pinned)(size_t bytes, void** ptr, char* err, size_t err_len);
  int (*free_host_pinned)(void* ptr, char* err, size_t err_len);
  int (*copy_to_device)(int device, void* dst, const void* src, size_t bytes, char* err, size_t err_len);
  int (*copy_to_host)(int device, void* dst, const void* src, size_t bytes, char* err, size_t err_len);
  int (*synchronize)(int device, char* err, size_t err_len);
  // C[m,n] = A[m,k] * B[k,n], row-major f32 device pointers, through cuBLAS.
  int (*matmul_f32)(int device, const float* a, const float* b, float* c, int m, int n, int k,
                    char* err, size_t err_len);

  // ---- ABI 2 ----
  // Everything below runs on the device's stream (the legacy default stream of `device`), so
  // it is ordered with the copies above and with every other entry; `synchronize` waits for it.
  // Pointers in views are device pointers; views are validated by the op frontends, with the
  // exact meaning of the CPU kernel of the same name (backends/cpu/elementwise.h and
  // backends/cpu/onednn_ops.h). float16 is computed natively (cuBLASLt/cuDNN with float32
  // accumulation, tensor cores) or in float32 by the element functors; bfloat16 library ops need
  // compute capability 8.0+ and return GPUACCEL_CUDA_UNIMPLEMENTED with the reason elsewhere.
#ifdef __cplusplus
  // Asynchronous copies between pinned host memory (malloc_host_pinned) and the device, queued
  // on the device's stream; the host buffer must stay alive until a synchronize.
  int (*copy_to_device_async)(int device, void* dst, const void* src, size_t bytes, char* err,
                              size_t err_len);
  int (*copy_to_host_async)(int device, void* dst, const void* src, size_t bytes, char* err,
                            size_t err_len);
  // Events on the device's stream, for timing: record_event creates and records one (*event is
  // an opaque handle), elapsed_ms waits for `end` and returns the milliseconds between them.
  int (*record_event)(int device, void** event, char* err, size_t err_len);
  int (*elapsed_ms)(void* start, void* end, float* ms, char* err, size_t err_len);
  int (*destroy_event)(void* event, char* err, size_t err_len);

  // elementwise.h
  int (*unary)(int device, gpuaccel::UnaryOp op, const gpuaccel::TensorView* x,
               const gpuaccel::TensorView* y, char* err, size_t err_len);
  int (*unary_backward)(int device, gpuaccel::UnaryOp op, const gpuaccel::TensorView* x,
                        const gpuaccel::TensorView* y, const gpuaccel::TensorView* dy,
                        const gpuaccel::TensorView* dx, char* err, size_t err_len);
  int (*binary)(int device, gpuaccel::BinaryOp op, const gpuaccel::TensorView* a,
                const gpuaccel::TensorView* b, const gpuaccel::TensorView* out, char* err,
                size_t err_len);
  int (*copy)(int device, const gpuaccel::TensorView* src, const gpuaccel::TensorView* dst,
              char* err, size_t err_len);
  int (*fill)(int device, const gpuaccel::TensorView* dst, double value, char* err, size_t err_len);
  int (*arange)(int device, const gpuaccel::TensorView* dst, double start, double step, char* err,
                size_t err_len);
  int (*random)(int device, gpuaccel::RandomDistribution distribution, uint64_t seed,
                uint64_t offset, const gpuaccel::TensorView* dst, char* err, size_t err_len);
  int (*reduce)(int device, gpuaccel::ReduceOp op, const gpuaccel::TensorView* x,
                uint32_t axes_mask, const gpuaccel::TensorView* out, char* err, size_t err_len);
  int (*dropout)(int device, const gpuaccel::TensorView* x, double rate, uint64_t seed,
                 uint64_t offset, const gpuaccel::TensorView* y, const gpuaccel::TensorView* mask,
                 char* err, size_t err_len);

  // onednn_ops.h (bias/dbias may be null)
  int (*matmul)(int device, const gpuaccel::TensorView* a, const gpuaccel::TensorView* b,
                const gpuaccel::TensorView* bias, const gpuaccel::TensorView* out, char* err,
                size_t err_len);
  int (*conv2d_forward)(int device, const gpuaccel::TensorView* x, const gpuaccel::TensorView* w,
                        const gpuaccel::TensorView* bias, const gpuaccel_conv2d_params* p,
                        const gpuaccel::TensorView* y, char* err, size_t err_len);
  int (*conv2d_backward_data)(int device, const gpuaccel::TensorView* dy,
                              const gpuaccel::TensorView* w, const gpuaccel_conv2d_params* p,
                              const gpuaccel::TensorView* dx, char* err, size_t err_len);
  int (*conv2d_backward_weights)(int device, const gpuaccel::TensorView* x,
                                 const gpuaccel::TensorView* dy, const gpuaccel_conv2d_params* p,
                                 const gpuaccel::TensorView* dw, const gpuaccel::TensorView* dbias,
                                 char* err, size_t err_len);
  // The CUDA workspace of max pooling holds copies of x and y (cuDNN's backward needs both).
  int (*pool2d_workspace_bytes)(int device, const gpuaccel::TensorView* x,
                                const gpuaccel_pool2d_params* p, const gpuaccel::TensorView* y,
                                int64_t* bytes, char* err, size_t err_len);
  int (*pool2d_forward)(int device, const gpuaccel::TensorView* x, const gpuaccel_pool2d_params* p,
                        const gpuaccel::TensorView* y, void* workspace, char* err, size_t err_len);
  int (*pool2d_backward)(int device, const gpuaccel::TensorView* dy,
                         const gpuaccel_pool2d_params* p, const void* workspace,
                         const gpuaccel::TensorView* dx, char* err, size_t err_len);
  int (*softmax_forward)(int device, const gpuaccel::TensorView* x, int log,
                         const gpuaccel::TensorView* y, char* err, size_t err_len);
  int (*softmax_backward)(int device, const gpuaccel::TensorView* y,
                          const gpuaccel::TensorView* dy, int log, const gpuaccel::TensorView* dx,
                          char* err, size_t err_len);
  int (*batch_norm_forward)(int device, const gpuaccel::TensorView* x,
                            const gpuaccel::TensorView* gamma, const gpuaccel::TensorView* beta,
                            const gpuaccel::TensorView* mean, const gpuaccel::TensorView* var,
                            double epsilon, int training, const gpuaccel::TensorView* y,
                            char* err, size_t err_len);
  int (*batch_norm_backward)(int device, const gpuaccel::TensorView* x,
                             const gpuaccel::TensorView* dy, const gpuaccel::TensorView* gamma,
                             const gpuaccel::TensorView* mean, const gpuaccel::TensorView* var,
                             double epsilon, const gpuaccel::TensorView* dx,
                             const gpuaccel::TensorView* dgamma, const gpuaccel::TensorView* dbeta,
                             char* err, size_t err_len);
  int (*layer_norm_forward)(int device, const gpuaccel::TensorView* x,
                            const gpuaccel::TensorView* gamma, const gpuaccel::TensorView* beta,
                            double epsilon, const gpuaccel::TensorView* y,
                            const gpuaccel::TensorView* mean, const gpuaccel::TensorView* var,
                            char* err, size_t err_len);
  int (*layer_norm_backward)(int device, const gpuaccel::TensorView* x,
                             const gpuaccel::TensorView* dy, const gpuaccel::TensorView* gamma,
                             const gpuaccel::TensorView* mean, const gpuaccel::TensorView* var,
                             double epsilon, const gpuaccel::TensorView* dx,
                             const gpuaccel::TensorView* dgamma, const gpuaccel::TensorView* dbeta,
                             char* err, size_t err_len);

  // ---- ABI 3 ----
  // The fused optimizer step of kernels/optimizer_functors.h (Backend::optimizer_update):
  // param and the used slots contiguous float32, grad contiguous float32/float16/bfloat16 of the
  // same shape; a slot the configuration does not use may be null or have a null data pointer.
  int (*optimizer_update)(int device, const gpuaccel::OptimizerUpdate* u,
                          const gpuaccel::TensorView* param, const gpuaccel::TensorView* grad,
                          const gpuaccel::TensorView* slot0, const gpuaccel::TensorView* slot1,
                          const gpuaccel::TensorView* slot2, char* err, size_t err_len);

  // ---- ABI 4 ----
  // The profiler's device timeline: an event created once (timing enabled, not yet recorded)
  // and recorded again and again on the device's stream, so a profiling session brackets each
  // launch with events from a pool instead of creating two per launch. elapsed_ms and
  // destroy_event above work on these events too.
  int (*create_event)(int device, void** event, char* err, size_t err_len);
  int (*record_existing_event)(int device, void* event, char* err, size_t err_len);
#endif
} gpuaccel_cuda_backend;

typedef const gpuaccel_cuda_backend* (*gpuaccel_cuda_backend_entry_fn)(void);

#ifdef __cplusplus
}
#endif
