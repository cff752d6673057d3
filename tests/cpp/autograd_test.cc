// compute_gradients' on_ready hook (ops/autograd.h), which data-parallel training uses to start
// summing gradients during the backward pass: every source is reported exactly once, as soon
// as its gradient is final (in the backward pass's order), with the same value the call returns;
// a source no node uses is reported last with no gradient. And backward()'s PyTorch semantics:
// the graph freed unless retain_graph, `inputs` restricting accumulation.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ops/autograd.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

using test::make;
using test::read;

Tensor weight(const std::vector<float>& values) {
  Tensor t = make(values, {int64_t(values.size())});
  t.impl()->requires_grad = true;
  return t;
}

TEST(Autograd, OnReadyReportsEachSourceOnceWhenItsGradientIsFinal) {
  const Tensor x = make({1, 2}, {2});
  const Tensor a = weight({3, 4}), b = weight({0.5f}), unused = weight({7}), d = weight({10, 20});
  // loss = b * sum(x * a + d): backward meets b first, then d, then a (twice: a*a below).
  const Tensor loss = [&] {
    GradModeGuard on(true);
    const Tensor h = add(mul(x, a), d);
    return mul(reduce(ReduceOp::kSum, add(h, mul(a, a)), {0}, false), b);
  }();
  std::vector<size_t> order;
  std::vector<Tensor> reported(4);
  const std::vector<Tensor> sources = {a, b, unused, d};
  const std::vector<Tensor> grads =
      compute_gradients({loss}, {Tensor()}, sources, [&](size_t i, const Tensor& g) {
        order.push_back(i);
        reported.at(i) = g;
      });
  ASSERT_EQ(order.size(), 4u);
  EXPECT_EQ(order[0], 1u);  // b: the last node's input
  EXPECT_EQ(order[3], 2u);  // the unused weight, after the whole backward pass
  // a is used by two nodes: it is reported only after both ran, i.e. after d.
  EXPECT_LT(std::find(order.begin(), order.end(), 3u) - order.begin(),
            std::find(order.begin(), order.end(), 0u) - order.begin());
  EXPECT_FALSE(reported[2].defined());
  EXPECT_FALSE(grads[2].defined());
  // d(loss)/da = b * (x + 2a); d/db = sum(x*a + d + a*a); d/dd = b.
  EXPECT_EQ(read(reported[0]), (std::vector<float>{0.5f * 7, 0.5f * 10}));
  EXPECT_EQ(read(reported[1]), (std::vector<float>{3 + 8 + 10 + 20 + 9 + 16}));
  EXPECT_EQ(read(reported[3]), (std::vector<float>{0.5f, 0.5f}));
  for (size_t i : {0u, 1u, 3u}) EXPECT_EQ(read(reported[i]), read(grads[i])) << i;
}

TEST(Autograd, OnReadyIsOptional) {
  const Tensor a = weight({2});
  Tensor loss;
  {
    GradModeGuard on(true);
    loss = mul(a, a);
  }
  const auto grads = compute_gradients({loss}, {Tensor()}, {a}, GradientReadyFn());
  EXPECT_EQ(read(grads[0]), std::vector<float>{4});
}

// loss.backward() (torch): the graph's saved state is freed unless retain_graph, and a second
// backward through it is PyTorch's error, after which .grad is unchanged; `inputs` restricts
// which tensors accumulate.
TEST(Autograd, BackwardFreesTheGraphUnlessRetained) {
  const Tensor a = weight({2, -1});
  Tensor loss;
  {
    GradModeGuard on(true);
    loss = reduce(ReduceOp::kSum, mul(a, a), {0}, false);
  }
  backward(loss, Tensor(), /*retain_graph=*/true);
  EXPECT_EQ(read(Tensor(a.impl()->grad)), (std::vector<float>{4, -2}));
  backward(loss, Tensor());
  EXPECT_EQ(read(Tensor(a.impl()->grad)), (std::vector<float>{8, -4}));
  try {
    backward(loss, Tensor());
    FAIL() << "a second backward through a freed graph must throw";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("Trying to backward through the graph a second time"),
              std::string::npos) << e.what();
  }
  EXPECT_EQ(read(Tensor(a.impl()->grad)), (std::vector<float>{8, -4}));
}

TEST(Autograd, BackwardInputsRestrictAccumulation) {
  const Tensor a = weight({3}), b = weight({5});
  Tensor loss;
  {
    GradModeGuard on(true);
    loss = mul(a, b);
  }
  backward(loss, Tensor(), false, {b});
  EXPECT_EQ(a.impl()->grad, nullptr);
  EXPECT_EQ(read(Tensor(b.impl()->grad)), std::vector<float>{3});
}

}  // namespace
}  // namespace gpuaccel
