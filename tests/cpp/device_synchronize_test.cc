// cuda.synchronize() and Backend::synchronize wait for every stream of the device, as
// torch.cuda.synchronize does, not only the compute stream: with the fake CUDA library, whose
// copy stream runs its queued DMAs only when something waits for them, an upload queued on the
// copy stream has landed once either synchronize returns.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/library/library_backend.h"
#include "core/device_registry.h"
#include "fake_cuda_library.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

using test::cpu;
using test::f32_view;

class DeviceSynchronize : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_ = open_fake_cuda();
    ASSERT_NE(fake_.library, nullptr);
    device_ = std::make_unique<LibraryBackend>(*fake_.library, 0, cpu());
  }
  // Queues an upload of `host` on the copy stream into `dst`; nothing has waited for it yet.
  void queue_upload(std::vector<float>& host, std::vector<float>& dst) {
    device_->backend().copy_from_host_on(Backend::Stream::kCopy, host.data(),
                                         f32_view(dst.data(), static_cast<int64_t>(dst.size())));
    ASSERT_EQ(dst, std::vector<float>(dst.size(), 0.0f)) << "the fake ran the DMA at once";
  }
  FakeCuda fake_;
  std::unique_ptr<LibraryBackend> device_;
};

TEST_F(DeviceSynchronize, TheBackendsSynchronizeWaitsForTheCopyStream) {
  std::vector<float> host = {1, 2, 3}, dst(3, 0.0f);
  queue_upload(host, dst);
  const int64_t waits = fake_.counters->synchronizes;
  device_->backend().synchronize();
  EXPECT_EQ(fake_.counters->synchronizes, waits + 1);
  EXPECT_EQ(dst, host);
}

TEST_F(DeviceSynchronize, CudaSynchronizeWaitsForTheCopyStream) {
  std::vector<float> host = {4, 5}, dst(2, 0.0f);
  queue_upload(host, dst);
  std::string error;
  ASSERT_EQ(fake_.library->synchronize(0, &error), CudaStatus::kOk) << error;
  EXPECT_EQ(dst, host);
}

TEST_F(DeviceSynchronize, CudaSynchronizeOnTheCapturingThreadIsAnErrorNotARefusedCapture) {
  device_->backend().begin_capture();
  std::string error;
  EXPECT_EQ(fake_.library->synchronize(0, &error), CudaStatus::kError);
  EXPECT_NE(error.find("capturing"), std::string::npos) << error;
  Backend::GraphHandle graph = device_->backend().end_capture();  // not refused
  device_->backend().destroy_graph(graph);
}

}  // namespace
}  // namespace gpuaccel
