// On a real GPU (skipped without one): while this thread captures a graph, another thread's
// fill runs beside the capture on the side stream, its copy to the host reads the real values,
// its synchronize waits, and neither is recorded into the graph nor fails the capture
// (docs/gpu_step.md, "Other threads during a capture"; the CPU twin is capture_threads_test.cc).
#include "cuda_test_device.h"

#ifdef GPUACCEL_TEST_CUDA_BACKEND
#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace gpuaccel {
namespace {

class CudaCaptureThreads : public CudaDeviceTest {
 protected:
  TensorView floats(size_t n) {
    TensorView v;
    v.data = device_alloc(n * sizeof(float));
    v.dtype = DType::kFloat32;
    v.ndim = 1;
    v.shape[0] = static_cast<int64_t>(n);
    v.strides[0] = 1;
    return v;
  }
  std::vector<float> read(const TensorView& v) {
    std::vector<float> host(static_cast<size_t>(v.shape[0]));
    backend_->copy_to_host(v, host.data());
    return host;
  }
};

TEST_F(CudaCaptureThreads, AnotherThreadsWorkRunsBesideTheCaptureAndStaysOutOfTheGraph) {
  const TensorView captured = floats(4), beside = floats(4);
  backend_->fill(captured, 0.0);
  backend_->fill(beside, 0.0);
  backend_->synchronize();

  backend_->begin_capture();
  backend_->fill(captured, 1.0);
  std::vector<float> seen(4, -1.0f);
  std::thread other([&] {
    backend_->fill(beside, 7.0);
    backend_->copy_to_host(beside, seen.data());
    backend_->synchronize();
  });
  other.join();
  Backend::GraphHandle graph = nullptr;
  ASSERT_NO_THROW(graph = backend_->end_capture());
  EXPECT_EQ(seen, std::vector<float>(4, 7.0f));
  EXPECT_EQ(read(captured), std::vector<float>(4, 0.0f)) << "the capture ran its fill";

  backend_->fill(beside, 0.0);
  backend_->replay(graph);
  EXPECT_EQ(read(captured), std::vector<float>(4, 1.0f));
  EXPECT_EQ(read(beside), std::vector<float>(4, 0.0f)) << "the other thread's fill is in the graph";
  backend_->destroy_graph(graph);
}

}  // namespace
}  // namespace gpuaccel
#endif  // GPUACCEL_TEST_CUDA_BACKEND
