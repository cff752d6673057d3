// Parameters of 2-d convolution and pooling as every backend reads them (the CPU's oneDNN
// kernels, the CUDA library's cuDNN calls, the op frontends that fill them). Plain data with no
// device in it, so a backend library includes this and nothing of another backend.
#pragma once

#include <cstdint>

namespace gpuaccel {

struct Conv2dParams {
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;  // Keras's dilation_rate (1 = dense)
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;  // frontend resolves 'same'
  // Grouped convolution (Keras's Conv2D(groups=), torch's groups=): the C input channels and the
  // F filters split into `groups` equal parts, filter part g reading only input part g. The
  // kernel is then (KH, KW, C / groups, F), Keras's layout; groups == C is depthwise. The
  // transposed convolution takes groups == 1 only (its frontend checks).
  int64_t groups = 1;
};

enum class PoolKind { kMax, kAverage /* excludes padding from the divisor, as Keras */ };

struct Pool2dParams {
  PoolKind kind = PoolKind::kMax;
  int64_t window_h = 2, window_w = 2, stride_h = 2, stride_w = 2;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
};

}  // namespace gpuaccel
