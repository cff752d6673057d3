// The block copies of rnn_weight_layout.h on the GPU: Keras's recurrent weights into cuDNN's
// weight space before an RNN call, the weight gradients back after one (cudnn_rnn.cc). One
// launch per copy; a layer has at most 16 (LSTM: 8 matrices, 8 biases).
#include <algorithm>

#include "backends/cuda/context.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/ops.h"

namespace gpuaccel::cuda {

namespace {

constexpr int kThreads = 256;

// dst[c * dst_ld + r] = src[r * src_ld + c], one thread per element, grid-stride.
__global__ void block_copy_kernel(const float* src, int64_t src_ld, float* dst, int64_t dst_ld,
                                  int64_t rows, int64_t cols) {
  const int64_t total = rows * cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i % rows, c = i / rows;  // consecutive threads write consecutive dst
    dst[c * dst_ld + r] = src[r * src_ld + c];
  }
}

}  // namespace

void run_rnn_block_copy(int device, const RnnBlockCopy& copy, const float* src, float* dst) {
  const int64_t total = copy.rows * copy.cols;
  if (total == 0) return;
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, 1024);
  block_copy_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, device_stream(device)>>>(
      src + copy.src_offset, copy.src_ld, dst + copy.dst_offset, copy.dst_ld, copy.rows,
      copy.cols);
  GA_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gpuaccel::cuda
