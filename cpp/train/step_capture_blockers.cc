// step_capture_blocker (step_capture_blockers.h).
#include "train/step_capture_blockers.h"

#include <cstring>

#include "nn/traced_layer.h"

namespace gpuaccel::train {

std::string step_capture_blocker(const nn::LayerGraph& graph, const optim::Optimizer& optimizer,
                                 const LogicalDevice& device) {
  const std::string type = optimizer.type();
  if (type == "LossScaleOptimizer" && device.type == DeviceType::kCPU) {
    return "LossScaleOptimizer checks the gradients for inf/NaN on the host every step";
  }
  std::string own = optimizer.capture_blocker();
  if (!own.empty()) return own;
  for (const nn::LayerPtr& layer : graph.layers()) {
    const char* layer_type = layer->type();
    if (std::strcmp(layer_type, "Dropout") == 0 || std::strcmp(layer_type, "MultiHeadAttention") == 0) {
      return std::string(layer_type) + " layer '" + layer->name() +
             "' draws its random offset on the host every step";
    }
    // Its recorded ops are not inspected yet: one may be a dropout drawing its offset on the
    // host, or the layer may run Python every step (a call that could not be traced).
    if (dynamic_cast<const nn::TracedLayer*>(layer.get()) != nullptr) {
      return "Python layer '" + layer->name() + "' (" + layer_type +
             ") replays ops recorded from Python, which are not checked for host work yet";
    }
  }
  return {};
}

}  // namespace gpuaccel::train
