// The CPU side of backends/cpu/elementwise.h: dtype dispatch and OpenMP loops that walk strided
// views and apply the element functors of cpp/kernels (the same ones the CUDA backend launches).
//
// One loop engine serves every element-wise kernel: the operands' dimensions are coalesced
// (size-1 dimensions dropped, neighbours merged where every operand is contiguous across them),
// so a contiguous tensor becomes one flat run, a transposed or broadcast one a few nested runs.
// The flat index range is split into chunks (one per thread, none below kSerialThreshold); each
// chunk finds its N-d start index once and then walks rows of the innermost dimension, with a
// unit-stride inner loop when every operand is contiguous along it.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/bitwise_dispatch.h"
#include "backends/cpu/bf16_convert.h"
#include "backends/cpu/cpu_threads.h"
#include "backends/cpu/elementwise.h"
#include "backends/op_names.h"
#include "core/errors.h"
#include "kernels/binary_functors.h"
#include "kernels/dropout_functor.h"
#include "kernels/fill.h"
#include "kernels/half_conversions.h"
#include "kernels/philox.h"
#include "kernels/reduce_functors.h"
#include "kernels/unary_functors.h"

namespace gpuaccel::cpu {
namespace {

// Below this many elements a loop runs on the calling thread (cpu_threads.h).
constexpr int64_t kSerialThreshold = kParallelMinElements;

// ---------------------------------------------------------------------------------------------
// Storage types, loads, stores and conversions
// ---------------------------------------------------------------------------------------------

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<S>{}) with S the storage type of `dtype`.
template <typename F>
void dispatch_storage(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32: f(TypeTag<float>{}); return;
    case DType::kFloat16: f(TypeTag<Half>{}); return;
    case DType::kBFloat16: f(TypeTag<BFloat16>{}); return;
    case DType::kInt32: f(TypeTag<int32_t>{}); return;
    case DType::kInt64: f(TypeTag<int64_t>{}); return;
    case DType::kUInt8: f(TypeTag<uint8_t>{}); return;
    case DType::kInt8: f(TypeTag<int8_t>{}); return;
    case DType::kInt16: f(TypeTag<int16_t>{}); return;
    case DType::kBool: f(TypeTag<bool>{}); return;
    case DType::kFloat64: f(TypeTag<double>{}); return;
  }
  throw_error(ErrorCode::kInternal, "elementwise", "unknown dtype");
}

template <typename S>
constexpr bool kIsFloatStorage = std::is_same_v<S, float> || std::is_same_v<S, Half> ||
                                 std::is_same_v<S, BFloat16> || std::is_same_v<S, double>;

// The type arithmetic happens in: float for the 16- and 32-bit floating storage types, else the
// type itself (double for float64, whose results must keep its precision).
template <typename S>
using ComputeOf = std::conditional_t<kIsFloatStorage<S> && !std::is_same_v<S, double>, float, S>;

template <typename S>
inline ComputeOf<S> load(const S& v) {
  if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
    return v.to_float();
  } else {
    return v;
  }
}

// Stores a value of S's compute type (f16/bf16 round to nearest even).
template <typename S>
inline S store(ComputeOf<S> v) {
  if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
    return S::from_float(v);
  } else {
    return v;
  }
}

// Truncation toward zero with saturation at the type's range and NaN -> 0 (the behaviour of
// CUDA's round-toward-zero conversions, so both backends agree where C++ leaves it undefined).
template <typename I>
inline I saturating_trunc(double v) {
  if (v != v) return I(0);
  constexpr double kLow = static_cast<double>(std::numeric_limits<I>::lowest());
  constexpr double kHigh = static_cast<double>(std::numeric_limits<I>::max());
  if (v <= kLow) return std::numeric_limits<I>::lowest();
  if (v >= kHigh) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

// A double (a floating value, exactly widened, or a fill/arange value) to storage type D.
template <typename D>
inline D from_double(double v) {
  if constexpr (std::is_same_v<D, bool>) {
    return v != 0.0;  // NaN != 0 is true, as NumPy
  } else if constexpr (std::is_same_v<D, double>) {
    return v;
  } else if constexpr (std::is_same_v<D, float>) {
    return static_cast<float>(v);
  } else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) {
    // Through a float rounded to odd: one correct rounding of `v` (a float64 element or a user
    // scalar), where the nearest float could round twice.
    return D::from_float(double_to_float_round_to_odd(v));
  } else {
    return saturating_trunc<D>(v);
  }
}

// Element conversion for copy(): any storage type to any storage type.
template <typename D, typename S>
inline D convert(const S& v) {
  if constexpr (std::is_same_v<S, D>) {
    return v;
  } else if constexpr (kIsFloatStorage<S>) {
    return from_double<D>(static_cast<double>(load(v)));
  } else if constexpr (std::is_same_v<D, bool>) {
    return v != S(0);
  } else if constexpr (std::is_same_v<D, double>) {
    return static_cast<double>(v);  // integer to float64: rounds once (exact below 2^53)
  } else if constexpr (kIsFloatStorage<D>) {
    // Integer to floating: int -> float rounds once (correctly); f16/bf16 round from that float.
    return store<D>(static_cast<float>(v));
  } else {
    return static_cast<D>(v);  // integer to integer: two's-complement wrap, as NumPy
  }
}

// ---------------------------------------------------------------------------------------------
// The loop engine
// ---------------------------------------------------------------------------------------------

// N operands with the same shape, coalesced. Dimension ndim - 1 is the innermost.
template <int N>
struct Walk {
  int ndim = 0;
  int64_t shape[kMaxDims] = {0};
  int64_t strides[N][kMaxDims] = {{0}};
  int64_t numel = 1;
};

// `views[0]` gives the shape; every view must have it.
template <int N>
Walk<N> make_walk(const TensorView* const (&views)[N]) {
  Walk<N> w;
  const TensorView& ref = *views[0];
  for (int d = 0; d < ref.ndim; ++d) {
    w.numel *= ref.shape[d];
    if (ref.shape[d] == 1) continue;  // size-1 dimensions never move a pointer
    if (w.ndim > 0) {
      // Merge into the previous kept dimension when every operand steps across both as one.
      const int p = w.ndim - 1;
      bool mergeable = true;
      for (int j = 0; j < N; ++j) {
        if (w.strides[j][p] != views[j]->strides[d] * ref.shape[d]) mergeable = false;
      }
      if (mergeable) {
        w.shape[p] *= ref.shape[d];
        for (int j = 0; j < N; ++j) w.strides[j][p] = views[j]->strides[d];
        continue;
      }
    }
    w.shape[w.ndim] = ref.shape[d];
    for (int j = 0; j < N; ++j) w.strides[j][w.ndim] = views[j]->strides[d];
    ++w.ndim;
  }
  if (w.ndim == 0) {  // a scalar, or all dimensions of size 1 (or an empty tensor)
    w.ndim = 1;
    w.shape[0] = w.numel;
    for (int j = 0; j < N; ++j) w.strides[j][0] = 1;
  }
  return w;
}

// Number of chunks a loop of n elements is split into.
inline int64_t num_chunks(int64_t n) {
  if (n < kSerialThreshold) return 1;
  const int64_t by_size = n / (kSerialThreshold / 2);
  return std::max<int64_t>(1, std::min<int64_t>(omp_get_max_threads(), by_size));
}

// Runs rows of [begin, end): row(flat, base_offsets, count, inner_strides).
template <int N, typename RowFn>
void walk_range(const Walk<N>& w, int64_t begin, int64_t end, RowFn& row) {
  const int last = w.ndim - 1;
  int64_t index[kMaxDims];
  int64_t offset[N] = {0};
  int64_t rest = begin;
  for (int d = last; d >= 0; --d) {
    index[d] = rest % w.shape[d];
    rest /= w.shape[d];
    for (int j = 0; j < N; ++j) offset[j] += index[d] * w.strides[j][d];
  }
  int64_t inner[N];
  for (int j = 0; j < N; ++j) inner[j] = w.strides[j][last];
  int64_t pos = begin;
  while (pos < end) {
    const int64_t count = std::min(w.shape[last] - index[last], end - pos);
    row(pos, offset, count, inner);
    pos += count;
    if (pos >= end) break;
    // Step to the start of the next row: rewind the innermost dimension, carry outward.
    for (int j = 0; j < N; ++j) offset[j] -= index[last] * inner[j];
    index[last] = 0;
    for (int d = last - 1; d >= 0; --d) {
      for (int j = 0; j < N; ++j) offset[j] += w.strides[j][d];
      if (++index[d] < w.shape[d]) break;
      for (int j = 0; j < N; ++j) offset[j] -= index[d] * w.strides[j][d];
      index[d] = 0;
    }
  }
}

template <int N, typename RowFn>
void for_each_row(const Walk<N>& w, RowFn row) {
  const int64_t n = w.numel;
  if (n <= 0) return;
  const int64_t chunks = num_chunks(n);
  if (chunks == 1) {
    walk_range(w, 0, n, row);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    RowFn local = row;
    walk_range(w, c * n / chunks, (c + 1) * n / chunks, local);
  }
}

// fn(flat_index, element_offsets) for every element; element offsets in elements per operand.
// The unit-stride case gets its own loop so the compiler can vectorize it.
template <int N, typename ElemFn>
void for_each_element(const TensorView* const (&views)[N], ElemFn fn) {
  const Walk<N> w = make_walk<N>(views);
  for_each_row(w, [fn](int64_t flat, const int64_t (&base)[N], int64_t count,
                       const int64_t (&inner)[N]) {
    bool unit = true;
    for (int j = 0; j < N; ++j) unit = unit && inner[j] == 1;
    int64_t off[N];
    if (unit) {
      for (int64_t k = 0; k < count; ++k) {
        for (int j = 0; j < N; ++j) off[j] = base[j] + k;
        fn(flat + k, off);
      }
    } else {
      for (int64_t k = 0; k < count; ++k) {
        for (int j = 0; j < N; ++j) off[j] = base[j] + k * inner[j];
        fn(flat + k, off);
      }
    }
  });
}

// Runs fn(begin, end) over [0, n) split as the element loops split it.
template <typename RangeFn>
void parallel_range(int64_t n, RangeFn fn) {
  if (n <= 0) return;
  const int64_t chunks = num_chunks(n);
  if (chunks == 1) {
    fn(int64_t{0}, n);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) fn(c * n / chunks, (c + 1) * n / chunks);
}

[[noreturn]] void unsupported(const char* kernel, DType dtype, const std::string& what = "") {
  throw_error(ErrorCode::kInvalidArgument, kernel,
              std::string("dtype ") + dtype_name(dtype) + " is not supported" +
                  (what.empty() ? "" : " for " + what));
}

// ---------------------------------------------------------------------------------------------
// unary / unary_backward
// ---------------------------------------------------------------------------------------------

// Calls f(Functor{}) for the functor of `op`.
template <typename F>
void dispatch_unary(UnaryOp op, F&& f) {
  using namespace kernels;
  switch (op) {
    case UnaryOp::kNeg: f(NegFunctor{}); return;
    case UnaryOp::kExp: f(ExpFunctor{}); return;
    case UnaryOp::kLog: f(LogFunctor{}); return;
    case UnaryOp::kSqrt: f(SqrtFunctor{}); return;
    case UnaryOp::kRsqrt: f(RsqrtFunctor{}); return;
    case UnaryOp::kAbs: f(AbsFunctor{}); return;
    case UnaryOp::kSquare: f(SquareFunctor{}); return;
    case UnaryOp::kReciprocal: f(ReciprocalFunctor{}); return;
    case UnaryOp::kRelu: f(ReluFunctor{}); return;
    case UnaryOp::kSigmoid: f(SigmoidFunctor{}); return;
    case UnaryOp::kTanh: f(TanhFunctor{}); return;
    case UnaryOp::kGelu: f(GeluFunctor{}); return;
    case UnaryOp::kSin: f(SinFunctor{}); return;
    case UnaryOp::kCos: f(CosFunctor{}); return;
    case UnaryOp::kTan: f(TanFunctor{}); return;
    case UnaryOp::kAsin: f(AsinFunctor{}); return;
    case UnaryOp::kAcos: f(AcosFunctor{}); return;
    case UnaryOp::kAtan: f(AtanFunctor{}); return;
    case UnaryOp::kSinh: f(SinhFunctor{}); return;
    case UnaryOp::kCosh: f(CoshFunctor{}); return;
    case UnaryOp::kAsinh: f(AsinhFunctor{}); return;
    case UnaryOp::kAcosh: f(AcoshFunctor{}); return;
    case UnaryOp::kAtanh: f(AtanhFunctor{}); return;
    case UnaryOp::kErf: f(ErfFunctor{}); return;
  }
  throw_error(ErrorCode::kInternal, "unary", "unknown UnaryOp");
}

bool unary_allows_integers(UnaryOp op) {
  return op == UnaryOp::kNeg || op == UnaryOp::kAbs || op == UnaryOp::kSquare;
}

// ---------------------------------------------------------------------------------------------
// bfloat16 operands, all contiguous and of one shape: blocks of each input are widened with the
// vector conversions of bf16_convert.h, the f32 functor runs over the block, and the result is
// rounded once. The bits equal the per-element path's (the same widening, the same f32
// arithmetic, the same round-to-nearest-even), several times faster.
// ---------------------------------------------------------------------------------------------

constexpr int64_t kBf16Block = 256;

template <int N>
bool all_contiguous_same_size(const TensorView* const (&views)[N]) {
  for (int j = 0; j < N; ++j) {
    if (!views[j]->is_contiguous() || views[j]->numel() != views[0]->numel()) return false;
  }
  return true;
}

// out[i] = f(in_0[i], ..., in_{N-1}[i]) with f taking floats: block(inputs, result, count).
template <int N, typename BlockFn>
void bf16_blocks(const BFloat16* const (&in)[N], BFloat16* out, int64_t n, BlockFn block) {
  parallel_range(n, [&](int64_t begin, int64_t end) {
    alignas(64) float wide[N][kBf16Block];
    alignas(64) float result[kBf16Block];
    for (int64_t b = begin; b < end; b += kBf16Block) {
      const int64_t m = std::min(kBf16Block, end - b);
      for (int j = 0; j < N; ++j) bf16_to_f32(in[j] + b, wide[j], m);
      block(wide, result, m);
      f32_to_bf16(result, out + b, m);
    }
  });
}

// ReLU and its gradient on bfloat16 bits: the result is always an input or zero, so nothing
// needs converting. Same bits as widening, the f32 functor and rounding back: NaNs come out
// quiet, -0 stays -0, other negatives become +0; the gradient passes dy where x > 0 (+inf
// included, NaN not).
inline bool bf16_is_nan(uint16_t b) { return (b & 0x7fff) > 0x7f80; }
inline uint16_t relu_bits(uint16_t x) {
  const bool negative = (x & 0x8000) != 0 && x != 0x8000;
  return bf16_is_nan(x) ? static_cast<uint16_t>(x | 0x0040) : (negative ? uint16_t{0} : x);
}
inline uint16_t relu_backward_bits(uint16_t x, uint16_t dy) {
  const bool positive = (x & 0x8000) == 0 && x != 0 && !bf16_is_nan(x);
  const uint16_t passed = bf16_is_nan(dy) ? static_cast<uint16_t>(dy | 0x0040) : dy;
  return positive ? passed : uint16_t{0};
}

template <typename S, typename Op>
void unary_typed(Op op, const TensorView& x, const TensorView& y) {
  if constexpr (std::is_same_v<S, BFloat16>) {
    const TensorView* operands[2] = {&y, &x};
    if (all_contiguous_same_size<2>(operands) && std::is_same_v<Op, kernels::ReluFunctor>) {
      const uint16_t* xp = static_cast<const uint16_t*>(x.data);
      uint16_t* yp = static_cast<uint16_t*>(y.data);
      parallel_range(y.numel(), [=](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) yp[i] = relu_bits(xp[i]);
      });
      return;
    }
    if (all_contiguous_same_size<2>(operands)) {
      const BFloat16* in[1] = {static_cast<const BFloat16*>(x.data)};
      bf16_blocks<1>(in, static_cast<BFloat16*>(y.data), y.numel(),
                     [op](const float (&w)[1][kBf16Block], float* r, int64_t m) {
                       for (int64_t k = 0; k < m; ++k) r[k] = op(w[0][k]);
                     });
      return;
    }
  }
  const S* xp = static_cast<const S*>(x.data);
  S* yp = static_cast<S*>(y.data);
  const TensorView* views[2] = {&y, &x};
  for_each_element<2>(views, [=](int64_t, const int64_t (&o)[2]) {
    yp[o[0]] = store<S>(op(load(xp[o[1]])));
  });
}

template <typename S, typename Op>
void unary_backward_typed(Op op, const TensorView& x, const TensorView& y, const TensorView& dy,
                          const TensorView& dx) {
  if constexpr (std::is_same_v<S, BFloat16>) {
    const TensorView* operands[4] = {&dx, &x, &y, &dy};
    if (all_contiguous_same_size<4>(operands) && std::is_same_v<Op, kernels::ReluFunctor>) {
      const uint16_t* xp = static_cast<const uint16_t*>(x.data);
      const uint16_t* dyp = static_cast<const uint16_t*>(dy.data);
      uint16_t* dxp = static_cast<uint16_t*>(dx.data);
      parallel_range(dx.numel(), [=](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) dxp[i] = relu_backward_bits(xp[i], dyp[i]);
      });
      return;
    }
    if (all_contiguous_same_size<4>(operands)) {
      const BFloat16* in[3] = {static_cast<const BFloat16*>(x.data),
                               static_cast<const BFloat16*>(y.data),
                               static_cast<const BFloat16*>(dy.data)};
      bf16_blocks<3>(in, static_cast<BFloat16*>(dx.data), dx.numel(),
                     [op](const float (&w)[3][kBf16Block], float* r, int64_t m) {
                       for (int64_t k = 0; k < m; ++k) r[k] = op.backward(w[0][k], w[1][k], w[2][k]);
                     });
      return;
    }
  }
  const S* xp = static_cast<const S*>(x.data);
  const S* yp = static_cast<const S*>(y.data);
  const S* dyp = static_cast<const S*>(dy.data);
  S* dxp = static_cast<S*>(dx.data);
  const TensorView* views[4] = {&dx, &x, &y, &dy};
  if constexpr (std::is_same_v<S, float>) {
    // Contiguous float32 (the relu mask of a fused Conv2D or Dense backward): a flat loop the
    // compiler vectorizes, instead of the strided walker's per-element offsets (4.5
    // instructions per element for relu, counted with callgrind).
    if (all_contiguous_same_size<4>(views)) {
      parallel_range(dx.numel(), [=](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) dxp[i] = op.backward(xp[i], yp[i], dyp[i]);
      });
      return;
    }
  }
  for_each_element<4>(views, [=](int64_t, const int64_t (&o)[4]) {
    dxp[o[0]] = store<S>(op.backward(load(xp[o[1]]), load(yp[o[2]]), load(dyp[o[3]])));
  });
}

// ---------------------------------------------------------------------------------------------
// binary
// ---------------------------------------------------------------------------------------------

template <typename F>
void dispatch_binary(BinaryOp op, F&& f) {
  using namespace kernels;
  switch (op) {
    case BinaryOp::kAdd: f(AddFunctor{}); return;
    case BinaryOp::kSub: f(SubFunctor{}); return;
    case BinaryOp::kMul: f(MulFunctor{}); return;
    case BinaryOp::kDiv: f(DivFunctor{}); return;
    case BinaryOp::kPow: f(PowFunctor{}); return;
    case BinaryOp::kMaximum: f(MaximumFunctor{}); return;
    case BinaryOp::kMinimum: f(MinimumFunctor{}); return;
    case BinaryOp::kEqual: f(EqualFunctor{}); return;
    case BinaryOp::kGreater: f(GreaterFunctor{}); return;
    case BinaryOp::kLess: f(LessFunctor{}); return;
    case BinaryOp::kAtan2: f(Atan2Functor{}); return;
  }
  throw_error(ErrorCode::kInternal, "binary", "unknown BinaryOp");
}

bool is_comparison(BinaryOp op) {
  return op == BinaryOp::kEqual || op == BinaryOp::kGreater || op == BinaryOp::kLess;
}

// S: input storage type, D: output storage type (S, or bool for comparisons).
template <typename S, typename D, typename Op>
void binary_typed(Op op, const TensorView& a, const TensorView& b, const TensorView& out) {
  if constexpr (std::is_same_v<S, BFloat16> && std::is_same_v<D, BFloat16>) {
    using R = decltype(op(0.0f, 0.0f));
    const TensorView* operands[3] = {&out, &a, &b};
    if (std::is_same_v<R, float> && all_contiguous_same_size<3>(operands)) {
      const BFloat16* in[2] = {static_cast<const BFloat16*>(a.data),
                               static_cast<const BFloat16*>(b.data)};
      bf16_blocks<2>(in, static_cast<BFloat16*>(out.data), out.numel(),
                     [op](const float (&w)[2][kBf16Block], float* r, int64_t m) {
                       for (int64_t k = 0; k < m; ++k) r[k] = static_cast<float>(op(w[0][k], w[1][k]));
                     });
      return;
    }
  }
  const S* ap = static_cast<const S*>(a.data);
  const S* bp = static_cast<const S*>(b.data);
  D* op_out = static_cast<D*>(out.data);
  const TensorView* views[3] = {&out, &a, &b};
  for_each_element<3>(views, [=](int64_t, const int64_t (&o)[3]) {
    const auto r = op(load(ap[o[1]]), load(bp[o[2]]));
    if constexpr (std::is_same_v<decltype(r), const bool>) {
      if constexpr (std::is_same_v<D, bool>) {
        op_out[o[0]] = r;
      } else {
        op_out[o[0]] = store<D>(r ? ComputeOf<D>(1) : ComputeOf<D>(0));
      }
    } else {
      op_out[o[0]] = store<D>(r);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// reductions
// ---------------------------------------------------------------------------------------------

// The accumulator of a reduction: double for floating inputs (and for every mean), int64 for
// integer and bool inputs otherwise.
template <typename S>
using SumAccOf = std::conditional_t<kIsFloatStorage<S>, double, int64_t>;

// Writes a double or int64 result into any dtype at element offset `o` of `v`.
template <typename A>
void write_scalar(const TensorView& v, int64_t o, A value) {
  dispatch_storage(v.dtype, [&](auto tag) {
    using D = typename decltype(tag)::type;
    D* p = static_cast<D*>(v.data) + o;
    if constexpr (std::is_same_v<A, double>) {
      *p = from_double<D>(value);
    } else {
      *p = convert<D>(value);
    }
  });
}

// Kept and reduced dimensions of a reduction, each coalesced.
struct ReduceLayout {
  int kept_ndim = 0;
  int64_t kept_shape[kMaxDims];
  int64_t kept_x_stride[kMaxDims];
  int64_t kept_out_stride[kMaxDims];
  int red_ndim = 0;
  int64_t red_shape[kMaxDims];
  int64_t red_stride[kMaxDims];
  int64_t num_out = 1;
  int64_t num_red = 1;
};

ReduceLayout make_reduce_layout(const TensorView& x, uint32_t axes_mask, const TensorView& out) {
  ReduceLayout l;
  for (int d = 0; d < x.ndim; ++d) {
    const bool reduced = (axes_mask >> d) & 1u;
    const int64_t n = x.shape[d];
    if (reduced) {
      l.num_red *= n;
      if (n == 1) continue;
      if (l.red_ndim > 0 && l.red_stride[l.red_ndim - 1] == x.strides[d] * n) {
        l.red_shape[l.red_ndim - 1] *= n;
        l.red_stride[l.red_ndim - 1] = x.strides[d];
        continue;
      }
      l.red_shape[l.red_ndim] = n;
      l.red_stride[l.red_ndim] = x.strides[d];
      ++l.red_ndim;
    } else {
      l.num_out *= n;
      if (n == 1) continue;
      const int64_t os = d < out.ndim ? out.strides[d] : 0;
      if (l.kept_ndim > 0 && l.kept_x_stride[l.kept_ndim - 1] == x.strides[d] * n &&
          l.kept_out_stride[l.kept_ndim - 1] == os * n) {
        l.kept_shape[l.kept_ndim - 1] *= n;
        l.kept_x_stride[l.kept_ndim - 1] = x.strides[d];
        l.kept_out_stride[l.kept_ndim - 1] = os;
        continue;
      }
      l.kept_shape[l.kept_ndim] = n;
      l.kept_x_stride[l.kept_ndim] = x.strides[d];
      l.kept_out_stride[l.kept_ndim] = os;
      ++l.kept_ndim;
    }
  }
  return l;
}

// Offsets (into x and out) of output element `o` in row-major order of the kept dimensions.
inline void kept_offsets(const ReduceLayout& l, int64_t o, int64_t& x_off, int64_t& out_off) {
  x_off = 0;
  out_off = 0;
  for (int d = l.kept_ndim - 1; d >= 0; --d) {
    const int64_t i = o % l.kept_shape[d];
    o /= l.kept_shape[d];
    x_off += i * l.kept_x_stride[d];
    out_off += i * l.kept_out_stride[d];
  }
}

// Visits reduced elements [begin, end) (row-major over the reduced dimensions) of the slice
// starting at x offset `base`: visit(linear_reduced_index, x_offset).
template <typename Visit>
void walk_reduced(const ReduceLayout& l, int64_t base, int64_t begin, int64_t end, Visit& visit) {
  if (begin >= end) return;
  if (l.red_ndim == 0) {
    if (begin < end) visit(int64_t{0}, base);
    return;
  }
  const int last = l.red_ndim - 1;
  int64_t index[kMaxDims];
  int64_t off = base;
  int64_t rest = begin;
  for (int d = last; d >= 0; --d) {
    index[d] = rest % l.red_shape[d];
    rest /= l.red_shape[d];
    off += index[d] * l.red_stride[d];
  }
  const int64_t inner = l.red_stride[last];
  int64_t pos = begin;
  while (pos < end) {
    const int64_t count = std::min(l.red_shape[last] - index[last], end - pos);
    if (inner == 1) {
      for (int64_t k = 0; k < count; ++k) visit(pos + k, off + k);
    } else {
      for (int64_t k = 0; k < count; ++k) visit(pos + k, off + k * inner);
    }
    pos += count;
    if (pos >= end) break;
    off -= index[last] * inner;
    index[last] = 0;
    for (int d = last - 1; d >= 0; --d) {
      off += l.red_stride[d];
      if (++index[d] < l.red_shape[d]) break;
      off -= index[d] * l.red_stride[d];
      index[d] = 0;
    }
  }
}

// Partial reductions of large slices use chunks of this many elements, a size that does not
// depend on the thread count, so sums come out bit-identical for any OMP_NUM_THREADS.
constexpr int64_t kReduceChunk = 64 * 1024;
// With at least this many outputs, threads take whole outputs instead of chunks of one.
constexpr int64_t kManyOutputs = 16;
// Outputs reduced side by side when the kept innermost dimension is the contiguous one.
constexpr int64_t kReduceTile = 64;

// Generic driver. Value: the per-element accumulator type; make(lin, x_off) builds it from an
// element; combine merges two; finish(out_off, acc) writes one output.
template <typename Acc, typename Make, typename Combine, typename Finish>
void reduce_driver(const ReduceLayout& l, Acc identity, Make make, Combine combine,
                   Finish finish) {
  const int64_t num_out = l.num_out, num_red = l.num_red;
  auto reduce_range = [&](int64_t base, int64_t begin, int64_t end) {
    Acc acc = identity;
    auto visit = [&](int64_t lin, int64_t x_off) { acc = combine(acc, make(lin, x_off)); };
    walk_reduced(l, base, begin, end, visit);
    return acc;
  };
  // The path depends on the shape only (never on the thread count), so results do too.
  const int kl = l.kept_ndim - 1;
  const bool inner_kept_contiguous = kl >= 0 && l.kept_x_stride[kl] == 1 && l.red_ndim > 0 &&
                                     l.red_stride[l.red_ndim - 1] != 1;
  if (inner_kept_contiguous && num_out >= kManyOutputs) {
    // Reducing outer dimensions of rows that are contiguous (sum over a batch): a tile of
    // neighbouring outputs advances together through the reduced elements, so every cache line
    // read serves the whole tile. Each output still sees its elements in the same order.
    const int64_t cols = l.kept_shape[kl];
    const int64_t tiles_per_row = (cols + kReduceTile - 1) / kReduceTile;
    const int64_t tiles = num_out / cols * tiles_per_row;
    const bool parallel = tiles > 1 && num_out * num_red >= kSerialThreshold;
    parallel_for_if(parallel, tiles, [&](int64_t t) {
      const int64_t c0 = (t % tiles_per_row) * kReduceTile;
      const int64_t width = std::min(kReduceTile, cols - c0);
      int64_t x_off, out_off;
      kept_offsets(l, t / tiles_per_row * cols + c0, x_off, out_off);
      Acc acc[kReduceTile];
      for (int64_t k = 0; k < width; ++k) acc[k] = identity;
      auto visit = [&](int64_t lin, int64_t off) {
        for (int64_t k = 0; k < width; ++k) acc[k] = combine(acc[k], make(lin, off + k));
      };
      walk_reduced(l, x_off, 0, num_red, visit);
      for (int64_t k = 0; k < width; ++k) finish(out_off + k * l.kept_out_stride[kl], acc[k]);
    });
    return;
  }
  if (num_red <= kReduceChunk || num_out >= kManyOutputs) {
    // One output per task: parallel over outputs when there is enough work in total.
    const bool parallel = num_out > 1 && num_out * num_red >= kSerialThreshold;
    parallel_for_if(parallel, num_out, [&](int64_t o) {
      int64_t x_off, out_off;
      kept_offsets(l, o, x_off, out_off);
      finish(out_off, reduce_range(x_off, 0, num_red));
    });
    return;
  }
  // Few outputs, long reductions: fixed-size chunks of each slice in parallel, then merged in
  // chunk order.
  const int64_t chunks = (num_red + kReduceChunk - 1) / kReduceChunk;
  std::vector<Acc> partial(static_cast<size_t>(chunks), identity);
  for (int64_t o = 0; o < num_out; ++o) {
    int64_t x_off, out_off;
    kept_offsets(l, o, x_off, out_off);
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < chunks; ++c) {
      partial[c] = reduce_range(x_off, c * kReduceChunk, std::min(num_red, (c + 1) * kReduceChunk));
    }
    Acc acc = identity;
    for (int64_t c = 0; c < chunks; ++c) acc = combine(acc, partial[c]);
    finish(out_off, acc);
  }
}

template <typename S>
void reduce_typed(ReduceOp op, const TensorView& x, const ReduceLayout& l, const TensorView& out) {
  const S* xp = static_cast<const S*>(x.data);
  using Sum = SumAccOf<S>;
  // Max/min compare in the compute type widened to the sum accumulator (exact for every dtype).
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kMean: {
      const bool mean = op == ReduceOp::kMean;
      const double count = static_cast<double>(l.num_red);
      auto finish_sum = [&](int64_t out_off, Sum acc) {
        if (mean) {
          write_scalar(out, out_off, static_cast<double>(acc) / count);
        } else {
          write_scalar(out, out_off, acc);
        }
      };
      if (mean && !kIsFloatStorage<S>) {
        // Integer means accumulate in double too (NumPy returns float64 means of integers).
        reduce_driver<double>(
            l, 0.0, [&](int64_t, int64_t o) { return static_cast<double>(load(xp[o])); },
            [](double a, double b) { return a + b; },
            [&](int64_t out_off, double acc) { write_scalar(out, out_off, acc / count); });
      } else {
        reduce_driver<Sum>(
            l, Sum(0), [&](int64_t, int64_t o) { return static_cast<Sum>(load(xp[o])); },
            kernels::SumCombiner<Sum>{}, finish_sum);
      }
      return;
    }
    case ReduceOp::kMax:
      reduce_driver<Sum>(
          l, kernels::MaxCombiner<Sum>::identity(),
          [&](int64_t, int64_t o) { return static_cast<Sum>(load(xp[o])); },
          kernels::MaxCombiner<Sum>{}, [&](int64_t out_off, Sum acc) { write_scalar(out, out_off, acc); });
      return;
    case ReduceOp::kMin:
      reduce_driver<Sum>(
          l, kernels::MinCombiner<Sum>::identity(),
          [&](int64_t, int64_t o) { return static_cast<Sum>(load(xp[o])); },
          kernels::MinCombiner<Sum>{}, [&](int64_t out_off, Sum acc) { write_scalar(out, out_off, acc); });
      return;
    case ReduceOp::kArgMax:
    case ReduceOp::kArgMin: {
      using Indexed = kernels::IndexedValue<Sum>;
      auto make = [&](int64_t lin, int64_t o) { return Indexed{static_cast<Sum>(load(xp[o])), lin}; };
      auto finish = [&](int64_t out_off, Indexed acc) {
        write_scalar(out, out_off, acc.index < 0 ? int64_t{0} : acc.index);
      };
      if (op == ReduceOp::kArgMax) {
        reduce_driver<Indexed>(l, kernels::ArgMaxCombiner<Sum>::identity(), make,
                               kernels::ArgMaxCombiner<Sum>{}, finish);
      } else {
        reduce_driver<Indexed>(l, kernels::ArgMinCombiner<Sum>::identity(), make,
                               kernels::ArgMinCombiner<Sum>{}, finish);
      }
      return;
    }
  }
  throw_error(ErrorCode::kInternal, "reduce", "unknown ReduceOp");
}

// ---------------------------------------------------------------------------------------------
// copy of a transpose
// ---------------------------------------------------------------------------------------------

constexpr int64_t kTransposeTile = 32;

// The transpose case of copy(): dst contiguous along the last (coalesced) dimension, src along
// the one before it. The generic walk would read src with a large stride per element; square
// tiles keep both sides in cache. Returns false (doing nothing) for other layouts.
template <typename S, typename D>
bool copy_transposed(const Walk<2>& w, D* dp, const S* sp) {
  if (w.ndim < 2) return false;
  const int r = w.ndim - 2, c = w.ndim - 1;
  if (w.strides[0][c] != 1 || w.strides[1][r] != 1 || w.strides[1][c] == 1) return false;
  const int64_t rows = w.shape[r], cols = w.shape[c];
  if (rows < kTransposeTile || cols < kTransposeTile) return false;
  const int64_t tr = (rows + kTransposeTile - 1) / kTransposeTile;
  const int64_t tc = (cols + kTransposeTile - 1) / kTransposeTile;
  const int64_t batches = w.numel / (rows * cols);
  const int64_t tiles = batches * tr * tc;
  const int64_t dst_row = w.strides[0][r], src_col = w.strides[1][c];
  const bool parallel = w.numel >= kSerialThreshold;
  parallel_for_if(parallel, tiles, [&](int64_t t) {
    // Offsets of batch t / (tr * tc) over the leading dimensions.
    int64_t b = t / (tr * tc), d_off = 0, s_off = 0;
    for (int d = r - 1; d >= 0; --d) {
      const int64_t i = b % w.shape[d];
      b /= w.shape[d];
      d_off += i * w.strides[0][d];
      s_off += i * w.strides[1][d];
    }
    const int64_t i0 = (t / tc) % tr * kTransposeTile, j0 = t % tc * kTransposeTile;
    const int64_t i1 = std::min(rows, i0 + kTransposeTile), j1 = std::min(cols, j0 + kTransposeTile);
    for (int64_t i = i0; i < i1; ++i) {
      D* drow = dp + d_off + i * dst_row;
      const S* scol = sp + s_off + i;
      for (int64_t j = j0; j < j1; ++j) drow[j] = convert<D>(scol[j * src_col]);
    }
  });
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The interface
// ---------------------------------------------------------------------------------------------

void unary(UnaryOp op, const TensorView& x, const TensorView& y) {
  dispatch_storage(x.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (kIsFloatStorage<S>) {
      dispatch_unary(op, [&](auto f) { unary_typed<S>(f, x, y); });
    } else if constexpr (std::is_same_v<S, int32_t> || std::is_same_v<S, int64_t>) {
      if (!unary_allows_integers(op)) unsupported("unary", x.dtype, "this op");
      switch (op) {
        case UnaryOp::kNeg: unary_typed<S>(kernels::NegFunctor{}, x, y); return;
        case UnaryOp::kAbs: unary_typed<S>(kernels::AbsFunctor{}, x, y); return;
        default: unary_typed<S>(kernels::SquareFunctor{}, x, y); return;
      }
    } else {
      unsupported("unary", x.dtype);
    }
  });
}

void unary_backward(UnaryOp op, const TensorView& x, const TensorView& y, const TensorView& dy,
                    const TensorView& dx) {
  dispatch_storage(x.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (kIsFloatStorage<S>) {
      dispatch_unary(op, [&](auto f) { unary_backward_typed<S>(f, x, y, dy, dx); });
    } else {
      unsupported("unary_backward", x.dtype);
    }
  });
}

void binary(BinaryOp op, const TensorView& a, const TensorView& b, const TensorView& out) {
  const bool bool_out = is_comparison(op) && out.dtype == DType::kBool && a.dtype != DType::kBool;
  dispatch_storage(a.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    dispatch_binary(op, [&](auto f) {
      using F = decltype(f);
      constexpr bool kDivOrPow = std::is_same_v<F, kernels::DivFunctor> ||
                                 std::is_same_v<F, kernels::PowFunctor> ||
                                 std::is_same_v<F, kernels::Atan2Functor>;
      constexpr bool kArithmetic = kDivOrPow || std::is_same_v<F, kernels::AddFunctor> ||
                                   std::is_same_v<F, kernels::SubFunctor> ||
                                   std::is_same_v<F, kernels::MulFunctor>;
      // Integers: no div/pow (division by zero traps). bool: comparisons and max/min only.
      constexpr bool kUnsupported = (!kIsFloatStorage<S> && kDivOrPow) ||
                                    (std::is_same_v<S, bool> && kArithmetic);
      if constexpr (kUnsupported) {
        unsupported("binary", a.dtype, "this op");
      } else {
        if (bool_out) {
          binary_typed<S, bool>(f, a, b, out);
        } else {
          binary_typed<S, S>(f, a, b, out);
        }
      }
    });
  });
}

void bitwise(BitwiseOp op, const TensorView& a, const TensorView& b, const TensorView& out) {
  const bool known = with_bitwise_functor(op, [&](auto f) {
    using F = decltype(f);
    const bool typed = with_bitwise_storage(op, a.dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (kBitwiseDefined<F, T>) {
        const T* ap = static_cast<const T*>(a.data);
        const T* bp = static_cast<const T*>(b.data);
        T* op_out = static_cast<T*>(out.data);
        const TensorView* views[3] = {&out, &a, &b};
        for_each_element<3>(views, [=](int64_t, const int64_t (&o)[3]) {
          op_out[o[0]] = f(ap[o[1]], bp[o[2]]);
        });
      }
    });
    if (!typed) unsupported(op_name(op), a.dtype, "a bitwise op (int32, int64, uint8; bool for and/or/xor)");
  });
  if (!known) throw_error(ErrorCode::kInternal, "bitwise", "unknown BitwiseOp");
}

void where(const TensorView& cond, const TensorView& a, const TensorView& b, const TensorView& out) {
  dispatch_storage(out.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    const bool* cp = static_cast<const bool*>(cond.data);
    const S* ap = static_cast<const S*>(a.data);
    const S* bp = static_cast<const S*>(b.data);
    S* op = static_cast<S*>(out.data);
    const TensorView* views[4] = {&out, &cond, &a, &b};
    for_each_element<4>(views, [=](int64_t, const int64_t (&o)[4]) {
      op[o[0]] = cp[o[1]] ? ap[o[2]] : bp[o[3]];
    });
  });
}

void copy(const TensorView& src, const TensorView& dst) {
  const int64_t n = dst.numel();
  if (n <= 0) return;
  if (src.dtype == dst.dtype && src.is_contiguous() && dst.is_contiguous()) {
    const size_t size = dtype_size(src.dtype);
    const char* s = static_cast<const char*>(src.data);
    char* d = static_cast<char*>(dst.data);
    if (s == d) return;
    parallel_range(n, [&](int64_t begin, int64_t end) {
      std::memmove(d + begin * size, s + begin * size, static_cast<size_t>(end - begin) * size);
    });
    return;
  }
  // Casts between float32 and bfloat16 (mixed precision's per-step casts of weights,
  // activations and gradients): the vector conversions, same bits as convert<>().
  if (src.is_contiguous() && dst.is_contiguous() && src.numel() == n) {
    if (src.dtype == DType::kFloat32 && dst.dtype == DType::kBFloat16) {
      const float* s = static_cast<const float*>(src.data);
      BFloat16* d = static_cast<BFloat16*>(dst.data);
      parallel_range(n, [=](int64_t begin, int64_t end) { f32_to_bf16(s + begin, d + begin, end - begin); });
      return;
    }
    if (src.dtype == DType::kBFloat16 && dst.dtype == DType::kFloat32) {
      const BFloat16* s = static_cast<const BFloat16*>(src.data);
      float* d = static_cast<float*>(dst.data);
      parallel_range(n, [=](int64_t begin, int64_t end) { bf16_to_f32(s + begin, d + begin, end - begin); });
      return;
    }
  }
  dispatch_storage(src.dtype, [&](auto stag) {
    using S = typename decltype(stag)::type;
    dispatch_storage(dst.dtype, [&](auto dtag) {
      using D = typename decltype(dtag)::type;
      const S* sp = static_cast<const S*>(src.data);
      D* dp = static_cast<D*>(dst.data);
      const TensorView* views[2] = {&dst, &src};
      if (copy_transposed(make_walk<2>(views), dp, sp)) return;
      for_each_element<2>(views, [=](int64_t, const int64_t (&o)[2]) {
        dp[o[0]] = convert<D>(sp[o[1]]);
      });
    });
  });
}

void fill(const TensorView& dst, double value) {
  dispatch_storage(dst.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    const kernels::FillFunctor<S> f{from_double<S>(value)};
    S* p = static_cast<S*>(dst.data);
    const TensorView* views[1] = {&dst};
    for_each_element<1>(views, [=](int64_t flat, const int64_t (&o)[1]) { p[o[0]] = f(flat); });
  });
}

void arange(const TensorView& dst, double start, double step) {
  dispatch_storage(dst.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    S* p = static_cast<S*>(dst.data);
    parallel_range(dst.numel(), [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        p[i] = from_double<S>(start + static_cast<double>(i) * step);
      }
    });
  });
}

void random(RandomDistribution distribution, uint64_t seed, uint64_t offset,
            const TensorView& dst) {
  dispatch_storage(dst.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (!kIsFloatStorage<S>) {
      unsupported("random", dst.dtype);
    } else {
      // float64 draws float32's values (24 random bits), widened exactly: both backends and
      // every dtype share one stream of words per element.
      const int bits = std::is_same_v<S, float> || std::is_same_v<S, double>
                           ? kernels::kUniformBitsFloat32
                       : std::is_same_v<S, Half> ? kernels::kUniformBitsFloat16
                                                 : kernels::kUniformBitsBFloat16;
      const bool normal = distribution == RandomDistribution::kNormal;
      S* p = static_cast<S*>(dst.data);
      parallel_range(dst.numel(), [=](int64_t begin, int64_t end) {
        // One Philox block serves four consecutive element indices.
        kernels::PhiloxBlock block{};
        for (int64_t i = begin; i < end; ++i) {
          const uint64_t j = offset + static_cast<uint64_t>(i);
          if (i == begin || (j & 3u) == 0) block = kernels::philox_block_for(seed, j);
          const unsigned w = static_cast<unsigned>(j & 3u);
          float v;
          if (normal) {
            const unsigned pair = w & 2u;
            v = kernels::normal_from_words(block.v[pair], block.v[pair + 1], (w & 1u) != 0);
          } else {
            v = kernels::uniform_from_word(block.v[w], bits);
          }
          p[i] = store<S>(v);
        }
      });
    }
  });
}

void reduce(ReduceOp op, const TensorView& x, uint32_t axes_mask, const TensorView& out) {
  const ReduceLayout layout = make_reduce_layout(x, axes_mask, out);
  dispatch_storage(x.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    reduce_typed<S>(op, x, layout, out);
  });
}

void dropout(const TensorView& x, double rate, uint64_t seed, uint64_t offset,
             const TensorView& y, const TensorView& mask) {
  const kernels::DropoutFunctor f = kernels::DropoutFunctor::make(rate, seed, offset);
  dispatch_storage(x.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (!kIsFloatStorage<S> || std::is_same_v<S, double>) {  // float32 masks only
      unsupported("dropout", x.dtype);
    } else {
      const S* xp = static_cast<const S*>(x.data);
      S* yp = static_cast<S*>(y.data);
      uint8_t* mp = static_cast<uint8_t*>(mask.data);
      const TensorView* views[3] = {&y, &x, &mask};
      for_each_element<3>(views, [=](int64_t flat, const int64_t (&o)[3]) {
        const kernels::DropoutResult r = f(flat, load(xp[o[1]]));
        yp[o[0]] = store<S>(r.y);
        mp[o[2]] = r.keep;
      });
    }
  });
}

}  // namespace gpuaccel::cpu
