"""Property-based fuzzing of autograd against central finite differences: random shapes (with
broadcasting and zero-size dimensions), element-wise ops, reductions over random axes, shape
ops and softmax, each differentiated through ``backward`` and compared with the float64 NumPy
function's numerical gradient. Examples run in an isolated worker (crash_isolation.py)."""
import numpy as np
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

from crash_isolation import isolated  # noqa: F401 -- the module-scoped worker fixture
from test_autograd import numeric_grads


def _softmax(a, axis):
    if a.size == 0:
        return a.copy()
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# name: (gpuaccel function, NumPy function, operand count, input domain)
OPS = {
    "add": (lambda x, y: x + y, np.add, 2, "any"),
    "sub": (lambda x, y: x - y, np.subtract, 2, "any"),
    "mul": (lambda x, y: x * y, np.multiply, 2, "any"),
    "div": (lambda x, y: x / y, np.divide, 2, "away_from_zero"),
    "pow": (lambda x, y: x ** y, np.power, 2, "positive"),
    "maximum": (lambda x, y: __import__("gpuaccel").math.maximum(x, y), np.maximum, 2, "any"),
    "exp": (lambda x: x.exp(), np.exp, 1, "any"),
    "log": (lambda x: x.log(), np.log, 1, "positive"),
    "sqrt": (lambda x: x.sqrt(), np.sqrt, 1, "positive"),
    "tanh": (lambda x: x.tanh(), np.tanh, 1, "any"),
    "sigmoid": (lambda x: x.sigmoid(), lambda a: 1 / (1 + np.exp(-a)), 1, "any"),
    "square": (lambda x: x.square(), np.square, 1, "any"),
    "scalar_mul": (lambda x: x * 2.5 - 1, lambda a: a * 2.5 - 1, 1, "any"),
    "transpose": (lambda x: x.T, lambda a: a.T, 1, "any"),
    "softmax": (lambda x: __import__("gpuaccel").nn.softmax(x, axis=-1),
                lambda a: _softmax(a, -1), 1, "any"),
}


def _reduce(out, reduction, axis, mean):
    """The op's output, averaged over `axis` (when that axis exists) for reduction 'mean'."""
    if reduction != "mean" or out.ndim == 0:
        return out
    return mean(out, axis if axis is not None and axis < out.ndim else None)


def check_gradient(op, inputs, weights, reduction, axis):
    import gpuaccel
    fn, numpy_fn, _, _ = OPS[op]
    if np.size(numpy_fn(*[a.astype(np.float64) for a in inputs])) == 0:
        reduction = "none"  # the mean of nothing is NaN: no gradient to compare

    def numpy_out(arrays):
        with np.errstate(all="ignore"):
            return _reduce(numpy_fn(*arrays), reduction, axis, lambda a, ax: a.mean(axis=ax))

    reference = numpy_out([a.astype(np.float64) for a in inputs])
    w = np.resize(weights, reference.shape) if reference.size else np.zeros(reference.shape)

    tensors = [gpuaccel.tensor(a, requires_grad=True) for a in inputs]
    out = _reduce(fn(*tensors), reduction, axis, lambda t, ax: t.mean(axis=ax))
    assert tuple(out.shape) == reference.shape, (tuple(out.shape), reference.shape)
    (out * gpuaccel.tensor(w.astype(np.float32))).sum().backward()
    numeric = numeric_grads(lambda *arrays: numpy_out(list(arrays)), inputs, w, eps=1e-4)
    for i, (t, a) in enumerate(zip(tensors, inputs)):
        analytic = t.grad.numpy() if t.grad is not None else np.zeros(a.shape, np.float32)
        assert analytic.shape == a.shape, (analytic.shape, a.shape)
        np.testing.assert_allclose(analytic, numeric[i], rtol=2e-2, atol=2e-2,
                                   err_msg=f"d/d(input {i}) of {op}")


@st.composite
def gradient_cases(draw):
    op = draw(st.sampled_from(sorted(OPS)))
    _, _, arity, domain = OPS[op]
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=arity, min_dims=0, max_dims=3,
                                                    min_side=0, max_side=3))
    if op == "softmax":
        shapes = type(shapes)(input_shapes=tuple(s if s else (1,) for s in shapes.input_shapes),
                              result_shape=shapes.result_shape)
    if domain == "positive":
        elements = st.floats(0.5, 3, width=32)
    elif domain == "away_from_zero":
        elements = st.one_of(st.floats(0.5, 3, width=32), st.floats(-3, -0.5, width=32))
    else:
        elements = st.floats(-3, 3, width=32)
    if op == "maximum":  # x on k + 1/4, y on k + 3/4: no ties, where the gradient has a kink
        elements = [st.integers(-3, 3).map(lambda k, o=o: k + o) for o in (0.25, 0.75)]
    else:
        elements = [elements] * arity
    inputs = [draw(hnp.arrays(np.float32, s, elements=e))
              for s, e in zip(shapes.input_shapes, elements)]
    if op == "pow":  # a moderate exponent keeps float32's rounding below the tolerance
        inputs[1] = np.asarray(np.clip(inputs[1], 0.5, 2.0), dtype=np.float32)
    weights = draw(hnp.arrays(np.float64, (4,), elements=st.floats(-2, 2)))
    reduction = draw(st.sampled_from(["none", "mean"]))
    axis = draw(st.one_of(st.none(), st.integers(0, 2)))
    return op, inputs, weights, reduction, axis


@given(gradient_cases())
def test_gradients_match_finite_differences(isolated, case):
    isolated.call("test_fuzz_autograd", "check_gradient", *case)
