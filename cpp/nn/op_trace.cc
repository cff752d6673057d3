#include "nn/op_trace.h"

#include "core/errors.h"
#include "ops/autograd.h"

namespace gpuaccel::nn {

namespace {
thread_local OpTraceRecorder* current_recorder = nullptr;
}  // namespace

std::vector<Tensor> OpTrace::replay(const std::vector<Tensor>& inputs) const {
  if (int(inputs.size()) != num_inputs_) {
    throw_error(ErrorCode::kInvalidArgument, "Layer",
                "the traced call expects " + std::to_string(num_inputs_) + " input(s), got " +
                    std::to_string(inputs.size()));
  }
  std::vector<Tensor> values(static_cast<size_t>(num_values_));
  std::copy(inputs.begin(), inputs.end(), values.begin());
  for (const auto& [id, value] : constants_) values[size_t(id)] = value;
  std::vector<Tensor> args;
  for (const Op& op : ops_) {
    args.clear();
    for (int id : op.inputs) args.push_back(id < 0 ? Tensor() : values[size_t(id)]);
    std::vector<Tensor> results = op.fn(args);
    for (size_t i = 0; i < op.outputs.size() && i < results.size(); ++i) {
      values[size_t(op.outputs[i])] = std::move(results[i]);
    }
  }
  std::vector<Tensor> out;
  out.reserve(outputs_.size());
  for (int id : outputs_) out.push_back(values[size_t(id)]);
  return out;
}

OpTraceRecorder::OpTraceRecorder(const std::vector<Tensor>& inputs)
    : trace_(std::make_shared<OpTrace>()), previous_(current_recorder) {
  for (const Tensor& t : inputs) {
    const int id = trace_->num_values_++;
    if (t.defined()) ids_[t.impl()] = id;
    seen_.push_back(t);
  }
  trace_->num_inputs_ = int(inputs.size());
  current_recorder = this;
}

OpTraceRecorder::~OpTraceRecorder() {
  if (current_recorder == this) current_recorder = previous_;
}

bool OpTraceRecorder::active() { return current_recorder != nullptr; }

void OpTraceRecorder::break_with(const std::string& reason) {
  if (broken_.empty()) broken_ = reason;
}

int OpTraceRecorder::value_id(const Tensor& t) {
  const auto found = ids_.find(t.impl());
  if (found != ids_.end()) return found->second;
  // Not produced by the trace: a weight or a constant, read by reference when replayed. One
  // with a grad_fn was computed by an op outside the recording, from values that may be traced.
  if (t.impl()->grad_fn != nullptr) {
    break_with("call() used a tensor computed by '" + t.impl()->grad_fn->name() +
               "' outside the traced ops");
  }
  const int id = trace_->num_values_++;
  ids_[t.impl()] = id;
  seen_.push_back(t);
  trace_->constants_.emplace_back(id, t);
  return id;
}

void OpTraceRecorder::record(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                             ReplayFn fn) {
  OpTraceRecorder* self = current_recorder;
  if (self == nullptr || !self->broken_.empty()) return;
  OpTrace::Op op;
  op.fn = std::move(fn);
  for (const Tensor& t : inputs) {
    op.inputs.push_back(t.defined() ? self->value_id(t) : -1);  // an absent optional input
  }
  for (const Tensor& t : outputs) {
    const int id = self->trace_->num_values_++;
    self->ids_[t.impl()] = id;
    self->seen_.push_back(t);
    op.outputs.push_back(id);
  }
  self->trace_->ops_.push_back(std::move(op));
}

void OpTraceRecorder::note_host_read(const Tensor& t) {
  OpTraceRecorder* self = current_recorder;
  if (self == nullptr || !t.defined()) return;
  if (self->ids_.count(t.impl()) != 0 || t.impl()->grad_fn != nullptr) {
    self->break_with("call() reads a tensor's value on the host (numpy(), item(), bool(), "
                     "or Python control flow on a tensor)");
  }
}

void OpTraceRecorder::note_unreplayable(const std::string& what) {
  if (current_recorder != nullptr) current_recorder->break_with("call() " + what);
}

std::shared_ptr<OpTrace> OpTraceRecorder::finish(const std::vector<Tensor>& outputs) {
  if (current_recorder == this) current_recorder = previous_;
  if (!broken_.empty()) return nullptr;
  for (const Tensor& t : outputs) {
    if (!t.defined()) {
      break_with("call() returned an undefined tensor");
      return nullptr;
    }
    trace_->outputs_.push_back(value_id(t));
  }
  if (!broken_.empty()) return nullptr;
  seen_.clear();
  ids_.clear();
  return std::move(trace_);
}

OpTraceRecorder::Pause::Pause() : saved_(current_recorder) { current_recorder = nullptr; }
OpTraceRecorder::Pause::~Pause() { current_recorder = saved_; }

}  // namespace gpuaccel::nn
