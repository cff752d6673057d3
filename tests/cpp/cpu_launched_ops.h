// Every op of backends/backend_ops.def as the fake CUDA library runs it: launched through the
// derived backend's launch() -- counted, run now, or recorded while a graph is captured --
// and computed by another backend (the CPU backend of the core copy inside the fake). A recorded
// launch runs again at every replay, after the call that recorded it has returned, so it holds
// its own copies of the arguments (Kept below). The fake overrides only the ops it gives extra
// behaviour (faults, workspaces, the KRSC kernel layout); a new op needs nothing here.
#pragma once

#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "backends/backend.h"

namespace gpuaccel::fake_cuda {

// A parameter's value kept for a later launch: views, parameter structs and scalars by value; a
// pointer to an optional view (bias, dbias) as an optional copy of the view.
template <typename Parameter>
struct Kept {
  std::decay_t<Parameter> value;
  const std::decay_t<Parameter>& get() const { return value; }
};
template <>
struct Kept<const TensorView*> {
  std::optional<TensorView> value;
  explicit Kept(const TensorView* view) {
    if (view != nullptr) value = *view;
  }
  const TensorView* get() const { return value ? &*value : nullptr; }
};

// `Launcher` provides launch(const char* op, std::function-like body) for device work and
// query(const char* op, body) for answers computed at once.
template <typename Launcher>
class CpuLaunchedOps : public Backend {
 public:
  // `compute` outlives this backend.
  explicit CpuLaunchedOps(Backend& compute) : compute_(compute) {}

#define GPUACCEL_BACKEND_KERNEL(NAME, PARAMS, ARGS, TRACE) \
  void NAME PARAMS override { launch_kept(#NAME, &Backend::NAME, GPUACCEL_UNPARENTHESIZE ARGS); }
#define GPUACCEL_BACKEND_QUERY(TYPE, NAME, PARAMS, ARGS) \
  TYPE NAME PARAMS override {                            \
    return launcher().query(#NAME, [&] { return compute_.NAME ARGS; }); \
  }
// A composed op keeps Backend's composition over the launches above (one launch each, as the
// CUDA library's unfused ops).
#define GPUACCEL_BACKEND_COMPOSED(NAME, PARAMS, ARGS, TRACE)
#include "backends/backend_ops.def"

 protected:
  Backend& compute() { return compute_; }

 private:
  Launcher& launcher() { return static_cast<Launcher&>(*this); }
  template <typename... Parameters, typename... Arguments>
  void launch_kept(const char* op, void (Backend::*kernel)(Parameters...), Arguments&&... arguments) {
    std::tuple<Kept<Parameters>...> kept{Kept<Parameters>{std::forward<Arguments>(arguments)}...};
    Backend* compute = &compute_;
    launcher().launch(op, [compute, kernel, kept] {
      std::apply([&](const auto&... k) { (compute->*kernel)(k.get()...); }, kept);
    });
  }

  Backend& compute_;
};

}  // namespace gpuaccel::fake_cuda
