// The Keras layer in C++: configuration fixed at construction, weights created by build() once
// the input shapes are known, and call() composed of op frontends (cpp/ops), so every layer's
// backward pass comes from autograd. The Python classes in gpuaccel.keras.layers only parse
// Keras's arguments and construct these; the training loop (cpp/train) runs them with the GIL
// released.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "profiler/profiler.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace gpuaccel::nn {

// A layer variable (Keras's Variable): the master copy lives in the variable dtype (float32),
// requires grad when trainable, and is read through a cast to the layer's compute dtype.
struct Weight {
  std::string name;  // Keras's names: "kernel", "bias", "gamma", "beta", "moving_mean", ...
  Tensor value;
  bool trainable = true;
};

// Shapes passed to build/output_shape include the batch dimension as -1 (Keras's None).
using ShapeList = std::vector<Shape>;

class Layer {
 public:
  explicit Layer(std::string name) : name_(std::move(name)) {}
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  const std::string& name() const { return name_; }
  // Keras's class name ("Dense", "Conv2D", ...), used in errors and summary().
  virtual const char* type() const = 0;

  bool built() const { return built_; }
  // Validates the input shapes (InvalidArgumentError naming the layer and what it expected),
  // creates the weights, and marks the layer built. A second call is a no-op.
  void build(const ShapeList& input_shapes) {
    if (built_) return;
    do_build(input_shapes);
    built_ = true;
  }
  // The output shape (batch -1) for these input shapes; validates like build().
  virtual Shape output_shape(const ShapeList& input_shapes) const = 0;
  // Forward pass on a built layer. `training` selects dropout/batch-norm behaviour.
  virtual Tensor call(const std::vector<Tensor>& inputs, bool training) = 0;
  // call() inside a profiler scope (kLayer) named after the layer: what the layer graph and
  // the bindings run.
  Tensor traced_call(const std::vector<Tensor>& inputs, bool training) {
    profiler::TraceScope scope(profiler::EventKind::kLayer,
                               profiler::enabled() ? profile_name_.get(name_) : nullptr);
    return call(inputs, training);
  }

  // Weights in Keras's order (get_weights/set_weights): creation order, which for every layer
  // here is also trainable first, then non-trainable.
  std::vector<Weight>& weights() { return weights_; }
  const std::vector<Weight>& weights() const { return weights_; }
  // The trainable weights, or none when the layer is frozen (Keras's layer.trainable = False).
  std::vector<Tensor> trainable_weights() const;
  int64_t count_params() const;
  bool trainable() const { return trainable_; }
  void set_trainable(bool trainable) { trainable_ = trainable; }

  // Mixed precision (Keras DTypePolicy): floating inputs and weights are cast to this dtype for
  // the computation; the masters keep their own dtype. float32 by default.
  DType compute_dtype() const { return compute_dtype_; }
  void set_compute_dtype(DType dtype) { compute_dtype_ = dtype; }

 protected:
  virtual void do_build(const ShapeList& input_shapes) { (void)input_shapes; }
  // Creates a float32 weight initialized by `initializer` (cpp/nn/initializers.h names) on the
  // current default device and appends it to weights(); returns it.
  Tensor add_weight(const std::string& name, const Shape& shape, const std::string& initializer,
                    bool trainable = true);
  // A weight as the computation reads it: cast to the compute dtype when that differs
  // (recorded by autograd, so gradients reach the float32 master).
  Tensor read(const Tensor& weight) const;
  // A floating input cast to the compute dtype; integer inputs pass unchanged.
  Tensor cast_input(const Tensor& x) const;
  // InvalidArgumentError "[<type> '<name>'] <what>" for argument and shape errors.
  [[noreturn]] void fail(const std::string& what) const;
  // Checks that exactly `count` inputs were given (fail() otherwise).
  void expect_inputs(size_t given, size_t count) const;
  // Keras's InputSpec checks, failing with Keras's text ("Input 0 of layer 'conv2d' is
  // incompatible with the layer: expected ndim=4, found ndim=3. Full shape received: ...").
  void expect_ndim(const Shape& shape, size_t index, int ndim) const;
  void expect_min_ndim(const Shape& shape, size_t index, int min_ndim) const;
  // Axis `axis` (negative counts from the end) must equal `value` (a built layer's input).
  void expect_axis(const Shape& shape, size_t index, int axis, int64_t value) const;
  // The normalization layers' rule for input 0: at least `min_ndim` dimensions, a defined last
  // axis, and, once built (`built_size` >= 0), the same last-axis size as at build time.
  void expect_defined_last_axis(const Shape& shape, int min_ndim, int64_t built_size) const;
  // call() on a layer that was never built fails with a message saying to build it first.
  void expect_built() const;

 public:
  // "(None, 28, 28)": a shape as Keras prints it, -1 spelled None.
  static std::string shape_text(const Shape& shape);

 private:
  std::string name_;
  profiler::CachedName profile_name_;  // name_ interned once per profiler session
  bool built_ = false;
  bool trainable_ = true;
  std::vector<Weight> weights_;
  DType compute_dtype_ = DType::kFloat32;
};

using LayerPtr = std::shared_ptr<Layer>;

}  // namespace gpuaccel::nn
