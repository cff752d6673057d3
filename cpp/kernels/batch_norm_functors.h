// Batch normalization's per-element arithmetic, shared by the CUDA backend's own batch-norm
// kernels (backends/cuda/batch_norm.cu: the inputs cuDNN does not take, see
// backends/cuda/batch_norm_route.h) and the CPU tests of it (tests/cpp/cuda_batch_norm_route_test.cc).
// Statistics are per channel, in float32 whatever x's dtype: mean, the biased variance Keras
// normalizes with, and for backward the means of dy and of dy * xhat over the batch.
#pragma once

#include "kernels/host_device.h"
#include "kernels/unary_functors.h"

namespace gpuaccel::kernels {

// 1 / sqrt(var + eps), with a correctly rounded sqrt (RsqrtFunctor's reason).
GA_HOST_DEVICE GA_INLINE float batch_norm_inv_std(float var, float epsilon) {
  return 1.0f / math::sqrt(var + epsilon);
}

// y = gamma * (x - mean) / sqrt(var + eps) + beta.
struct BatchNormOutputFunctor {
  GA_HOST_DEVICE GA_INLINE float operator()(float x, float mean, float inv_std, float gamma, float beta) const {
    return (x - mean) * inv_std * gamma + beta;
  }
};

// dx = gamma / sqrt(var + eps) * (dy - mean(dy) - xhat * mean(dy * xhat)), xhat the normalized
// x: the gradient through the batch's own mean and variance. Over one row dy - mean(dy) and
// xhat are both exactly 0, so dx is exactly 0.
struct BatchNormInputGradientFunctor {
  GA_HOST_DEVICE GA_INLINE float operator()(float dy, float x, float mean, float inv_std, float gamma,
                                            float mean_dy, float mean_dy_xhat) const {
    const float xhat = (x - mean) * inv_std;
    return gamma * inv_std * (dy - mean_dy - xhat * mean_dy_xhat);
  }
};

}  // namespace gpuaccel::kernels
