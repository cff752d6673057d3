// The operand alignment the CUDA backend tells cuBLASLt's heuristic
// (backends/cuda/matmul_alignment.h): the largest power of two up to 256 dividing the address,
// so a view that starts inside a pool block is described as it is, never as 256-byte aligned;
// and which bias vectors are copied to an aligned block before the epilogue reads them.
#include "backends/cuda/matmul_alignment.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace gpuaccel::cuda {
namespace {

const void* at(uintptr_t address) { return reinterpret_cast<const void*>(address); }

TEST(CudaMatmulAlignment, IsTheLargestPowerOfTwoDividingTheAddressUpTo256) {
  EXPECT_EQ(matmul_alignment(at(0x7f0000000000)), 256u);  // a pool block's start
  EXPECT_EQ(matmul_alignment(at(0x7f0000000100)), 256u);
  EXPECT_EQ(matmul_alignment(at(0x7f0000000080)), 128u);
  EXPECT_EQ(matmul_alignment(at(0x7f0000000010)), 16u);
  EXPECT_EQ(matmul_alignment(at(0x7f0000000004)), 4u);    // one float32 into a block
  EXPECT_EQ(matmul_alignment(at(0x7f0000000002)), 2u);    // one float16 into a block
  EXPECT_EQ(matmul_alignment(at(0x7f0000000001)), 1u);
  EXPECT_EQ(matmul_alignment(at(0x7f0000000c00)), 256u);  // capped at the heuristic's default
  EXPECT_EQ(matmul_alignment(nullptr), 256u);
}

TEST(CudaMatmulAlignment, ABatchEntryOrRowOffsetIsDescribedByItsOwnAddress) {
  // Row 3 of a float32 matrix with 10 columns starts 120 bytes into its block: 8-byte aligned.
  const uintptr_t block = 0x7f0000001000;
  EXPECT_EQ(matmul_alignment(at(block + 3 * 10 * sizeof(float))), 8u);
  // Batch entry 1 of 3x5 float16 matrices: 30 bytes in.
  EXPECT_EQ(matmul_alignment(at(block + 15 * 2)), 2u);
}

TEST(CudaMatmulAlignment, EveryBatchEntryCountsNotOnlyTheFirst) {
  const void* block = at(0x7f0000002000);
  EXPECT_EQ(matmul_alignment(block, 0), 256u);                // one matrix, or a broadcast one
  EXPECT_EQ(matmul_alignment(block, 64 * 64 * 4), 256u);      // 64x64 float32 entries
  EXPECT_EQ(matmul_alignment(block, 3 * 5 * 2), 2u);          // 3x5 float16 entries: 30 bytes apart
  EXPECT_EQ(matmul_alignment(block, 10 * 4), 8u);             // 10 float32 apart
  EXPECT_EQ(matmul_alignment(at(0x7f0000002004), 1024), 4u);  // the first entry's own alignment
}

TEST(CudaMatmulAlignment, ABiasBelowSixteenBytesIsCopiedToAnAlignedBlock) {
  const uintptr_t block = 0x7f0000003000;
  EXPECT_FALSE(bias_needs_aligned_copy(at(block)));               // a Dense layer's own bias
  EXPECT_FALSE(bias_needs_aligned_copy(at(block + 4 * 4)));       // float32 element 4: 16 bytes in
  EXPECT_TRUE(bias_needs_aligned_copy(at(block + 4)));            // float32 element 1
  EXPECT_TRUE(bias_needs_aligned_copy(at(block + 3 * 2)));        // float16 element 3
  EXPECT_TRUE(bias_needs_aligned_copy(at(block + 8)));            // 8 bytes: still copied
  EXPECT_EQ(matmul_alignment(at(block + 32)), 32u);               // what the plan key then records
}

}  // namespace
}  // namespace gpuaccel::cuda
