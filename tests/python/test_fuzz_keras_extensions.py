"""Keras-misuse fuzz for the extension points (Python layers, losses, configs): what a student
gets wrong while extending Keras gets the error type real Keras 3 raises, with a text that says
what was wrong. Each case runs the same code against keras and gpuaccel.keras; hypothesis
generates the wrong values (initializer names, output widths, what a loss returns, config keys).
"""
import string
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import gpuaccel as gt
from gpuaccel import keras as gk

keras = pytest.importorskip("keras")
pytest.importorskip("tensorflow")

FEW = settings(max_examples=12, deadline=None)
X = np.random.default_rng(0).normal(size=(8, 4)).astype(np.float32)
Y = np.ones((8, 1), np.float32)


def both(case):
    """``case(lib, ops)`` run with Keras and gpuaccel: (Keras's exception or None, ours)."""
    outcomes = []
    for lib, ops in ((keras, keras.ops), (gk, gt)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                case(lib, ops)
            outcomes.append(None)
        except Exception as error:  # noqa: BLE001 -- the outcome is what is compared
            outcomes.append(error)
    return outcomes


# ---- add_weight(initializer=<a misspelled or made-up name>) ----

INITIALIZERS = ["glorot_uniform", "zeros", "ones", "he_normal", "random_normal", "lecun_uniform"]


@st.composite
def wrong_initializer_names(draw):
    name = draw(st.sampled_from(INITIALIZERS))
    how = draw(st.sampled_from(["append", "drop", "upper", "garbage"]))
    if how == "append":
        name += draw(st.sampled_from(list(string.ascii_lowercase + "_1")))
    elif how == "drop":
        i = draw(st.integers(0, len(name) - 1))
        name = name[:i] + name[i + 1:]
    elif how == "upper":
        name = name.upper()
    else:
        name = draw(st.text(string.ascii_letters + "_ -", min_size=0, max_size=12))
    return name


@FEW
@given(wrong_initializer_names())
def test_add_weight_with_a_wrong_initializer_name(name):
    try:
        keras.initializers.get(name)
        assume(False)  # a name Keras knows (e.g. a class name): not a misuse
    except (ValueError, KeyError):
        pass

    def case(lib, ops):
        class Linear(lib.layers.Layer):
            def build(self, input_shape):
                self.w = self.add_weight(shape=(input_shape[-1], 2), initializer=name)

            def call(self, inputs):
                return ops.matmul(inputs, self.w)
        Linear()(X)

    theirs, ours = both(case)
    assert isinstance(theirs, ValueError) and isinstance(ours, ValueError), (theirs, ours)
    assert "Could not interpret initializer identifier" in str(ours) and repr(name) in str(ours)


# ---- call() returning another shape than the layer declares / the next layer expects ----

@FEW
@given(st.integers(1, 7).filter(lambda width: width != 3))
def test_call_returning_another_width_than_compute_output_shape(width):
    def case(lib, ops):
        class Declares3(lib.layers.Layer):
            def compute_output_shape(self, input_shape):
                return (input_shape[0], 3)

            def call(self, inputs):
                return ops.concatenate([inputs, inputs], axis=-1)[:, :width]
        model = lib.Sequential([lib.Input((4,)), Declares3(), lib.layers.Dense(1)])
        model.compile("sgd", "mse")
        model.fit(X, Y, verbose=0)

    theirs, ours = both(case)
    assert isinstance(theirs, ValueError) and isinstance(ours, ValueError), (theirs, ours)
    assert "expected axis -1 of input shape to have value 3" in str(ours)
    assert f"shape (8, {width})" in str(ours)


@FEW
@given(st.integers(1, 5), st.integers(2, 5))
def test_output_that_does_not_fit_the_labels(out_width, label_width):
    assume(out_width != label_width and out_width != 1)

    def case(lib, ops):
        model = lib.Sequential([lib.Input((4,)), lib.layers.Dense(out_width)])
        model.compile("sgd", "mse")
        model.fit(X, np.ones((8, label_width), np.float32), verbose=0)

    theirs, ours = both(case)
    assert isinstance(theirs, ValueError) and isinstance(ours, ValueError), (theirs, ours)
    assert f"{out_width}" in str(ours) and f"{label_width}" in str(ours)


# ---- a weight created in call() ----

@pytest.mark.parametrize("where", ["eager", "fit"])
def test_weight_created_in_call(where):
    def case(lib, ops):
        class WeightInCall(lib.layers.Layer):
            def call(self, inputs):
                w = self.add_weight(shape=(inputs.shape[-1], 1), initializer="ones")
                return ops.matmul(inputs, w)
        if where == "eager":
            WeightInCall()(X)
        else:
            model = lib.Sequential([lib.Input((4,)), WeightInCall()])
            model.compile("sgd", "mse")
            model.fit(X, Y, verbose=0)

    theirs, ours = both(case)
    assert isinstance(theirs, ValueError) and isinstance(ours, ValueError), (theirs, ours)
    assert "already built" in str(ours) and "`build()` method" in str(ours)


# ---- what a loss returns ----

NOT_A_LOSS = {None: ValueError, "loss": TypeError, "nan": TypeError, b"x": TypeError}


@FEW
@given(st.sampled_from(sorted(NOT_A_LOSS, key=repr)), st.booleans())
def test_loss_returning_something_that_is_not_numbers(value, as_class):
    def case(lib, ops):
        def bad_loss(y_true, y_pred):
            return value

        class BadLoss(lib.losses.Loss):
            def call(self, y_true, y_pred):
                return value
        model = lib.Sequential([lib.Input((4,)), lib.layers.Dense(1)])
        model.compile("sgd", BadLoss() if as_class else bad_loss)
        model.evaluate(X, Y, verbose=0)

    theirs, ours = both(case)
    expected = NOT_A_LOSS[value]
    assert isinstance(theirs, expected) and isinstance(ours, expected), (theirs, ours)
    assert "must return a tensor of numbers" in str(ours)


@FEW
@given(st.sampled_from(["per_example", "per_value", "scalar"]), st.sampled_from([1, 3]))
def test_loss_of_any_shape_is_reduced_as_keras_reduces_it(shape, units):
    """Not a scalar is not a misuse in Keras: sum_over_batch_size takes the mean of whatever the
    loss returns; an add_loss that is not a scalar is summed."""
    def loss_fn(ops):
        def loss(y_true, y_pred):
            squared = ops.square(y_true - y_pred)
            if shape == "per_example":
                return ops.mean(squared, axis=-1) if ops is keras.ops else \
                    ops.reduce_mean(squared, axis=-1)
            if shape == "scalar":
                return ops.mean(squared) if ops is keras.ops else ops.reduce_mean(squared)
            return squared
        return loss

    keras.utils.set_random_seed(0)
    results = []
    theirs_model = None
    for lib, ops in ((keras, keras.ops), (gk, gt)):
        class VectorPenalty(lib.layers.Layer):
            def call(self, inputs):
                self.add_loss(0.01 * inputs[0])  # a vector: Keras sums it
                return inputs
        model = lib.Sequential([lib.Input((4,)), VectorPenalty(), lib.layers.Dense(units)])
        if theirs_model is not None:
            model.set_weights(theirs_model.get_weights())
        theirs_model = model
        model.compile("sgd", loss_fn(ops))
        results.append(model.evaluate(X, np.ones((8, units), np.float32), verbose=0))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5, atol=1e-6)


# ---- get_config that does not round-trip ----

@FEW
@given(st.text(string.ascii_lowercase + "_", min_size=1, max_size=8))
def test_get_config_with_a_key_init_does_not_take(key):
    assume(key not in ("units", "name", "trainable", "dtype", "kwargs"))

    def case(lib, ops):
        class Scaled(lib.layers.Layer):
            def __init__(self, units=2, **kwargs):
                super().__init__(**kwargs)
                self.units = units

            def get_config(self):
                config = super().get_config()
                config[key] = self.units
                return config

            def call(self, inputs):
                return inputs
        Scaled.from_config(Scaled(3).get_config())

    theirs, ours = both(case)
    assert isinstance(theirs, TypeError) and isinstance(ours, TypeError), (theirs, ours)
    assert "Error when deserializing class 'Scaled'" in str(ours) and key in str(ours)


def test_get_config_not_written_round_trips_the_constructor_arguments():
    """Keras 3 records a subclass's constructor arguments; one that is not a plain value makes
    get_config refuse, saying to write it."""
    configs = []
    for lib in (keras, gk):
        class NoConfig(lib.layers.Layer):
            def __init__(self, units, scale=1.0, **kwargs):
                super().__init__(**kwargs)
                self.units, self.scale = units, scale

            def call(self, inputs):
                return inputs
        config = NoConfig(3, scale=0.5, name="nc").get_config()
        copy = NoConfig.from_config(config)
        assert (copy.units, copy.scale, copy.name) == (3, 0.5, "nc")
        configs.append({k: config[k] for k in ("units", "scale", "name")})
        with pytest.raises(NotImplementedError, match="must override `get_config\\(\\)`"):
            NoConfig(object()).get_config()
    assert configs[0] == configs[1]
