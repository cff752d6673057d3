// `with gpuaccel.device('/GPU:0'):` — a per-thread stack of requested devices, as TF's device
// scopes are per thread. Ops ask current_device_scope() and hand it to DeviceRegistry::place_op.
#pragma once

#include <optional>

#include "core/device_name.h"

namespace gpuaccel {

// Pushes `spec` (nullopt clears the request, as tf.device(None) does) for the current thread.
void push_device_scope(const std::optional<DeviceSpec>& spec);
// Pops the innermost scope; a pop without a push is a RuntimeError (mismatched scopes).
void pop_device_scope();
// The innermost request on this thread, or nullopt when there is none.
std::optional<DeviceSpec> current_device_scope();

class DeviceScope {
 public:
  explicit DeviceScope(const std::optional<DeviceSpec>& spec) { push_device_scope(spec); }
  ~DeviceScope() { pop_device_scope(); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
};

}  // namespace gpuaccel
