"""use_ema / ema_momentum / ema_overwrite_frequency on gpuaccel's optimizers and
keras.callbacks.SwapEMAWeights against real Keras 3: the same variables and gradients give the
same variables and the same averages (listed in optimizer.variables where Keras lists them);
finalize_variable_values; fit from the same weights with SwapEMAWeights (validation on the
averages, swap_on_epoch) gives the same history and weights, and evaluate/predict with the
callback use the averages; Keras's argument errors."""
import re

import keras
import numpy as np
import pytest

import gpuaccel
from gpuaccel import keras as gk
from gpuaccel.keras import optimizers as gopt
from test_optimizers import _assert_close, _gradients, _initial

CASES = [
    ("Adam", {"use_ema": True}),
    ("SGD", {"learning_rate": 0.1, "use_ema": True, "ema_momentum": 0.5,
             "ema_overwrite_frequency": 2}),
    ("Lamb", {"learning_rate": 0.01, "use_ema": True, "ema_momentum": 0.9,
              "ema_overwrite_frequency": 3}),
]


def _step_both(cls, kwargs, steps=5, seed=31):
    init, grads = _initial(seed), _gradients(seed)[:steps]
    theirs = getattr(keras.optimizers, cls)(**kwargs)
    ours = getattr(gopt, cls)(**kwargs)
    k_vars = [keras.Variable(v.copy()) for v in init]
    g_vars = [gpuaccel.tensor(v.copy()) for v in init]
    for gs in grads:
        theirs.apply_gradients(zip(gs, k_vars))
        ours.apply_gradients(zip([gpuaccel.tensor(g) for g in gs], g_vars))
    return theirs, ours, k_vars, g_vars


@pytest.mark.parametrize("cls,kwargs", CASES, ids=[c for c, _ in CASES])
def test_variables_and_averages_match_keras(cls, kwargs):
    theirs, ours, k_vars, g_vars = _step_both(cls, kwargs)
    _assert_close([v.numpy() for v in g_vars], [v.numpy() for v in k_vars], rtol=2e-6)
    their_vars, our_names = theirs.variables, ours._variable_names()
    assert len(our_names) == len(their_vars)
    for name, value, their_var in zip(our_names[2:], ours.variables[2:], their_vars[2:]):
        assert their_var.path.rsplit("_", 1)[1] == name.rsplit("_", 1)[1], (name, their_var.path)
        np.testing.assert_allclose(value.numpy(), their_var.numpy(), rtol=2e-6, atol=2e-6)
    # The averages come first, as Keras's base build adds them before the slots.
    assert [n.endswith("_average") for n in our_names[2:5]] == [True] * 3
    theirs.finalize_variable_values(k_vars)
    ours.finalize_variable_values(g_vars)
    _assert_close([v.numpy() for v in g_vars], [v.numpy() for v in k_vars], rtol=2e-6)
    np.testing.assert_array_equal(g_vars[0].numpy(), ours.variables[2].numpy())


def test_overwrite_frequency_puts_the_averages_in_the_variables():
    # ema_overwrite_frequency=2: after step 2 the variables equal their averages.
    _, ours, k_vars, g_vars = _step_both("SGD", CASES[1][1], steps=2)
    for k, v in enumerate(g_vars):
        np.testing.assert_array_equal(v.numpy(), ours.variables[2 + k].numpy())
    _assert_close([v.numpy() for v in g_vars], [v.numpy() for v in k_vars], rtol=2e-6)


def _model(lib, seed=7):
    model = lib.Sequential([lib.Input((3,)), lib.layers.Dense(4, activation="tanh"),
                            lib.layers.Dense(1)])
    rng = np.random.default_rng(seed)
    model.set_weights([rng.normal(size=w.shape).astype(np.float32) * 0.5
                       for w in model.get_weights()])
    return model


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(8)
    x = rng.normal(size=(24, 3)).astype(np.float32)
    y = rng.normal(size=(24, 1)).astype(np.float32)
    return x, y


@pytest.mark.parametrize("swap_on_epoch", [False, True])
def test_fit_with_swap_ema_weights_matches_keras(data, swap_on_epoch):
    x, y = data
    runs = {}
    for name, lib in (("keras", keras), ("gpuaccel", gk)):
        model = _model(lib)
        opts = keras.optimizers if lib is keras else gopt
        model.compile(optimizer=opts.SGD(learning_rate=0.1, use_ema=True, ema_momentum=0.6),
                      loss="mse")
        history = model.fit(x, y, epochs=3, batch_size=8, shuffle=False, verbose=0,
                            validation_data=(x[:8], y[:8]),
                            callbacks=[lib.callbacks.SwapEMAWeights(swap_on_epoch)])
        evaluated = model.evaluate(x, y, verbose=0,
                                   callbacks=[lib.callbacks.SwapEMAWeights()])
        runs[name] = (history.history, model.get_weights(), evaluated)
    (k_hist, k_weights, k_eval), (g_hist, g_weights, g_eval) = runs["keras"], runs["gpuaccel"]
    for key in ("loss", "val_loss"):
        np.testing.assert_allclose(g_hist[key], k_hist[key], rtol=2e-5)
    for ours, theirs in zip(g_weights, k_weights):
        np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(g_eval, k_eval, rtol=2e-5)


def test_evaluate_with_the_callback_uses_the_averages_and_swaps_back(data):
    # train_on_batch does not finalize: the variables and their averages differ, so evaluate
    # with the callback (on the averages) differs from evaluate without it, as in Keras, and
    # the trained weights are back afterwards.
    x, y = data
    losses = {}
    for name, lib in (("keras", keras), ("gpuaccel", gk)):
        model = _model(lib)
        opts = keras.optimizers if lib is keras else gopt
        model.compile(optimizer=opts.SGD(learning_rate=0.1, use_ema=True, ema_momentum=0.5),
                      loss="mse")
        for start in (0, 8, 16):
            model.train_on_batch(x[start:start + 8], y[start:start + 8])
        trained = model.get_weights()
        plain = model.evaluate(x, y, verbose=0)
        swapped = model.evaluate(x, y, verbose=0, callbacks=[lib.callbacks.SwapEMAWeights()])
        for after, before in zip(model.get_weights(), trained):
            np.testing.assert_allclose(after, before, rtol=1e-6, atol=1e-7)
        losses[name] = (plain, swapped)
    assert abs(losses["gpuaccel"][1] - losses["gpuaccel"][0]) > 1e-4
    np.testing.assert_allclose(losses["gpuaccel"], losses["keras"], rtol=2e-5)


def test_errors_match_keras():
    for lib in (keras.optimizers, gopt):
        with pytest.raises(ValueError, match=re.escape("`ema_momentum` must be in the range "
                                                       "[0, 1]. Received: ema_momentum=1.5")):
            lib.Adam(use_ema=True, ema_momentum=1.5)
        with pytest.raises(ValueError, match="`ema_overwrite_frequency` must be an integer "
                                             ">= 1 or None. Received: "
                                             "ema_overwrite_frequency=0.5"):
            lib.Adam(use_ema=True, ema_overwrite_frequency=0.5)
        lib.Adam(use_ema=False, ema_momentum=1.5)  # unchecked without use_ema, as Keras
    x = np.zeros((4, 3), np.float32)
    for lib in (keras, gk):
        model = _model(lib)
        opts = keras.optimizers if lib is keras else gopt
        model.compile(optimizer=opts.SGD(), loss="mse")
        model.fit(x, x[:, :1], epochs=1, verbose=0)
        with pytest.raises(ValueError, match=re.escape("SwapEMAWeights must be used when "
                                                       "`use_ema=True` is set on the optimizer. "
                                                       "Received: use_ema=False")):
            model.evaluate(x, x[:, :1], verbose=0, callbacks=[lib.callbacks.SwapEMAWeights()])
