// where(cond, a, b) on the GPU: a grid-stride launch over N-d strided views (strided.cuh) that
// reads the chosen operand only, so the branch not taken cannot put its inf/NaN into out.
#include <cstdint>

#include "backends/cuda/context.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/strided.cuh"

namespace gpuaccel::cuda {

namespace {

template <typename T>
struct WhereBody {
  const bool* cond;
  const T* a;
  const T* b;
  T* out;
  template <typename I>
  __device__ __forceinline__ void operator()(I, const I (&off)[4]) const {
    out[off[0]] = cond[off[1]] ? a[off[2]] : b[off[3]];
  }
};

}  // namespace

void where(int device, const TensorView& cond, const TensorView& a, const TensorView& b,
           const TensorView& out) {
  GA_CUDA_REQUIRE(cond.dtype == DType::kBool, "where: the condition must be bool");
  GA_CUDA_REQUIRE(a.dtype == out.dtype && b.dtype == out.dtype, "where: a, b and out dtypes differ");
  const TensorView* views[4] = {&out, &cond, &a, &b};
  const cudaStream_t stream = device_stream(device);
  dispatch_all(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    launch_strided(views,
                   WhereBody<T>{static_cast<const bool*>(cond.data), static_cast<const T*>(a.data),
                                static_cast<const T*>(b.data), static_cast<T*>(out.data)},
                   stream);
  });
}

}  // namespace gpuaccel::cuda
