"""gpuaccel.testing's helpers for instructors: assert_close_to_keras against real Keras,
measure_epoch (one fit call per epoch, warm-up untimed) and assert_speedup."""
import math

import keras as real_keras
import numpy as np
import pytest

from gpuaccel import keras
from gpuaccel.demo import course_cnn
from gpuaccel.testing import EpochTiming, assert_close_to_keras, assert_speedup, measure_epoch


def _dense(k, units=4):
    return k.Sequential([k.layers.Dense(units, activation="relu", input_shape=(3,)),
                         k.layers.Dense(2)])


# ---- assert_close_to_keras
def test_the_course_cnn_matches_its_keras_twin():
    x = np.random.default_rng(0).random((4, 28, 28, 1), dtype=np.float32)
    largest = assert_close_to_keras(course_cnn(), course_cnn(real_keras), x, rtol=1e-4)
    assert 0 <= largest < 1e-3


def test_a_different_computation_fails_with_the_worst_element():
    ours, theirs = _dense(keras), _dense(real_keras)
    x = np.random.default_rng(1).random((5, 3), dtype=np.float32)
    assert_close_to_keras(ours, theirs, x)  # copies our weights into the Keras model
    weights = theirs.get_weights()
    weights[-1] = weights[-1] + 0.5  # Keras's output bias moves
    theirs.set_weights(weights)
    with pytest.raises(AssertionError, match=r"10 of 10 outputs differ from Keras.*worst at "
                                             r"index \(\d, \d\)"):
        assert_close_to_keras(ours, theirs, x, copy_weights=False)


def test_different_architectures_are_named():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(AssertionError, match=r"not the same model: gpuaccel has \[\(3, 4\), "
                                             r"\(4,\), \(4, 2\), \(2,\)\], Keras has \[\(3, 5\)"):
        assert_close_to_keras(_dense(keras), _dense(real_keras, units=5), x)


def test_compare_arguments_are_checked():
    model = _dense(keras)
    with pytest.raises(ValueError, match="rtol must be a number >= 0, got -1"):
        assert_close_to_keras(model, _dense(real_keras), np.ones((1, 3)), rtol=-1)
    with pytest.raises(ValueError, match="the same object"):
        assert_close_to_keras(model, model, np.ones((1, 3)))


# ---- measure_epoch
class FitRecorder:
    """A model whose fit records its calls."""

    def __init__(self):
        self.calls = []

    def fit(self, x, **kwargs):
        self.calls.append((x, kwargs))


def test_measure_epoch_runs_one_fit_per_epoch_after_the_warm_up():
    model = FitRecorder()
    timing = measure_epoch(model, ("X", "Y"), epochs=3, warmup_epochs=2, batch_size=32)
    assert len(model.calls) == 5 and len(timing.per_epoch) == 3
    assert all(c == ("X", {"epochs": 1, "verbose": 0, "batch_size": 32, "y": "Y"})
               for c in model.calls)
    assert timing.seconds == sorted(timing.per_epoch)[1]
    assert all(s >= 0 for s in timing.per_epoch)


def test_measure_epoch_trains_a_real_model():
    model = _dense(keras)
    model.compile(optimizer="sgd", loss="mse")
    x = np.random.default_rng(2).random((64, 3), dtype=np.float32)
    before = [w.copy() for w in model.get_weights()] if model.built else None
    timing = measure_epoch(model, (x, x[:, :2]), batch_size=16)
    assert len(timing.per_epoch) == 1 and timing.seconds > 0
    if before is not None:
        assert any(not np.array_equal(a, b) for a, b in zip(before, model.get_weights()))


@pytest.mark.parametrize("kwargs, match", [
    ({"epochs": 0}, "epochs must be an integer >= 1, got 0"),
    ({"warmup_epochs": -1}, "warmup_epochs must be an integer >= 0, got -1"),
    ({"epochs": 1.5}, "epochs must be an integer >= 1, got 1.5"),
    ({"initial_epoch": 2}, "pass epochs= and warmup_epochs= to measure_epoch"),
])
def test_measure_epoch_arguments_are_checked(kwargs, match):
    with pytest.raises(ValueError, match=match):
        measure_epoch(FitRecorder(), [1, 2], **kwargs)


def test_measure_epoch_needs_a_model_with_fit():
    with pytest.raises(TypeError, match="must have a fit method"):
        measure_epoch(object(), [1])
    with pytest.raises(ValueError, match="must be \\(x, y\\)"):
        measure_epoch(FitRecorder(), (1, 2, 3))


# ---- assert_speedup
def test_assert_speedup_returns_the_speedup():
    assert assert_speedup(3.0, 1.5) == 2.0
    assert assert_speedup(EpochTiming([2.0, 9.0, 2.2]), EpochTiming([1.0]), at_least=2.2) == \
        pytest.approx(2.2)


def test_assert_speedup_fails_below_the_threshold_with_the_target():
    with pytest.raises(AssertionError, match=r"speedup 1\.20x is below the required 1\.5x: "
                                             r"baseline 1\.800 s, optimized 1\.500 s; the "
                                             r"optimized run must take at most 1\.200 s"):
        assert_speedup(1.8, 1.5)


@pytest.mark.parametrize("baseline, optimized, at_least, match", [
    (0, 1.0, 1.5, "baseline_seconds must be a positive, finite number of seconds, got 0"),
    (1.0, math.nan, 1.5, "optimized_seconds must be .*got nan"),
    (1.0, "2", 1.5, "optimized_seconds must be .*got '2'"),
    (True, 1.0, 1.5, "baseline_seconds must be .*got True"),
    (1.0, 1.0, 0, "at_least must be a positive, finite ratio, got 0"),
])
def test_assert_speedup_arguments_are_checked(baseline, optimized, at_least, match):
    with pytest.raises(ValueError, match=match):
        assert_speedup(baseline, optimized, at_least=at_least)
