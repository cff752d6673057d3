// The process-wide device registry: which physical devices exist, which are visible, how each
// is configured (memory growth, logical devices and their memory limits), and the logical
// devices that exist once the runtime has started. It implements TensorFlow's tf.config state
// machine: configuration is free until the runtime initializes (the first op, allocation,
// device scope or list_logical_devices), and after that only no-op changes are accepted.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/device_name.h"
#include "core/gpu_provider.h"

namespace gpuaccel {

struct PhysicalDevice {
  DeviceType type = DeviceType::kCPU;
  int index = 0;
  std::string name() const { return physical_device_name(type, index); }
  bool operator==(const PhysicalDevice& o) const { return type == o.type && index == o.index; }
  bool operator<(const PhysicalDevice& o) const {
    return type != o.type ? type < o.type : index < o.index;
  }
};

// TF's LogicalDeviceConfiguration. memory_limit is in MB (MiB, as TF means it).
struct LogicalDeviceConfiguration {
  std::optional<int64_t> memory_limit_mb;
  std::optional<int> experimental_priority;
  std::optional<int> experimental_device_ordinal;
  bool operator==(const LogicalDeviceConfiguration& o) const {
    return memory_limit_mb == o.memory_limit_mb &&
           experimental_priority == o.experimental_priority &&
           experimental_device_ordinal == o.experimental_device_ordinal;
  }
};

struct LogicalDevice {
  DeviceType type = DeviceType::kCPU;
  int index = 0;           // among logical devices of this type
  int physical_index = 0;  // the physical device it lives on
  std::optional<int64_t> memory_limit_bytes;  // hard cap of its memory pool
  bool memory_growth = false;                 // GPUs: grow instead of preallocating
  std::string name() const { return logical_device_name(type, index); }
  std::string full_name() const { return full_device_name(type, index); }
};

// Value of GPUACCEL_FORCE_GPU_ALLOW_GROWTH: "true"/"false" override the configured memory
// growth of every GPU (as TF_FORCE_GPU_ALLOW_GROWTH does); unset or anything else: no override.
std::optional<bool> forced_gpu_memory_growth_from_env();

class DeviceRegistry {
 public:
  explicit DeviceRegistry(std::unique_ptr<GpuProvider> provider);

  // The process-wide registry (created on first use with the CUDA provider).
  static DeviceRegistry& instance();
  // Test hook: replaces the process-wide registry with a fresh one over `provider` (or the
  // CUDA provider when null). Anything that cached logical devices (memory pools) must be
  // dropped by the caller first; see bindings.
  static void reset_instance(std::unique_ptr<GpuProvider> provider);

  // --- physical devices (discovery is lazy and happens once) ---
  std::vector<PhysicalDevice> physical_devices(std::optional<DeviceType> type = std::nullopt);
  GpuInfo gpu_info(int physical_index);  // ValueError when out of range
  std::string gpu_unavailable_reason();
  std::string gpu_provider_kind();
  // Throws ValueError "Unrecognized device: ..." unless `dev` exists.
  void check_physical_device(const PhysicalDevice& dev, const std::string& op);

  // --- visibility ---
  std::vector<PhysicalDevice> visible_devices(std::optional<DeviceType> type = std::nullopt);
  void set_visible_devices(const std::vector<PhysicalDevice>& devices,
                           std::optional<DeviceType> type = std::nullopt);

  // --- memory growth ---
  void set_memory_growth(const PhysicalDevice& dev, bool enable);
  std::optional<bool> memory_growth(const PhysicalDevice& dev);

  // --- logical devices ---
  void set_logical_device_configuration(const PhysicalDevice& dev,
                                        const std::vector<LogicalDeviceConfiguration>& configs);
  std::optional<std::vector<LogicalDeviceConfiguration>> logical_device_configuration(
      const PhysicalDevice& dev);

  // --- runtime start ---
  bool initialized();
  void ensure_initialized();
  std::vector<LogicalDevice> logical_devices(std::optional<DeviceType> type = std::nullopt);

  // --- placement policy ---
  void set_soft_device_placement(bool enabled);
  bool soft_device_placement();
  void set_log_device_placement(bool enabled);
  bool log_device_placement();
  // --- tf.config.threading: thread counts (>= 0; 0 lets the system pick), fixed at start-up
  // like TF's: changing one after the runtime started is TF's RuntimeError.
  void set_intra_op_parallelism_threads(int threads);
  int intra_op_parallelism_threads();
  void set_inter_op_parallelism_threads(int threads);
  int inter_op_parallelism_threads();
  // Receives "Executing op MatMul in device /job:.../device:CPU:0" lines. Default: stderr.
  void set_placement_logger(std::function<void(const std::string&)> logger);

  // Decides where `op` runs: `requested` (absent: the default device, GPU:0 if any, else
  // CPU:0). An unavailable request falls back to CPU:0 under soft placement and otherwise
  // throws InvalidArgumentError in TF's words. Logs the decision when logging is on.
  LogicalDevice place_op(const std::string& op, const std::optional<DeviceSpec>& requested);
  // For ops whose device follows their inputs: prints the placement line when logging is on.
  // Costs one relaxed atomic load when it is off (and no std::string: op is a view).
  void log_execution(std::string_view op, const LogicalDevice& device);

 private:
  void discover_locked();
  // The shared rule of both thread-count setters; `store` publishes the new value.
  void set_thread_count(const char* op, const char* what, int threads, int current,
                        void (*store)(int));
  void initialize_locked();
  std::vector<PhysicalDevice> visible_locked(std::optional<DeviceType> type);
  std::string available_devices_locked();

  std::mutex mutex_;
  std::unique_ptr<GpuProvider> provider_;
  bool discovered_ = false;
  std::vector<GpuInfo> gpus_;
  std::string gpu_unavailable_reason_;
  std::vector<PhysicalDevice> physical_;
  std::vector<PhysicalDevice> visible_;
  std::map<PhysicalDevice, std::optional<bool>> memory_growth_;
  std::map<PhysicalDevice, std::vector<LogicalDeviceConfiguration>> logical_configs_;
  bool initialized_ = false;
  std::vector<LogicalDevice> logical_;
  bool soft_placement_ = true;  // TF 2 default
  std::atomic<bool> log_placement_{false};
  std::function<void(const std::string&)> placement_logger_;
};

}  // namespace gpuaccel
