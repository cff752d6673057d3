// A Backend that passes every call to another one. Decorators (call counters in tests, the
// fake capture-capable backend of the step-capture tests) derive from it and override only the
// calls they watch, so no decorator repeats the whole interface.
#pragma once

#include "backends/backend.h"

namespace gpuaccel {

class ForwardingBackend : public Backend {
 public:
  // `inner` must outlive the decorator.
  explicit ForwardingBackend(Backend& inner) : inner_(inner) {}
  Backend& inner() const { return inner_; }
  const char* name() const override { return inner_.name(); }

  void unary(UnaryOp op, const TensorView& x, const TensorView& y) override {
    inner_.unary(op, x, y);
  }
  void unary_backward(UnaryOp op, const TensorView& x, const TensorView& y, const TensorView& dy,
                      const TensorView& dx) override {
    inner_.unary_backward(op, x, y, dy, dx);
  }
  void binary(BinaryOp op, const TensorView& a, const TensorView& b, const TensorView& out) override {
    inner_.binary(op, a, b, out);
  }
  void copy(const TensorView& src, const TensorView& dst) override { inner_.copy(src, dst); }
  void fill(const TensorView& dst, double value) override { inner_.fill(dst, value); }
  void arange(const TensorView& dst, double start, double step) override {
    inner_.arange(dst, start, step);
  }
  void random(RandomDistribution distribution, uint64_t seed, uint64_t offset,
              const TensorView& dst) override {
    inner_.random(distribution, seed, offset, dst);
  }
  void reduce(ReduceOp op, const TensorView& x, uint32_t axes_mask, const TensorView& out) override {
    inner_.reduce(op, x, axes_mask, out);
  }
  void dropout(const TensorView& x, double rate, uint64_t seed, uint64_t offset,
               const TensorView& y, const TensorView& mask) override {
    inner_.dropout(x, rate, seed, offset, y, mask);
  }
  void matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
              const TensorView& out) override {
    inner_.matmul(a, b, bias, out);
  }
  void conv2d_forward(const TensorView& x, const TensorView& w, const TensorView* bias,
                      const Conv2dParams& p, const TensorView& y) override {
    inner_.conv2d_forward(x, w, bias, p, y);
  }
  void conv2d_forward_activation(const TensorView& x, const TensorView& w, const TensorView* bias,
                                 const Conv2dParams& p, PostActivation activation,
                                 const TensorView& y) override {
    inner_.conv2d_forward_activation(x, w, bias, p, activation, y);
  }
  void matmul_activation(const TensorView& a, const TensorView& b, const TensorView* bias,
                         PostActivation activation, const TensorView& out) override {
    inner_.matmul_activation(a, b, bias, activation, out);
  }
  void conv2d_backward_data(const TensorView& dy, const TensorView& w, const Conv2dParams& p,
                            const TensorView& dx) override {
    inner_.conv2d_backward_data(dy, w, p, dx);
  }
  void conv2d_backward_weights(const TensorView& x, const TensorView& dy, const Conv2dParams& p,
                               const TensorView& dw, const TensorView* dbias) override {
    inner_.conv2d_backward_weights(x, dy, p, dw, dbias);
  }
  int64_t pool2d_workspace_bytes(const TensorView& x, const Pool2dParams& p,
                                 const TensorView& y) override {
    return inner_.pool2d_workspace_bytes(x, p, y);
  }
  void pool2d_forward(const TensorView& x, const Pool2dParams& p, const TensorView& y,
                      void* workspace) override {
    inner_.pool2d_forward(x, p, y, workspace);
  }
  void pool2d_backward(const TensorView& dy, const Pool2dParams& p, const void* workspace,
                       const TensorView& x, const TensorView& dx) override {
    inner_.pool2d_backward(dy, p, workspace, x, dx);
  }
  void pool2d_backward_activation(const TensorView& dy, const Pool2dParams& p,
                                  const void* workspace, const TensorView& x,
                                  PostActivation activation, const TensorView& dx) override {
    inner_.pool2d_backward_activation(dy, p, workspace, x, activation, dx);
  }
  void softmax_forward(const TensorView& x, bool log, const TensorView& y) override {
    inner_.softmax_forward(x, log, y);
  }
  void softmax_backward(const TensorView& y, const TensorView& dy, bool log,
                        const TensorView& dx) override {
    inner_.softmax_backward(y, dy, log, dx);
  }
  void batch_norm_forward(const TensorView& x, const TensorView& gamma, const TensorView& beta,
                          const TensorView& mean, const TensorView& var, double epsilon,
                          bool training, const TensorView& y) override {
    inner_.batch_norm_forward(x, gamma, beta, mean, var, epsilon, training, y);
  }
  void batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& gamma,
                           const TensorView& mean, const TensorView& var, double epsilon,
                           const TensorView& dx, const TensorView& dgamma,
                           const TensorView& dbeta) override {
    inner_.batch_norm_backward(x, dy, gamma, mean, var, epsilon, dx, dgamma, dbeta);
  }
  void layer_norm_forward(const TensorView& x, const TensorView& gamma, const TensorView& beta,
                          double epsilon, const TensorView& y, const TensorView& mean,
                          const TensorView& var) override {
    inner_.layer_norm_forward(x, gamma, beta, epsilon, y, mean, var);
  }
  void layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& gamma,
                           const TensorView& mean, const TensorView& var, double epsilon,
                           const TensorView& dx, const TensorView& dgamma,
                           const TensorView& dbeta) override {
    inner_.layer_norm_backward(x, dy, gamma, mean, var, epsilon, dx, dgamma, dbeta);
  }
  void optimizer_update(const OptimizerUpdate& u, const TensorView& param, const TensorView& grad,
                        const TensorView& slot0, const TensorView& slot1,
                        const TensorView& slot2) override {
    inner_.optimizer_update(u, param, grad, slot0, slot1, slot2);
  }
  void any_nonfinite(const std::vector<TensorView>& tensors, const TensorView& flag) override {
    inner_.any_nonfinite(tensors, flag);
  }
  void copy_from_host(const void* host, const TensorView& dst) override {
    inner_.copy_from_host(host, dst);
  }
  void copy_to_host(const TensorView& src, void* host) override { inner_.copy_to_host(src, host); }
  void synchronize() override { inner_.synchronize(); }

  EventHandle create_event() override { return inner_.create_event(); }
  void destroy_event(EventHandle event) override { inner_.destroy_event(event); }
  void record_event(EventHandle event, Stream stream) override { inner_.record_event(event, stream); }
  void stream_wait_event(Stream waiter, EventHandle event) override {
    inner_.stream_wait_event(waiter, event);
  }
  void host_wait_event(EventHandle event) override { inner_.host_wait_event(event); }
  bool event_completed(EventHandle event) override { return inner_.event_completed(event); }
  void copy_from_host_on(Stream stream, const void* host, const TensorView& dst) override {
    inner_.copy_from_host_on(stream, host, dst);
  }

  bool supports_graph_capture() const override { return inner_.supports_graph_capture(); }
  void begin_capture() override { inner_.begin_capture(); }
  GraphHandle end_capture() override { return inner_.end_capture(); }
  void replay(GraphHandle graph) override { inner_.replay(graph); }
  void destroy_graph(GraphHandle graph) override { inner_.destroy_graph(graph); }

 private:
  Backend& inner_;
};

}  // namespace gpuaccel
