// The step of data-parallel training between the backward pass and the optimizer update: one
// replica's gradients summed with every other replica's through a Collective, under a profiler
// scope ("AllReduce", kind kCollective) so profiles and benchmarks can report its time. This is
// the blocking path (after the whole backward pass); distribute/overlapped_all_reduce.h starts
// the sums during the backward pass.
#pragma once

#include <vector>

#include "distribute/collective.h"
#include "tensor/tensor.h"

namespace gpuaccel::distribute {

// The profiler's names: "AllReduce" is an engine call (total all-reduce time, on whichever
// thread makes it); "AllReduceWait" is a replica's step waiting for the overlapped buckets
// still in flight (the all-reduce time the backward pass did not hide).
constexpr const char* kAllReduceTraceName = "AllReduce";
constexpr const char* kAllReduceWaitTraceName = "AllReduceWait";

// What a replica contributes for one weight: `weight` times its gradient, as a contiguous
// tensor the collective may overwrite; zeros shaped like `param` where it got no gradient.
// `fresh`: never return `grad` itself (an overlapped all-reduce must not write into a tensor
// the rest of the backward pass may still read).
Tensor weighted_gradient(const Tensor& grad, const Tensor& param, double weight, bool fresh);

// Replaces each gradient by the sum over all replicas of `weight` times it, in place in
// `grads` (`weight`: this replica's share of the global batch, as Keras divides per-example
// losses by the global batch size). A weight that got no gradient (undefined) contributes
// zeros; `params` gives the shape, dtype and device of each zero.
void all_reduce_gradients(Collective& collective, std::vector<Tensor>& grads,
                          const std::vector<Tensor>& params, double weight = 1.0);

}  // namespace gpuaccel::distribute
