"""keras.optimizers.MultiOptimizer and OptimizerMap against real Keras 3: variables routed by an
OptimizerMap (regex on the variable's path) or a selector callable to different inner
optimizers give the same variables and inner iterations as Keras's over several steps and in
fit; OptimizerMap's lookup rules and errors are Keras's; learning_rate raises as in Keras."""
import re

import keras
import numpy as np
import pytest

import gpuaccel
from gpuaccel import keras as gk
from gpuaccel.keras import optimizers as gopt

# (MultiOptimizer, OptimizerMap) of each library; the rest of an optimizer library is `opts`.
CLASSES = {keras.optimizers: (keras.optimizers.MultiOptimizer, keras.optimizers.OptimizerMap),
           gopt: (gopt.MultiOptimizer, gopt.OptimizerMap)}


def _model(lib, seed=5):
    model = lib.Sequential([lib.Input((3,)), lib.layers.Dense(4, activation="tanh"),
                            lib.layers.Dense(1)])
    rng = np.random.default_rng(seed)
    model.set_weights([rng.normal(size=w.shape).astype(np.float32) * 0.5
                       for w in model.get_weights()])
    return model


def _multi(opts, selector):
    sgd, adam = opts.SGD(learning_rate=0.1, momentum=0.5), opts.Adam(learning_rate=0.05)
    multi_cls, map_cls = CLASSES[opts]
    if selector:
        return multi_cls(lambda v: adam if v.path.endswith("bias") else sgd), sgd, adam
    return multi_cls(map_cls(sgd, {".*bias": adam})), sgd, adam


@pytest.mark.parametrize("selector", [False, True], ids=["map", "callable"])
def test_fit_matches_keras(selector):
    rng = np.random.default_rng(6)
    x = rng.normal(size=(24, 3)).astype(np.float32)
    y = rng.normal(size=(24, 1)).astype(np.float32)
    runs = {}
    for name, lib, opts in (("keras", keras, keras.optimizers), ("gpuaccel", gk, gopt)):
        model = _model(lib)
        multi, sgd, adam = _multi(opts, selector)
        model.compile(optimizer=multi, loss="mse")
        history = model.fit(x, y, epochs=2, batch_size=8, shuffle=False, verbose=0)
        runs[name] = (model.get_weights(), history.history["loss"],
                      [int(o.iterations) for o in (multi, sgd, adam)], len(multi.optimizers))
    (k_w, k_loss, k_iters, k_n), (g_w, g_loss, g_iters, g_n) = runs["keras"], runs["gpuaccel"]
    for ours, theirs in zip(g_w, k_w):
        np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(g_loss, k_loss, rtol=2e-5)
    assert g_iters == k_iters == [6, 6, 6]
    assert g_n == k_n == 2


def test_apply_gradients_routes_each_variable():
    rng = np.random.default_rng(7)
    init = [rng.standard_normal((3, 2)).astype(np.float32), rng.standard_normal(2).astype(np.float32)]
    results = {}
    for name, opts in (("keras", keras.optimizers), ("gpuaccel", gopt)):
        sgd, adam = opts.SGD(learning_rate=0.1), opts.Adam(learning_rate=0.1)
        multi = CLASSES[opts][0](lambda v: sgd if len(v.shape) == 2 else adam)
        make = keras.Variable if name == "keras" else gpuaccel.tensor
        variables = [make(v.copy()) for v in init]
        for step in range(3):
            grads = [np.full(v.shape, 0.5 + step, np.float32) for v in init]
            if name == "gpuaccel":
                grads = [gpuaccel.tensor(g) for g in grads]
            multi.apply_gradients(zip(grads, variables))
        results[name] = [np.asarray(v.numpy()) for v in variables]
        with pytest.raises(AttributeError, match="Learning rate cannot be accessed on a "
                                                 "MultiOptimizer"):
            multi.learning_rate
        assert int(multi.iterations) == int(sgd.iterations) == 3
    for ours, theirs in zip(results["gpuaccel"], results["keras"]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)
    # SGD moved the matrix by lr * sum(g) exactly; Adam moved the vector by ~lr per step.
    np.testing.assert_allclose(results["gpuaccel"][0], init[0] - 0.1 * (0.5 + 1.5 + 2.5),
                               rtol=1e-6)


def test_optimizer_map_lookup_and_errors_match_keras():
    for opts in (keras.optimizers, gopt):
        default, adam, sgd = opts.RMSprop(), opts.Adam(), opts.SGD()
        m = CLASSES[opts][1](default_optimizer=default)
        m["encoder/layer_0/dense"] = adam
        m["encoder/.*"] = sgd
        m["decoder"] = adam
        assert m["decoder"] is adam and m["encoder/layer_0/dense"] is adam
        assert m["encoder/layer_0/attention/query"] is sgd
        assert m["decoder/layer_0/dense"] is default
        assert len(m) == 3 and m.default_optimizer is default
        with pytest.raises(ValueError, match=re.escape("'decoder' already exists in the "
                                                       "OptimizerMap")):
            m["decoder"] = sgd
        m["enc.*"] = sgd
        with pytest.raises(ValueError, match="Multiple optimizers assigned to variable "
                                             "encoder/x"):
            m["encoder/x"]
        with pytest.raises(ValueError, match="optimizer cannot be LossScaleOptimizer"):
            m["other"] = opts.LossScaleOptimizer(opts.SGD())
        with pytest.raises(TypeError, match="default_optimizer must be a Keras Optimizer"):
            CLASSES[opts][1](default_optimizer="sgd")
