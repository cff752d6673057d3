// Bindings of Tensor and the op frontends. The Python-facing API (operators, indexing, repr,
// NumPy conversion, torch/TF method names) is assembled in python/gpuaccel/_tensor.py on top of
// these primitives, so this file stays a thin, checkable layer.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>

#include "backends/cpu/onednn_ops.h"
#include "bindings/arguments.h"
#include "bindings/bindings.h"
#include "bindings/op_recording.h"
#include "core/device_scope.h"
#include "core/errors.h"
#include "ops/autograd.h"
#include "ops/bitwise.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/linalg.h"
#include "ops/post_activation.h"
#include "ops/reduce.h"
#include "ops/shape_ops.h"
#include "ops/sort.h"
#include "ops/type_promotion.h"

namespace py = pybind11;

namespace gpuaccel::bindings {

namespace {

UnaryOp parse_unary(const std::string& name) {
  static const std::pair<const char*, UnaryOp> kOps[] = {
      {"neg", UnaryOp::kNeg},       {"exp", UnaryOp::kExp},         {"log", UnaryOp::kLog},
      {"sqrt", UnaryOp::kSqrt},     {"rsqrt", UnaryOp::kRsqrt},     {"abs", UnaryOp::kAbs},
      {"square", UnaryOp::kSquare}, {"reciprocal", UnaryOp::kReciprocal},
      {"relu", UnaryOp::kRelu},     {"sigmoid", UnaryOp::kSigmoid}, {"tanh", UnaryOp::kTanh},
      {"gelu", UnaryOp::kGelu},     {"sin", UnaryOp::kSin},         {"cos", UnaryOp::kCos},
      {"tan", UnaryOp::kTan},       {"asin", UnaryOp::kAsin},       {"acos", UnaryOp::kAcos},
      {"atan", UnaryOp::kAtan},     {"sinh", UnaryOp::kSinh},       {"cosh", UnaryOp::kCosh},
      {"asinh", UnaryOp::kAsinh},   {"acosh", UnaryOp::kAcosh},     {"atanh", UnaryOp::kAtanh},
      {"erf", UnaryOp::kErf}};
  for (const auto& [n, op] : kOps) {
    if (name == n) return op;
  }
  throw_value_error("unary", "unknown unary op '" + name + "'");
}

constexpr std::pair<const char*, BinaryOp> kBinaryOps[] = {
    {"add", BinaryOp::kAdd},         {"sub", BinaryOp::kSub},         {"mul", BinaryOp::kMul},
    {"div", BinaryOp::kDiv},         {"pow", BinaryOp::kPow},         {"maximum", BinaryOp::kMaximum},
    {"minimum", BinaryOp::kMinimum}, {"equal", BinaryOp::kEqual},     {"greater", BinaryOp::kGreater},
    {"less", BinaryOp::kLess},       {"atan2", BinaryOp::kAtan2}};

bool is_binary_name(const std::string& name) {
  for (const auto& [n, op] : kBinaryOps) {
    if (name == n) return true;
  }
  return false;
}

BinaryOp parse_binary(const std::string& name) {
  for (const auto& [n, op] : kBinaryOps) {
    if (name == n) return op;
  }
  throw_value_error("binary", "unknown binary op '" + name + "'");
}

BitwiseOp parse_bitwise(const std::string& name) {
  static const std::pair<const char*, BitwiseOp> kOps[] = {
      {"and", BitwiseOp::kAnd}, {"or", BitwiseOp::kOr}, {"xor", BitwiseOp::kXor},
      {"left_shift", BitwiseOp::kShiftLeft}, {"right_shift", BitwiseOp::kShiftRight}};
  for (const auto& [n, op] : kOps) {
    if (name == n) return op;
  }
  throw_value_error("bitwise", "unknown bitwise op '" + name + "'");
}

ReduceOp parse_reduce(const std::string& name) {
  static const std::pair<const char*, ReduceOp> kOps[] = {
      {"sum", ReduceOp::kSum},       {"mean", ReduceOp::kMean},     {"max", ReduceOp::kMax},
      {"min", ReduceOp::kMin},       {"argmax", ReduceOp::kArgMax}, {"argmin", ReduceOp::kArgMin}};
  for (const auto& [n, op] : kOps) {
    if (name == n) return op;
  }
  throw_value_error("reduce", "unknown reduction '" + name + "'");
}

// The NumPy dtype of a gpuaccel dtype (bfloat16: ml_dtypes.bfloat16 when installed).
py::dtype numpy_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return py::dtype("float32");
    case DType::kFloat16: return py::dtype("float16");
    case DType::kInt32: return py::dtype("int32");
    case DType::kInt64: return py::dtype("int64");
    case DType::kUInt8: return py::dtype("uint8");
    case DType::kBool: return py::dtype("bool");
    case DType::kFloat64: return py::dtype("float64");
    case DType::kInt8: return py::dtype("int8");
    case DType::kInt16: return py::dtype("int16");
    case DType::kBFloat16: {
      try {
        return py::dtype::from_args(py::module_::import("ml_dtypes").attr("bfloat16"));
      } catch (const py::error_already_set&) {
        throw py::type_error(
            "bfloat16 tensors convert to NumPy through the ml_dtypes package (pip install "
            "ml_dtypes); or convert first with t.to(gpuaccel.float32).numpy()");
      }
    }
  }
  throw py::type_error("unsupported dtype");
}

DType dtype_of_numpy(const py::array& array) {
  const py::dtype dt = array.dtype();
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  if (kind == 'f' && size == 4) return DType::kFloat32;
  if (kind == 'f' && size == 2) return DType::kFloat16;
  if (kind == 'f' && size == 8) return DType::kFloat64;
  if (kind == 'i' && size == 4) return DType::kInt32;
  if (kind == 'i' && size == 8) return DType::kInt64;
  if (kind == 'u' && size == 1) return DType::kUInt8;
  if (kind == 'i' && size == 1) return DType::kInt8;
  if (kind == 'i' && size == 2) return DType::kInt16;
  if (kind == 'b') return DType::kBool;
  if (py::str(dt).cast<std::string>() == "bfloat16") return DType::kBFloat16;
  throw_error(ErrorCode::kInvalidArgument, "tensor",
              "cannot make a tensor from a NumPy array of dtype " + py::str(dt).cast<std::string>() +
                  "; supported: " + valid_dtype_names());
}

std::optional<DeviceSpec> parse_optional_device(const std::optional<std::string>& name) {
  if (!name) return std::nullopt;
  return parse_device_name(*name);
}

LogicalDevice device_for(const std::string& op, const std::optional<std::string>& device) {
  return creation_device(op, parse_optional_device(device));
}

// A copy of `t` in host memory as a NumPy array (any device, any strides).
py::array to_numpy(const Tensor& t) {
  nn::OpTraceRecorder::note_host_read(t);
  py::array out(numpy_dtype(t.dtype()), std::vector<py::ssize_t>(t.shape().begin(), t.shape().end()));
  if (t.numel() == 0) return out;
  GradModeGuard no_grad(false);
  Tensor src = contiguous(t);
  if (!src.is_cpu()) {
    src = to_device(src, DeviceRegistry::instance().logical_devices(DeviceType::kCPU).at(0));
  }
  std::memcpy(out.mutable_data(), src.data(), size_t(src.numel()) * dtype_size(src.dtype()));
  return out;
}

// The array's strides in elements when a tensor can view its memory as it is (torch.from_numpy
// shares any such array, transposed or sliced ones included): none negative, each a multiple of
// the item size. Otherwise nullopt (the array is copied).
std::optional<Strides> shareable_strides(const py::array& array) {
  Strides out;
  const auto item = array.itemsize();
  for (py::ssize_t d = 0; d < array.ndim(); ++d) {
    const py::ssize_t stride = array.strides(d);
    if (stride < 0 || stride % item != 0) return std::nullopt;
    out.push_back(int64_t(stride / item));
  }
  return out;
}

// The bytes from the array's first element to the end of its last one (its strides may skip
// memory between, or be a transposed view of a larger block).
size_t spanned_bytes(const py::array& array) {
  if (array.size() == 0) return 0;
  py::ssize_t last = 0;
  for (py::ssize_t d = 0; d < array.ndim(); ++d) last += (array.shape(d) - 1) * array.strides(d);
  return size_t(last + array.itemsize());
}

// A tensor from a NumPy array: zero-copy for an array with shareable strides of a supported dtype going to
// the CPU when `copy` is false and `dtype_name` is absent or the array's; otherwise a copy. A float64
// array with no `dtype_name` becomes float32 (Keras's floatx and JAX's default: float64 only when
// asked for, as torch.from_numpy and dtype=float64 do).
Tensor from_numpy(py::array array, const std::optional<std::string>& device,
                  std::optional<std::string> dtype_name, bool copy) {
  const py::array native = in_native_byte_order(array);
  copy = copy || native.ptr() != array.ptr();  // a swapped array cannot be shared
  array = native;
  const DType source_dtype = dtype_of_numpy(array);
  const LogicalDevice target = device_for("FromNumpy", device);
  if (array.ndim() > kMaxDims) {
    throw_error(ErrorCode::kInvalidArgument, "tensor",
                "at most " + std::to_string(kMaxDims) + " dimensions are supported");
  }
  Shape shape(array.shape(), array.shape() + array.ndim());
  const DType dtype = dtype_name                          ? parse_dtype(*dtype_name)
                      : source_dtype == DType::kFloat64 ? DType::kFloat32
                                                        : source_dtype;
  const std::optional<Strides> element_strides = shareable_strides(array);
  if (!copy && element_strides && target.type == DeviceType::kCPU &&
      dtype == source_dtype) {
    auto owner = std::make_shared<py::object>(array);
    // The owner holds a Python reference: release it with the GIL held.
    std::shared_ptr<void> keepalive(owner.get(), [owner](void*) mutable {
      py::gil_scoped_acquire gil;
      owner.reset();
    });
    auto impl = std::make_shared<TensorImpl>();
    impl->storage = Storage::borrow(array.mutable_data(), spanned_bytes(array), target, keepalive);
    impl->shape = shape;
    impl->strides = *element_strides;
    impl->dtype = dtype;
    return Tensor(std::move(impl));
  }
  // float64 going to float32: NumPy rounds it once, straight into a contiguous float32 array.
  const bool narrowed = source_dtype == DType::kFloat64 && dtype == DType::kFloat32;
  const DType staged_dtype = narrowed ? DType::kFloat32 : source_dtype;
  py::array contiguous_array =
      narrowed ? py::array(py::array_t<float, py::array::c_style | py::array::forcecast>(array))
               : py::array::ensure(array, py::array::c_style);
  const LogicalDevice host = DeviceRegistry::instance().logical_devices(DeviceType::kCPU).at(0);
  Tensor t = from_host(contiguous_array.data(), shape, staged_dtype, host);
  if (dtype != staged_dtype) t = cast(t, dtype);
  return to_device(t, target);
}

}  // namespace

void init_tensor(py::module_& m) {
  py::class_<Tensor>(m, "Tensor", py::buffer_protocol(), py::dynamic_attr())
      .def_property_readonly("shape", [](const Tensor& t) {
        return py::tuple(py::cast(std::vector<int64_t>(t.shape())));
      })
      .def_property_readonly("_dtype_name", [](const Tensor& t) { return dtype_name(t.dtype()); })
      .def_property_readonly("_device_name", [](const Tensor& t) { return t.device().full_name(); })
      .def_property_readonly("_device_type", [](const Tensor& t) { return device_type_name(t.device().type); })
      .def_property_readonly("_device_index", [](const Tensor& t) { return t.device().index; })
      .def_property_readonly("ndim", &Tensor::ndim)
      .def("numel", &Tensor::numel)
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("_strides", [](const Tensor& t) { return std::vector<int64_t>(t.strides()); })
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data()); })
      // The storage's version (bumped by every in-place write) and its derived-copy cache's
      // counters, for tests of tensor/derived_copies.h.
      .def_property_readonly("_version", &Tensor::version)
      .def_property_readonly("_derived_copies", [](const Tensor& t) {
        DerivedCopies& d = t.storage()->derived_copies();
        py::dict out;
        out["held"] = d.size();
        out["made"] = d.made();
        out["hits"] = d.hits();
        out["cacheable"] = t.storage()->caches_derived_copies();
        return out;
      })
      // torch.nn.Module.to()'s move in place (PyTorch's `param.data = moved`): this Python
      // object now holds `source`'s tensor, so an optimizer made before the move still steps the
      // parameter the module uses. The caller passes a detached tensor and restores
      // requires_grad and grad.
      .def("_rebind_", [](Tensor& self, const Tensor& source) { self = source; })
      .def("_shares_storage_with", [](const Tensor& a, const Tensor& b) {
        return a.storage() == b.storage();
      })
      // torch: results of recorded ops require grad too (they have a grad_fn).
      .def_property("requires_grad",
                    [](const Tensor& t) { return t.impl()->requires_grad || t.impl()->grad_fn != nullptr; },
                    [](Tensor& t, bool value) {
                      if (value && !is_floating(t.dtype())) {
                        throw_error(ErrorCode::kRuntime, "requires_grad",
                                    "only floating point tensors can require gradients");
                      }
                      if (t.impl()->grad_fn) {
                        throw_error(ErrorCode::kRuntime, "requires_grad",
                                    "you can only change requires_grad of leaf tensors");
                      }
                      t.impl()->requires_grad = value;
                    })
      .def_property("grad",
                    [](const Tensor& t) -> std::optional<Tensor> {
                      if (!t.impl()->grad) return std::nullopt;
                      return Tensor(t.impl()->grad);
                    },
                    [](Tensor& t, std::optional<Tensor> g) {
                      t.impl()->grad = g ? g->impl_ptr() : nullptr;
                    })
      .def_property_readonly("is_leaf", [](const Tensor& t) { return t.impl()->grad_fn == nullptr; })
      .def_property_readonly("_grad_fn_name", [](const Tensor& t) -> std::optional<std::string> {
        if (!t.impl()->grad_fn) return std::nullopt;
        return t.impl()->grad_fn->name();
      })
      .def("_numpy", &to_numpy)
      .def_buffer([](const Tensor& t) -> py::buffer_info {
        if (!t.is_cpu()) {
          throw py::buffer_error("the buffer protocol needs a CPU tensor; use t.cpu() first");
        }
        if (t.dtype() == DType::kBFloat16) {
          throw py::buffer_error("bfloat16 has no buffer-protocol format; use t.numpy()");
        }
        // The buffer is writable and NumPy's writes bump no version: this storage stops caching
        // derived copies (a stale kernel layout would be a silently wrong result).
        t.storage()->mark_aliased_by_host();
        static const char* kFormats[] = {"f", "e", "", "i", "q", "B", "?", "d", "b", "h"};
        const auto item = static_cast<py::ssize_t>(dtype_size(t.dtype()));
        std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
        std::vector<py::ssize_t> strides;
        for (int64_t s : t.strides()) strides.push_back(s * item);
        return py::buffer_info(t.data(), item, kFormats[static_cast<int>(t.dtype())], t.ndim(),
                               shape, strides);
      });

  m.def("tensor_from_numpy", &from_numpy, py::arg("array"), py::arg("device") = py::none(),
        py::arg("dtype") = py::none(), py::arg("copy") = true);
  m.def("tensor_full", [](std::vector<int64_t> shape, double value, const std::string& dtype,
                          std::optional<std::string> device) {
    return full(shape, value, parse_dtype(dtype), device_for("Fill", device));
  });
  m.def("tensor_arange", [](double start, double stop, double step, const std::string& dtype,
                            std::optional<std::string> device) {
    return arange(start, stop, step, parse_dtype(dtype), device_for("Range", device));
  });
  m.def("tensor_random", [](const std::string& kind, std::vector<int64_t> shape,
                            const std::string& dtype, std::optional<std::string> device) {
    nn::OpTraceRecorder::note_unreplayable("draws random numbers (use keras.layers.Dropout or "
                                          "tf.nn.dropout, which replay, or create them in build)");
    if (kind == "uniform") return rand(shape, parse_dtype(dtype), device_for("RandomUniform", device));
    return randn(shape, parse_dtype(dtype), device_for("RandomStandardNormal", device));
  });
  m.def("set_random_seed", &set_random_seed);
  m.def("random_seed", &random_seed);
  m.def("random_offset", &random_offset);
  m.def("set_random_state", &set_random_state, py::arg("seed"), py::arg("offset"));

  m.def("unary", [](const std::string& op, const Tensor& x) {
    const UnaryOp kind = parse_unary(op);
    return recorded_op({x}, [kind](const std::vector<Tensor>& in) { return unary(kind, in[0]); });
  },
        py::arg("op"), py::arg("x"));
  m.def("binary", [](const std::string& op, const Tensor& a, const Tensor& b) {
    const BinaryOp kind = parse_binary(op);
    return recorded_op({a, b}, [kind](const std::vector<Tensor>& in) { return binary(kind, in[0], in[1]); });
  }, py::arg("op"), py::arg("x"), py::arg("y"));
  m.def("bitwise", [](const std::string& op, const Tensor& a, const Tensor& b) {
    const BitwiseOp kind = parse_bitwise(op);
    return recorded_op({a, b}, [kind](const std::vector<Tensor>& in) { return bitwise(kind, in[0], in[1]); });
  }, py::arg("op"), py::arg("x"), py::arg("y"),
     "op: 'and', 'or', 'xor', 'left_shift', 'right_shift' (PyTorch's promotion; counts outside "
     "[0, bits) shift every bit out).");
  m.def("bitwise_not", [](const Tensor& x) {
    return recorded_op({x}, [](const std::vector<Tensor>& in) { return bitwise_not(in[0]); });
  }, py::arg("x"));
  m.def("where", [](const Tensor& condition, const Tensor& x, const Tensor& y) {
    return recorded_op({condition, x, y}, [](const std::vector<Tensor>& in) {
      return where(in[0], in[1], in[2]);
    });
  }, py::arg("condition"), py::arg("x"), py::arg("y"),
     "x where condition holds, else y (broadcast; only the chosen operand is read).");
  m.def("sort", [](const Tensor& x, int64_t axis, bool descending) {
    const SortResult r = sort(x, axis, descending);
    if (nn::OpTraceRecorder::active()) {
      nn::OpTraceRecorder::record({x}, {r.values, r.indices}, [axis, descending](const std::vector<Tensor>& in) {
        const SortResult again = sort(in[0], axis, descending);
        return std::vector<Tensor>{again.values, again.indices};
      });
    }
    return py::make_tuple(r.values, r.indices);
  }, py::arg("x"), py::arg("axis") = -1, py::arg("descending") = false,
     "(values, int64 indices) of a stable sort along axis; NaN last ascending, first descending.");
  m.def("take_along_last_axis", [](const Tensor& x, const Tensor& indices) {
    return recorded_op({x, indices}, [](const std::vector<Tensor>& in) {
      return take_along_last_axis(in[0], in[1]);
    });
  }, py::arg("x"), py::arg("indices"));
  m.def("reduce", [](const std::string& op, const Tensor& x, py::object axis, bool keepdims) {
    const ReduceOp kind = parse_reduce(op);
    if (kind == ReduceOp::kArgMax || kind == ReduceOp::kArgMin) {
      const char* name = reduce_op_name(kind);
      const std::optional<int64_t> arg_axis =
          axis.is_none() ? std::nullopt : std::optional<int64_t>(int_argument(axis, name, "axis"));
      return recorded_op({x}, [kind, arg_axis, keepdims](const std::vector<Tensor>& in) {
        const Tensor& x = in[0];
        if (!arg_axis) {
          // NumPy/torch: over the flattened tensor; keepdims keeps every axis, with size 1.
          const Tensor flat = arg_reduce(kind, reshape(x, {x.numel()}), 0, false);
          return keepdims ? reshape(flat, Shape(size_t(x.ndim()), 1)) : flat;
        }
        return arg_reduce(kind, x, *arg_axis, keepdims);
      });
    }
    const std::optional<std::vector<int64_t>> axes = axes_argument(axis, reduce_op_name(kind));
    return recorded_op({x}, [kind, axes, keepdims](const std::vector<Tensor>& in) {
      const Tensor& x = in[0];
      // axis=() reduces nothing (NumPy, TF); the C++ frontend reads no axes as "all axes". The
      // result still has the reduction's dtype.
      if (axes && axes->empty()) {
        if (kind == ReduceOp::kSum && !is_floating(x.dtype())) {
          return cast(x, DType::kInt64);
        }
        if (kind == ReduceOp::kMean && !is_floating(x.dtype())) return cast(x, DType::kFloat32);
        return clone(x);
      }
      return reduce(kind, x, axes ? *axes : std::vector<int64_t>{}, keepdims);
    });
  }, py::arg("op"), py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdims") = false);
  m.def("scalar_operand", [](py::object value, const Tensor& like, const std::string& op, bool assign) {
    const Scalar s = scalar_argument(value, op, "operand");
    if (assign) return scalar_tensor(s, like.dtype(), like.device(), op);
    // Functions that are not one binary op (a loss, matmul) promote like addition.
    const BinaryOp kind = is_binary_name(op) ? parse_binary(op) : BinaryOp::kAdd;
    return scalar_operand(s, like, kind, op);
  }, py::arg("value"), py::arg("like"), py::arg("op") = "add", py::arg("assign") = false,
     "A Python number as the 0-d tensor binary op `op` with `like` uses (PyTorch's promotion); "
     "assign=True: in like's dtype, for item assignment. Refuses values the dtype cannot hold.");
  // A 0-d tensor of `value` in like's dtype (no promotion): for ops composed in Python that
  // need a constant of their input's dtype. Operands of binary ops use scalar_operand.
  m.def("scalar_like", &scalar_like, py::arg("value"), py::arg("like"));
  m.def("promote_types", [](const std::string& a, const std::string& b) {
    return std::string(dtype_name(promote_types(parse_dtype(a), parse_dtype(b))));
  }, py::arg("a"), py::arg("b"));
  m.def("result_type", [](const Tensor& a, const Tensor& b) {
    return std::string(dtype_name(result_type(a, b)));
  }, py::arg("a"), py::arg("b"));
  m.def("matmul", [](const Tensor& a, const Tensor& b) {
    return recorded_op({a, b}, [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); });
  }, py::arg("a"), py::arg("b"));
  m.def("linear", [](const Tensor& x, const Tensor& w, std::optional<Tensor> b,
                     const std::string& activation) {
    const PostActivation act = parse_post_activation(activation, "linear");
    return recorded_op({x, w, b ? *b : Tensor()}, [act](const std::vector<Tensor>& in) {
      return linear(in[0], in[1], in[2], act);
    });
  }, py::arg("x"), py::arg("w"), py::arg("b") = py::none(), py::arg("activation") = "linear");
  m.def("reshape", [](const Tensor& x, const Shape& shape) {
    return recorded_op({x}, [shape](const std::vector<Tensor>& in) { return reshape(in[0], shape); });
  }, py::arg("x"), py::arg("shape"));
  m.def("permute", [](const Tensor& x, const std::vector<int64_t>& dims) {
    return recorded_op({x}, [dims](const std::vector<Tensor>& in) { return permute(in[0], dims); });
  }, py::arg("x"), py::arg("dims"));
  m.def("transpose", [](const Tensor& x, int64_t dim0, int64_t dim1) {
    return recorded_op({x}, [dim0, dim1](const std::vector<Tensor>& in) { return transpose(in[0], dim0, dim1); });
  }, py::arg("x"), py::arg("dim0"), py::arg("dim1"));
  m.def("contiguous", [](const Tensor& x) {
    return recorded_op({x}, [](const std::vector<Tensor>& in) { return contiguous(in[0]); });
  });
  m.def("clone", [](const Tensor& x) {
    return recorded_op({x}, [](const std::vector<Tensor>& in) { return clone(in[0]); });
  });
  m.def("detach", [](const Tensor& x) {
    return recorded_op({x}, [](const std::vector<Tensor>& in) { return detach(in[0]); });
  });
  m.def("expand_dims", [](const Tensor& x, int64_t axis) {
    return recorded_op({x}, [axis](const std::vector<Tensor>& in) { return expand_dims(in[0], axis); });
  }, py::arg("x"), py::arg("axis"));
  m.def("squeeze", [](const Tensor& x, const std::vector<int64_t>& axes) {
    return recorded_op({x}, [axes](const std::vector<Tensor>& in) { return squeeze(in[0], axes); });
  }, py::arg("x"), py::arg("axes"));
  m.def("concat", [](const std::vector<Tensor>& xs, int64_t axis) {
    return recorded_op(xs, [axis](const std::vector<Tensor>& in) { return concat(in, axis); });
  }, py::arg("tensors"), py::arg("axis"));
  m.def("broadcast_to", [](const Tensor& x, const Shape& shape) {
    return recorded_op({x}, [shape](const std::vector<Tensor>& in) { return broadcast_to(in[0], shape); });
  }, py::arg("x"), py::arg("shape"));
  m.def("select", [](const Tensor& x, int64_t axis, int64_t index) {
    return recorded_op({x}, [axis, index](const std::vector<Tensor>& in) { return select(in[0], axis, index); });
  }, py::arg("x"), py::arg("axis"), py::arg("index"));
  m.def("slice", [](const Tensor& x, const std::vector<std::tuple<int64_t, int64_t, int64_t>>& specs) {
    std::vector<SliceSpec> s;
    for (const auto& [start, stop, step] : specs) s.push_back({start, stop, step});
    return recorded_op({x}, [s](const std::vector<Tensor>& in) { return slice(in[0], s); });
  });
  m.def("cast", [](const Tensor& x, const std::string& dtype) {
    const DType to = parse_dtype(dtype);
    return recorded_op({x}, [to](const std::vector<Tensor>& in) { return cast(in[0], to); });
  });
  m.def("to_device", [](const Tensor& x, const std::string& device) {
    const DeviceSpec spec = parse_device_name(device);
    // Explicit transfers are exact requests: an unavailable device is an error here, with
    // placement's own message (soft placement applies to ops, as in TF).
    for (const auto& d : DeviceRegistry::instance().logical_devices(spec.type)) {
      if (d.index == spec.index_or_zero()) {
        return recorded_op({x}, [d](const std::vector<Tensor>& in) { return to_device(in[0], d); });
      }
    }
    // RuntimeError, as torch raises for .to('cuda') without a usable GPU.
    throw_error(ErrorCode::kRuntime, "to",
                "device '" + device + "' does not exist here (" +
                    (spec.type == DeviceType::kGPU ? DeviceRegistry::instance().gpu_unavailable_reason()
                                                   : std::string("no such logical CPU")) + ")");
  });
  m.def("copy_into", [](const Tensor& value, const Tensor& target) {
    nn::OpTraceRecorder::note_unreplayable("writes a tensor in place (assign, copy_into)");
    copy_into(value, target);
  }, py::arg("value"), py::arg("target"));
  m.def("_conv_weights_reorders", &cpu::conv_weights_reorders,
        "oneDNN convolution weight reorders run so far (tests: kept weights are not reordered)");

  m.def("backward", [](const Tensor& root, std::optional<Tensor> grad, bool retain_graph,
                       const std::vector<Tensor>& inputs) {
    nn::OpTraceRecorder::note_unreplayable("runs a backward pass");
    py::gil_scoped_release release;
    backward(root, grad ? *grad : Tensor(), retain_graph, inputs);
  }, py::arg("root"), py::arg("gradient") = py::none(), py::arg("retain_graph") = false,
     py::arg("inputs") = std::vector<Tensor>{});
  m.def("compute_gradients", [](const std::vector<Tensor>& roots, const std::vector<std::optional<Tensor>>& root_grads,
                                const std::vector<Tensor>& sources) {
    nn::OpTraceRecorder::note_unreplayable("computes gradients");
    std::vector<Tensor> seeds;
    for (const auto& g : root_grads) seeds.push_back(g ? *g : Tensor());
    std::vector<std::optional<Tensor>> out;
    for (const Tensor& g : compute_gradients(roots, seeds, sources)) {
      out.push_back(g.defined() ? std::optional<Tensor>(g) : std::nullopt);
    }
    return out;
  });
  m.def("grad_mode_enabled", &grad_mode_enabled);
  m.def("set_grad_mode_enabled", &set_grad_mode_enabled);
  m.def("push_tape", &push_tape);
  m.def("pop_tape", &pop_tape);
  m.def("tape_watch", &tape_watch);
}

}  // namespace gpuaccel::bindings
