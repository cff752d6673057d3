"""The ``deserialize`` functions of keras.activations, keras.regularizers, keras.constraints and
keras.optimizers.schedules against Keras's: each config Keras writes (its ``serialize`` dicts,
names, ``custom_objects``) deserializes in gpuaccel to the same function or to an object with
the same config and values. An unknown name is a ValueError naming it (Keras 3 hands the unknown
name back as a string, which fails later and elsewhere)."""
import numpy as np
import pytest

import gpuaccel as gt
from gpuaccel import keras as gk

keras = pytest.importorskip("keras")

activations, k_activations = gk.activations, keras.activations
regularizers, k_regularizers = gk.regularizers, keras.regularizers
constraints, k_constraints = gk.constraints, keras.constraints
schedules, k_schedules = gk.optimizers.schedules, keras.optimizers.schedules

WEIGHTS = np.random.default_rng(5).normal(size=(4, 3)).astype(np.float32)


def _refuses_unknown(deserialize, config, name):
    with pytest.raises(ValueError, match=name):
        deserialize(config)


@pytest.mark.parametrize("name", ["relu", "gelu", "softmax", "sigmoid", "swish", "tanh",
                                  "linear", "elu"])
def test_activation_configs_deserialize_to_the_same_function(name):
    config = k_activations.serialize(k_activations.get(name))
    ours = activations.deserialize(config)
    assert ours is activations.deserialize(name)
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(ours(gt.constant(x)).numpy(),
                               np.asarray(k_activations.deserialize(config)(x)), rtol=1e-5,
                               atol=1e-6)


def test_activation_custom_objects_and_unknown_names():
    def scaled(x):
        return x * 2.0
    assert activations.deserialize("scaled", custom_objects={"scaled": scaled}) is scaled
    assert k_activations.deserialize("scaled", custom_objects={"scaled": scaled}) is scaled
    _refuses_unknown(activations.deserialize, "no_such_activation", "no_such_activation")


@pytest.mark.parametrize("regularizer", [
    lambda r: r.L1(0.05), lambda r: r.L2(0.2), lambda r: r.L1L2(l1=0.01, l2=0.3),
    lambda r: r.OrthogonalRegularizer(factor=0.1, mode="columns")])
def test_regularizer_configs_deserialize_to_the_same_penalty(regularizer):
    theirs = regularizer(k_regularizers)
    ours = regularizers.deserialize(k_regularizers.serialize(theirs))
    assert type(ours).__name__ == type(theirs).__name__
    assert ours.get_config() == pytest.approx(theirs.get_config())
    np.testing.assert_allclose(float(ours(gt.constant(WEIGHTS))),
                               float(theirs(keras.ops.convert_to_tensor(WEIGHTS))), rtol=1e-5)


def test_regularizer_names_custom_objects_and_errors():
    for name in ("l1", "l2", "L1L2"):
        assert regularizers.deserialize(name).get_config() == \
            pytest.approx(k_regularizers.deserialize(name).get_config())

    class Tiny(regularizers.Regularizer):
        def __call__(self, weights):
            return 0.0

    config = {"class_name": "Tiny", "config": {}}
    assert isinstance(regularizers.deserialize(config, custom_objects={"Tiny": Tiny}), Tiny)
    _refuses_unknown(regularizers.deserialize, {"class_name": "NoSuchRegularizer", "config": {}},
                     "NoSuchRegularizer")


@pytest.mark.parametrize("constraint", [
    lambda c: c.MaxNorm(max_value=1.5, axis=0), lambda c: c.NonNeg(),
    lambda c: c.UnitNorm(axis=1), lambda c: c.MinMaxNorm(min_value=0.5, max_value=1.0,
                                                         rate=0.5, axis=0)])
def test_constraint_configs_deserialize_to_the_same_projection(constraint):
    theirs = constraint(k_constraints)
    ours = constraints.deserialize(k_constraints.serialize(theirs))
    assert type(ours).__name__ == type(theirs).__name__
    assert ours.get_config() == pytest.approx(theirs.get_config())
    np.testing.assert_allclose(ours(gt.constant(WEIGHTS)).numpy(), np.asarray(theirs(WEIGHTS)),
                               rtol=1e-5, atol=1e-6)


def test_constraint_names_and_errors():
    for name in ("max_norm", "non_neg", "unit_norm"):
        assert type(constraints.deserialize(name)).__name__ == \
            type(k_constraints.deserialize(name)).__name__
    _refuses_unknown(constraints.deserialize, {"class_name": "NoSuchConstraint", "config": {}},
                     "NoSuchConstraint")


@pytest.mark.parametrize("schedule", [
    lambda s: s.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5, staircase=True),
    lambda s: s.PiecewiseConstantDecay([5, 10], [0.1, 0.05, 0.01]),
    lambda s: s.PolynomialDecay(0.1, decay_steps=20, end_learning_rate=0.001, power=2.0),
    lambda s: s.InverseTimeDecay(0.1, decay_steps=5, decay_rate=0.3),
    lambda s: s.CosineDecay(0.1, decay_steps=20, alpha=0.1, warmup_target=0.2,
                            warmup_steps=4),
    lambda s: s.CosineDecayRestarts(0.1, first_decay_steps=6, t_mul=2.0, m_mul=0.5)])
def test_schedule_configs_deserialize_to_the_same_rates(schedule):
    theirs = schedule(k_schedules)
    ours = schedules.deserialize(k_schedules.serialize(theirs))
    assert type(ours).__name__ == type(theirs).__name__
    assert ours.get_config() == theirs.get_config()
    for step in (0, 3, 7, 12, 25):
        np.testing.assert_allclose(float(ours(step)), float(theirs(step)), rtol=1e-5)


def test_schedule_custom_objects_and_errors():
    class Halving(schedules.LearningRateSchedule):
        def __init__(self, start):
            self.start = start

        def __call__(self, step):
            return self.start * 0.5 ** step

        def get_config(self):
            return {"start": self.start}

    config = {"class_name": "Halving", "config": {"start": 0.4}}
    ours = schedules.deserialize(config, custom_objects={"Halving": Halving})
    assert isinstance(ours, Halving) and float(ours(2)) == pytest.approx(0.1)
    _refuses_unknown(schedules.deserialize, {"class_name": "NoSuchDecay", "config": {}},
                     "NoSuchDecay")
