// Binary element-wise ops on the GPU (operands already broadcast by the frontend: stride 0 on
// broadcast dimensions): grid-stride launches of kernels/binary_functors.h. Comparisons write
// 1/0 in the output dtype, which is the inputs' dtype or bool.
#include <string>
#include <type_traits>

#include "backends/cuda/context.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/strided.cuh"
#include "kernels/binary_functors.h"

namespace gpuaccel::cuda {

namespace {

template <typename T, typename O, typename F>
struct BinaryBody {
  const T* a;
  const T* b;
  O* out;
  F f;
  template <typename I>
  __device__ __forceinline__ void operator()(I, const I (&off)[3]) const {
    const auto r = f(Elem<T>::load(a[off[1]]), Elem<T>::load(b[off[2]]));
    if constexpr (std::is_same_v<O, bool>) {
      out[off[0]] = static_cast<bool>(r);
    } else {
      using C = typename Elem<O>::Compute;
      out[off[0]] = Elem<O>::store(static_cast<C>(r));
    }
  }
};

template <typename G>
void with_binary_functor(BinaryOp op, G&& g) {
  using namespace kernels;
  switch (op) {
    case BinaryOp::kAdd: return g(AddFunctor{});
    case BinaryOp::kSub: return g(SubFunctor{});
    case BinaryOp::kMul: return g(MulFunctor{});
    case BinaryOp::kDiv: return g(DivFunctor{});
    case BinaryOp::kPow: return g(PowFunctor{});
    case BinaryOp::kMaximum: return g(MaximumFunctor{});
    case BinaryOp::kMinimum: return g(MinimumFunctor{});
    case BinaryOp::kEqual: return g(EqualFunctor{});
    case BinaryOp::kGreater: return g(GreaterFunctor{});
    case BinaryOp::kLess: return g(LessFunctor{});
    case BinaryOp::kAtan2: return g(Atan2Functor{});
  }
  throw BackendError(CudaStatus::kInvalidArgument,
                     "binary: unknown op " + std::to_string(static_cast<int>(op)));
}

template <typename F>
constexpr bool kComparison = std::is_same_v<F, kernels::EqualFunctor> ||
                             std::is_same_v<F, kernels::GreaterFunctor> ||
                             std::is_same_v<F, kernels::LessFunctor>;
// Div, pow and atan2 are float-only (integer division semantics are not NumPy's true_divide).
template <typename F>
constexpr bool kIntegerBinary = !std::is_same_v<F, kernels::DivFunctor> &&
                                !std::is_same_v<F, kernels::PowFunctor> &&
                                !std::is_same_v<F, kernels::Atan2Functor>;

}  // namespace

void binary(int device, BinaryOp op, const TensorView& a, const TensorView& b, const TensorView& out) {
  GA_CUDA_REQUIRE(a.dtype == b.dtype, "binary: a and b dtypes differ");
  const TensorView* views[3] = {&out, &a, &b};
  const cudaStream_t stream = device_stream(device);
  with_binary_functor(op, [&](auto f) {
    using F = decltype(f);
    auto run = [&](auto tag) {
      using T = decltype(tag);
      auto launch = [&](auto out_tag) {
        using O = decltype(out_tag);
        launch_strided(views,
                       BinaryBody<T, O, F>{static_cast<const T*>(a.data), static_cast<const T*>(b.data),
                                           static_cast<O*>(out.data), f},
                       stream);
      };
      if constexpr (kComparison<F>) {
        if (out.dtype == DType::kBool) return launch(bool{});
      }
      GA_CUDA_REQUIRE(out.dtype == a.dtype, "binary: out dtype differs from the inputs'");
      launch(T{});
    };
    if constexpr (kIntegerBinary<F>) {
      if (a.dtype == DType::kInt32) return run(int32_t{});
      if (a.dtype == DType::kInt64) return run(int64_t{});
    }
    dispatch_floating_or_float64(a.dtype, "binary", run);
  });
}

}  // namespace gpuaccel::cuda
