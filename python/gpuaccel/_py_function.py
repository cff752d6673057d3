"""``tf.py_function`` and ``tf.numpy_function``: Python code inside a TF program.

Why they are simple here: in TensorFlow they exist to run Python from a traced graph (a
``Dataset.map`` function, a ``tf.function``). gpuaccel runs every op eagerly, so both call
``func`` at once: ``py_function`` with the inputs as tensors (so gradients flow through the
gpuaccel ops ``func`` uses, as TF's py_function is differentiable), ``numpy_function`` with NumPy
arrays (no gradient, as in TF). What stays TF's is the contract on the results: they are
converted to ``Tout`` (one dtype, or a list of dtypes giving a list of tensors) and a result
that does not fit its dtype is an InvalidArgumentError, as TF's op reports it in a Dataset.map.
An exception raised by ``func`` reaches the caller unchanged (TF wraps it in UnknownError).
"""
import numbers

import numpy as np

from . import errors
from ._convert import convert_to_tensor
from ._host_strings import HostString, is_host_string, string_leaf
from ._tensor import Tensor, tensor as _to_tensor
from .dtypes import as_dtype


def _check_call(func, inp, Tout, op):
    if not callable(func):
        raise ValueError(f"Expected func to be callable. Received func={func!r} of type "
                         f"{type(func)}.")
    if not isinstance(inp, (list, tuple)):
        raise TypeError(f"{op}: inp must be a list of the arguments of func, got "
                        f"{type(inp).__name__}")
    if Tout is None:
        raise TypeError(f"{op}: missing required argument 'Tout' (the dtype of func's result, "
                        "or a list of dtypes for several results)")


def _results(value, Tout, op):
    """(results to convert, dtypes, whether to return a list) for ``func``'s ``value``."""
    if not isinstance(Tout, (list, tuple)):
        return [value], [as_dtype(Tout)], False
    dtypes = [as_dtype(t) for t in Tout]
    if value is None and not dtypes:
        return [], [], True
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if len(values) != len(dtypes):
        raise errors.InvalidArgumentError(
            f"{op}: func returns {len(values)} values, but expects to see {len(dtypes)} values.",
            "EagerPyFunc")
    return values, dtypes, True


def _mismatch(index, got, dtype, op):
    return errors.InvalidArgumentError(
        f"{op}: {index}-th value returned by func is {got}, but expects {dtype.name}",
        "EagerPyFunc")


def _as_result(value, dtype, index, op):
    """``value`` as a tensor of ``dtype``: a tensor must already be of it; a number or an array
    converts when its values fit (1.7 does not fit int32)."""
    if isinstance(value, Tensor):
        if value.dtype != dtype:
            raise _mismatch(index, value.dtype.name, dtype, op)
        return value
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise _mismatch(index, array.dtype, dtype, op)
    if (not dtype.is_floating_point and array.dtype.kind == "f"
            and not np.array_equal(array, np.trunc(array))):
        raise _mismatch(index, array.dtype, dtype, op)
    return convert_to_tensor(array if array.ndim else value, dtype=dtype)


def py_function(func=None, inp=None, Tout=None, name=None):
    """``tf.py_function``: ``func(*inp)`` called now, with the inputs as tensors (strings as
    HostString); its result converted to ``Tout``. Gradients flow through the gpuaccel ops that
    ``func`` uses. With ``func`` omitted it is a decorator (``@tf.py_function(Tout=...)``)."""
    if func is None:
        return lambda f: (lambda *args: py_function(f, list(args), Tout, name))
    _check_call(func, inp, Tout, "py_function")
    args = [v if isinstance(v, (Tensor, HostString)) else
            string_leaf(v) if is_host_string(v) else convert_to_tensor(v) for v in inp]
    values, dtypes, as_list = _results(func(*args), Tout, "py_function")
    out = [_as_result(v, d, i, "py_function") for i, (v, d) in enumerate(zip(values, dtypes))]
    return out if as_list else out[0]


def _as_array(value):
    """An input of numpy_function as func sees it in TF: a NumPy array (a string is a 0-d object
    array of bytes)."""
    if isinstance(value, Tensor):
        return value.numpy()
    if isinstance(value, (str, bytes)):
        return np.array(string_leaf(value).numpy(), dtype=object)
    return np.asarray(value)


def numpy_function(func, inp, Tout, stateful=True, name=None):
    """``tf.numpy_function``: ``func(*inp)`` called now, with the inputs as NumPy arrays; its
    results (arrays or numbers) become tensors of ``Tout``. A float64 result becomes float32
    when ``Tout`` is float32 (gpuaccel has no float64). No gradient flows through it (as TF)."""
    _check_call(func, inp, Tout, "numpy_function")
    values, dtypes, as_list = _results(func(*[_as_array(v) for v in inp]), Tout,
                                       "numpy_function")
    out = []
    for index, (value, dtype) in enumerate(zip(values, dtypes)):
        if isinstance(value, (numbers.Number, Tensor)) or dtype.name == "bfloat16":
            # (NumPy has no bfloat16: such a result converts as py_function's do)
            out.append(_as_result(value, dtype, index, "numpy_function"))
            continue
        array = np.asarray(value)
        if array.dtype == np.float64 and dtype.name == "float32":
            array = array.astype(np.float32)
        if array.dtype != np.dtype(dtype.name):
            raise _mismatch(index, array.dtype, dtype, "numpy_function")
        out.append(_to_tensor(array))
    return out if as_list else out[0]
