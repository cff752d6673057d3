// Shape arithmetic and the validation of user-supplied sizes and axes (see shape.h).
#include "tensor/shape.h"

#include <algorithm>
#include <limits>

#include "core/errors.h"

namespace gpuaccel {

namespace {

[[noreturn]] void invalid(std::string_view op, const std::string& message) {
  throw_error(ErrorCode::kInvalidArgument, std::string(op), message);
}

// The largest element count or byte size a tensor may have.
constexpr int64_t kMaxSize = std::numeric_limits<int64_t>::max();

}  // namespace

int64_t shape_numel(const Shape& shape) {
  // Saturates instead of overflowing: no undefined behaviour even for a shape nobody has
  // validated yet (a live tensor's count always fits; users get checked_numel's error).
  int64_t n = 1;
  bool saturated = false;
  for (int64_t d : shape) {
    if (d == 0) return 0;
    if (!saturated && __builtin_mul_overflow(n, d, &n)) saturated = true;
  }
  return saturated ? kMaxSize : n;
}

int64_t checked_numel(const Shape& shape, std::string_view op) {
  return checked_nbytes(shape, 1, op);
}

int64_t checked_nbytes(const Shape& shape, int64_t element_size, std::string_view op) {
  int64_t nonzero_product = element_size;
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) {
      invalid(op, "negative dimension " + std::to_string(d) + " in shape " +
                      shape_to_string(shape) + " (dimensions must be >= 0)");
    }
    if (d == 0) {
      empty = true;
      continue;
    }
    if (__builtin_mul_overflow(nonzero_product, d, &nonzero_product)) {
      invalid(op, "shape " + shape_to_string(shape) + " is too large: " +
                      (element_size == 1 ? std::string("its element count")
                                         : "its size in bytes (" + std::to_string(element_size) +
                                               " per element)") +
                      " exceeds 2^63 - 1");
    }
  }
  return empty ? 0 : nonzero_product;
}

Strides contiguous_strides(const Shape& shape) {
  Strides strides(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return strides;
}

std::string shape_to_string(const Shape& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

std::string axes_to_string(const std::vector<int64_t>& axes) { return shape_to_string(axes); }

Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& op) {
  const size_t ndim = std::max(a.size(), b.size());
  Shape out(ndim);
  for (size_t i = 0; i < ndim; ++i) {
    const int64_t da = i < ndim - a.size() ? 1 : a[i - (ndim - a.size())];
    const int64_t db = i < ndim - b.size() ? 1 : b[i - (ndim - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw_error(ErrorCode::kInvalidArgument, op,
                  "shapes " + shape_to_string(a) + " and " + shape_to_string(b) +
                      " cannot be broadcast together: dimension " + std::to_string(i) + " is " +
                      std::to_string(da) + " vs " + std::to_string(db) +
                      " (each must be equal or 1)");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int normalize_axis(int64_t axis, int ndim, std::string_view op, std::string_view what) {
  if (axis < -ndim || axis >= ndim) {
    invalid(op, std::string(what) + " " + std::to_string(axis) +
                    " is out of bounds for a tensor of rank " + std::to_string(ndim) +
                    (ndim == 0 ? std::string(" (a 0-d tensor has no axes)")
                               : " (valid: " + std::to_string(-ndim) + " to " +
                                     std::to_string(ndim - 1) + ")"));
  }
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

std::vector<int> normalize_axes(const std::vector<int64_t>& axes, int ndim, std::string_view op) {
  std::vector<int> out;
  out.reserve(axes.size());
  for (int64_t a : axes) {
    const int d = normalize_axis(a, ndim, op);
    if (std::find(out.begin(), out.end(), d) != out.end()) {
      invalid(op, "axis " + std::to_string(a) + " is repeated in axis=" + axes_to_string(axes) +
                      " (each axis may appear once)");
    }
    out.push_back(d);
  }
  return out;
}

std::vector<int> normalize_permutation(const std::vector<int64_t>& dims, int ndim,
                                       std::string_view op) {
  if (static_cast<int64_t>(dims.size()) != ndim) {
    invalid(op, "permutation " + axes_to_string(dims) + " has " + std::to_string(dims.size()) +
                    " entries for a tensor of rank " + std::to_string(ndim) +
                    " (it must list each of the " + std::to_string(ndim) + " axes once)");
  }
  std::vector<int> out;
  out.reserve(dims.size());
  for (int64_t a : dims) {
    const int d = normalize_axis(a, ndim, op, "permutation entry");
    if (std::find(out.begin(), out.end(), d) != out.end()) {
      invalid(op, "permutation " + axes_to_string(dims) + " repeats axis " + std::to_string(d) +
                      " (it must list each of the " + std::to_string(ndim) + " axes once)");
    }
    out.push_back(d);
  }
  return out;
}

}  // namespace gpuaccel
