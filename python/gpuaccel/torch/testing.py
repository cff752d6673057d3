"""``torch.testing`` of the PyTorch face: ``assert_close``.

Why: PyTorch's tutorials check their results with ``torch.testing.assert_close(ours, expected)``
(4 tutorial files), and course exercises do the same. It is a host-side comparison, written
here with NumPy after PyTorch 1.13's rules and messages: the default tolerances by dtype, shape
and dtype checks, ``equal_nan``, nested sequences and mappings (the failing item named), and
the "Tensor-likes are not close!" report (mismatched count, greatest absolute and relative
differences and where). Differences are computed in float64 for floating inputs and in int64
(the relative one in float32) for integers, as torch's are.
"""
import collections.abc
import numbers

import numpy as np

from .._tensor import Tensor

__all__ = ["assert_close"]

# dtype name: (rtol, atol), torch 1.13's _DTYPE_PRECISIONS; other dtypes compare exactly
_PRECISIONS = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7)}


class _Mismatch(Exception):
    """A comparison failed: the exception type and the message torch would give."""

    def __init__(self, error_type, message):
        super().__init__(message)
        self.error_type = error_type


def _is_tensor_like(value):
    return isinstance(value, (Tensor, np.ndarray))


def _dtype_name(value):
    return value._dtype_name if isinstance(value, Tensor) else np.dtype(value.dtype).name


def _array(value):
    return value.numpy() if isinstance(value, Tensor) else np.asarray(value)


def _tolerances(rtol, atol, *dtype_names):
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise _Mismatch(ValueError, f"Both 'rtol' and 'atol' must be either specified or "
                                    f"omitted, but got no {missing}.")
    if rtol is not None:
        return rtol, atol
    pairs = [_PRECISIONS.get(name, (0.0, 0.0)) for name in dtype_names]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _differences(actual, expected):
    """|actual - expected| and the relative difference, as torch computes them."""
    if actual.dtype.kind == "f" or expected.dtype.kind == "f":
        actual, expected = actual.astype(np.float64), expected.astype(np.float64)
        absolute = np.abs(actual - expected)
        with np.errstate(divide="ignore", invalid="ignore"):
            return absolute, absolute / np.abs(expected)
    absolute = np.abs(actual.astype(np.int64) - expected.astype(np.int64))
    with np.errstate(divide="ignore", invalid="ignore"):
        return absolute, (absolute / np.abs(expected.astype(np.int64))).astype(np.float32)


def _difference_line(kind, value, index, tolerance, equality):
    line = f"{kind.title()} difference: {value}" if index is None else \
        f"Greatest {kind} difference: {value} at index {index}"
    return line if equality else f"{line} (up to {tolerance} allowed)"


def _report(identifier, extra, absolute, abs_index, relative, rel_index, rtol, atol):
    equality = rtol == 0 and atol == 0
    lines = [f"{identifier} are not {'equal' if equality else 'close'}!", ""]
    if extra:
        lines.append(extra)
    lines.append(_difference_line("absolute", absolute, abs_index, atol, equality))
    lines.append(_difference_line("relative", relative, rel_index, rtol, equality))
    return "\n".join(lines)


def _python(value):
    return value.item() if isinstance(value, np.generic) else value


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_dtype):
    actual_shape, expected_shape = tuple(actual.shape), tuple(expected.shape)
    if actual_shape != expected_shape:
        raise _Mismatch(AssertionError, f"The values for attribute 'shape' do not match: "
                                        f"torch.Size({list(actual_shape)}) != "
                                        f"torch.Size({list(expected_shape)}).")
    actual_dtype, expected_dtype = _dtype_name(actual), _dtype_name(expected)
    if check_dtype and actual_dtype != expected_dtype:
        raise _Mismatch(AssertionError, f"The values for attribute 'dtype' do not match: "
                                        f"torch.{actual_dtype} != torch.{expected_dtype}.")
    rtol, atol = _tolerances(rtol, atol, actual_dtype, expected_dtype)
    a, b = _array(actual), _array(expected)
    if a.dtype == np.bool_ or b.dtype == np.bool_:
        matches = a == b
    else:
        matches = np.isclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol,
                             equal_nan=equal_nan)
    if matches.all():
        return
    absolute, relative = _differences(a, b)
    if a.ndim == 0:
        raise _Mismatch(AssertionError, _report("Scalars", None, _python(absolute[()]), None,
                                                _python(relative[()]), None, rtol, atol))
    mismatches = ~matches.reshape(-1)
    absolute, relative = absolute.reshape(-1).copy(), relative.reshape(-1).copy()
    absolute[~mismatches] = 0
    relative[~mismatches] = 0
    count = int(mismatches.sum())
    extra = (f"Mismatched elements: {count} / {mismatches.size} "
             f"({count / mismatches.size:.1%})")
    abs_at, rel_at = int(np.nanargmax(absolute) if not np.isnan(absolute).any()
                         else np.argmax(np.isnan(absolute))), \
        int(np.nanargmax(relative) if not np.isnan(relative).any()
            else np.argmax(np.isnan(relative)))
    raise _Mismatch(AssertionError, _report(
        "Tensor-likes", extra, _python(absolute[abs_at]),
        tuple(int(i) for i in np.unravel_index(abs_at, a.shape)), _python(relative[rel_at]),
        tuple(int(i) for i in np.unravel_index(rel_at, a.shape)), rtol, atol))


def _compare_numbers(actual, expected, rtol, atol, equal_nan):
    if isinstance(actual, bool) or isinstance(expected, bool):
        if actual != expected:
            raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}")
        return
    is_float = isinstance(actual, float) or isinstance(expected, float)
    rtol, atol = _tolerances(rtol, atol, "float64" if is_float else "int64")
    if actual == expected or (equal_nan and actual != actual and expected != expected):
        return
    difference = abs(actual - expected)
    if difference <= atol + rtol * abs(expected):
        return
    relative = float("inf") if expected == 0 else difference / abs(expected)
    raise _Mismatch(AssertionError, _report("Scalars", None, difference, None, relative, None,
                                            rtol, atol))


def _compare(actual, expected, rtol, atol, equal_nan, check_dtype, path):
    """Raises _Mismatch (with ``path``, the failing item's index) where they differ."""
    try:
        if actual is None and expected is None:
            return
        if _is_tensor_like(actual) and _is_tensor_like(expected):
            return _compare_tensors(actual, expected, rtol, atol, equal_nan, check_dtype)
        if isinstance(actual, numbers.Number) and isinstance(expected, numbers.Number) and \
                not _is_tensor_like(actual) and not _is_tensor_like(expected):
            return _compare_numbers(actual, expected, rtol, atol, equal_nan)
    except _Mismatch as mismatch:
        if path and mismatch.error_type is AssertionError:
            where = "".join(f"[{item!r}]" for item in path)
            raise _Mismatch(AssertionError,
                            f"{mismatch}\n\nThe failure occurred for item {where}") from None
        raise
    if isinstance(actual, collections.abc.Mapping) and \
            isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            raise _Mismatch(AssertionError, f"The keys of the mappings do not match:\n"
                                            f"{sorted(actual)} != {sorted(expected)}")
        for key in actual:
            _compare(actual[key], expected[key], rtol, atol, equal_nan, check_dtype,
                     path + [key])
        return
    sequences = (collections.abc.Sequence,)
    if isinstance(actual, sequences) and isinstance(expected, sequences) and \
            not isinstance(actual, str) and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: "
                                            f"{len(actual)} != {len(expected)}")
        for index, (a, b) in enumerate(zip(actual, expected)):
            _compare(a, b, rtol, atol, equal_nan, check_dtype, path + [index])
        return
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type "
                               f"{type(actual)} and {type(expected)}.")


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Raises an AssertionError saying where ``actual`` and ``expected`` differ beyond
    ``atol + rtol * |expected|`` (the dtype's default tolerances unless both are given):
    tensors (and NumPy arrays), Python numbers, and sequences or mappings of them. ``msg``
    replaces the report (a callable receives it)."""
    try:
        _compare(actual, expected, rtol, atol, equal_nan, check_dtype, [])
    except _Mismatch as mismatch:
        text = str(mismatch)
        if msg is not None and mismatch.error_type is AssertionError:
            text = msg(text) if callable(msg) else msg
        raise mismatch.error_type(text) from None
