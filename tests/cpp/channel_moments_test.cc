// channel_moments (backends/cpu/channel_moments.h), the batch statistics of batch normalization's
// CPU training pass, against a two-pass double loop: f32 and bf16, one thread and the team,
// a mean far above the spread, no rows.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "backends/cpu/channel_moments.h"
#include "backends/cpu/cpu_threads.h"
#include "kernels/half_conversions.h"
#include "test_helpers.h"

namespace gpuaccel::cpu {
namespace {

TensorView view_of(void* data, DType dtype, const std::vector<int64_t>& shape) {
  return test::contiguous_view(data, shape, dtype);
}

// Two-pass reference in double: mean, then the mean squared deviation (biased).
void reference(const std::vector<float>& x, int64_t rows, int64_t c, std::vector<double>& mean,
               std::vector<double>& var) {
  mean.assign(c, 0.0);
  var.assign(c, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < c; ++j) mean[j] += x[r * c + j];
  for (auto& m : mean) m /= static_cast<double>(rows);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < c; ++j) var[j] += std::pow(x[r * c + j] - mean[j], 2);
  for (auto& v : var) v /= static_cast<double>(rows);
}

void expect_moments(const std::vector<float>& x, DType dtype, int64_t rows, int64_t c,
                    int threads) {
  std::vector<BFloat16> x16;
  void* data = const_cast<float*>(x.data());
  if (dtype == DType::kBFloat16) {
    for (float v : x) x16.push_back(BFloat16::from_float(v));
    data = x16.data();
  }
  // The reference reads the values the kernel reads (bf16-rounded where the input is bf16).
  std::vector<float> seen(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    seen[i] = dtype == DType::kBFloat16 ? bfloat16_bits_to_float(x16[i].bits) : x[i];
  std::vector<double> ref_mean, ref_var;
  reference(seen, rows, c, ref_mean, ref_var);

  std::vector<float> mean(c, -1.f), var(c, -1.f);
  {
    ScopedOmpThreads scope(threads);
    channel_moments(view_of(data, dtype, {rows / 4, 4, c}), view_of(mean.data(), DType::kFloat32, {c}),
                    view_of(var.data(), DType::kFloat32, {c}));
  }
  for (int64_t j = 0; j < c; ++j) {
    EXPECT_NEAR(mean[j], ref_mean[j], 1e-6 * std::fabs(ref_mean[j]) + 1e-6) << "channel " << j;
    EXPECT_NEAR(var[j], ref_var[j], 1e-5 * ref_var[j] + 1e-9) << "channel " << j;
  }
}

std::vector<float> draws(int64_t n, float offset, float spread, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(offset, spread);
  std::vector<float> x(n);
  for (auto& v : x) v = normal(gen);
  return x;
}

TEST(ChannelMoments, MatchTwoPassDoubleOnOneThreadAndOnTheTeam) {
  const int64_t rows = 8192, c = 8;  // 64 K elements: the team's threshold
  const auto x = draws(rows * c, 0.5f, 2.f, 1);
  for (int threads : {1, 2}) {
    expect_moments(x, DType::kFloat32, rows, c, threads);
    expect_moments(x, DType::kBFloat16, rows, c, threads);
  }
}

TEST(ChannelMoments, MeanFarAboveTheSpreadKeepsTheVariance) {
  const int64_t rows = 4096, c = 3;
  // Mean 1e4, spread 1e-2: var 1e-4 against E[x^2] = 1e8 (twelve orders apart).
  expect_moments(draws(rows * c, 1e4f, 1e-2f, 2), DType::kFloat32, rows, c, 2);
}

TEST(ChannelMoments, NoRowsGivesZeros) {
  std::vector<float> mean(5, -1.f), var(5, -1.f);
  float unused = 0.f;
  channel_moments(view_of(&unused, DType::kFloat32, {0, 5}), view_of(mean.data(), DType::kFloat32, {5}),
                  view_of(var.data(), DType::kFloat32, {5}));
  for (int j = 0; j < 5; ++j) {
    EXPECT_EQ(mean[j], 0.f);
    EXPECT_EQ(var[j], 0.f);
  }
}

}  // namespace
}  // namespace gpuaccel::cpu
