"""The Python face of ``gpuaccel.Tensor``: operators, indexing, NumPy conversion, repr, and
the PyTorch/TensorFlow method names, attached to the C++ class from ``_C``.

Tensor ops run on the device of their inputs (PyTorch's rule); creation functions
(``zeros``, ``randn``, ``tensor``...) run on the device of the innermost ``gpuaccel.device``
scope, else GPU:0 when there is one, else the CPU (TensorFlow's rule).
"""
import numbers
import operator
import threading

import numpy as np

from . import _C, _backward_callbacks, _promotion, _tensor_print, _torch_memory_format, nest
from ._int_range import check_int, check_range
from ._integer_matmul import integer_or_float_matmul
from ._tensor_shape import TensorShape
from .dtypes import FLOATING_NAMES, INTEGER_NAMES, as_dtype, float32
from ._placement import device as _device_class

Tensor = _C.Tensor


def _dtype_name(dtype):
    return None if dtype is None else as_dtype(dtype).name


def _device_name(device):
    if device is None:
        return None
    if isinstance(device, _device_class):
        return device.name
    if isinstance(device, str):
        if _is_dtype_name(device) or _is_foreign_dtype_name(device):
            raise ValueError(_dtype_as_device_message(device))
        return device
    name = getattr(device, "name", None)
    if isinstance(name, str):
        return name
    raise ValueError(f"expected a device name such as 'cpu', 'cuda:0' or '/GPU:0', got {device!r}")


def _shape_arg(shape):
    """``zeros(2, 3)`` / ``zeros((2, 3))`` / ``normal([2, 3])`` as a list of ints (the core
    checks signs and sizes; only what cannot reach it as an int64 is refused here)."""
    if len(shape) == 1 and isinstance(shape[0], Tensor) and len(shape[0].shape) == 1:
        shape = tuple(shape[0].numpy().tolist())  # TF's tf.ones(tf.shape(x))
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, TensorShape)):
        shape = tuple(shape[0])
    out = []
    for d in shape:
        if isinstance(d, Tensor) and len(d.shape) == 0 and not d.dtype.is_floating:
            d = d.numpy().item()  # TF's tf.ones((tf.shape(x)[0], 1)): a scalar size
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (numbers.Integral, np.integer)):
            raise TypeError(f"shape entries must be integers, got {type(d).__name__} {d!r} "
                            f"in {tuple(shape)!r}")
        out.append(check_range(int(d), f"shape {tuple(shape)!r} entry {len(out)}"))
    return out


# ---- creation ----

def tensor(data, dtype=None, device=None, requires_grad=False):
    """A tensor holding a copy of ``data`` (a NumPy array, nested lists, a number or a tensor).

    Python floats and float64 arrays become float32 (Keras's default float type) unless
    ``dtype`` asks for float64."""
    if isinstance(data, Tensor):
        out = _C.clone(_C.detach(data))
        if dtype is not None or device is not None:
            out = out.to(dtype=dtype, device=device)
    else:
        out = _C.tensor_from_numpy(np.asarray(data), _device_name(device), _dtype_name(dtype), True)
    if requires_grad:
        out.requires_grad = True
    return out


def from_numpy(array):
    """A CPU tensor sharing memory with a NumPy array (no copy, any non-negative strides), as
    torch does; the tensor keeps the array alive."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(array).__name__}")
    if any(stride < 0 for stride in array.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array with array.copy().)")
    if any(stride % array.itemsize for stride in array.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. "
                         "Copy the numpy array to reallocate the memory.")
    if not array.dtype.isnative:
        raise ValueError(f"from_numpy cannot share an array of dtype {array.dtype.str!r}, whose "
                         "bytes are in the other byte order; use gpuaccel.tensor(array) for a "
                         "copy in this machine's order")
    if not array.flags.writeable:
        raise ValueError("from_numpy cannot share a read-only array (a tensor sharing it could "
                         "be written in place); use gpuaccel.tensor(array) for a copy")
    # The array's own dtype, float64 included (a float64 tensor sharing its memory, as torch's).
    own_dtype = "float64" if array.dtype == np.float64 else None
    return _C.tensor_from_numpy(array, "cpu", own_dtype, False)


def full(shape, fill_value, dtype=None, device=None):
    dtype = dtype or (float32 if isinstance(fill_value, float) else
                      "bool" if isinstance(fill_value, bool) else
                      "int64" if isinstance(fill_value, numbers.Integral) else float32)
    shape = _shape_arg((shape,) if isinstance(shape, int) else tuple(shape))
    name = _dtype_name(dtype)
    if name in INTEGER_NAMES and not isinstance(fill_value, float):
        # Exact (a float carries only 53 bits) and range-checked: 300 into uint8 is refused,
        # not saturated.
        out = _C.tensor_full(shape, 0.0, name, _device_name(device))
        _C.copy_into(_promotion.as_assigned_value(fill_value, out), out)
        return out
    return _C.tensor_full(shape, float(fill_value), name, _device_name(device))


def zeros(*shape, dtype=float32, device=None):
    return _C.tensor_full(_shape_arg(shape), 0.0, _dtype_name(dtype), _device_name(device))


def ones(*shape, dtype=float32, device=None):
    return _C.tensor_full(_shape_arg(shape), 1.0, _dtype_name(dtype), _device_name(device))


def zeros_like(t, dtype=None):
    return _C.tensor_full(list(t.shape), 0.0, _dtype_name(dtype) or t._dtype_name, t._device_name)


def ones_like(t, dtype=None):
    return _C.tensor_full(list(t.shape), 1.0, _dtype_name(dtype) or t._dtype_name, t._device_name)


def arange(start, end=None, step=1, dtype=None, device=None):
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_int = all(isinstance(v, numbers.Integral) for v in (start, end, step))
        dtype = "int64" if is_int else float32
    return _C.tensor_arange(float(start), float(end), float(step), _dtype_name(dtype),
                            _device_name(device))


def rand(*shape, dtype=float32, device=None):
    """Uniform [0, 1) numbers from the counter-based generator (``gpuaccel.random.set_seed``)."""
    return _C.tensor_random("uniform", _shape_arg(shape), _dtype_name(dtype), _device_name(device))


def randn(*shape, dtype=float32, device=None):
    """Standard normal numbers; the same seed gives the same numbers on every device."""
    return _C.tensor_random("normal", _shape_arg(shape), _dtype_name(dtype), _device_name(device))


# ---- operators and methods ----

# The one conversion of binary-op operands (numbers, NumPy arrays, lists) for every face; the
# dtype rule is PyTorch's, owned by the C++ core (see _promotion.py and docs/ops.md).
_operand = _promotion.as_operand


def _binary(op, reflected=False):
    def method(self, other):
        other = _operand(other, self, op)
        if other is NotImplemented:
            return NotImplemented
        return _C.binary(op, other, self) if reflected else _C.binary(op, self, other)
    method.__name__ = f"__{'r' if reflected else ''}{op}__"
    return method


def _matmul(self, other):
    other = _operand(other, self)
    if other is NotImplemented:
        return NotImplemented
    return integer_or_float_matmul(self, other)


def _rmatmul(self, other):
    other = _operand(other, self)
    if other is NotImplemented:
        return NotImplemented
    return integer_or_float_matmul(other, self)


def _normalize_index(index, ndim):
    if not isinstance(index, tuple):
        index = (index,)
    if any(i is Ellipsis for i in index):
        pos = index.index(Ellipsis)
        # The ellipsis stands for every dimension the other (non-None) entries leave.
        used = sum(1 for i in index if i is not None and i is not Ellipsis)
        index = index[:pos] + (slice(None),) * max(ndim - used, 0) + index[pos + 1:]
    return index


def _is_scalar_index(item):
    """An int, or what stands for one: a NumPy integer or 0-d integer array
    (``tf.argmax(v).numpy()``), a 0-d integer tensor (TF and torch index with these)."""
    if isinstance(item, bool) or (isinstance(item, (Tensor, np.ndarray)) and item.ndim != 0):
        return False
    if isinstance(item, (Tensor, np.ndarray, np.integer)):
        return (item._dtype_name in INTEGER_NAMES if isinstance(item, Tensor)
                else item.dtype.kind in "iu")
    return isinstance(item, numbers.Integral)


def _getitem(self, index):
    """Basic indexing (ints or 0-d integer tensors, slices with positive steps, None, ...) as
    views."""
    index = _normalize_index(index, self.ndim)
    result = self
    dim = 0
    specs = []
    picks = []  # (dim in sliced tensor, index) to select afterwards
    new_axes = []
    for item in index:
        if item is None:
            new_axes.append(len(specs) - len(picks) + len(new_axes))
            continue
        if isinstance(item, Tensor) and item.ndim == 0 and item._dtype_name != "bool":
            item = _index(item)  # torch: a 0-d integer tensor indexes as its int
        if dim >= self.ndim:
            raise IndexError(f"too many indices for a tensor of dimension {self.ndim}")
        size = self.shape[dim]
        if isinstance(item, slice):
            start, stop, step = item.indices(size)
            if step <= 0:
                raise ValueError("negative or zero slice steps are not supported; use flip")
            # a step past the dimension takes only `start`, as size does; a huge one
            # (2**70) would not fit the binding's int64
            specs.append((start, stop, min(step, max(size, 1))))
        elif _is_scalar_index(item):
            i = operator.index(item)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
            i %= size
            specs.append((i, i + 1, 1))
            picks.append(dim)
        else:
            raise TypeError(f"only integers, slices, None and ... are valid indices, got {item!r}")
        dim += 1
    if specs:
        result = _C.slice(result, specs)
    if picks:
        shape = [s for d, s in enumerate(result.shape) if d not in picks]
        result = _C.reshape(result, shape)
    for axis in new_axes:
        result = _C.expand_dims(result, axis)
    return result


def _setitem(self, index, value):
    # Assignment is not recorded by autograd, so refuse it where it would silently give wrong
    # gradients (torch raises for a leaf that requires grad; we cannot version saved tensors).
    if _C.grad_mode_enabled():
        if self.requires_grad:
            raise RuntimeError("a tensor that requires grad (or is part of a graph) cannot be "
                               "assigned to in place; do it under `with gpuaccel.no_grad():`")
        if isinstance(value, Tensor) and value.requires_grad:
            raise RuntimeError("assigning a tensor that requires grad into another is not "
                               "differentiable here; use value.detach()")
    target = _getitem(self, index)
    _C.copy_into(_promotion.as_assigned_value(value, target), target)


def _tensor_device(self):
    """PyTorch's answer: the one CPU is ``device(type='cpu')`` (no index, so it equals
    ``torch.device('cpu')``), a GPU ``device(type='cuda', index=0)``; a second logical CPU keeps
    its index."""
    if self._device_type.lower() == "cpu" and self._device_index == 0:
        return _device_class("cpu")
    return _device_class(self._device_name)


def _numpy(self):
    """The tensor as a NumPy array. On the CPU it shares the tensor's memory (PyTorch's
    documented ``t.numpy()``: a change to one shows in the other; the array keeps the tensor
    alive); a GPU tensor, a bfloat16 one and a ``Variable`` give a copy (TF's ``.numpy()`` of a
    GPU tensor or a variable reads its value). A tensor that requires grad (a loss a
    GradientTape recorded, which TensorFlow code reads with ``loss.numpy()`` in every custom
    training loop) gives a copy of its values, as TF's does; PyTorch would ask for
    ``.detach().numpy()`` there, but the two faces share this tensor and TF's answer breaks no
    PyTorch program."""
    is_variable = getattr(self, "_is_variable", False)
    if is_variable or self.requires_grad or self._device_type != "CPU" or \
            self._dtype_name == "bfloat16" or self.numel() == 0:
        return self._numpy()
    # The buffer protocol's view (shape, strides, dtype) of the tensor's storage; NumPy holds
    # the memoryview, which holds the tensor.
    return np.asarray(memoryview(self))


def _array(self, dtype=None, copy=None):
    out = self._numpy()
    return out.astype(dtype) if dtype is not None else out


def _to(self, *args, dtype=None, device=None, memory_format=None):
    for a in args:
        if isinstance(a, str) and _is_dtype_name(a):
            dtype = a
        elif isinstance(a, str) and _is_foreign_dtype_name(a):
            raise ValueError(_dtype_as_device_message(a))  # not a device name either
        elif isinstance(a, (str, _device_class)) or hasattr(a, "name") and not _is_dtype_like(a):
            device = a
        else:
            dtype = a
    out = self
    if dtype is not None:
        out = _C.cast(out, _dtype_name(dtype))
    if device is not None:
        out = _C.to_device(out, _device_name(device))
    if memory_format is not None:
        out = _torch_memory_format.to_memory_format(out, memory_format, "to")
    return out


def _is_foreign_dtype_name(text):
    """A dtype name NumPy knows ('uint16', 'complex64') that gpuaccel lacks: t.to() would
    otherwise read it as a device name."""
    try:
        return np.dtype(text).kind in "fciub"
    except (TypeError, ValueError):
        return False


def _foreign_dtype_message(text):
    kind = np.dtype(text).kind
    instead = {"f": "float32", "c": "float32 (gpuaccel has no complex dtypes)",
               "i": "int32 or int64", "u": "uint8 or int32", "b": "bool"}.get(kind, "float32")
    return (f"t.to({text!r}): {text!r} is a dtype that gpuaccel does not have (its dtypes: "
            f"{', '.join(_C.dtype_names())}); use {instead} instead, e.g. "
            f"t.to('{instead.split()[0]}') or t.to(gpuaccel.{instead.split()[0]})")


def _dtype_as_device_message(text):
    if _is_dtype_name(text):
        return (f"{text!r} is a dtype, not a device: pass it as dtype= (t.to(dtype={text!r})); "
                "devices are named like 'cpu', 'cuda:0' or '/GPU:0'")
    return _foreign_dtype_message(text) + "; devices are named like 'cpu', 'cuda:0' or '/GPU:0'"


def _is_dtype_name(text):
    try:
        as_dtype(text)
        return True
    except (ValueError, TypeError):
        return False


def _is_dtype_like(obj):
    try:
        as_dtype(obj)
        return True
    except (ValueError, TypeError):
        return False


def _repr(self):
    """PyTorch's layout of the values (_tensor_print, torch.set_printoptions); the suffix always
    names the dtype, which PyTorch leaves out for its defaults, since TensorFlow-face code reads
    the same repr and its float32/int32 defaults differ from torch's."""
    # half precision prints through float32, as PyTorch's (NumPy formats ml_dtypes' bfloat16
    # like an integer)
    plain = self if self._dtype_name not in ("bfloat16", "float16") else \
        _C.cast(_C.detach(self), "float32")
    prefix = "tensor("
    suffixes = []
    if self.numel() == 0 and self.ndim != 1:
        suffixes.append(f"size={tuple(self.shape)}")
    suffixes.append(f"dtype={self._dtype_name}")
    if self._device_type != "CPU" or self._device_index != 0:
        suffixes.append(f"device='{self._device_name}'")
    if self._grad_fn_name:
        suffixes.append(f"grad_fn=<{self._grad_fn_name}Backward>")
    elif self.requires_grad:
        suffixes.append("requires_grad=True")
    return _tensor_print.add_suffixes(
        prefix + _tensor_print.format_values(plain._numpy(), len(prefix)), suffixes, len(prefix))


def _reduce(op):
    def method(self, axis=None, keepdims=False, dim=None, keepdim=None):
        if dim is not None:
            axis = dim
        if keepdim is not None:
            keepdims = keepdim
        return _C.reduce(op, self, axis, keepdims)
    method.__name__ = op
    return method


def _squeeze(self, dim=None):
    """Size-1 axes removed: all of them (dim=None), one, or a tuple (() removes none). As in
    torch, a named axis whose size is not 1 stays (``rand(2, 2).squeeze(0)`` is a no-op), an
    axis outside the rank is an IndexError and an axis named twice a ValueError; a 0-d tensor
    has no axis to name (the core's error)."""
    if dim is None:
        return _C.squeeze(self, [])
    dims = [check_int(d, "dim") for d in (dim if isinstance(dim, (list, tuple)) else [dim])]
    if not dims:
        return _C.reshape(self, list(self.shape))
    if self.ndim == 0:
        return _C.squeeze(self, dims)
    for d in dims:
        if not -self.ndim <= d < self.ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-self.ndim}, {self.ndim - 1}], but got {d})")
    if len({d % self.ndim for d in dims}) != len(dims):
        raise ValueError(f"squeeze: dim {dims} names an axis more than once (each axis may "
                         f"appear once)")
    ones = [d for d in dims if self.shape[d] == 1]
    return _C.squeeze(self, ones) if ones else _C.reshape(self, list(self.shape))


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """PyTorch's ``Tensor.backward``: accumulates into ``.grad`` of the leaves (or of ``inputs``)
    and frees the graph's saved state unless ``retain_graph`` (default: ``create_graph``)."""
    if create_graph:
        raise NotImplementedError(
            "backward(create_graph=True) is not supported: gpuaccel's backward functions are not "
            "recorded, so higher-order gradients cannot be taken; use create_graph=False")
    if retain_graph is None:
        retain_graph = bool(create_graph)
    targets = []
    if inputs is not None:
        targets = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        if not targets:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        for t in targets:
            if not isinstance(t, Tensor):
                raise TypeError(f"backward(inputs=...) takes tensors, got {type(t).__name__}")
            if not t.requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False "
                                   "(backward(inputs=...) accumulates only into tensors that "
                                   "require grad)")
    _C.backward(self, gradient, bool(retain_graph), targets)
    _backward_callbacks.run_queued()  # e.g. DistributedDataParallel's gradient all-reduce


def _item(self):
    if self.numel() != 1:
        raise ValueError(f"only one-element tensors can be converted to Python scalars, "
                         f"got shape {tuple(self.shape)}")
    return self._numpy().reshape(()).item()


def _index(self):
    """``operator.index(t)``, so ``names[logits.argmax()]`` and ``range(t)`` take an integer
    tensor: torch's rule (an integer or bool tensor of one element, of any shape; TF's
    EagerTensor takes its integer scalars too), and torch's TypeError for anything else."""
    integral = self._dtype_name == "bool" or np.issubdtype(np.dtype(self._dtype_name), np.integer)
    if not integral or self.numel() != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index"
                        f" (got dtype {self._dtype_name}, shape {tuple(self.shape)})")
    return int(self._numpy().reshape(()).item())


def _format(self, format_spec):
    """``f'{loss:0.2f}'``: a 0-d tensor formats as its Python scalar (TF's EagerTensor and
    torch.Tensor both do); any other tensor takes only the empty spec (its str), and a spec is
    refused with the TypeError NumPy and torch raise."""
    if self.ndim == 0:
        value = _item(self)
        # ml_dtypes' bfloat16 scalar does not take float format specs
        return format(float(value) if self._dtype_name == "bfloat16" else value, format_spec)
    if format_spec:
        raise TypeError(f"unsupported format string passed to Tensor.__format__ "
                        f"(format spec {format_spec!r} needs a 0-d tensor; this one has shape "
                        f"{tuple(self.shape)}: format t.item() or index one element)")
    return str(self)


def _pickle_reduce(self):
    """How pickle (a multiprocessing Queue, ``mp.spawn``'s args) carries a tensor: its values,
    dtype, device, ``requires_grad`` and Python attributes (``nn.Parameter``'s mark). The copy is
    a new leaf, as PyTorch's pickled tensors are: a graph does not cross processes."""
    return (_unpickle_tensor, (_C.detach(self)._numpy().copy(), self._dtype_name,
                               self._device_name, bool(self.requires_grad), dict(vars(self))))


def _unpickle_tensor(array, dtype_name, device_name, requires_grad, attributes):
    out = _C.tensor_from_numpy(np.asarray(array, order="C"), device_name, dtype_name, True)
    for name, value in attributes.items():
        setattr(out, name, value)
    if requires_grad:
        out.requires_grad = True
    return out


def _install():
    T = Tensor
    for op in ("add", "sub", "mul", "pow"):
        setattr(T, f"__{op}__", _binary(op))
        setattr(T, f"__r{op}__", _binary(op, reflected=True))
    T.__truediv__ = _binary("div")
    T.__rtruediv__ = _binary("div", reflected=True)
    T.__matmul__ = _matmul
    # ndarray (op) tensor defers to the tensor's reflected operator and gives a tensor, as torch.
    T.__array_priority__ = 1000
    T.__rmatmul__ = _rmatmul
    T.__neg__ = lambda self: _C.unary("neg", self)
    T.__abs__ = lambda self: _C.unary("abs", self)
    T.__gt__ = _binary("greater")
    T.__lt__ = _binary("less")
    T.__getitem__ = _getitem
    T.__setitem__ = _setitem
    T.__len__ = lambda self: self.shape[0] if self.ndim else (_ for _ in ()).throw(
        TypeError("len() of a 0-d tensor"))
    T.__repr__ = _repr
    T.__str__ = _repr
    T.__format__ = _format
    T.__reduce__ = _pickle_reduce
    T.__array__ = _array
    T.__float__ = lambda self: float(_item(self))
    T.__int__ = lambda self: int(_item(self))
    T.__index__ = _index
    T.__bool__ = lambda self: bool(_item(self))
    T.numpy = _numpy
    T.item = _item
    T.tolist = lambda self: self._numpy().tolist()
    T.to = _to
    T.cpu = lambda self: _C.to_device(self, "cpu")
    T.cuda = lambda self, device=None: _C.to_device(self, "cuda" if device is None else f"cuda:{int(device)}")
    T.dtype = property(lambda self: as_dtype(self._dtype_name))
    T.device = property(_tensor_device)
    T.size = lambda self, dim=None: tuple(self.shape) if dim is None else self.shape[dim]
    T.dim = lambda self: self.ndim
    T.reshape = lambda self, *shape: _C.reshape(self, _shape_arg(shape))
    T.view = T.reshape
    T.flatten = lambda self: _C.reshape(self, [-1])
    T.permute = lambda self, *dims: _C.permute(self, list(dims[0]) if len(dims) == 1 and isinstance(
        dims[0], (list, tuple)) else list(dims))
    T.transpose = lambda self, dim0=-2, dim1=-1: _C.transpose(self, dim0, dim1)
    T.T = property(lambda self: _C.permute(self, list(range(self.ndim))[::-1]))
    T.contiguous = _torch_memory_format.contiguous
    T.is_contiguous = _torch_memory_format.is_contiguous
    T.stride = _torch_memory_format.stride
    T.unsqueeze = lambda self, dim: _C.expand_dims(self, check_int(dim, "dim"))
    T.squeeze = _squeeze
    for name in ("exp", "log", "sqrt", "rsqrt", "abs", "square", "reciprocal", "relu", "sigmoid",
                 "tanh"):
        setattr(T, name, (lambda op: lambda self: _C.unary(op, self))(name))
    for name in ("sum", "mean", "max", "min", "argmax", "argmin"):
        setattr(T, name, _reduce(name))
    T.backward = _backward
    T.detach = lambda self: _C.detach(self)
    T.clone = lambda self: _C.clone(self)
    T.matmul = _matmul
    T.float = lambda self: _C.cast(self, "float32")
    T.half = lambda self: _C.cast(self, "float16")
    T.double = lambda self: _C.cast(self, "float64")
    T.char = lambda self: _C.cast(self, "int8")
    T.short = lambda self: _C.cast(self, "int16")
    T.bfloat16 = lambda self: _C.cast(self, "bfloat16")
    T.grad_fn = property(lambda self: self._grad_fn_name)


_install()


# ---- autograd front doors ----

class no_grad:
    """``with gpuaccel.no_grad():`` — ops inside record no gradients (torch.no_grad); also a
    decorator (``@gpuaccel.no_grad()``)."""

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with no_grad():
                return fn(*args, **kwargs)
        return wrapper

    def __enter__(self):
        self._previous = _C.grad_mode_enabled()
        _C.set_grad_mode_enabled(False)
        return self

    def __exit__(self, *exc):
        _C.set_grad_mode_enabled(self._previous)
        return False


_active_tapes = threading.local()


def tape_active():
    """Whether a GradientTape is recording on this thread, or the C++ step is running Python
    code whose gradients it takes (recording_for_step): keras layers and models record their
    graph only then, as TF's eager mode does."""
    return getattr(_active_tapes, "depth", 0) > 0


class recording_for_step:
    """While the C++ training step runs a Python ``call()`` (traced once, or eager), its layers
    and models record as under a GradientTape: the step differentiates what they compute."""

    def __enter__(self):
        _active_tapes.depth = getattr(_active_tapes, "depth", 0) + 1
        return self

    def __exit__(self, *exc):
        _active_tapes.depth -= 1
        return False


class GradientTape:
    """TensorFlow's ``tf.GradientTape``: records ops on watched tensors inside ``with``.

    Tensors with ``requires_grad=True`` (e.g. a ``gpuaccel.Variable``) are watched
    automatically, like TF's trainable variables; ``tape.watch(t)`` adds others. A tape can
    compute gradients once unless ``persistent=True``."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._id = None
        self._used = False

    def __enter__(self):
        self._id = _C.push_tape()
        _active_tapes.depth = getattr(_active_tapes, "depth", 0) + 1
        return self

    def __exit__(self, *exc):
        _C.pop_tape(self._id)
        _active_tapes.depth -= 1
        return False

    def watch(self, tensor):
        if self._id is None:
            raise RuntimeError("[GradientTape.watch] the tape is not recording; call watch() "
                               "inside its `with` block")
        for t in (tensor if isinstance(tensor, (list, tuple)) else [tensor]):
            _C.tape_watch(self._id, t)

    def gradient(self, target, sources, output_gradients=None):
        """Gradients of ``target`` (a tensor or a nested structure of them, whose gradients add
        up) with respect to ``sources``, returned in the structure of ``sources``: a tensor, a
        list, or a dict such as ``{'w': w, 'b': b}`` (TF's rule, ``tf.nest`` order)."""
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one set "
                               "of gradients (or jacobians)")
        self._used = True
        source_list = nest.flatten(sources)
        for source in source_list:
            if not isinstance(source, Tensor):
                raise TypeError(f"[GradientTape.gradient] sources must be tensors or variables "
                                f"(or a list, tuple or dict of them), got "
                                f"{type(source).__name__} {source!r}")
        targets = nest.flatten(target)
        seeds = (nest.flatten(output_gradients) if nest.is_nested(output_gradients)
                 else [output_gradients] * len(targets))
        grads = _C.compute_gradients(list(targets), list(seeds), source_list)
        return nest.pack_sequence_as(sources, list(grads))


def Variable(initial_value, trainable=True, dtype=None, name=None):
    """A tensor that gradient tapes watch automatically (``requires_grad`` when trainable and
    floating point: TensorFlow's ``tf.Variable(1)``, an int32 counter, has no gradient)."""
    t = tensor(initial_value, dtype=dtype or _promotion.python_integer_dtype(initial_value))
    if trainable and t._dtype_name in FLOATING_NAMES:
        t.requires_grad = True
    t._is_variable = True
    # TF's variable attributes: tf.Module.trainable_variables filters on `trainable` (an int
    # variable counts as trainable there too), and TF names an unnamed one 'Variable:0'.
    t.trainable = bool(trainable)
    t.name = f"{name or 'Variable'}:0"
    return t


def matmul(a, b):
    return _C.matmul(a, b)


def set_seed(seed):
    """``gpuaccel.random.set_seed``: restarts the global counter-based generator."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an int, got {type(seed).__name__} {seed!r}")
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed must be in [0, 2**64 - 1], got {seed!r}")
    _C.set_random_seed(int(seed))
