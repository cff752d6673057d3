// StagingRing (backends/cuda/staging_ring.h) against a stream simulated on the host: queued copies
// run only when the host waits for an event behind them (or at the end), as a busy GPU would,
// so a ring that refilled a pinned slot before its DMA had read it would deliver wrong bytes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <numeric>
#include <vector>

#include "backends/cuda/staging_ring.h"

namespace gpuaccel {
namespace {

class SimulatedStream final : public StagingEngine {
 public:
  void* alloc_pinned(size_t bytes) override {
    ++pinned_allocations;
    buffers_.push_back(std::make_unique<char[]>(bytes));
    return buffers_.back().get();
  }
  void free_pinned(void*) override { ++pinned_frees; }
  void* create_event() override {
    events_.push_back(std::make_unique<int64_t>(-1));
    return events_.back().get();
  }
  void destroy_event(void*) override {}
  void copy_async(void* dst, const void* pinned, size_t bytes) override {
    queue_.push_back({dst, pinned, bytes});
    ++copies;
  }
  void record(void* event) override { *static_cast<int64_t*>(event) = queued_before_ + int64_t(queue_.size()); }
  void host_wait(void* event) override {
    ++host_waits;
    run_until(*static_cast<int64_t*>(event));
  }
  void drain() { run_until(queued_before_ + int64_t(queue_.size())); }

  int64_t pinned_allocations = 0, pinned_frees = 0, copies = 0, host_waits = 0;

 private:
  struct Copy {
    void* dst;
    const void* src;
    size_t bytes;
  };
  // Runs queued copies until `position` copies have run since the stream began.
  void run_until(int64_t position) {
    while (queued_before_ < position && !queue_.empty()) {
      std::memcpy(queue_.front().dst, queue_.front().src, queue_.front().bytes);
      queue_.pop_front();
      ++queued_before_;
    }
  }
  std::deque<Copy> queue_;
  int64_t queued_before_ = 0;  // copies already run
  std::vector<std::unique_ptr<char[]>> buffers_;
  std::vector<std::unique_ptr<int64_t>> events_;
};

TEST(StagingRing, EveryCopyArrivesIntactThoughTheHostReusesItsBufferAtOnce) {
  SimulatedStream stream;
  std::vector<std::vector<uint8_t>> device;
  std::vector<std::vector<uint8_t>> expected;
  {
    StagingRing ring(stream);
    std::vector<uint8_t> host;  // one pageable buffer, refilled for every batch
    // Batches of several sizes, two of them larger than a slot (chunked through the ring).
    const size_t sizes[] = {100, 800000, StagingRing::kSlotBytes + 7, 64, 3 * StagingRing::kSlotBytes,
                            800000, 800000, 800000, 800000, 800000, 1};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
      host.assign(sizes[i], 0);
      std::iota(host.begin(), host.end(), static_cast<uint8_t>(i * 37));
      expected.push_back(host);
      device.emplace_back(sizes[i], 0xEE);
      ring.copy(device.back().data(), host.data(), host.size());
      std::fill(host.begin(), host.end(), 0xFF);  // reused at once
    }
    stream.drain();
  }
  for (size_t i = 0; i < device.size(); ++i) EXPECT_EQ(device[i], expected[i]) << "batch " << i;
  // Four pinned slots for the process, freed with the ring. Every chunk's slot is waited for
  // once: before its next reuse, or by the ring's destructor.
  EXPECT_EQ(stream.pinned_allocations, int64_t(StagingRing::kSlots));
  EXPECT_EQ(stream.pinned_frees, int64_t(StagingRing::kSlots));
  EXPECT_EQ(stream.host_waits, stream.copies);
}

TEST(StagingRing, SmallCopiesNeverWaitForTheStreamUntilTheRingWrapsAround) {
  SimulatedStream stream;
  StagingRing ring(stream);
  std::vector<uint8_t> host(1000, 1), dst(1000, 0);
  for (size_t i = 0; i < StagingRing::kSlots; ++i) ring.copy(dst.data(), host.data(), host.size());
  EXPECT_EQ(stream.host_waits, 0);  // the host ran ahead of a busy stream
  ring.copy(dst.data(), host.data(), host.size());
  EXPECT_EQ(stream.host_waits, 1);  // the fifth reuses the first slot, after its DMA
  stream.drain();
  EXPECT_EQ(dst, host);
}

}  // namespace
}  // namespace gpuaccel
