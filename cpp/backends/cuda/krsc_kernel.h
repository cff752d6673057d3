// A Keras (KH, KW, C, F) kernel in cuDNN's KRSC (F, KH, KW, C) filter layout, kept with the
// kernel's storage (tensor/derived_copies.h): made once per weights version and shared by the
// forward and backward-data convolutions of every later call, instead of a transposing copy on
// each call. Header-only: the CUDA backend library and the tests' fake CUDA library (which
// mimics the library's copies and counts them) both compile it in.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/dtype.h"
#include "tensor/contiguous_view.h"
#include "tensor/derived_copies.h"
#include "tensor/tensor_view.h"

namespace gpuaccel {

// The Keras (KH, KW, C, F) view of w, read as (F, KH, KW, C): a strided view of w's memory.
inline TensorView hwio_as_krsc(const TensorView& w) {
  TensorView v = w;
  v.derived = nullptr;  // a permuted view, not the storage's contiguous whole
  v.shape[0] = w.shape[3]; v.strides[0] = w.strides[3];
  v.shape[1] = w.shape[0]; v.strides[1] = w.strides[0];
  v.shape[2] = w.shape[1]; v.strides[2] = w.strides[1];
  v.shape[3] = w.shape[2]; v.strides[3] = w.strides[2];
  return v;
}

// The contiguous KRSC tensor at `data` for the kernel w.
inline TensorView krsc_at(const TensorView& w, void* data) {
  return contiguous_view(data, w.dtype, {w.shape[3], w.shape[0], w.shape[1], w.shape[2]});
}

inline std::string krsc_key(const TensorView& w) {
  return "krsc:" + std::string(dtype_name(w.dtype)) + ":" + std::to_string(w.shape[0]) + "," +
         std::to_string(w.shape[1]) + "," + std::to_string(w.shape[2]) + "," +
         std::to_string(w.shape[3]);
}

// The kernel w in KRSC: the copy cached for this version of w (held by `keep` while the caller
// uses it), or, where w keeps no derived copies or while the stream is being captured into a
// graph (a replay must redo the copy, since the step it replays updates w), `scratch()` filled
// now. `copy(src, dst)` queues the transposing copy on the device's stream.
template <typename Scratch, typename Copy>
TensorView krsc_kernel(const TensorView& w, bool capturing, Scratch&& scratch, Copy&& copy,
                       std::shared_ptr<void>& keep) {
  if (w.derived != nullptr && !capturing && w.derived->is_source(w)) {
    keep = w.derived->get_or_make(krsc_key(w), [&]() -> std::shared_ptr<void> {
      std::shared_ptr<void> data =
          w.derived->allocate(static_cast<size_t>(w.numel()) * dtype_size(w.dtype));
      copy(hwio_as_krsc(w), krsc_at(w, data.get()));
      return data;
    });
    return krsc_at(w, keep.get());
  }
  const TensorView dst = krsc_at(w, scratch());
  copy(hwio_as_krsc(w), dst);
  return dst;
}

}  // namespace gpuaccel
