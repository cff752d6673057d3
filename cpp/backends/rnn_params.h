// The fused recurrent op's parameters as every backend reads them (the CPU's oneDNN RNN
// primitives, the CUDA library's cuDNN RNN calls, the op frontend that fills them). Plain data,
// like conv_params.h, so the CUDA library includes it and nothing of another backend.
//
// The op's tensors keep Keras 3's layouts and each backend converts what its library wants:
// x (batch, time, input) batch-major; h0, c0, h_last, c_last (batch, units); kernel
// (input, gates*units) and recurrent_kernel (units, gates*units) with the gate blocks in Keras's
// order (LSTM i, f, c, o; GRU z, r, h); bias (gates*units), or (2, 3*units) for the GRU (input
// bias, then recurrent bias: Keras's reset_after=True). Everything is contiguous float32.
#pragma once

#include <cstdint>

namespace gpuaccel {

enum class RnnCell {
  kTanh,  // Keras's SimpleRNN(activation='tanh'): h = tanh(x W + b + h_prev U)
  kLstm,  // Keras's LSTM (tanh, recurrent sigmoid); states h and c
  kGru,   // Keras's GRU(reset_after=True): linear before reset (oneDNN's lbr_gru, cuDNN's GRU)
};

struct RnnParams {
  RnnCell cell = RnnCell::kLstm;
};

// The units-wide blocks of the kernels: 1, 4 or 3.
inline int64_t rnn_gates(RnnCell cell) {
  return cell == RnnCell::kLstm ? 4 : cell == RnnCell::kGru ? 3 : 1;
}

inline const char* rnn_cell_name(RnnCell cell) {
  return cell == RnnCell::kLstm ? "lstm" : cell == RnnCell::kGru ? "gru" : "simple_rnn";
}

}  // namespace gpuaccel
