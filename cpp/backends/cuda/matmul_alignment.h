// The pointer alignment cuBLASLt's algorithm heuristic is told for each matmul operand. The
// heuristic assumes every A, B, C and D pointer is 256-byte aligned unless the matmul preference
// says less (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES, default 256), and may then pick a
// kernel that faults or is refused on an operand that starts inside a pool block (a slice, a
// batch entry, a bias-free view of a larger buffer). The bias epilogue's vector has no such
// preference: cuBLASLt reads its alignment from the bias pointer set on the matmul descriptor
// ("routines that don't dereference this pointer, like cublasLtMatmulAlgoGetHeuristic(), depend
// on its value to determine expected pointer alignment", cublasLt.h,
// CUBLASLT_MATMUL_DESC_BIAS_POINTER), so the pointer is set before the heuristic runs, its
// alignment is part of the plan's key, and a bias less than 16-byte aligned is first copied to
// an aligned block. Header-only and free of CUDA so that the CPU tests check it
// (tests/cpp/cuda_matmul_alignment_test.cc).
#pragma once

#include <cstdint>

namespace gpuaccel::cuda {

// The heuristic's largest meaningful alignment.
constexpr uint32_t kMaxMatmulAlignment = 256;

// The largest power of two, at most 256, that divides `pointer`'s address (256 for null).
inline uint32_t matmul_alignment(const void* pointer) {
  const auto address = reinterpret_cast<uintptr_t>(pointer);
  uint32_t alignment = 1;
  while (alignment < kMaxMatmulAlignment && (address & alignment) == 0) alignment <<= 1;
  return alignment;
}

// The alignment every batch entry of an operand keeps: its first pointer's, lowered by the
// byte stride between entries (0 for a single matrix or a broadcast one).
inline uint32_t matmul_alignment(const void* pointer, int64_t batch_stride_bytes) {
  const uint32_t first = matmul_alignment(pointer);
  const uint64_t stride = static_cast<uint64_t>(batch_stride_bytes < 0 ? -batch_stride_bytes : batch_stride_bytes);
  const uint32_t every = matmul_alignment(reinterpret_cast<const void*>(static_cast<uintptr_t>(stride)));
  return first < every ? first : every;
}

// The least alignment a bias vector is handed to the epilogue with: below it, the bias is
// copied into a pool block (256-byte aligned) first. No documented number exists; 16 bytes is
// the widest vector load a kernel makes, the alignment every float16/bfloat16/float32 operand
// of a tensor-core kernel may assume.
constexpr uint32_t kMinBiasAlignment = 16;

inline bool bias_needs_aligned_copy(const void* bias) { return matmul_alignment(bias) < kMinBiasAlignment; }

}  // namespace gpuaccel::cuda
