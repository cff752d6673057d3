// Dispatch overhead of a tiny op from C++: gpuaccel::add on two 1-element float32 CPU tensors
// in a tight loop (issue 4's target: <= 300 ns per call), and a breakdown that isolates what a
// call pays for: the output (Tensor::empty = pool allocation + TensorImpl, freed again), the
// frontend's checks (defined, device, dtype, broadcast shape), the backend lookup and virtual
// call, the autograd check on inputs that need no grad, and the floor: the same
// cpu::binary kernel call on prebuilt TensorViews. Each figure is the best of several rounds
// (the minimum is the least noisy estimate on a shared machine).
// Usage: dispatch_bench [rounds (15)] [calls per round (200000)]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "backends/backend.h"
#include "backends/cpu/elementwise.h"
#include "core/device_registry.h"
#include "ops/autograd.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/op_utils.h"

using namespace gpuaccel;

namespace {

int g_rounds = 15;
long g_calls = 200000;

// Keeps a value alive as far as the optimizer can tell.
template <typename T>
inline void keep(T&& value) {
  asm volatile("" : : "g"(&value) : "memory");
}

// Best-of-rounds nanoseconds per call of `fn`.
template <typename F>
double best_ns(F&& fn) {
  for (long i = 0; i < g_calls / 10; ++i) fn();  // warm caches, pool and branch predictors
  double best = 1e30;
  for (int r = 0; r < g_rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < g_calls; ++i) fn();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / g_calls);
  }
  return best;
}

void row(const char* what, double ns) { std::printf("  %-58s %8.1f ns\n", what, ns); }

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) g_rounds = std::max(1, std::atoi(argv[1]));
  if (argc > 2) g_calls = std::max(1L, std::atol(argv[2]));

  const LogicalDevice device = DeviceRegistry::instance().logical_devices(DeviceType::kCPU).at(0);
  const Tensor a = ones({1}, DType::kFloat32, device);
  const Tensor b = ones({1}, DType::kFloat32, device);
  Tensor out = Tensor::empty({1}, DType::kFloat32, device);
  const TensorView av = a.view(), bv = b.view(), ov = out.view();
  const char* name = binary_op_name(BinaryOp::kAdd);

  std::printf("dispatch overhead, 1-element float32 add on %s (%d rounds x %ld calls, best round)\n",
              device.name().c_str(), g_rounds, g_calls);

  const double add_ns = best_ns([&] {
    Tensor c = add(a, b);
    keep(c);
  });
  const double empty_ns = best_ns([&] {
    Tensor c = Tensor::empty({1}, DType::kFloat32, device, name);
    keep(c);
  });
  const double checks_ns = best_ns([&] {
    check_defined(name, a, "x");
    check_defined(name, b, "y");
    common_device(name, a, b);
    DType dtype = common_dtype(name, a, b);
    Shape shape = a.shape() == b.shape() ? a.shape() : broadcast_shapes(a.shape(), b.shape(), name);
    TensorView x = broadcast_view(a, shape), y = broadcast_view(b, shape);
    keep(dtype);
    keep(x);
    keep(y);
  });
  const double backend_ns = best_ns([&] {
    backend_for_op(name, device).binary(BinaryOp::kAdd, av, bv, ov);
  });
  const double grad_check_ns = best_ns([&] {
    bool wanted = grad_mode_enabled() && (needs_grad(a) || needs_grad(b));
    keep(wanted);
  });
  // What every add paid before the frontend checked first: the closure and vectors built for
  // a record() call that then returns at once.
  const double record_ns = best_ns([&] {
    const Tensor x = a, y = b;
    record(name, {a, b}, {out}, [x, y](const std::vector<Tensor>& g) {
      return std::vector<Tensor>{g[0], g[0]};
    });
  });
  const double floor_ns = best_ns([&] {
    cpu::binary(BinaryOp::kAdd, av, bv, ov);
    keep(ov);
  });

  row("gpuaccel::add(a, b)", add_ns);
  std::printf(" breakdown (each measured alone):\n");
  row("Tensor::empty({1}) (pool alloc + TensorImpl, freed)", empty_ns);
  row("frontend checks + broadcast views", checks_ns);
  row("backend_for_op + Backend::binary (prebuilt views)", backend_ns);
  row("autograd check (grad mode, needs_grad(a), (b))", grad_check_ns);
  row("floor: cpu::binary on prebuilt views", floor_ns);
  row("sum of the parts (floor is inside the backend call)", empty_ns + checks_ns + backend_ns + grad_check_ns);
  row("(not on the add path) record() on inputs needing no grad", record_ns);
  std::printf("  add over floor: %.1f ns; target <= 300 ns per add: %s\n", add_ns - floor_ns,
              add_ns <= 300.0 ? "met" : "NOT met");
  std::printf("  (result check: %g)\n", double(static_cast<float*>(add(a, b).data())[0]));
  return 0;
}
