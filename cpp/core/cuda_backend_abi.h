// The C interface between the core and the CUDA backend library (libgpuaccel_cuda.so). The
// backend is a separate shared library loaded with dlopen only when asked for, so importing
// gpuaccel never needs the CUDA runtime or a driver. A plain C table of functions keeps the
// boundary free of C++ ABI and exception concerns: every call returns 0 on success or a
// non-zero status with a message written into `err` (a caller-owned buffer of `err_len` bytes).
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPUACCEL_CUDA_BACKEND_ABI_VERSION 1
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
};

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
} gpuaccel_cuda_backend;

typedef const gpuaccel_cuda_backend* (*gpuaccel_cuda_backend_entry_fn)(void);

#ifdef __cplusplus
}
#endif
