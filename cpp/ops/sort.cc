// The sort frontend (see sort.h): the axis moves last and the rows become contiguous for the
// backend's row sort, then move back.
#include "ops/sort.h"

#include <string>

#include "core/errors.h"
#include "ops/autograd.h"
#include "ops/creation.h"
#include "ops/op_utils.h"
#include "ops/shape_ops.h"

namespace gpuaccel {

Tensor take_along_last_axis(const Tensor& x, const Tensor& indices) {
  const char* name = "TakeAlongAxis";
  check_defined(name, x, "x");
  check_defined(name, indices, "indices");
  common_device(name, x, indices);
  if (indices.dtype() != DType::kInt64 || x.ndim() == 0 || indices.ndim() != x.ndim()) {
    throw_error(ErrorCode::kInvalidArgument, name,
                "indices must be int64 with x's rank (at least 1), got " +
                    std::string(dtype_name(indices.dtype())) + " of shape " +
                    shape_to_string(indices.shape()) + " for x of shape " +
                    shape_to_string(x.shape()));
  }
  Shape shape = x.shape();
  shape.back() = indices.shape().back();
  if (Shape(indices.shape().begin(), indices.shape().end() - 1) !=
      Shape(x.shape().begin(), x.shape().end() - 1)) {
    throw_error(ErrorCode::kInvalidArgument, name,
                "indices " + shape_to_string(indices.shape()) + " and x " +
                    shape_to_string(x.shape()) + " differ before the last axis");
  }
  const Tensor xc = contiguous(x);
  const Tensor ic = contiguous(indices);
  Tensor out = Tensor::empty(shape, x.dtype(), x.device(), name);
  if (out.numel() > 0) {
    backend_for_op(name, x.device()).take_along_last_axis(xc.view(), ic.view(), out.view());
  }
  return out;
}

SortResult sort(const Tensor& x, int64_t axis, bool descending) {
  const char* name = "Sort";
  check_defined(name, x, "x");
  if (x.ndim() == 0) {
    return {clone(x), full({}, 0.0, DType::kInt64, x.device())};
  }
  const int d = normalize_axis(axis, x.ndim(), name);
  const int last = x.ndim() - 1;
  const Tensor rows = contiguous(d == last ? detach(x) : transpose(detach(x), d, last));
  Tensor values = Tensor::empty(rows.shape(), x.dtype(), x.device(), name);
  Tensor indices = Tensor::empty(rows.shape(), DType::kInt64, x.device(), name);
  if (rows.numel() > 0) {
    Backend& backend = backend_for_op(name, x.device());
    const int64_t bytes = backend.sort_workspace_bytes(rows.view());
    const Tensor workspace =
        bytes > 0 ? Tensor::empty({bytes}, DType::kUInt8, x.device(), name) : Tensor();
    backend.sort(rows.view(), descending, values.view(), indices.view(),
                 bytes > 0 ? workspace.view().data : nullptr);
  }
  if (d != last) {
    values = contiguous(transpose(values, d, last));
    indices = contiguous(transpose(indices, d, last));
  }
  if (is_floating(x.dtype()) && grad_mode_enabled() && needs_grad(x)) {
    // dx[..., indices[j]] = dvalues[..., j]: a gather of dvalues by the inverse permutation,
    // which is the order that sorts the indices.
    record(name, {x}, {values}, [indices, d, last](const std::vector<Tensor>& g) {
      const Tensor order = d == last ? indices : transpose(indices, d, last);
      const Tensor inverse = sort(order, -1, false).indices;
      const Tensor dy = d == last ? g[0] : transpose(g[0], d, last);
      const Tensor dx = take_along_last_axis(dy, inverse);
      return std::vector<Tensor>{d == last ? dx : contiguous(transpose(dx, d, last))};
    });
  }
  return {values, indices};
}

}  // namespace gpuaccel
