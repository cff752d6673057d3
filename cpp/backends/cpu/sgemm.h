// Single-precision GEMM on the CPU through oneDNN's BLAS-like entry point. A stand-in until the
// op layer's cached matmul primitive exists; used by the device self-check.
#pragma once

#include <cstdint>

namespace gpuaccel::cpu {

// C[m,n] = A[m,k] * B[k,n], row-major, contiguous.
void sgemm_row_major(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k);

}  // namespace gpuaccel::cpu
