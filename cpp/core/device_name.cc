// Parsing of device names (see device_name.h). Written as a small hand parser rather than a
// regex so the error can say exactly which part was wrong.
#include "core/device_name.h"

#include <cctype>
#include <vector>

#include "core/errors.h"

namespace gpuaccel {

const char* device_type_name(DeviceType type) {
  return type == DeviceType::kGPU ? "GPU" : "CPU";
}

const char* accepted_device_name_forms() {
  return "'/CPU:0', '/GPU:1', '/device:GPU:0', '/physical_device:GPU:0', "
         "'/job:localhost/replica:0/task:0/device:CPU:0', 'cpu', 'cuda', 'cuda:1' "
         "(device types CPU or GPU, case-insensitive; index a non-negative integer)";
}

namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

[[noreturn]] void reject(const std::string& text, const std::string& why) {
  throw_value_error("", "Invalid device name '" + text + "': " + why + ". Accepted forms: " +
                            accepted_device_name_forms());
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : s) {
    if (c == sep) {
      parts.push_back(current);
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  parts.push_back(current);
  return parts;
}

std::optional<int> parse_index(const std::string& text, const std::string& digits) {
  if (digits.empty() || digits.size() > 6) reject(text, "the device index must be 0..999999");
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      reject(text, "the device index '" + digits + "' is not a non-negative integer");
    }
  }
  return std::stoi(digits);
}

DeviceType parse_tf_type(const std::string& text, const std::string& type_name) {
  const std::string t = upper(type_name);
  if (t == "CPU") return DeviceType::kCPU;
  if (t == "GPU") return DeviceType::kGPU;
  reject(text, "unknown device type '" + type_name + "' (gpuaccel has CPU and GPU devices)");
}

// "TYPE" or "TYPE:N" after the TF prefixes were removed.
DeviceSpec parse_tf_type_and_index(const std::string& text, const std::string& rest) {
  const auto parts = split(rest, ':');
  if (parts.size() > 2) reject(text, "too many ':' separators");
  DeviceSpec spec;
  spec.type = parse_tf_type(text, parts[0]);
  if (parts.size() == 2) spec.index = parse_index(text, parts[1]);
  return spec;
}

// "/job:localhost/replica:0/task:0/device:CPU:0" and its shorter forms: any of the
// job/replica/task fields may appear (in that order) before an optional "device:" field.
DeviceSpec parse_tf_name(const std::string& text) {
  const auto fields = split(text.substr(1), '/');
  std::optional<DeviceSpec> spec;
  size_t expected_order = 0;
  static const char* kPrefixFields[] = {"job:", "replica:", "task:"};
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string& field = fields[i];
    if (field.empty()) reject(text, "empty field between '/' separators");
    bool matched_prefix = false;
    for (size_t k = expected_order; k < 3; ++k) {
      const std::string prefix = kPrefixFields[k];
      if (field.compare(0, prefix.size(), prefix) == 0) {
        if (spec) reject(text, "'" + prefix + "' must come before the device field");
        if (field.size() == prefix.size()) reject(text, "'" + prefix + "' needs a value");
        expected_order = k + 1;
        matched_prefix = true;
        break;
      }
    }
    if (matched_prefix) continue;
    if (spec) reject(text, "only one device field is allowed");
    if (i + 1 != fields.size()) reject(text, "the device field must come last");
    std::string rest = field;
    for (const char* prefix : {"device:", "physical_device:"}) {
      const std::string p = prefix;
      if (rest.compare(0, p.size(), p) == 0) {
        rest = rest.substr(p.size());
        break;
      }
    }
    spec = parse_tf_type_and_index(text, rest);
  }
  if (!spec) reject(text, "it names no device type");
  return *spec;
}

// "cpu", "cuda", "cuda:1", "gpu:0" (PyTorch-style, no leading slash).
DeviceSpec parse_torch_name(const std::string& text) {
  const auto parts = split(text, ':');
  if (parts.size() > 2) reject(text, "too many ':' separators");
  const std::string t = upper(parts[0]);
  DeviceSpec spec;
  if (t == "CPU") {
    spec.type = DeviceType::kCPU;
  } else if (t == "CUDA" || t == "GPU") {
    spec.type = DeviceType::kGPU;
  } else {
    reject(text, "unknown device type '" + parts[0] + "'");
  }
  if (parts.size() == 2) spec.index = parse_index(text, parts[1]);
  return spec;
}

}  // namespace

DeviceSpec parse_device_name(const std::string& text) {
  if (text.empty()) reject(text, "it is empty");
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) reject(text, "it contains whitespace");
  }
  return text[0] == '/' ? parse_tf_name(text) : parse_torch_name(text);
}

std::string physical_device_name(DeviceType type, int index) {
  return std::string("/physical_device:") + device_type_name(type) + ":" + std::to_string(index);
}
std::string logical_device_name(DeviceType type, int index) {
  return std::string("/device:") + device_type_name(type) + ":" + std::to_string(index);
}
std::string full_device_name(DeviceType type, int index) {
  return "/job:localhost/replica:0/task:0" + logical_device_name(type, index);
}

}  // namespace gpuaccel
