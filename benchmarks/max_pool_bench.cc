// Does compiling the direct max-pooling loops for the CPU's ISA pay? Times the course CNN's two
// 2x2 poolings (batch 64: 26x26x32 and 11x11x64 inputs) forward with the argmax workspace and
// backward, in float32 and bfloat16, on every path this CPU can run (backends/cpu/max_pool.h,
// forced with ScopedMaxPoolIsa), interleaved round by round in one process, and prints each
// path's median and its ratio to the baseline x86-64 path (the loops as the library compiled
// them before the dispatch). Build and run: benchmarks/max_pool.sh [rounds]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "backends/cpu/max_pool.h"
#include "kernels/half_conversions.h"
#include "tensor/contiguous_view.h"

namespace {

using gpuaccel::BFloat16;
using gpuaccel::DType;
using gpuaccel::Pool2dParams;
using gpuaccel::TensorView;
using gpuaccel::contiguous_view;
using gpuaccel::cpu::MaxPoolIsa;
using Clock = std::chrono::steady_clock;

TensorView nhwc(void* data, DType dtype, int64_t n, int64_t h, int64_t w, int64_t c) {
  return contiguous_view(data, dtype, {n, h, w, c});
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Shape {
  const char* name;
  int64_t n, h, w, c;
};

// One pooling's buffers in one dtype (2-byte or 4-byte elements, contents irrelevant to speed
// except that they are finite and varied).
struct Buffers {
  Buffers(const Shape& s, DType dtype)
      : elem(dtype == DType::kFloat32 ? 4 : 2),
        x(static_cast<size_t>(s.n * s.h * s.w * s.c) * elem),
        dx(x.size()),
        y(static_cast<size_t>(s.n * (s.h / 2) * (s.w / 2) * s.c) * elem),
        dy(y.size()),
        ws(y.size() / elem) {
    for (size_t i = 0; i < x.size(); i += elem) {
      const float v = static_cast<float>((i * 2654435761u) % 1000) / 7.0f;
      if (elem == 4) {
        *reinterpret_cast<float*>(&x[i]) = v;
      } else {
        *reinterpret_cast<BFloat16*>(&x[i]) = BFloat16::from_float(v);
      }
    }
    std::copy(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(dy.size()), dy.begin());
  }
  size_t elem;
  std::vector<unsigned char> x, dx, y, dy;
  std::vector<uint8_t> ws;
};

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 30;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 20;  // per timed sample
  std::vector<MaxPoolIsa> paths;
  for (MaxPoolIsa isa : {MaxPoolIsa::kBaseline, MaxPoolIsa::kAvx2, MaxPoolIsa::kAvx512}) {
    if (gpuaccel::cpu::max_pool_isa_supported(isa)) paths.push_back(isa);
  }
  std::printf("max pooling paths on this CPU:");
  for (MaxPoolIsa isa : paths) std::printf(" %s", gpuaccel::cpu::max_pool_isa_name(isa));
  std::printf(" (default: %s); medians of %d rounds of %d calls, paths interleaved\n",
              gpuaccel::cpu::max_pool_isa_name(gpuaccel::cpu::max_pool_isa()), rounds, calls);

  const Shape shapes[] = {{"pool1 64x26x26x32", 64, 26, 26, 32}, {"pool2 64x11x11x64", 64, 11, 11, 64}};
  const Pool2dParams p;  // 2x2, stride 2, no padding (Keras's default)
  std::printf("%-20s %-5s %-9s %-9s %10s %20s\n", "pooling", "dtype", "pass", "path", "us/call",
              "speedup vs baseline");
  for (const Shape& s : shapes) {
    for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
      Buffers b(s, dtype);
      const int64_t oh = s.h / 2, ow = s.w / 2;
      const TensorView x = nhwc(b.x.data(), dtype, s.n, s.h, s.w, s.c);
      const TensorView y = nhwc(b.y.data(), dtype, s.n, oh, ow, s.c);
      const TensorView dy = nhwc(b.dy.data(), dtype, s.n, oh, ow, s.c);
      const TensorView dx = nhwc(b.dx.data(), dtype, s.n, s.h, s.w, s.c);
      // samples[pass][path]
      std::map<std::string, std::map<int, std::vector<double>>> samples;
      for (int r = -1; r < rounds; ++r) {  // round -1 warms up
        for (MaxPoolIsa isa : paths) {
          const gpuaccel::cpu::ScopedMaxPoolIsa forced(isa);
          auto t0 = Clock::now();
          for (int i = 0; i < calls; ++i) gpuaccel::cpu::direct_max_pool_forward(x, p, y, b.ws.data());
          auto t1 = Clock::now();
          for (int i = 0; i < calls; ++i) gpuaccel::cpu::direct_max_pool_backward(dy, p, b.ws.data(), dx);
          auto t2 = Clock::now();
          if (r < 0) continue;
          samples["forward"][static_cast<int>(isa)].push_back(
              std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
          samples["backward"][static_cast<int>(isa)].push_back(
              std::chrono::duration<double, std::micro>(t2 - t1).count() / calls);
        }
      }
      for (const char* pass : {"forward", "backward"}) {
        const double base = median(samples[pass][static_cast<int>(MaxPoolIsa::kBaseline)]);
        for (MaxPoolIsa isa : paths) {
          const double t = median(samples[pass][static_cast<int>(isa)]);
          std::printf("%-20s %-5s %-9s %-9s %10.1f %13.2fx\n", s.name,
                      dtype == DType::kFloat32 ? "f32" : "bf16", pass,
                      gpuaccel::cpu::max_pool_isa_name(isa), t, base / t);
        }
      }
    }
  }
  return 0;
}
