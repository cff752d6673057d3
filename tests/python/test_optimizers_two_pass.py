"""Lamb and Adafactor, the two-pass optimizers (a per-variable reduction between the slot pass
and the parameter pass), against real Keras 3: the same initial variables (rank 2, 1 and 3, so
Adafactor's factored and unfactored second moments are both used) and five random gradients
give the same variables and optimizer variables (names, shapes, order, values); Lamb's trust
ratio falls back to 1 where a norm is 0, as Keras's; a small model fit from the same weights
ends with the same weights; get_config/from_config/get agree with Keras."""
import keras
import numpy as np
import pytest

import gpuaccel
from gpuaccel import keras as gk
from gpuaccel.keras import optimizers as gopt
from test_optimizers import _assert_close, _gradients, _initial, _run_gpuaccel, _run_keras
from test_optimizers_keras_rules import _dense_model

CASES = [
    ("Lamb", {}),
    ("Lamb", {"learning_rate": 0.01, "beta_1": 0.5, "beta_2": 0.9, "epsilon": 1e-3,
              "weight_decay": 0.1, "clipvalue": 0.5}),
    ("Adafactor", {}),
    ("Adafactor", {"learning_rate": 0.5, "beta_2_decay": -0.5, "epsilon_2": 1e-2,
                   "clip_threshold": 0.5, "weight_decay": 0.01, "clipnorm": 1.0}),
    ("Adafactor", {"learning_rate": 0.05, "relative_step": False, "global_clipnorm": 2.0}),
]


@pytest.mark.parametrize("cls,kwargs", CASES, ids=[f"{c}-{i}" for i, (c, _) in enumerate(CASES)])
def test_matches_keras(cls, kwargs):
    init, grads = _initial(21), _gradients(21)
    theirs, their_iters = _run_keras(cls, kwargs, init, grads)
    ours, our_iters = _run_gpuaccel(cls, kwargs, init, grads)
    # The norms and means are sums in another order than TensorFlow's: a few float32 ulps.
    _assert_close(ours, theirs, rtol=2e-6)
    assert our_iters == their_iters == 5
    assert max(np.abs(o - i).max() for o, i in zip(ours, init)) > 1e-4


def test_lamb_trust_ratio_is_one_where_a_norm_is_zero():
    # A zero variable (||w|| = 0) and a zero gradient from a zero start (||update|| = 0): Keras
    # uses ratio 1 there; a zero gradient on a nonzero variable moves nothing at all.
    init = [np.zeros((3, 4), np.float32), np.ones((4,), np.float32),
            np.full((2, 3, 2), 0.5, np.float32)]
    rng = np.random.default_rng(3)
    grads = [[rng.standard_normal((3, 4)).astype(np.float32), np.zeros((4,), np.float32),
              rng.standard_normal((2, 3, 2)).astype(np.float32)] for _ in range(3)]
    kwargs = {"learning_rate": 0.1}
    theirs, _ = _run_keras("Lamb", kwargs, init, grads)
    ours, _ = _run_gpuaccel("Lamb", kwargs, init, grads)
    _assert_close(ours, theirs, rtol=2e-6)
    np.testing.assert_array_equal(ours[1], init[1])
    assert np.abs(ours[0]).max() > 0.05  # ratio 1: the first steps moved the zero variable


@pytest.mark.parametrize("cls", ["Lamb", "Adafactor"])
def test_optimizer_variables_match_keras(cls):
    init, grads = _initial(22), _gradients(22)
    theirs = getattr(keras.optimizers, cls)(learning_rate=0.01)
    ours = getattr(gopt, cls)(learning_rate=0.01)
    k_vars = [keras.Variable(v.copy()) for v in init]
    g_vars = [gpuaccel.tensor(v.copy()) for v in init]
    for gs in grads:
        theirs.apply_gradients(zip(gs, k_vars))
        ours.apply_gradients(zip([gpuaccel.tensor(g) for g in gs], g_vars))
    their_vars = theirs.variables
    our_names = ours._variable_names()
    assert len(our_names) == len(their_vars)
    assert our_names[:2] == [f"{ours.name}/iteration", f"{ours.name}/learning_rate"]
    for name, value, their_var in zip(our_names[2:], ours.variables[2:], their_vars[2:]):
        assert value.shape == tuple(their_var.shape), (name, their_var.path)
        if cls == "Lamb":
            assert their_var.path.endswith(name.rsplit("_", 1)[1]), (name, their_var.path)
        theirs_np = their_var.numpy()
        np.testing.assert_allclose(value.numpy(), theirs_np, rtol=2e-5,
                                   atol=2e-6 * max(float(np.abs(theirs_np).max()), 1e-30))
    if cls == "Adafactor":
        # r, c, velocity per variable; a rank-1 variable keeps Keras's scalar placeholders.
        assert [n.rsplit("_", 1)[1] for n in our_names[2:5]] == ["r", "c", "velocity"]
        assert [tuple(v.shape) for v in ours.variables[5:7]] == [(), ()]


@pytest.mark.parametrize("cls", ["Lamb", "Adafactor"])
def test_fit_matches_keras(cls):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(24, 4)).astype(np.float32)
    y = rng.normal(size=(24, 1)).astype(np.float32)
    weights = {}
    for name, lib, opts in (("keras", keras, keras.optimizers), ("gpuaccel", gk, gopt)):
        model = _dense_model(lib)
        model.compile(optimizer=getattr(opts, cls)(learning_rate=0.05), loss="mse")
        model.fit(x, y, epochs=2, batch_size=8, shuffle=False, verbose=0)
        weights[name] = model.get_weights()
    for ours, theirs in zip(weights["gpuaccel"], weights["keras"]):
        np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("ours_cls,their_cls",
                         [(gopt.Lamb, keras.optimizers.Lamb),
                          (gopt.Adafactor, keras.optimizers.Adafactor)], ids=["Lamb", "Adafactor"])
def test_config_round_trip_and_get_match_keras(ours_cls, their_cls):
    cls = their_cls.__name__
    ours, theirs = ours_cls().get_config(), their_cls().get_config()
    ours.pop("name")
    theirs.pop("name")
    assert ours == theirs
    cfg = ours_cls(learning_rate=0.25, clipnorm=2.0, name="mine").get_config()
    assert ours_cls.from_config(cfg).get_config() == cfg
    assert their_cls.from_config(cfg).get_config() == cfg
    assert type(gopt.get(cls.lower())) is ours_cls
    assert issubclass(ours_cls, gopt.Optimizer)
