// Timing oneDNN implementation candidates against each other (onednn_impl_choice.h).
#include "backends/cpu/onednn_impl_choice.h"

#include "core/errors.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace gpuaccel::cpu::onednn {
namespace {

constexpr double kContenderRatio = 1.25;  // this much slower than the best after two runs: dropped
// Further runs of each contender: as many as fit in kContenderSeconds, between the two bounds.
// A short op is disturbed most by a busy machine (one descheduling is a large share of it) and
// costs least to repeat; a long one gets the minimum.
constexpr double kContenderSeconds = 0.03;
constexpr int kMinContenderRounds = 1;
constexpr int kMaxContenderRounds = 9;
constexpr double kSwitchRatio = 0.97;  // another candidate must beat oneDNN's pick by 3%
// A long op tries fewer candidates: past the first two, none is started once the first round
// has taken this long (oneDNN lists its best ISA first, so the ones left out are the lower-ISA
// kernels; a big layer's first call then costs a few of its runs, not a dozen).
constexpr double kFirstRoundSeconds = 0.2;

double seconds_of(const std::function<void()>& run) {
  const auto t0 = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

bool is_reference_impl(const char* impl_name) { return std::strncmp(impl_name, "ref", 3) == 0; }

std::string& ImplSetting::slot() const {
  if (value_ == nullptr) {
    const char* v = std::getenv(env_var_);
    value_ = std::make_unique<std::string>(v == nullptr || *v == '\0' ? kMeasureImpls : v);
  }
  return *value_;
}

std::string ImplSetting::get() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return slot();
}

void ImplSetting::set(const std::string& setting) {
  if (setting.empty()) {
    throw_error(ErrorCode::kInvalidArgument, op_,
                "implementation setting must be 'measure', 'default' or a oneDNN "
                "implementation name such as 'jit:avx512_core', got ''");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  slot() = setting;
}

std::mutex& measurement_mutex() {
  static std::mutex m;
  return m;
}

size_t fastest_candidate(const std::vector<std::function<void()>>& runs) {
  if (runs.size() <= 1) return 0;
  std::vector<double> best(runs.size(), std::numeric_limits<double>::infinity());
  double spent = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (i >= 2 && spent > kFirstRoundSeconds) break;
    best[i] = seconds_of(runs[i]);
    spent += best[i];
  }
  // One sample is not enough to drop a candidate (a run that lost the CPU for a scheduler
  // slice reads several times too long): every candidate tried runs twice.
  for (size_t i = 0; i < runs.size(); ++i) {
    if (best[i] < std::numeric_limits<double>::infinity()) {
      best[i] = std::min(best[i], seconds_of(runs[i]));
    }
  }
  const double first_round_best = *std::min_element(best.begin(), best.end());
  const int rounds = std::clamp(static_cast<int>(kContenderSeconds / first_round_best),
                               kMinContenderRounds, kMaxContenderRounds);
  for (int round = 0; round < rounds; ++round) {
    for (size_t i = 0; i < runs.size(); ++i) {
      if (best[i] > kContenderRatio * first_round_best) continue;
      best[i] = std::min(best[i], seconds_of(runs[i]));
    }
  }
  size_t fastest = 0;
  for (size_t i = 1; i < runs.size(); ++i) {
    if (best[i] < best[fastest]) fastest = i;
  }
  return best[fastest] < kSwitchRatio * best[0] ? fastest : 0;
}

}  // namespace gpuaccel::cpu::onednn
