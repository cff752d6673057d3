// Device names as the course writes them. TensorFlow spells a device "/GPU:0",
// "/device:GPU:0", "/physical_device:GPU:0" or "/job:localhost/replica:0/task:0/device:CPU:0";
// PyTorch spells it "cuda", "cuda:1" or "cpu". All of them parse into one DeviceSpec here so
// placement and configuration never compare strings.
#pragma once

#include <optional>
#include <string>

namespace gpuaccel {

enum class DeviceType { kCPU, kGPU };

// "CPU" / "GPU": TensorFlow's device_type strings.
const char* device_type_name(DeviceType type);

struct DeviceSpec {
  DeviceType type = DeviceType::kCPU;
  // Absent for "cuda" / "cpu" / "/GPU" without an index: "the default one of that type".
  std::optional<int> index;

  int index_or_zero() const { return index.value_or(0); }
  bool operator==(const DeviceSpec& other) const {
    return type == other.type && index == other.index;
  }
};

// Parses every accepted spelling; anything else throws a ValueError that quotes `text` and
// lists the accepted forms. Type names are case-insensitive ("/gpu:0" works, as in TF).
DeviceSpec parse_device_name(const std::string& text);

// The accepted forms, for error messages.
const char* accepted_device_name_forms();

// "/physical_device:GPU:0"
std::string physical_device_name(DeviceType type, int index);
// "/device:GPU:0" (TF's LogicalDevice.name)
std::string logical_device_name(DeviceType type, int index);
// "/job:localhost/replica:0/task:0/device:GPU:0" (TF's placement log and tensor.device)
std::string full_device_name(DeviceType type, int index);

}  // namespace gpuaccel
