// See local_group.h.
#include "distribute/local_group.h"

#include <exception>
#include <set>
#include <string>
#include <thread>

#include "core/errors.h"
#include "distribute/in_process_collective.h"
#include "distribute/nccl_collective.h"

namespace gpuaccel::distribute {

std::vector<std::shared_ptr<Collective>> make_local_group(const std::vector<LogicalDevice>& devices,
                                                          std::chrono::milliseconds timeout) {
  if (devices.empty()) {
    throw_error(ErrorCode::kInvalidArgument, "distribute", "a replica group needs a device");
  }
  const DeviceType type = devices[0].type;
  for (const LogicalDevice& d : devices) {
    if (d.type != type) {
      throw_error(ErrorCode::kInvalidArgument, "distribute",
                  "replicas must all be on CPUs or all on GPUs; got " + devices[0].name() +
                      " and " + d.name());
    }
  }
  if (type == DeviceType::kCPU || gpus_share_a_physical_device(devices)) {
    return make_in_process_group(int(devices.size()), timeout);
  }

  const std::string id = nccl_unique_id();
  const int world = int(devices.size());
  std::vector<std::shared_ptr<Collective>> members(devices.size());
  std::vector<std::exception_ptr> errors(devices.size());
  std::vector<std::thread> joining;
  for (int r = 0; r < world; ++r) {
    joining.emplace_back([&, r] {
      try {
        members[size_t(r)] = make_nccl_collective(devices[size_t(r)], r, world, id, timeout);
      } catch (...) {
        errors[size_t(r)] = std::current_exception();
      }
    });
  }
  for (std::thread& t : joining) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return members;
}

bool gpus_share_a_physical_device(const std::vector<LogicalDevice>& devices) {
  std::set<int> physical;
  for (const LogicalDevice& d : devices) {
    if (d.type == DeviceType::kGPU && !physical.insert(d.physical_index).second) return true;
  }
  return false;
}

}  // namespace gpuaccel::distribute
