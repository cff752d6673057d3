// Element functors in cpp/kernels are compiled twice: by the host compiler for the CPU backend
// (where they are tested) and by nvcc for the CUDA kernels. These macros let one definition
// serve both without any file here depending on CUDA headers.
#pragma once

#if defined(__CUDACC__)
#define GA_HOST_DEVICE __host__ __device__
#define GA_INLINE __forceinline__
#else
#define GA_HOST_DEVICE
#define GA_INLINE inline
#endif
