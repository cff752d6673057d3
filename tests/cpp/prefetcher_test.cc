// The input prefetcher: order, end of stream, exception delivery, bounded look-ahead and prompt
// shutdown when the consumer walks away mid-stream.
#include "train/prefetcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "core/errors.h"
#include "ops/creation.h"

namespace gpuaccel {
namespace {

using namespace std::chrono_literals;

LogicalDevice cpu() { return DeviceRegistry::instance().logical_devices(DeviceType::kCPU).at(0); }

// A one-element int64 tensor holding `value`.
Tensor scalar(int64_t value) { return full({1}, double(value), DType::kInt64, cpu()); }

int64_t value_of(const Prefetcher::Batch& batch) {
  return *static_cast<const int64_t*>(batch.at(0).data());
}

// Yields 0, 1, ..., count-1 and counts its calls.
struct Counter {
  int64_t count;
  std::atomic<int64_t> produced{0};
  std::chrono::milliseconds delay{0};
  std::optional<Prefetcher::Batch> operator()() {
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    const int64_t i = produced.load();
    if (i >= count) return std::nullopt;
    produced.store(i + 1);
    return Prefetcher::Batch{scalar(i)};
  }
};

TEST(PrefetcherBasics, KeepsOrderAndEnds) {
  Counter counter{100};
  Prefetcher p([&] { return counter(); }, 3);
  for (int64_t i = 0; i < 100; ++i) {
    auto batch = p.next();
    ASSERT_TRUE(batch.has_value()) << "ended early at " << i;
    EXPECT_EQ(value_of(*batch), i);
  }
  EXPECT_FALSE(p.next().has_value());
  EXPECT_FALSE(p.next().has_value());  // stays ended
}

TEST(PrefetcherBasics, EmptyStream) {
  Prefetcher p([]() -> std::optional<Prefetcher::Batch> { return std::nullopt; }, 1);
  EXPECT_FALSE(p.next().has_value());
}

TEST(PrefetcherBasics, RejectsZeroCapacity) {
  try {
    Prefetcher p([]() -> std::optional<Prefetcher::Batch> { return std::nullopt; }, 0);
    FAIL() << "capacity 0 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kValue);
    EXPECT_NE(std::string(e.what()).find("at least 1"), std::string::npos) << e.what();
  }
}

struct CustomError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

TEST(PrefetcherErrors, ExceptionArrivesAfterEarlierBatchesWithItsType) {
  int64_t calls = 0;
  Prefetcher p([&]() -> std::optional<Prefetcher::Batch> {
    if (calls == 2) throw CustomError("bad element 2");
    return Prefetcher::Batch{scalar(calls++)};
  }, 4);
  EXPECT_EQ(value_of(*p.next()), 0);
  EXPECT_EQ(value_of(*p.next()), 1);
  try {
    p.next();
    FAIL() << "the producer's exception was not rethrown";
  } catch (const CustomError& e) {
    EXPECT_STREQ(e.what(), "bad element 2");
  }
  EXPECT_FALSE(p.next().has_value());  // delivered once, then the stream is over
}

TEST(PrefetcherErrors, TypedCoreErrorKeepsItsCode) {
  Prefetcher p([]() -> std::optional<Prefetcher::Batch> {
    throw_error(ErrorCode::kInvalidArgument, "map", "shape mismatch");
  }, 1);
  try {
    p.next();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(e.message(), "shape mismatch");
  }
}

TEST(PrefetcherBounds, ProducerIsAtMostCapacityAhead) {
  for (std::size_t capacity : {1u, 2u, 5u}) {
    Counter counter{1000};
    Prefetcher p([&] { return counter(); }, capacity);
    // Wait until the queue is full, then give the producer time to overrun if it could.
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (p.buffered() < capacity && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    std::this_thread::sleep_for(30ms);
    EXPECT_EQ(counter.produced.load(), int64_t(capacity));
    EXPECT_EQ(p.buffered(), capacity);
    for (int64_t taken = 1; taken <= 7; ++taken) {
      ASSERT_TRUE(p.next().has_value());
      std::this_thread::sleep_for(10ms);
      EXPECT_LE(counter.produced.load(), taken + int64_t(capacity)) << "capacity " << capacity;
    }
  }
}

TEST(PrefetcherShutdown, DestroyWithoutDrainingDoesNotHang) {
  Counter counter{1000000};
  const auto start = std::chrono::steady_clock::now();
  {
    Prefetcher p([&] { return counter(); }, 4);
    ASSERT_TRUE(p.next().has_value());
    std::this_thread::sleep_for(20ms);  // the producer is now blocked on a full queue
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_LE(counter.produced.load(), 5);
}

TEST(PrefetcherShutdown, DestroyWithSlowProducerWaitsOnlyForTheCurrentCall) {
  Counter counter{1000000};
  counter.delay = 100ms;
  const auto start = std::chrono::steady_clock::now();
  {
    Prefetcher p([&] { return counter(); }, 8);
    std::this_thread::sleep_for(30ms);  // the first (slow) call is in progress
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, 2s);  // not 8 x 100 ms of filling the queue, and no hang
  EXPECT_LE(counter.produced.load(), 1);
}

TEST(PrefetcherShutdown, CloseWakesABlockedConsumer) {
  Prefetcher p([]() -> std::optional<Prefetcher::Batch> {
    std::this_thread::sleep_for(50ms);
    return Prefetcher::Batch{};
  }, 1);
  ASSERT_TRUE(p.next().has_value());
  std::thread closer([&] {
    std::this_thread::sleep_for(10ms);
    p.close();
  });
  // Either the batch in flight or the end: what matters is that next() returns.
  while (p.next().has_value()) {
  }
  closer.join();
  EXPECT_TRUE(p.stop_requested());
  p.close();  // idempotent
  EXPECT_FALSE(p.next().has_value());
}

TEST(PrefetcherThreads, ManyShortStreams) {
  // Creation/destruction races: streams abandoned at every point, under the thread sanitizer too.
  for (int round = 0; round < 200; ++round) {
    Counter counter{round % 7};
    Prefetcher p([&] { return counter(); }, 1 + round % 3);
    for (int i = 0; i < round % 5; ++i) p.next();
  }
  SUCCEED();
}

}  // namespace
}  // namespace gpuaccel
