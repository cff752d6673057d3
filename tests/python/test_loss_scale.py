"""Dynamic loss scaling (gpuaccel.keras.optimizers.LossScaleOptimizer) against Keras 3's own
keras.optimizers.LossScaleOptimizer: the same scaled gradients with injected inf/NaN give the
same scale, counter, iterations (skipped steps) and weights after every step; a float16 model
whose gradients underflow to zero without scaling trains with it; the TF2 custom-loop API
(get_scaled_loss / get_unscaled_gradients) and Keras 3's scale_loss; fit scaling the loss;
compile wrapping the optimizer under mixed_float16; Keras's argument errors."""
import importlib
import warnings

import keras
import numpy as np
import pytest

import gpuaccel
from gpuaccel import keras as gk
from gpuaccel.keras import _trainer
from gpuaccel.keras import optimizers as gopt

SHAPES = [(3, 4), (5,)]
INF, NAN = np.float32(np.inf), np.float32(np.nan)


def _script(scale, steps=12, seed=0):
    """Scaled gradients: finite except an inf (step 3), a NaN (step 5), a -inf (step 9)."""
    rng = np.random.default_rng(seed)
    out = [[(rng.standard_normal(s) * scale * 0.01).astype(np.float32) for s in SHAPES]
           for _ in range(steps)]
    out[3][1][2] = INF
    out[5][0][1, 1] = NAN
    out[9][0][2, 3] = -INF
    return out


def _initial():
    rng = np.random.default_rng(42)
    return [rng.standard_normal(s).astype(np.float32) for s in SHAPES]


def _trace_keras(inner, script, initial_scale, growth):
    opt = keras.optimizers.LossScaleOptimizer(inner, initial_scale=initial_scale,
                                              dynamic_growth_steps=growth)
    variables = [keras.Variable(v.copy()) for v in _initial()]
    trace = []
    for grads in script:
        opt.apply_gradients(zip([g.copy() for g in grads], variables))
        trace.append((float(opt.dynamic_scale.numpy()), int(opt.step_counter.numpy()),
                      int(opt.iterations.numpy()), [np.array(v.numpy()) for v in variables]))
    return trace


def _trace_ours(inner, script, initial_scale, growth):
    opt = gopt.LossScaleOptimizer(inner, initial_scale=initial_scale,
                                  dynamic_growth_steps=growth)
    variables = [gpuaccel.tensor(v.copy()) for v in _initial()]
    trace = []
    for grads in script:
        opt.apply_gradients(zip([gpuaccel.tensor(g.copy()) for g in grads], variables))
        trace.append((opt.dynamic_scale, opt.step_counter, opt.iterations,
                      [v.numpy().copy() for v in variables]))
    return trace


@pytest.mark.parametrize("inner", [("SGD", {"learning_rate": 0.1, "momentum": 0.9}),
                                   ("Adam", {"learning_rate": 0.01}),
                                   ("RMSprop", {"learning_rate": 0.01, "clipnorm": 1.0})])
@pytest.mark.parametrize("initial_scale", [2.0 ** 10, 1000.0])
def test_state_machine_matches_keras(inner, initial_scale):
    cls, kwargs = inner
    script = _script(initial_scale)
    theirs = _trace_keras(getattr(keras.optimizers, cls)(**kwargs), script, initial_scale, 3)
    ours = _trace_ours(getattr(gopt, cls)(**kwargs), script, initial_scale, 3)
    for step, (t, o) in enumerate(zip(theirs, ours)):
        assert o[0] == t[0], f"scale at step {step}"
        assert o[1] == t[1], f"step_counter at step {step}"
        assert o[2] == t[2], f"iterations at step {step}"
        for wt, wo in zip(t[3], o[3]):
            assert np.all(np.isfinite(wo))
            np.testing.assert_allclose(wo, wt, rtol=1e-6, atol=1e-7, err_msg=f"step {step}")
    scales = [t[0] for t in theirs]
    # The script exercises every transition: a growth at step 2, halvings at 3, 5 and 9.
    assert scales[2] == 2 * initial_scale and scales[3] == initial_scale
    assert scales[5] == initial_scale / 2 and scales[9] < scales[8]
    assert theirs[-1][2] == len(script) - 3  # three skipped steps


def test_float16_gradients_are_checked_and_unscaled():
    # Scaled float16 gradients: an element beyond 65504 is inf in float16 and skips the step.
    opt = gopt.LossScaleOptimizer(gopt.SGD(1.0), initial_scale=2.0 ** 15)
    w = gpuaccel.tensor(np.zeros(3, np.float32))
    g = gpuaccel.tensor(np.array([1.5, -1.0, 0.5], np.float32) * 2 ** 15).half()
    opt.apply_gradients([(g, w)])
    np.testing.assert_array_equal(w.detach().numpy(), np.array([-1.5, 1.0, -0.5], np.float32))
    big = gpuaccel.tensor(np.array([1e5, 0.0, 0.0], np.float32)).half()
    opt.apply_gradients([(big, w)])
    np.testing.assert_array_equal(w.detach().numpy(), np.array([-1.5, 1.0, -0.5], np.float32))
    assert opt.dynamic_scale == 2.0 ** 14 and opt.iterations == 1


# ---- a float16 model whose gradients underflow ----

def _fp16_problem():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((32, 8)).astype(np.float32)
    y = (x @ rng.standard_normal((8, 1))).astype(np.float32)
    return x, y


def _fp16_loss(w, xh, y):
    # Compute in float16 (weights cast from the float32 master), the loss in float32, weighted
    # by 1e-7 (a tiny loss weight): d loss / d pred is ~1e-8, below float16's smallest
    # subnormal (6e-8), so it is flushed to zero on its way back into the float16 graph.
    pred = gpuaccel.matmul(xh, w.half())
    diff = pred.float() - y
    return (diff * diff).mean() * 1e-7


def test_float16_gradients_underflow_without_scaling():
    x, y = _fp16_problem()
    w = gpuaccel.Variable(np.zeros((8, 1), np.float32))
    with gpuaccel.GradientTape() as tape:
        loss = _fp16_loss(w, gpuaccel.tensor(x).half(), gpuaccel.tensor(y))
    (g16,) = tape.gradient(loss, [w])
    # The float32 gradient of the same loss is clearly not zero...
    expected = 2e-7 * x.T @ (np.zeros((32, 1), np.float32) - y) / 32
    assert np.abs(expected).max() > 1e-7
    # ...but through float16 every element underflowed.
    assert np.all(g16.numpy() == 0)
    # Plain Adam therefore never moves the weights: the loss stays where it started.
    opt = gopt.Adam(0.05)
    xh, yt = gpuaccel.tensor(x).half(), gpuaccel.tensor(y)
    losses = []
    for _ in range(20):
        with gpuaccel.GradientTape() as tape:
            loss = _fp16_loss(w, xh, yt)
        opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
        losses.append(float(loss.detach().numpy()))
    assert losses[-1] == losses[0]
    np.testing.assert_array_equal(w.detach().numpy(), np.zeros((8, 1), np.float32))


@pytest.mark.parametrize("style", ["tf2", "keras3"])
def test_float16_model_trains_with_loss_scaling(style):
    x, y = _fp16_problem()
    w = gpuaccel.Variable(np.zeros((8, 1), np.float32))
    xh, yt = gpuaccel.tensor(x).half(), gpuaccel.tensor(y)
    # 2**40 is too large: the scaled float16 gradients overflow, the first steps are skipped and
    # the scale halves until they fit; then training proceeds.
    opt = gopt.LossScaleOptimizer(gopt.Adam(0.1), initial_scale=2.0 ** 40)
    losses = []
    steps = 80
    for _ in range(steps):
        with gpuaccel.GradientTape() as tape:
            loss = _fp16_loss(w, xh, yt)
            scaled = opt.get_scaled_loss(loss) if style == "tf2" else opt.scale_loss(loss)
        grads = tape.gradient(scaled, [w])
        if style == "tf2":
            grads = opt.get_unscaled_gradients(grads)
        opt.apply_gradients(zip(grads, [w]))
        losses.append(float(loss.detach().numpy()))
        assert np.isfinite(losses[-1])
        assert np.all(np.isfinite(w.detach().numpy()))
    skipped = steps - opt.iterations
    assert skipped >= 1 and opt.dynamic_scale < 2.0 ** 40
    assert opt.dynamic_scale == 2.0 ** (40 - skipped)  # growth needs 2000 steps: never here
    assert losses[-1] < 0.1 * losses[0]


def test_unscaled_gradients_are_not_unscaled_twice():
    # TF2 and Keras 3 custom loops give the same weights as a plain optimizer.
    w0 = np.array([1.0, -2.0, 3.0], np.float32)
    g = np.array([0.5, 0.25, -1.0], np.float32)
    plain = gpuaccel.tensor(w0.copy())
    gopt.SGD(0.1).apply_gradients([(gpuaccel.tensor(g), plain)])
    for style in ("tf2", "keras3"):
        opt = gopt.LossScaleOptimizer(gopt.SGD(0.1), initial_scale=512.0)
        w = gpuaccel.tensor(w0.copy())
        scaled = gpuaccel.tensor(g * 512)
        grads = opt.get_unscaled_gradients([scaled]) if style == "tf2" else [scaled]
        if style == "tf2":
            np.testing.assert_array_equal(grads[0].numpy(), g)
        opt.apply_gradients(zip(grads, [w]))
        np.testing.assert_array_equal(w.detach().numpy(), plain.numpy())
    # Mixing both kinds in one call is an error.
    opt = gopt.LossScaleOptimizer(gopt.SGD(0.1), initial_scale=512.0)
    a, b = gpuaccel.tensor(w0.copy()), gpuaccel.tensor(w0.copy())
    (u,) = opt.get_unscaled_gradients([gpuaccel.tensor(g)])
    with pytest.raises(ValueError, match="get_unscaled_gradients"):
        opt.apply_gradients([(u, a), (gpuaccel.tensor(g), b)])
    assert opt.get_unscaled_gradients([None]) == [None]
    assert opt.get_scaled_loss(lambda: 2.0)() == 1024.0


# ---- fit ----

def _dense_model(seed=3):
    model = gk.Sequential([gk.Input((4,)), gk.layers.Dense(3), gk.layers.Dense(1)])
    rng = np.random.default_rng(seed)
    model.set_weights([rng.standard_normal(w.shape).astype(np.float32) * 0.5
                       for w in model.get_weights()])
    return model


def test_fit_scales_the_loss_and_reports_it_unscaled():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 4)).astype(np.float32)
    y = rng.standard_normal((16, 1)).astype(np.float32)
    plain, scaled = _dense_model(), _dense_model()
    plain.compile(optimizer=gk.optimizers.SGD(0.05), loss="mse")
    lso = gk.optimizers.LossScaleOptimizer(gk.optimizers.SGD(0.05), initial_scale=1024.0,
                                           dynamic_growth_steps=2)
    scaled.compile(optimizer=lso, loss="mse")
    assert scaled.optimizer is lso  # not wrapped again
    h1 = plain.fit(x, y, batch_size=16, epochs=3, verbose=0, shuffle=False)
    h2 = scaled.fit(x, y, batch_size=16, epochs=3, verbose=0, shuffle=False)
    np.testing.assert_allclose(h2.history["loss"], h1.history["loss"], rtol=1e-6)
    for a, b in zip(plain.get_weights(), scaled.get_weights()):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)
    assert lso.dynamic_scale == 2048.0 and lso.step_counter == 1 and lso.iterations == 3


def test_fit_skips_a_step_whose_scaled_loss_overflows():
    # loss * 2**127 overflows float32: the Trainer backpropagates from the scaled loss, so the
    # gradients are inf, the update is skipped and the scale halved.
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    y = (rng.standard_normal((8, 1)) * 100).astype(np.float32)
    model = _dense_model()
    before = model.get_weights()
    lso = gk.optimizers.LossScaleOptimizer(gk.optimizers.SGD(0.01), initial_scale=2.0 ** 127)
    model.compile(optimizer=lso, loss="mse")
    history = model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert lso.dynamic_scale == 2.0 ** 126 and lso.iterations == 0
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_learning_rate_scheduler_reaches_the_inner_optimizer():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    y = rng.standard_normal((8, 1)).astype(np.float32)
    model = _dense_model()
    inner = gk.optimizers.SGD(0.1)
    model.compile(optimizer=gk.optimizers.LossScaleOptimizer(inner), loss="mse")
    model.fit(x, y, epochs=2, verbose=0,
              callbacks=[gk.callbacks.LearningRateScheduler(lambda epoch: 0.01 * (epoch + 1))])
    assert inner.learning_rate == pytest.approx(0.02)
    assert model.optimizer.learning_rate == pytest.approx(0.02)


# ---- compile under mixed_float16 ----

def test_compile_wraps_under_mixed_float16_via_lookup(monkeypatch):
    monkeypatch.setattr(_trainer, "_global_policy_name", lambda: "mixed_float16")
    model = _dense_model()
    model.compile(optimizer="adam", loss="mse")
    assert isinstance(model.optimizer, gopt.LossScaleOptimizer)
    assert isinstance(model.optimizer.inner_optimizer, gopt.Adam)
    assert model.optimizer.name == "loss_scale_optimizer"
    assert model.optimizer.dynamic_scale == 2.0 ** 15
    lso = gopt.LossScaleOptimizer(gopt.SGD())
    model.compile(optimizer=lso, loss="mse")
    assert model.optimizer is lso
    model.compile(optimizer="sgd", loss="mse", auto_scale_loss=False)
    assert isinstance(model.optimizer, gopt.SGD)
    monkeypatch.setattr(_trainer, "_global_policy_name", lambda: "mixed_bfloat16")
    model.compile(optimizer="sgd", loss="mse")
    assert isinstance(model.optimizer, gopt.SGD)


def test_compile_wraps_under_the_global_policy():
    try:
        mixed_precision = importlib.import_module("gpuaccel.keras.mixed_precision")
    except ModuleNotFoundError:
        mixed_precision = None
    if mixed_precision is None or not hasattr(mixed_precision, "set_global_policy"):
        # Without the policy module the lookup reads float32 and nothing is wrapped.
        assert _trainer._global_policy_name() == "float32"
        model = _dense_model()
        model.compile(optimizer="sgd", loss="mse")
        assert isinstance(model.optimizer, gopt.SGD)
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mixed_precision.set_global_policy("mixed_float16")
        assert _trainer._global_policy_name() == "mixed_float16"
        model = gk.Sequential([gk.Input((4,)), gk.layers.Dense(1)])
        model.compile(optimizer="rmsprop", loss="mse")
        assert isinstance(model.optimizer, gopt.LossScaleOptimizer)
        assert isinstance(model.optimizer.inner_optimizer, gopt.RMSprop)
    finally:
        mixed_precision.set_global_policy("float32")
    model = _dense_model()
    model.compile(optimizer="rmsprop", loss="mse")
    assert isinstance(model.optimizer, gopt.RMSprop)


# ---- attributes, config, errors ----

def test_attributes_match_keras():
    theirs = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.5))
    ours = gopt.LossScaleOptimizer(gopt.SGD(0.5))
    assert ours.initial_scale == theirs.initial_scale == 2.0 ** 15
    assert ours.dynamic_growth_steps == theirs.dynamic_growth_steps == 2000
    assert ours.name.startswith("loss_scale_optimizer")
    assert theirs.name.startswith("loss_scale_optimizer")
    assert float(ours.learning_rate) == pytest.approx(float(theirs.learning_rate))
    assert float(ours.scale_loss(3.0)) == float(theirs.scale_loss(3.0)) == 3.0 * 2 ** 15
    ours.learning_rate = 0.25
    assert ours.inner_optimizer.learning_rate == 0.25
    assert ours.inner_optimizer.loss_scale_factor is None
    assert ours.dynamic and ours.loss_scale == ours.dynamic_scale == 2.0 ** 15
    assert ours.step_counter == 0 and ours.iterations == 0
    assert gk.optimizers.LossScaleOptimizer is gopt.LossScaleOptimizer
    names = [n for n in ours._variable_names()]
    assert names[:2] == [f"{ours.name}/step_counter", f"{ours.name}/dynamic_scale"]
    config = ours.get_config()
    assert set(config) == set(theirs.get_config())
    again = gopt.deserialize(gopt.serialize(ours))
    assert isinstance(again, gopt.LossScaleOptimizer)
    assert isinstance(again.inner_optimizer, gopt.SGD)
    assert again.inner_optimizer.learning_rate == 0.25
    assert gopt.get(ours) is ours


@pytest.mark.parametrize("kwargs", [{"dynamic": False}, {"clipnorm": 1.0},
                                    {"use_ema": True}, {"foo": 1, "bar": 2}])
def test_argument_errors_match_keras(kwargs):
    with pytest.raises(ValueError) as theirs:
        keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(), **kwargs)
    with pytest.raises(ValueError) as ours:
        gopt.LossScaleOptimizer(gopt.SGD(), **kwargs)
    assert str(ours.value) == str(theirs.value)
    # Base defaults are accepted (old configs carry them), as Keras.
    gopt.LossScaleOptimizer(gopt.SGD(), clipnorm=None, use_ema=False)


def test_our_own_argument_checks():
    with pytest.raises(ValueError, match="inner_optimizer"):
        gopt.LossScaleOptimizer("sgd")
    with pytest.raises(ValueError, match="initial_scale"):
        gopt.LossScaleOptimizer(gopt.SGD(), initial_scale=0.0)
    with pytest.raises(ValueError, match="dynamic_growth_steps"):
        gopt.LossScaleOptimizer(gopt.SGD(), dynamic_growth_steps=0)
    with pytest.raises(ValueError, match="dynamic_growth_steps"):
        gopt.LossScaleOptimizer(gopt.SGD(), dynamic_growth_steps=2.5)
