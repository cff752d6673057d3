"""Property-based fuzzing of the tensor ops against NumPy: random shapes (rank 0 to 6, zero-size
dimensions), dtypes, broadcasting, Python-number operands, axes (valid, negative, repeated, out
of range, tuples), permutations, slicing and item assignment, creation sizes that overflow.

Each example runs in an isolated worker process (crash_isolation.py): a crash or hang fails the
test with the example, and hypothesis shrinks it and stores it in tests/python/hypothesis-db.
The ``check_*`` functions run in the worker; the ``test_*`` functions generate the examples.
Every check also asserts the error contract: a refused input raises a typed error (TF's
``InvalidArgumentError``, a ``ValueError``, ``TypeError`` or ``IndexError``) whose text has no
pybind11 internals.
"""
import math

import numpy as np
from hypothesis import assume, example, given, strategies as st
from hypothesis.extra import numpy as hnp

from crash_isolation import isolated  # noqa: F401 -- the module-scoped worker fixture

MAX_DIMS = 8  # gpuaccel's kMaxDims (NumPy allows 64): more is a documented InvalidArgumentError
DTYPES = ["float32", "float16", "bfloat16", "int32", "int64", "uint8", "int8", "int16", "bool"]
FLOATS = {"float32", "float16", "bfloat16"}
INTEGERS = ("uint8", "int8", "int16", "int32", "int64")
PYBIND_TEXT = ("incompatible function arguments", "Unable to cast", "incompatible constructor")
TYPED_ERRORS = ("InvalidArgumentError", "ValueError", "TypeError", "IndexError")


# ---- the reference rules (an independent statement of docs/ops.md, used as the oracle) ----

def _category(dtype):
    return 0 if dtype == "bool" else 2 if dtype in FLOATS else 1


_WIDTH = {"bool": 0, "uint8": 1, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 1,
          "bfloat16": 1, "float32": 2}


def promote(a, b):
    if a == b:
        return a
    if _category(a) != _category(b):
        return a if _category(a) > _category(b) else b
    if _WIDTH[a] == _WIDTH[b]:  # float16/bfloat16, uint8/int8: neither holds the other
        return "float32" if a in FLOATS else "int16"
    return a if _WIDTH[a] > _WIDTH[b] else b


def result_dtype(a, b):
    """torch.result_type for two operands, each ("tensor", dtype, ndim) or ("number", kind):
    three tiers, dimensioned tensors over 0-d tensors over numbers; a lower tier decides only
    when it is of a higher category."""
    def combine(high, low):
        if high is None:
            return low
        if low is None:
            return high
        return high if _category(high) >= _category(low) else promote(high, low)

    def join(dtypes):
        out = None
        for d in dtypes:
            out = d if out is None else promote(out, d)
        return out

    dims = join(s[1] for s in (a, b) if s[0] == "tensor" and s[2] > 0)
    zeros = join(s[1] for s in (a, b) if s[0] == "tensor" and s[2] == 0)
    numbers_ = join({"bool": "bool", "int": "int64", "float": "float32"}[s[1]]
                    for s in (a, b) if s[0] == "number")
    return combine(dims, combine(zeros, numbers_))


def np_dtype(name):
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def tolerance(dtype, op=None):
    loose = op in ("pow", "exp", "log", "div", "softmax", "log_softmax", "mean", "sum")
    return {"float32": (1e-5 if loose else 1e-6, 1e-5),
            "float16": (2e-3 if loose else 1e-3, 1e-3),
            "bfloat16": (2e-2, 1e-2)}.get(dtype, (0, 0))


def assert_close(actual, expected, dtype, op=None):
    rtol, atol = tolerance(dtype, op)
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if dtype in FLOATS:
        np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)


def assert_typed_error(error, *allowed):
    names = [c.__name__ for c in type(error).__mro__]
    assert any(n in names for n in (allowed or TYPED_ERRORS)), \
        f"untyped error {type(error).__name__}: {error}"
    assert not any(t in str(error) for t in PYBIND_TEXT), f"pybind11 text leaked: {error}"


def numpy_verdict(fn):
    """NumPy's answer to fn(): (result, None), or (None, the exception it raised)."""
    try:
        with np.errstate(all="ignore"):
            return fn(), None
    except Exception as error:  # noqa: BLE001 -- NumPy's refusal is the reference's verdict
        return None, error


def as_numpy(t):
    import gpuaccel
    if t.dtype == gpuaccel.bfloat16:
        t = t.to(gpuaccel.float32)
    return t.numpy()


# ---- strategies ----

def values_for(dtype, allow_nan=True):
    if dtype == "bool":
        return st.booleans()
    if dtype in ("uint8", "int8", "int16"):  # the whole range: sums and products wrap
        info = np.iinfo(dtype)
        return st.integers(int(info.min), int(info.max))
    if dtype in ("int32", "int64"):
        return st.integers(-1000, 1000)
    limit = 60000.0 if dtype == "float16" else 1e6
    finite = st.floats(-limit, limit, allow_nan=False, allow_infinity=False, width=32)
    if not allow_nan:
        return finite
    return st.one_of(finite, st.sampled_from([float("nan"), float("inf"), float("-inf"), 0.0,
                                              -0.0]))


@st.composite
def arrays(draw, dtype=None, shape=None, allow_nan=True, max_dims=6):
    dtype = dtype or draw(st.sampled_from(DTYPES))
    if shape is None:
        shape = draw(hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0, max_side=3))
    storage = "float32" if dtype in FLOATS else dtype
    values = draw(hnp.arrays(np.dtype(storage), shape, elements=values_for(dtype, allow_nan)))
    return dtype, values


def to_tensor(dtype, values):
    import gpuaccel
    return gpuaccel.tensor(np.asarray(values, dtype=np_dtype(dtype)))


# ---- binary ops and promotion ----

BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "greater", "less"]
INTEGER_OK = {"add", "sub", "mul", "maximum", "minimum", "greater", "less"}


def _numpy_binary(op, a, b):
    with np.errstate(all="ignore"):
        return {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
                "pow": np.power, "maximum": np.maximum, "minimum": np.minimum,
                "greater": np.greater, "less": np.less}[op](a, b)


def _call_binary(op, x, y):
    import gpuaccel
    if op in ("maximum", "minimum", "pow") and not isinstance(x, gpuaccel.Tensor):
        return getattr(gpuaccel.math, op)(x, y)
    return {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y,
            "div": lambda: x / y, "pow": lambda: x ** y,
            "maximum": lambda: gpuaccel.math.maximum(x, y),
            "minimum": lambda: gpuaccel.math.minimum(x, y),
            "greater": lambda: x > y, "less": lambda: x < y}[op]()


def check_binary(op, left, right):
    """left/right: ("tensor", dtype, values) or ("number", value)."""
    def spec(side):
        if side[0] == "number":
            kind = "bool" if isinstance(side[1], bool) else \
                "int" if isinstance(side[1], int) else "float"
            return ("number", kind)
        return ("tensor", side[1], np.ndim(side[2]))

    def operand(side):
        return side[1] if side[0] == "number" else to_tensor(side[1], side[2])

    x, y = operand(left), operand(right)
    dtype = result_dtype(spec(left), spec(right))
    compute = "float32" if op == "div" and dtype not in FLOATS else dtype
    shapes = [np.shape(s[2]) for s in (left, right) if s[0] == "tensor"]
    try:
        np.broadcast_shapes(*shapes)
        broadcastable = True
    except ValueError:
        broadcastable = False
    supported = compute in FLOATS or (op in INTEGER_OK and compute in INTEGERS)
    out_of_range = False
    for side in (left, right):
        if side[0] == "number" and compute not in FLOATS and compute != "bool":
            info = np.iinfo(compute)
            out_of_range |= not info.min <= int(side[1]) <= info.max
    try:
        result = _call_binary(op, x, y)
    except Exception as error:  # noqa: BLE001 -- the contract says which errors are allowed
        assert_typed_error(error)
        assert not (supported and broadcastable and not out_of_range), \
            f"{op} refused a valid input: {error}"
        return
    assert supported and broadcastable and not out_of_range, f"{op} accepted {left}, {right}"
    expected_dtype = "bool" if op in ("greater", "less") else compute
    assert result.dtype.name == expected_dtype, (result.dtype.name, expected_dtype)

    def reference(side):
        if side[0] == "number":
            return np.asarray(side[1]).astype(np_dtype(compute))
        return np.asarray(side[2], dtype=np_dtype(side[1])).astype(np_dtype(compute))

    expected = _numpy_binary(op, reference(left), reference(right))
    assert_close(as_numpy(result), np.asarray(expected).astype(np_dtype(expected_dtype)),
                 expected_dtype, op)


@st.composite
def binary_cases(draw):
    op = draw(st.sampled_from(BINARY))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=6,
                                                    min_side=0, max_side=3))
    sides = []
    for i, shape in enumerate(shapes.input_shapes):
        kind = draw(st.sampled_from(["tensor", "tensor", "number"])) if i == 1 else "tensor"
        if kind == "number":
            number = draw(st.one_of(st.booleans(), st.integers(-2**40, 2**40),
                                    st.floats(-1e4, 1e4, width=32),
                                    st.sampled_from([float("nan"), float("inf")])))
            sides.append(("number", number))
        else:
            if draw(st.integers(0, 9)) == 0:  # sometimes shapes that do not broadcast
                shape = tuple(d + 2 for d in shape)
            dtype, values = draw(arrays(shape=shape))
            sides.append(("tensor", dtype, values))
    if draw(st.booleans()) and sides[1][0] == "number":
        sides.reverse()  # number (op) tensor: the reflected operators
    return op, sides[0], sides[1]


@given(binary_cases())
def test_binary_ops_promote_and_match_numpy(isolated, case):
    isolated.call("test_fuzz_ops", "check_binary", *case)


# ---- unary ops ----

UNARY = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "abs": np.abs, "square": np.square,
         "tanh": np.tanh, "neg": np.negative, "relu": lambda a: np.maximum(a, 0),
         "sigmoid": lambda a: 1 / (1 + np.exp(-a)), "reciprocal": np.reciprocal}


def check_unary(op, dtype, values):
    import gpuaccel
    x = to_tensor(dtype, values)
    integer_ok = op in ("neg", "abs", "square")
    try:
        y = -x if op == "neg" else getattr(x, op)()
    except Exception as error:  # noqa: BLE001
        assert_typed_error(error)
        assert not (dtype in FLOATS or (integer_ok and dtype in INTEGERS)), error
        return
    assert dtype in FLOATS or (integer_ok and dtype in INTEGERS), (op, dtype)
    assert y.dtype == gpuaccel.as_dtype(dtype)
    with np.errstate(all="ignore"):
        reference = np.asarray(values, dtype=np_dtype(dtype)).astype(np.float64)
        expected = UNARY[op](reference)
    if dtype not in FLOATS:
        expected = expected.astype(np_dtype(dtype))
    rtol, atol = tolerance(dtype, "exp")
    actual = as_numpy(y).astype(np.float64)
    if dtype in FLOATS:
        expected = np.asarray(expected).astype(np_dtype(dtype)).astype(np.float64)
        np.testing.assert_allclose(actual, expected, rtol=rtol * 4, atol=atol * 4,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)


@given(st.sampled_from(sorted(UNARY)), arrays(max_dims=4))
def test_unary_ops_match_numpy(isolated, op, array):
    isolated.call("test_fuzz_ops", "check_unary", op, *array)


# ---- reductions ----

REDUCTIONS = ["sum", "mean", "max", "min", "argmax", "argmin"]


def _numpy_reduce(op, a, axis, keepdims):
    f = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "argmax": np.argmax,
         "argmin": np.argmin}[op]
    with np.errstate(all="ignore"):
        if op in ("argmax", "argmin"):
            return f(a, axis=axis, keepdims=keepdims)
        return f(a, axis=axis, keepdims=keepdims)


def check_reduce(op, dtype, values, axis, keepdims, face):
    import gpuaccel
    x = to_tensor(dtype, values)
    # The input as the tensor holds it (rounded to its dtype), reduced in float64.
    reference = np.asarray(values, dtype=np_dtype(dtype))
    if dtype in FLOATS:
        reference = reference.astype(np.float64)
    expected, numpy_error = numpy_verdict(lambda: _numpy_reduce(op, reference, axis, keepdims))
    if reference.ndim == 0 and axis not in (None, ()):
        # Our rule (TF's, and NumPy's for mean and tuples): a 0-d tensor has no axes. NumPy's
        # sum/max/argmax alone accept axis 0 or -1 there.
        numpy_error = numpy_error or ValueError("a 0-d tensor has no axes")
    try:
        if face == "math" and op not in ("argmax", "argmin"):
            result = getattr(gpuaccel.math, f"reduce_{op}")(x, axis=axis, keepdims=keepdims)
        else:
            result = getattr(x, op)(axis=axis, keepdims=keepdims)
    except Exception as error:  # noqa: BLE001
        assert_typed_error(error)
        assert numpy_error is not None, f"{op}(axis={axis!r}) refused what NumPy accepts: {error}"
        return
    assert numpy_error is None, f"{op}(axis={axis!r}) accepted what NumPy refuses: {numpy_error}"
    expected = np.asarray(expected)
    if op in ("argmax", "argmin"):
        assert result.dtype == gpuaccel.int64
        np.testing.assert_array_equal(as_numpy(result), expected)
        return
    # tf.math.reduce_sum keeps an integer dtype (wrapping, as TF); the tensor method counts in
    # int64, as torch
    integer_sum_dtype = dtype if face == "math" and dtype in INTEGERS else "int64"
    out_dtype = {"sum": integer_sum_dtype if dtype not in FLOATS else dtype,
                 "mean": "float32" if dtype not in FLOATS else dtype}.get(op, dtype)
    assert result.dtype.name == out_dtype, (op, dtype, result.dtype.name)
    rtol, atol = tolerance(out_dtype, op)
    if out_dtype in FLOATS:
        scale = np.max(np.abs(reference), initial=1.0) if reference.size else 1.0
        finite = np.isfinite(scale)
        with np.errstate(all="ignore"):  # a float16 sum beyond 65504 is inf, as it should be
            expected = expected.astype(np_dtype(out_dtype))
        np.testing.assert_allclose(as_numpy(result).astype(np.float64), expected.astype(np.float64),
                                   rtol=rtol * 10, atol=atol * 10 * (scale if finite else 1),
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(as_numpy(result), expected.astype(np_dtype(out_dtype)))


@st.composite
def reduce_cases(draw):
    op = draw(st.sampled_from(REDUCTIONS))
    dtype, values = draw(arrays(max_dims=5))
    ndim = values.ndim
    axis = draw(st.one_of(
        st.none(),
        st.integers(-ndim - 1, ndim),
        st.lists(st.integers(-ndim - 1, ndim), min_size=0, max_size=3).map(tuple)))
    if dtype in FLOATS and op in ("sum", "mean"):
        assume(np.all(np.isfinite(values)) or draw(st.booleans()))
    return op, dtype, values, axis, draw(st.booleans()), draw(st.sampled_from(["method",
                                                                               "math"]))


@given(reduce_cases())
def test_reductions_match_numpy_axes_and_nan(isolated, case):
    isolated.call("test_fuzz_ops", "check_reduce", *case)


# ---- shapes: reshape, permute, transpose, squeeze, unsqueeze ----

def torch_squeeze_axes(shape, dims):
    """The axes ``Tensor.squeeze(dims)`` removes, by torch's rule (NumPy's squeeze refuses an
    axis whose size is not 1; torch leaves it): the named size-1 axes; an axis outside the
    rank or named twice is an error (0-d tensors: see check_shape_op)."""
    dims = list(dims) if isinstance(dims, (tuple, list)) else [dims]
    rank = max(len(shape), 1)
    if any(not -rank <= d < rank for d in dims):
        raise IndexError(f"dim {dims} out of range for rank {len(shape)}")
    if len({d % rank for d in dims}) != len(dims):
        raise ValueError(f"dim {dims} names an axis twice")
    return tuple(d for d in dims if shape and shape[d] == 1)


def check_shape_op(op, values, args):
    import gpuaccel
    x = gpuaccel.tensor(values)
    numpy_fn = {"reshape": lambda: values.reshape(args),
                "permute": lambda: np.transpose(values, args),
                "transpose": lambda: np.swapaxes(values, *args),
                "squeeze": lambda: np.squeeze(values, axis=torch_squeeze_axes(values.shape, args)),
                "unsqueeze": lambda: np.expand_dims(values, args)}[op]
    expected, numpy_error = numpy_verdict(numpy_fn)
    if op == "squeeze" and values.ndim == 0 and args not in ((), []):
        numpy_error = numpy_error or ValueError("a 0-d tensor has no axes (NumPy's squeeze "
                                                "alone accepts axis 0 there)")
    try:
        if op == "reshape":
            result = x.reshape(*args)
        elif op == "permute":
            result = x.permute(*args)
        elif op == "transpose":
            result = x.transpose(*args)
        elif op == "squeeze":
            result = x.squeeze(args)
        else:
            result = x.unsqueeze(args)
    except Exception as error:  # noqa: BLE001
        assert_typed_error(error)
        assert numpy_error is not None, f"{op}{args!r} refused what NumPy accepts: {error}"
        return
    assert numpy_error is None, f"{op}{args!r} accepted what NumPy refuses ({numpy_error})"
    np.testing.assert_array_equal(result.numpy(), expected)
    # The result is usable: a reduction and a copy read every element through its strides.
    np.testing.assert_allclose(result.contiguous().numpy().sum(), expected.sum(), rtol=1e-5)


@st.composite
def shape_cases(draw):
    _, values = draw(arrays(dtype="float32", allow_nan=False))
    ndim = values.ndim
    op = draw(st.sampled_from(["reshape", "permute", "transpose", "squeeze", "unsqueeze"]))
    axis = st.integers(-ndim - 2, ndim + 1)
    if op == "reshape":
        shape = list(draw(hnp.array_shapes(min_dims=0, max_dims=6, min_side=0, max_side=4)))
        if draw(st.booleans()):
            shape = list(np.random.default_rng(draw(st.integers(0, 99))).permutation(
                list(values.shape) + [1])) if values.ndim < 6 else list(values.shape)
        if shape and draw(st.booleans()):
            shape[draw(st.integers(0, len(shape) - 1))] = -1
        args = tuple(int(d) for d in shape)
    elif op == "permute":
        perm = list(np.random.default_rng(draw(st.integers(0, 99))).permutation(ndim))
        if draw(st.integers(0, 3)) == 0:
            perm = draw(st.lists(st.integers(-ndim - 1, ndim), max_size=ndim + 1))
        args = tuple(int(d) for d in perm)
    elif op == "transpose":
        args = (draw(axis), draw(axis))
    elif op == "squeeze":
        args = draw(st.one_of(axis, st.lists(axis, max_size=3).map(tuple)))
    else:
        args = draw(st.integers(-ndim - 2, ndim + 1))
    return op, values, args


@given(shape_cases())
def test_shape_ops_match_numpy(isolated, case):
    isolated.call("test_fuzz_ops", "check_shape_op", *case)


# ---- indexing and item assignment ----

def check_indexing(values, index, value):
    import gpuaccel
    x = gpuaccel.tensor(values)
    expected, numpy_error = numpy_verdict(lambda: values[index])
    if expected is not None and np.ndim(expected) > MAX_DIMS:
        numpy_error = ValueError(f"gpuaccel tensors have at most {MAX_DIMS} dimensions")
    negative_step = any(isinstance(i, slice) and (i.step or 1) < 0
                        for i in (index if isinstance(index, tuple) else (index,)))
    try:
        result = x[index]
    except Exception as error:  # noqa: BLE001
        assert_typed_error(error)
        assert numpy_error is not None or negative_step, f"x[{index!r}] refused: {error}"
        return
    assert numpy_error is None, f"x[{index!r}] accepted what NumPy refuses ({numpy_error})"
    np.testing.assert_array_equal(result.numpy(), expected)
    target = values.copy()
    try:
        target[index] = value
        numpy_error = None
    except Exception as error:  # noqa: BLE001
        numpy_error = error
        if "with a sequence" in str(error) and np.size(value) == 1:
            # NumPy's scalar-item path refuses a (1,) value for a 0-d target; its array path
            # (and torch) drop the leading size-1 axis, as we do.
            target[index] = np.reshape(value, ())
            numpy_error = None
    try:
        x[index] = value
    except Exception as error:  # noqa: BLE001
        assert_typed_error(error)
        assert numpy_error is not None, f"x[{index!r}] = {value!r} refused: {error}"
        return
    assert numpy_error is None, f"x[{index!r}] = {value!r} accepted ({numpy_error})"
    np.testing.assert_array_equal(x.numpy(), target)


@st.composite
def index_cases(draw):
    _, values = draw(arrays(dtype="float32", allow_nan=False, max_dims=4))
    item = st.one_of(
        st.integers(-4, 4),
        st.builds(slice, st.none() | st.integers(-5, 5), st.none() | st.integers(-5, 5),
                  st.none() | st.integers(-2, 3).filter(lambda s: s != 0)),
        st.none(), st.just(Ellipsis))
    index = tuple(draw(st.lists(item, max_size=values.ndim + 1)))
    if index.count(Ellipsis) > 1:
        index = tuple(i for i in index if i is not Ellipsis)
    if len(index) == 1 and draw(st.booleans()):
        index = index[0]
    value = draw(st.one_of(
        st.floats(-10, 10, width=32),
        hnp.arrays(np.float32, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3),
                   elements=st.floats(-10, 10, width=32))))
    return values, index, value


@given(index_cases())
def test_indexing_and_assignment_match_numpy(isolated, case):
    isolated.call("test_fuzz_ops", "check_indexing", *case)


# ---- softmax / log_softmax with NaN ----

def check_softmax(values, axis, log):
    import gpuaccel
    x = gpuaccel.tensor(values)
    fn = gpuaccel.nn.log_softmax if log else gpuaccel.nn.softmax
    valid = values.ndim > 0 and -values.ndim <= axis < values.ndim
    try:
        result = fn(x, axis=axis)
    except Exception as error:  # noqa: BLE001
        assert_typed_error(error)
        assert not valid, f"softmax(axis={axis}) refused a valid input: {error}"
        return
    assert valid, f"softmax accepted axis={axis} for rank {values.ndim}"
    a = values.astype(np.float64)
    if a.size == 0:
        assert tuple(result.shape) == a.shape
        return
    with np.errstate(all="ignore"):
        shifted = a - np.max(a, axis=axis, keepdims=True)
        total = np.sum(np.exp(shifted), axis=axis, keepdims=True)
        expected = shifted - np.log(total) if log else np.exp(shifted) / total
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-5, atol=1e-5, equal_nan=True)


@st.composite
def softmax_cases(draw):
    finite = st.floats(-50, 50, width=32)
    values = draw(hnp.arrays(np.float32, hnp.array_shapes(min_dims=0, max_dims=4, min_side=0,
                                                          max_side=4),
                             elements=st.one_of(finite, finite, finite,
                                                st.just(float("nan")))))
    return values, draw(st.integers(-values.ndim - 1, values.ndim)), draw(st.booleans())


@given(softmax_cases())
def test_softmax_propagates_nan_like_numpy(isolated, case):
    isolated.call("test_fuzz_ops", "check_softmax", *case)


# ---- matmul ----

def check_matmul(a, b):
    import gpuaccel
    expected, numpy_error = numpy_verdict(lambda: np.matmul(a.astype(np.float64),
                                                            b.astype(np.float64)))
    try:
        result = gpuaccel.tensor(a) @ gpuaccel.tensor(b)
    except Exception as error:  # noqa: BLE001
        assert_typed_error(error)
        assert numpy_error is not None, f"matmul {a.shape} @ {b.shape} refused: {error}"
        return
    assert numpy_error is None, f"matmul {a.shape} @ {b.shape} accepted ({numpy_error})"
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-4, atol=1e-3)


@st.composite
def matmul_cases(draw):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4,
                                                    min_side=0, max_side=3))
    a_shape, b_shape = shapes.input_shapes
    if len(a_shape) >= 1 and len(b_shape) >= 2 and draw(st.booleans()):
        b_shape = b_shape[:-2] + (a_shape[-1],) + b_shape[-1:]  # usually aligned
    elements = st.floats(-4, 4, width=32)
    return (draw(hnp.arrays(np.float32, a_shape, elements=elements)),
            draw(hnp.arrays(np.float32, b_shape, elements=elements)))


@given(matmul_cases())
def test_matmul_matches_numpy(isolated, case):
    isolated.call("test_fuzz_ops", "check_matmul", *case)


# ---- creation sizes, overflow included ----

def check_creation(function, shape, dtype):
    import gpuaccel
    itemsize = np_dtype(dtype).itemsize
    nonzero = math.prod(d for d in shape if d != 0)
    overflows = nonzero * itemsize > 2**63 - 1
    try:
        if function == "arange":
            t = gpuaccel.arange(0, shape[0], dtype=dtype)
        else:
            t = getattr(gpuaccel, function)(*shape, dtype=dtype)
    except Exception as error:  # noqa: BLE001
        assert_typed_error(error, "InvalidArgumentError", "ResourceExhaustedError", "ValueError")
        assert overflows or any(d < 0 for d in shape), f"{function}{shape} refused: {error}"
        if "OOM when allocating" in str(error):
            assert not str(error).split("OOM when allocating ")[1].startswith("-"), str(error)
        return
    assert not overflows, f"{function}{tuple(shape)} accepted a size that overflows"
    assert tuple(t.shape) == ((max(shape[0], 0),) if function == "arange" else tuple(shape))
    assert t.numel() == math.prod(t.shape)
    if t.numel():
        assert float(t.reshape(-1)[-1].to("float32").item()) == (
            shape[0] - 1 if function == "arange" else 1.0 if function == "ones" else 0.0)


@st.composite
def creation_cases(draw):
    function = draw(st.sampled_from(["zeros", "ones", "arange"]))
    dtype = draw(st.sampled_from(["float32", "float16", "int32", "int64", "uint8"]))
    if function == "arange":
        dtype = draw(st.sampled_from(["float32", "int64"]))
    if draw(st.booleans()):  # small: really allocated
        shape = draw(st.lists(st.integers(-1, 5), max_size=5))
        if function == "arange":
            shape = [draw(st.integers(-3, 200))]
    else:  # huge: must be refused as too large, never wrap around to a small allocation
        big = st.sampled_from([2**31, 2**33, 2**40, 2**61, 2**62, 2**63 - 1])
        shape = draw(st.lists(st.one_of(big, st.integers(0, 4)), min_size=2, max_size=4))
        itemsize = np_dtype(dtype).itemsize
        if function == "arange":
            shape = [draw(st.sampled_from([2**62, 2**63 - 1]))]
        assume(math.prod(d for d in shape if d != 0) * itemsize > 2**63 - 1)
    return function, shape, dtype


@given(creation_cases())
def test_creation_sizes_never_wrap_around(isolated, case):
    isolated.call("test_fuzz_ops", "check_creation", *case)


# ---- tile and Tensor.repeat: counts small, huge and wrong ----

def _tile_reference(face, shape, counts):
    """The result shape (tf.tile / torch's Tensor.repeat), or None when the counts are refused:
    whole non-negative numbers, one per axis (repeat: at least one per axis, new axes lead)."""
    if not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c < 2**63
               for c in counts):
        return None
    if face == "tile" and len(counts) != len(shape):
        return None
    if face == "repeat" and len(counts) < len(shape):
        return None
    padded = (1,) * (len(counts) - len(shape)) + tuple(shape)
    return [c * n for c, n in zip(counts, padded)]


def check_tile(face, values, counts):
    import gpuaccel
    x = gpuaccel.tensor(values)
    out_shape = _tile_reference(face, values.shape, counts)
    try:
        result = gpuaccel.tile(x, counts) if face == "tile" else x.repeat(*counts)
    except Exception as error:  # noqa: BLE001
        # never a MemoryError or OverflowError: a count is refused, or the result's size is
        # the allocator's (or the size check's) typed error naming it
        assert_typed_error(error, *TYPED_ERRORS, "ResourceExhaustedError")
        assert f"[{'Tile' if face == 'tile' else 'Repeat'}]" in str(error), str(error)
        if out_shape is None:
            return "rejected"
        # too large for memory, or empty but with sizes whose product NumPy refuses too
        nbytes = math.prod(d for d in out_shape if d) * 4
        assert nbytes > 2**40, f"{face}{counts} on {values.shape} refused: {error}"
        named = [str(out_shape)] + [str(d) for d in out_shape if d >= 2**63]  # or its axis
        assert any(n in str(error) for n in named), f"the requested size is not named: {error}"
        return "too large"
    assert out_shape is not None, f"{face}{counts} on {values.shape} accepted"
    assert list(result.shape) == out_shape, (result.shape, out_shape)
    if result.numel():  # (an empty (0, 2**62) is a tensor NumPy cannot make)
        np.testing.assert_array_equal(result.numpy(), np.tile(values, counts))
    return "ok"


@st.composite
def tile_cases(draw):
    _, values = draw(arrays(dtype="float32", allow_nan=False, max_dims=3))
    face = draw(st.sampled_from(["tile", "repeat"]))
    count = st.one_of(st.integers(0, 3), st.sampled_from([2**40, 2**62, 2**63, 2**70, -1, 1.5,
                                                          True]))
    ndim = values.ndim + draw(st.sampled_from([0, 0, 0, -1, 1]))
    counts = draw(st.lists(count, min_size=max(ndim, 0), max_size=max(ndim, 0)))
    # small enough to really make: at most 64 values
    assume(not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 3
                   for c in counts) or math.prod(counts) * values.size <= 64)
    return face, values, counts


@given(tile_cases())
# Regressions: a count of 2**40 made a Python list of 2**40 tensors (a bare MemoryError, or the
# machine's memory); 1.5 was read as 1; 2**70 raised a bare OverflowError.
@example(("tile", np.ones((2, 3), np.float32), [2**40, 1]))
@example(("repeat", np.ones((2, 3), np.float32), [2**40, 1]))
@example(("tile", np.ones((2, 3), np.float32), [1.5, 1]))
@example(("tile", np.ones((2, 3), np.float32), [2**70, 1]))
def test_tile_and_repeat_match_numpy_and_refuse_huge_counts_typed(isolated, case):
    isolated.call("test_fuzz_ops", "check_tile", *case)
