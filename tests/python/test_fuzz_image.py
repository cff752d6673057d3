"""Property-based fuzzing of ``gpuaccel.image.extract_patches`` (tf.image's im2col, added after
the first fuzz suites): random image shapes (zero-size included), window sizes, strides, rates
and padding, valid or not, against a NumPy reference of TensorFlow's definition. A bad argument
is a typed error without pybind11 text; a good one gives TF's patches exactly (test_image's
NumPy reference).

Every example runs in an isolated worker (crash_isolation.py) with a fixed seed.
"""
import numpy as np
from hypothesis import example, given, seed, settings, strategies as st

from crash_isolation import isolated  # noqa: F401 -- the module-scoped worker fixture
from test_image import patches_reference

PYBIND_TEXT = ("incompatible function arguments", "Unable to cast", "invalid arguments")
TYPED_ERRORS = ("ValueError", "TypeError", "OpError")


def reference_patches(image, kernel, stride, rate, padding):
    """TF's patches (test_image's NumPy loops), or None where TF has no output position."""
    try:
        out = patches_reference(image, kernel, stride, rate, padding)
    except ValueError:  # a negative output size: the window is larger than the image
        return None
    return out if out.shape[1] > 0 and out.shape[2] > 0 else None


def _is_window(value):
    return (isinstance(value, list) and len(value) == 4 and value[0] == 1 and value[3] == 1 and
            all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v < 2**31
                for v in value))


def check_extract_patches(shape, sizes, strides, rates, padding):
    import gpuaccel
    image = (np.arange(int(np.prod(shape))) % 11).astype(np.float32).reshape(shape)
    valid = (_is_window(sizes) and _is_window(strides) and _is_window(rates) and
             padding in ("VALID", "SAME", "valid", "same"))
    expected = (reference_patches(image, sizes[1:3], strides[1:3], rates[1:3], padding.upper())
                if valid else None)
    try:
        got = gpuaccel.image.extract_patches(gpuaccel.tensor(image), sizes, strides, rates,
                                             padding)
    except Exception as error:  # noqa: BLE001
        names = [c.__name__ for c in type(error).__mro__]
        assert any(n in names for n in TYPED_ERRORS), f"untyped {type(error).__name__}: {error}"
        assert not any(t in str(error) for t in PYBIND_TEXT), f"pybind11 text leaked: {error}"
        # A valid request may still be refused for an empty output or the memory it needs.
        assert expected is None or expected.size == 0 or "ResourceExhausted" in names or \
            "too large" in str(error), f"refused {sizes} {strides} {rates} {padding}: {error}"
        return "rejected"
    assert expected is not None, f"accepted {sizes} {strides} {rates} {padding!r}"
    np.testing.assert_array_equal(got.numpy(), expected)
    return "ok"


# (no 2**31 - 1: a valid window that large asks for tens of GiB, which an overcommitting
# machine might grant and then run out of while writing)
WINDOW_ENTRY = st.one_of(st.integers(-1, 4), st.sampled_from([2**40, 2.5, True]))
WINDOW = st.one_of(st.tuples(st.just(1), WINDOW_ENTRY, WINDOW_ENTRY, st.just(1)).map(list),
                   st.lists(st.integers(1, 3), max_size=5))


@settings()  # the profile's budget (conftest.py)
@seed(20261124)
@given(st.tuples(st.integers(1, 2), st.integers(0, 6), st.integers(0, 6), st.integers(1, 2)),
       WINDOW, WINDOW, WINDOW, st.sampled_from(["VALID", "SAME", "same", "x"]))
# Regressions: a 2**40 window leaked the tensor_full binding's argument text; a 2.5 size was
# truncated to 2.
@example((1, 4, 4, 1), [1, 2**40, 2, 1], [1, 1, 1, 1], [1, 2**40, 1, 1], "SAME")
@example((1, 4, 4, 1), [1, 2.5, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
def test_extract_patches_matches_tf_definition(isolated, shape, sizes, strides, rates, padding):
    isolated.call("test_fuzz_image", "check_extract_patches", shape, sizes, strides, rates,
                  padding)
