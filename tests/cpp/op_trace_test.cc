// The op recorder behind Python layers and losses (cpp/nn/op_trace.h, traced_function.h): a
// recorded op list replays on new inputs with the values Python computed, reads captured
// weights by reference (an in-place update shows in the next replay), keeps gradients flowing
// to them, and a trace breaks (with its reason) on a host read of a traced value; a
// TracedFunction runs its function once per signature and every time for a broken one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nn/op_trace.h"
#include "nn/traced_function.h"
#include "ops/autograd.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"
#include "ops/shape_ops.h"
#include "test_helpers.h"

namespace gpuaccel::nn {
namespace {

using test::make;
using test::read;

// What the op bindings do for one binary op (bindings/op_recording.h), without Python.
Tensor recorded_binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  Tensor out = binary(op, a, b);
  OpTraceRecorder::record({a, b}, {out}, [op](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{binary(op, in[0], in[1])};
  });
  return out;
}

TEST(OpTrace, ReplaysOnNewInputsAndReadsWeightsByReference) {
  Tensor weight = make({2, 3}, {2});
  weight.impl()->requires_grad = true;
  const Tensor x = make({1, 1}, {2});
  OpTraceRecorder recorder({x});
  const Tensor y = recorded_binary(BinaryOp::kAdd, recorded_binary(BinaryOp::kMul, x, weight), x);
  const auto trace = recorder.finish({y});
  ASSERT_NE(trace, nullptr) << recorder.broken_reason();
  EXPECT_EQ(trace->op_count(), 2u);
  EXPECT_EQ(read(trace->replay({make({10, 20}, {2})})[0]), (std::vector<float>{30, 80}));

  {  // the optimizer writes weights in place: the replay reads the new values
    GradModeGuard off(false);
    copy_into(make({5, 5}, {2}), weight);
  }
  const Tensor replayed = trace->replay({make({1, 2}, {2})})[0];
  EXPECT_EQ(read(replayed), (std::vector<float>{6, 12}));
  const auto grads = compute_gradients({reduce_sum(replayed, {}, false)}, {Tensor()}, {weight});
  EXPECT_EQ(read(grads[0]), (std::vector<float>{1, 2}));
}

TEST(OpTrace, AHostReadOfATracedValueBreaksTheTrace) {
  const Tensor x = make({1, 2}, {2});
  OpTraceRecorder recorder({x});
  const Tensor y = recorded_binary(BinaryOp::kMul, x, x);
  OpTraceRecorder::note_host_read(make({7}, {1}));  // a constant: fine
  EXPECT_TRUE(recorder.broken_reason().empty());
  OpTraceRecorder::note_host_read(y);
  EXPECT_EQ(recorder.finish({y}), nullptr);
  EXPECT_NE(recorder.broken_reason().find("reads a tensor's value on the host"), std::string::npos);
  EXPECT_FALSE(OpTraceRecorder::active());
}

TEST(TracedFunction, RunsItsFunctionOncePerSignatureAndEveryTimeWhenBroken) {
  int calls = 0;
  std::vector<std::string> warnings;
  TracedFunction doubled(
      [&](const std::vector<Tensor>& in, bool) {
        ++calls;
        return std::vector<Tensor>{recorded_binary(BinaryOp::kAdd, in[0], in[0])};
      },
      [&](const std::string& reason) { warnings.push_back(reason); });
  EXPECT_EQ(read(doubled({make({1, 2}, {2})}, false)[0]), (std::vector<float>{2, 4}));
  EXPECT_EQ(read(doubled({make({3, 4}, {2})}, false)[0]), (std::vector<float>{6, 8}));
  EXPECT_EQ(read(doubled({make({1, 2, 3}, {3})}, false)[0]), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(calls, 2);  // shapes (2,) and (3,)
  EXPECT_EQ(doubled.traced_signatures(), 2u);

  TracedFunction reads_values(
      [&](const std::vector<Tensor>& in, bool) {
        ++calls;
        const Tensor y = recorded_binary(BinaryOp::kAdd, in[0], in[0]);
        OpTraceRecorder::note_host_read(y);
        return std::vector<Tensor>{y};
      },
      [&](const std::string& reason) { warnings.push_back(reason); });
  calls = 0;
  EXPECT_EQ(read(reads_values({make({1}, {1})}, true)[0]), (std::vector<float>{2}));
  EXPECT_EQ(read(reads_values({make({5}, {1})}, true)[0]), (std::vector<float>{10}));
  EXPECT_EQ(calls, 2);
  ASSERT_EQ(warnings.size(), 1u);  // once, not per call
  EXPECT_EQ(reads_values.eager_reason(), warnings[0]);
}

}  // namespace
}  // namespace gpuaccel::nn
