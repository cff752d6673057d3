"""gpuaccel._int_range, the one owner of "an integer argument must fit its C++ type": the helper
itself, and each frontend that used to carry its own check (Keras layers, Dataset arguments,
tensor shapes, keras.Input, CommunicationOptions, image windows) giving its one message
format: the argument, the allowed range and the value."""
import re

import numpy as np
import pytest

import gpuaccel
from gpuaccel import _int_range, keras


def test_check_int_accepts_integers_in_range_and_names_what_is_wrong():
    assert _int_range.check_int(np.int32(5), "count", 0) == 5
    assert type(_int_range.check_int(np.int64(5), "count", 0)) is int
    assert _int_range.check_int(2**63 - 1, "count") == 2**63 - 1
    with pytest.raises(ValueError, match=r"^count must be in \[0, 2\*\*63 - 1\], got -1$"):
        _int_range.check_int(-1, "count", 0)
    with pytest.raises(ValueError, match=rf"^count must be in \[-2\*\*63, 2\*\*63 - 1\], got "
                                         rf"{2**63}$"):
        _int_range.check_int(2**63, "count")
    with pytest.raises(ValueError, match=r"^size must be in \[1, 2\*\*31 - 1\], got 2147483648$"):
        _int_range.check_int(2**31, "size", 1, _int_range.INT32_MAX)
    for bad in (True, 1.5, "2", None):
        with pytest.raises(TypeError, match=rf"^count must be an integer, got "
                                            rf"{type(bad).__name__} {re.escape(repr(bad))}$"):
            _int_range.check_int(bad, "count")
    with pytest.raises(gpuaccel.errors.InvalidArgumentError, match="got 9"):
        _int_range.check_range(9, "n", 0, 8, error=gpuaccel.errors.InvalidArgumentError)


# (call, the argument as the message names it, the value, the allowed range)
CALLERS = [
    (lambda: keras.layers.Dense(2**63), "units", 2**63, "[1, 2**63 - 1]"),
    (lambda: keras.layers.Conv2D(2**64, 3), "filters", 2**64, "[1, 2**63 - 1]"),
    (lambda: keras.layers.MaxPooling2D((2, 2**63)), "pool_size", 2**63, "[1, 2**63 - 1]"),
    (lambda: keras.layers.Embedding(2**70, 3), "input_dim", 2**70, "[1, 2**63 - 1]"),
    (lambda: keras.utils.to_categorical([1], num_classes=2**70), "to_categorical: num_classes",
     2**70, "[0, 2**63 - 1]"),
    (lambda: keras.layers.Reshape((2**63,)), "target_shape entry", 2**63,
     "[-2**63, 2**63 - 1]"),
    (lambda: keras.layers.Concatenate(axis=-2**64), "axis", -2**64, "[-2**63, 2**63 - 1]"),
    (lambda: gpuaccel.data.Dataset.range(3).batch(0), "batch_size", 0, "[1, 2**63 - 1]"),
    (lambda: gpuaccel.data.Dataset.range(3).take(2**70), "count", 2**70, "[-1, 2**63 - 1]"),
    (lambda: gpuaccel.data.Dataset.range(2**63), "Dataset.range: stop", 2**63,
     "[-2**63, 2**63 - 1]"),
    (lambda: gpuaccel.zeros(3, 2**70), "shape (3, 1180591620717411303424) entry 1", 2**70,
     "[-2**63, 2**63 - 1]"),
    (lambda: keras.Input((2**40, 2**40)),
     "the values per example of Input() shape (None, 1099511627776, 1099511627776)", 2**80,
     "[0, 2**63 - 1]"),
    (lambda: gpuaccel.distribute.experimental.CommunicationOptions(bytes_per_pack=2**63),
     "bytes_per_pack", 2**63, "[0, 2**63 - 1]"),
    (lambda: gpuaccel.image.extract_patches(gpuaccel.zeros(1, 4, 4, 1), [1, 2**31, 1, 1],
                                            [1, 1, 1, 1], [1, 1, 1, 1], "VALID"),
     "sizes[1]", 2**31, "[1, 2**31 - 1]"),
]


@pytest.mark.parametrize("call, name, value, allowed", CALLERS,
                         ids=[c[1].split(" (")[0] for c in CALLERS])
def test_every_frontend_says_it_in_one_format(call, name, value, allowed):
    with pytest.raises(ValueError) as info:
        call()
    assert f"{name} must be in {allowed}, got {value}" in str(info.value), str(info.value)
