// Where each of Keras's recurrent weights goes in cuDNN's RNN weight space, and back for the
// gradients: the pure part of the CUDA backend's fused RNN (cudnn_rnn.cc), header-only and free
// of CUDA so a CPU test checks it (tests/cpp/cuda_rnn_weight_layout_test.cc).
//
// Keras: kernel (input, gates*units) and recurrent_kernel (units, gates*units), row-major, gate
// q in columns [q*units, (q+1)*units); bias (gates*units), the GRU's (2, 3*units) (input row,
// recurrent row). cuDNN (cudnnGetRNNWeightParams): one matrix per linear layer, row-major
// (units, its input width), so gate_pre = W x takes W = Keras's column block transposed; ids
// 0..gates-1 are the input matrices and gates..2*gates-1 the recurrent ones, in cuDNN's gate
// order: LSTM i, f, g, o (Keras's order), GRU r, z, h (Keras's z, r, h swapped in the first
// two); one bias vector per linear layer (CUDNN_RNN_DOUBLE_BIAS: the weight space starts
// zeroed, so the LSTM's and tanh cell's recurrent biases stay 0, Keras having one bias).
#pragma once

#include <cstdint>
#include <vector>

#include "backends/rnn_params.h"

namespace gpuaccel::cuda {

// cuDNN's linear layer id of Keras's gate `keras_gate`, input (false) or recurrent (true) part.
inline int cudnn_linear_layer(RnnCell cell, int keras_gate, bool recurrent) {
  const int gates = static_cast<int>(rnn_gates(cell));
  int id = keras_gate;
  if (cell == RnnCell::kGru && keras_gate < 2) id = 1 - keras_gate;  // z, r -> r, z
  return recurrent ? gates + id : id;
}

// The operands a copy reads or writes.
enum class RnnOperand { kKernel, kRecurrentKernel, kBias, kWeightSpace };

// dst[c * dst_ld + r] = src[r * src_ld + c] for r < rows, c < cols (a transposed block copy);
// with both lds 1 it copies rows * cols values as they are. Offsets and lds in elements.
struct RnnBlockCopy {
  RnnOperand src = RnnOperand::kKernel;
  int64_t src_offset = 0, src_ld = 1;
  RnnOperand dst = RnnOperand::kWeightSpace;
  int64_t dst_offset = 0, dst_ld = 1;
  int64_t rows = 0, cols = 0;
};

// The copies filling a zeroed cuDNN weight space from Keras's weights. `matrix_offset[id]` and
// `bias_offset[id]` are the element offsets cudnnGetRNNWeightParams gave for linear layer id.
inline std::vector<RnnBlockCopy> keras_to_cudnn_copies(RnnCell cell, int64_t input,
                                                        int64_t units,
                                                        const std::vector<int64_t>& matrix_offset,
                                                        const std::vector<int64_t>& bias_offset) {
  const int gates = static_cast<int>(rnn_gates(cell));
  const int64_t width = gates * units;
  std::vector<RnnBlockCopy> copies;
  for (int q = 0; q < gates; ++q) {
    for (bool recurrent : {false, true}) {
      const int id = cudnn_linear_layer(cell, q, recurrent);
      RnnBlockCopy m;
      m.src = recurrent ? RnnOperand::kRecurrentKernel : RnnOperand::kKernel;
      m.src_offset = q * units;
      m.src_ld = width;
      m.dst_offset = matrix_offset.at(id);
      m.rows = recurrent ? units : input;
      m.cols = units;
      m.dst_ld = m.rows;
      copies.push_back(m);
      if (recurrent && cell != RnnCell::kGru) continue;  // Keras has no recurrent bias there
      RnnBlockCopy b;
      b.src = RnnOperand::kBias;
      b.src_offset = (recurrent ? width : 0) + q * units;
      b.dst_offset = bias_offset.at(id);
      b.rows = units;
      b.cols = 1;
      copies.push_back(b);
    }
  }
  return copies;
}

// The copies taking cuDNN's weight gradients back into Keras's layouts: each copy above
// reversed. The LSTM's and tanh cell's bias gradient is the input bias's (the recurrent one,
// always zero in the weights, gets the same gradient and is dropped).
inline std::vector<RnnBlockCopy> cudnn_to_keras_copies(RnnCell cell, int64_t input, int64_t units,
                                                        const std::vector<int64_t>& matrix_offset,
                                                        const std::vector<int64_t>& bias_offset) {
  std::vector<RnnBlockCopy> copies =
      keras_to_cudnn_copies(cell, input, units, matrix_offset, bias_offset);
  for (RnnBlockCopy& c : copies) {
    RnnBlockCopy r;
    r.src = c.dst;
    r.src_offset = c.dst_offset;
    r.src_ld = c.dst_ld;
    r.dst = c.src;
    r.dst_offset = c.src_offset;
    r.dst_ld = c.src_ld;
    r.rows = c.cols;
    r.cols = c.rows;
    c = r;
  }
  return copies;
}

// Runs `copy` on the host (tests; the CUDA backend launches the same copies).
inline void run_block_copy_on_host(const RnnBlockCopy& c, const float* src, float* dst) {
  for (int64_t r = 0; r < c.rows; ++r) {
    for (int64_t k = 0; k < c.cols; ++k) {
      dst[c.dst_offset + k * c.dst_ld + r] = src[c.src_offset + r * c.src_ld + k];
    }
  }
}

}  // namespace gpuaccel::cuda
