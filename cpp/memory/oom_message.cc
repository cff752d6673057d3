// Builds the ResourceExhaustedError text. The first line reads like TF's ("OOM when
// allocating ... on <device> by allocator <pool>") so course material and search results
// match; the lines after it are ours.
#include "memory/oom_message.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>

#include "memory/memory_stats.h"

namespace gpuaccel {

namespace {
std::string bytes_and_units(int64_t bytes) {
  return std::to_string(bytes) + " bytes (" + format_bytes(bytes) + ")";
}
// A request is a size_t: printed unsigned, so no request reads as a negative size.
std::string request_bytes_and_units(size_t bytes) {
  const auto capped = static_cast<int64_t>(std::min<size_t>(bytes, size_t(INT64_MAX)));
  return std::to_string(bytes) + " bytes (" + format_bytes(capped) + ")";
}
}  // namespace

std::string format_oom_message(const OomReport& r) {
  std::ostringstream out;
  out << "OOM when allocating " << request_bytes_and_units(r.requested)
      << " on " << r.device_name << " by allocator " << r.pool_name << ".\n";
  out << "  requested: " << request_bytes_and_units(r.requested);
  if (r.rounded != r.requested) {
    out << ", rounded to " << r.rounded;
  }
  out << "\n";
  out << "  in use: " << bytes_and_units(r.in_use) << " in " << r.allocations
      << (r.allocations == 1 ? " allocation\n" : " allocations\n");
  out << "  reserved: " << bytes_and_units(r.reserved) << "\n";
  out << "  limit: ";
  if (r.limit) {
    out << bytes_and_units(*r.limit);
    if (!r.limit_source.empty()) out << " (" << r.limit_source << ")";
  } else {
    out << "none";
  }
  out << "\n";
  const double fragmentation =
      r.free_bytes > 0 ? 100.0 * (1.0 - static_cast<double>(r.largest_free_chunk) / r.free_bytes)
                       : 0.0;
  char frag[32];
  std::snprintf(frag, sizeof frag, "%.1f%%", fragmentation);
  out << "  free in reserved regions: " << bytes_and_units(r.free_bytes)
      << "; largest free chunk: " << bytes_and_units(r.largest_free_chunk)
      << "; fragmentation: " << frag << "\n";
  if (r.device_free) {
    out << "  the device reports " << request_bytes_and_units(*r.device_free)
        << " free\n";
  }
  out << "  cause: "
      << (r.cause == OomCause::kLimit
              ? "the pool's limit would be exceeded"
              : (r.is_gpu ? "the GPU refused more memory" : "the system refused more memory"))
      << "\n";
  out << "What to try: a smaller batch size; mixed precision "
         "(keras.mixed_precision.set_global_policy('mixed_float16') or 'mixed_bfloat16' halves "
         "activation memory); free tensors you no longer need (del them) and call "
         "gpuaccel.memory.empty_cache()";
  if (r.is_gpu) {
    if (!r.memory_growth) {
      out << "; memory growth (config.experimental.set_memory_growth(gpu, True) before the "
             "first op) so the pool starts small instead of preallocating";
    } else {
      out << "; make sure no other process (another notebook) holds GPU memory";
    }
  }
  if (r.limit && r.cause == OomCause::kLimit) {
    out << "; a larger memory_limit in LogicalDeviceConfiguration, if the device has room";
  }
  out << ".";
  return out.str();
}

}  // namespace gpuaccel
