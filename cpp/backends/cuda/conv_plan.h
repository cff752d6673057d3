// Convolution plans cached per shape. A ConvEngine is what a convolution library does (cuDNN's
// in backends/cuda/cudnn_conv_engine.*, a counting fake in the tests): make the descriptors of
// a problem, choose its algorithm and workspace size, run it. ConvRunner asks the engine for
// descriptors and an algorithm only on the first call of a ConvPlanKey, keeps the plan in a
// PlanCache, and serves every call's workspace from the device's WorkspaceArena. When the
// library refuses a plan's algorithm at launch (nothing queued), the engine moves the plan to
// its next candidate and the call runs again with that one's workspace; so it does, bounded to a
// smaller workspace, when the device's pool cannot give the workspace. Header-only: backend
// libraries compile it in.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "backends/conv_params.h"
#include "backends/cuda/plan_cache.h"
#include "backends/cuda/workspace_arena.h"
#include "core/dtype.h"

namespace gpuaccel {

enum class ConvDirection { kForward, kBackwardData, kBackwardFilter };

inline const char* conv_direction_name(ConvDirection d) {
  switch (d) {
    case ConvDirection::kForward: return "forward";
    case ConvDirection::kBackwardData: return "backward_data";
    case ConvDirection::kBackwardFilter: return "backward_filter";
  }
  return "?";
}

// Everything a convolution plan depends on, as plain data. Shapes as the library is given them:
// x (N, H, W, C) after any explicit padding, w (F, KH, KW, C / groups), y (N, OH, OW, F);
// `params` with the padding the library applies itself.
struct ConvPlanKey {
  int device = 0;
  DType dtype = DType::kFloat32;
  ConvDirection direction = ConvDirection::kForward;
  int64_t x[4] = {0, 0, 0, 0};
  int64_t w[4] = {0, 0, 0, 0};
  int64_t y[4] = {0, 0, 0, 0};
  Conv2dParams params;
  bool tensor_op_math = false;  // tensor cores allowed (float16/bfloat16)

  bool operator==(const ConvPlanKey& o) const {
    const Conv2dParams& p = params;
    const Conv2dParams& q = o.params;
    return device == o.device && dtype == o.dtype && direction == o.direction &&
           std::memcmp(x, o.x, sizeof(x)) == 0 && std::memcmp(w, o.w, sizeof(w)) == 0 &&
           std::memcmp(y, o.y, sizeof(y)) == 0 && p.stride_h == q.stride_h &&
           p.stride_w == q.stride_w && p.dilation_h == q.dilation_h &&
           p.dilation_w == q.dilation_w && p.pad_top == q.pad_top &&
           p.pad_bottom == q.pad_bottom && p.pad_left == q.pad_left &&
           p.pad_right == q.pad_right && p.groups == q.groups &&
           tensor_op_math == o.tensor_op_math;
  }

  size_t hash() const {
    size_t h = 0;
    hash_combine(h, static_cast<uint64_t>(device));
    hash_combine(h, static_cast<uint64_t>(dtype));
    hash_combine(h, static_cast<uint64_t>(direction));
    for (int i = 0; i < 4; ++i) {
      hash_combine(h, static_cast<uint64_t>(x[i]));
      hash_combine(h, static_cast<uint64_t>(w[i]));
      hash_combine(h, static_cast<uint64_t>(y[i]));
    }
    for (int64_t v : {params.stride_h, params.stride_w, params.dilation_h, params.dilation_w,
                      params.pad_top, params.pad_bottom, params.pad_left, params.pad_right,
                      params.groups}) {
      hash_combine(h, static_cast<uint64_t>(v));
    }
    hash_combine(h, tensor_op_math ? 1 : 0);
    return h;
  }

  // "GPU 0 conv2d forward float32 x[8,28,28,1] w[32,3,3,1] y[8,26,26,32] stride 1x1
  // dilation 1x1 pad 0,0,0,0 fma".
  std::string to_string() const {
    auto dims = [](const int64_t* d) {
      return "[" + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]) +
             "," + std::to_string(d[3]) + "]";
    };
    const Conv2dParams& p = params;
    return "GPU " + std::to_string(device) + " conv2d " + conv_direction_name(direction) + " " +
           dtype_name(dtype) + " x" + dims(x) + " w" + dims(w) + " y" + dims(y) + " stride " +
           std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w) + " dilation " +
           std::to_string(p.dilation_h) + "x" + std::to_string(p.dilation_w) + " pad " +
           std::to_string(p.pad_top) + "," + std::to_string(p.pad_bottom) + "," +
           std::to_string(p.pad_left) + "," + std::to_string(p.pad_right) +
           (tensor_op_math ? " tensor_op" : " fma");
  }
};

// The library's descriptors of one problem (owned by the plan; the engine's subclass).
struct ConvDescriptors {
  virtual ~ConvDescriptors() = default;
};

// The algorithm chosen for a problem, in the library's own numbering.
struct ConvAlgorithm {
  int algorithm = 0;
  int math_type = 0;
  size_t workspace_bytes = 0;
};

struct ConvPlan {
  std::unique_ptr<ConvDescriptors> descriptors;
  ConvAlgorithm algorithm;
};

// Device pointers of one call. Forward: out = conv(x, w) (+ bias per output channel).
// Backward data: out (dx) from y (dy) and w. Backward filter: out (dw) from x and y (dy), and
// dbias, when not null, from y.
struct ConvOperands {
  const void* x = nullptr;
  const void* w = nullptr;
  const void* y = nullptr;
  void* out = nullptr;
  const void* bias = nullptr;
  void* dbias = nullptr;
};

class ConvEngine {
 public:
  virtual ~ConvEngine() = default;
  // Creates and sets the descriptors of `key`'s problem.
  virtual std::unique_ptr<ConvDescriptors> create_descriptors(const ConvPlanKey& key) = 0;
  // Asks the library for the problem's algorithm and its workspace size.
  virtual ConvAlgorithm choose_algorithm(const ConvPlanKey& key, const ConvDescriptors& d) = 0;
  // Queues the convolution with `workspace` (plan.algorithm.workspace_bytes of it). False when
  // the library refused plan.algorithm for this problem and queued nothing.
  virtual bool execute(const ConvPlanKey& key, const ConvPlan& plan, const ConvOperands& operands,
                       void* workspace) = 0;
  // After a refusal: puts the problem's next candidate into plan.algorithm, or throws the
  // library's typed error naming the problem when none is left. The candidate must need less
  // than `workspace_below` bytes of workspace: SIZE_MAX after a launch the library refused, the
  // size the device's pool could not give after that.
  virtual void next_algorithm(const ConvPlanKey& key, ConvPlan& plan, size_t workspace_below) = 0;
};

class ConvRunner {
 public:
  ConvRunner(ConvEngine& engine, WorkspaceArena& arena) : engine_(engine), arena_(arena) {}

  void run(const ConvPlanKey& key, const ConvOperands& operands) {
    ConvPlan& plan = plans_.get(key, [&] {
      auto p = std::make_unique<ConvPlan>();
      p->descriptors = engine_.create_descriptors(key);
      p->algorithm = engine_.choose_algorithm(key, *p->descriptors);
      return p;
    });
    // One launch at a time per device: the arena's block is shared by every plan, and a plan's
    // algorithm changes only under this lock.
    std::lock_guard<std::mutex> lock(launch_mutex_);
    // A workspace the pool cannot give moves the plan to a candidate needing less, for good (as
    // a refused launch does); only when none is left does the call fail, with the pool's own
    // error (what ran out is memory, and the pool's report says how much is in use).
    std::exception_ptr pool_refusal;
    size_t workspace_below = SIZE_MAX;
    for (;;) {
      const size_t bytes = plan.algorithm.workspace_bytes;
      void* workspace = nullptr;
      if (!arena_.try_reserve(bytes, "conv2d workspace", &workspace, &pool_refusal)) {
        workspace_below = std::min(workspace_below, bytes);
      } else if (engine_.execute(key, plan, operands, workspace)) {
        return;
      }
      try {
        engine_.next_algorithm(key, plan, workspace_below);
      } catch (...) {
        if (pool_refusal) std::rethrow_exception(pool_refusal);
        throw;
      }
    }
  }

  const PlanCache<ConvPlanKey, ConvPlan>& plans() const { return plans_; }

  // The arena's blocks back to the pool (WorkspaceArena::release); plans stay cached.
  void release_workspace() {
    std::lock_guard<std::mutex> lock(launch_mutex_);
    arena_.release();
  }

 private:
  ConvEngine& engine_;
  WorkspaceArena& arena_;
  PlanCache<ConvPlanKey, ConvPlan> plans_;
  std::mutex launch_mutex_;
};

}  // namespace gpuaccel
