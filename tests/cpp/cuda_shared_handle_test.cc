// One library handle shared by a device's threads (backends/cuda/shared_handle.h): made once,
// by the first lease; never in two threads' hands at once; a thread may nest leases; a failed
// creation keeps nothing.
#include "backends/cuda/shared_handle.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

namespace gpuaccel::cuda {
namespace {

TEST(CudaSharedHandle, IsMadeOnceAndUsedByOneThreadAtATime) {
  SharedHandle<int> shared;
  std::atomic<int> made{0}, holders{0}, most{0}, uses{0};
  auto make = [&] {
    ++made;
    return 42;
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        auto lease = shared.lease(make);
        EXPECT_EQ(lease.get(), 42);
        const int now = ++holders;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        if (i % 50 == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
        ++uses;
        --holders;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(made.load(), 1);
  EXPECT_EQ(most.load(), 1);  // never two holders at once
  EXPECT_EQ(uses.load(), 8 * 200);
}

TEST(CudaSharedHandle, AThreadMayNestLeasesAndOthersWaitForTheOuterOne) {
  SharedHandle<int> shared;
  auto make = [] { return 7; };
  auto outer = std::make_unique<SharedHandle<int>::Lease>(shared.lease(make));
  auto inner = shared.lease(make);  // the same thread: no deadlock
  EXPECT_EQ(inner.get(), 7);
  std::atomic<bool> other_got_it{false};
  std::thread other([&] {
    auto lease = shared.lease(make);
    other_got_it = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(other_got_it.load());  // both leases of this thread still hold it
  { auto done = std::move(inner); }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(other_got_it.load());  // the outer one still does
  outer.reset();
  other.join();
  EXPECT_TRUE(other_got_it.load());
}

TEST(CudaSharedHandle, AFailedCreationKeepsNothingAndTheNextLeaseTriesAgain) {
  SharedHandle<int> shared;
  int attempts = 0;
  auto flaky = [&] {
    if (++attempts == 1) throw std::runtime_error("cudnnCreate failed");
    return 3;
  };
  EXPECT_THROW(shared.lease(flaky), std::runtime_error);
  EXPECT_EQ(shared.lease(flaky).get(), 3);
  EXPECT_EQ(shared.lease(flaky).get(), 3);
  EXPECT_EQ(attempts, 2);
}

}  // namespace
}  // namespace gpuaccel::cuda
