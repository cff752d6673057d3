// A graph capture belongs to the thread that began it (backends/cuda/capture_owner.h): while the
// training thread captures a step, another thread's ops run eagerly and are not part of the
// graph, its copy to the host returns the real values, its synchronize waits, and none of its
// calls fails the capture. Checked with the fake CUDA library, which follows the CUDA backend's
// ownership rules, and with CaptureOwner itself (a capture's edges wait for ops in flight).
#include <gtest/gtest.h>

#include <atomic>
#include <algorithm>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

#include "backends/cuda/capture_owner.h"
#include "backends/library/library_backend.h"
#include "core/device_registry.h"
#include "core/errors.h"
#include "fake_cuda_library.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

using test::cpu;
using test::f32_view;

TEST(CaptureThreads, AnotherThreadsOpsRunEagerlyBesideTheCaptureAndStayOutOfTheGraph) {
  FakeCuda fake = open_fake_cuda();
  ASSERT_NE(fake.library, nullptr);
  LibraryBackend device(*fake.library, 0, cpu());
  Backend& backend = device.backend();

  std::vector<float> captured(4, 0.0f), beside(4, 0.0f), read_back(4, -1.0f);
  backend.begin_capture();
  backend.fill(f32_view(captured.data(), 4), 1.0f);  // this thread's: recorded, not run

  const int64_t syncs_before = fake.counters->synchronizes;
  const int64_t copies_before = fake.counters->copies_to_host;
  std::thread other([&] {
    backend.fill(f32_view(beside.data(), 4), 7.0f);
    backend.copy_to_host(f32_view(beside.data(), 4), read_back.data());
    backend.synchronize();
  });
  other.join();

  EXPECT_EQ(read_back, std::vector<float>(4, 7.0f)) << "the other thread's copy read zeros";
  EXPECT_EQ(fake.counters->copies_to_host, copies_before + 1);
  EXPECT_EQ(fake.counters->synchronizes, syncs_before + 1) << "its synchronize did not wait";
  EXPECT_EQ(captured, std::vector<float>(4, 0.0f)) << "the capturing thread's fill ran while capturing";

  // Neither the copy nor the synchronize was the capturing thread's: the capture succeeds.
  Backend::GraphHandle graph = nullptr;
  ASSERT_NO_THROW(graph = backend.end_capture());
  ASSERT_NE(graph, nullptr);
  std::fill(beside.begin(), beside.end(), 0.0f);
  backend.replay(graph);
  EXPECT_EQ(captured, std::vector<float>(4, 1.0f));
  EXPECT_EQ(beside, std::vector<float>(4, 0.0f)) << "the other thread's fill was recorded into the graph";
  backend.destroy_graph(graph);
}

TEST(CaptureThreads, TheCapturingThreadsOwnHostCopyStillFailsItsCapture) {
  FakeCuda fake = open_fake_cuda();
  ASSERT_NE(fake.library, nullptr);
  LibraryBackend device(*fake.library, 0, cpu());
  Backend& backend = device.backend();
  std::vector<float> x(2, 3.0f), host(2, -1.0f);
  backend.begin_capture();
  backend.copy_to_host(f32_view(x.data(), 2), host.data());
  EXPECT_EQ(host, std::vector<float>(2, 0.0f));
  EXPECT_THROW(backend.end_capture(), Error);
}

TEST(CaptureThreads, OnlyTheCapturingThreadCanEndItsCapture) {
  FakeCuda fake = open_fake_cuda();
  ASSERT_NE(fake.library, nullptr);
  LibraryBackend device(*fake.library, 0, cpu());
  Backend& backend = device.backend();
  backend.begin_capture();
  std::thread other([&] {
    EXPECT_THROW(backend.end_capture(), Error);
    EXPECT_THROW(backend.begin_capture(), Error);  // one capture per device at a time
  });
  other.join();
  Backend::GraphHandle graph = backend.end_capture();
  backend.destroy_graph(graph);
}

// A capture cannot begin while another thread's op is in flight: begin() waits for it, so none
// of that op's launches can land in the graph. Ordered by promises, not by sleeping.
TEST(CaptureOwner, BeginWaitsForAnotherThreadsOpInFlight) {
  CaptureOwner owner;
  std::promise<void> op_started, op_may_finish;
  std::atomic<bool> op_finished{false};
  std::thread other([&] {
    const CaptureOwner::OpScope scope(owner);
    EXPECT_FALSE(scope.beside_capture());
    op_started.set_value();
    op_may_finish.get_future().wait();
    op_finished = true;
  });
  op_started.get_future().wait();
  std::future<bool> began = std::async(std::launch::async, [&] {
    bool finished_first = false;
    owner.begin([&] { finished_first = op_finished.load(); });
    const bool here = owner.captures_here();
    owner.end([] {});
    return finished_first && here;
  });
  op_may_finish.set_value();
  other.join();
  EXPECT_TRUE(began.get()) << "the capture began while another thread's op was in flight";
}

TEST(CaptureOwner, OpsOfOtherThreadsAreBesideTheCaptureAndTheCapturersAreNot) {
  CaptureOwner owner;
  owner.begin([] {});
  {
    const CaptureOwner::OpScope mine(owner);
    EXPECT_FALSE(mine.beside_capture());
  }
  bool beside = false;
  std::thread other([&] {
    const CaptureOwner::OpScope scope(owner);
    beside = scope.beside_capture();
  });
  other.join();
  EXPECT_TRUE(beside);
  EXPECT_THROW(owner.begin([] {}), std::logic_error);
  owner.end([] {});
  EXPECT_THROW(owner.end([] {}), std::logic_error);
}

}  // namespace
}  // namespace gpuaccel
