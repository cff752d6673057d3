// The out-of-memory report. Students meet this message more than any other memory concept, so
// it carries every number that explains the failure (asked, in use, reserved, limit, largest
// free chunk, fragmentation) and what to try next, in one place for every allocator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace gpuaccel {

enum class OomCause {
  kLimit,          // the pool's hard cap (memory_limit or the preallocated size) was reached
  kDeviceRefused,  // the device (cudaMalloc / the host heap) had no more to give
};

struct OomReport {
  std::string device_name;  // "/job:localhost/replica:0/task:0/device:GPU:0"
  std::string pool_name;    // "GPU_0_pool"
  bool is_gpu = false;
  bool memory_growth = false;  // GPU pools: growth mode (false: preallocated)
  size_t requested = 0;
  size_t rounded = 0;
  int64_t in_use = 0;       // allocated bytes
  int64_t allocations = 0;  // live allocations
  int64_t reserved = 0;
  std::optional<int64_t> limit;
  std::string limit_source;  // "memory_limit of the logical device", ...
  int64_t largest_free_chunk = 0;
  int64_t free_bytes = 0;
  std::optional<size_t> device_free;  // what the device says is still free, if it can tell
  OomCause cause = OomCause::kLimit;
};

std::string format_oom_message(const OomReport& report);

}  // namespace gpuaccel
