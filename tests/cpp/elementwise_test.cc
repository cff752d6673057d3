// Tests of the CPU element-wise loops (backends/cpu/elementwise.h): every kernel against naive
// loops over plain test tensors, on contiguous, transposed (permuted-stride) and broadcast
// (stride-0) views, small (serial) and large (OpenMP) sizes, and every dtype pair for casts.
// The element functors themselves are tested in kernels_test.cc.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "backends/cpu/elementwise.h"
#include "core/dtype.h"
#include "core/errors.h"
#include "kernels/half_conversions.h"
#include "kernels/philox.h"
#include "kernels/unary_functors.h"

namespace gpuaccel::cpu {
namespace {

using Shape = std::vector<int64_t>;

// A contiguous tensor owning its bytes, with views onto it.
struct TestTensor {
  std::vector<unsigned char> bytes;
  TensorView view;
};

TestTensor make_tensor(DType dtype, const Shape& shape) {
  TestTensor t;
  t.view.dtype = dtype;
  t.view.ndim = static_cast<int>(shape.size());
  int64_t n = 1;
  for (int d = t.view.ndim - 1; d >= 0; --d) {
    t.view.shape[d] = shape[d];
    t.view.strides[d] = n;
    n *= shape[d];
  }
  t.bytes.assign(static_cast<size_t>(std::max<int64_t>(n, 1)) * dtype_size(dtype), 0);
  t.view.data = t.bytes.data();
  return t;
}

// The view with dimensions reordered: result dim i is input dim perm[i].
TensorView permute(const TensorView& v, const std::vector<int>& perm) {
  TensorView r = v;
  for (size_t i = 0; i < perm.size(); ++i) {
    r.shape[i] = v.shape[perm[i]];
    r.strides[i] = v.strides[perm[i]];
  }
  return r;
}

// The view broadcast (right-aligned, NumPy rules) to `shape`.
TensorView broadcast_to(const TensorView& v, const Shape& shape) {
  TensorView r = v;
  r.ndim = static_cast<int>(shape.size());
  const int lead = r.ndim - v.ndim;
  for (int d = 0; d < r.ndim; ++d) {
    r.shape[d] = shape[d];
    const int s = d - lead;
    r.strides[d] = (s < 0 || v.shape[s] == 1) ? 0 : v.strides[s];
  }
  return r;
}

Shape shape_of(const TensorView& v) { return Shape(v.shape, v.shape + v.ndim); }

// Calls fn(index) for every index of `shape` in row-major order.
void for_each_index(const Shape& shape, const std::function<void(const Shape&)>& fn) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  Shape idx(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    fn(idx);
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

int64_t offset_of(const TensorView& v, const Shape& idx) {
  int64_t o = 0;
  for (int d = 0; d < v.ndim; ++d) o += idx[d] * v.strides[d];
  return o;
}

// Element at element offset `o`, exactly, as a double.
double get(const TensorView& v, int64_t o) {
  const unsigned char* p = static_cast<const unsigned char*>(v.data) + o * static_cast<int64_t>(dtype_size(v.dtype));
  switch (v.dtype) {
    case DType::kFloat32: { float f; std::memcpy(&f, p, 4); return f; }
    case DType::kFloat16: { uint16_t h; std::memcpy(&h, p, 2); return half_bits_to_float(h); }
    case DType::kBFloat16: { uint16_t h; std::memcpy(&h, p, 2); return bfloat16_bits_to_float(h); }
    case DType::kInt32: { int32_t i; std::memcpy(&i, p, 4); return i; }
    case DType::kInt64: { int64_t i; std::memcpy(&i, p, 8); return static_cast<double>(i); }
    case DType::kUInt8: return *p;
    case DType::kBool: return *p ? 1.0 : 0.0;
    case DType::kFloat64: { double d; std::memcpy(&d, p, 8); return d; }
    case DType::kInt8: return static_cast<int8_t>(*p);
    case DType::kInt16: { int16_t i; std::memcpy(&i, p, 2); return i; }
  }
  return 0;
}
double get(const TensorView& v, const Shape& idx) { return get(v, offset_of(v, idx)); }

// Stores `value` (which must be representable, or is rounded by the tested converters).
void set(const TensorView& v, int64_t o, double value) {
  unsigned char* p = static_cast<unsigned char*>(v.data) + o * static_cast<int64_t>(dtype_size(v.dtype));
  switch (v.dtype) {
    case DType::kFloat32: { float f = static_cast<float>(value); std::memcpy(p, &f, 4); return; }
    case DType::kFloat16: { uint16_t h = float_to_half_bits(static_cast<float>(value)); std::memcpy(p, &h, 2); return; }
    case DType::kBFloat16: { uint16_t h = float_to_bfloat16_bits(static_cast<float>(value)); std::memcpy(p, &h, 2); return; }
    case DType::kInt32: { int32_t i = static_cast<int32_t>(static_cast<int64_t>(value)); std::memcpy(p, &i, 4); return; }
    case DType::kInt64: { int64_t i = static_cast<int64_t>(value); std::memcpy(p, &i, 8); return; }
    case DType::kUInt8: *p = static_cast<uint8_t>(static_cast<int64_t>(value)); return;
    case DType::kBool: *p = value != 0 ? 1 : 0; return;
    case DType::kFloat64: std::memcpy(p, &value, 8); return;
    case DType::kInt8: *p = static_cast<uint8_t>(static_cast<int8_t>(static_cast<int64_t>(value))); return;
    case DType::kInt16: { int16_t i = static_cast<int16_t>(static_cast<int64_t>(value)); std::memcpy(p, &i, 2); return; }
  }
}

// Fills a contiguous tensor with uniform values in [lo, hi) (rounded to its dtype).
void randomize(const TestTensor& t, double lo, double hi, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  const int64_t n = t.view.numel();
  for (int64_t i = 0; i < n; ++i) {
    double v = dist(gen);
    if (!is_floating(t.view.dtype)) v = std::floor(v);
    set(t.view, i, v);
  }
}

// Runs `fn` with the given OpenMP thread count, restoring the previous one.
template <typename Fn>
void with_threads(int n, Fn fn) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(n);
  fn();
  omp_set_num_threads(before);
}

const UnaryOp kAllUnary[] = {UnaryOp::kNeg,    UnaryOp::kExp,        UnaryOp::kLog,
                             UnaryOp::kSqrt,   UnaryOp::kRsqrt,      UnaryOp::kAbs,
                             UnaryOp::kSquare, UnaryOp::kReciprocal, UnaryOp::kRelu,
                             UnaryOp::kSigmoid, UnaryOp::kTanh,      UnaryOp::kGelu,
                             UnaryOp::kSin,     UnaryOp::kCos,       UnaryOp::kTan,
                             UnaryOp::kAsin,    UnaryOp::kAcos,      UnaryOp::kAtan,
                             UnaryOp::kSinh,    UnaryOp::kCosh,      UnaryOp::kAsinh,
                             UnaryOp::kAcosh,   UnaryOp::kAtanh,     UnaryOp::kErf};

// The random inputs' range for `op`: inside its domain, away from poles (tan) and the domain's
// edges, where a finite difference is not a derivative.
std::pair<double, double> input_range(UnaryOp op) {
  switch (op) {
    case UnaryOp::kLog:
    case UnaryOp::kSqrt:
    case UnaryOp::kRsqrt:
    case UnaryOp::kReciprocal: return {0.05, 4.0};
    case UnaryOp::kTan: return {-1.4, 1.4};
    case UnaryOp::kAsin:
    case UnaryOp::kAcos:
    case UnaryOp::kAtanh: return {-0.95, 0.95};
    case UnaryOp::kAcosh: return {1.05, 4.0};
    default: return {-4.0, 4.0};
  }
}

// Independent double references (forward and derivative).
double ref_unary(UnaryOp op, double x) {
  switch (op) {
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kExp: return std::exp(x);
    case UnaryOp::kLog: return std::log(x);
    case UnaryOp::kSqrt: return std::sqrt(x);
    case UnaryOp::kRsqrt: return 1 / std::sqrt(x);
    case UnaryOp::kAbs: return std::fabs(x);
    case UnaryOp::kSquare: return x * x;
    case UnaryOp::kReciprocal: return 1 / x;
    case UnaryOp::kRelu: return x > 0 ? x : 0;
    case UnaryOp::kSigmoid: return 1 / (1 + std::exp(-x));
    case UnaryOp::kTanh: return std::tanh(x);
    case UnaryOp::kGelu: return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
    case UnaryOp::kSin: return std::sin(x);
    case UnaryOp::kCos: return std::cos(x);
    case UnaryOp::kTan: return std::tan(x);
    case UnaryOp::kAsin: return std::asin(x);
    case UnaryOp::kAcos: return std::acos(x);
    case UnaryOp::kAtan: return std::atan(x);
    case UnaryOp::kSinh: return std::sinh(x);
    case UnaryOp::kCosh: return std::cosh(x);
    case UnaryOp::kAsinh: return std::asinh(x);
    case UnaryOp::kAcosh: return std::acosh(x);
    case UnaryOp::kAtanh: return std::atanh(x);
    case UnaryOp::kErf: return std::erf(x);
  }
  return 0;
}
double ref_derivative(UnaryOp op, double x) {
  const double h = 1e-6 * std::max(1.0, std::fabs(x));
  return (ref_unary(op, x + h) - ref_unary(op, x - h)) / (2 * h);
}

// ---------------------------------------------------------------------------------------------

class ElementwiseUnary : public ::testing::TestWithParam<Shape> {};

TEST_P(ElementwiseUnary, EveryOpFloat32ContiguousAndTransposed) {
  const Shape shape = GetParam();  // 2-d
  for (UnaryOp op : kAllUnary) {
    SCOPED_TRACE(static_cast<int>(op));
    TestTensor x = make_tensor(DType::kFloat32, {shape[1], shape[0]});
    const auto [low, high] = input_range(op);
    randomize(x, low, high, 1);
    const TensorView xt = permute(x.view, {1, 0});  // `shape`, transposed strides
    TestTensor xc = make_tensor(DType::kFloat32, shape);
    copy(xt, xc.view);  // the same values, contiguous
    for (bool transposed : {false, true}) {
      const TensorView in = transposed ? xt : xc.view;
      TestTensor y = make_tensor(DType::kFloat32, shape);
      unary(op, in, y.view);
      TestTensor dy = make_tensor(DType::kFloat32, shape);
      randomize(dy, -1, 1, 2);
      TestTensor dx = make_tensor(DType::kFloat32, shape);
      unary_backward(op, in, y.view, dy.view, dx.view);
      int bad = 0;
      for_each_index(shape, [&](const Shape& idx) {
        const double xi = get(in, idx);
        const double ref = ref_unary(op, xi);
        if (std::fabs(get(y.view, idx) - ref) > 3e-7 * std::max(1.0, std::fabs(ref))) ++bad;
        const double g = get(dy.view, idx) * ref_derivative(op, xi);
        if (std::fabs(get(dx.view, idx) - g) > 2e-5 * std::max(1.0, std::fabs(g))) ++bad;
      });
      EXPECT_EQ(bad, 0) << "transposed=" << transposed;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, ElementwiseUnary,
                         ::testing::Values(Shape{3, 5}, Shape{37, 53}, Shape{300, 257}));

TEST(ElementwiseUnaryDtypes, HalfAndBFloat16RoundTheFloatResult) {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    TestTensor x = make_tensor(dt, {50000});
    randomize(x, -3, 3, 3);
    TestTensor y = make_tensor(dt, {50000});
    unary(UnaryOp::kGelu, x.view, y.view);
    TestTensor dx = make_tensor(dt, {50000});
    unary_backward(UnaryOp::kTanh, x.view, x.view, x.view, dx.view);  // dy = y = x: x (1 - x^2)
    for (int64_t i = 0; i < 50000; ++i) {
      const float xi = static_cast<float>(get(x.view, i));
      const float expected = kernels::GeluFunctor{}(xi);
      const double rounded = dt == DType::kFloat16 ? half_bits_to_float(float_to_half_bits(expected))
                                                   : bfloat16_bits_to_float(float_to_bfloat16_bits(expected));
      ASSERT_EQ(get(y.view, i), rounded) << i;
      const float g = xi * (1.0f - xi * xi);
      const double grounded = dt == DType::kFloat16 ? half_bits_to_float(float_to_half_bits(g))
                                                    : bfloat16_bits_to_float(float_to_bfloat16_bits(g));
      ASSERT_EQ(get(dx.view, i), grounded) << i;
    }
  }
}

TEST(ElementwiseUnaryDtypes, IntegersForNegAbsSquare) {
  for (DType dt : {DType::kInt32, DType::kInt64}) {
    TestTensor x = make_tensor(dt, {7, 9});
    randomize(x, -1000, 1000, 4);
    TestTensor y = make_tensor(dt, {9, 7});
    const TensorView xt = permute(x.view, {1, 0});
    for (UnaryOp op : {UnaryOp::kNeg, UnaryOp::kAbs, UnaryOp::kSquare}) {
      unary(op, xt, y.view);
      for_each_index({9, 7}, [&](const Shape& idx) {
        ASSERT_EQ(get(y.view, idx), ref_unary(op, get(xt, idx)));
      });
    }
    EXPECT_THROW(unary(UnaryOp::kExp, x.view, x.view), Error);
  }
}

// ---------------------------------------------------------------------------------------------

const BinaryOp kAllBinary[] = {BinaryOp::kAdd,     BinaryOp::kSub,     BinaryOp::kMul,
                               BinaryOp::kDiv,     BinaryOp::kPow,     BinaryOp::kMaximum,
                               BinaryOp::kMinimum, BinaryOp::kEqual,   BinaryOp::kGreater,
                               BinaryOp::kLess,    BinaryOp::kAtan2};

double ref_binary(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kPow: return std::pow(a, b);
    case BinaryOp::kMaximum: return std::max(a, b);
    case BinaryOp::kMinimum: return std::min(a, b);
    case BinaryOp::kEqual: return a == b;
    case BinaryOp::kGreater: return a > b;
    case BinaryOp::kLess: return a < b;
    case BinaryOp::kAtan2: return std::atan2(a, b);
  }
  return 0;
}

class ElementwiseBinary : public ::testing::TestWithParam<int64_t> {};

// a: [n, 1, 33] broadcast to [n, 40, 33] (stride 0); b: a [33, 40, n] tensor permuted to
// [n, 40, 33] (reversed strides).
TEST_P(ElementwiseBinary, BroadcastAndPermutedFloat32) {
  const int64_t n = GetParam();
  const Shape out_shape = {n, 40, 33};
  TestTensor a = make_tensor(DType::kFloat32, {n, 1, 33});
  randomize(a, 0.5, 3, 5);
  TestTensor b = make_tensor(DType::kFloat32, {33, 40, n});
  randomize(b, -2, 2, 6);
  // Some exact ties so equal/max/min see them.
  for (int64_t i = 0; i < 33 * 40 * n; i += 7) set(b.view, i, 1.0);
  for (int64_t i = 0; i < n * 33; i += 5) set(a.view, i, 1.0);
  const TensorView av = broadcast_to(a.view, out_shape);
  const TensorView bv = permute(b.view, {2, 1, 0});
  for (BinaryOp op : kAllBinary) {
    SCOPED_TRACE(static_cast<int>(op));
    TestTensor out = make_tensor(DType::kFloat32, out_shape);
    binary(op, av, bv, out.view);
    int bad = 0;
    for_each_index(out_shape, [&](const Shape& idx) {
      const double ref = ref_binary(op, get(av, idx), get(bv, idx));
      if (std::fabs(get(out.view, idx) - ref) > 3e-7 * std::max(1.0, std::fabs(ref))) ++bad;
    });
    EXPECT_EQ(bad, 0);
  }
  // Comparisons into bool, with a swapped (b broadcast) order.
  const TensorView bb = broadcast_to(a.view, out_shape);
  for (BinaryOp op : {BinaryOp::kEqual, BinaryOp::kGreater, BinaryOp::kLess}) {
    TestTensor out = make_tensor(DType::kBool, out_shape);
    binary(op, bv, bb, out.view);
    int bad = 0;
    for_each_index(out_shape, [&](const Shape& idx) {
      if (get(out.view, idx) != ref_binary(op, get(bv, idx), get(bb, idx))) ++bad;
    });
    EXPECT_EQ(bad, 0);
  }
}

// where: a bool condition broadcast along rows, a broadcast row, b permuted and full of inf and
// NaN; out takes exactly the chosen operand (the other's inf/NaN never shows), every dtype.
TEST(ElementwiseWhere, PicksTheChosenOperandOnlyInEveryDtype) {
  const Shape out_shape = {70, 33};
  for (DType dt : kAllDTypes) {
    SCOPED_TRACE(dtype_name(dt));
    TestTensor cond = make_tensor(DType::kBool, {70, 1});
    for (int64_t i = 0; i < 70; ++i) set(cond.view, i, (i * 7) % 3 == 0 ? 1.0 : 0.0);
    TestTensor a = make_tensor(dt, {33});
    randomize(a, 0, 100, 11);
    TestTensor b = make_tensor(dt, {33, 70});
    randomize(b, 0, 100, 12);
    if (is_floating(dt)) {
      for (int64_t i = 0; i < 33 * 70; i += 3) set(b.view, i, std::numeric_limits<double>::infinity());
      for (int64_t i = 1; i < 33 * 70; i += 3) set(b.view, i, std::nan(""));
    }
    const TensorView cv = broadcast_to(cond.view, out_shape);
    const TensorView av = broadcast_to(a.view, out_shape);
    const TensorView bv = permute(b.view, {1, 0});
    TestTensor out = make_tensor(dt, out_shape);
    where(cv, av, bv, out.view);
    int bad = 0;
    for_each_index(out_shape, [&](const Shape& idx) {
      const double want = get(cv, idx) != 0 ? get(av, idx) : get(bv, idx);
      const double got = get(out.view, idx);
      if (!(got == want || (std::isnan(got) && std::isnan(want)))) ++bad;
    });
    EXPECT_EQ(bad, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, ElementwiseBinary, ::testing::Values(int64_t{2}, int64_t{60}));

TEST(ElementwiseBinaryDtypes, IntegersHalfAndScalars) {
  // int32/int64: add/sub/mul/max/min/comparisons; div and pow are refused.
  for (DType dt : {DType::kInt32, DType::kInt64}) {
    TestTensor a = make_tensor(dt, {6, 10});
    TestTensor b = make_tensor(dt, {10});
    randomize(a, -50, 50, 7);
    randomize(b, -50, 50, 8);
    const TensorView bv = broadcast_to(b.view, {6, 10});
    for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kMaximum,
                        BinaryOp::kMinimum, BinaryOp::kEqual, BinaryOp::kGreater, BinaryOp::kLess}) {
      TestTensor out = make_tensor(dt, {6, 10});
      binary(op, a.view, bv, out.view);
      for_each_index({6, 10}, [&](const Shape& idx) {
        ASSERT_EQ(get(out.view, idx), ref_binary(op, get(a.view, idx), get(bv, idx)));
      });
    }
    TestTensor out = make_tensor(dt, {6, 10});
    EXPECT_THROW(binary(BinaryOp::kDiv, a.view, bv, out.view), Error);
    EXPECT_THROW(binary(BinaryOp::kAtan2, a.view, bv, out.view), Error);
  }
  // float16: computed in float, rounded once.
  TestTensor a = make_tensor(DType::kFloat16, {1000});
  TestTensor b = make_tensor(DType::kFloat16, {1000});
  randomize(a, -10, 10, 9);
  randomize(b, -10, 10, 10);
  TestTensor out = make_tensor(DType::kFloat16, {1000});
  binary(BinaryOp::kMul, a.view, b.view, out.view);
  for (int64_t i = 0; i < 1000; ++i) {
    const float p = static_cast<float>(get(a.view, i)) * static_cast<float>(get(b.view, i));
    ASSERT_EQ(get(out.view, i), half_bits_to_float(float_to_half_bits(p)));
  }
  // A 0-d scalar broadcast against a matrix, and 0-d with 0-d.
  TestTensor s = make_tensor(DType::kFloat32, {});
  set(s.view, 0, 2.5);
  TestTensor m = make_tensor(DType::kFloat32, {3, 4});
  randomize(m, -1, 1, 11);
  TestTensor r = make_tensor(DType::kFloat32, {3, 4});
  binary(BinaryOp::kSub, broadcast_to(s.view, {3, 4}), m.view, r.view);
  for (int64_t i = 0; i < 12; ++i) EXPECT_FLOAT_EQ(get(r.view, i), 2.5f - static_cast<float>(get(m.view, i)));
  TestTensor r0 = make_tensor(DType::kFloat32, {});
  binary(BinaryOp::kAdd, s.view, s.view, r0.view);
  EXPECT_EQ(get(r0.view, 0), 5.0);
}

// ---------------------------------------------------------------------------------------------

// The float16 (or bfloat16) nearest to the double `v`, ties to even bits: chosen among the
// neighbours of the rounding through float, so it does not share the kernel's round-to-odd.
double nearest_16bit(double v, bool bf16) {
  auto decode = [&](uint16_t b) -> double {
    return bf16 ? bfloat16_bits_to_float(b) : half_bits_to_float(b);
  };
  const uint16_t through_float = bf16 ? float_to_bfloat16_bits(static_cast<float>(v))
                                      : float_to_half_bits(static_cast<float>(v));
  if (!std::isfinite(v) || !std::isfinite(decode(through_float))) return decode(through_float);
  uint16_t best = through_float;
  for (int delta : {-1, 1}) {
    const uint16_t b = static_cast<uint16_t>(through_float + delta);
    const double value = decode(b), error = std::fabs(value - v), best_error = std::fabs(decode(best) - v);
    if (!std::isfinite(value) || std::signbit(value) != std::signbit(decode(through_float))) continue;
    if (error < best_error || (error == best_error && (b & 1) == 0)) best = b;
  }
  return decode(best);
}

// What a cast of `v` (an exact value of `from`) gives in `to`, written independently.
double ref_cast(double v, DType from, DType to) {
  if (to == DType::kBool) return v != 0;
  if (from == DType::kFloat64 && (to == DType::kFloat16 || to == DType::kBFloat16)) {
    return nearest_16bit(v, to == DType::kBFloat16);  // one rounding, not two
  }
  switch (to) {
    case DType::kFloat32: return static_cast<float>(v);
    case DType::kFloat64: return v;
    case DType::kFloat16: return half_bits_to_float(float_to_half_bits(static_cast<float>(v)));
    case DType::kBFloat16: return bfloat16_bits_to_float(float_to_bfloat16_bits(static_cast<float>(v)));
    default: break;
  }
  double lo, hi;
  if (to == DType::kInt32) { lo = INT32_MIN; hi = INT32_MAX; }
  else if (to == DType::kInt64) { lo = -std::ldexp(1.0, 63); hi = std::ldexp(1.0, 63); }
  else if (to == DType::kInt16) { lo = INT16_MIN; hi = INT16_MAX; }
  else if (to == DType::kInt8) { lo = INT8_MIN; hi = INT8_MAX; }
  else { lo = 0; hi = 255; }
  if (is_floating(from)) {
    const double t = std::trunc(v);  // toward zero, saturating
    return std::min(std::max(t, lo), hi);
  }
  // Integer to integer wraps.
  const int64_t i = static_cast<int64_t>(v);
  if (to == DType::kInt32) return static_cast<int32_t>(i);
  if (to == DType::kUInt8) return static_cast<uint8_t>(i);
  if (to == DType::kInt8) return static_cast<int8_t>(i);
  if (to == DType::kInt16) return static_cast<int16_t>(i);
  return static_cast<double>(i);
}

TEST(ElementwiseCopy, EveryDtypePairContiguousAndStrided) {
  const std::vector<double> values = {0,    1,     -1,     2.5,    -2.7,   100.4, 0.1,
                                      255,  256.5, -129.9, 65504,  1e-3,   3.14159, 7,
                                      1e5,  -3e9,  1.0009765625 /* 1 + 2^-10 */, 0.33333,
                                      // 1 + 2^-11 + 2^-40: through the nearest float it would
                                      // round twice to 1.0 in float16, not to 1 + 2^-10.
                                      1.0 + 0x1p-11 + 0x1p-40};
  const int64_t n = static_cast<int64_t>(values.size());
  for (DType from : kAllDTypes) {
    TestTensor src = make_tensor(from, {n, 2});
    for (int64_t i = 0; i < n; ++i) {
      // Integer sources hold the truncated, wrapped value; floats the rounded one.
      double v = values[i];
      if (!is_floating(from) && from != DType::kBool) {
        v = ref_cast(std::trunc(v), DType::kInt64, from == DType::kInt64 ? DType::kInt64 : from);
        if (from == DType::kInt32 && std::fabs(values[i]) > 2e9) v = 12345;
      }
      set(src.view, 2 * i, v);
      set(src.view, 2 * i + 1, -v);
    }
    for (DType to : kAllDTypes) {
      SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + dtype_name(to));
      // Contiguous.
      TestTensor dst = make_tensor(to, {n, 2});
      copy(src.view, dst.view);
      for (int64_t i = 0; i < 2 * n; ++i) {
        ASSERT_EQ(get(dst.view, i), ref_cast(get(src.view, i), from, to)) << "element " << i;
      }
      // Transposed source into a contiguous destination (contiguous()).
      const TensorView st = permute(src.view, {1, 0});
      TestTensor dt = make_tensor(to, {2, n});
      copy(st, dt.view);
      for_each_index({2, n}, [&](const Shape& idx) {
        ASSERT_EQ(get(dt.view, idx), ref_cast(get(st, idx), from, to));
      });
    }
  }
}

TEST(ElementwiseCopy, RoundingAndSaturation) {
  TestTensor src = make_tensor(DType::kFloat32, {8});
  const float values[8] = {1.0f + std::ldexp(1.0f, -11),      // f16 tie: to even (1.0)
                           1.0f + 3 * std::ldexp(1.0f, -11),  // f16 tie: to even (up)
                           65520.0f,                          // f16 overflow to inf
                           1.0f + std::ldexp(1.0f, -8),       // bf16 tie: to even (1.0)
                           std::nanf(""), 1e10f, -5.5f, 300.0f};
  for (int i = 0; i < 8; ++i) set(src.view, i, values[i]);
  TestTensor h = make_tensor(DType::kFloat16, {8});
  copy(src.view, h.view);
  EXPECT_EQ(get(h.view, 0), 1.0);
  EXPECT_EQ(get(h.view, 1), 1.0 + 4 * std::ldexp(1.0, -11));
  EXPECT_TRUE(std::isinf(get(h.view, 2)));
  TestTensor bf = make_tensor(DType::kBFloat16, {8});
  copy(src.view, bf.view);
  EXPECT_EQ(get(bf.view, 3), 1.0);
  EXPECT_TRUE(std::isnan(get(bf.view, 4)));
  TestTensor i32 = make_tensor(DType::kInt32, {8});
  copy(src.view, i32.view);
  EXPECT_EQ(get(i32.view, 4), 0);  // NaN -> 0
  EXPECT_EQ(get(i32.view, 5), INT32_MAX);
  EXPECT_EQ(get(i32.view, 6), -5);  // toward zero
  TestTensor u8 = make_tensor(DType::kUInt8, {8});
  copy(src.view, u8.view);
  EXPECT_EQ(get(u8.view, 6), 0);
  EXPECT_EQ(get(u8.view, 7), 255);
  TestTensor b = make_tensor(DType::kBool, {8});
  copy(src.view, b.view);
  EXPECT_EQ(get(b.view, 4), 1);  // NaN != 0
}

TEST(ElementwiseCopy, LargeParallelTransposeIsExact) {
  TestTensor src = make_tensor(DType::kFloat32, {517, 389});
  randomize(src, -1, 1, 12);
  TestTensor dst = make_tensor(DType::kFloat32, {389, 517});
  const TensorView st = permute(src.view, {1, 0});
  copy(st, dst.view);
  for_each_index({389, 517}, [&](const Shape& idx) { ASSERT_EQ(get(dst.view, idx), get(st, idx)); });
  // A batched transpose with a cast (tiled path, edges not a multiple of the tile).
  TestTensor b = make_tensor(DType::kFloat32, {3, 40, 70});
  randomize(b, -100, 100, 22);
  const TensorView bt = permute(b.view, {0, 2, 1});
  for (DType to : {DType::kBFloat16, DType::kInt32, DType::kFloat32}) {
    TestTensor out = make_tensor(to, {3, 70, 40});
    copy(bt, out.view);
    for_each_index({3, 70, 40}, [&](const Shape& idx) {
      ASSERT_EQ(get(out.view, idx), ref_cast(get(bt, idx), DType::kFloat32, to));
    });
  }
  // Same-dtype contiguous copy (the memmove path).
  TestTensor again = make_tensor(DType::kFloat32, {389, 517});
  copy(dst.view, again.view);
  EXPECT_EQ(std::memcmp(again.bytes.data(), dst.bytes.data(), dst.bytes.size()), 0);
}

// ---------------------------------------------------------------------------------------------

TEST(ElementwiseFill, EveryDtypeAndStridedViews) {
  for (DType dt : kAllDTypes) {
    TestTensor t = make_tensor(dt, {10, 6});
    // Every other column only: a strided view whose other elements stay 0.
    TensorView v = t.view;
    v.shape[1] = 3;
    v.strides[1] = 2;
    fill(v, 2.75);
    for (int64_t r = 0; r < 10; ++r) {
      for (int64_t c = 0; c < 6; ++c) {
        const double expected = c % 2 ? 0.0 : ref_cast(2.75, DType::kFloat32, dt);
        ASSERT_EQ(get(t.view, r * 6 + c), expected) << dtype_name(dt);
      }
    }
  }
  TestTensor big = make_tensor(DType::kBFloat16, {100000});
  fill(big.view, -1.5);
  for (int64_t i = 0; i < 100000; ++i) ASSERT_EQ(get(big.view, i), -1.5);
}

TEST(ElementwiseArange, FloatAndInt) {
  TestTensor f = make_tensor(DType::kFloat32, {100001});
  arange(f.view, -3.0, 0.25);
  for (int64_t i = 0; i < 100001; ++i) ASSERT_EQ(get(f.view, i), static_cast<float>(-3.0 + 0.25 * i));
  TestTensor l = make_tensor(DType::kInt64, {50});
  arange(l.view, 10, -3);
  for (int64_t i = 0; i < 50; ++i) ASSERT_EQ(get(l.view, i), 10 - 3 * i);
}

// ---------------------------------------------------------------------------------------------

// Naive reduction: out index = x index with reduced dims set to 0.
std::vector<double> naive_reduce(ReduceOp op, const TensorView& x, uint32_t mask, Shape* out_shape) {
  Shape os = shape_of(x);
  for (int d = 0; d < x.ndim; ++d) {
    if ((mask >> d) & 1) os[d] = 1;
  }
  *out_shape = os;
  int64_t n_out = 1;
  for (int64_t s : os) n_out *= s;
  const bool is_max = op == ReduceOp::kMax || op == ReduceOp::kArgMax;
  const bool is_min = op == ReduceOp::kMin || op == ReduceOp::kArgMin;
  std::vector<double> acc(n_out, is_max ? -INFINITY : is_min ? INFINITY : 0.0);
  std::vector<double> arg(n_out, -1), count(n_out, 0);
  for_each_index(shape_of(x), [&](const Shape& idx) {
    int64_t o = 0, along = 0;
    for (int d = 0; d < x.ndim; ++d) {
      const bool r = (mask >> d) & 1;
      o = o * os[d] + (r ? 0 : idx[d]);
      if (r) along = idx[d];
    }
    const double v = get(x, idx);
    if (is_max ? v > acc[o] : is_min ? v < acc[o] : false) {
      acc[o] = v;
      arg[o] = static_cast<double>(along);
    } else if (!is_max && !is_min) {
      acc[o] += v;
    }
    if (arg[o] < 0) arg[o] = static_cast<double>(along);
    count[o] += 1;
  });
  if (op == ReduceOp::kArgMax || op == ReduceOp::kArgMin) return arg;
  if (op == ReduceOp::kMean) {
    for (int64_t o = 0; o < n_out; ++o) acc[o] /= count[o];
  }
  return acc;
}

void check_reduce(ReduceOp op, const TensorView& x, uint32_t mask, DType out_dtype, double rtol) {
  Shape os;
  const std::vector<double> expected = naive_reduce(op, x, mask, &os);
  TestTensor out = make_tensor(out_dtype, os);
  reduce(op, x, mask, out.view);
  for (size_t o = 0; o < expected.size(); ++o) {
    const double e = expected[o];
    if (out_dtype == DType::kFloat32) {
      ASSERT_NEAR(get(out.view, static_cast<int64_t>(o)), static_cast<float>(e),
                  rtol * std::max(1.0, std::fabs(e)))
          << "op " << static_cast<int>(op) << " mask " << mask << " output " << o;
    } else {
      ASSERT_EQ(get(out.view, static_cast<int64_t>(o)), e)
          << "op " << static_cast<int>(op) << " mask " << mask << " output " << o;
    }
  }
}

TEST(ElementwiseReduce, EveryAxisMaskOnFourDims) {
  TestTensor x = make_tensor(DType::kFloat32, {5, 7, 6, 4});
  randomize(x, -10, 10, 13);
  // Contiguous and permuted (a [4, 6, 7, 5] tensor seen as [5, 7, 6, 4]).
  TestTensor y = make_tensor(DType::kFloat32, {4, 6, 7, 5});
  randomize(y, -10, 10, 14);
  const TensorView yp = permute(y.view, {3, 2, 1, 0});
  for (const TensorView& in : {x.view, yp}) {
    for (uint32_t mask = 0; mask < 16; ++mask) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMean, ReduceOp::kMax, ReduceOp::kMin}) {
        check_reduce(op, in, mask, DType::kFloat32, 1e-6);
      }
    }
    for (uint32_t axis = 0; axis < 4; ++axis) {
      check_reduce(ReduceOp::kArgMax, in, 1u << axis, DType::kInt64, 0);
      check_reduce(ReduceOp::kArgMin, in, 1u << axis, DType::kInt64, 0);
    }
  }
}

TEST(ElementwiseReduce, LargeShapesBothParallelPaths) {
  // Few outputs with long reductions (chunked partials) and many short ones.
  TestTensor a = make_tensor(DType::kFloat32, {3, 200003});
  randomize(a, -1, 1, 15);
  check_reduce(ReduceOp::kSum, a.view, 0b10, DType::kFloat32, 1e-6);
  check_reduce(ReduceOp::kMax, a.view, 0b10, DType::kFloat32, 0);
  check_reduce(ReduceOp::kArgMin, a.view, 0b10, DType::kInt64, 0);
  check_reduce(ReduceOp::kMean, a.view, 0b11, DType::kFloat32, 1e-6);
  const TensorView at = permute(a.view, {1, 0});  // [200003, 3], reduce the long axis 0
  check_reduce(ReduceOp::kSum, at, 0b01, DType::kFloat32, 1e-6);
  check_reduce(ReduceOp::kMin, at, 0b10, DType::kFloat32, 0);
  check_reduce(ReduceOp::kArgMax, at, 0b10, DType::kInt64, 0);
  // Outer dimensions of contiguous rows (the tiled path; 300 is not a multiple of the tile),
  // with integer-valued data so argmax/argmin see ties.
  TestTensor b = make_tensor(DType::kFloat32, {4, 500, 300});
  randomize(b, -20, 20, 21);
  for (int64_t i = 0; i < 4 * 500 * 300; ++i) set(b.view, i, std::floor(get(b.view, i)));
  for (uint32_t mask : {0b001u, 0b010u, 0b011u}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMean, ReduceOp::kMax, ReduceOp::kMin}) {
      check_reduce(op, b.view, mask, DType::kFloat32, 1e-6);
    }
  }
  check_reduce(ReduceOp::kArgMax, b.view, 0b010, DType::kInt64, 0);
  check_reduce(ReduceOp::kArgMin, b.view, 0b001, DType::kInt64, 0);
}

TEST(ElementwiseReduce, SumIsExactInDoubleAndThreadIndependent) {
  // 2^24 + 1 + 1 + ... : a float accumulator would lose every 1.
  TestTensor x = make_tensor(DType::kFloat32, {1 << 20});
  fill(x.view, 1.0);
  set(x.view, 0, 16777216.0);
  set(x.view, 1, 0.0);  // so the exact total, 2^24 + 2^20 - 2, is even: a float32
  TestTensor out = make_tensor(DType::kFloat32, {1});
  reduce(ReduceOp::kSum, x.view, 1, out.view);
  EXPECT_EQ(get(out.view, 0), 16777216.0 + (1 << 20) - 2);
  // Bitwise the same result on 1 and 5 threads.
  TestTensor r = make_tensor(DType::kFloat32, {1 << 21});
  randomize(r, -1, 1, 16);
  float s1 = 0, s5 = 0;
  with_threads(1, [&] { reduce(ReduceOp::kSum, r.view, 1, out.view); s1 = static_cast<float>(get(out.view, 0)); });
  with_threads(5, [&] { reduce(ReduceOp::kSum, r.view, 1, out.view); s5 = static_cast<float>(get(out.view, 0)); });
  EXPECT_EQ(s1, s5);
}

TEST(ElementwiseReduce, ArgMaxTiesPickTheFirstIndex) {
  TestTensor x = make_tensor(DType::kFloat32, {3, 6});
  const double rows[3][6] = {{1, 5, 2, 5, 5, 0}, {7, 7, 7, 7, 7, 7}, {-1, -3, -3, 4, 4, -3}};
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 6; ++c) set(x.view, r * 6 + c, rows[r][c]);
  }
  TestTensor out = make_tensor(DType::kInt64, {3, 1});
  reduce(ReduceOp::kArgMax, x.view, 0b10, out.view);
  EXPECT_EQ(get(out.view, 0), 1);
  EXPECT_EQ(get(out.view, 1), 0);
  EXPECT_EQ(get(out.view, 2), 3);
  reduce(ReduceOp::kArgMin, x.view, 0b10, out.view);
  EXPECT_EQ(get(out.view, 0), 5);
  EXPECT_EQ(get(out.view, 1), 0);
  EXPECT_EQ(get(out.view, 2), 1);
  // Along axis 0: column 1 has 5, 7, -3 -> 1; column 0 -> 1; ties with 7 in row 1 everywhere.
  TestTensor out0 = make_tensor(DType::kInt64, {1, 6});
  reduce(ReduceOp::kArgMax, x.view, 0b01, out0.view);
  for (int c = 0; c < 6; ++c) EXPECT_EQ(get(out0.view, c), 1);
  // A long row of equal values spanning several parallel chunks: still index 0.
  TestTensor big = make_tensor(DType::kFloat32, {1, 300000});
  TestTensor ob = make_tensor(DType::kInt64, {1, 1});
  fill(big.view, 2.0);
  reduce(ReduceOp::kArgMax, big.view, 0b10, ob.view);
  EXPECT_EQ(get(ob.view, 0), 0);
  // NaN wins, first NaN (NumPy).
  set(big.view, 299999, std::nan(""));
  set(big.view, 150000, std::nan(""));
  reduce(ReduceOp::kArgMax, big.view, 0b10, ob.view);
  EXPECT_EQ(get(ob.view, 0), 150000);
}

TEST(ElementwiseReduce, IntegerHalfAndScalarInputs) {
  TestTensor i = make_tensor(DType::kInt32, {4, 5});
  randomize(i, -100, 100, 17);
  check_reduce(ReduceOp::kSum, i.view, 0b01, DType::kInt32, 0);
  check_reduce(ReduceOp::kMax, i.view, 0b11, DType::kInt32, 0);
  check_reduce(ReduceOp::kArgMax, i.view, 0b10, DType::kInt64, 0);
  TestTensor h = make_tensor(DType::kFloat16, {64, 3});
  randomize(h, -4, 4, 18);
  check_reduce(ReduceOp::kMin, h.view, 0b01, DType::kFloat16, 0);
  check_reduce(ReduceOp::kSum, h.view, 0b01, DType::kFloat32, 1e-6);  // f16 in, f32 out
  // Mean of a bool tensor into float32.
  TestTensor b = make_tensor(DType::kBool, {10});
  for (int k = 0; k < 10; ++k) set(b.view, k, k % 3 == 0);
  TestTensor m = make_tensor(DType::kFloat32, {1});
  reduce(ReduceOp::kMean, b.view, 1, m.view);
  EXPECT_FLOAT_EQ(get(m.view, 0), 0.4f);
  // A 0-d input reduces to itself.
  TestTensor s = make_tensor(DType::kFloat32, {});
  set(s.view, 0, 3.5);
  TestTensor so = make_tensor(DType::kFloat32, {});
  reduce(ReduceOp::kSum, s.view, 0, so.view);
  EXPECT_EQ(get(so.view, 0), 3.5);
}

// ---------------------------------------------------------------------------------------------

std::vector<float> generate(RandomDistribution d, uint64_t seed, uint64_t offset, int64_t n) {
  TestTensor t = make_tensor(DType::kFloat32, {n});
  random(d, seed, offset, t.view);
  std::vector<float> v(static_cast<size_t>(n));
  std::memcpy(v.data(), t.bytes.data(), v.size() * sizeof(float));
  return v;
}

TEST(ElementwiseRandom, MatchesTheFunctorsAndSplitsAndThreads) {
  const int64_t n = 100003;
  for (RandomDistribution d : {RandomDistribution::kUniform, RandomDistribution::kNormal}) {
    const std::vector<float> all = generate(d, 1234, 0, n);
    for (int64_t i = 0; i < n; i += 997) {
      const float expected = d == RandomDistribution::kUniform ? kernels::philox_uniform(1234, i)
                                                               : kernels::philox_normal(1234, i);
      ASSERT_EQ(all[i], expected) << i;
    }
    // [0, n) at once equals [0, k) + [k, n) with offset k, for splits inside Philox blocks.
    for (int64_t k : {int64_t{1}, int64_t{5}, int64_t{50001}, n - 2}) {
      const std::vector<float> head = generate(d, 1234, 0, k);
      const std::vector<float> tail = generate(d, 1234, static_cast<uint64_t>(k), n - k);
      for (int64_t i = 0; i < k; ++i) ASSERT_EQ(head[i], all[i]);
      for (int64_t i = k; i < n; ++i) ASSERT_EQ(tail[i - k], all[i]);
    }
    // Any thread count.
    for (int threads : {1, 3, 8}) {
      std::vector<float> again;
      with_threads(threads, [&] { again = generate(d, 1234, 0, n); });
      ASSERT_EQ(again, all) << threads << " threads";
    }
    EXPECT_NE(generate(d, 1235, 0, 16), generate(d, 1234, 0, 16));
  }
}

TEST(ElementwiseRandom, UniformRangeAndNormalMoments) {
  const int64_t n = 1000000;
  const std::vector<float> u = generate(RandomDistribution::kUniform, 7, 0, n);
  double su = 0;
  for (float v : u) {
    ASSERT_GE(v, 0.0f);
    ASSERT_LT(v, 1.0f);
    su += v;
  }
  EXPECT_NEAR(su / n, 0.5, 5 * 0.2887 / 1000);
  const std::vector<float> z = generate(RandomDistribution::kNormal, 7, 0, n);
  double s1 = 0, s2 = 0;
  for (float v : z) {
    s1 += v;
    s2 += static_cast<double>(v) * v;
  }
  const double mean = s1 / n, stdev = std::sqrt(s2 / n - mean * mean);
  EXPECT_NEAR(mean, 0.0, 0.005);     // 5 standard errors
  EXPECT_NEAR(stdev, 1.0, 0.0035);
}

TEST(ElementwiseRandom, HalfAndBFloat16StayBelowOne) {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    TestTensor t = make_tensor(dt, {200000});
    random(RandomDistribution::kUniform, 3, 0, t.view);
    double mx = 0;
    for (int64_t i = 0; i < 200000; ++i) mx = std::max(mx, get(t.view, i));
    EXPECT_LT(mx, 1.0);
    EXPECT_GT(mx, 0.99);
    random(RandomDistribution::kNormal, 3, 0, t.view);
    const float z0 = kernels::philox_normal(3, 0);
    EXPECT_EQ(get(t.view, 0), dt == DType::kFloat16 ? half_bits_to_float(float_to_half_bits(z0))
                                                    : bfloat16_bits_to_float(float_to_bfloat16_bits(z0)));
  }
}

// ---------------------------------------------------------------------------------------------

TEST(ElementwiseDropout, MaskRateScalingAndDeterminism) {
  const double rate = 0.25;
  TestTensor xs = make_tensor(DType::kFloat32, {800, 1000});
  randomize(xs, -2, 2, 19);
  const TensorView x = permute(xs.view, {1, 0});  // [1000, 800], transposed strides
  TestTensor y = make_tensor(DType::kFloat32, {1000, 800});
  TestTensor mask = make_tensor(DType::kUInt8, {1000, 800});
  dropout(x, rate, 77, 5, y.view, mask.view);
  const float scale = static_cast<float>(1.0 / (1.0 - rate));
  int64_t kept = 0, i = 0;
  bool ok = true;
  for_each_index({1000, 800}, [&](const Shape& idx) {
    const bool m = get(mask.view, idx) != 0;
    kept += m;
    // Element i (row-major over the logical shape) uses counter offset + i.
    ok = ok && m == (kernels::philox_uniform(77, 5 + i) >= static_cast<float>(rate));
    const double expected = m ? static_cast<double>(static_cast<float>(get(x, idx)) * scale) : 0.0;
    ok = ok && get(y.view, idx) == expected;
    ++i;
  });
  EXPECT_TRUE(ok);
  // Keep rate 0.75; standard error sqrt(0.1875 / 8e5) = 0.00048.
  EXPECT_NEAR(kept / 800000.0, 0.75, 0.0025);
  // Same mask on one thread.
  TestTensor y1 = make_tensor(DType::kFloat32, {1000, 800});
  TestTensor m1 = make_tensor(DType::kUInt8, {1000, 800});
  with_threads(1, [&] { dropout(x, rate, 77, 5, y1.view, m1.view); });
  EXPECT_EQ(m1.bytes, mask.bytes);
  EXPECT_EQ(y1.bytes, y.bytes);
  // bfloat16 input: y is the rounded float result.
  TestTensor hb = make_tensor(DType::kBFloat16, {4096});
  randomize(hb, -1, 1, 20);
  TestTensor hy = make_tensor(DType::kBFloat16, {4096});
  TestTensor hm = make_tensor(DType::kUInt8, {4096});
  dropout(hb.view, 0.5, 1, 0, hy.view, hm.view);
  for (int64_t k = 0; k < 4096; ++k) {
    const float e = get(hm.view, k) ? static_cast<float>(get(hb.view, k)) * 2.0f : 0.0f;
    ASSERT_EQ(get(hy.view, k), bfloat16_bits_to_float(float_to_bfloat16_bits(e)));
  }
}

}  // namespace
}  // namespace gpuaccel::cpu

namespace gpuaccel::cpu {
namespace {

// Contiguous bfloat16 operands take the block path (bulk conversions, f32 functor, one
// rounding) and ReLU a bit-level path; both must give exactly the bits of the per-element
// definition -- widen, apply the functor in float, round to nearest even -- on every bf16
// pattern (NaNs, infinities, zeros of both signs, subnormals), at a length that splits into
// several blocks and threads. (ReLU's bit path also keeps NaN payloads; the check does not
// rely on it.)
TEST(ElementwiseBFloat16, ContiguousPathsGiveTheFunctorsBits) {
  const int64_t n = 65536 + 37;
  TestTensor x = make_tensor(DType::kBFloat16, {n});
  TestTensor dy = make_tensor(DType::kBFloat16, {n});
  auto* xb = reinterpret_cast<BFloat16*>(x.bytes.data());
  auto* dyb = reinterpret_cast<BFloat16*>(dy.bytes.data());
  std::mt19937 rng(11);
  for (int64_t i = 0; i < n; ++i) {
    xb[i].bits = static_cast<uint16_t>(i);
    dyb[i].bits = static_cast<uint16_t>(rng());
  }
  dyb[5].bits = 0x7f81;  // a signalling NaN gradient must come out quiet
  xb[5].bits = 0x3f80;
  const auto expect_bits = [&](const TestTensor& out, const std::function<float(int64_t)>& ref,
                               const char* what) {
    const auto* ob = reinterpret_cast<const BFloat16*>(out.bytes.data());
    for (int64_t i = 0; i < n; ++i) {
      const uint16_t want = BFloat16::from_float(ref(i)).bits;
      // Which NaN operand's payload an f32 instruction keeps depends on how the compiler
      // ordered it: NaN results only have to be NaN.
      const auto is_nan = [](uint16_t b) { return (b & 0x7fff) > 0x7f80; };
      if (is_nan(want)) {
        ASSERT_TRUE(is_nan(ob[i].bits)) << what << " at x bits " << std::hex << xb[i].bits;
        continue;
      }
      ASSERT_EQ(ob[i].bits, want) << what << " at x bits " << std::hex << xb[i].bits
                                  << " dy bits " << dyb[i].bits;
    }
  };
  const auto check_unary = [&](UnaryOp op, auto functor, const char* name) {
    TestTensor y = make_tensor(DType::kBFloat16, {n});
    unary(op, x.view, y.view);
    expect_bits(y, [&](int64_t i) { return functor(xb[i].to_float()); }, name);
    TestTensor dx = make_tensor(DType::kBFloat16, {n});
    unary_backward(op, x.view, y.view, dy.view, dx.view);
    const auto* yb = reinterpret_cast<const BFloat16*>(y.bytes.data());
    expect_bits(dx, [&](int64_t i) {
      return functor.backward(xb[i].to_float(), yb[i].to_float(), dyb[i].to_float());
    }, name);
  };
  check_unary(UnaryOp::kRelu, kernels::ReluFunctor{}, "relu");
  check_unary(UnaryOp::kSigmoid, kernels::SigmoidFunctor{}, "sigmoid");
  check_unary(UnaryOp::kNeg, kernels::NegFunctor{}, "neg");

  TestTensor sum = make_tensor(DType::kBFloat16, {n});
  binary(BinaryOp::kAdd, x.view, dy.view, sum.view);
  expect_bits(sum, [&](int64_t i) { return xb[i].to_float() + dyb[i].to_float(); }, "add");

  // Casts both ways through the bulk conversions.
  TestTensor wide = make_tensor(DType::kFloat32, {n});
  copy(x.view, wide.view);
  TestTensor back = make_tensor(DType::kBFloat16, {n});
  copy(wide.view, back.view);
  expect_bits(back, [&](int64_t i) { return xb[i].to_float(); }, "cast round trip");
}

}  // namespace
}  // namespace gpuaccel::cpu
