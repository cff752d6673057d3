"""Property-based fuzzing of the Keras layers added after test_fuzz_keras.py was written
(Reshape, Rescaling, Softmax, ReLU, Add, Concatenate, Conv1D, MultiHeadAttention) and of
``keras.Input`` shapes: random (often wrong) arguments and input shapes, zero-size dimensions
included. A layer that builds must give NumPy's answer (the element-wise and shape layers) or
the shape Keras gives (Conv1D, MultiHeadAttention); anything refused is a typed error without
pybind11 text; never a crash and never a silently different result.

Every example runs in an isolated worker (crash_isolation.py) with a fixed seed.
"""
import math

import numpy as np
from hypothesis import example, given, seed, settings, strategies as st

from crash_isolation import isolated  # noqa: F401 -- the module-scoped worker fixture

TYPED_ERRORS = ("ValueError", "TypeError", "NotImplementedError", "OpError")
PYBIND_TEXT = ("incompatible function arguments", "Unable to cast", "invalid arguments")
FUZZ_SEED = 20261124

SMALL = st.integers(-2, 5)
ODD = st.one_of(SMALL, st.sampled_from([0, 2**32 + 1, 2**32 - 1, 2**62 + 1, 2**63, 1.5, None,
                                        True, "2"]))
SHAPES = st.lists(st.integers(0, 4), min_size=1, max_size=4).map(tuple)


def _refused(error):
    names = [c.__name__ for c in type(error).__mro__]
    assert any(n in names for n in TYPED_ERRORS), f"untyped {type(error).__name__}: {error}"
    assert not any(t in str(error) for t in PYBIND_TEXT), f"pybind11 text leaked: {error}"


def _values(shape, offset=0):
    return ((np.arange(math.prod(shape)) + offset) % 7 - 3).astype(np.float32).reshape(shape)


def _reference(name, args, inputs):
    """NumPy's result for the element-wise and shape layers; None where Keras refuses."""
    x = inputs[0]
    if name == "Reshape":
        (target,) = args
        target = (target,) if isinstance(target, int) and not isinstance(target, bool) else target
        if not isinstance(target, tuple) or not all(
                isinstance(d, int) and not isinstance(d, bool) and (d > 0 or d == -1)
                for d in target) or list(target).count(-1) > 1:
            return None
        per_example = math.prod(x.shape[1:])
        known = math.prod(d for d in target if d != -1)
        if -1 in target:
            if known == 0 or per_example % known:
                return None
            target = tuple(per_example // known if d == -1 else d for d in target)
        elif known != per_example:
            return None
        return x.reshape((x.shape[0],) + target)
    if name == "Rescaling":
        scale, offset = args
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (scale, offset)):
            return None
        return x * np.float32(scale) + np.float32(offset)
    if name in ("Softmax", "ReLU"):
        if x.ndim < 1:
            return None
        if name == "ReLU":
            return np.maximum(x, 0)
        e = np.exp(x - x.max(axis=-1, keepdims=True)) if x.size else x
        return e / e.sum(axis=-1, keepdims=True) if x.size else x
    if name == "Add":
        if len(inputs) < 2 or any(i.shape != x.shape for i in inputs):
            return None
        return sum(inputs[1:], inputs[0])
    if name == "Concatenate":
        (axis,) = args
        if len(inputs) < 2 or not isinstance(axis, int) or isinstance(axis, bool):
            return None
        rank = x.ndim
        if not (-rank <= axis < rank) or axis % rank == 0:
            return None  # the batch axis cannot be concatenated (as Keras)
        if any(i.ndim != rank for i in inputs):
            return None
        keep = [d for d in range(rank) if d != axis % rank]
        if any([i.shape[d] for d in keep] != [x.shape[d] for d in keep] for i in inputs):
            return None
        return np.concatenate(inputs, axis=axis)
    raise AssertionError(name)


def check_elementwise_layer(name, args, input_shapes):
    from gpuaccel import keras
    inputs = [_values(s, k) for k, s in enumerate(input_shapes)]
    expected = _reference(name, args, inputs)
    try:
        layer = getattr(keras.layers, name)(*args)
        call_input = inputs if name in ("Add", "Concatenate") else inputs[0]
        out = layer(call_input).numpy()
    except Exception as error:  # noqa: BLE001
        _refused(error)
        assert expected is None or expected.size == 0 and name == "Softmax", \
            f"{name}{tuple(args)} refused {input_shapes}: {error}"
        return "rejected"
    assert expected is not None, f"{name}{tuple(args)} accepted {input_shapes} -> {out.shape}"
    assert out.shape == expected.shape, (out.shape, expected.shape)
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-6)
    return "ok"


ELEMENTWISE = st.one_of(
    st.tuples(st.just("Reshape"), st.tuples(st.one_of(ODD, st.lists(ODD, max_size=3).map(tuple))),
              st.lists(SHAPES, min_size=1, max_size=1)),
    st.tuples(st.just("Rescaling"), st.tuples(st.one_of(ODD, st.floats(-2, 2)),
                                              st.one_of(ODD, st.floats(-2, 2))),
              st.lists(SHAPES, min_size=1, max_size=1)),
    st.tuples(st.sampled_from(["Softmax", "ReLU"]), st.just(()),
              st.lists(SHAPES, min_size=1, max_size=1)),
    st.tuples(st.just("Add"), st.just(()), st.lists(SHAPES, min_size=1, max_size=3)),
    st.tuples(st.just("Concatenate"), st.tuples(ODD), st.lists(SHAPES, min_size=1, max_size=3)))


@settings()  # the profile's budget (conftest.py)
@seed(FUZZ_SEED)
@given(ELEMENTWISE)
# Regression: the known target entries' product overflowed int64 (undefined behaviour in the
# layer's check, which then reported a product of -1).
@example(("Reshape", ((2**32 + 1, 2**32 - 1),), [(2, 1)]))
@example(("Reshape", ((2**62 + 1, 4),), [(2, 4)]))  # wraps to 4: the op's own check refuses
@example(("Reshape", ((1.5,),), [(2, 1)]))  # these two were read as int(): (1,)
@example(("Reshape", (True,), [(1,)]))
@example(("Reshape", ((1,),), [(0,)]))  # an empty batch was taken for 0 values per example
@example(("Concatenate", (2**63,), [(2, 3), (2, 3)]))  # was the binding's argument text
def test_elementwise_and_shape_layers_match_numpy(isolated, case):
    isolated.call("test_fuzz_layers", "check_elementwise_layer", *case)


def check_sequence_layer(name, args, kwargs, shapes):
    from gpuaccel import keras
    inputs = [_values(s, k) for k, s in enumerate(shapes)]
    try:
        layer = getattr(keras.layers, name)(*args, **kwargs)
        out = layer(*inputs) if name == "MultiHeadAttention" else layer(inputs[0])
        out = out.detach().numpy()
    except Exception as error:  # noqa: BLE001
        _refused(error)
        return "rejected"
    if name == "Conv1D":
        filters, kernel = args
        strides = kwargs.get("strides", 1)
        steps = shapes[0][1]
        length = -(-steps // strides) if kwargs.get("padding") == "same" else \
            (steps - kernel) // strides + 1
        assert out.shape == (shapes[0][0], length, filters), (out.shape, args, kwargs, shapes)
    else:
        query = shapes[0]
        assert out.shape == query, (out.shape, query)
        assert np.all(np.isfinite(out)) or shapes[1][1] == 0, out
    return "ok"


SEQUENCE = st.one_of(
    st.tuples(st.just("Conv1D"), st.tuples(ODD, ODD),
              st.fixed_dictionaries({}, optional={"strides": ODD,
                                                  "padding": st.sampled_from(["valid", "same",
                                                                              "causal", "x"])}),
              st.lists(st.tuples(st.integers(0, 2), st.integers(0, 6), st.integers(0, 3)),
                       min_size=1, max_size=1)),
    st.tuples(st.just("MultiHeadAttention"), st.just(()),
              st.fixed_dictionaries({"num_heads": ODD, "key_dim": ODD},
                                    optional={"value_dim": ODD, "dropout": st.floats(-1, 2)}),
              st.lists(st.tuples(st.integers(1, 2), st.integers(0, 4), st.integers(1, 4)),
                       min_size=1, max_size=3)))


@settings()
@seed(FUZZ_SEED)
@given(SEQUENCE)
@example(("Conv1D", (2**63, 1), {}, [(1, 3, 1)]))  # was the binding's argument text
def test_sequence_layers_give_keras_shapes_or_typed_errors(isolated, case):
    isolated.call("test_fuzz_layers", "check_sequence_layer", *case)


def test_softmax_mask_is_refused_not_ignored(isolated):
    # Keras's Softmax gives masked entries probability 0; the mask used to be dropped.
    outcome = isolated.run(
        "import gpuaccel\nfrom gpuaccel import keras\n"
        "keras.layers.Softmax()(gpuaccel.ones(2, 3),\n"
        "                       mask=gpuaccel.tensor([[True, False, True], [True] * 3]))")
    assert outcome.error_type == "NotImplementedError" and "mask" in outcome.message, outcome


def test_input_shapes_beyond_int64_values_are_refused(isolated):
    # Flatten of Input((2**40, 2**40)) had the symbolic shape (None, 0): the product wrapped.
    outcome = isolated.run("from gpuaccel import keras\nkeras.Input((2**40, 2**40))")
    assert outcome.error_type == "ValueError", outcome
    assert ("values per example of Input() shape (None, 1099511627776, 1099511627776) must be "
            f"in [0, 2**63 - 1], got {2**80}") in outcome.message, outcome
    outcome = isolated.run("from gpuaccel import keras\n"
                           "result = keras.layers.Flatten()(keras.Input((2**31, 2**31))).shape")
    assert outcome.value == "(None, 4611686018427387904)", outcome
