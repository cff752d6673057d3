// Human-readable byte counts for out-of-memory messages and summaries.
#include "memory/memory_stats.h"

#include <cstdio>

namespace gpuaccel {

std::string format_bytes(int64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes < 0 ? -bytes : bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char buf[64];
  if (unit == 0) {
    std::snprintf(buf, sizeof buf, "%s%lld B", bytes < 0 ? "-" : "", static_cast<long long>(value));
  } else {
    std::snprintf(buf, sizeof buf, "%s%.2f %s", bytes < 0 ? "-" : "", value, kUnits[unit]);
  }
  return buf;
}

}  // namespace gpuaccel
