// Fused optimizer updates as element functors: one call per parameter element reads the gradient,
// updates the optimizer slots and the float32 master weight in a single pass. The CPU backend
// runs them in an OpenMP loop (where they are tested against double-precision references and
// real Keras), the CUDA backend in a grid-stride kernel, so both devices do the same arithmetic.
//
// Keras 3 semantics (keras/src/optimizers/*.py), all in float32; `g` is the gradient after the
// gradient transform (clip by value / scale by a norm factor) and `p` the parameter:
//   every kind, first:  p -= p * weight_decay * lr      (weight_decay 0 = off)
//   SGD, no momentum:   p -= lr * g
//   SGD, momentum:      m = momentum * m - lr * g;  p += m
//   SGD, nesterov:      m = momentum * m - lr * g;  p += momentum * m - lr * g
//   Adam:               m += (g - m) * (1 - beta_1);  v += (g^2 - v) * (1 - beta_2)
//                       amsgrad: vhat = max(vhat, v), v := vhat
//                       p -= m * alpha / (sqrt(v) + epsilon),
//                       alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t), a float32 scalar the
//                       optimizer keeps on the parameter's device (read through device_alpha)
//   RMSprop:            v = rho * v + (1 - rho) * g^2
//                       centered: a = rho * a + (1 - rho) * g, d = v - a^2 + epsilon
//                       else d = v + epsilon            (epsilon inside the sqrt, as Keras)
//                       inc = lr * g / sqrt(d)
//                       momentum > 0: m = momentum * m + inc, p -= m;  else p -= inc
// Slots (float32, the parameter's shape, zero-initialized by the caller):
//   SGD      slot0 = momentum ("m")
//   Adam     slot0 = first moment, slot1 = second moment, slot2 = max second moment (amsgrad)
//   RMSprop  slot0 = velocity, slot1 = momentum, slot2 = average gradient (centered)
// A slot a configuration does not use may be a null pointer / empty view.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

#if !defined(__CUDACC__)
#include <cmath>
#endif

namespace gpuaccel {

enum class OptimizerKind : int32_t { kSgd = 0, kAdam = 1, kRmsprop = 2 };

// Flags of OptimizerUpdate::flags.
constexpr int32_t kOptimizerNesterov = 1;   // SGD
constexpr int32_t kOptimizerAmsgrad = 2;    // Adam
constexpr int32_t kOptimizerCentered = 4;   // RMSprop
constexpr int32_t kOptimizerMomentum = 8;   // SGD, RMSprop: a momentum slot is used
constexpr int32_t kOptimizerClipValue = 16; // g = clamp(g, -clip_value, clip_value)

// One step's hyperparameters for one parameter, rounded to float on the host from the double
// values the optimizer keeps. Plain data: the CUDA backend library reads it as it is
// (Backend::optimizer_update) and copies it into a kernel's arguments.
struct OptimizerUpdate {
  OptimizerKind kind = OptimizerKind::kSgd;
  int32_t flags = 0;
  float learning_rate = 0.0f;
  float momentum = 0.0f;          // SGD and RMSprop
  float one_minus_beta_1 = 0.0f;  // Adam: 1 - beta_1
  float one_minus_beta_2 = 0.0f;  // Adam: 1 - beta_2
  float alpha = 0.0f;             // Adam: bias-corrected learning rate of this step, used when
                                  // device_alpha is null
  const float* device_alpha = nullptr;  // Adam: the step's alpha in memory on the parameter's
                                        // device, advanced there each step, so an update
                                        // replayed from a captured graph reads the current one
  float rho = 0.0f;               // RMSprop
  float one_minus_rho = 0.0f;     // RMSprop
  float epsilon = 0.0f;
  float weight_decay = 0.0f;      // decoupled weight decay; 0 = none
  float grad_scale = 1.0f;        // gradient multiplier: the loss-scale unscale (1 / scale);
                                  // 1 = none; used when device_grad_scale is null
  const float* device_grad_scale = nullptr;  // the multiplier in memory on the parameter's
                                             // device: the unscale times the clipnorm /
                                             // global_clipnorm factor, computed there
  float clip_value = 0.0f;        // used when flags has kOptimizerClipValue
  const float* device_skip = nullptr;  // a LossScaleOptimizer whose state lives on the device:
                                       // nonzero there when this step's gradients were not all
                                       // finite, and then the update changes nothing
};

namespace kernels {

namespace optim_math {
GA_HOST_DEVICE GA_INLINE float sqrt(float x) {
#if defined(__CUDA_ARCH__)
  return ::sqrtf(x);
#else
  return std::sqrt(x);
#endif
}
// NaN-propagating like Keras's ops.maximum (tf.maximum).
GA_HOST_DEVICE GA_INLINE float maximum(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  return a < b ? b : a;
}
}  // namespace optim_math

// The gradient as the update sees it: multiplied by grad_scale or *device_grad_scale (a
// LossScaleOptimizer's 1 / scale and/or the norm-clipping factor), then clipped by value
// (Keras allows only one of clipnorm, global_clipnorm and clipvalue).
GA_HOST_DEVICE GA_INLINE float transform_gradient(const OptimizerUpdate& u, float g) {
  if (u.device_grad_scale != nullptr) {
    g = g * *u.device_grad_scale;
  } else if (u.grad_scale != 1.0f) {
    g = g * u.grad_scale;
  }
  if (u.flags & kOptimizerClipValue) {
    // tf.clip_by_value: NaN passes through unchanged.
    if (g < -u.clip_value) g = -u.clip_value;
    if (g > u.clip_value) g = u.clip_value;
  }
  return g;
}

// Whether a LossScaleOptimizer decided on the device to skip this step (inf/NaN gradients).
GA_HOST_DEVICE GA_INLINE bool update_skipped(const OptimizerUpdate& u) {
  return u.device_skip != nullptr && *u.device_skip != 0.0f;
}

// Decoupled weight decay, applied before the update (Keras's _apply_weight_decay).
GA_HOST_DEVICE GA_INLINE float decay_parameter(const OptimizerUpdate& u, float p) {
  return u.weight_decay != 0.0f ? p - p * u.weight_decay * u.learning_rate : p;
}

struct SgdUpdateFunctor {
  OptimizerUpdate u;
  // m may be null when momentum is off.
  GA_HOST_DEVICE GA_INLINE void operator()(float g, float* p, float* m, float*, float*) const {
    if (update_skipped(u)) return;
    g = transform_gradient(u, g);
    float w = decay_parameter(u, *p);
    if (u.flags & kOptimizerMomentum) {
      const float next = *m * u.momentum - g * u.learning_rate;
      *m = next;
      if (u.flags & kOptimizerNesterov) {
        w += next * u.momentum - g * u.learning_rate;
      } else {
        w += next;
      }
    } else {
      w -= g * u.learning_rate;
    }
    *p = w;
  }
};

struct AdamUpdateFunctor {
  OptimizerUpdate u;
  // vhat may be null unless amsgrad.
  GA_HOST_DEVICE GA_INLINE void operator()(float g, float* p, float* m, float* v,
                                           float* vhat) const {
    if (update_skipped(u)) return;
    g = transform_gradient(u, g);
    const float w = decay_parameter(u, *p);
    const float m_next = *m + (g - *m) * u.one_minus_beta_1;
    float v_next = *v + (g * g - *v) * u.one_minus_beta_2;
    *m = m_next;
    *v = v_next;
    if (u.flags & kOptimizerAmsgrad) {
      v_next = optim_math::maximum(*vhat, v_next);
      *vhat = v_next;
    }
    const float alpha = u.device_alpha != nullptr ? *u.device_alpha : u.alpha;
    *p = w - (m_next * alpha) / (optim_math::sqrt(v_next) + u.epsilon);
  }
};

struct RmspropUpdateFunctor {
  OptimizerUpdate u;
  // mom may be null unless momentum; avg may be null unless centered.
  GA_HOST_DEVICE GA_INLINE void operator()(float g, float* p, float* velocity, float* mom,
                                           float* avg) const {
    if (update_skipped(u)) return;
    g = transform_gradient(u, g);
    float w = decay_parameter(u, *p);
    const float v_next = u.rho * *velocity + u.one_minus_rho * (g * g);
    *velocity = v_next;
    float denominator;
    if (u.flags & kOptimizerCentered) {
      const float a_next = u.rho * *avg + u.one_minus_rho * g;
      *avg = a_next;
      denominator = v_next - a_next * a_next + u.epsilon;
    } else {
      denominator = v_next + u.epsilon;
    }
    const float increment = (u.learning_rate * g) / optim_math::sqrt(denominator);
    if (u.flags & kOptimizerMomentum) {
      const float m_next = u.momentum * *mom + increment;
      *mom = m_next;
      w -= m_next;
    } else {
      w -= increment;
    }
    *p = w;
  }
};

// Calls f(functor) with the functor of u.kind; returns false for an unknown kind.
template <typename F>
GA_INLINE bool with_optimizer_functor(const OptimizerUpdate& u, F&& f) {
  switch (u.kind) {
    case OptimizerKind::kSgd: f(SgdUpdateFunctor{u}); return true;
    case OptimizerKind::kAdam: f(AdamUpdateFunctor{u}); return true;
    case OptimizerKind::kRmsprop: f(RmspropUpdateFunctor{u}); return true;
  }
  return false;
}

}  // namespace kernels
}  // namespace gpuaccel
