"""Property-based fuzzing of the Keras face's arguments: layer constructors with random (often
wrong) values, the layers called on a small batch, and ``fit``'s numeric arguments. The
contract: a bad value raises a typed error (ValueError, TypeError, NotImplementedError or one of
gpuaccel.errors) without pybind11 text; a good one builds, runs and gives the expected shape.
Never a crash: every example runs in an isolated worker (crash_isolation.py)."""
import numpy as np
from hypothesis import given, strategies as st

from crash_isolation import isolated  # noqa: F401 -- the module-scoped worker fixture

KERAS_ERRORS = ("ValueError", "TypeError", "NotImplementedError", "OpError")
PYBIND_TEXT = ("incompatible function arguments", "Unable to cast", "incompatible constructor")


def _assert_typed(error):
    names = [c.__name__ for c in type(error).__mro__]
    assert any(n in names for n in KERAS_ERRORS), f"untyped {type(error).__name__}: {error}"
    assert not any(t in str(error) for t in PYBIND_TEXT), f"pybind11 text leaked: {error}"


# Values a student might pass by mistake, next to plausible ones.
ANY_VALUE = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 6), st.sampled_from([0, -1, 2**31, 2**63, 2**70]),
    st.floats(-2, 4), st.just(float("nan")), st.sampled_from(["", "relu", "same", "valid", "x", "2"]),
    st.tuples(st.integers(-1, 4), st.integers(-1, 4)), st.lists(st.integers(0, 3), max_size=3))

LAYERS = {
    "Dense": (("units",), ("activation", "use_bias", "kernel_initializer")),
    "Conv2D": (("filters", "kernel_size"), ("strides", "padding", "dilation_rate", "activation")),
    "Conv2DTranspose": (("filters", "kernel_size"),
                        ("strides", "padding", "output_padding", "dilation_rate", "activation")),
    "MaxPooling2D": ((), ("pool_size", "strides", "padding")),
    "AveragePooling2D": (("pool_size",), ("strides", "padding")),
    "Dropout": (("rate",), ("seed",)),
    "Activation": (("activation",), ()),
    "BatchNormalization": ((), ("axis", "momentum", "epsilon", "center", "scale")),
    "LayerNormalization": ((), ("axis", "epsilon", "center", "scale")),
    "Embedding": (("input_dim", "output_dim"), ()),
    "Flatten": ((), ()),
    "GlobalAveragePooling2D": ((), ("keepdims",)),
}


def check_layer(name, args, kwargs, input_rank):
    import gpuaccel
    from gpuaccel import keras
    try:
        layer = getattr(keras.layers, name)(*args, **kwargs)
    except Exception as error:  # noqa: BLE001
        _assert_typed(error)
        return "rejected"
    shape = {2: (2, 5), 3: (2, 4, 5), 4: (2, 6, 6, 3)}[input_rank]
    x = np.arange(np.prod(shape)).reshape(shape) % 7
    x = x.astype(np.int64 if name == "Embedding" else np.float32)
    try:
        y = layer(gpuaccel.tensor(x), training=True)
    except Exception as error:  # noqa: BLE001
        _assert_typed(error)
        return "call rejected"
    assert isinstance(y, gpuaccel.Tensor)
    out = y.detach().numpy() if y.dtype != gpuaccel.bfloat16 else y.detach().float().numpy()
    assert out.shape[0] == 2, out.shape
    return "ok"


@st.composite
def layer_cases(draw):
    name = draw(st.sampled_from(sorted(LAYERS)))
    required, optional = LAYERS[name]
    args = [draw(ANY_VALUE) for _ in required]
    kwargs = {k: draw(ANY_VALUE) for k in optional if draw(st.booleans())}
    return name, args, kwargs, draw(st.sampled_from([2, 3, 4]))


@given(layer_cases())
def test_layer_arguments_give_typed_errors_or_work(isolated, case):
    isolated.call("test_fuzz_keras", "check_layer", *case)


def check_fit(batch_size, epochs, validation_split, shuffle, samples):
    from gpuaccel import keras
    x = np.linspace(-1, 1, samples * 3, dtype=np.float32).reshape(samples, 3)
    y = (x.sum(axis=1) > 0).astype(np.int64)
    model = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    try:
        history = model.fit(x, y, batch_size=batch_size, epochs=epochs,
                            validation_split=validation_split, shuffle=shuffle, verbose=0)
    except Exception as error:  # noqa: BLE001
        _assert_typed(error)
        return "rejected"
    losses = history.history.get("loss", [])
    assert all(np.isfinite(v) for v in losses), losses
    return "ok"


@given(st.one_of(st.none(), st.integers(-2, 40), st.floats(0, 8), st.just(2**63)),
       st.one_of(st.integers(-1, 3), st.floats(0, 2)),
       st.one_of(st.floats(-0.5, 1.5), st.just(0.0)),
       st.one_of(st.booleans(), st.just("batch"), st.integers(0, 1)),
       st.integers(1, 12))
def test_fit_arguments_give_typed_errors_or_train(isolated, batch_size, epochs, split, shuffle,
                                                  samples):
    isolated.call("test_fuzz_keras", "check_fit", batch_size, epochs, split, shuffle, samples)
