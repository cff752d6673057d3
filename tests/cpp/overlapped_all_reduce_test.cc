// The overlapped gradient all-reduce (distribute/overlapped_all_reduce.h) against a recording
// collective: buckets reach the engine in bucket order, the first one before the step asks for
// the result (it overlaps the rest of the backward pass), sums are weighted as the blocking
// path's, an unused weight's bucket is still reduced (zeros) instead of hanging, an engine
// error on the communication thread surfaces on the caller (and the next step works), and a
// failed backward pass waits for the bucket in flight and drops the rest. On a device with
// streams, each bucket's event is recorded on the compute stream by the thread running the
// backward pass, the moment the bucket is complete (before the earlier layers' gradient
// kernels), and the engine gets that event: an order-logging backend shows it on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "backends/backend_interposer.h"
#include "backends/forwarding_backend.h"
#include "distribute/gradient_all_reduce.h"
#include "distribute/overlapped_all_reduce.h"
#include "ops/autograd.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"
#include "ops/shape_ops.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

using distribute::OverlappedAllReduce;
using distribute::PeerUnavailableError;
using test::make;
using test::read;

// Rank 0 of 2 whose peer always holds the same values: a sum doubles each tensor. Records each
// call's tensor sizes; can fail one call, or hold calls until released.
class RecordingCollective : public distribute::Collective {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 2; }
  std::string engine() const override { return "recording"; }
  std::chrono::milliseconds timeout() const override { return std::chrono::seconds(5); }
  void broadcast(const std::vector<Tensor>&, int) override {}
  void barrier() override {}

  void all_reduce_sum_after(const std::vector<Tensor>& tensors, Backend::EventHandle ready) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ready_events_.push_back(ready);
    }
    all_reduce_sum(tensors);
  }

  void all_reduce_sum(const std::vector<Tensor>& tensors) override {
    std::unique_lock<std::mutex> lock(mutex_);
    std::vector<int64_t> sizes;
    for (const Tensor& t : tensors) sizes.push_back(t.numel());
    calls_.push_back(sizes);
    changed_.notify_all();
    changed_.wait(lock, [this] { return !hold_; });
    if (int(calls_.size()) == fail_call_) throw PeerUnavailableError("[all_reduce_sum] peer died");
    lock.unlock();
    for (const Tensor& t : tensors) copy_into(mul(t, scalar_like(2.0, t)), t);
  }

  std::vector<std::vector<int64_t>> calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }
  // The event each bucket's call came with (all_reduce_sum_after), in call order.
  std::vector<Backend::EventHandle> ready_events() {
    std::lock_guard<std::mutex> lock(mutex_);
    return ready_events_;
  }
  // Waits (up to 5 s) until `n` calls have begun.
  bool wait_for_calls(size_t n) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(5), [&] { return calls_.size() >= n; });
  }
  void set_hold(bool hold) {
    std::lock_guard<std::mutex> lock(mutex_);
    hold_ = hold;
    changed_.notify_all();
  }
  void fail_call(int n) { fail_call_ = n; }  // 1-based; before the calls start

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::vector<int64_t>> calls_;
  std::vector<Backend::EventHandle> ready_events_;
  bool hold_ = false;
  int fail_call_ = 0;
};

std::vector<Tensor> weights(const std::vector<int64_t>& sizes) {
  std::vector<Tensor> out;
  for (int64_t n : sizes) {
    Tensor t = make(std::vector<float>(size_t(n), 1.0f), {n});
    t.impl()->requires_grad = true;
    out.push_back(t);
  }
  return out;
}

std::vector<float> filled(size_t n, float v) { return std::vector<float>(n, v); }

// The CPU backend with events, logging what the test's thread queues on the compute stream in
// order ("kernel", or "record N" for event N) and counting what other threads (the
// communication thread, whose engine computes too) record.
class OrderLoggingBackend final : public ForwardingBackend {
 public:
  OrderLoggingBackend() : ForwardingBackend(cpu_backend()), owner_(std::this_thread::get_id()) {}

  EventHandle create_event() override {
    events_.push_back(std::make_unique<int>(int(events_.size())));
    return events_.back().get();
  }
  void destroy_event(EventHandle) override { ++destroyed; }
  void record_event(EventHandle event, Stream stream) override {
    if (std::this_thread::get_id() != owner_) {
      ++foreign_records;
      return;
    }
    log.push_back(std::string(stream == Stream::kCompute ? "record " : "copy-stream record ") +
                  std::to_string(*static_cast<int*>(event)));
  }
  int id_of(EventHandle event) const { return event == nullptr ? -1 : *static_cast<int*>(event); }

  void unary(UnaryOp op, const TensorView& x, const TensorView& y) override {
    note();
    ForwardingBackend::unary(op, x, y);
  }
  void binary(BinaryOp op, const TensorView& a, const TensorView& b, const TensorView& out) override {
    note();
    ForwardingBackend::binary(op, a, b, out);
  }
  void copy(const TensorView& src, const TensorView& dst) override {
    note();
    ForwardingBackend::copy(src, dst);
  }
  void fill(const TensorView& dst, double value) override {
    note();
    ForwardingBackend::fill(dst, value);
  }
  void reduce(ReduceOp op, const TensorView& x, uint32_t axes_mask, const TensorView& out) override {
    note();
    ForwardingBackend::reduce(op, x, axes_mask, out);
  }

  std::vector<std::string> log;
  int foreign_records = 0, destroyed = 0;

 private:
  void note() {
    if (std::this_thread::get_id() == owner_) log.push_back("kernel");
  }
  const std::thread::id owner_;
  std::vector<std::unique_ptr<int>> events_;
};

size_t position_of(const std::vector<std::string>& log, const std::string& entry) {
  return size_t(std::find(log.begin(), log.end(), entry) - log.begin());
}

TEST(OverlappedAllReduce, BucketsReachTheEngineInOrderAndTheFirstBeforeTheStepEnds) {
  RecordingCollective engine;
  OverlappedAllReduce overlap(engine, 16);  // 4 float32s per bucket
  const auto params = weights({2, 3, 4});   // buckets: {2}, {1, 0}
  overlap.begin(params, 0.5);
  engine.set_hold(true);
  overlap.gradient_ready(2, make(filled(4, 3), {4}));
  // Bucket 0 is in the engine while the "backward pass" still runs on this thread.
  ASSERT_TRUE(engine.wait_for_calls(1));
  overlap.gradient_ready(1, make(filled(3, 5), {3}));
  overlap.gradient_ready(0, make(filled(2, 7), {2}));
  engine.set_hold(false);
  const std::vector<Tensor> sums = overlap.finish();
  EXPECT_EQ(engine.calls(), (std::vector<std::vector<int64_t>>{{4}, {3, 2}}));
  // weight 0.5, summed with an identical peer: the gradient itself.
  EXPECT_EQ(read(sums[0]), filled(2, 7));
  EXPECT_EQ(read(sums[1]), filled(3, 5));
  EXPECT_EQ(read(sums[2]), filled(4, 3));
}

TEST(OverlappedAllReduce, MatchesTheBlockingPathOnABackwardPass) {
  const auto params = weights({2, 2, 1});
  const Tensor x = make({1, 2}, {2});
  auto loss_of = [&] {
    GradModeGuard on(true);
    const Tensor h = add(mul(x, params[0]), params[1]);
    return mul(reduce(ReduceOp::kSum, h, {0}, false), params[2]);
  };
  RecordingCollective blocking_engine, overlapped_engine;
  std::vector<Tensor> expected = compute_gradients({loss_of()}, {Tensor()}, params);
  distribute::all_reduce_gradients(blocking_engine, expected, params, 0.25);
  OverlappedAllReduce overlap(overlapped_engine, 4);  // one weight per bucket
  const std::vector<Tensor> got = overlap.backward_and_all_reduce(loss_of(), params, 0.25);
  for (size_t i = 0; i < params.size(); ++i) EXPECT_EQ(read(got[i]), read(expected[i])) << i;
  EXPECT_EQ(overlapped_engine.calls(), (std::vector<std::vector<int64_t>>{{1}, {2}, {2}}));
  // d(loss)/d(params[2]) = sum(x + 1) = 5, weighted by 0.25 and summed with an identical peer.
  EXPECT_EQ(read(got[2]), std::vector<float>{2 * 0.25f * 5});
}

TEST(OverlappedAllReduce, EachBucketsEventIsRecordedByTheBackwardThreadBeforeTheNextLayersKernels) {
  OrderLoggingBackend backend;
  ScopedCpuBackendInterposer interposer(backend);
  // Three "layers" h1 = w0 * x, h2 = w1 * h1, loss = sum(w2 * h2): the backward pass finishes
  // w2's gradient first, then (more kernels) w1's, then w0's. One weight per bucket.
  const auto params = weights({4, 4, 4});
  const Tensor x = make({1, 2, 3, 4}, {4});
  auto loss_of = [&] {
    GradModeGuard on(true);
    const Tensor h2 = mul(params[1], mul(params[0], x));
    return reduce(ReduceOp::kSum, mul(params[2], h2), {0}, false);
  };
  RecordingCollective engine;
  {
    OverlappedAllReduce overlap(engine, 16);
    for (int step = 0; step < 2; ++step) {
      const Tensor loss = loss_of();
      backend.log.clear();
      const std::vector<Tensor> sums = overlap.backward_and_all_reduce(loss, params, 1.0);
      // With every weight 1, each gradient is x; the identical peer doubles it.
      for (const Tensor& g : sums) EXPECT_EQ(read(g), (std::vector<float>{2, 4, 6, 8}));
      ASSERT_EQ(overlap.buckets()->bucket_count(), 3u);
      // Bucket b (weight 2 - b) got event b, recorded by this thread on the compute stream ...
      const auto events = engine.ready_events();
      ASSERT_EQ(events.size(), size_t(3 * (step + 1)));
      for (int b = 0; b < 3; ++b) EXPECT_EQ(backend.id_of(events[size_t(3 * step + b)]), b) << "bucket " << b;
      const size_t record0 = position_of(backend.log, "record 0");
      const size_t record1 = position_of(backend.log, "record 1");
      const size_t record2 = position_of(backend.log, "record 2");
      ASSERT_LT(record2, backend.log.size()) << "step " << step;
      // ... behind the kernels that made its gradient and before the ones that make the next
      // bucket's: the backward pass queued kernels between two buckets' records.
      EXPECT_GT(record0, 0u);
      EXPECT_EQ(backend.log[record0 - 1], "kernel");
      EXPECT_LT(record0 + 1, record1);
      EXPECT_LT(record1 + 1, record2);
    }
    EXPECT_EQ(backend.foreign_records, 0);  // the communication thread records nothing
  }
  EXPECT_EQ(backend.destroyed, 3);  // one event per bucket, reused by the second step
}

TEST(OverlappedAllReduce, OnTheCpuBackendTheEngineGetsNoEvent) {
  RecordingCollective engine;
  OverlappedAllReduce overlap(engine, 4);
  const auto params = weights({1, 1});
  overlap.all_reduce({make({1}, {1}), make({2}, {1})}, params, 1.0);
  EXPECT_EQ(engine.ready_events(), (std::vector<Backend::EventHandle>{nullptr, nullptr}));
}

TEST(OverlappedAllReduce, AnUnusedWeightContributesZerosAndItsBucketStillRuns) {
  RecordingCollective engine;
  OverlappedAllReduce overlap(engine, 1024);
  const auto params = weights({2, 3});
  Tensor loss;
  {
    GradModeGuard on(true);
    loss = reduce(ReduceOp::kSum, params[0], {0}, false);  // params[1] is never used
  }
  const std::vector<Tensor> sums = overlap.backward_and_all_reduce(loss, params, 1.0);
  EXPECT_EQ(engine.calls(), (std::vector<std::vector<int64_t>>{{3, 2}}));
  EXPECT_EQ(read(sums[0]), filled(2, 2));
  EXPECT_EQ(read(sums[1]), filled(3, 0));
  // all_reduce(): a replica with no rows sends zeros in the same buckets.
  const std::vector<Tensor> zeros_sum = overlap.all_reduce({}, params, 1.0);
  EXPECT_EQ(read(zeros_sum[1]), filled(3, 0));
  EXPECT_EQ(engine.calls().size(), 2u);
}

TEST(OverlappedAllReduce, AnEngineErrorSurfacesOnTheCallerAndTheNextStepWorks) {
  RecordingCollective engine;
  engine.fail_call(1);
  OverlappedAllReduce overlap(engine, 4);
  const auto params = weights({1, 1, 1});
  try {
    overlap.all_reduce({make({1}, {1}), make({2}, {1}), make({3}, {1})}, params, 1.0);
    FAIL() << "expected the engine's error";
  } catch (const PeerUnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("peer died"), std::string::npos);
  }
  // The buckets after the failed one were dropped, not sent to a broken engine.
  EXPECT_EQ(engine.calls().size(), 1u);
  const auto sums = overlap.all_reduce({make({1}, {1}), make({2}, {1}), make({3}, {1})}, params, 1.0);
  EXPECT_EQ(read(sums[2]), std::vector<float>{6});
}

TEST(OverlappedAllReduce, AFailedBackwardPassWaitsForTheBucketInFlightAndDropsTheRest) {
  RecordingCollective engine;
  OverlappedAllReduce overlap(engine, 4);
  const auto params = weights({1, 1, 1});
  overlap.begin(params, 1.0);
  engine.set_hold(true);
  overlap.gradient_ready(2, make({1}, {1}));
  overlap.gradient_ready(1, make({1}, {1}));  // queued behind the held call
  ASSERT_TRUE(engine.wait_for_calls(1));
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    engine.set_hold(false);
  });
  overlap.cancel();  // returns once the held call finished
  release.join();
  EXPECT_EQ(engine.calls().size(), 1u);
  test::expect_error(ErrorCode::kInternal, "reported; there are 3 weights",
                     [&] { overlap.begin(params, 1.0), overlap.gradient_ready(3, Tensor()); });
}

}  // namespace
}  // namespace gpuaccel
