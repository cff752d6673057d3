// Choosing among oneDNN's implementations of one primitive. oneDNN 3.x lists every
// implementation that accepts an operation, ordered by its own static preference, and uses the
// first; that first pick is not always the fastest (3.2 runs convolution backward-data as a
// brgconv forward pass on transposed weights, slower on the course CNN's layers than the direct
// jit kernel listed after it; its backward-weights kernels split small layers over 2 threads
// so badly that one thread is faster; docs/benchmarks.md, "oneDNN 2.6 (Debian) vs 3.2 (PyPI)").
// So an op may, like cuDNN's find, time the candidates once on its first call for a shape and
// cache the winner with its primitive. Only the onednn_*.cc files include this header.
//
// Thread count as a candidate: oneDNN (3.x, OpenMP runtime) fixes a kernel's thread split when
// its primitive descriptor is created (jit/brgemm convolutions store dnnl_get_max_threads(),
// i.e. omp_get_max_threads(), in their configuration and size their reduction scratchpad from
// it), and its primitive cache key includes the thread count at primitive creation. A
// descriptor and primitive made while the calling thread's OpenMP count is 1 therefore run on
// one thread and are cached apart from the full-count ones; omp_set_num_threads changes only the
// calling thread's count, and ScopedOmpThreads restores it, so nothing leaks to other ops.
#pragma once

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_threads.h"  // ScopedOmpThreads

namespace gpuaccel::cpu::onednn {

// The most implementations one listing holds (oneDNN lists a few per ISA level, best ISA first).
constexpr size_t kMaxImplCandidates = 6;

// Settings of an implementation choice (ImplSetting).
constexpr const char* kMeasureImpls = "measure";
constexpr const char* kDefaultImpl = "default";
// Appended to an implementation's name for its one-thread variant ("jit:avx512_core@1thread").
constexpr const char* kOneThreadSuffix = "@1thread";

// oneDNN's reference kernels ("ref:any", ...): correct everywhere, orders of magnitude slower.
bool is_reference_impl(const char* impl_name);

// How one op picks its implementation: "measure" (time the candidates on a shape's first call
// and keep the fastest), "default" (oneDNN's own first pick, the same on every run) or an
// implementation name as ONEDNN_VERBOSE prints it (plus kOneThreadSuffix where the op offers
// one-thread variants), forced where it applies, oneDNN's pick elsewhere. Initially the value of
// the environment variable `env_var` when set and not empty (read on first use), else "measure".
class ImplSetting {
 public:
  ImplSetting(const char* env_var, const char* op) : env_var_(env_var), op_(op) {}
  std::string get() const;
  // Throws InvalidArgument (prefixed with the op's name) for an empty setting.
  void set(const std::string& setting);

 private:
  std::string& slot() const;  // guarded by mutex_

  const char* env_var_;
  const char* op_;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<std::string> value_;
};

// oneDNN's implementations of `pd`'s operation in oneDNN's order: always the first (oneDNN's
// own pick), then the others that are not reference kernels, at most kMaxImplCandidates. Each
// is a snapshot (a clone fixed to one implementation). A name oneDNN lists again is left out:
// 3.2 lists its convolution kernels twice (once in its channels-last group, once in its blocked
// group; for the same operands the second is the same kernel), and a setting can only name the
// first. Advances `pd` to its last implementation.
template <class Pd>
std::vector<Pd> implementation_candidates(Pd& pd) {
  std::vector<Pd> out{Pd(pd.get())};
  const auto listed = [&out](const char* name) {
    return std::any_of(out.begin(), out.end(),
                       [name](const Pd& c) { return std::string(name) == c.impl_info_str(); });
  };
  while (out.size() < kMaxImplCandidates && pd.next_impl()) {
    if (!is_reference_impl(pd.impl_info_str()) && !listed(pd.impl_info_str())) {
      out.push_back(Pd(pd.get()));
    }
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

// The one place where candidates are timed: one measurement at a time in the process.
// Replicas of a data-parallel step reach a new shape together, and candidates timed side by
// side share the cores, which skews the choice. (The heap corruption once blamed on concurrent
// measurements was oneDNN's own primitive cache, now off: onednn_context.h, engine().)
std::mutex& measurement_mutex();

// An implementation and the OpenMP thread count its descriptor was created for and its
// primitive must be created and run with (0: the caller's count). `descs` keeps what the
// descriptor was made with (its forward hint) alive until the primitive has been created.
template <class Pd>
struct ImplChoice {
  Pd pd;
  int threads = 0;
  std::shared_ptr<const void> descs;
  std::string name() const {
    return std::string(pd.impl_info_str()) + (threads == 1 ? kOneThreadSuffix : "");
  }
};

// The candidates "measure" times: oneDNN's listing (implementation_candidates) and, when
// `one_thread_variants` and the caller has more than one OpenMP thread, the same listing made
// on one thread, interleaved after each full-count candidate (so the one-thread variant of
// oneDNN's pick is always among the first two tried). `make_descs()` returns a holder whose
// `pd` member is the operation's descriptor at oneDNN's first pick (with whatever, such as a
// forward hint, must outlive the iteration); it is called under the candidate's thread count.
template <class MakeDescs, class Holder = decltype(std::declval<MakeDescs>()()),
          class Pd = decltype(std::declval<Holder>().pd)>
std::vector<ImplChoice<Pd>> implementation_choices(const MakeDescs& make_descs,
                                                   bool one_thread_variants) {
  auto full = std::make_shared<Holder>(make_descs());
  const std::vector<Pd> all = implementation_candidates(full->pd);
  std::vector<Pd> single;
  std::shared_ptr<Holder> made;
  if (one_thread_variants && omp_get_max_threads() > 1) {
    ScopedOmpThreads one(1);
    made = std::make_shared<Holder>(make_descs());
    single = implementation_candidates(made->pd);
  }
  std::vector<ImplChoice<Pd>> out;
  for (size_t i = 0; i < std::max(all.size(), single.size()); ++i) {
    if (i < all.size()) out.push_back({all[i], 0, full});
    if (i < single.size()) out.push_back({single[i], 1, made});
  }
  return out;
}

// The implementation `setting` (an ImplSetting's value) selects. "measure" times the
// implementation_choices with fastest_candidate under measurement_mutex(): make_trial(choice),
// called under the choice's thread count, creates what one run needs (primitive, buffers) and
// returns the function that runs it once, synchronously, writing the kind of output the real
// call writes (and only buffers the real call overwrites afterwards). A candidate whose primitive
// oneDNN cannot create is skipped (oneDNN's own pick must be creatable).
template <class MakeDescs, class MakeTrial,
          class Holder = decltype(std::declval<MakeDescs>()()),
          class Pd = decltype(std::declval<Holder>().pd)>
ImplChoice<Pd> choose_implementation(const std::string& setting, bool one_thread_variants,
                                     const MakeDescs& make_descs, const MakeTrial& make_trial) {
  if (setting == kDefaultImpl) {
    auto made = std::make_shared<Holder>(make_descs());
    return {made->pd, 0, made};
  }
  if (setting != kMeasureImpls) {
    std::string name = setting;
    int threads = 0;
    const std::string suffix = kOneThreadSuffix;
    if (one_thread_variants && name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      name.resize(name.size() - suffix.size());
      threads = 1;
    }
    ScopedOmpThreads scope(threads);
    auto made = std::make_shared<Holder>(make_descs());
    return {implementation_named(made->pd, name), threads, made};
  }
  std::lock_guard<std::mutex> one_at_a_time(measurement_mutex());
  const std::vector<ImplChoice<Pd>> choices =
      implementation_choices(make_descs, one_thread_variants);
  if (choices.size() == 1) return choices[0];
  std::vector<std::function<void()>> runs;
  std::vector<size_t> timed;  // choices[timed[k]] is what runs[k] executes
  for (size_t i = 0; i < choices.size(); ++i) {
    std::function<void()> run;  // make_trial's result
    try {
      ScopedOmpThreads scope(choices[i].threads);
      run = make_trial(choices[i]);
    } catch (const dnnl::error&) {
      if (i == 0) throw;  // oneDNN's own pick is what the call needs; an alternative is optional
      continue;
    }
    timed.push_back(i);
    const int threads = choices[i].threads;
    runs.push_back([run = std::move(run), threads] {
      ScopedOmpThreads scope(threads);
      run();
    });
  }
  return choices[timed[fastest_candidate(runs)]];
}

}  // namespace gpuaccel::cpu::onednn
