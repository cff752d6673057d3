// Where the CUDA backend's fused RNN puts each of Keras's weights in cuDNN's weight space and
// takes the gradients back (backends/cuda/rnn_weight_layout.h), run on the host: cuDNN's gate
// order (the GRU's r and z swapped against Keras's z and r), each matrix transposed into cuDNN's
// row-major (units, inputs), the GRU's two bias rows, the LSTM's single bias, and the way back.
// The offsets stand for what cudnnGetRNNWeightParams reports (matrices, then biases, by id).
#include <gtest/gtest.h>

#include <vector>

#include "backends/cuda/rnn_weight_layout.h"

namespace gpuaccel::cuda {
namespace {

struct Space {
  std::vector<int64_t> matrix, bias;
  int64_t size = 0;
};

// cuDNN-like offsets for one layer: every matrix, then every bias, in linear-layer order.
Space space_for(RnnCell cell, int64_t input, int64_t units) {
  const int gates = static_cast<int>(rnn_gates(cell));
  Space s;
  for (int id = 0; id < 2 * gates; ++id) {
    s.matrix.push_back(s.size);
    s.size += units * (id < gates ? input : units);
  }
  for (int id = 0; id < 2 * gates; ++id) {
    s.bias.push_back(s.size);
    s.size += units;
  }
  return s;
}

std::vector<float> counting(int64_t n, float start) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return v;
}

void run_all(const std::vector<RnnBlockCopy>& copies, std::vector<float>& kernel,
             std::vector<float>& recurrent, std::vector<float>& bias, std::vector<float>& space) {
  auto buffer = [&](RnnOperand o) -> std::vector<float>& {
    return o == RnnOperand::kKernel ? kernel
           : o == RnnOperand::kRecurrentKernel ? recurrent
           : o == RnnOperand::kBias ? bias
                                    : space;
  };
  for (const RnnBlockCopy& c : copies) {
    run_block_copy_on_host(c, buffer(c.src).data(), buffer(c.dst).data());
  }
}

TEST(CudaRnnWeightLayout, GateOrderIsCudnnsOwn) {
  for (int q = 0; q < 4; ++q) {
    EXPECT_EQ(cudnn_linear_layer(RnnCell::kLstm, q, false), q);  // i, f, g, o both ways
    EXPECT_EQ(cudnn_linear_layer(RnnCell::kLstm, q, true), 4 + q);
  }
  EXPECT_EQ(cudnn_linear_layer(RnnCell::kGru, 0, false), 1);  // Keras z -> cuDNN update (1)
  EXPECT_EQ(cudnn_linear_layer(RnnCell::kGru, 1, false), 0);  // Keras r -> cuDNN reset (0)
  EXPECT_EQ(cudnn_linear_layer(RnnCell::kGru, 2, false), 2);
  EXPECT_EQ(cudnn_linear_layer(RnnCell::kGru, 1, true), 3);
  EXPECT_EQ(cudnn_linear_layer(RnnCell::kTanh, 0, true), 1);
}

// Keras's weights of distinct values (3 inputs, 2 units) copied into a zeroed weight space.
struct Filled {
  int64_t input = 3, units = 2, gates, width;
  Space s;
  std::vector<float> kernel, recurrent, bias, space;
  explicit Filled(RnnCell cell)
      : gates(rnn_gates(cell)), width(rnn_gates(cell) * 2), s(space_for(cell, 3, 2)) {
    kernel = counting(input * width, 100);
    recurrent = counting(units * width, 200);
    bias = counting((cell == RnnCell::kGru ? 2 : 1) * width, 300);
    space.assign(static_cast<size_t>(s.size), 0.0f);
    run_all(keras_to_cudnn_copies(cell, input, units, s.matrix, s.bias), kernel, recurrent, bias,
            space);
  }
};

class CudaRnnWeightCopies : public ::testing::TestWithParam<RnnCell> {};

TEST_P(CudaRnnWeightCopies, EachKerasBlockLandsTransposedAtItsCudnnLayer) {
  const RnnCell cell = GetParam();
  const Filled f(cell);
  const int64_t input = f.input, units = f.units, width = f.width;
  for (int q = 0; q < f.gates; ++q) {
    const int in_id = cudnn_linear_layer(cell, q, false), rec_id = cudnn_linear_layer(cell, q, true);
    for (int64_t j = 0; j < units; ++j) {
      for (int64_t i = 0; i < input; ++i) {  // W[j][i] = Keras kernel[i][q*units + j]
        EXPECT_EQ(f.space[f.s.matrix[in_id] + j * input + i], f.kernel[i * width + q * units + j]);
      }
      for (int64_t i = 0; i < units; ++i) {
        EXPECT_EQ(f.space[f.s.matrix[rec_id] + j * units + i],
                  f.recurrent[i * width + q * units + j]);
      }
      EXPECT_EQ(f.space[f.s.bias[in_id] + j], f.bias[q * units + j]);
      // the GRU's recurrent row; the other cells' recurrent bias stays zero
      EXPECT_EQ(f.space[f.s.bias[rec_id] + j],
                cell == RnnCell::kGru ? f.bias[width + q * units + j] : 0.0f);
    }
  }
}

TEST_P(CudaRnnWeightCopies, GradientsComeBackToTheBlocksTheyCameFrom) {
  const RnnCell cell = GetParam();
  Filled f(cell);
  std::vector<float> dkernel(f.kernel.size(), -1), drecurrent(f.recurrent.size(), -1),
      dbias(f.bias.size(), -1);
  run_all(cudnn_to_keras_copies(cell, f.input, f.units, f.s.matrix, f.s.bias), dkernel,
          drecurrent, dbias, f.space);
  EXPECT_EQ(dkernel, f.kernel);
  EXPECT_EQ(drecurrent, f.recurrent);
  EXPECT_EQ(dbias, f.bias);  // every entry written: the LSTM's from the input biases
}

TEST(CudaRnnWeightLayout, OneUnitIsStillATransposeAndNotAVectorCopy) {
  const int64_t input = 3, units = 1, width = 4;
  const Space s = space_for(RnnCell::kLstm, input, units);
  std::vector<float> kernel = counting(input * width, 10), recurrent = counting(width, 40);
  std::vector<float> bias = counting(width, 70), space(static_cast<size_t>(s.size), 0.0f);
  run_all(keras_to_cudnn_copies(RnnCell::kLstm, input, units, s.matrix, s.bias), kernel,
          recurrent, bias, space);
  for (int q = 0; q < 4; ++q) {
    for (int64_t i = 0; i < input; ++i) EXPECT_EQ(space[s.matrix[q] + i], kernel[i * width + q]);
  }
}

INSTANTIATE_TEST_SUITE_P(Cells, CudaRnnWeightCopies,
                         ::testing::Values(RnnCell::kLstm, RnnCell::kGru, RnnCell::kTanh),
                         [](const ::testing::TestParamInfo<RnnCell>& info) {
                           return std::string(rnn_cell_name(info.param));
                         });

}  // namespace
}  // namespace gpuaccel::cuda
