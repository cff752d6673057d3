// The fused recurrent layer (Keras's LSTM, GRU and SimpleRNN in their cuDNN-eligible
// configuration: tanh, recurrent sigmoid, a bias, GRU reset_after=True) over a whole sequence:
// one backend op forward (Backend::rnn_forward: oneDNN's RNN primitives on the CPU, cuDNN's on a
// GPU) and one backward, where the layer's unrolled trace would run a dozen ops per step.
#pragma once

#include <vector>

#include "backends/rnn_params.h"
#include "tensor/tensor.h"

namespace gpuaccel {

// Runs `cell` over x (batch, time, input) from the states h0 (and c0 for the LSTM; undefined
// otherwise), time in increasing order, with Keras's weights: kernel (input, gates*units),
// recurrent_kernel (units, gates*units), bias (gates*units), the GRU's (2, 3*units). All
// float32 on one device. Returns {y (batch, time, units), h_last} and, for the LSTM, c_last.
// Differentiable with respect to every input.
std::vector<Tensor> fused_rnn(RnnCell cell, const Tensor& x, const Tensor& h0, const Tensor& c0,
                              const Tensor& kernel, const Tensor& recurrent_kernel,
                              const Tensor& bias);

}  // namespace gpuaccel
