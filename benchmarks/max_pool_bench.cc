// Does compiling the direct max-pooling loops for the CPU's ISA pay, and how do they compare with
// oneDNN's own pooling? Times the course CNN's two 2x2 poolings (batch 64: 26x26x32 and
// 11x11x64 inputs) forward with the argmax workspace and backward, in float32 and bfloat16, on
// every path this CPU can run (backends/cpu/max_pool.h, forced with ScopedMaxPoolIsa), and the
// backward with relu's mask folded in (what Conv2D(relu) -> MaxPooling2D runs) against the
// pooling's backward followed by the element-wise relu backward it replaces; oneDNN's max
// pooling primitive (training forward with its workspace, and backward) runs as the peer. All
// interleaved round by round in one process; prints each median and its ratio to the baseline
// x86-64 path (the loops as the library compiled them before the dispatch) and, for the fold,
// the two-pass time over the folded one. Build and run: benchmarks/max_pool.sh [rounds]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "backends/cpu/elementwise.h"
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
        dz(x.size()),
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
  std::vector<unsigned char> x, dx, dz, y, dy;  // dz: relu's backward of dx (a new tensor)
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
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  std::printf("%-20s %-5s %-16s %-9s %10s %12s\n", "pooling", "dtype", "pass", "path", "us/call",
              "vs baseline");
  for (const Shape& s : shapes) {
    for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
      Buffers b(s, dtype);
      const int64_t oh = s.h / 2, ow = s.w / 2;
      const TensorView x = nhwc(b.x.data(), dtype, s.n, s.h, s.w, s.c);
      const TensorView y = nhwc(b.y.data(), dtype, s.n, oh, ow, s.c);
      const TensorView dy = nhwc(b.dy.data(), dtype, s.n, oh, ow, s.c);
      const TensorView dx = nhwc(b.dx.data(), dtype, s.n, s.h, s.w, s.c);
      const TensorView dz = nhwc(b.dz.data(), dtype, s.n, s.h, s.w, s.c);
      // oneDNN's max pooling on the same buffers (its own workspace).
      using dnnl::memory;
      const auto dt = dtype == DType::kFloat32 ? memory::data_type::f32 : memory::data_type::bf16;
      const memory::desc x_md({s.n, s.c, s.h, s.w}, dt, memory::format_tag::nhwc);
      const memory::desc y_md({s.n, s.c, oh, ow}, dt, memory::format_tag::nhwc);
      // oneDNN may lack a kernel for this dtype on this CPU (bf16 without AVX-512): then no peer.
      std::optional<dnnl::pooling_forward> onednn_fwd;
      std::optional<dnnl::pooling_backward> onednn_bwd;
      memory ws_mem;
      try {
        const dnnl::pooling_forward::primitive_desc fwd_pd(
            engine, dnnl::prop_kind::forward_training, dnnl::algorithm::pooling_max, x_md, y_md,
            {2, 2}, {2, 2}, {0, 0}, {0, 0}, {0, 0});
        const dnnl::pooling_backward::primitive_desc bwd_pd(engine, dnnl::algorithm::pooling_max,
                                                            x_md, y_md, {2, 2}, {2, 2}, {0, 0},
                                                            {0, 0}, {0, 0}, fwd_pd);
        onednn_fwd.emplace(fwd_pd);
        onednn_bwd.emplace(bwd_pd);
        ws_mem = memory(fwd_pd.workspace_desc(), engine);
      } catch (const dnnl::error& e) {
        std::printf("%-20s %-5s oneDNN pooling unavailable here: %s\n", s.name,
                    dtype == DType::kFloat32 ? "f32" : "bf16", e.what());
      }
      memory x_mem(x_md, engine, b.x.data()), y_mem(y_md, engine, b.y.data());
      memory dy_mem(y_md, engine, b.dy.data()), dx_mem(x_md, engine, b.dx.data());
      // samples[pass][path]; path -1 is oneDNN.
      std::map<std::string, std::map<int, std::vector<double>>> samples;
      auto timed = [&](int r, const char* pass, int path, auto&& call) {
        const auto t0 = Clock::now();
        for (int i = 0; i < calls; ++i) call();
        const auto t1 = Clock::now();
        if (r >= 0) {
          samples[pass][path].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() /
                                        calls);
        }
      };
      for (int r = -1; r < rounds; ++r) {  // round -1 warms up
        for (MaxPoolIsa isa : paths) {
          const gpuaccel::cpu::ScopedMaxPoolIsa forced(isa);
          const int path = static_cast<int>(isa);
          timed(r, "forward", path,
                [&] { gpuaccel::cpu::direct_max_pool_forward(x, p, y, b.ws.data()); });
          timed(r, "backward", path,
                [&] { gpuaccel::cpu::direct_max_pool_backward(dy, p, b.ws.data(), dx); });
          timed(r, "backward+relu", path, [&] {
            gpuaccel::cpu::direct_max_pool_backward_relu(dy, p, b.ws.data(), x, dx);
          });
          timed(r, "backward, relu", path, [&] {
            gpuaccel::cpu::direct_max_pool_backward(dy, p, b.ws.data(), dx);
            gpuaccel::cpu::unary_backward(gpuaccel::UnaryOp::kRelu, x, x, dx, dz);
          });
        }
        if (!onednn_fwd) continue;
        timed(r, "forward", -1, [&] {
          onednn_fwd->execute(stream, {{DNNL_ARG_SRC, x_mem}, {DNNL_ARG_DST, y_mem},
                                      {DNNL_ARG_WORKSPACE, ws_mem}});
          stream.wait();
        });
        timed(r, "backward", -1, [&] {
          onednn_bwd->execute(stream, {{DNNL_ARG_DIFF_DST, dy_mem}, {DNNL_ARG_DIFF_SRC, dx_mem},
                                      {DNNL_ARG_WORKSPACE, ws_mem}});
          stream.wait();
        });
      }
      const char* dtype_name = dtype == DType::kFloat32 ? "f32" : "bf16";
      for (const char* pass : {"forward", "backward", "backward+relu", "backward, relu"}) {
        const double base = median(samples[pass][static_cast<int>(MaxPoolIsa::kBaseline)]);
        for (MaxPoolIsa isa : paths) {
          const double t = median(samples[pass][static_cast<int>(isa)]);
          std::printf("%-20s %-5s %-16s %-9s %10.1f %11.2fx\n", s.name, dtype_name, pass,
                      gpuaccel::cpu::max_pool_isa_name(isa), t, base / t);
        }
        if (samples[pass].count(-1)) {
          const double t = median(samples[pass][-1]);
          std::printf("%-20s %-5s %-16s %-9s %10.1f %11.2fx\n", s.name, dtype_name, pass,
                      "oneDNN", t, base / t);
        }
      }
      for (MaxPoolIsa isa : paths) {
        const int path = static_cast<int>(isa);
        std::printf("%-20s %-5s relu folded: two passes / one = %.2fx (%s)\n", s.name, dtype_name,
                    median(samples["backward, relu"][path]) / median(samples["backward+relu"][path]),
                    gpuaccel::cpu::max_pool_isa_name(isa));
      }
    }
  }
  return 0;
}
