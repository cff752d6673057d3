// Why a training step cannot be captured into a CUDA graph yet, if it cannot. A replayed graph
// repeats its kernels' arguments exactly, so anything the step computes on the host per step
// and passes by value would be frozen at its capture-time value, and anything it reads back
// to the host would not be read at all. The list below is what the code does today; each item
// goes away when its value moves to device memory (docs/gpu_step.md lists them).
#pragma once

#include <string>

#include "nn/layer_graph.h"
#include "optim/optimizer.h"

namespace gpuaccel::train {

// Empty when a step of `graph` updated by `optimizer` may be captured; otherwise the reason,
// one sentence naming the layer or optimizer and the host value.
// The step runs on `device`: a LossScaleOptimizer keeps its state there, except on the CPU.
std::string step_capture_blocker(const nn::LayerGraph& graph, const optim::Optimizer& optimizer,
                                 const LogicalDevice& device);

}  // namespace gpuaccel::train
