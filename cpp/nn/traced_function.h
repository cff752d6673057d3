// A Python function run once per input signature and replayed in C++ afterwards (as
// tf.function traces): the first call of a signature (input shapes, dtypes, one flag such as
// `training`) runs Python under an OpTraceRecorder (nn/op_trace.h); later calls replay the
// recorded ops without Python. A call the recorder cannot replay makes that signature run
// Python every time, and `warn` is told the reason once. Python layers (nn/traced_layer.h)
// and Python losses (nn/losses.h) run through this.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "nn/op_trace.h"
#include "tensor/tensor.h"

namespace gpuaccel::nn {

class TracedFunction {
 public:
  // The Python function: its outputs for these inputs (at least one).
  using PythonFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&, bool flag)>;
  // Told once, the first time a signature cannot be traced, with the reason.
  using Warn = std::function<void(const std::string& reason)>;

  TracedFunction(PythonFn python_fn, Warn warn);
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs, bool flag);

  // How many times Python ran, the signatures traced, and the reason of the last signature that
  // could not be ("" when none): for tests and benchmarks.
  int64_t python_calls() const { return python_calls_; }
  size_t traced_signatures() const;
  std::string eager_reason() const;

 private:
  struct Signature {
    std::vector<Shape> shapes;
    std::vector<int> dtypes;
    bool flag;
    bool operator<(const Signature& other) const {
      return std::tie(shapes, dtypes, flag) < std::tie(other.shapes, other.dtypes, other.flag);
    }
  };
  struct Entry {
    std::shared_ptr<OpTrace> trace;  // null: this signature runs Python every time
    std::string eager_reason;
  };
  std::vector<Tensor> run_python(const std::vector<Tensor>& inputs, bool flag);

  PythonFn python_fn_;
  Warn warn_;
  mutable std::mutex mutex_;
  std::map<Signature, Entry> traces_;
  bool warned_ = false;
  std::atomic<int64_t> python_calls_{0};
};

using TracedFunctionPtr = std::shared_ptr<TracedFunction>;

}  // namespace gpuaccel::nn
