// The tensor: a shape, element strides and an offset into a shared Storage, plus a dtype and
// the device the storage lives on. Views (reshape of contiguous data, transpose, slicing) share
// the storage. A tensor is a cheap handle (shared_ptr to its TensorImpl), so copies alias, as
// in PyTorch. Autograd state hangs off the impl (see autograd/ in cpp/ops).
#pragma once

#include <memory>
#include <string>

#include "core/device_registry.h"
#include "core/dtype.h"
#include "tensor/shape.h"
#include "tensor/storage.h"
#include "tensor/tensor_view.h"

namespace gpuaccel {

class Node;  // a backward function in the autograd graph (ops/autograd.h)

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  int64_t offset = 0;  // in elements
  Shape shape;
  Strides strides;
  DType dtype = DType::kFloat32;

  // Autograd: a leaf the user asked gradients for, its accumulated gradient, and for results
  // of recorded ops the node that computes their inputs' gradients.
  bool requires_grad = false;
  std::shared_ptr<TensorImpl> grad;
  std::shared_ptr<Node> grad_fn;
  int grad_fn_output = 0;  // which output of grad_fn this tensor is
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // Uninitialized contiguous memory from the device's pool.
  static Tensor empty(const Shape& shape, DType dtype, const LogicalDevice& device,
                      const char* op = "empty");

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return impl_->shape; }
  const Strides& strides() const { return impl_->strides; }
  int64_t offset() const { return impl_->offset; }
  int ndim() const { return static_cast<int>(impl_->shape.size()); }
  int64_t numel() const { return shape_numel(impl_->shape); }
  int64_t dim(int axis) const { return impl_->shape.at(axis); }
  DType dtype() const { return impl_->dtype; }
  const LogicalDevice& device() const { return impl_->storage->device(); }
  bool is_cpu() const { return device().type == DeviceType::kCPU; }
  const std::shared_ptr<Storage>& storage() const { return impl_->storage; }
  // Address of element [0, ..., 0].
  void* data() const {
    return static_cast<char*>(impl_->storage->data()) + impl_->offset * int64_t(dtype_size(dtype()));
  }
  bool is_contiguous() const;
  // The storage's version (tensor/derived_copies.h). Code that writes into an existing tensor
  // calls bump_version() after the write, so copies derived from it are rebuilt.
  uint64_t version() const;
  void bump_version() const;
  // What kernels see; InternalError beyond kMaxDims dimensions (frontends check first).
  TensorView view() const;

  // A view over the same storage.
  Tensor as_strided(const Shape& shape, const Strides& strides, int64_t offset) const;

  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool same(const Tensor& other) const { return impl_ == other.impl_; }

  // "float32 (2, 3) on /job:localhost/replica:0/task:0/device:CPU:0"
  std::string describe() const;

 private:
  std::shared_ptr<TensorImpl> impl_;
};

}  // namespace gpuaccel
