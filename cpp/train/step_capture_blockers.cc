// step_capture_blocker (step_capture_blockers.h).
#include "train/step_capture_blockers.h"

#include <cstring>

namespace gpuaccel::train {

std::string step_capture_blocker(const nn::LayerGraph& graph, const optim::Optimizer& optimizer,
                                 const LogicalDevice& device) {
  const std::string type = optimizer.type();
  if (type == "LossScaleOptimizer" && device.type == DeviceType::kCPU) {
    return "LossScaleOptimizer checks the gradients for inf/NaN on the host every step";
  }
  for (const nn::LayerPtr& layer : graph.layers()) {
    const char* layer_type = layer->type();
    if (std::strcmp(layer_type, "Dropout") == 0 || std::strcmp(layer_type, "MultiHeadAttention") == 0) {
      return std::string(layer_type) + " layer '" + layer->name() +
             "' draws its random offset on the host every step";
    }
  }
  return {};
}

}  // namespace gpuaccel::train
