// The profiler's device timeline arithmetic (backends/library/device_timeline.h,
// device_interval_ns): a
// kernel's interval is placed by its offset from the session's reference event and sized by its
// own elapsed time, so a short kernel late in a long session keeps its length.
#include "backends/library/device_timeline.h"

#include <gtest/gtest.h>

namespace gpuaccel {
namespace {

TEST(DeviceIntervalNs, A20MicrosecondKernelAfter1000SecondsKeepsItsLength) {
  const float offset_ms = 1000.0f * 1000.0f;  // 1000 s into the session
  const float duration_ms = 0.020f;           // 20 us
  // What a float offset of the kernel's end can tell apart at 1000 s: 62.5 us steps.
  ASSERT_EQ(offset_ms + duration_ms, offset_ms);
  const DeviceIntervalNs ns = device_interval_ns(5'000, offset_ms, duration_ms);
  EXPECT_EQ(ns.start, 5'000 + int64_t{1'000'000'000'000});
  EXPECT_EQ(ns.end - ns.start, 20'000);
}

TEST(DeviceIntervalNs, OffsetAndDurationAddUpAndANegativeDurationIsEmpty) {
  const DeviceIntervalNs ns = device_interval_ns(100, 2.5f, 1.5f);
  EXPECT_EQ(ns.start, 100 + 2'500'000);
  EXPECT_EQ(ns.end, 100 + 4'000'000);
  const DeviceIntervalNs backwards = device_interval_ns(100, 1.0f, -0.25f);
  EXPECT_EQ(backwards.end, backwards.start);
}

}  // namespace
}  // namespace gpuaccel
