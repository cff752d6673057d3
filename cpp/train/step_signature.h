// What a captured training step's graph is valid for. A CUDA graph bakes in every kernel's
// arguments: the shapes and dtypes of the step's inputs, the addresses of the weights, optimizer
// slots and accumulators it reads and writes, and any host value passed by value (a learning
// rate). A step may replay a graph only when all of these are what they were at capture; the
// signature is that list as plain data (hashable, comparable, printable so a miss can be
// logged), and StepCapturePolicy keeps one graph per signature.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "tensor/shape.h"

namespace gpuaccel::train {

struct StepSignature {
  std::vector<Shape> input_shapes;  // every input of the step (x..., then y), in order
  std::vector<DType> input_dtypes;
  std::vector<const void*> state;   // addresses of the weights, slots and accumulators
  std::vector<double> host_scalars; // host values the launches take by value

  bool operator==(const StepSignature& other) const;
  bool operator!=(const StepSignature& other) const { return !(*this == other); }
  // "inputs (32, 28, 28, 1):float32, (32,):int64; 8 state buffers; host scalars 0.001".
  std::string to_string() const;
};

struct StepSignatureHash {
  size_t operator()(const StepSignature& s) const;
};

}  // namespace gpuaccel::train
