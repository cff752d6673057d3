// Per-thread device scope stack (see device_scope.h).
#include "core/device_scope.h"

#include <vector>

#include "core/errors.h"

namespace gpuaccel {

namespace {
thread_local std::vector<std::optional<DeviceSpec>> t_scopes;
}

void push_device_scope(const std::optional<DeviceSpec>& spec) { t_scopes.push_back(spec); }

void pop_device_scope() {
  if (t_scopes.empty()) {
    throw_runtime_error("device", "device scope exited more often than it was entered");
  }
  t_scopes.pop_back();
}

std::optional<DeviceSpec> current_device_scope() {
  if (t_scopes.empty()) return std::nullopt;
  return t_scopes.back();
}

}  // namespace gpuaccel
