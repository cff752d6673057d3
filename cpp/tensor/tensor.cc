// Tensor construction and views (see tensor.h).
#include "tensor/tensor.h"

#include "core/errors.h"

namespace gpuaccel {

Tensor Tensor::empty(const Shape& shape, DType dtype, const LogicalDevice& device, const char* op) {
  if (static_cast<int>(shape.size()) > kMaxDims) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "tensors have at most " + std::to_string(kMaxDims) + " dimensions, got shape " +
                    shape_to_string(shape));
  }
  const int64_t nbytes = checked_nbytes(shape, int64_t(dtype_size(dtype)), op);
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = Storage::allocate(device, size_t(nbytes), op);
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

bool Tensor::is_contiguous() const { return view().is_contiguous(); }

uint64_t Tensor::version() const { return impl_->storage->version(); }

void Tensor::bump_version() const { impl_->storage->bump_version(); }

TensorView Tensor::view() const {
  if (ndim() > kMaxDims) {
    throw_error(ErrorCode::kInternal, "view", "more than kMaxDims dimensions");
  }
  TensorView v;
  v.data = data();
  v.dtype = dtype();
  v.ndim = ndim();
  for (int d = 0; d < v.ndim; ++d) {
    v.shape[d] = impl_->shape[d];
    v.strides[d] = impl_->strides[d];
  }
  Storage& storage = *impl_->storage;
  if (storage.caches_derived_copies() && storage.derived_copies().is_source(v)) {
    v.derived = &storage.derived_copies();
  }
  return v;
}

Tensor Tensor::as_strided(const Shape& shape, const Strides& strides, int64_t offset) const {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = impl_->storage;
  impl->offset = offset;
  impl->shape = shape;
  impl->strides = strides;
  impl->dtype = impl_->dtype;
  return Tensor(std::move(impl));
}

std::string Tensor::describe() const {
  return std::string(dtype_name(dtype())) + " " + shape_to_string(shape()) + " on " +
         device().full_name();
}

}  // namespace gpuaccel
