// Copies with any strides and any dtype conversion (contiguous(), casts, strided assignment),
// fills and arange on the GPU. Conversions follow the CPU backend: 16-bit floats go through the
// exact roundings of kernels/half_conversions.h, float -> int truncates toward zero, -> bool is
// != 0.
#include <type_traits>

#include "backends/cuda/context.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/strided.cuh"
#include "kernels/fill.h"

namespace gpuaccel::cuda {

namespace {

// Storage value -> a plain arithmetic value, and back.
template <typename T>
__host__ __device__ __forceinline__ auto to_arith(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return v.to_float();
  } else {
    return v;
  }
}
template <typename D, typename S>
__host__ __device__ __forceinline__ D from_arith(S v) {
  if constexpr ((std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) && std::is_same_v<S, double>) {
    return D::from_float(double_to_float_round_to_odd(v));  // one rounding, as the CPU's
  } else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) {
    return D::from_float(static_cast<float>(v));
  } else if constexpr (std::is_same_v<D, bool>) {
    return v != S(0);
  } else {
    return static_cast<D>(v);
  }
}

template <typename S, typename D>
struct CastBody {
  const S* src;
  D* dst;
  template <typename I>
  __device__ __forceinline__ void operator()(I, const I (&off)[2]) const {
    dst[off[0]] = from_arith<D>(to_arith(src[off[1]]));
  }
};

template <typename T>
struct GenerateBody {
  T* dst;
  kernels::FillFunctor<T> f;
  template <typename I>
  __device__ __forceinline__ void operator()(I i, const I (&off)[1]) const {
    dst[off[0]] = f(i);
  }
};

template <typename T>
struct ArangeBody {
  T* dst;
  double start, step;
  template <typename I>
  __device__ __forceinline__ void operator()(I i, const I (&off)[1]) const {
    dst[off[0]] = from_arith<T>(start + static_cast<double>(i) * step);
  }
};

}  // namespace

void copy(int device, const TensorView& src, const TensorView& dst) {
  const TensorView* views[2] = {&dst, &src};
  const cudaStream_t stream = device_stream(device);
  if (src.dtype == dst.dtype && src.is_contiguous() && dst.is_contiguous()) {
    const size_t bytes = static_cast<size_t>(src.numel()) * dtype_size(src.dtype);
    if (bytes > 0) {
      GA_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, bytes, cudaMemcpyDeviceToDevice, stream));
    }
    return;
  }
  dispatch_all(src.dtype, [&](auto s) {
    using S = decltype(s);
    dispatch_all(dst.dtype, [&](auto d) {
      using D = decltype(d);
      launch_strided(views, CastBody<S, D>{static_cast<const S*>(src.data), static_cast<D*>(dst.data)},
                     stream);
    });
  });
}

void fill(int device, const TensorView& dst, double value) {
  const TensorView* views[1] = {&dst};
  dispatch_all(dst.dtype, [&](auto tag) {
    using T = decltype(tag);
    launch_strided(views, GenerateBody<T>{static_cast<T*>(dst.data), {from_arith<T>(value)}},
                   device_stream(device));
  });
}

void arange(int device, const TensorView& dst, double start, double step) {
  const TensorView* views[1] = {&dst};
  dispatch_all(dst.dtype, [&](auto tag) {
    using T = decltype(tag);
    launch_strided(views, ArangeBody<T>{static_cast<T*>(dst.data), start, step}, device_stream(device));
  });
}

}  // namespace gpuaccel::cuda
