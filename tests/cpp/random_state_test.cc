// The global counter-based generator's state (ops/creation.h): what training checkpoints save
// and restore (keras.callbacks.BackupAndRestore) so a resumed run draws the same numbers.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ops/creation.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

using test::read;

TEST(RandomState, SeedAndOffsetRoundTrip) {
  const uint64_t seed_before = random_seed(), offset_before = random_offset();
  set_random_state(7, 1000);
  EXPECT_EQ(random_seed(), 7u);
  EXPECT_EQ(random_offset(), 1000u);
  const std::vector<float> a = read(rand({5}, DType::kFloat32, LogicalDevice{}));
  const uint64_t after = random_offset();
  EXPECT_GT(after, 1000u);
  set_random_state(7, 1000);
  EXPECT_EQ(read(rand({5}, DType::kFloat32, LogicalDevice{})), a);
  EXPECT_EQ(random_offset(), after);
  set_random_state(seed_before, offset_before);  // other tests see the generator untouched
}

}  // namespace
}  // namespace gpuaccel
