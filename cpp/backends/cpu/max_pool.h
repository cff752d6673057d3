// NHWC float32 max pooling with a one-byte-per-output argmax workspace, written directly rather
// than through oneDNN. On AVX2-only CPUs oneDNN's (2.6, measured) channels-last max pooling with a workspace
// (the training forward) ran ~10x slower than a plain pass over the same bytes (10 ms for the
// course CNN's first pooling at batch 64, vs 0.8 ms for a relu of its input), which made the
// two poolings about a third of a training step. The loops here vectorize over channels.
//
// The library is built for plain x86-64, so each loop is also compiled for AVX2 and AVX-512F
// (target attributes, as bf16_convert.h does) and the widest one the CPU supports runs. Max and
// select are exact, so every path gives the same bits.
#pragma once

#include <cstdint>

#include "backends/cpu/onednn_ops.h"
#include "tensor/tensor_view.h"

namespace gpuaccel::cpu {

enum class MaxPoolIsa { kBaseline, kAvx2, kAvx512 };

// The path pooling runs on: the one forced by ScopedMaxPoolIsa, else the widest this CPU has.
MaxPoolIsa max_pool_isa();
const char* max_pool_isa_name(MaxPoolIsa isa);
// Whether this CPU can run `isa` (tests run every path the machine has).
bool max_pool_isa_supported(MaxPoolIsa isa);

// Forces every max pooling in the process onto `isa` while it lives (tests and benchmarks run
// each path through the real entry points); throws InvalidArgument when the CPU lacks `isa`.
// Not for concurrent use: the previous choice is restored on destruction.
class ScopedMaxPoolIsa {
 public:
  explicit ScopedMaxPoolIsa(MaxPoolIsa isa);
  ~ScopedMaxPoolIsa();
  ScopedMaxPoolIsa(const ScopedMaxPoolIsa&) = delete;
  ScopedMaxPoolIsa& operator=(const ScopedMaxPoolIsa&) = delete;

 private:
  int previous_;
};

// Whether max pooling with these parameters runs here (every max pooling whose window has at
// most 255 positions, so the argmax fits in a byte). The forward and the backward decide the
// same way, so the workspace format always matches.
bool direct_max_pool_applies(const Pool2dParams& p);
// Workspace bytes for y: one per output element.
int64_t direct_max_pool_workspace_bytes(const TensorView& y);
// x (N, H, W, C), y (N, OH, OW, C), any float dtype: float32 and bfloat16 run in their own dtype,
// others (and strided views) are staged through contiguous f32.
// y = max over each window (padding positions never win); workspace (may be null) receives the
// window index kh * window_w + kw of the first maximum.
void direct_max_pool_forward(const TensorView& x, const Pool2dParams& p, const TensorView& y,
                             uint8_t* workspace);
// dx = each dy element added at its window's argmax, 0 where no argmax points (windows that
// cannot overlap write every dx element once instead of zero-filling and scattering).
void direct_max_pool_backward(const TensorView& dy, const Pool2dParams& p,
                              const uint8_t* workspace, const TensorView& dx);
// direct_max_pool_backward followed by relu's backward at x, the pooling's input (dx where
// x > 0, else +0; bfloat16 NaN gradients come out quiet, as the element-wise relu backward
// gives them), in the same pass, when the windows cannot overlap and x, dy and dx are float32 or
// bfloat16, contiguous, of one dtype. Returns false, writing nothing, otherwise.
bool direct_max_pool_backward_relu(const TensorView& dy, const Pool2dParams& p,
                                   const uint8_t* workspace, const TensorView& x,
                                   const TensorView& dx);

}  // namespace gpuaccel::cpu
