// Shape arithmetic (see shape.h).
#include "tensor/shape.h"

#include "core/errors.h"

namespace gpuaccel {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
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

int normalize_axis(int64_t axis, int ndim, const std::string& op) {
  if (axis < -ndim || axis >= std::max(ndim, 1)) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "axis " + std::to_string(axis) + " is out of bounds for a tensor of rank " +
                    std::to_string(ndim) + " (valid: " + std::to_string(-ndim) + ".." +
                    std::to_string(ndim - 1) + ")");
  }
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

}  // namespace gpuaccel
