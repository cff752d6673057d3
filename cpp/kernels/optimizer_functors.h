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
//                       optimizer keeps on the parameter's device (read through device_step_factor[0])
//   RMSprop:            v = rho * v + (1 - rho) * g^2
//                       centered: a = rho * a + (1 - rho) * g, d = v - a^2 + epsilon
//                       else d = v + epsilon            (epsilon inside the sqrt, as Keras)
//                       inc = lr * g / sqrt(d)
//                       momentum > 0: m = momentum * m + inc, p -= m;  else p -= inc
//   Adagrad:            a += g^2;  p -= lr * g / sqrt(a + epsilon)
//   Adamax:             m += (g - m) * (1 - beta_1);  u = max(beta_2 * u, |g|)
//                       p -= m * alpha / (u + epsilon),  alpha = lr / (1 - beta_1^t) (device)
//   Nadam:              m += (g - m) * (1 - beta_1);  v += (g^2 - v) * (1 - beta_2)
//                       p -= lr * (c0 * m + c1 * g) / (sqrt(v * c2) + epsilon), with the
//                       step factors c0 = u_{t+1} / (1 - prod_{s<=t+1} u_s),
//                       c1 = (1 - u_t) / (1 - prod_{s<=t} u_s), c2 = 1 / (1 - beta_2^t),
//                       u_s = beta_1 * (1 - 0.5 * 0.96^s) (device)
//   Adadelta:           a = rho * a + (1 - rho) * g^2
//                       d = -sqrt(b + epsilon) * g / sqrt(a + epsilon)
//                       b = rho * b + (1 - rho) * d^2;  p += lr * d
//   Lion:               p -= lr * sign(beta_1 * m + (1 - beta_1) * g)
//                       m = beta_2 * m + (1 - beta_2) * g
//   Ftrl:               h = g + 2 * l2_shrinkage * p;  n = a + g^2
//                       z += h - (n^-lr_power - a^-lr_power) / lr * p;  a = n
//                       p = (clip(z, -l1, l1) - z) / (n^-lr_power / lr + 2 * l2),
//                       l2 = l2_regularization_strength + beta / (2 * lr)
//   ScheduleFreeAdamW: v += (g^2 - v) * (1 - beta_2);  m -= (lr_t * g) / (sqrt(v / c1) + epsilon)
//                       x = (p - (1 - beta_1) * m) / beta_1   (m after its update: what Keras's
//                       TensorFlow backend reads for its "momentum_old", a read of the variable
//                       after assign_sub)
//                       x = (1 - w) * x + w * m;  p = (1 - beta_1) * m + beta_1 * x
//                       with lr_t = lr * min(t / warmup_steps, 1) (lr without warmup),
//                       c1 = 1 - beta_2^t, w = 1 / t (device step factors 0, 1, 2)
// Two-pass kinds (a per-variable reduction sits between the passes, optim/optimizer.h):
//   pass kSlots: weight decay written to p, then the element-wise slot updates; the optimizer
//   then reduces (norms, row/column means) into per-variable scalars on the device; pass
//   kParameter reads them (device_variable_factor) and moves p.
//   Lamb:    kSlots: m += (g - m) * (1 - beta_1);  v += (g^2 - v) * (1 - beta_2)
//            kParameter: r = (m / c0) / (sqrt(v / c1) + epsilon), c0 = 1 - beta_1^t,
//                        c1 = 1 - beta_2^t (device);  ratio = ||w|| / ||r|| when both norms
//                        are > 0, else 1 (norms: device_variable_factor 0 and 1);
//                        p -= (ratio * lr) * r
//   Adafactor: kSlots: unfactored (rank < 2): v = b * v + (1 - b) * (g^2 + epsilon_1),
//                      b = 1 - t^beta_2_decay, 1 - b (device step factors 0, 1); factored
//                      (kOptimizerFactored): v = (r / mean(r)) x c was written by the
//                      optimizer's ops from its row/column moments r, c
//            kParameter: p -= alpha * (g / sqrt(v)) / d, alpha = max(epsilon_2, rms(w)) *
//                        min(lr, 1 / sqrt(t)), d = max(1, rms(g / sqrt(v)) / clip_threshold)
//                        (device_variable_factor 0 and 1)
// Slots (float32, the parameter's shape, initialized by the caller: zeros except Adagrad's and
// Ftrl's accumulator, which start at initial_accumulator_value):
//   SGD      slot0 = momentum ("m")
//   Adam     slot0 = first moment, slot1 = second moment, slot2 = max second moment (amsgrad)
//   RMSprop  slot0 = velocity, slot1 = momentum, slot2 = average gradient (centered)
//   Adagrad  slot0 = accumulator
//   Adamax   slot0 = momentum, slot1 = norm (u)
//   Nadam    slot0 = momentum, slot1 = velocity
//   Adadelta slot0 = accumulated_grad (a), slot1 = accumulated_delta_var (b)
//   Lion     slot0 = momentum
//   Ftrl     slot0 = accumulator (a), slot1 = linear (z)
//   Lamb     slot0 = momentum, slot1 = velocity
//   ScheduleFreeAdamW slot0 = momentum (starts at the parameter's value), slot1 = velocity
//   Adafactor slot2 = velocity (slot0 and slot1, the row and column moments r and c, are not of
//            the parameter's shape: the element pass never sees them)
// A slot a configuration does not use may be a null pointer / empty view.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

#if !defined(__CUDACC__)
#include <cmath>
#endif

namespace gpuaccel {

enum class OptimizerKind : int32_t {
  kSgd = 0,
  kAdam = 1,
  kRmsprop = 2,
  kAdagrad = 3,
  kAdamax = 4,
  kNadam = 5,
  kAdadelta = 6,
  kLion = 7,
  kFtrl = 8,
  kLamb = 9,
  kAdafactor = 10,
  kScheduleFreeAdamW = 11,
};

// Which part of a two-pass kind's step a call runs (kWhole for every one-pass kind).
enum class OptimizerPass : int32_t {
  kWhole = 0,
  kSlots = 1,      // weight decay and the element-wise slot updates
  kParameter = 2,  // the parameter's move, after the optimizer's per-variable reductions
};

// How many per-variable scalars a two-pass update may read (device_variable_factor).
constexpr int kOptimizerVariableFactors = 2;

// How many step-dependent factors an update may read (OptimizerUpdate::step_factor).
constexpr int kOptimizerStepFactors = 3;

// Flags of OptimizerUpdate::flags.
constexpr int32_t kOptimizerNesterov = 1;   // SGD
constexpr int32_t kOptimizerAmsgrad = 2;    // Adam
constexpr int32_t kOptimizerCentered = 4;   // RMSprop
constexpr int32_t kOptimizerMomentum = 8;   // SGD, RMSprop: a momentum slot is used
constexpr int32_t kOptimizerClipValue = 16; // g = clamp(g, -clip_value, clip_value)
constexpr int32_t kOptimizerFactored = 32;  // Adafactor: v comes from the row/column moments

// One step's hyperparameters for one parameter, rounded to float on the host from the double
// values the optimizer keeps. Plain data: the CUDA backend library reads it as it is
// (Backend::optimizer_update) and copies it into a kernel's arguments.
struct OptimizerUpdate {
  OptimizerKind kind = OptimizerKind::kSgd;
  OptimizerPass pass = OptimizerPass::kWhole;
  int32_t flags = 0;
  float learning_rate = 0.0f;
  float momentum = 0.0f;          // SGD and RMSprop
  float beta_1 = 0.0f;            // Lion
  float beta_2 = 0.0f;            // Adamax, Lion
  float one_minus_beta_1 = 0.0f;  // Adam, Adamax, Nadam, Lion: 1 - beta_1
  float one_minus_beta_2 = 0.0f;  // Adam, Nadam, Lion: 1 - beta_2
  // Factors that depend on the step (Adam's and Adamax's alpha; Nadam's c0, c1, c2: see the
  // rules above), used where device_step_factor[k] is null.
  float step_factor[kOptimizerStepFactors] = {0.0f, 0.0f, 0.0f};
  // The same factors in memory on the parameter's device, advanced there each step, so an
  // update replayed from a captured graph reads the current ones.
  const float* device_step_factor[kOptimizerStepFactors] = {nullptr, nullptr, nullptr};
  // Per-variable scalars on the parameter's device, written by the optimizer's reductions
  // between the passes of a two-pass kind (Lamb's norms, Adafactor's alpha and divisor).
  const float* device_variable_factor[kOptimizerVariableFactors] = {nullptr, nullptr};
  float rho = 0.0f;               // RMSprop, Adadelta
  float one_minus_rho = 0.0f;     // RMSprop, Adadelta
  float learning_rate_power = 0.0f;  // Ftrl
  float l1 = 0.0f;                   // Ftrl: l1_regularization_strength
  float l2 = 0.0f;                   // Ftrl: l2_regularization_strength + beta / (2 * lr)
  float l2_shrinkage = 0.0f;         // Ftrl: l2_shrinkage_regularization_strength
  float epsilon = 0.0f;
  float epsilon_1 = 0.0f;         // Adafactor: added to g^2
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
GA_HOST_DEVICE GA_INLINE float pow(float x, float y) {
#if defined(__CUDA_ARCH__)
  return ::powf(x, y);
#else
  return std::pow(x, y);
#endif
}
GA_HOST_DEVICE GA_INLINE float abs(float x) { return x < 0.0f ? -x : x; }
// Keras's ops.sign: -1, 0 or 1, NaN for NaN.
GA_HOST_DEVICE GA_INLINE float sign(float x) {
  if (x != x) return x;
  return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
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

// Step-dependent factor k of this update: from the device when it lives there.
GA_HOST_DEVICE GA_INLINE float step_factor(const OptimizerUpdate& u, int k) {
  return u.device_step_factor[k] != nullptr ? *u.device_step_factor[k] : u.step_factor[k];
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
    *p = w - (m_next * step_factor(u, 0)) / (optim_math::sqrt(v_next) + u.epsilon);
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

struct AdagradUpdateFunctor {
  OptimizerUpdate u;
  GA_HOST_DEVICE GA_INLINE void operator()(float g, float* p, float* accumulator, float*,
                                           float*) const {
    if (update_skipped(u)) return;
    g = transform_gradient(u, g);
    const float w = decay_parameter(u, *p);
    const float a_next = *accumulator + g * g;
    *accumulator = a_next;
    *p = w - (u.learning_rate * g) / optim_math::sqrt(a_next + u.epsilon);
  }
};

struct AdamaxUpdateFunctor {
  OptimizerUpdate u;
  GA_HOST_DEVICE GA_INLINE void operator()(float g, float* p, float* m, float* norm,
                                           float*) const {
    if (update_skipped(u)) return;
    g = transform_gradient(u, g);
    const float w = decay_parameter(u, *p);
    const float m_next = *m + (g - *m) * u.one_minus_beta_1;
    const float norm_next = optim_math::maximum(u.beta_2 * *norm, optim_math::abs(g));
    *m = m_next;
    *norm = norm_next;
    *p = w - (m_next * step_factor(u, 0)) / (norm_next + u.epsilon);
  }
};

struct NadamUpdateFunctor {
  OptimizerUpdate u;
  GA_HOST_DEVICE GA_INLINE void operator()(float g, float* p, float* m, float* v, float*) const {
    if (update_skipped(u)) return;
    g = transform_gradient(u, g);
    const float w = decay_parameter(u, *p);
    const float m_next = *m + (g - *m) * u.one_minus_beta_1;
    const float v_next = *v + (g * g - *v) * u.one_minus_beta_2;
    *m = m_next;
    *v = v_next;
    const float m_hat = step_factor(u, 0) * m_next + step_factor(u, 1) * g;
    const float v_hat = v_next * step_factor(u, 2);
    *p = w - (m_hat * u.learning_rate) / (optim_math::sqrt(v_hat) + u.epsilon);
  }
};

struct AdadeltaUpdateFunctor {
  OptimizerUpdate u;
  GA_HOST_DEVICE GA_INLINE void operator()(float g, float* p, float* accumulated_grad,
                                           float* accumulated_delta, float*) const {
    if (update_skipped(u)) return;
    g = transform_gradient(u, g);
    const float w = decay_parameter(u, *p);
    const float a_next = u.rho * *accumulated_grad + u.one_minus_rho * (g * g);
    *accumulated_grad = a_next;
    const float delta = -(optim_math::sqrt(*accumulated_delta + u.epsilon) * g) /
                        optim_math::sqrt(a_next + u.epsilon);
    *accumulated_delta = u.rho * *accumulated_delta + u.one_minus_rho * (delta * delta);
    *p = w + u.learning_rate * delta;
  }
};

struct LionUpdateFunctor {
  OptimizerUpdate u;
  GA_HOST_DEVICE GA_INLINE void operator()(float g, float* p, float* m, float*, float*) const {
    if (update_skipped(u)) return;
    g = transform_gradient(u, g);
    const float w = decay_parameter(u, *p);
    const float direction = optim_math::sign(*m * u.beta_1 + g * u.one_minus_beta_1);
    *p = w - u.learning_rate * direction;
    *m = *m * u.beta_2 + g * u.one_minus_beta_2;
  }
};

struct FtrlUpdateFunctor {
  OptimizerUpdate u;
  GA_HOST_DEVICE GA_INLINE void operator()(float g, float* p, float* accumulator, float* linear,
                                           float*) const {
    if (update_skipped(u)) return;
    g = transform_gradient(u, g);
    const float w = decay_parameter(u, *p);
    const float shrunk = g + 2.0f * u.l2_shrinkage * w;
    const float a = *accumulator;
    const float a_next = a + g * g;
    const float root_next = optim_math::pow(a_next, -u.learning_rate_power);
    const float root = optim_math::pow(a, -u.learning_rate_power);
    const float z = *linear + (shrunk - ((root_next - root) / u.learning_rate) * w);
    *linear = z;
    const float quadratic = root_next / u.learning_rate + 2.0f * u.l2;
    float z_clipped = z;
    if (z_clipped < -u.l1) z_clipped = -u.l1;
    if (z_clipped > u.l1) z_clipped = u.l1;
    *p = (z_clipped - z) / quadratic;
    *accumulator = a_next;
  }
};

struct ScheduleFreeAdamWUpdateFunctor {
  OptimizerUpdate u;
  GA_HOST_DEVICE GA_INLINE void operator()(float g, float* p, float* m, float* v, float*) const {
    if (update_skipped(u)) return;
    g = transform_gradient(u, g);
    const float y = decay_parameter(u, *p);
    const float v_next = *v + (g * g - *v) * u.one_minus_beta_2;
    *v = v_next;
    const float denominator = optim_math::sqrt(v_next / step_factor(u, 1)) + u.epsilon;
    const float m_next = *m - (step_factor(u, 0) * g) / denominator;
    *m = m_next;
    const float weight = step_factor(u, 2);
    const float x = (y - u.one_minus_beta_1 * m_next) / u.beta_1;
    const float x_next = (1.0f - weight) * x + weight * m_next;
    *p = u.one_minus_beta_1 * m_next + u.beta_1 * x_next;
  }
};

struct LambUpdateFunctor {
  OptimizerUpdate u;
  GA_HOST_DEVICE GA_INLINE void operator()(float g, float* p, float* m, float* v, float*) const {
    if (update_skipped(u)) return;
    g = transform_gradient(u, g);
    if (u.pass == OptimizerPass::kSlots) {
      *p = decay_parameter(u, *p);
      *m = *m + (g - *m) * u.one_minus_beta_1;
      *v = *v + (g * g - *v) * u.one_minus_beta_2;
      return;
    }
    const float w_norm = *u.device_variable_factor[0];
    const float update_norm = *u.device_variable_factor[1];
    // Keras's where(w_norm > 0, where(update_norm > 0, w_norm / update_norm, 1), 1).
    const float ratio = (w_norm > 0.0f && update_norm > 0.0f) ? w_norm / update_norm : 1.0f;
    *p = *p - (ratio * u.learning_rate) * lamb_direction(u, *m, *v);
  }
  // The Adam-like step direction before the trust ratio (also what the norm reduces).
  GA_HOST_DEVICE GA_INLINE static float lamb_direction(const OptimizerUpdate& u, float m,
                                                       float v) {
    return (m / step_factor(u, 0)) / (optim_math::sqrt(v / step_factor(u, 1)) + u.epsilon);
  }
};

struct AdafactorUpdateFunctor {
  OptimizerUpdate u;
  // Only slot2 (the velocity) is element-wise; the row/column moments never reach this pass.
  GA_HOST_DEVICE GA_INLINE void operator()(float g, float* p, float*, float*, float* v) const {
    if (update_skipped(u)) return;
    g = transform_gradient(u, g);
    if (u.pass == OptimizerPass::kSlots) {
      *p = decay_parameter(u, *p);
      if (!(u.flags & kOptimizerFactored)) {
        *v = step_factor(u, 0) * *v + step_factor(u, 1) * (g * g + u.epsilon_1);
      }
      return;
    }
    const float unit = g / optim_math::sqrt(*v);
    *p = *p - *u.device_variable_factor[0] * (unit / *u.device_variable_factor[1]);
  }
};

// Calls f(functor) with the functor of u.kind; returns false for an unknown kind.
template <typename F>
GA_INLINE bool with_optimizer_functor(const OptimizerUpdate& u, F&& f) {
  switch (u.kind) {
    case OptimizerKind::kSgd: f(SgdUpdateFunctor{u}); return true;
    case OptimizerKind::kAdam: f(AdamUpdateFunctor{u}); return true;
    case OptimizerKind::kRmsprop: f(RmspropUpdateFunctor{u}); return true;
    case OptimizerKind::kAdagrad: f(AdagradUpdateFunctor{u}); return true;
    case OptimizerKind::kAdamax: f(AdamaxUpdateFunctor{u}); return true;
    case OptimizerKind::kNadam: f(NadamUpdateFunctor{u}); return true;
    case OptimizerKind::kAdadelta: f(AdadeltaUpdateFunctor{u}); return true;
    case OptimizerKind::kLion: f(LionUpdateFunctor{u}); return true;
    case OptimizerKind::kFtrl: f(FtrlUpdateFunctor{u}); return true;
    case OptimizerKind::kLamb: f(LambUpdateFunctor{u}); return true;
    case OptimizerKind::kAdafactor: f(AdafactorUpdateFunctor{u}); return true;
    case OptimizerKind::kScheduleFreeAdamW: f(ScheduleFreeAdamWUpdateFunctor{u}); return true;
  }
  return false;
}

}  // namespace kernels
}  // namespace gpuaccel
