"""``tf.function``: accepted as a decorator and kept eager.

TensorFlow traces a decorated Python function into a graph; gpuaccel runs every op eagerly (its
training loop already runs each step in C++), so the decorated function is the function itself:
Python side effects (``print``, list appends) happen on every call, not only while tracing.
``tf.print`` writes what TF's writes (its tensor summary format), at once.
docs/compatibility.md says so.
"""
import functools
import numbers

import numpy as np

from . import nest

__all__ = ["function", "print_"]

_IGNORED = ("input_signature", "autograph", "jit_compile", "reduce_retracing",
            "experimental_implements", "experimental_autograph_options",
            "experimental_attributes", "experimental_relax_shapes", "experimental_compile",
            "experimental_follow_type_hints", "name")


def function(func=None, **options):
    """``@tf.function`` / ``@tf.function(jit_compile=True)`` / ``tf.function(fn)``: returns a
    function that runs ``func`` eagerly (the options are accepted and have no effect)."""
    unknown = sorted(set(options) - set(_IGNORED))
    if unknown:
        raise TypeError(f"function() got unexpected keyword arguments {unknown}")
    if func is None:
        return lambda f: function(f, **options)
    if not callable(func):
        raise TypeError(f"tf.function expects a callable, got {type(func).__name__}")

    @functools.wraps(func)
    def eager(*args, **kwargs):
        return _as_function_outputs(func(*args, **kwargs))

    eager.python_function = func
    return eager


def _as_function_outputs(outputs):
    """What a traced TF function returns: its Python numbers and NumPy arrays become tensors
    (``return 0`` gives a tensor with ``.numpy()``), in the same structure; tensors, None and
    other objects are returned as they are."""
    from ._tensor import tensor

    def leaf(value):
        if isinstance(value, (numbers.Number, np.ndarray, np.generic)):
            return tensor(value)
        return value
    return nest.map_structure(leaf, outputs)


def _scalar_text(value):
    """One entry as TF's tensor summary writes it: bools as 1/0, integers as they are, floats
    with 6 significant digits unless that does not read back as the same float32 (then 9)."""
    if isinstance(value, np.bool_):
        return "1" if value else "0"
    if isinstance(value, np.integer):
        return str(int(value))
    single = np.float32(value)
    text = "%.6g" % single
    return text if np.isnan(single) or np.float32(text) == single else "%.9g" % single


def _tensor_text(array, summarize, depth=0):
    """TF's summary of an array: nested brackets, entries split by spaces, rows by a newline
    (and one more per extra dimension), an axis longer than 2 * summarize elided as
    first summarize ... last summarize."""
    if array.ndim == 0:
        return _scalar_text(array[()])
    n = array.shape[0]
    shown = (list(range(summarize)) + [None] + list(range(n - summarize, n))
             if 0 <= summarize and 2 * summarize < n else list(range(n)))
    if array.ndim == 1:
        return "[" + " ".join("..." if i is None else _scalar_text(array[i]) for i in shown) + "]"
    separator = "\n" * (array.ndim - 1) + " " * (depth + 1)
    return "[" + separator.join("..." if i is None else _tensor_text(array[i], summarize, depth + 1)
                                for i in shown) + "]"


def _input_text(value, summarize, top=True):
    from ._tensor import Tensor
    if isinstance(value, Tensor):
        plain = value if value._dtype_name != "bfloat16" else value.float()
        return _tensor_text(np.asarray(plain.detach().numpy()), summarize)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key!r}: {_input_text(v, summarize, False)}"
                               for key, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        items = [_input_text(v, summarize, False) for v in value]
        if isinstance(value, list):
            return "[" + ", ".join(items) + "]"
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return str(value) if top else repr(value)


def print_(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):
    """``tf.print``: the inputs (tensors, Python values, lists/tuples/dicts of them) written as
    TF writes them, tensors summarized to ``summarize`` entries per axis end (-1: all), to
    ``output_stream`` (sys.stderr by default; a stream, or 'file://path' to append to)."""
    import sys
    limit = 3 if summarize is None else (10 ** 18 if summarize < 0 else summarize)
    text = sep.join(_input_text(value, limit) for value in inputs) + end
    stream = sys.stderr if output_stream is None else output_stream
    if isinstance(stream, str) and stream.startswith("file://"):
        with open(stream[len("file://"):], "a") as file:
            file.write(text)
    elif hasattr(stream, "write"):
        stream.write(text)
        stream.flush() if hasattr(stream, "flush") else None
    elif callable(stream):  # a logging function, as TF takes one
        stream(text.rstrip("\n"))
    else:
        raise ValueError(f"output_stream must be a stream, a 'file://' path or a logging "
                         f"function, got {stream!r}")
