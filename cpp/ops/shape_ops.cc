// Shape, view, cast and transfer ops (see shape_ops.h).
#include "ops/shape_ops.h"

#include <algorithm>
#include <vector>

#include "core/errors.h"
#include "ops/autograd.h"
#include "ops/creation.h"
#include "ops/op_utils.h"
#include "ops/reduce.h"

namespace gpuaccel {

namespace {

Tensor copy_to_new(const char* op, const Tensor& x, DType dtype) {
  Tensor out = Tensor::empty(x.shape(), dtype, x.device(), op);
  if (out.numel() > 0) backend_for_op(op, x.device()).copy(x.view(), out.view());
  return out;
}

// Strides that let `new_shape` view memory laid out as (shape, strides) in row-major element
// order, if there are any (PyTorch's computeStride): each run of dims that is contiguous with
// itself may be split or merged freely; size-1 dims take any stride.
bool strides_for_view(const Shape& shape, const Strides& strides, const Shape& new_shape,
                      Strides& out) {
  out.assign(new_shape.size(), 0);
  if (shape_numel(shape) == 0) {
    out = contiguous_strides(new_shape);
    return true;
  }
  int64_t view_d = static_cast<int64_t>(new_shape.size()) - 1;
  int64_t chunk_base_stride = strides.empty() ? 1 : strides.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    tensor_numel *= shape[d];
    if (d == 0 || (shape[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

}  // namespace

Tensor contiguous(const Tensor& x) {
  if (x.is_contiguous()) return x;
  Tensor out = copy_to_new("Contiguous", x, x.dtype());
  record("Contiguous", {x}, {out}, [](const std::vector<Tensor>& g) { return g; });
  return out;
}

Tensor clone(const Tensor& x) {
  Tensor out = copy_to_new("Identity", x, x.dtype());
  record("Identity", {x}, {out}, [](const std::vector<Tensor>& g) { return g; });
  return out;
}

Tensor detach(const Tensor& x) { return x.as_strided(x.shape(), x.strides(), x.offset()); }

Tensor reshape(const Tensor& x, const Shape& requested) {
  Shape shape = requested;
  int infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) {
        throw_error(ErrorCode::kInvalidArgument, "Reshape",
                    "shape " + shape_to_string(requested) + " has more than one -1 (only one "
                    "dimension can be inferred)");
      }
      infer = static_cast<int>(i);
    } else if (shape[i] < 0) {
      throw_error(ErrorCode::kInvalidArgument, "Reshape",
                  "invalid dimension " + std::to_string(shape[i]) + " in shape " +
                      shape_to_string(requested) + " (dimensions are >= 0, or -1 once)");
    }
  }
  if (static_cast<int>(shape.size()) > kMaxDims) {
    throw_error(ErrorCode::kInvalidArgument, "Reshape",
                "shape " + shape_to_string(requested) + " has more than " +
                    std::to_string(kMaxDims) + " dimensions");
  }
  if (infer >= 0) {
    shape[infer] = 1;
    const int64_t known = checked_numel(shape, "Reshape");
    if (known == 0 || x.numel() % known != 0) {
      throw_error(ErrorCode::kInvalidArgument, "Reshape",
                  "cannot reshape a tensor of shape " + shape_to_string(x.shape()) + " into " +
                      shape_to_string(requested));
    }
    shape[infer] = x.numel() / known;
  }
  if (checked_numel(shape, "Reshape") != x.numel()) {
    throw_error(ErrorCode::kInvalidArgument, "Reshape",
                "cannot reshape a tensor of " + std::to_string(x.numel()) + " elements (shape " +
                    shape_to_string(x.shape()) + ") into shape " + shape_to_string(requested));
  }
  // A view whenever the strides allow it (PyTorch's rule), so indexing an int out of a strided
  // view, squeeze and unsqueeze stay views and writes through them reach the base.
  Strides view_strides;
  const bool viewable = x.is_contiguous() || strides_for_view(x.shape(), x.strides(), shape, view_strides);
  const Tensor source = viewable ? x : contiguous(x);
  if (x.is_contiguous() || !viewable) view_strides = contiguous_strides(shape);
  Tensor out = source.as_strided(shape, view_strides, source.offset());
  const Shape input_shape = x.shape();
  record("Reshape", {source}, {out}, [input_shape](const std::vector<Tensor>& g) {
    return std::vector<Tensor>{reshape(g[0], input_shape)};
  });
  return out;
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  const std::vector<int> perm = normalize_permutation(dims, x.ndim(), "Transpose");
  Shape shape(perm.size());
  Strides strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    shape[i] = x.shape()[perm[i]];
    strides[i] = x.strides()[perm[i]];
  }
  Tensor out = x.as_strided(shape, strides, x.offset());
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  record("Transpose", {x}, {out}, [inverse](const std::vector<Tensor>& g) {
    return std::vector<Tensor>{permute(g[0], inverse)};
  });
  return out;
}

Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  std::vector<int64_t> dims(x.ndim());
  for (int i = 0; i < x.ndim(); ++i) dims[i] = i;
  std::swap(dims[normalize_axis(dim0, x.ndim(), "Transpose", "dim0")],
            dims[normalize_axis(dim1, x.ndim(), "Transpose", "dim1")]);
  return permute(x, dims);
}

Tensor slice(const Tensor& x, const std::vector<SliceSpec>& per_dim) {
  if (static_cast<int>(per_dim.size()) > x.ndim()) {
    throw_error(ErrorCode::kInvalidArgument, "StridedSlice",
                "too many indices for a tensor of rank " + std::to_string(x.ndim()));
  }
  Shape shape = x.shape();
  Strides strides = x.strides();
  int64_t offset = x.offset();
  for (size_t d = 0; d < per_dim.size(); ++d) {
    const SliceSpec& s = per_dim[d];
    if (s.step <= 0) {
      throw_error(ErrorCode::kInvalidArgument, "StridedSlice",
                  "slice step " + std::to_string(s.step) + " of dimension " + std::to_string(d) +
                      " must be positive");
    }
    // Within [0, size]: what Python's slice.indices gives; anything else would view memory
    // outside the tensor (and the difference below could overflow).
    const int64_t size = x.shape()[d];
    if (s.start < 0 || s.start > size || s.stop < 0 || s.stop > size) {
      throw_error(ErrorCode::kInvalidArgument, "StridedSlice",
                  "slice " + std::to_string(s.start) + ":" + std::to_string(s.stop) + ":" +
                      std::to_string(s.step) + " of dimension " + std::to_string(d) +
                      " (size " + std::to_string(size) +
                      ") is out of range (start and stop must be in [0, size])");
    }
    const int64_t count = s.stop > s.start ? (s.stop - s.start - 1) / s.step + 1 : 0;
    offset += (count > 0 ? s.start : 0) * x.strides()[d];
    shape[d] = count;
    strides[d] = x.strides()[d] * s.step;
  }
  Tensor out = x.as_strided(shape, strides, offset);
  const Tensor input = x;
  const std::vector<SliceSpec> specs = per_dim;
  record("StridedSlice", {x}, {out}, [input, specs](const std::vector<Tensor>& g) {
    Tensor dx = zeros(input.shape(), g[0].dtype(), g[0].device());
    copy_into(g[0], slice(dx, specs));
    return std::vector<Tensor>{dx};
  });
  return out;
}

Tensor select(const Tensor& x, int64_t axis, int64_t index) {
  const int d = normalize_axis(axis, x.ndim(), "Gather");
  const int64_t size = x.shape()[d];
  if (index < -size || index >= size) {
    throw_error(ErrorCode::kInvalidArgument, "StridedSlice",
                "index " + std::to_string(index) + " is out of bounds for dimension " +
                    std::to_string(d) + " with size " + std::to_string(size));
  }
  if (index < 0) index += size;
  std::vector<SliceSpec> specs(d + 1);
  for (int i = 0; i < d; ++i) specs[i] = {0, x.shape()[i], 1};
  specs[d] = {index, index + 1, 1};
  Shape squeezed = x.shape();
  squeezed.erase(squeezed.begin() + d);
  return reshape(slice(x, specs), squeezed);
}

Tensor expand_dims(const Tensor& x, int64_t axis) {
  const int d = normalize_axis(axis, x.ndim() + 1, "ExpandDims");
  Shape shape = x.shape();
  shape.insert(shape.begin() + d, 1);
  return reshape(x, shape);
}

Tensor squeeze(const Tensor& x, const std::vector<int64_t>& axes) {
  const std::vector<int> dropped = normalize_axes(axes, x.ndim(), "Squeeze");
  Shape shape;
  for (int d = 0; d < x.ndim(); ++d) {
    const bool listed = std::find(dropped.begin(), dropped.end(), d) != dropped.end();
    if (listed && x.shape()[d] != 1) {
      throw_error(ErrorCode::kInvalidArgument, "Squeeze",
                  "cannot squeeze axis " + std::to_string(d) + " of size " +
                      std::to_string(x.shape()[d]) + " (shape " + shape_to_string(x.shape()) +
                      "; only size-1 axes can be removed)");
    }
    const bool drop = axes.empty() ? x.shape()[d] == 1 : listed;
    if (!drop) shape.push_back(x.shape()[d]);
  }
  return reshape(x, shape);
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  checked_numel(shape, "BroadcastTo");
  const Shape result = broadcast_shapes(x.shape(), shape, "BroadcastTo");
  if (result != shape) {
    throw_error(ErrorCode::kInvalidArgument, "BroadcastTo",
                "cannot broadcast " + shape_to_string(x.shape()) + " to " + shape_to_string(shape));
  }
  Tensor out = Tensor::empty(shape, x.dtype(), x.device(), "BroadcastTo");
  if (out.numel() > 0) backend_for_op("BroadcastTo", x.device()).copy(broadcast_view(x, shape), out.view());
  const Shape input_shape = x.shape();
  record("BroadcastTo", {x}, {out}, [input_shape](const std::vector<Tensor>& g) {
    return std::vector<Tensor>{sum_to_shape(g[0], input_shape)};
  });
  return out;
}

Tensor sum_to_shape(const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;
  const int lead = grad.ndim() - static_cast<int>(shape.size());
  std::vector<int64_t> axes;
  for (int d = 0; d < grad.ndim(); ++d) {
    if (d < lead || (shape[d - lead] == 1 && grad.shape()[d] != 1)) axes.push_back(d);
  }
  Tensor summed = reduce_sum(grad, axes, /*keepdims=*/true);
  return reshape(summed, shape);
}

Tensor cast(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  Tensor out = copy_to_new("Cast", x, dtype);
  const DType input_dtype = x.dtype();
  if (is_floating(dtype) && is_floating(input_dtype)) {
    record("Cast", {x}, {out}, [input_dtype](const std::vector<Tensor>& g) {
      return std::vector<Tensor>{cast(g[0], input_dtype)};
    });
  }
  return out;
}

Tensor to_device(const Tensor& x, const LogicalDevice& device) {
  const LogicalDevice& from = x.device();
  if (from.type == device.type && from.index == device.index) return x;
  const Tensor src = contiguous(x);
  Tensor out = Tensor::empty(x.shape(), x.dtype(), device, "Copy");
  if (out.numel() > 0) {
    DeviceRegistry::instance().log_execution("Copy", device);
    if (from.type == DeviceType::kCPU) {
      backend_for(device).copy_from_host(src.data(), out.view());
    } else if (device.type == DeviceType::kCPU) {
      backend_for(from).copy_to_host(src.view(), out.data());
    } else {
      // GPU to GPU through the host: simple and rare in this course.
      Tensor staging = to_device(src, DeviceRegistry::instance().logical_devices(DeviceType::kCPU).at(0));
      backend_for(device).copy_from_host(staging.data(), out.view());
    }
  }
  const LogicalDevice source_device = from;
  record("Copy", {x}, {out}, [source_device](const std::vector<Tensor>& g) {
    return std::vector<Tensor>{to_device(g[0], source_device)};
  });
  return out;
}

Tensor concat(const std::vector<Tensor>& xs, int64_t axis) {
  if (xs.empty()) {
    throw_error(ErrorCode::kInvalidArgument, "ConcatV2", "expected a non-empty list of tensors");
  }
  const LogicalDevice& device = common_device("ConcatV2", xs);
  const DType dtype = common_dtype("ConcatV2", xs);
  const Shape& first = xs[0].shape();
  if (first.empty()) {
    throw_error(ErrorCode::kInvalidArgument, "ConcatV2",
                "can't concatenate scalars (use stack instead)");
  }
  const int d = normalize_axis(axis, static_cast<int>(first.size()), "ConcatV2");
  Shape shape = first;
  shape[d] = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Shape& s = xs[i].shape();
    bool same = s.size() == first.size();
    for (size_t k = 0; same && k < s.size(); ++k) same = (static_cast<int>(k) == d || s[k] == first[k]);
    if (!same) {
      throw_error(ErrorCode::kInvalidArgument, "ConcatV2",
                  "Dimension mismatch: input 0 has shape " + shape_to_string(first) + " and input " +
                      std::to_string(i) + " has shape " + shape_to_string(s) +
                      "; all dimensions but axis " + std::to_string(d) + " must match");
    }
    shape[d] += s[d];
  }
  Tensor out = Tensor::empty(shape, dtype, device, "ConcatV2");
  std::vector<SliceSpec> specs(d + 1);
  for (int k = 0; k < d; ++k) specs[k] = {0, shape[k], 1};
  std::vector<std::vector<SliceSpec>> pieces;
  int64_t start = 0;
  {
    GradModeGuard no_grad(false);
    for (const Tensor& x : xs) {
      specs[d] = {start, start + x.shape()[d], 1};
      pieces.push_back(specs);
      if (x.numel() > 0) copy_into(x, slice(out, specs));
      start += x.shape()[d];
    }
  }
  record("ConcatV2", xs, {out}, [pieces](const std::vector<Tensor>& g) {
    std::vector<Tensor> dxs;
    for (const auto& p : pieces) dxs.push_back(contiguous(slice(g[0], p)));
    return dxs;
  });
  return out;
}

void copy_into(const Tensor& src, const Tensor& dst) {
  check_defined("Assign", src, "value");
  check_defined("Assign", dst, "target");
  common_device("Assign", {src, dst});
  // The value must broadcast *to* the target (NumPy's rule): shapes that merely broadcast with
  // each other, (3,) into (), would write only part of the value. Leading size-1 dimensions
  // of the value beyond the target's rank are dropped first, as NumPy and torch do.
  Tensor value = src;
  while (value.ndim() > dst.ndim() && value.dim(0) == 1) {
    value = value.as_strided(Shape(value.shape().begin() + 1, value.shape().end()),
                             Strides(value.strides().begin() + 1, value.strides().end()),
                             value.offset());
  }
  if (value.ndim() > dst.ndim() ||
      broadcast_shapes(value.shape(), dst.shape(), "Assign") != dst.shape()) {
    throw_error(ErrorCode::kInvalidArgument, "Assign",
                "could not broadcast a value of shape " + shape_to_string(src.shape()) +
                    " into the target's shape " + shape_to_string(dst.shape()));
  }
  if (dst.numel() == 0) return;
  backend_for_op("Assign", dst.device()).copy(broadcast_view(value, dst.shape()), dst.view());
  dst.bump_version();  // copies derived from the old values are stale now
}
}  // namespace gpuaccel
