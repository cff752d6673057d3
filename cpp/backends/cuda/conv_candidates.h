// The order in which a convolution's algorithms are tried, and the walk down that order, apart
// from cuDNN so that the CPU tests check them (tests/cpp/cuda_conv_candidates_test.cc). cuDNN's
// legacy heuristic (cudnnGetConvolution*Algorithm_v7) reports every algorithm with a status and
// the math type it would run with; an algorithm it reports supported can still be refused by the
// workspace-size query or at launch (CUDNN_STATUS_NOT_SUPPORTED*), and a problem the heuristic
// serves badly (NHWC float32 with one input channel, the course CNN's first layer) must still
// find one that runs. So the candidates are: the heuristic's supported algorithms in its order
// (for float32, those it reports with FMA math first, since float32 always runs with FMA math:
// no TF32), then the direction's general fallbacks (implicit GEMM, and the ALGO_0/ALGO_1 kernels
// for the backward passes), each tried only once per math type. The caller walks the list with
// next_accepted(), asking the library about each, and goes on from where it stopped when a
// launch is refused, or with a smaller workspace when the pool could not give one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuaccel::cuda {

// One algorithm as the heuristic reported it (cuDNN's numbering).
struct ReportedConvAlgorithm {
  int algorithm = 0;
  bool supported = false;  // its status was CUDNN_STATUS_SUCCESS
  int math_type = 0;       // the math type the heuristic would run it with
};

// One algorithm to try, with the math type to set on the convolution descriptor.
struct ConvCandidate {
  int algorithm = 0;
  int math_type = 0;
  bool operator==(const ConvCandidate& o) const { return algorithm == o.algorithm && math_type == o.math_type; }
};

// `fma_only`: float32, always run with `fma_math` (the heuristic's math type is then only a
// preference: those it reports with FMA math first). Otherwise each runs with its reported math.
// `fallbacks` follow, already with their math types; duplicates are dropped.
inline std::vector<ConvCandidate> conv_candidates(const std::vector<ReportedConvAlgorithm>& reported,
                                                  bool fma_only, int fma_math,
                                                  const std::vector<ConvCandidate>& fallbacks) {
  std::vector<ConvCandidate> out;
  auto add = [&](ConvCandidate c) {
    for (const ConvCandidate& have : out) {
      if (have == c) return;
    }
    out.push_back(c);
  };
  for (int pass = 0; pass < (fma_only ? 2 : 1); ++pass) {
    for (const ReportedConvAlgorithm& r : reported) {
      if (!r.supported) continue;
      if (!fma_only) {
        add({r.algorithm, r.math_type});
      } else if ((pass == 0) == (r.math_type == fma_math)) {
        add({r.algorithm, fma_math});
      }
    }
  }
  for (const ConvCandidate& c : fallbacks) add(c);
  return out;
}

// No bound on a candidate's workspace.
constexpr size_t kAnyWorkspace = SIZE_MAX;

// From candidates[*next] on, the first one `accepts(candidate, &workspace_bytes)` takes whose
// workspace is below `workspace_below`; *next then points past it, so that a later call goes on
// with the rest. nullopt when none is left. `accepts` returns false for a candidate the library
// refuses (not supported) and throws for any other failure. After the device's pool could not
// give an algorithm's workspace, the walk goes on bounded by that size (PyTorch's Conv_v7.cpp
// likewise moves on after an out-of-memory workspace): a candidate needing as much or more would
// be refused by the pool again, and `too_large(candidate, bytes)` is told of each passed over.
template <typename Accepts, typename TooLarge>
std::optional<ConvCandidate> next_accepted(const std::vector<ConvCandidate>& candidates, size_t* next,
                                           Accepts&& accepts, size_t* workspace_bytes, size_t workspace_below,
                                           TooLarge&& too_large) {
  while (*next < candidates.size()) {
    const ConvCandidate c = candidates[(*next)++];
    size_t bytes = 0;
    if (!accepts(c, &bytes)) continue;
    if (workspace_below != kAnyWorkspace && bytes >= workspace_below) {
      too_large(c, bytes);
      continue;
    }
    *workspace_bytes = bytes;
    return c;
  }
  return std::nullopt;
}

template <typename Accepts>
std::optional<ConvCandidate> next_accepted(const std::vector<ConvCandidate>& candidates, size_t* next,
                                           Accepts&& accepts, size_t* workspace_bytes) {
  return next_accepted(candidates, next, accepts, workspace_bytes, kAnyWorkspace, [](const ConvCandidate&, size_t) {});
}

// "algorithm 1 (math 2), algorithm 0 (math 2)" for messages.
inline std::string describe_candidates(const std::vector<ConvCandidate>& candidates) {
  std::string out;
  for (const ConvCandidate& c : candidates) {
    out += (out.empty() ? "" : ", ") + std::string("algorithm ") + std::to_string(c.algorithm) + " (math " +
           std::to_string(c.math_type) + ")";
  }
  return out.empty() ? "none" : out;
}

}  // namespace gpuaccel::cuda
