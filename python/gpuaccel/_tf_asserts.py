"""TensorFlow's run-time checks: ``tf.assert_equal``/``assert_less``/``assert_greater``,
``tf.assert_rank``, ``tf.ensure_shape``, and the broadcast-shape helpers.

TF's eager asserts return None when the condition holds and otherwise raise
``InvalidArgumentError`` with a message listing the first failing entries; the text here is
built the same way (check_ops._make_assert_msg_data), so a course notebook's expected error reads
the same.
"""
import numpy as np

from . import _C, errors
from ._convert import as_tensors, convert_to_tensor

__all__ = ["Assert", "assert_equal", "assert_less", "assert_greater", "assert_rank", "ensure_shape",
           "broadcast_dynamic_shape", "broadcast_static_shape"]


def _shape_text(shape):
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _broadcast(shape_x, shape_y, error):
    """NumPy's broadcast of two shapes, or ``error(text)`` raised when they do not broadcast."""
    x, y = list(shape_x), list(shape_y)
    out = []
    for i in range(1, max(len(x), len(y)) + 1):
        a = x[-i] if i <= len(x) else 1
        b = y[-i] if i <= len(y) else 1
        if a != b and 1 not in (a, b):
            raise error(x, y)
        out.append(b if a == 1 else a)
    return out[::-1]


def _failure_report(symbol, x, y, holds, summarize):
    """TF's eager assert message lines after 'Condition x <symbol> y did not hold.'."""
    x_np, y_np = x.numpy(), y.numpy()
    lines = [f"Condition x {symbol} y did not hold."]
    if summarize > 0:
        if x_np.shape == y_np.shape and x_np.ndim:
            failing = ~holds
            indices = np.argwhere(failing)
            count = min(summarize, indices.shape[0])
            lines += [f"Indices of first {count} different values:", str(indices[:count]),
                      "Corresponding x values:", str(x_np[failing].reshape(-1)[:count]),
                      "Corresponding y values:", str(y_np[failing].reshape(-1)[:count])]
        x_flat, y_flat = x_np.reshape(-1), y_np.reshape(-1)
        x_count, y_count = min(x_flat.size, summarize), min(y_flat.size, summarize)
        lines += [f"First {x_count} elements of x:", str(x_flat[:x_count]),
                  f"First {y_count} elements of y:", str(y_flat[:y_count])]
    return lines


def _binary_assert(symbol, comparison):
    def check(x, y, message=None, summarize=None, name=None):
        x, y = as_tensors(x, y)
        _broadcast(x.shape, y.shape, lambda a, b: errors.InvalidArgumentError(
            f"Incompatible shapes: {_shape_text(a)} vs. {_shape_text(b)}"))
        holds = _C.binary(comparison, x, y).numpy()
        if holds.all():
            return None
        limit = 3 if summarize is None else (10 ** 9 if summarize < 0 else summarize)
        lines = _failure_report(symbol, x, y, np.broadcast_to(holds, x.shape), limit)
        raise errors.InvalidArgumentError("\n".join(([str(message)] if message else []) + lines))

    check.__name__ = f"assert_{comparison}" if comparison != "equal" else "assert_equal"
    check.__doc__ = (f"``tf.{check.__name__}(x, y)``: None when x {symbol} y holds for every "
                     f"entry (broadcast), else InvalidArgumentError listing the failures.")
    return check


assert_equal = _binary_assert("==", "equal")
assert_less = _binary_assert("<", "less")
assert_greater = _binary_assert(">", "greater")


def _summarized(value, summarize):
    """One data entry of an eager tf.Assert message: a tensor's first entries joined by ', '
    (with '...' when cut), a string as TF shows its bytes."""
    if isinstance(value, str):
        return str(value.encode())
    array = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
    if array.ndim == 0:
        return str(array) if summarize != 0 else ""
    flat = array.reshape(-1)
    limit = flat.size if summarize is not None and summarize < 0 else (summarize or 3)
    items = [str(v) for v in flat[:limit]] + (["..."] if limit < flat.size else [])
    return ", ".join(items)


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 -- TF's name
    """``tf.debugging.Assert``: None when ``condition`` holds, else InvalidArgumentError with
    the summarized ``data`` (eager TF's message)."""
    if not bool(convert_to_tensor(condition)):
        raise errors.InvalidArgumentError(
            f"Expected '{condition}' to be true. Summarized data: " +
            "\n".join(_summarized(value, summarize) for value in data))
    return None


def assert_rank(x, rank, message=None, name=None):
    """``tf.assert_rank``: None when ``x`` has rank ``rank``, else TF's ValueError."""
    x = convert_to_tensor(x)
    rank = int(convert_to_tensor(rank)) if not isinstance(rank, int) else rank
    if x.ndim != rank:
        raise ValueError(f"{message or ''}Tensor {name or ''} must have rank {rank}.  Received "
                         f"rank {x.ndim}, shape {tuple(x.shape)}")
    return None


def ensure_shape(x, shape, name=None):
    """``tf.ensure_shape``: ``x`` itself when its shape matches ``shape`` (None entries, or a
    None shape, match anything), else InvalidArgumentError naming both."""
    x = convert_to_tensor(x)
    if shape is None:
        return x
    expected = [None if d is None or d == -1 else int(d) for d in shape]
    actual = list(x.shape)
    if len(expected) != len(actual) or any(e is not None and e != a
                                           for e, a in zip(expected, actual)):
        raise errors.InvalidArgumentError(
            f"Shape of tensor input {_shape_text(actual)} is not compatible with expected "
            f"shape {_shape_text(expected)}.")
    return x


def _shape_values(shape):
    values = shape.numpy() if hasattr(shape, "numpy") else np.asarray(shape)
    return [int(v) for v in np.asarray(values).reshape(-1)]


def broadcast_dynamic_shape(shape_x, shape_y):
    """``tf.broadcast_dynamic_shape``: the broadcast of two shape vectors, as a tensor of
    their integer dtype (int32 for lists)."""
    dtype = getattr(shape_x, "dtype", None)
    out = _broadcast(_shape_values(shape_x), _shape_values(shape_y),
                     lambda a, b: errors.InvalidArgumentError(
                         f"Incompatible shapes: {_shape_text(a)} vs. {_shape_text(b)}"))
    name = dtype.name if dtype is not None and dtype.name in ("int32", "int64") else "int32"
    return convert_to_tensor(np.asarray(out, dtype=name))


def broadcast_static_shape(shape_x, shape_y):
    """``tf.broadcast_static_shape``: the broadcast of two shapes, as a tuple (gpuaccel's
    shapes are tuples, not TensorShapes)."""
    return tuple(_broadcast(_shape_values(shape_x), _shape_values(shape_y), lambda a, b: ValueError(
        f"Incompatible shapes for broadcasting. Two shapes are compatible if for each dimension "
        f"pair they are either equal or one of them is 1. Received: {tuple(a)} and "
        f"{tuple(b)}.")))
