// The tf.config state machine (see device_registry.h). Messages that TensorFlow users search
// for are kept in TF's words.
#include "core/device_registry.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <set>

#include "core/errors.h"
#include "core/thread_config.h"

namespace gpuaccel {

namespace {

constexpr int64_t kBytesPerMB = int64_t{1} << 20;

std::unique_ptr<DeviceRegistry>& registry_slot() {
  static std::unique_ptr<DeviceRegistry> registry;
  return registry;
}
std::mutex& registry_slot_mutex() {
  static std::mutex m;
  return m;
}

std::string quoted_device(const PhysicalDevice& dev) {
  return "PhysicalDevice(name='" + dev.name() + "', device_type='" +
         device_type_name(dev.type) + "')";
}

}  // namespace

std::optional<bool> forced_gpu_memory_growth_from_env() {
  const char* value = std::getenv("GPUACCEL_FORCE_GPU_ALLOW_GROWTH");
  if (value == nullptr) return std::nullopt;
  const std::string v = value;
  if (v == "true") return true;
  if (v == "false") return false;
  std::cerr << "gpuaccel: GPUACCEL_FORCE_GPU_ALLOW_GROWTH='" << v
            << "' is neither 'true' nor 'false'; ignoring it.\n";
  return std::nullopt;
}

DeviceRegistry::DeviceRegistry(std::unique_ptr<GpuProvider> provider)
    : provider_(std::move(provider)) {}

DeviceRegistry& DeviceRegistry::instance() {
  std::lock_guard<std::mutex> lock(registry_slot_mutex());
  auto& slot = registry_slot();
  if (!slot) slot = std::make_unique<DeviceRegistry>(make_cuda_gpu_provider());
  return *slot;
}

void DeviceRegistry::reset_instance(std::unique_ptr<GpuProvider> provider) {
  std::lock_guard<std::mutex> lock(registry_slot_mutex());
  registry_slot() = std::make_unique<DeviceRegistry>(provider ? std::move(provider)
                                                              : make_cuda_gpu_provider());
  // A fresh registry is a fresh configuration, thread counts included.
  thread_config::store_intra_op_threads(0);
  thread_config::store_inter_op_threads(0);
}

void DeviceRegistry::discover_locked() {
  if (discovered_) return;
  discovered_ = true;
  gpus_ = provider_->discover();
  gpu_unavailable_reason_ = gpus_.empty() ? provider_->unavailable_reason() : "";
  physical_.push_back({DeviceType::kCPU, 0});
  for (int i = 0; i < static_cast<int>(gpus_.size()); ++i) {
    physical_.push_back({DeviceType::kGPU, i});
    memory_growth_[{DeviceType::kGPU, i}] = std::nullopt;
  }
  visible_ = physical_;
}

std::vector<PhysicalDevice> DeviceRegistry::physical_devices(std::optional<DeviceType> type) {
  std::lock_guard<std::mutex> lock(mutex_);
  discover_locked();
  std::vector<PhysicalDevice> out;
  for (const auto& d : physical_) {
    if (!type || d.type == *type) out.push_back(d);
  }
  return out;
}

GpuInfo DeviceRegistry::gpu_info(int physical_index) {
  std::lock_guard<std::mutex> lock(mutex_);
  discover_locked();
  if (physical_index < 0 || physical_index >= static_cast<int>(gpus_.size())) {
    throw_value_error("", "GPU index " + std::to_string(physical_index) + " is out of range: " +
                              (gpus_.empty() ? std::string("there are no GPUs (") +
                                                   gpu_unavailable_reason_ + ")"
                                             : "valid indices are 0.." +
                                                   std::to_string(gpus_.size() - 1)));
  }
  return gpus_[physical_index];
}

std::string DeviceRegistry::gpu_unavailable_reason() {
  std::lock_guard<std::mutex> lock(mutex_);
  discover_locked();
  return gpu_unavailable_reason_;
}

std::string DeviceRegistry::gpu_provider_kind() {
  std::lock_guard<std::mutex> lock(mutex_);
  return provider_->kind();
}

void DeviceRegistry::check_physical_device(const PhysicalDevice& dev, const std::string& op) {
  std::lock_guard<std::mutex> lock(mutex_);
  discover_locked();
  if (std::find(physical_.begin(), physical_.end(), dev) == physical_.end()) {
    throw_value_error(op, "Unrecognized device: " + quoted_device(dev));
  }
}

std::vector<PhysicalDevice> DeviceRegistry::visible_locked(std::optional<DeviceType> type) {
  std::vector<PhysicalDevice> out;
  for (const auto& d : visible_) {
    if (!type || d.type == *type) out.push_back(d);
  }
  return out;
}

std::vector<PhysicalDevice> DeviceRegistry::visible_devices(std::optional<DeviceType> type) {
  std::lock_guard<std::mutex> lock(mutex_);
  discover_locked();
  return visible_locked(type);
}

void DeviceRegistry::set_visible_devices(const std::vector<PhysicalDevice>& devices,
                                         std::optional<DeviceType> type) {
  const std::string op = "set_visible_devices";
  std::lock_guard<std::mutex> lock(mutex_);
  discover_locked();
  for (const auto& d : devices) {
    const bool known = std::find(physical_.begin(), physical_.end(), d) != physical_.end();
    if (!known || (type && d.type != *type)) {
      throw_value_error(op, "Unrecognized device: " + quoted_device(d));
    }
  }
  // As TF: with a type, devices of other types keep their visibility.
  std::vector<PhysicalDevice> next;
  if (type) {
    for (const auto& d : visible_) {
      if (d.type != *type) next.push_back(d);
    }
  }
  for (const auto& d : devices) {
    if (std::find(next.begin(), next.end(), d) == next.end()) next.push_back(d);
  }
  std::sort(next.begin(), next.end());
  std::vector<PhysicalDevice> current = visible_;
  std::sort(current.begin(), current.end());
  if (next == current) return;
  if (initialized_) {
    throw_runtime_error(op, "Visible devices cannot be modified after being initialized");
  }
  // We refuse at once what TF only reports at start-up ("No CPU devices are available").
  const bool has_cpu = std::any_of(next.begin(), next.end(),
                                   [](const PhysicalDevice& d) { return d.type == DeviceType::kCPU; });
  if (!has_cpu) {
    throw_value_error(op, "The CPU cannot be hidden: gpuaccel needs at least one visible CPU "
                          "device. Hide GPUs with set_visible_devices([], 'GPU').");
  }
  visible_ = next;
}

void DeviceRegistry::set_memory_growth(const PhysicalDevice& dev, bool enable) {
  const std::string op = "set_memory_growth";
  check_physical_device(dev, op);
  std::lock_guard<std::mutex> lock(mutex_);
  if (logical_configs_.count(dev)) {
    throw_value_error(op, "Cannot set memory growth on device when virtual devices configured");
  }
  if (dev.type != DeviceType::kGPU) {
    throw_value_error(op, "Cannot set memory growth on non-GPU and non-Pluggable devices");
  }
  if (memory_growth_[dev] == enable) return;
  if (initialized_) {
    throw_runtime_error(op, "Physical devices cannot be modified after being initialized");
  }
  memory_growth_[dev] = enable;
}

std::optional<bool> DeviceRegistry::memory_growth(const PhysicalDevice& dev) {
  const std::string op = "get_memory_growth";
  check_physical_device(dev, op);
  if (dev.type != DeviceType::kGPU) {
    throw_value_error(op, "Memory growth is a GPU setting; " + quoted_device(dev) +
                              " is not a GPU (TensorFlow raises KeyError here)");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  return memory_growth_[dev];
}

void DeviceRegistry::set_logical_device_configuration(
    const PhysicalDevice& dev, const std::vector<LogicalDeviceConfiguration>& configs) {
  const std::string op = "set_logical_device_configuration";
  check_physical_device(dev, op);
  for (const auto& c : configs) {
    if (c.memory_limit_mb && *c.memory_limit_mb <= 0) {
      throw_value_error(op, "memory_limit must be a positive number of megabytes, got " +
                                std::to_string(*c.memory_limit_mb));
    }
    // In bytes the limit must fit int64 (2**50 MB wrapped to a limit of 0 bytes).
    constexpr int64_t kMaxLimitMB = std::numeric_limits<int64_t>::max() / kBytesPerMB;
    if (c.memory_limit_mb && *c.memory_limit_mb > kMaxLimitMB) {
      throw_value_error(op, "memory_limit must be at most " + std::to_string(kMaxLimitMB) +
                                " megabytes, got " + std::to_string(*c.memory_limit_mb));
    }
    if (dev.type == DeviceType::kGPU && !c.memory_limit_mb) {
      throw_value_error(op, "Setting memory limit is required for GPU virtual devices");
    }
    if (dev.type == DeviceType::kCPU &&
        (c.experimental_priority || c.experimental_device_ordinal)) {
      throw_value_error(op, "Setting experimental_priority or experimental_device_ordinal on "
                            "CPU virtual devices is currently not supported");
    }
  }
  if (configs.empty()) {
    throw_value_error(op, "The list of LogicalDeviceConfiguration must not be empty; pass one "
                          "entry per logical device to create");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = logical_configs_.find(dev);
  if (it != logical_configs_.end() && it->second == configs) return;
  if (initialized_) {
    throw_runtime_error(op, "Virtual devices cannot be modified after being initialized");
  }
  logical_configs_[dev] = configs;
}

std::optional<std::vector<LogicalDeviceConfiguration>>
DeviceRegistry::logical_device_configuration(const PhysicalDevice& dev) {
  check_physical_device(dev, "get_logical_device_configuration");
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = logical_configs_.find(dev);
  if (it == logical_configs_.end()) return std::nullopt;
  return it->second;
}

bool DeviceRegistry::initialized() {
  std::lock_guard<std::mutex> lock(mutex_);
  return initialized_;
}

void DeviceRegistry::ensure_initialized() {
  std::lock_guard<std::mutex> lock(mutex_);
  discover_locked();
  initialize_locked();
}

void DeviceRegistry::initialize_locked() {
  if (initialized_) return;
  const auto visible_gpus = visible_locked(DeviceType::kGPU);
  // TF compares the configured values (unset counts as its own value), so setting growth on
  // only some GPUs is an error at start-up.
  std::set<int> growth_values;  // -1 unset, 0 false, 1 true
  for (const auto& g : visible_gpus) {
    const auto v = memory_growth_[g];
    growth_values.insert(v ? static_cast<int>(*v) : -1);
  }
  if (growth_values.size() > 1) {
    throw_value_error("", "Memory growth cannot differ between GPU devices");
  }
  const std::optional<bool> forced = forced_gpu_memory_growth_from_env();

  std::vector<LogicalDevice> logical;
  int next_index[2] = {0, 0};
  for (const auto& dev : visible_locked(std::nullopt)) {
    auto it = logical_configs_.find(dev);
    const std::vector<LogicalDeviceConfiguration> configs =
        it != logical_configs_.end() ? it->second : std::vector<LogicalDeviceConfiguration>(1);
    for (const auto& c : configs) {
      LogicalDevice ld;
      ld.type = dev.type;
      ld.index = next_index[static_cast<int>(dev.type)]++;
      ld.physical_index = dev.index;
      if (c.memory_limit_mb) ld.memory_limit_bytes = *c.memory_limit_mb * kBytesPerMB;
      if (dev.type == DeviceType::kGPU) {
        ld.memory_growth = forced ? *forced : memory_growth_[dev].value_or(false);
      }
      logical.push_back(ld);
    }
  }
  logical_ = std::move(logical);
  initialized_ = true;
}

std::vector<LogicalDevice> DeviceRegistry::logical_devices(std::optional<DeviceType> type) {
  std::lock_guard<std::mutex> lock(mutex_);
  discover_locked();
  initialize_locked();
  std::vector<LogicalDevice> out;
  for (const auto& d : logical_) {
    if (!type || d.type == *type) out.push_back(d);
  }
  return out;
}

void DeviceRegistry::set_soft_device_placement(bool enabled) {
  std::lock_guard<std::mutex> lock(mutex_);
  soft_placement_ = enabled;
}
bool DeviceRegistry::soft_device_placement() {
  std::lock_guard<std::mutex> lock(mutex_);
  return soft_placement_;
}
void DeviceRegistry::set_log_device_placement(bool enabled) {
  std::lock_guard<std::mutex> lock(mutex_);
  log_placement_ = enabled;
}
bool DeviceRegistry::log_device_placement() {
  std::lock_guard<std::mutex> lock(mutex_);
  return log_placement_;
}
void DeviceRegistry::set_thread_count(const char* op, const char* what, int threads,
                                      int current, void (*store)(int)) {
  if (threads < 0) {
    throw_value_error(op, std::string("num_threads must be >= 0 (0 lets the system pick), got ") +
                              std::to_string(threads));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (threads == current) return;
  if (initialized_) {
    throw_runtime_error(op, std::string(what) + " cannot be modified after initialization.");
  }
  store(threads);
}
void DeviceRegistry::set_intra_op_parallelism_threads(int threads) {
  set_thread_count("set_intra_op_parallelism_threads", "Intra op parallelism", threads,
                   thread_config::intra_op_threads(), thread_config::store_intra_op_threads);
}
int DeviceRegistry::intra_op_parallelism_threads() { return thread_config::intra_op_threads(); }
void DeviceRegistry::set_inter_op_parallelism_threads(int threads) {
  set_thread_count("set_inter_op_parallelism_threads", "Inter op parallelism", threads,
                   thread_config::inter_op_threads(), thread_config::store_inter_op_threads);
}
int DeviceRegistry::inter_op_parallelism_threads() { return thread_config::inter_op_threads(); }
void DeviceRegistry::set_placement_logger(std::function<void(const std::string&)> logger) {
  std::lock_guard<std::mutex> lock(mutex_);
  placement_logger_ = std::move(logger);
}

std::string DeviceRegistry::available_devices_locked() {
  std::string out;
  for (const auto& d : logical_) {
    if (!out.empty()) out += ", ";
    out += d.full_name();
  }
  return out;
}

void DeviceRegistry::log_execution(std::string_view op, const LogicalDevice& device) {
  if (!log_placement_.load(std::memory_order_relaxed)) return;
  std::function<void(const std::string&)> logger;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    logger = placement_logger_;
  }
  const std::string line = "Executing op " + std::string(op) + " in device " + device.full_name();
  if (logger) {
    logger(line);
  } else {
    std::cerr << line << std::endl;
  }
}

LogicalDevice DeviceRegistry::place_op(const std::string& op,
                                       const std::optional<DeviceSpec>& requested) {
  std::function<void(const std::string&)> logger;
  std::string log_line;
  LogicalDevice chosen;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    discover_locked();
    initialize_locked();
    auto find = [&](DeviceType type, int index) -> const LogicalDevice* {
      for (const auto& d : logical_) {
        if (d.type == type && d.index == index) return &d;
      }
      return nullptr;
    };
    const LogicalDevice* found = nullptr;
    if (requested) {
      found = find(requested->type, requested->index_or_zero());
      if (!found) {
        if (!soft_placement_) {
          std::set<std::string> types;
          for (const auto& d : logical_) types.insert(device_type_name(d.type));
          std::string type_list;
          for (const auto& t : types) type_list += (type_list.empty() ? "" : ", ") + t;
          throw_error(ErrorCode::kInvalidArgument, op,
                      "Could not satisfy device specification '" +
                          full_device_name(requested->type, requested->index_or_zero()) +
                          "'. enable_soft_placement=0. Supported device types [" + type_list +
                          "]. All available devices [" + available_devices_locked() + "].");
        }
        found = find(DeviceType::kCPU, 0);
      }
    } else {
      found = find(DeviceType::kGPU, 0);
      if (!found) found = find(DeviceType::kCPU, 0);
    }
    chosen = *found;
    if (log_placement_) {
      logger = placement_logger_;
      log_line = "Executing op " + op + " in device " + chosen.full_name();
    }
  }
  // Logged outside the lock: the logger may call back into Python.
  if (!log_line.empty()) {
    if (logger) {
      logger(log_line);
    } else {
      std::cerr << log_line << std::endl;
    }
  }
  return chosen;
}

}  // namespace gpuaccel
