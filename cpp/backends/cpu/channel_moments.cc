// channel_moments (channel_moments.h): one parallel region; each thread sums its share of the
// rows into double partials (shifted by the first row), the calling thread combines them.
#include "backends/cpu/channel_moments.h"

#include <omp.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backends/cpu/bf16_convert.h"
#include "backends/cpu/cpu_threads.h"
#include "core/errors.h"

namespace gpuaccel::cpu {

namespace {

// Row r of x as float32: x's own bytes for f32, else widened into `scratch` (C floats).
const float* row_as_f32(const TensorView& x, int64_t r, int64_t c, std::vector<float>& scratch) {
  if (x.dtype == DType::kFloat32) return static_cast<const float*>(x.data) + r * c;
  bf16_to_f32(static_cast<const BFloat16*>(x.data) + r * c, scratch.data(), c);
  return scratch.data();
}

}  // namespace

void channel_moments(const TensorView& x, const TensorView& mean, const TensorView& var) {
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kBFloat16) {
    throw_value_error("channel_moments", std::string("takes float32 or bfloat16 (f16 is staged "
                                                     "through f32), got ") + dtype_name(x.dtype));
  }
  const int64_t c = x.ndim == 0 ? 1 : x.shape[x.ndim - 1];
  const int64_t rows = c == 0 ? 0 : x.numel() / c;
  auto* mean_out = static_cast<float*>(mean.data);
  auto* var_out = static_cast<float*>(var.data);
  if (rows == 0) {
    std::fill(mean_out, mean_out + c, 0.f);
    std::fill(var_out, var_out + c, 0.f);
    return;
  }
  std::vector<float> first_scratch(static_cast<size_t>(c));
  const std::vector<float> shift(row_as_f32(x, 0, c, first_scratch),
                                 row_as_f32(x, 0, c, first_scratch) + c);

  const bool parallel = x.numel() >= kParallelMinElements && threads_for_this_thread() > 1;
  const int team = parallel ? threads_for_this_thread() : 1;
  // Per thread: C shifted sums, then C shifted sums of squares.
  std::vector<double> partials(static_cast<size_t>(team) * 2 * c, 0.0);
  run_on_team_if(parallel, [&] {
    const int t = omp_get_thread_num(), n_threads = omp_get_num_threads();
    double* sums = partials.data() + static_cast<size_t>(t) * 2 * c;
    double* squares = sums + c;
    std::vector<float> scratch(x.dtype == DType::kFloat32 ? 0 : static_cast<size_t>(c));
    const int64_t begin = rows * t / n_threads, end = rows * (t + 1) / n_threads;
    for (int64_t r = begin; r < end; ++r) {
      const float* row = row_as_f32(x, r, c, scratch);
      for (int64_t j = 0; j < c; ++j) {
        const double d = static_cast<double>(row[j]) - shift[j];
        sums[j] += d;
        squares[j] += d * d;
      }
    }
  });
  for (int64_t j = 0; j < c; ++j) {
    double sum = 0.0, square = 0.0;
    for (int t = 0; t < team; ++t) {
      sum += partials[static_cast<size_t>(t) * 2 * c + j];
      square += partials[static_cast<size_t>(t) * 2 * c + c + j];
    }
    const double shifted_mean = sum / static_cast<double>(rows);
    mean_out[j] = static_cast<float>(shift[j] + shifted_mean);
    var_out[j] = static_cast<float>(
        std::max(0.0, square / static_cast<double>(rows) - shifted_mean * shifted_mean));
  }
}

}  // namespace gpuaccel::cpu
