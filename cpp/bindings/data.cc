// Bindings of the input pipeline's C++ parts: the Prefetcher driven by a Python iterator (its
// thread takes the GIL only to call the iterator; the consumer waits with the GIL released)
// and the batch builders that copy rows without the GIL (gather_rows for shuffled batches of
// in-memory arrays, stack for batching elements), so gpuaccel.data's hot paths are not
// Python loops.
#include <Python.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "bindings/arguments.h"
#include "bindings/bindings.h"
#include "core/errors.h"
#include "ops/creation.h"
#include "ops/shape_ops.h"
#include "tensor/tensor.h"
#include "train/batch_placement.h"
#include "train/prefetcher.h"

namespace py = pybind11;

namespace gpuaccel::bindings {

namespace {

constexpr const char* kGather = "gather_rows";
constexpr const char* kStack = "batch";

LogicalDevice host_device() {
  return DeviceRegistry::instance().logical_devices(DeviceType::kCPU).at(0);
}

bool interpreter_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

std::string shape_text(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    s += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

// One source of rows: a contiguous host buffer, its dtype and shape. `keep` holds what owns
// the memory (a NumPy array or a Tensor) while the GIL is released.
struct RowSource {
  const char* data = nullptr;
  Shape shape;
  DType dtype = DType::kFloat32;  // the dtype of the batch built from it
  bool from_f64 = false;          // float64 rows are narrowed to float32 while copying
  py::object keep;
  Tensor tensor_keep;
};

RowSource row_source(const py::handle& obj, size_t position) {
  RowSource src;
  if (py::isinstance<Tensor>(obj)) {
    Tensor t = obj.cast<Tensor>();
    if (!t.is_cpu()) t = to_device(t, host_device());
    if (!t.is_contiguous()) t = contiguous(t);
    src.tensor_keep = t;
    src.data = static_cast<const char*>(t.data());
    src.shape = t.shape();
    src.dtype = t.dtype();
  } else {
    py::array array = py::array::ensure(obj, py::array::c_style);
    if (!array) {
      throw_error(ErrorCode::kInvalidArgument, kGather,
                  "component " + std::to_string(position) +
                      " is neither a gpuaccel Tensor nor convertible to a NumPy array");
    }
    array = in_native_byte_order(array);
    const py::dtype dt = array.dtype();
    const char kind = dt.kind();
    const auto size = dt.itemsize();
    if (kind == 'f' && size == 4) src.dtype = DType::kFloat32;
    else if (kind == 'f' && size == 8) src.dtype = DType::kFloat32, src.from_f64 = true;
    else if (kind == 'f' && size == 2) src.dtype = DType::kFloat16;
    else if (kind == 'i' && size == 4) src.dtype = DType::kInt32;
    else if (kind == 'i' && size == 8) src.dtype = DType::kInt64;
    else if (kind == 'u' && size == 1) src.dtype = DType::kUInt8;
    else if (kind == 'i' && size == 1) src.dtype = DType::kInt8;
    else if (kind == 'i' && size == 2) src.dtype = DType::kInt16;
    else if (kind == 'b') src.dtype = DType::kBool;
    else if (py::str(dt).cast<std::string>() == "bfloat16") src.dtype = DType::kBFloat16;
    else {
      throw_error(ErrorCode::kInvalidArgument, kGather,
                  "component " + std::to_string(position) + " has NumPy dtype " +
                      py::str(dt).cast<std::string>() +
                      "; supported: float32, float64 (batched as float32), float16, bfloat16, "
                      "int32, int64, int16, int8, uint8, bool (cast the array first, e.g. x.astype('float32'))");
    }
    src.data = static_cast<const char*>(array.data());
    src.shape = Shape(array.shape(), array.shape() + array.ndim());
    src.keep = array;
  }
  if (src.shape.empty()) {
    throw_error(ErrorCode::kInvalidArgument, kGather,
                "component " + std::to_string(position) +
                    " is a scalar; rows can only be taken from arrays with at least 1 dimension");
  }
  return src;
}

// Copies rows `indices` of `src` into a new contiguous host tensor. Runs without the GIL.
Tensor gather(const RowSource& src, const int64_t* indices, int64_t count) {
  Shape out_shape = src.shape;
  out_shape[0] = count;
  Tensor out = Tensor::empty(out_shape, src.dtype, host_device(), kGather);
  const int64_t rows = src.shape[0];
  int64_t row_elems = 1;
  for (size_t d = 1; d < src.shape.size(); ++d) row_elems *= src.shape[d];
  char* dst = static_cast<char*>(out.data());
  const size_t out_row_bytes = size_t(row_elems) * dtype_size(src.dtype);
  const size_t in_row_bytes = src.from_f64 ? size_t(row_elems) * sizeof(double) : out_row_bytes;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t r = indices[i];
    if (r < 0 || r >= rows) {
      throw_error(ErrorCode::kInvalidArgument, kGather,
                  "index " + std::to_string(r) + " at position " + std::to_string(i) +
                      " is out of range for " + std::to_string(rows) + " rows (valid: 0 to " +
                      std::to_string(rows - 1) + ")");
    }
    const char* row = src.data + size_t(r) * in_row_bytes;
    if (src.from_f64) {
      const double* in = reinterpret_cast<const double*>(row);
      float* o = reinterpret_cast<float*>(dst + size_t(i) * out_row_bytes);
      for (int64_t k = 0; k < row_elems; ++k) o[k] = static_cast<float>(in[k]);
    } else if (out_row_bytes > 0) {
      std::memcpy(dst + size_t(i) * out_row_bytes, row, out_row_bytes);
    }
  }
  return out;
}

std::vector<Tensor> gather_rows(const py::sequence& sources, const py::object& index_obj) {
  py::array_t<int64_t, py::array::c_style | py::array::forcecast> indices(index_obj);
  if (indices.ndim() != 1) {
    throw_error(ErrorCode::kInvalidArgument, kGather,
                "indices must be 1-D, got " + std::to_string(indices.ndim()) + " dimensions");
  }
  std::vector<RowSource> srcs;
  for (size_t i = 0; i < sources.size(); ++i) srcs.push_back(row_source(sources[i], i));
  for (size_t i = 1; i < srcs.size(); ++i) {
    if (srcs[i].shape[0] != srcs[0].shape[0]) {
      throw_error(ErrorCode::kInvalidArgument, kGather,
                  "component " + std::to_string(i) + " has " + std::to_string(srcs[i].shape[0]) +
                      " rows but component 0 has " + std::to_string(srcs[0].shape[0]));
    }
  }
  std::vector<Tensor> out;
  {
    py::gil_scoped_release release;
    for (const RowSource& s : srcs) out.push_back(gather(s, indices.data(), indices.size()));
  }
  return out;
}

// Stacks equally shaped tensors along a new leading axis (a batch of elements).
Tensor stack(const std::vector<Tensor>& items, size_t component) {
  if (items.empty()) throw_value_error(kStack, "cannot batch zero elements");
  const Shape& shape = items[0].shape();
  const DType dtype = items[0].dtype();
  for (size_t i = 1; i < items.size(); ++i) {
    if (items[i].shape() != shape || items[i].dtype() != dtype) {
      throw_error(ErrorCode::kInvalidArgument, kStack,
                  "cannot batch elements of different shapes or dtypes in component " +
                      std::to_string(component) + ": element 0 is " + dtype_name(dtype) + " " +
                      shape_text(shape) + " and element " + std::to_string(i) + " is " +
                      dtype_name(items[i].dtype()) + " " + shape_text(items[i].shape()) +
                      "; make them equal (e.g. pad or resize in map) or use a batch size of 1");
    }
  }
  Shape out_shape{int64_t(items.size())};
  out_shape.insert(out_shape.end(), shape.begin(), shape.end());
  Tensor out = Tensor::empty(out_shape, dtype, host_device(), kStack);
  const size_t bytes = size_t(shape_numel(shape)) * dtype_size(dtype);
  char* dst = static_cast<char*>(out.data());
  for (size_t i = 0; i < items.size(); ++i) {
    Tensor t = items[i];
    if (!t.is_cpu()) t = to_device(t, host_device());
    if (!t.is_contiguous()) t = contiguous(t);
    if (bytes > 0) std::memcpy(dst + i * bytes, t.data(), bytes);
  }
  return out;
}

// A Prefetcher whose producer is a Python iterator yielding tuples (or lists) of Tensors.
class PyPrefetcher {
 public:
  PyPrefetcher(py::object iterable, size_t capacity, std::optional<std::string> device)
      : iterator_(py::iter(iterable)) {
    // The consumer's device scope, read here on its thread. Batches for a GPU are made on the
    // host by the producer thread and uploaded by the consumer's next() on the GPU's copy
    // stream (train/batch_placement.h), as fit's are: the copy of batch i+1 overlaps the step
    // the consumer queued for batch i, and nothing is queued on the compute stream from the
    // producer thread.
    LogicalDevice target = creation_device("Prefetch", device ? std::optional<DeviceSpec>(parse_device_name(*device))
                                                              : std::nullopt);
    if (target.type != DeviceType::kCPU) target_ = target;
    prefetcher_ = std::make_shared<Prefetcher>([this] { return produce(); }, capacity);
  }

  ~PyPrefetcher() { close(); }

  py::tuple next() {
    std::shared_ptr<Prefetcher> p = prefetcher_;
    if (!p) throw py::stop_iteration();
    std::optional<Prefetcher::Batch> batch;
    {
      py::gil_scoped_release release;
      batch = p->next();
    }
    if (!batch) throw py::stop_iteration();
    if (target_) {
      py::gil_scoped_release release;
      *batch = upload(std::move(*batch));
    }
    py::tuple out(batch->size());
    for (size_t i = 0; i < batch->size(); ++i) out[i] = py::cast(std::move((*batch)[i]));
    return out;
  }

  // Called with the GIL held (from Python or the destructor). The thread is joined with the
  // GIL released, since it may be waiting for the GIL to call the iterator.
  void close() {
    closing_ = true;
    std::shared_ptr<Prefetcher> p = std::move(prefetcher_);
    if (!p) return;
    {
      py::gil_scoped_release release;
      p->close();
    }
    p.reset();  // drops an undelivered Python exception with the GIL held
  }

  size_t buffered() const { return prefetcher_ ? prefetcher_->buffered() : 0; }

 private:
  std::optional<Prefetcher::Batch> produce() {
    if (closing_ || interpreter_finalizing()) return std::nullopt;
    Prefetcher::Batch batch;
    {
      py::gil_scoped_acquire gil;
      if (closing_) return std::nullopt;
      PyObject* raw = PyIter_Next(iterator_.ptr());
      if (raw == nullptr) {
        if (PyErr_Occurred()) throw py::error_already_set();
        return std::nullopt;
      }
      py::object item = py::reinterpret_steal<py::object>(raw);
      if (py::isinstance<Tensor>(item)) {
        batch.push_back(item.cast<Tensor>());
      } else if (py::isinstance<py::tuple>(item) || py::isinstance<py::list>(item)) {
        for (const py::handle& part : item) {
          if (!py::isinstance<Tensor>(part)) {
            throw py::type_error("Prefetcher: the iterator must yield gpuaccel Tensors or tuples of "
                                 "them, got an element part of type " +
                                 std::string(py::str(py::type::of(part).attr("__name__"))));
          }
          batch.push_back(part.cast<Tensor>());
        }
      } else {
        throw py::type_error("Prefetcher: the iterator must yield gpuaccel Tensors or tuples of "
                             "them, got " + std::string(py::str(py::type::of(item).attr("__name__"))));
      }
    }
    return batch;
  }

  // On the consumer's thread. The uploader's buffers are refilled two batches later, and the
  // caller may keep a batch longer: each gets its own device copy (on the compute stream,
  // after the upload: a device-to-device copy, far faster than the host-to-device one).
  Prefetcher::Batch upload(Prefetcher::Batch batch) {
    const int64_t before = uploads_.copy_stream_uploads();
    Prefetcher::Batch placed = uploads_.place_on(std::move(batch), *target_);
    if (uploads_.copy_stream_uploads() == before) return placed;  // not uploaded: fresh tensors
    train::ReleasePlacedBatch release(uploads_);
    for (Tensor& t : placed) t = clone(t);
    return placed;
  }

  py::object iterator_;
  std::optional<LogicalDevice> target_;
  train::BatchPlacement uploads_;  // the consumer's thread only
  std::atomic<bool> closing_{false};
  std::shared_ptr<Prefetcher> prefetcher_;  // last member: its thread uses the ones above
};

}  // namespace

void init_data(py::module_& m) {
  py::class_<PyPrefetcher>(m, "Prefetcher")
      .def(py::init<py::object, size_t, std::optional<std::string>>(), py::arg("iterable"),
           py::arg("capacity"), py::arg("device") = py::none())
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", &PyPrefetcher::next)
      .def("close", &PyPrefetcher::close)
      .def_property_readonly("buffered", &PyPrefetcher::buffered);
  m.def("gather_rows", &gather_rows, py::arg("sources"), py::arg("indices"),
        "Rows `indices` of each array/tensor in `sources`, as new host tensors (GIL released).");
  m.def("stack_tensors", [](const std::vector<Tensor>& items, size_t component) {
    py::gil_scoped_release release;
    return stack(items, component);
  }, py::arg("items"), py::arg("component") = 0);
}

}  // namespace gpuaccel::bindings
