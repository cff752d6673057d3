// Counters every allocator keeps, in one struct, so the pool, the no-caching allocator, the
// bindings (TF's get_memory_info, PyTorch's memory_stats) and the tests all speak of the same
// numbers. Each counter follows PyTorch's shape: current, peak, total allocated, total freed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpuaccel {

struct StatCounter {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocated = 0;  // cumulative increase since the last reset_accumulated()
  int64_t freed = 0;      // cumulative decrease since the last reset_accumulated()

  void increase(int64_t amount) {
    current += amount;
    allocated += amount;
    if (current > peak) peak = current;
  }
  void decrease(int64_t amount) {
    current -= amount;
    freed += amount;
  }
  void reset_peak() { peak = current; }
  void reset_accumulated() { allocated = freed = 0; }
};

struct MemoryStats {
  // Bytes handed out, counted by chunk size (rounded to 256 B, plus any unsplit tail).
  StatCounter allocated_bytes;
  // Bytes the callers asked for, before rounding.
  StatCounter requested_bytes;
  // Bytes held from the device (sum of region sizes).
  StatCounter reserved_bytes;
  // Number of live allocations.
  StatCounter allocations;
  // Number of regions held from the device.
  StatCounter segments;

  int64_t num_alloc_retries = 0;  // allocations that succeeded only after releasing empty regions
  int64_t num_ooms = 0;           // ResourceExhaustedErrors raised
  int64_t num_device_alloc = 0;   // calls into the sub-allocator that returned memory
  int64_t num_device_free = 0;    // regions given back to the sub-allocator

  // Snapshot values (computed when stats are read, not counters).
  int64_t free_chunks = 0;              // free chunks inside reserved regions
  int64_t free_bytes = 0;               // reserved - allocated
  int64_t inactive_split = 0;           // free chunks in regions that also hold live chunks
  int64_t inactive_split_bytes = 0;     // their bytes (not releasable by empty_cache)
  int64_t largest_free_chunk = 0;       // the largest request that fits without growing
  std::optional<int64_t> limit_bytes;   // hard cap of reserved bytes, if any

  // 1 - largest_free_chunk / free_bytes: 0 when the free memory is one piece (or none).
  double fragmentation() const {
    return free_bytes > 0 ? 1.0 - static_cast<double>(largest_free_chunk) / free_bytes : 0.0;
  }
  void reset_peak() {
    allocated_bytes.reset_peak();
    requested_bytes.reset_peak();
    reserved_bytes.reset_peak();
    allocations.reset_peak();
    segments.reset_peak();
  }
  void reset_accumulated() {
    allocated_bytes.reset_accumulated();
    requested_bytes.reset_accumulated();
    reserved_bytes.reset_accumulated();
    allocations.reset_accumulated();
    segments.reset_accumulated();
    num_alloc_retries = num_ooms = num_device_alloc = num_device_free = 0;
  }
};

// "64.00 MiB (67108864 bytes)"-style text for messages: binary units with two decimals.
std::string format_bytes(int64_t bytes);

}  // namespace gpuaccel
