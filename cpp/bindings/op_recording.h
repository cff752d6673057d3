// The bindings' hook into the op recorder (nn/op_trace.h): an op Python calls runs as usual,
// and while a Python layer's call() is being traced it is also recorded as a closure that reruns
// it on new inputs. Every attribute the closure needs is a C++ value captured at the call, so a
// replay never touches Python.
#pragma once

#include <utility>
#include <vector>

#include "nn/op_trace.h"
#include "tensor/tensor.h"

namespace gpuaccel::bindings {

// `op(inputs)` computes the op's result from its tensor inputs (undefined for an absent optional
// input); it must be copyable and capture its attributes by value.
template <class Op>
Tensor recorded_op(std::vector<Tensor> inputs, Op op) {
  Tensor out = op(inputs);
  if (nn::OpTraceRecorder::active()) {
    nn::OpTraceRecorder::record(inputs, {out}, [op](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{op(in)};
    });
  }
  return out;
}

// The same for an op of several outputs: `op(inputs)` returns them all.
template <class Op>
std::vector<Tensor> recorded_multi_output_op(std::vector<Tensor> inputs, Op op) {
  std::vector<Tensor> outs = op(inputs);
  if (nn::OpTraceRecorder::active()) nn::OpTraceRecorder::record(inputs, outs, op);
  return outs;
}

}  // namespace gpuaccel::bindings
