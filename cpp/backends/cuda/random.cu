// Counter-based random numbers and dropout on the GPU: element i gets the Philox-4x32-10 value
// of counter (offset + i) under the seed (kernels/philox.h, kernels/dropout_functor.h), so a
// seed gives the same numbers here as on the CPU.
#include "backends/cuda/context.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/strided.cuh"
#include "kernels/dropout_functor.h"
#include "kernels/philox.h"

namespace gpuaccel::cuda {

namespace {

template <typename T, typename F>
struct RandomBody {
  T* dst;
  F f;
  template <typename I>
  __device__ __forceinline__ void operator()(I i, const I (&off)[1]) const {
    dst[off[0]] = Elem<T>::store(f(i));
  }
};

template <typename T>
struct DropoutBody {
  const T* x;
  T* y;
  uint8_t* mask;
  kernels::DropoutFunctor f;
  template <typename I>
  __device__ __forceinline__ void operator()(I i, const I (&off)[3]) const {
    const kernels::DropoutResult r = f(i, static_cast<float>(Elem<T>::load(x[off[1]])));
    y[off[0]] = Elem<T>::store(static_cast<typename Elem<T>::Compute>(r.y));
    mask[off[2]] = r.keep;
  }
};

template <typename T>
constexpr int uniform_bits() {
  if constexpr (std::is_same_v<T, Half>) return kernels::kUniformBitsFloat16;
  if constexpr (std::is_same_v<T, BFloat16>) return kernels::kUniformBitsBFloat16;
  return kernels::kUniformBitsFloat32;
}

}  // namespace

void random(int device, RandomDistribution distribution, uint64_t seed, uint64_t offset,
            const TensorView& dst) {
  GA_CUDA_REQUIRE(dst.is_contiguous(), "random: dst must be contiguous");
  const TensorView* views[1] = {&dst};
  dispatch_floating_or_float64(dst.dtype, "random", [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(dst.data);
    if (distribution == RandomDistribution::kNormal) {
      launch_strided(views, RandomBody<T, kernels::NormalFunctor>{out, {seed, offset}},
                     device_stream(device));
    } else {
      launch_strided(views,
                     RandomBody<T, kernels::UniformFunctor>{out, {seed, offset, uniform_bits<T>()}},
                     device_stream(device));
    }
  });
}

void dropout(int device, const TensorView& x, double rate, uint64_t seed, uint64_t offset,
             const TensorView& y, const TensorView& mask) {
  GA_CUDA_REQUIRE(rate >= 0.0 && rate < 1.0, "dropout: rate must be in [0, 1)");
  GA_CUDA_REQUIRE(x.dtype == y.dtype, "dropout: x and y dtypes differ");
  GA_CUDA_REQUIRE(mask.dtype == DType::kUInt8 || mask.dtype == DType::kBool,
                  "dropout: mask must be uint8");
  const TensorView* views[3] = {&y, &x, &mask};
  const kernels::DropoutFunctor f = kernels::DropoutFunctor::make(rate, seed, offset);
  dispatch_floating(x.dtype, "dropout", [&](auto tag) {
    using T = decltype(tag);
    launch_strided(views,
                   DropoutBody<T>{static_cast<const T*>(x.data), static_cast<T*>(y.data),
                                  static_cast<uint8_t*>(mask.data), f},
                   device_stream(device));
  });
}

}  // namespace gpuaccel::cuda
