// Unary element-wise ops and their gradients on the GPU: grid-stride launches over N-d strided
// views (strided.cuh) of the same functors the CPU loops run (kernels/unary_functors.h).
// float16/bfloat16 are loaded as float32, computed in float32 and stored rounded to nearest even.
#include <string>
#include <type_traits>

#include "backends/cuda/context.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/strided.cuh"
#include "kernels/unary_functors.h"

namespace gpuaccel::cuda {

namespace {

template <typename T, typename F>
struct UnaryBody {
  const T* x;
  T* y;
  F f;
  template <typename I>
  __device__ __forceinline__ void operator()(I, const I (&off)[2]) const {
    using E = Elem<T>;
    y[off[0]] = E::store(f(E::load(x[off[1]])));
  }
};

template <typename T, typename F>
struct UnaryBackwardBody {
  const T* x;
  const T* y;
  const T* dy;
  T* dx;
  F f;
  template <typename I>
  __device__ __forceinline__ void operator()(I, const I (&off)[4]) const {
    using E = Elem<T>;
    dx[off[0]] = E::store(f.backward(E::load(x[off[1]]), E::load(y[off[2]]), E::load(dy[off[3]])));
  }
};

// Calls g(functor) with the functor of `op`.
template <typename G>
void with_unary_functor(UnaryOp op, G&& g) {
  using namespace kernels;
  switch (op) {
    case UnaryOp::kNeg: return g(NegFunctor{});
    case UnaryOp::kExp: return g(ExpFunctor{});
    case UnaryOp::kLog: return g(LogFunctor{});
    case UnaryOp::kSqrt: return g(SqrtFunctor{});
    case UnaryOp::kRsqrt: return g(RsqrtFunctor{});
    case UnaryOp::kAbs: return g(AbsFunctor{});
    case UnaryOp::kSquare: return g(SquareFunctor{});
    case UnaryOp::kReciprocal: return g(ReciprocalFunctor{});
    case UnaryOp::kRelu: return g(ReluFunctor{});
    case UnaryOp::kSigmoid: return g(SigmoidFunctor{});
    case UnaryOp::kTanh: return g(TanhFunctor{});
    case UnaryOp::kGelu: return g(GeluFunctor{});
    case UnaryOp::kSin: return g(SinFunctor{});
    case UnaryOp::kCos: return g(CosFunctor{});
    case UnaryOp::kTan: return g(TanFunctor{});
    case UnaryOp::kAsin: return g(AsinFunctor{});
    case UnaryOp::kAcos: return g(AcosFunctor{});
    case UnaryOp::kAtan: return g(AtanFunctor{});
    case UnaryOp::kSinh: return g(SinhFunctor{});
    case UnaryOp::kCosh: return g(CoshFunctor{});
    case UnaryOp::kAsinh: return g(AsinhFunctor{});
    case UnaryOp::kAcosh: return g(AcoshFunctor{});
    case UnaryOp::kAtanh: return g(AtanhFunctor{});
    case UnaryOp::kErf: return g(ErfFunctor{});
  }
  throw BackendError(CudaStatus::kInvalidArgument,
                     "unary: unknown op " + std::to_string(static_cast<int>(op)));
}

// The functors that are also defined on int32/int64 (the others call float math).
template <typename F>
constexpr bool kIntegerUnary = std::is_same_v<F, kernels::NegFunctor> ||
                               std::is_same_v<F, kernels::AbsFunctor> ||
                               std::is_same_v<F, kernels::SquareFunctor>;

}  // namespace

void unary(int device, UnaryOp op, const TensorView& x, const TensorView& y) {
  GA_CUDA_REQUIRE(x.dtype == y.dtype, "unary: x and y dtypes differ");
  const TensorView* views[2] = {&y, &x};
  const cudaStream_t stream = device_stream(device);
  with_unary_functor(op, [&](auto f) {
    using F = decltype(f);
    auto run = [&](auto tag) {
      using T = decltype(tag);
      launch_strided(views, UnaryBody<T, F>{static_cast<const T*>(x.data), static_cast<T*>(y.data), f},
                     stream);
    };
    if constexpr (kIntegerUnary<F>) {
      if (x.dtype == DType::kInt32) return run(int32_t{});
      if (x.dtype == DType::kInt64) return run(int64_t{});
    }
    dispatch_floating_or_float64(x.dtype, "unary", run);
  });
}

void unary_backward(int device, UnaryOp op, const TensorView& x, const TensorView& y,
                    const TensorView& dy, const TensorView& dx) {
  GA_CUDA_REQUIRE(x.dtype == y.dtype && x.dtype == dy.dtype && x.dtype == dx.dtype,
                  "unary_backward: dtypes differ");
  const TensorView* views[4] = {&dx, &x, &y, &dy};
  const cudaStream_t stream = device_stream(device);
  with_unary_functor(op, [&](auto f) {
    using F = decltype(f);
    dispatch_floating_or_float64(x.dtype, "unary_backward", [&](auto tag) {
      using T = decltype(tag);
      launch_strided(views,
                     UnaryBackwardBody<T, F>{static_cast<const T*>(x.data), static_cast<const T*>(y.data),
                                             static_cast<const T*>(dy.data), static_cast<T*>(dx.data), f},
                     stream);
    });
  });
}

}  // namespace gpuaccel::cuda
