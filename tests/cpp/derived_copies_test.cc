// The storage version counter and the derived-copy cache (tensor/derived_copies.h) and their
// uses: every in-place writer bumps the version; a copy is made once per version and remade after
// a write; the copies are pool memory, freed with their tensor; oneDNN's reordered convolution
// weights, the CUDA backend's KRSC kernel (through the fake CUDA library, which computes from
// that copy) and mixed precision's low-precision weights are made once per weights version and
// give the numbers fresh ones give.
#include "tensor/derived_copies.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "backends/cpu/onednn_ops.h"
#include "backends/library/library_backend.h"
#include "core/device_registry.h"
#include "fake_cuda_library.h"
#include "memory/memory_manager.h"
#include "ops/autograd.h"
#include "ops/elementwise.h"
#include "ops/nn.h"
#include "ops/reduce.h"
#include "ops/shape_ops.h"
#include "ops/weight_cast.h"
#include "optim/adam.h"
#include "optim/sgd.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

using test::make;
using test::read;

LogicalDevice cpu() { return DeviceRegistry::instance().logical_devices(DeviceType::kCPU).at(0); }

std::vector<float> iota(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * float(i) + 0.1f);
  return v;
}

void expect_near_all(const std::vector<float>& a, const std::vector<float>& b, float tol = 1e-5f) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol) << "at " << i;
}

Tensor sum_all(const Tensor& t) {
  std::vector<int64_t> axes;
  for (int d = 0; d < t.ndim(); ++d) axes.push_back(d);
  return reduce(ReduceOp::kSum, t, axes, false);
}

int64_t allocated_bytes() {
  return MemoryManager::instance().allocator_for(cpu())->stats().allocated_bytes.current;
}

// ---- the cache itself ----

TEST(DerivedCopies, MadeOncePerVersionAndRemadeAfterABump) {
  DerivedCopies d(nullptr, 0, [](size_t) { return std::shared_ptr<void>(); });
  int made = 0;
  auto make_copy = [&] {
    ++made;
    return std::shared_ptr<void>(std::make_shared<int>(made));
  };
  const auto a = d.get_or_make("k", make_copy);
  const auto b = d.get_or_make("k", make_copy);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(d.hits(), 1);
  d.get_or_make("other", make_copy);  // another transform of the same version
  EXPECT_EQ(made, 2);
  EXPECT_EQ(d.size(), 2u);

  d.bump_version();
  const auto c = d.get_or_make("k", make_copy);
  EXPECT_EQ(made, 3);
  EXPECT_EQ(*static_cast<int*>(c.get()), 3);
  EXPECT_EQ(*static_cast<int*>(a.get()), 1);  // the caller's old copy stays alive
  EXPECT_EQ(d.made(), 3);
  d.clear();
  EXPECT_EQ(d.size(), 0u);
}

TEST(DerivedCopies, ThreadsAskingTogetherMakeOneCopy) {
  DerivedCopies d(nullptr, 0, [](size_t) { return std::shared_ptr<void>(); });
  std::atomic<int> made{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        d.get_or_make("k", [&] {
          made.fetch_add(1);
          return std::shared_ptr<void>(std::make_shared<int>(0));
        });
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(made.load(), 1);
  EXPECT_EQ(d.hits(), 799);
}

// ---- versions: every writer bumps ----

TEST(StorageVersion, CopyIntoBumpsTheTarget) {
  const Tensor t = make({1, 2, 3}, {3});
  const uint64_t v = t.version();
  copy_into(make({4, 5, 6}, {3}), t);
  EXPECT_GT(t.version(), v);
  // A view shares the storage, so it shares the version.
  const Tensor view = slice(t, {SliceSpec{0, 2, 1}});
  const uint64_t v2 = t.version();
  copy_into(make({0, 0}, {2}), view);
  EXPECT_GT(t.version(), v2);
}

TEST(StorageVersion, OptimizerUpdatesBumpParametersAndSlots) {
  for (int kind = 0; kind < 2; ++kind) {
    std::unique_ptr<optim::Optimizer> opt;
    if (kind == 0) opt = std::make_unique<optim::SGD>(0.1, 0.9);
    if (kind == 1) opt = std::make_unique<optim::Adam>(0.1);
    const Tensor p = make({1, 2, 3, 4}, {4});
    const uint64_t v = p.version();
    opt->apply_gradients({make({1, 1, 1, 1}, {4})}, {p});
    EXPECT_GT(p.version(), v) << "optimizer " << kind;
    const uint64_t v2 = p.version();
    opt->apply_gradients({make({1, 1, 1, 1}, {4})}, {p});
    EXPECT_GT(p.version(), v2) << "optimizer " << kind;
  }
}

TEST(StorageVersion, BorrowedOrHostAliasedMemoryKeepsNoCopies) {
  std::vector<float> host(4, 1.0f);
  auto borrowed = Storage::borrow(host.data(), host.size() * sizeof(float), cpu(), std::make_shared<int>(0));
  EXPECT_FALSE(borrowed->caches_derived_copies());
  const Tensor t = make({1, 2, 3, 4}, {4});
  EXPECT_NE(t.view().derived, nullptr);
  t.storage()->mark_aliased_by_host();
  EXPECT_EQ(t.view().derived, nullptr);
  // Partial views never see the cache either, nor does a view a kernel shifts.
  const Tensor u = make({1, 2, 3, 4}, {4});
  EXPECT_EQ(slice(u, {SliceSpec{1, 3, 1}}).view().derived, nullptr);
  TensorView shifted = u.view();
  ASSERT_NE(shifted.derived, nullptr);
  EXPECT_TRUE(shifted.derived->is_source(shifted));
  shifted.data = static_cast<float*>(shifted.data) + 2;
  shifted.shape[0] = 2;
  EXPECT_FALSE(shifted.derived->is_source(shifted));
}

// ---- oneDNN convolution weights ----

struct ConvCase {
  Tensor x, w, b;
};
ConvCase conv_case() {
  ConvCase c;
  c.x = make(iota(2 * 6 * 6 * 8, 1.0f), {2, 6, 6, 8});
  c.w = make(iota(3 * 3 * 8 * 16, 0.2f), {3, 3, 8, 16});
  c.b = make(iota(16, 0.1f), {16});
  return c;
}
Tensor conv(const Tensor& x, const Tensor& w, const Tensor& b) {
  return conv2d(x, w, b, 1, 1, Padding::kSame, 1, 1);
}

TEST(OnednnConvWeights, ReorderedOncePerWeightsVersion) {
  ConvCase c = conv_case();
  const std::vector<float> first = read(conv(c.x, c.w, c.b));
  const int64_t after_first = cpu::conv_weights_reorders();
  for (int i = 0; i < 3; ++i) expect_near_all(read(conv(c.x, c.w, c.b)), first);
  EXPECT_EQ(cpu::conv_weights_reorders(), after_first);  // no reorder for unchanged weights

  // New values: the reordered copy is stale and remade, and the result follows the new values.
  copy_into(mul(c.w, scalar_like(-0.5, c.w)), c.w);
  const Tensor fresh = clone(c.w);  // another storage: reordered from scratch
  fresh.storage()->mark_aliased_by_host();
  expect_near_all(read(conv(c.x, c.w, c.b)), read(conv(c.x, fresh, c.b)));
  expect_near_all(read(conv(c.x, c.w, c.b)), [&] {
    std::vector<float> v = first, b = read(c.b);
    // conv is linear in w: y(-w/2) + b = -(y(w) - b)/2 + b
    for (size_t i = 0; i < v.size(); ++i) v[i] = -0.5f * (v[i] - b[i % 16]) + b[i % 16];
    return v;
  }(), 1e-4f);
}

TEST(OnednnConvWeights, GradientsMatchFreshWeightsAcrossSteps) {
  ConvCase c = conv_case();
  c.w.impl()->requires_grad = true;
  c.x.impl()->requires_grad = true;
  optim::SGD opt(0.05);
  for (int step = 0; step < 3; ++step) {
    // The cached path: c.w keeps its reordered copies between steps.
    const Tensor y = conv(c.x, c.w, c.b);
    const auto g = compute_gradients({sum_all(mul(y, y))}, {Tensor()}, {c.x, c.w});
    // The reference: a copy of the same weights whose storage keeps no derived copies.
    const Tensor w_ref = clone(detach(c.w));
    w_ref.storage()->mark_aliased_by_host();
    w_ref.impl()->requires_grad = true;
    const Tensor y_ref = conv(c.x, w_ref, c.b);
    const auto g_ref = compute_gradients({sum_all(mul(y_ref, y_ref))}, {Tensor()}, {c.x, w_ref});
    expect_near_all(read(y), read(y_ref), 1e-4f);
    expect_near_all(read(g[0]), read(g_ref[0]), 1e-3f);
    expect_near_all(read(g[1]), read(g_ref[1]), 1e-3f);
    opt.apply_gradients({g[1]}, {c.w});
  }
}

TEST(OnednnConvWeights, CopiesArePoolMemoryFreedWithTheirTensor) {
  ConvCase c = conv_case();
  Tensor w = clone(c.w);
  conv(c.x, w, c.b);  // primitives and any reordered copy exist from here
  const int64_t reorders = cpu::conv_weights_reorders();
  const int64_t before = allocated_bytes();
  {
    Tensor w2 = clone(c.w);
    const int64_t with_w2 = allocated_bytes();
    conv(c.x, w2, c.b);
    const size_t held = w2.storage()->derived_copies().size();
    if (cpu::conv_weights_reorders() > reorders) {
      EXPECT_EQ(held, 1u);  // forward's layout, kept
      EXPECT_GT(allocated_bytes(), with_w2);
    } else {
      EXPECT_EQ(held, 0u);  // this CPU's primitive reads hwio directly: nothing to keep
    }
  }
  EXPECT_EQ(allocated_bytes(), before);  // w2 and its copies went back to the pool
}

// ---- mixed precision: the low-precision copy of a float32 master weight ----

TEST(WeightCast, MadeOncePerVersionAndGradientsReachTheMaster) {
  const Tensor w = make({1.5f, -2.25f, 3.0f, 0.125f}, {2, 2});
  w.impl()->requires_grad = true;
  const Tensor a = cast_weight(w, DType::kBFloat16);
  const Tensor b = cast_weight(w, DType::kBFloat16);
  EXPECT_EQ(a.dtype(), DType::kBFloat16);
  EXPECT_EQ(a.storage(), b.storage());  // one copy
  EXPECT_EQ(w.storage()->derived_copies().made(), 1);
  expect_near_all(read(cast(a, DType::kFloat32)), {1.5f, -2.25f, 3.0f, 0.125f});

  // Gradients flow through the cached cast to the float32 master.
  const Tensor loss = sum_all(mul(cast(b, DType::kFloat32), make({1, 2, 3, 4}, {2, 2})));
  const auto g = compute_gradients({loss}, {Tensor()}, {w});
  ASSERT_TRUE(g[0].defined());
  EXPECT_EQ(g[0].dtype(), DType::kFloat32);
  expect_near_all(read(g[0]), {1, 2, 3, 4});

  // An update makes the copy stale: the next read casts the new values.
  optim::SGD opt(1.0);
  opt.apply_gradients({make({1, 1, 1, 1}, {2, 2})}, {w});
  const Tensor c = cast_weight(w, DType::kBFloat16);
  EXPECT_NE(c.storage(), a.storage());
  expect_near_all(read(cast(c, DType::kFloat32)), {0.5f, -3.25f, 2.0f, -0.875f});
  expect_near_all(read(cast(a, DType::kFloat32)), {1.5f, -2.25f, 3.0f, 0.125f});  // old reads keep theirs
}

TEST(WeightCast, TheCopyIsPoolMemoryFreedWithTheMaster) {
  const int64_t before = allocated_bytes();
  {
    const Tensor w = make(iota(4096, 1.0f), {64, 64});
    const int64_t with_master = allocated_bytes();
    cast_weight(w, DType::kBFloat16);  // the result is dropped; the cache keeps the copy
    EXPECT_EQ(w.storage()->derived_copies().size(), 1u);
    EXPECT_GE(allocated_bytes() - with_master, 4096 * 2);
  }
  EXPECT_EQ(allocated_bytes(), before);
}

// ---- the CUDA backend's KRSC kernel, through the fake CUDA library ----

class KrscKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_ = open_fake_cuda();
    ASSERT_NE(fake_.library, nullptr);
    ASSERT_NE(fake_.counters, nullptr);
    device_ = std::make_unique<LibraryBackend>(*fake_.library, 0, cpu());
  }
  std::vector<float> forward(const ConvCase& c, const Tensor& w) {
    Conv2dParams p;
    p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
    const Tensor y = Tensor::empty({2, 6, 6, 16}, DType::kFloat32, cpu());
    const TensorView bv = c.b.view();
    device_->backend().conv2d_forward(c.x.view(), w.view(), &bv, p, y.view());
    return read(y);
  }
  std::vector<float> backward_data(const ConvCase& c, const Tensor& w, const Tensor& dy) {
    Conv2dParams p;
    p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
    const Tensor dx = Tensor::empty({2, 6, 6, 8}, DType::kFloat32, cpu());
    device_->backend().conv2d_backward_data(dy.view(), w.view(), p, dx.view());
    return read(dx);
  }
  int64_t copies() const { return fake_.counters->kernel_layout_copies; }
  FakeCuda fake_;
  std::unique_ptr<LibraryBackend> device_;
};

TEST_F(KrscKernelTest, SecondCallOfTheSameWeightsMakesNoCopyAndAnUpdateRemakesIt) {
  ConvCase c = conv_case();
  const std::vector<float> reference = read(conv(c.x, c.w, c.b));
  const int64_t start = copies();
  expect_near_all(forward(c, c.w), reference, 1e-4f);
  EXPECT_EQ(copies(), start + 1);
  expect_near_all(forward(c, c.w), reference, 1e-4f);
  const Tensor dy = make(iota(2 * 6 * 6 * 16, 0.3f), {2, 6, 6, 16});
  backward_data(c, c.w, dy);  // forward's KRSC copy serves backward-data too
  EXPECT_EQ(copies(), start + 1);

  // An optimizer step writes w: the copy is remade once, and the fake (which computes from
  // the KRSC copy) gives the new weights' numbers.
  optim::SGD opt(0.5);
  opt.apply_gradients({make(iota(3 * 3 * 8 * 16, 1.0f), {3, 3, 8, 16})}, {c.w});
  const std::vector<float> updated = read(conv(c.x, c.w, c.b));
  expect_near_all(forward(c, c.w), updated, 1e-4f);
  expect_near_all(forward(c, c.w), updated, 1e-4f);
  EXPECT_EQ(copies(), start + 2);

  // The kept copy is pool memory of the kernel's device, returned with the kernel.
  {
    const Tensor w = clone(c.w);
    const int64_t with_w = allocated_bytes();
    forward(c, w);
    EXPECT_GE(allocated_bytes() - with_w, int64_t(w.numel() * 4));
  }
  EXPECT_EQ(copies(), start + 3);

  // Memory NumPy may write behind our back is copied on every call.
  const Tensor aliased = clone(c.w);
  aliased.storage()->mark_aliased_by_host();
  forward(c, aliased);
  forward(c, aliased);
  EXPECT_EQ(copies(), start + 5);
}

}  // namespace
}  // namespace gpuaccel
