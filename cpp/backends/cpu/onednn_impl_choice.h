// Choosing among oneDNN's implementations of one primitive. oneDNN 3.x lists every
// implementation that accepts an operation, ordered by its own static preference, and uses the
// first; that first pick is not always the fastest (3.2 runs convolution backward-data as a
// brgconv forward pass on transposed weights, slower on the course CNN's layers than the direct
// jit kernel listed after it; docs/benchmarks.md, "oneDNN 2.6 (Debian) vs 3.2 (PyPI)"). So an
// op may, like cuDNN's find, time the candidates once on its first call for a shape and cache
// the winner with its primitive. Only the onednn_*.cc files include this header.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace gpuaccel::cpu::onednn {

// The most implementations one choice times (oneDNN lists a few per ISA level, best ISA first).
constexpr size_t kMaxImplCandidates = 6;

// oneDNN's reference kernels ("ref:any", ...): correct everywhere, orders of magnitude slower.
bool is_reference_impl(const char* impl_name);

// oneDNN's implementations of `pd`'s operation in oneDNN's order: always the first (oneDNN's
// own pick), then the others that are not reference kernels, at most kMaxImplCandidates. Each
// is a snapshot (a clone fixed to one implementation). Advances `pd` to its last implementation.
template <class Pd>
std::vector<Pd> implementation_candidates(Pd& pd) {
  std::vector<Pd> out{Pd(pd.get())};
  while (out.size() < kMaxImplCandidates && pd.next_impl()) {
    if (!is_reference_impl(pd.impl_info_str())) out.push_back(Pd(pd.get()));
  }
  return out;
}

// The implementation of `pd`'s operation named `impl_name` (its impl_info_str), or oneDNN's
// own first pick when none has that name. Advances `pd`.
template <class Pd>
Pd implementation_named(Pd& pd, const std::string& impl_name) {
  Pd first(pd.get());
  do {
    if (impl_name == pd.impl_info_str()) return Pd(pd.get());
  } while (pd.next_impl());
  return first;
}

// Index of the fastest of `runs` (each executes one candidate once, synchronously). Each
// candidate runs once, in order, until that first round has taken 0.2 s (the first two always
// run), and those tried run a second time; those within 1.25x of the best then run 1 to 9 more
// times, interleaved (as many as fit in 30 ms each), and each keeps its minimum. Candidate 0
// (oneDNN's own pick) stays unless another is at least 3% faster, so near-ties keep oneDNN's
// choice. Cost: a short op about 2 * candidates + 9 * contenders runs (tens of ms), a long one
// about 4 + contenders runs.
size_t fastest_candidate(const std::vector<std::function<void()>>& runs);

}  // namespace gpuaccel::cpu::onednn
