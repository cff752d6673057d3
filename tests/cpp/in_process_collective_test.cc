// The in-process engine (distribute/in_process_collective.h): sums across ranks run on their own
// threads equal NumPy-style sums taken in rank order (so bit-identical on every rank and run),
// broadcast copies the root's values, mismatched tensor lists and bad dtypes are typed errors,
// and a rank that never arrives or aborts makes the others raise PeerUnavailableError instead
// of hanging. Also the thread team each replica thread runs ops with.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/thread_config.h"
#include "distribute/in_process_collective.h"
#include "distribute/replica_threads.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

using distribute::Collective;
using distribute::PeerUnavailableError;
using test::make;
using test::read;

constexpr std::chrono::milliseconds kLong{10000};

// Runs body(rank) on one thread per rank and joins them; rethrows nothing (bodies record).
void on_threads(int world, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) threads.emplace_back(body, r);
  for (std::thread& t : threads) t.join();
}

TEST(InProcessCollective, AllReduceSumsInRankOrderOnEveryRank) {
  constexpr int kWorld = 3;
  auto group = distribute::make_in_process_group(kWorld, kLong);
  // Values chosen so float32 addition order matters: 1e8 + 1 - 1e8 is 0 in rank order.
  const std::vector<std::vector<float>> first = {{1e8f, 1, 2, 3, 4}, {1, 10, 20, 30, 40}, {-1e8f, 100, 200, 300, 400}};
  std::vector<std::vector<Tensor>> tensors(kWorld);
  for (int r = 0; r < kWorld; ++r) {
    tensors[r] = {make(first[r], {5}), make({float(r), float(r) * 2}, {2, 1})};
  }
  on_threads(kWorld, [&](int r) {
    EXPECT_EQ(group[r]->rank(), r);
    EXPECT_EQ(group[r]->world_size(), kWorld);
    EXPECT_EQ(group[r]->engine(), "in_process");
    group[r]->all_reduce_sum(tensors[r]);
  });
  const float in_rank_order = (1e8f + 1.0f) + -1e8f;
  for (int r = 0; r < kWorld; ++r) {
    const std::vector<float> a = read(tensors[r][0]);
    EXPECT_EQ(a[0], in_rank_order) << "rank " << r;
    EXPECT_FLOAT_EQ(a[1], 111);
    EXPECT_FLOAT_EQ(a[4], 444);
    const std::vector<float> b = read(tensors[r][1]);
    EXPECT_FLOAT_EQ(b[0], 0 + 1 + 2);
    EXPECT_FLOAT_EQ(b[1], 0 + 2 + 4);
  }
}

TEST(InProcessCollective, RepeatedReductionsReuseTheGroup) {
  auto group = distribute::make_in_process_group(2, kLong);
  std::vector<Tensor> a = {make({1}, {1})}, b = {make({2}, {1})};
  on_threads(2, [&](int r) {
    for (int i = 0; i < 50; ++i) group[r]->all_reduce_sum(r == 0 ? a : b);
  });
  // Each round doubles-and-adds: after round i both hold 3 * 2^(i-1).
  EXPECT_FLOAT_EQ(read(a[0])[0], 3.0f * float(1ull << 49));
  EXPECT_FLOAT_EQ(read(b[0])[0], read(a[0])[0]);
}

TEST(InProcessCollective, BroadcastCopiesTheRootsValues) {
  auto group = distribute::make_in_process_group(3, kLong);
  std::vector<std::vector<Tensor>> tensors = {{make({1, 2}, {2})}, {make({3, 4}, {2})}, {make({5, 6}, {2})}};
  on_threads(3, [&](int r) { group[r]->broadcast(tensors[r], 1); });
  for (int r = 0; r < 3; ++r) EXPECT_EQ(read(tensors[r][0]), (std::vector<float>{3, 4}));
  test::expect_error(ErrorCode::kInvalidArgument, "root 7", [&] { group[0]->broadcast(tensors[0], 7); });
}

TEST(InProcessCollective, MismatchedShapesAreAnErrorOnEveryRank) {
  auto group = distribute::make_in_process_group(2, kLong);
  std::vector<Tensor> a = {make({1, 2}, {2})}, b = {make({1, 2, 3}, {3})};
  std::vector<std::string> errors(2);
  on_threads(2, [&](int r) {
    try {
      group[r]->all_reduce_sum(r == 0 ? a : b);
    } catch (const std::exception& e) {
      errors[r] = e.what();
    }
  });
  for (const std::string& e : errors) EXPECT_NE(e.find("different tensor lists"), std::string::npos) << e;
}

TEST(InProcessCollective, NonFloat32IsATypedError) {
  auto group = distribute::make_in_process_group(1, kLong);
  const std::vector<int64_t> ids = {1, 2};
  const Tensor t = from_host(ids.data(), {2}, DType::kInt64, LogicalDevice{});
  test::expect_error(ErrorCode::kInvalidArgument, "float32", [&] { group[0]->all_reduce_sum({t}); });
  test::expect_error(ErrorCode::kInvalidArgument, "world_size", [] {
    distribute::make_in_process_group(0, kLong);
  });
}

TEST(InProcessCollective, ARankThatNeverArrivesTimesOutWithAClearError) {
  auto group = distribute::make_in_process_group(2, std::chrono::milliseconds(200));
  std::vector<Tensor> a = {make({1}, {1})};
  const auto start = std::chrono::steady_clock::now();
  try {
    group[0]->all_reduce_sum(a);
    FAIL() << "expected PeerUnavailableError";
  } catch (const PeerUnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("200 ms"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("never arrived"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // The group stays broken: the late rank learns at once instead of waiting again.
  EXPECT_THROW(group[1]->all_reduce_sum(a), PeerUnavailableError);
}

TEST(InProcessCollective, AbortWakesTheWaitingRanks) {
  auto group = distribute::make_in_process_group(2, kLong);
  std::vector<Tensor> a = {make({1}, {1})};
  std::string error;
  std::thread waiter([&] {
    try {
      group[0]->all_reduce_sum(a);
    } catch (const PeerUnavailableError& e) {
      error = e.what();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  distribute::abort_in_process_group(*group[1], "replica 1 failed: boom");
  waiter.join();
  EXPECT_EQ(error, "replica 1 failed: boom");
}

TEST(ReplicaThreads, RunsEveryRankAndRethrowsTheLowestRanksError) {
  distribute::ReplicaThreads threads(3);
  std::vector<int> seen(3, 0);
  for (int round = 0; round < 5; ++round) threads.run([&](int r) { seen[r] += 1; });
  EXPECT_EQ(seen, (std::vector<int>{5, 5, 5}));
  try {
    threads.run([](int r) {
      if (r >= 1) throw std::runtime_error("rank " + std::to_string(r));
    });
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "rank 1");
  }
  threads.run([&](int r) { seen[r] += 1; });  // still usable after an error
  EXPECT_EQ(seen, (std::vector<int>{6, 6, 6}));
}

TEST(ThreadTeamOverride, AppliesToItsThreadOnly) {
  const int global = thread_config::intra_op_threads();
  {
    thread_config::ThreadTeamOverride team(1);
    EXPECT_EQ(thread_config::intra_op_threads(), 1);
    int other = -1;
    std::thread([&] { other = thread_config::intra_op_threads(); }).join();
    EXPECT_EQ(other, global);
  }
  EXPECT_EQ(thread_config::intra_op_threads(), global);
}

}  // namespace
}  // namespace gpuaccel
