// Bitwise ops on the GPU (operands already broadcast by the frontend: stride 0 on broadcast
// dimensions): a grid-stride launch of kernels/bitwise_functors.h, the functors the CPU loop
// runs, so their shift-count rules are the CPU's.
#include <string>

#include "backends/bitwise_dispatch.h"
#include "backends/cuda/context.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/strided.cuh"
#include "backends/op_names.h"

namespace gpuaccel::cuda {

namespace {

template <typename T, typename F>
struct BitwiseBody {
  const T* a;
  const T* b;
  T* out;
  F f;
  template <typename I>
  __device__ __forceinline__ void operator()(I, const I (&off)[3]) const {
    out[off[0]] = f(a[off[1]], b[off[2]]);
  }
};

}  // namespace

void bitwise(int device, BitwiseOp op, const TensorView& a, const TensorView& b,
             const TensorView& out) {
  GA_CUDA_REQUIRE(a.dtype == b.dtype && a.dtype == out.dtype, "bitwise: a, b and out dtypes differ");
  const TensorView* views[3] = {&out, &a, &b};
  const cudaStream_t stream = device_stream(device);
  bool typed = false;
  const bool known = with_bitwise_functor(op, [&](auto f) {
    using F = decltype(f);
    typed = with_bitwise_storage(op, a.dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (kBitwiseDefined<F, T>) {
        launch_strided(views,
                       BitwiseBody<T, F>{static_cast<const T*>(a.data), static_cast<const T*>(b.data),
                                         static_cast<T*>(out.data), f},
                       stream);
      }
    });
  });
  GA_CUDA_REQUIRE(known, "bitwise: unknown op " + std::to_string(static_cast<int>(op)));
  GA_CUDA_REQUIRE(typed, std::string(op_name(op)) + ": dtype " + dtype_name(a.dtype) +
                             " is not supported (int32, int64, uint8; bool for and/or/xor)");
}

}  // namespace gpuaccel::cuda
