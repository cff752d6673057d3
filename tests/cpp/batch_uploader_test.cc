// BatchUploader (train/batch_uploader.h) against a backend whose compute and copy streams are
// simulated on the host: each stream is a queue, a stream waiting for an event is an item in its
// queue, and one of the two streams is "slow" (runs only when something waits for it) while the
// other runs as far as its waits allow. So a missing wait shows as wrong bytes: an upload the
// step reads before the compute stream waited for it, a pinned buffer refilled before its DMA
// read it (slow copies), or a device buffer overwritten by the next DMA while a step still had
// to read it (slow compute). The log also shows that batch i+1's upload is queued while step i
// has not run, and that the host never waits for the compute stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <numeric>
#include <vector>

#include "backends/backend_interposer.h"
#include "backends/forwarding_backend.h"
#include "memory/memory_manager.h"
#include "ops/creation.h"
#include "train/batch_uploader.h"

#include "cuda_test_device.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

using Stream = Backend::Stream;

class TwoStreamBackend final : public ForwardingBackend {
 public:
  static constexpr int kCompute = 0, kCopy = 1;
  explicit TwoStreamBackend(int slow_stream) : ForwardingBackend(cpu_backend()), slow_(slow_stream) {}

  EventHandle create_event() override {
    events_.push_back(std::make_unique<Event>());
    return events_.back().get();
  }
  void record_event(EventHandle event, Stream stream) override {
    auto* e = static_cast<Event*>(event);
    e->stream = index(stream);
    e->position = queued_[e->stream];
  }
  void stream_wait_event(Stream waiter, EventHandle event) override {
    const Event target = *static_cast<Event*>(event);  // the record it waits for, not a later one
    if (target.stream < 0) ++unrecorded_waits;
    enqueue(index(waiter), [] {}, target);
  }
  void host_wait_event(EventHandle event) override {
    const Event& e = *static_cast<Event*>(event);
    if (e.stream < 0) ++unrecorded_waits;
    if (e.stream == kCompute) ++host_waits_on_compute;
    if (e.stream >= 0) run_until(e.stream, e.position);
    pump();
  }
  bool event_completed(EventHandle event) override {
    const Event& e = *static_cast<Event*>(event);
    return e.stream < 0 || done_[e.stream] >= e.position;
  }
  void copy_from_host_on(Stream stream, const void* host, const TensorView& dst) override {
    ASSERT_EQ(stream, Stream::kCopy);
    steps_done_when_copy_queued.push_back(steps_done);
    const size_t bytes = size_t(dst.numel()) * dtype_size(dst.dtype);
    enqueue(kCopy, [=] { std::memcpy(dst.data, host, bytes); });
  }
  // The "step": a device-to-device copy on the compute stream, counted when it runs.
  void copy(const TensorView& src, const TensorView& dst) override {
    enqueue(kCompute, [=] {
      ForwardingBackend::copy(src, dst);
      ++steps_done;
    });
  }
  void drain() {
    run_until(kCompute, queued_[kCompute]);
    run_until(kCopy, queued_[kCopy]);
  }

  int64_t steps_done = 0, unrecorded_waits = 0, host_waits_on_compute = 0;
  std::vector<int64_t> steps_done_when_copy_queued;

 private:
  struct Event {
    int stream = -1;
    int64_t position = 0;  // items queued on `stream` before the record
  };
  struct Item {
    std::function<void()> work;
    Event wait;  // stream -1: no wait
  };
  static int index(Stream s) { return s == Stream::kCopy ? kCopy : kCompute; }

  void enqueue(int stream, std::function<void()> work) { enqueue(stream, std::move(work), Event{}); }
  void enqueue(int stream, std::function<void()> work, Event wait) {
    queue_[stream].push_back({std::move(work), wait});
    ++queued_[stream];
    pump();
  }
  // Runs the front item of `stream`; a wait for the other stream either makes it catch up
  // (`force`) or blocks. False when nothing ran.
  bool step(int stream, bool force) {
    if (queue_[stream].empty()) return false;
    const Event wait = queue_[stream].front().wait;
    if (wait.stream >= 0 && done_[wait.stream] < wait.position) {
      if (!force) return false;
      run_until(wait.stream, wait.position);
    }
    Item item = std::move(queue_[stream].front());
    queue_[stream].pop_front();
    item.work();
    ++done_[stream];
    return true;
  }
  void run_until(int stream, int64_t position) {
    while (done_[stream] < position) ASSERT_TRUE(step(stream, /*force=*/true));
  }
  // The fast stream runs as far as its waits allow; the slow one only when forced. Called only
  // from the backend's entry points, never while an item runs.
  void pump() {
    while (step(1 - slow_, /*force=*/false)) {
    }
  }

  const int slow_;
  std::deque<Item> queue_[2];
  int64_t queued_[2] = {0, 0};
  int64_t done_[2] = {0, 0};
  std::vector<std::unique_ptr<Event>> events_;
};

// Uploads `batches` batches of two inputs (sizes change once, as a last short batch does) from
// one host buffer reused at once; each step copies the uploaded buffers out on the compute
// stream. Returns what each step read next to what was uploaded.
void run_steps(TwoStreamBackend& backend, int batches) {
  const LogicalDevice cpu{};
  std::vector<std::vector<float>> expected, seen;
  std::vector<Tensor> outputs;
  {
    train::BatchUploader uploader(backend, cpu, MemoryManager::instance().allocator_for(cpu));
    std::vector<float> host;
    for (int i = 0; i < batches; ++i) {
      const int64_t rows = i == batches - 1 ? 3 : 8;
      host.resize(size_t(rows) * 4);
      std::iota(host.begin(), host.end(), float(i * 1000));
      expected.push_back(host);
      const Tensor x = from_host(host.data(), {rows, 4}, DType::kFloat32, cpu);
      const Tensor y = from_host(host.data(), {rows}, DType::kFloat32, cpu);
      const std::vector<Tensor> device = uploader.upload({x, y});
      std::fill(host.begin(), host.end(), -1.0f);  // the caller reuses its buffer at once
      ASSERT_EQ(device.size(), 2u);
      Tensor out = Tensor::empty({rows, 4}, DType::kFloat32, cpu);
      backend.copy(device[0].view(), out.view());  // the step reads the upload
      outputs.push_back(out);
      uploader.release();
    }
    backend.drain();
  }
  for (int i = 0; i < batches; ++i) {
    const float* p = static_cast<const float*>(outputs[i].data());
    EXPECT_EQ(std::vector<float>(p, p + outputs[i].numel()), expected[i]) << "batch " << i;
  }
  EXPECT_EQ(backend.unrecorded_waits, 0);
  EXPECT_EQ(backend.host_waits_on_compute, 0);  // the host never waits for a step
}

TEST(BatchUploader, SlowCopiesNeverDeliverAPinnedBufferRefilledBeforeItsDma) {
  TwoStreamBackend backend(TwoStreamBackend::kCopy);
  run_steps(backend, 9);
}

TEST(BatchUploader, SlowStepsAreNeverOverwrittenByTheNextUploadsDma) {
  TwoStreamBackend backend(TwoStreamBackend::kCompute);
  run_steps(backend, 9);
  // Batch i+1's copies were queued while step i had not run: each upload's two copies saw
  // fewer finished steps than its batch number.
  ASSERT_EQ(backend.steps_done_when_copy_queued.size(), 18u);
  for (size_t copy = 2; copy < 18; ++copy) {
    EXPECT_LT(backend.steps_done_when_copy_queued[copy], int64_t(copy / 2)) << "copy " << copy;
  }
}

TEST(BatchUploader, OnTheCpuBackendItIsAPlainCopy) {
  // The CPU backend's streams and events are the defaults: nothing to wait for.
  const LogicalDevice cpu{};
  train::BatchUploader uploader(cpu_backend(), cpu, MemoryManager::instance().allocator_for(cpu));
  const std::vector<float> values = {1, 2, 3, 4, 5, 6};
  for (int i = 0; i < 3; ++i) {
    const std::vector<Tensor> out =
        uploader.upload({from_host(values.data(), {2, 3}, DType::kFloat32, cpu)});
    const float* p = static_cast<const float*>(out[0].data());
    EXPECT_EQ(std::vector<float>(p, p + 6), values);
    uploader.release();
  }
  EXPECT_EQ(uploader.uploads(), 3);
}

#ifdef GPUACCEL_TEST_CUDA_BACKEND
// On a real GPU (.ci/device_check runs the GPU suites): uploads on the copy stream
// from the pinned pool, each read on the compute stream by a device copy queued right after,
// with no synchronize until the end, arrive whole; a pageable source is refused with its reason.
class CudaBatchUploader : public CudaDeviceTest {};

TEST_F(CudaBatchUploader, UploadsOnTheCopyStreamArriveBeforeTheStepReadsThem) {
  const LogicalDevice gpu = DeviceRegistry::instance().logical_devices(DeviceType::kGPU).at(0);
  const LogicalDevice cpu{};
  std::vector<std::vector<float>> expected;
  std::vector<Tensor> outputs;
  {
    train::BatchUploader uploader(*backend_, gpu, MemoryManager::instance().pinned_host_allocator());
    std::vector<float> host(size_t{256} * 784);  // a course batch of 256 images
    for (int i = 0; i < 12; ++i) {
      std::iota(host.begin(), host.end(), float(i));
      expected.push_back(host);
      const Tensor x = from_host(host.data(), {256, 784}, DType::kFloat32, cpu);
      const std::vector<Tensor> device = uploader.upload({x});
      std::fill(host.begin(), host.end(), -1.0f);
      Tensor out = Tensor::empty({256, 784}, DType::kFloat32, gpu);
      backend_->copy(device[0].view(), out.view());  // the "step", on the compute stream
      outputs.push_back(out);
      uploader.release();
    }
    EXPECT_EQ(uploader.uploads(), 12);
  }
  for (size_t i = 0; i < outputs.size(); ++i) EXPECT_EQ(test::read(outputs[i]), expected[i]) << "batch " << i;
}

TEST_F(CudaBatchUploader, EventsOrderTheCopyStreamAndAPageableSourceIsRefused) {
  const LogicalDevice gpu = DeviceRegistry::instance().logical_devices(DeviceType::kGPU).at(0);
  Backend::EventHandle event = backend_->create_event();
  ASSERT_NE(event, nullptr);
  EXPECT_TRUE(backend_->event_completed(event));  // never recorded
  backend_->record_event(event, Backend::Stream::kCopy);
  backend_->stream_wait_event(Backend::Stream::kCompute, event);
  backend_->host_wait_event(event);
  EXPECT_TRUE(backend_->event_completed(event));
  backend_->destroy_event(event);
  const Tensor dst = Tensor::empty({4}, DType::kFloat32, gpu);
  std::vector<float> pageable(4, 1.0f);
  test::expect_error(ErrorCode::kInvalidArgument, "must be pinned memory", [&] {
    backend_->copy_from_host_on(Backend::Stream::kCopy, pageable.data(), dst.view());
  });
}
#endif

}  // namespace
}  // namespace gpuaccel
