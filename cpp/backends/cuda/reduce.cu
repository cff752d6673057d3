// Reductions over any set of axes on the GPU: one block per output element (grid-stride over
// outputs), threads stride over the reduced elements and merge with the combiners of
// kernels/reduce_functors.h (associative and commutative, so the merge order cannot change
// argmax ties), then a shared-memory tree. Float sums accumulate in float64 as on the CPU.
#include <string>
#include <type_traits>

#include "backends/cuda/context.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/strided.cuh"
#include "kernels/reduce_functors.h"

namespace gpuaccel::cuda {

namespace {

constexpr int kReduceThreads = 256;

template <typename T, typename O, typename Acc, typename C, bool kArg, bool kMean>
__global__ void reduce_kernel(const T* x, O* out, int64_t n_out, Geometry<2> kept, Geometry<1> red,
                              int64_t n_red) {
  using Value = std::conditional_t<kArg, kernels::IndexedValue<Acc>, Acc>;
  __shared__ Value partial[kReduceThreads];
  const C combine{};
  for (int64_t o = blockIdx.x; o < n_out; o += gridDim.x) {
    int64_t ko[2];
    kept.offsets(o, ko);
    Value acc = C::identity();
    for (int64_t r = threadIdx.x; r < n_red; r += blockDim.x) {
      int64_t ro[1];
      red.offsets(r, ro);
      const Acc v = static_cast<Acc>(Elem<T>::load(x[ko[1] + ro[0]]));
      if constexpr (kArg) {
        acc = combine(acc, kernels::IndexedValue<Acc>{v, r});
      } else {
        acc = combine(acc, v);
      }
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) partial[threadIdx.x] = combine(partial[threadIdx.x], partial[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      if constexpr (kArg) {
        out[ko[0]] = static_cast<O>(partial[0].index);
      } else if constexpr (kMean) {
        out[ko[0]] = Elem<O>::store(static_cast<typename Elem<O>::Compute>(partial[0] / static_cast<Acc>(n_red)));
      } else {
        out[ko[0]] = Elem<O>::store(static_cast<typename Elem<O>::Compute>(partial[0]));
      }
    }
    __syncthreads();  // `partial` is reused by the next output
  }
}

template <typename T, typename O, typename Acc, typename C, bool kArg, bool kMean>
void launch_reduce(const TensorView& x, const TensorView& out, const Geometry<2>& kept,
                   int64_t n_out, const Geometry<1>& red, int64_t n_red, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(n_out, 65535));
  reduce_kernel<T, O, Acc, C, kArg, kMean><<<blocks, kReduceThreads, 0, stream>>>(
      static_cast<const T*>(x.data), static_cast<O*>(out.data), n_out, kept, red, n_red);
  GA_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void reduce(int device, ReduceOp op, const TensorView& x, uint32_t axes_mask, const TensorView& out) {
  GA_CUDA_REQUIRE(out.ndim == x.ndim, "reduce: out must have x's ndim");
  const bool arg = op == ReduceOp::kArgMax || op == ReduceOp::kArgMin;
  Geometry<2> kept;
  Geometry<1> red;
  int64_t n_out = 1, n_red = 1;
  int reduced_axes = 0;
  for (int d = 0; d < x.ndim; ++d) {
    if (axes_mask & (1u << d)) {
      GA_CUDA_REQUIRE(out.shape[d] == 1, "reduce: reduced dimensions must be 1 in out");
      red.shape[red.ndim] = x.shape[d];
      red.strides[0][red.ndim++] = x.strides[d];
      n_red *= x.shape[d];
      ++reduced_axes;
    } else {
      GA_CUDA_REQUIRE(out.shape[d] == x.shape[d], "reduce: kept dimensions must match");
      kept.shape[kept.ndim] = x.shape[d];
      kept.strides[0][kept.ndim] = out.strides[d];
      kept.strides[1][kept.ndim++] = x.strides[d];
      n_out *= x.shape[d];
    }
  }
  if (arg) {
    GA_CUDA_REQUIRE(reduced_axes == 1, "reduce: argmax/argmin take exactly one axis");
    GA_CUDA_REQUIRE(out.dtype == DType::kInt64, "reduce: argmax/argmin write int64");
    GA_CUDA_REQUIRE(n_red > 0, "reduce: argmax/argmin of an empty axis");
  } else {
    GA_CUDA_REQUIRE(out.dtype == x.dtype, "reduce: out dtype must be x's");
  }
  if (n_out == 0) return;
  const cudaStream_t stream = device_stream(device);

  auto run = [&](auto tag, auto sum_acc, auto cmp_acc) {
    using T = decltype(tag);
    using S = decltype(sum_acc);  // sum accumulator
    using A = decltype(cmp_acc);  // max/min/arg accumulator
    switch (op) {
      case ReduceOp::kSum:
        return launch_reduce<T, T, S, kernels::SumCombiner<S>, false, false>(x, out, kept, n_out, red, n_red, stream);
      case ReduceOp::kMean:
        return launch_reduce<T, T, S, kernels::SumCombiner<S>, false, true>(x, out, kept, n_out, red, n_red, stream);
      case ReduceOp::kMax:
        return launch_reduce<T, T, A, kernels::MaxCombiner<A>, false, false>(x, out, kept, n_out, red, n_red, stream);
      case ReduceOp::kMin:
        return launch_reduce<T, T, A, kernels::MinCombiner<A>, false, false>(x, out, kept, n_out, red, n_red, stream);
      case ReduceOp::kArgMax:
        return launch_reduce<T, int64_t, A, kernels::ArgMaxCombiner<A>, true, false>(x, out, kept, n_out, red, n_red, stream);
      case ReduceOp::kArgMin:
        return launch_reduce<T, int64_t, A, kernels::ArgMinCombiner<A>, true, false>(x, out, kept, n_out, red, n_red, stream);
    }
    throw BackendError(CudaStatus::kInvalidArgument, "reduce: unknown op " + std::to_string(static_cast<int>(op)));
  };
  switch (x.dtype) {
    case DType::kFloat32: return run(float{}, double{}, float{});
    case DType::kFloat16: return run(Half{}, double{}, float{});
    case DType::kBFloat16: return run(BFloat16{}, double{}, float{});
    case DType::kInt32: return run(int32_t{}, int64_t{}, int32_t{});
    case DType::kInt64: return run(int64_t{}, int64_t{}, int64_t{});
    default: break;
  }
  throw BackendError(CudaStatus::kInvalidArgument,
                     std::string("reduce: unsupported dtype ") + dtype_name(x.dtype));
}

}  // namespace gpuaccel::cuda
