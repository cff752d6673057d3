// Reductions over any set of axes on the GPU. Many outputs: one block per output (grid-stride
// over outputs). Few outputs over many elements (the sum of a whole tensor, a bias gradient's
// column sums): each output's elements are split over several blocks and their partials combined
// by a second launch in a fixed order, so the GPU is filled and the result is deterministic.
// Float sums accumulate in float64 as on the CPU; the per-step hot path that used to sum in
// float64 here, the loss-scale finite check, has its own integer kernel (nonfinite_check.cu).
#include <algorithm>
#include <string>
#include <type_traits>

#include "backends/cuda/context.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/reduce_split.h"
#include "backends/cuda/strided.cuh"
#include "kernels/reduce_functors.h"

namespace gpuaccel::cuda {

namespace {

constexpr int kReduceThreads = 256;
constexpr int64_t kMaxGridBlocks = 65535;

// The value a reduction carries: the accumulator, or it with its index for argmax/argmin.
template <typename Acc, bool kArg>
using ReduceValue = std::conditional_t<kArg, kernels::IndexedValue<Acc>, Acc>;

// Reads x: `base(o)` is output o's element offset in x, `(base, r)` its r-th reduced element.
template <typename T, typename Acc, bool kArg>
struct InputLoad {
  const T* x;
  Geometry<2> kept;
  Geometry<1> red;
  __device__ __forceinline__ int64_t base(int64_t o) const {
    int64_t ko[2];
    kept.offsets(o, ko);
    return ko[1];
  }
  __device__ __forceinline__ ReduceValue<Acc, kArg> operator()(int64_t base, int64_t r) const {
    int64_t ro[1];
    red.offsets(r, ro);
    const Acc v = static_cast<Acc>(Elem<T>::load(x[base + ro[0]]));
    if constexpr (kArg) {
      return kernels::IndexedValue<Acc>{v, r};
    } else {
      return v;
    }
  }
};

// Reads pass 1's partials: `splits` consecutive values per output.
template <typename Value>
struct PartialLoad {
  const Value* partials;
  int64_t splits;
  __device__ __forceinline__ int64_t base(int64_t o) const { return o * splits; }
  __device__ __forceinline__ Value operator()(int64_t base, int64_t r) const { return partials[base + r]; }
};

// Writes pass 1's partial of work item w.
template <typename Value>
struct PartialStore {
  Value* partials;
  __device__ __forceinline__ void operator()(int64_t w, int64_t, const Value& v) const { partials[w] = v; }
};

// Writes output o: the index for argmax/argmin, the sum divided by `count` for a mean.
template <typename O, typename Acc, bool kArg, bool kMean>
struct OutputStore {
  O* out;
  Geometry<2> kept;
  int64_t count;
  __device__ __forceinline__ void operator()(int64_t, int64_t o, const ReduceValue<Acc, kArg>& v) const {
    int64_t ko[2];
    kept.offsets(o, ko);
    if constexpr (kArg) {
      out[ko[0]] = static_cast<O>(v.index);
    } else if constexpr (kMean) {
      out[ko[0]] = Elem<O>::store(static_cast<typename Elem<O>::Compute>(v / static_cast<Acc>(count)));
    } else {
      out[ko[0]] = Elem<O>::store(static_cast<typename Elem<O>::Compute>(v));
    }
  }
};

// Work item w = (output w / splits, chunk w % splits of its n_red elements): threads stride over
// the chunk and merge with the combiners of kernels/reduce_functors.h (associative and
// commutative, so the merge order cannot change argmax ties), then a shared-memory tree.
template <typename Value, typename C, typename Load, typename Store>
__global__ void reduce_kernel(int64_t n_work, int64_t splits, int64_t n_red, Load load, Store store) {
  __shared__ Value partial[kReduceThreads];
  const C combine{};
  const int64_t chunk = (n_red + splits - 1) / splits;
  for (int64_t w = blockIdx.x; w < n_work; w += gridDim.x) {
    const int64_t o = w / splits;
    const int64_t begin = (w % splits) * chunk;
    const int64_t end = begin + chunk < n_red ? begin + chunk : n_red;
    const int64_t base = load.base(o);
    Value acc = C::identity();
    for (int64_t r = begin + threadIdx.x; r < end; r += blockDim.x) acc = combine(acc, load(base, r));
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) partial[threadIdx.x] = combine(partial[threadIdx.x], partial[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) store(w, o, partial[0]);
    __syncthreads();  // `partial` is reused by the next work item
  }
}

template <typename Value, typename C, typename Load, typename Store>
void launch_pass(int64_t n_work, int64_t splits, int64_t n_red, const Load& load, const Store& store,
                 cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(n_work, kMaxGridBlocks));
  reduce_kernel<Value, C, Load, Store><<<blocks, kReduceThreads, 0, stream>>>(n_work, splits, n_red, load, store);
  GA_CUDA_CHECK(cudaGetLastError());
}

template <typename T, typename O, typename Acc, typename C, bool kArg, bool kMean>
void launch_reduce(int device, const TensorView& x, const TensorView& out, const Geometry<2>& kept,
                   int64_t n_out, const Geometry<1>& red, int64_t n_red, cudaStream_t stream) {
  using Value = ReduceValue<Acc, kArg>;
  const InputLoad<T, Acc, kArg> load{static_cast<const T*>(x.data), kept, red};
  const OutputStore<O, Acc, kArg, kMean> store{static_cast<O*>(out.data), kept, n_red};
  const int64_t splits = reduce_splits(n_out, n_red);
  if (splits == 1) return launch_pass<Value, C>(n_out, 1, n_red, load, store, stream);
  // The scratch buffer may be freed when this returns: the pool orders reuse on this stream.
  ScratchBuffer partials(device, static_cast<size_t>(n_out * splits) * sizeof(Value));
  Value* p = static_cast<Value*>(partials.get());
  launch_pass<Value, C>(n_out * splits, splits, n_red, load, PartialStore<Value>{p}, stream);
  launch_pass<Value, C>(n_out, 1, splits, PartialLoad<Value>{p, splits}, store, stream);
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
  // A whole-tensor sum of a contiguous NHWC tensor becomes one reduced dimension: one division
  // per element instead of four.
  merge_dimensions(&kept);
  merge_dimensions(&red);
  const cudaStream_t stream = device_stream(device);

  auto run = [&](auto tag, auto sum_acc, auto cmp_acc) {
    using T = decltype(tag);
    using S = decltype(sum_acc);  // sum accumulator
    using A = decltype(cmp_acc);  // max/min/arg accumulator
    switch (op) {
      case ReduceOp::kSum:
        return launch_reduce<T, T, S, kernels::SumCombiner<S>, false, false>(device, x, out, kept, n_out, red, n_red, stream);
      case ReduceOp::kMean:
        return launch_reduce<T, T, S, kernels::SumCombiner<S>, false, true>(device, x, out, kept, n_out, red, n_red, stream);
      case ReduceOp::kMax:
        return launch_reduce<T, T, A, kernels::MaxCombiner<A>, false, false>(device, x, out, kept, n_out, red, n_red, stream);
      case ReduceOp::kMin:
        return launch_reduce<T, T, A, kernels::MinCombiner<A>, false, false>(device, x, out, kept, n_out, red, n_red, stream);
      case ReduceOp::kArgMax:
        return launch_reduce<T, int64_t, A, kernels::ArgMaxCombiner<A>, true, false>(device, x, out, kept, n_out, red, n_red, stream);
      case ReduceOp::kArgMin:
        return launch_reduce<T, int64_t, A, kernels::ArgMinCombiner<A>, true, false>(device, x, out, kept, n_out, red, n_red, stream);
    }
    throw BackendError(CudaStatus::kInvalidArgument, "reduce: unknown op " + std::to_string(static_cast<int>(op)));
  };
  switch (x.dtype) {
    case DType::kFloat32: return run(float{}, double{}, float{});
    case DType::kFloat64: return run(double{}, double{}, double{});
    case DType::kFloat16: return run(Half{}, double{}, float{});
    case DType::kBFloat16: return run(BFloat16{}, double{}, float{});
    case DType::kInt32: return run(int32_t{}, int64_t{}, int32_t{});
    case DType::kInt64: return run(int64_t{}, int64_t{}, int64_t{});
    // The narrow integers reach only max/min/argmax/argmin (the op sums them in int64), which
    // compare them exactly in int32.
    case DType::kUInt8: return run(uint8_t{}, int64_t{}, int32_t{});
    case DType::kInt8: return run(int8_t{}, int64_t{}, int32_t{});
    case DType::kInt16: return run(int16_t{}, int64_t{}, int32_t{});
    default: break;
  }
  throw BackendError(CudaStatus::kInvalidArgument,
                     std::string("reduce: unsupported dtype ") + dtype_name(x.dtype));
}

}  // namespace gpuaccel::cuda
