#include "nn/traced_function.h"

#include "core/errors.h"

namespace gpuaccel::nn {

TracedFunction::TracedFunction(PythonFn python_fn, Warn warn)
    : python_fn_(std::move(python_fn)), warn_(std::move(warn)) {}

std::string TracedFunction::eager_reason() const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [signature, entry] : traces_) {
    if (!entry.trace) return entry.eager_reason;
  }
  return "";
}

size_t TracedFunction::traced_signatures() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t count = 0;
  for (const auto& [signature, entry] : traces_) count += entry.trace ? 1 : 0;
  return count;
}

std::vector<Tensor> TracedFunction::run_python(const std::vector<Tensor>& inputs, bool flag) {
  ++python_calls_;
  std::vector<Tensor> results = python_fn_(inputs, flag);
  if (results.empty() || !results[0].defined()) {
    throw_error(ErrorCode::kInvalidArgument, "call", "the Python function must return a tensor");
  }
  return results;
}

std::vector<Tensor> TracedFunction::operator()(const std::vector<Tensor>& inputs, bool flag) {
  Signature signature{{}, {}, flag};
  for (const Tensor& x : inputs) {
    signature.shapes.push_back(x.shape());
    signature.dtypes.push_back(int(x.dtype()));
  }
  std::shared_ptr<OpTrace> trace;
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = traces_.find(signature);
    if (found != traces_.end()) {
      known = true;
      trace = found->second.trace;
    }
  }
  if (trace) return trace->replay(inputs);
  if (known) return run_python(inputs, flag);  // the eager fallback
  OpTraceRecorder recorder(inputs);
  std::vector<Tensor> results = run_python(inputs, flag);
  trace = recorder.finish(results);
  const std::string reason = trace ? "" : recorder.broken_reason();
  bool warn = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    traces_[signature] = Entry{trace, reason};
    if (!trace && !warned_) warn = warned_ = true;
  }
  if (warn && warn_) warn_(reason);
  return results;
}

}  // namespace gpuaccel::nn
