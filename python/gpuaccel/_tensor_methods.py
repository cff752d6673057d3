"""PyTorch's and TensorFlow's tensor methods beyond the basics of ``_tensor.py``: ``t()``,
``element_size()``, ``nelement()``, ``pow``/``add``/``clamp``..., the in-place ``*_`` forms,
``requires_grad_()``, ``.data``, and ``tf.Variable``'s ``assign``/``assign_add``/``assign_sub``.

In-place rules (autograd's, as torch states them): an in-place op on a tensor that requires
grad is refused while gradients are being recorded (torch allows it on non-leaf tensors by
versioning saved values, which gpuaccel does not do); under ``no_grad()`` it writes into the
tensor's memory, so ``with torch.no_grad(): w -= lr * w.grad`` updates ``w`` itself.
``assign*`` are TensorFlow's variable updates: never recorded, always allowed.
"""
import math

import numpy as np

from . import _C
from . import _array_ops
from . import _torch_functional as _F
from . import math as _math
from . import errors
from ._convert import as_tensors, convert_to_tensor
from ._tensor import Tensor, _dtype_name, _shape_arg


def _check_in_place(t, op):
    if _C.grad_mode_enabled() and t.requires_grad:
        kind = "a leaf Variable that requires grad" if t.is_leaf else "a tensor that is part of a graph"
        raise RuntimeError(f"{op}: {kind} is being used in an in-place operation; wrap the update "
                           f"in `with gpuaccel.no_grad():`")


def _write(t, value):
    """Copies ``value`` (cast to t's dtype, broadcast) into ``t``'s memory and returns ``t``."""
    value = value if isinstance(value, Tensor) else _operand(value, t)
    if value._dtype_name != t._dtype_name:
        value = _C.cast(value, t._dtype_name)
    with _no_record():
        _C.copy_into(_C.detach(value), t)
    return t


def _operand(value, like):
    return as_tensors(like, value)[1]


class _no_record:
    def __enter__(self):
        self._previous = _C.grad_mode_enabled()
        _C.set_grad_mode_enabled(False)

    def __exit__(self, *exc):
        _C.set_grad_mode_enabled(self._previous)
        return False


def _in_place(op):
    def method(self, other, *, alpha=None):
        _check_in_place(self, f"{op}_")
        if alpha is not None:
            other = _C.binary("mul", _operand(other, self), _C.scalar_like(float(alpha), self))
        return _write(self, _C.binary(op, self, _operand(other, self)))
    method.__name__ = f"{op}_"
    return method


def _unary_in_place(op):
    def method(self):
        _check_in_place(self, f"{op}_")
        return _write(self, _C.unary(op, self))
    method.__name__ = f"{op}_"
    return method


def _out_of_place(op):
    def method(self, other, *, alpha=None):
        other = _operand(other, self)
        if alpha is not None:
            other = _C.binary("mul", other, _C.scalar_like(float(alpha), other))
        return _C.binary(op, self, other)
    method.__name__ = op
    return method


def _augmented(op):
    """``t += x``: in place (for tensors of any dtype/grad state the rules above allow)."""
    def method(self, other):
        other = _operand(other, self)
        if _C.grad_mode_enabled() and (self.requires_grad or other.requires_grad):
            return _C.binary(op, self, other)  # out of place, as torch does for graph values
        return _write(self, _C.binary(op, self, other))
    method.__name__ = f"__i{op}__"
    return method


def _t(self):
    """``t.t()``: transposes a 2-D tensor; 0-D and 1-D tensors come back as they are."""
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return _C.transpose(self, 0, 1) if self.ndim == 2 else self


def _zero(self):
    _check_in_place(self, "zero_")
    return _write(self, _C.scalar_like(0.0, self))


def _fill(self, value):
    _check_in_place(self, "fill_")
    return _write(self, _C.scalar_like(float(value), self))


def _copy(self, src):
    _check_in_place(self, "copy_")
    return _write(self, convert_to_tensor(src) if not isinstance(src, Tensor) else src)


def _clamp_(self, min=None, max=None):  # noqa: A002
    _check_in_place(self, "clamp_")
    return _write(self, _array_ops.clamp(self, min, max))


def _random_(kind):
    """``uniform_(from=0, to=1)`` / ``normal_(mean=0, std=1)``."""
    def method(self, a=0.0, b=1.0):
        _check_in_place(self, f"{kind}_")
        sample = _C.tensor_random(kind, list(self.shape), self._dtype_name, self._device_name)
        scale = float(b) - float(a) if kind == "uniform" else float(b)
        sample = _C.binary("add", _C.binary("mul", sample, _C.scalar_like(scale, sample)),
                           _C.scalar_like(float(a), sample))
        return _write(self, sample)
    method.__name__ = f"{kind}_"
    return method


def _requires_grad_(self, requires_grad=True):
    self.requires_grad = bool(requires_grad)
    return self


def _get_data(self):
    return _C.detach(self)


def _reshaping_in_place(name):
    """``t.unsqueeze_(0)``, ``t.t_()``...: ``t`` itself becomes the view ``t.name(...)`` (same
    memory, new shape), as torch changes the tensor's metadata; the in-place rules above
    apply, and a leaf keeps its ``requires_grad``."""
    def method(self, *args, **kwargs):
        _check_in_place(self, name + "_")
        requires_grad = self.requires_grad
        with _no_record():
            view = _C.detach(getattr(self, name)(*args, **kwargs))
        self._rebind_(view)
        if requires_grad:
            self.requires_grad_(True)
        return self
    method.__name__ = name + "_"
    return method


def _set_data(self, value):
    with _no_record():
        _write(self, value)


def _assign(op):
    def method(self, value, use_locking=None, name=None, read_value=True):
        value = _operand(value, self)
        with _no_record():
            new = value if op is None else _C.binary(op, _C.detach(self), value)
            if tuple(new.shape) != tuple(self.shape):
                raise ValueError(f"Cannot assign value of shape {list(new.shape)} to a variable "
                                 f"of shape {list(self.shape)}")
            _write(self, new)
        return self if read_value else None
    method.__name__ = {None: "assign", "add": "assign_add", "sub": "assign_sub"}[op]
    return method


def _expand(self, *sizes):
    sizes = _shape_arg(sizes)
    lead = len(sizes) - self.ndim
    shape = [self.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes)]
    return _C.broadcast_to(self, shape)


def _repeat(self, *sizes):
    """torch's ``Tensor.repeat(*sizes)``: tf.tile after new leading axes for extra sizes."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    if len(sizes) < self.ndim:
        raise errors.InvalidArgumentError(
            f"[Repeat] sizes must have at least one entry per dimension of the tensor ({self.ndim}"
            f"), got {list(sizes)}", "Repeat")
    x = self
    for _ in range(len(sizes) - x.ndim):
        x = _C.expand_dims(x, 0)
    return _array_ops.repeat_along_axes(x, list(sizes), "sizes", "Repeat")


def _variance(self, dim=None, unbiased=True, keepdim=False, correction=None):
    axes = None if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    population = _math.reduce_variance(self, axes, keepdim)
    correction = (1 if unbiased else 0) if correction is None else correction
    if not correction:
        return population
    count = self.numel() if axes is None else int(np.prod([self.shape[a] for a in axes]))
    # torch divides by max(0, N - correction): no degrees of freedom left is inf, or NaN for a
    # constant input (0 * inf), never the population variance it used to return
    dof = count - correction
    return _C.binary("mul", population, _C.scalar_like(count / dof if dof > 0 else math.inf,
                                                        population))


def _type(self, dtype=None):
    """``t.type()``: PyTorch's legacy type name ('torch.FloatTensor'); ``t.type(dtype)`` casts,
    the dtype given as a dtype or as such a name ('torch.ShortTensor')."""
    from ._torch_functions import _TYPE_NAMES, typename
    if dtype is None:
        return typename(self)
    by_type_name = {name: d for d, name in _TYPE_NAMES.items()}
    if isinstance(dtype, str) and dtype.replace(".cuda.", ".") in by_type_name:
        moved = self.to("cuda") if ".cuda." in dtype else self.cpu() if self.is_cuda else self
        return _C.cast(moved, by_type_name[dtype.replace(".cuda.", ".")])
    return _C.cast(self, _dtype_name(dtype))


def install():
    T = Tensor
    T.t = _t
    T.element_size = lambda self: self.dtype.itemsize
    T.nelement = lambda self: self.numel()
    T.ndimension = lambda self: self.ndim
    T.get_shape = lambda self: tuple(self.shape)  # TF's t.get_shape()
    for op in ("add", "sub", "mul", "div"):
        setattr(T, op, _out_of_place(op))
        setattr(T, f"{op}_", _in_place(op))
        setattr(T, f"__i{'truediv' if op == 'div' else op}__", _augmented(op))
    for name in ("exp", "log", "sqrt", "rsqrt", "abs", "square", "reciprocal", "relu",
                 "sigmoid", "tanh", "neg"):
        setattr(T, f"{name}_", _unary_in_place(name))
    T.neg = lambda self: _C.unary("neg", self)
    T.negative = T.neg
    T.sign = lambda self: _math.sign(self)
    T.pow = lambda self, exponent: _C.binary("pow", *as_tensors(self, exponent))
    T.pow_ = _in_place("pow")
    T.mm = lambda self, other: _C.matmul(self, other)
    T.zero_ = _zero
    for name in ("unsqueeze", "squeeze", "t", "transpose", "swapaxes", "swapdims"):
        setattr(T, f"{name}_", _reshaping_in_place(name))
    T.fill_ = _fill
    T.copy_ = _copy
    T.clamp = lambda self, min=None, max=None: _array_ops.clamp(self, min, max)  # noqa: A002
    T.clip = T.clamp
    T.clamp_ = _clamp_
    T.uniform_ = _random_("uniform")
    T.normal_ = _random_("normal")
    T.requires_grad_ = _requires_grad_
    T.data = property(_get_data, _set_data)
    T.assign = _assign(None)
    T.assign_add = _assign("add")
    T.assign_sub = _assign("sub")
    T.softmax = lambda self, dim=None: _F.softmax(self, dim)
    T.log_softmax = lambda self, dim=None: _F.log_softmax(self, dim)
    T.expand = _expand
    T.repeat = _repeat
    T.split = lambda self, split_size, dim=0: _array_ops.split_by_size(self, split_size, dim)
    T.chunk = lambda self, chunks, dim=0: _array_ops.chunk(self, chunks, dim)
    T.unbind = lambda self, dim=0: _array_ops.unbind(self, dim)
    T.var = _variance
    T.std = lambda self, *args, **kwargs: _C.unary("sqrt", _variance(self, *args, **kwargs))
    T.norm = lambda self, p="fro", dim=None, keepdim=False: _C.unary("sqrt", _C.reduce(
        "sum", _C.unary("square", self), dim, keepdim)) if p in ("fro", 2) else _not_norm(p)
    T.long = lambda self: _C.cast(self, "int64")
    T.int = lambda self: _C.cast(self, "int32")
    T.bool = lambda self: _C.cast(self, "bool")
    T.type = _type
    T.type_as = lambda self, other: _C.cast(self, other._dtype_name)
    # Element-wise ==/!= as torch and TF (a bool tensor); hashing stays by identity, so
    # tensors still work as dict keys and in sets.
    T.__eq__ = _comparison(_math.equal)
    T.__ne__ = _comparison(_math.not_equal)
    T.__hash__ = object.__hash__
    T.__ge__ = lambda self, other: _math.greater_equal(self, other)
    T.__le__ = lambda self, other: _math.less_equal(self, other)
    for name in ("eq", "ne", "gt", "lt", "ge", "le"):
        fn = getattr(_math, {"eq": "equal", "ne": "not_equal", "gt": "greater", "lt": "less",
                             "ge": "greater_equal", "le": "less_equal"}[name])
        setattr(T, name, (lambda f: lambda self, other: f(self, other))(fn))
    T.allclose = _math.allclose
    T.isclose = _math.isclose


def _comparison(fn):
    def method(self, other):
        if other is None or not isinstance(other, (Tensor, np.ndarray, np.generic, int, float,
                                                   bool, list, tuple)):
            return NotImplemented  # `t == None` is False, as in torch
        return fn(self, other)
    return method


def _not_norm(p):
    raise ValueError(f"norm(p={p!r}) is not supported yet; use p='fro' (2)")
