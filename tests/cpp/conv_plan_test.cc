// Convolution plans cached per shape (backends/cuda/conv_plan.h), without a GPU: a counting fake
// engine stands for cuDNN, the workspaces come from the core's pool through the same services a
// backend library gets. The second call of a shape creates no descriptor, runs no algorithm
// query and allocates nothing; workspace bytes show in the pool's stats. An algorithm the
// library refuses at launch gives way to the engine's next candidate, once, for good.
#include "backends/cuda/conv_plan.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/library/library_backend.h"
#include "core/device_registry.h"
#include "fake_cuda_library.h"
#include "memory/memory_manager.h"

namespace gpuaccel {
namespace {

LogicalDevice cpu() { return DeviceRegistry::instance().logical_devices(DeviceType::kCPU).at(0); }

// A ConvEngine that counts what cuDNN would be asked, and asks for a workspace of
// 1 KiB per output channel.
class CountingConvEngine final : public ConvEngine {
 public:
  struct Descriptors final : ConvDescriptors {
    ConvPlanKey made_for;
  };
  std::unique_ptr<ConvDescriptors> create_descriptors(const ConvPlanKey& key) override {
    ++descriptors_created;
    auto d = std::make_unique<Descriptors>();
    d->made_for = key;
    return d;
  }
  ConvAlgorithm choose_algorithm(const ConvPlanKey& key, const ConvDescriptors& d) override {
    ++algorithm_queries;
    EXPECT_EQ(static_cast<const Descriptors&>(d).made_for, key);
    ConvAlgorithm a;
    a.algorithm = 1 + static_cast<int>(key.direction);
    a.workspace_bytes = static_cast<size_t>(key.y[3]) << 10;
    return a;
  }
  bool execute(const ConvPlanKey& key, const ConvPlan& plan, const ConvOperands& o, void* workspace) override {
    ++executions;
    EXPECT_EQ(static_cast<const Descriptors&>(*plan.descriptors).made_for, key);
    if (plan.algorithm.workspace_bytes > 0) EXPECT_NE(workspace, nullptr);
    if (plan.algorithm.algorithm == refused_algorithm) {
      ++refusals;
      return false;
    }
    EXPECT_EQ(plan.algorithm.algorithm, 1 + static_cast<int>(key.direction) + 10 * fallbacks_taken);
    workspaces.push_back(workspace);
    launched_workspace_bytes.push_back(plan.algorithm.workspace_bytes);
    last_out = o.out;
    return true;
  }
  // The next candidate, `candidates_left` times: algorithm + 10, with twice the workspace after
  // a refused launch, or `smaller_workspace_bytes` after the pool refused a workspace.
  void next_algorithm(const ConvPlanKey&, ConvPlan& plan, size_t workspace_below) override {
    workspace_bounds.push_back(workspace_below);
    if (candidates_left == 0) throw std::runtime_error("no algorithm left");
    --candidates_left;
    ++fallbacks_taken;
    plan.algorithm.algorithm += 10;
    if (workspace_below == SIZE_MAX) {
      plan.algorithm.workspace_bytes *= 2;
    } else {
      plan.algorithm.workspace_bytes = smaller_workspace_bytes;
    }
  }
  size_t smaller_workspace_bytes = 0;
  std::vector<size_t> workspace_bounds;  // what each next_algorithm call was given
  int refused_algorithm = -1;
  int candidates_left = 0;
  int fallbacks_taken = 0;
  int refusals = 0;
  std::vector<size_t> launched_workspace_bytes;
  int descriptors_created = 0;
  int algorithm_queries = 0;
  int executions = 0;
  std::vector<void*> workspaces;
  void* last_out = nullptr;
};

ConvPlanKey key_for(int64_t batch, int64_t filters, ConvDirection direction = ConvDirection::kForward) {
  ConvPlanKey k;
  k.direction = direction;
  const int64_t x[4] = {batch, 28, 28, 1}, w[4] = {filters, 3, 3, 1}, y[4] = {batch, 26, 26, filters};
  for (int d = 0; d < 4; ++d) {
    k.x[d] = x[d];
    k.w[d] = w[d];
    k.y[d] = y[d];
  }
  return k;
}

class ConvPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const FakeCuda fake = open_fake_cuda();
    ASSERT_NE(fake.library, nullptr);
    services_ = std::make_unique<CoreBackendServices>(*fake.library, 0, cpu());
    arena_ = std::make_unique<WorkspaceArena>(*services_);
    runner_ = std::make_unique<ConvRunner>(engine_, *arena_);
    pool_ = MemoryManager::instance().allocator_for(cpu());
  }
  CountingConvEngine engine_;
  std::unique_ptr<CoreBackendServices> services_;
  std::unique_ptr<WorkspaceArena> arena_;
  std::unique_ptr<ConvRunner> runner_;
  std::shared_ptr<Allocator> pool_;
};

TEST_F(ConvPlanTest, TheSecondCallOfAShapeCreatesNothingAndQueriesNothing) {
  ConvOperands o;
  float out[1];
  o.out = out;
  const MemoryStats start = pool_->stats();
  runner_->run(key_for(64, 32), o);
  EXPECT_EQ(engine_.descriptors_created, 1);
  EXPECT_EQ(engine_.algorithm_queries, 1);
  const MemoryStats after_first = pool_->stats();
  // The workspace (32 KiB) is the pool's memory and stays held for the next call.
  EXPECT_EQ(after_first.requested_bytes.current - start.requested_bytes.current, 32 << 10);
  EXPECT_EQ(after_first.allocations.allocated - start.allocations.allocated, 1);

  for (int i = 0; i < 5; ++i) runner_->run(key_for(64, 32), o);
  EXPECT_EQ(engine_.descriptors_created, 1);
  EXPECT_EQ(engine_.algorithm_queries, 1);
  EXPECT_EQ(engine_.executions, 6);
  EXPECT_EQ(runner_->plans().builds(), 1);
  EXPECT_EQ(runner_->plans().hits(), 5);
  EXPECT_EQ(pool_->stats().allocations.allocated, after_first.allocations.allocated);  // no allocation
  EXPECT_EQ(std::set<void*>(engine_.workspaces.begin(), engine_.workspaces.end()).size(), 1u);
  EXPECT_EQ(engine_.last_out, out);
}

TEST_F(ConvPlanTest, EachDirectionAndShapeHasItsPlanAndTheWorkspaceGrowsToTheLargest) {
  ConvOperands o;
  runner_->run(key_for(64, 32), o);
  runner_->run(key_for(64, 32, ConvDirection::kBackwardData), o);
  runner_->run(key_for(64, 32, ConvDirection::kBackwardFilter), o);
  runner_->run(key_for(16, 32), o);   // the last batch of an epoch is smaller
  runner_->run(key_for(64, 128), o);  // 128 KiB: the arena grows once
  EXPECT_EQ(engine_.descriptors_created, 5);
  EXPECT_EQ(engine_.algorithm_queries, 5);
  EXPECT_EQ(arena_->capacity(), size_t{128} << 10);
  const int64_t held = pool_->stats().requested_bytes.current;
  for (int i = 0; i < 3; ++i) {
    runner_->run(key_for(64, 32), o);  // a smaller workspace fits the grown block
    runner_->run(key_for(16, 32), o);
  }
  EXPECT_EQ(engine_.descriptors_created, 5);
  EXPECT_EQ(pool_->stats().requested_bytes.current, held);
  // The arena goes back to the pool with its owner.
  runner_.reset();
  arena_.reset();
  EXPECT_EQ(pool_->stats().requested_bytes.current, held - (int64_t{128} << 10));
}

TEST_F(ConvPlanTest, AWorkspaceBeyondThePoolIsItsOutOfMemoryAndCachesNothingBroken) {
  ConvOperands o;
  ConvPlanKey huge = key_for(1, int64_t{1} << 40);  // a 2^50-byte workspace
  try {
    runner_->run(huge, o);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kResourceExhausted);
    EXPECT_NE(std::string(e.what()).find("conv2d workspace"), std::string::npos) << e.what();
  }
  runner_->run(key_for(64, 32), o);  // the runner is still usable
  EXPECT_EQ(engine_.executions, 1);
}

// A CUDA graph replays with the workspace address it was captured with, so a block handed out
// during a capture must not go back to the pool when a later (eager) call grows the arena:
// the pool would give it to a tensor that the next replay then overwrites.
TEST_F(ConvPlanTest, ABlockACapturedGraphUsesIsNotGivenBackWhenTheArenaGrows) {
  bool capturing = false;
  WorkspaceArena arena(*services_, [&] { return capturing; });
  ConvRunner runner(engine_, arena);
  ConvOperands o;
  const int64_t start = pool_->stats().requested_bytes.current;
  runner.run(key_for(64, 32), o);  // the warm-up step sizes the block: 32 KiB
  capturing = true;
  runner.run(key_for(64, 32), o);  // captured: a graph now holds this address
  capturing = false;
  void* captured = engine_.workspaces.back();
  runner.run(key_for(64, 128), o);  // a larger problem, eagerly (another batch size, predict)
  EXPECT_NE(engine_.workspaces.back(), captured);
  EXPECT_EQ(arena.retired_blocks(), 1u);
  EXPECT_EQ(arena.capacity(), size_t{128} << 10);
  // The captured block is still held by the arena, beside the new one.
  EXPECT_EQ(pool_->stats().requested_bytes.current - start, (int64_t{32} + 128) << 10);
  // A block no graph saw is given back as before; a retired one is kept.
  runner.run(key_for(64, 512), o);
  EXPECT_EQ(arena.retired_blocks(), 1u);
  EXPECT_EQ(pool_->stats().requested_bytes.current - start, (int64_t{32} + 512) << 10);
  // Retired blocks leave with the arena.
}

TEST_F(ConvPlanTest, RetiredBlocksGoBackToThePoolWithTheArenaAndGrowthDoubles) {
  const int64_t start = pool_->stats().requested_bytes.current;
  {
    bool capturing = false;
    WorkspaceArena arena(*services_, [&] { return capturing; });
    ConvRunner runner(engine_, arena);
    ConvOperands o;
    runner.run(key_for(64, 32), o);
    capturing = true;
    runner.run(key_for(64, 32), o);
    capturing = false;
    runner.run(key_for(64, 33), o);  // 33 KiB asked: at least double, so retired blocks stay small
    EXPECT_EQ(arena.capacity(), size_t{64} << 10);
  }
  EXPECT_EQ(pool_->stats().requested_bytes.current, start);
}

TEST_F(ConvPlanTest, TheWorkspaceDoesNotGrowDuringACaptureAndTheCallFailsClearly) {
  bool capturing = false;
  WorkspaceArena arena(*services_, [&] { return capturing; });
  ConvRunner runner(engine_, arena);
  ConvOperands o;
  runner.run(key_for(64, 32), o);
  const int64_t held = pool_->stats().requested_bytes.current;
  capturing = true;
  try {
    runner.run(key_for(64, 64), o);  // would need 64 KiB, inside the graph's private memory
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnimplemented);
    EXPECT_NE(std::string(e.what()).find("captured into a CUDA graph"), std::string::npos) << e.what();
  }
  EXPECT_EQ(arena.capacity(), size_t{32} << 10);
  EXPECT_EQ(pool_->stats().requested_bytes.current, held);
  capturing = false;
  runner.run(key_for(64, 64), o);  // eagerly it grows as before
  EXPECT_EQ(arena.capacity(), size_t{64} << 10);
}

TEST(ConvPlanKey, EveryFieldTellsKeysApartAndTheKeyPrints) {
  const ConvPlanKey base = key_for(64, 32);
  std::vector<ConvPlanKey> variants(10, base);
  variants[0].device = 1;
  variants[1].dtype = DType::kFloat16;
  variants[2].direction = ConvDirection::kBackwardData;
  variants[3].x[1] = 30;
  variants[4].w[1] = 5;
  variants[5].y[2] = 24;
  variants[6].params.stride_w = 2;
  variants[7].params.dilation_h = 2;
  variants[8].params.pad_left = 1;
  variants[9].tensor_op_math = true;
  std::set<size_t> hashes = {base.hash()};
  for (const ConvPlanKey& v : variants) {
    EXPECT_FALSE(v == base) << v.to_string();
    hashes.insert(v.hash());
  }
  EXPECT_EQ(hashes.size(), variants.size() + 1);
  ConvPlanKey same = key_for(64, 32);
  EXPECT_TRUE(same == base);
  EXPECT_EQ(same.hash(), base.hash());
  EXPECT_EQ(base.to_string(),
            "GPU 0 conv2d forward float32 x[64,28,28,1] w[32,3,3,1] y[64,26,26,32] stride 1x1 "
            "dilation 1x1 pad 0,0,0,0 fma");
}

TEST_F(ConvPlanTest, ALaunchTheLibraryRefusesMovesThePlanToItsNextCandidateForGood) {
  engine_.refused_algorithm = 1;  // the forward's first pick
  engine_.candidates_left = 2;
  ConvOperands o;
  runner_->run(key_for(8, 32), o);
  EXPECT_EQ(engine_.refusals, 1);
  EXPECT_EQ(engine_.fallbacks_taken, 1);
  // It ran with the next candidate's (larger) workspace, from the same arena.
  ASSERT_EQ(engine_.launched_workspace_bytes.size(), 1u);
  EXPECT_EQ(engine_.launched_workspace_bytes[0], size_t{64} << 10);
  EXPECT_EQ(arena_->capacity(), size_t{64} << 10);
  // Later calls launch the new algorithm at once: no refusal, no new query, no new plan.
  for (int i = 0; i < 3; ++i) runner_->run(key_for(8, 32), o);
  EXPECT_EQ(engine_.refusals, 1);
  EXPECT_EQ(engine_.fallbacks_taken, 1);
  EXPECT_EQ(engine_.algorithm_queries, 1);
  EXPECT_EQ(runner_->plans().builds(), 1);
  EXPECT_EQ(engine_.launched_workspace_bytes.size(), 4u);
}

// PyTorch's Conv_v7.cpp moves on after an out-of-memory workspace; so does the runner, to a
// candidate needing less than the pool refused, for good.
TEST_F(ConvPlanTest, AWorkspaceThePoolCannotGiveMovesThePlanToACandidateNeedingLess) {
  const size_t huge = size_t{1} << 50;
  ConvPlanKey k = key_for(1, int64_t{1} << 40);  // the first candidate asks 2^50 bytes
  engine_.candidates_left = 2;
  engine_.smaller_workspace_bytes = 32 << 10;
  ConvOperands o;
  ASSERT_NO_THROW(runner_->run(k, o));
  EXPECT_EQ(engine_.workspace_bounds, (std::vector<size_t>{huge}));
  ASSERT_EQ(engine_.launched_workspace_bytes.size(), 1u);
  EXPECT_EQ(engine_.launched_workspace_bytes[0], size_t{32} << 10);
  EXPECT_EQ(arena_->capacity(), size_t{32} << 10);
  // For good: later calls launch the smaller candidate at once.
  runner_->run(k, o);
  EXPECT_EQ(engine_.workspace_bounds.size(), 1u);
  EXPECT_EQ(engine_.launched_workspace_bytes.size(), 2u);
  EXPECT_EQ(runner_->plans().builds(), 1);
}

TEST_F(ConvPlanTest, AfterThePoolRefusedAWorkspaceTheBoundHoldsThroughARefusedLaunch) {
  const size_t huge = size_t{1} << 50;
  engine_.refused_algorithm = 11;  // the candidate after the pool's refusal is refused at launch
  engine_.candidates_left = 2;
  engine_.smaller_workspace_bytes = 32 << 10;
  ConvOperands o;
  ASSERT_NO_THROW(runner_->run(key_for(1, int64_t{1} << 40), o));
  EXPECT_EQ(engine_.workspace_bounds, (std::vector<size_t>{huge, huge}));
  EXPECT_EQ(engine_.refusals, 1);
  ASSERT_EQ(engine_.launched_workspace_bytes.size(), 1u);
}

TEST_F(ConvPlanTest, WhenThePoolRefusesEveryCandidatesWorkspaceItsOwnErrorReachesTheCaller) {
  const size_t huge = size_t{1} << 50, still_too_large = size_t{1} << 49;
  engine_.candidates_left = 1;
  engine_.smaller_workspace_bytes = still_too_large;
  ConvOperands o;
  try {
    runner_->run(key_for(1, int64_t{1} << 40), o);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    // The pool's ResourceExhaustedError for the last workspace asked, not the engine's error.
    EXPECT_EQ(e.code(), ErrorCode::kResourceExhausted);
    EXPECT_NE(std::string(e.what()).find("conv2d workspace"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(still_too_large) + " bytes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(engine_.workspace_bounds, (std::vector<size_t>{huge, still_too_large}));
  EXPECT_EQ(engine_.executions, 0);
  EXPECT_EQ(arena_->capacity(), 0u);
}

TEST_F(ConvPlanTest, WhenNoCandidateIsLeftTheEnginesErrorReachesTheCaller) {
  engine_.refused_algorithm = 1;
  engine_.candidates_left = 0;
  ConvOperands o;
  EXPECT_THROW(runner_->run(key_for(8, 32), o), std::runtime_error);
  EXPECT_EQ(engine_.refusals, 1);
  EXPECT_EQ(engine_.workspace_bounds, (std::vector<size_t>{SIZE_MAX}));  // no pool refusal: no bound
  // Other problems are untouched by it.
  runner_->run(key_for(8, 32, ConvDirection::kBackwardData), o);
  EXPECT_EQ(engine_.launched_workspace_bytes.size(), 1u);
}

}  // namespace
}  // namespace gpuaccel
