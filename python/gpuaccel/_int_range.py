"""One owner for the rule "an integer argument must fit the C++ type it becomes".

Sizes, counts, seeds and byte counts reach the C++ core as int64 (a few as int32). A Python int
does not stop at 2**63, so every frontend that hands one over checks it first, here, and a
value that does not fit is refused with one message format naming the argument, the value and
the allowed range::

    ValueError: filters must be in [1, 2**63 - 1], got 9223372036854775808

instead of wrapping around to a small number or leaking pybind11's conversion text.
"""
import numbers

import numpy as np

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

_BOUND_NAMES = {INT64_MIN: "-2**63", INT64_MAX: "2**63 - 1", INT32_MIN: "-2**31",
                INT32_MAX: "2**31 - 1"}


def _bound(value):
    return _BOUND_NAMES.get(value, str(value))


def range_message(name, value, minimum=INT64_MIN, maximum=INT64_MAX):
    """The shared message: ``name`` (the argument as the caller wrote it), the allowed range
    and the value received."""
    return f"{name} must be in [{_bound(minimum)}, {_bound(maximum)}], got {value!r}"


def check_range(value, name, minimum=INT64_MIN, maximum=INT64_MAX, error=ValueError):
    """``value`` (an int already) unchanged when ``minimum <= value <= maximum``, else
    ``error`` (ValueError by default) with the shared message."""
    if not minimum <= value <= maximum:
        raise error(range_message(name, value, minimum, maximum))
    return value


def is_integer(value):
    """A Python or NumPy integer, not a bool (True is not a count)."""
    return isinstance(value, (numbers.Integral, np.integer)) and \
        not isinstance(value, (bool, np.bool_))


def check_int(value, name, minimum=INT64_MIN, maximum=INT64_MAX, error=ValueError):
    """``value`` as a Python int: a TypeError when it is not an integer (1.5, '2', True), else
    ``check_range``'s verdict."""
    if not is_integer(value):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    return check_range(int(value), name, minimum, maximum, error)
