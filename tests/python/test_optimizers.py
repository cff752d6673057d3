"""gpuaccel.keras.optimizers against real Keras 3: the same initial variables and the same five
random gradients give the same variables (float32, 1e-6 relative) for SGD, Adam, AdamW and
RMSprop under several hyperparameter settings, clipping and weight decay; iterations, the
learning-rate setter, get(), get_config() and the error texts."""
import keras
import numpy as np
import pytest

import gpuaccel
from gpuaccel.keras import optimizers as gopt

SHAPES = [(3, 4), (4,), (2, 3, 2)]
STEPS = 5


def _initial(seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in SHAPES]


def _gradients(seed, scale=1.0):
    rng = np.random.default_rng(seed + 1000)
    return [[(rng.standard_normal(s) * scale).astype(np.float32) for s in SHAPES]
            for _ in range(STEPS)]


def _run_keras(cls, kwargs, init, grads, lr_changes=None, none_at=None):
    opt = getattr(keras.optimizers, cls)(**kwargs)
    variables = [keras.Variable(v.copy()) for v in init]
    for step, gs in enumerate(grads):
        if lr_changes and step in lr_changes:
            opt.learning_rate = lr_changes[step]
        pairs = [(None if none_at == (step, i) else g, v)
                 for i, (g, v) in enumerate(zip(gs, variables))]
        with pytest.warns(UserWarning) if none_at and none_at[0] == step else _nothing():
            opt.apply_gradients(pairs)
    return [np.asarray(v.numpy()) for v in variables], int(opt.iterations.numpy())


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _run_gpuaccel(cls, kwargs, init, grads, lr_changes=None, none_at=None, grad_dtype=None):
    opt = getattr(gopt, cls)(**kwargs)
    variables = [gpuaccel.tensor(v.copy()) for v in init]
    for step, gs in enumerate(grads):
        if lr_changes and step in lr_changes:
            opt.learning_rate = lr_changes[step]
        tensors = []
        for i, g in enumerate(gs):
            if none_at == (step, i):
                tensors.append(None)
                continue
            t = gpuaccel.tensor(g)
            tensors.append(t.to(dtype=grad_dtype) if grad_dtype else t)
        returned = opt.apply_gradients(zip(tensors, variables))
        assert returned == step + 1
    return [v.numpy() for v in variables], opt.iterations


def _assert_close(ours, theirs, rtol=1e-6):
    for a, b in zip(ours, theirs):
        assert a.dtype == np.float32
        # 1e-6 relative per element, or 1e-6 of the variable's largest magnitude for elements
        # that cancelled to near zero (a float32 ulp of the operands, not of the result).
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * float(np.abs(b).max()))


CASES = [
    ("SGD", {}),
    ("SGD", {"learning_rate": 0.1, "momentum": 0.9}),
    ("SGD", {"learning_rate": 0.1, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"learning_rate": 0.05, "momentum": 0.5, "weight_decay": 0.01}),
    ("SGD", {"learning_rate": 0.1, "clipnorm": 1.0}),
    ("SGD", {"learning_rate": 0.1, "clipvalue": 0.5}),
    ("SGD", {"learning_rate": 0.1, "momentum": 0.9, "global_clipnorm": 2.0}),
    ("Adam", {}),
    ("Adam", {"learning_rate": 0.01, "amsgrad": True}),
    ("Adam", {"learning_rate": 0.02, "beta_1": 0.8, "beta_2": 0.95, "epsilon": 1e-4}),
    ("Adam", {"learning_rate": 0.01, "weight_decay": 0.05}),
    ("Adam", {"learning_rate": 0.01, "clipnorm": 0.5}),
    ("AdamW", {}),
    ("AdamW", {"learning_rate": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    ("RMSprop", {}),
    ("RMSprop", {"learning_rate": 0.01, "momentum": 0.5}),
    ("RMSprop", {"learning_rate": 0.01, "centered": True}),
    ("RMSprop", {"learning_rate": 0.01, "rho": 0.7, "momentum": 0.3, "centered": True}),
    ("RMSprop", {"learning_rate": 0.01, "weight_decay": 0.02, "global_clipnorm": 1.0}),
]


@pytest.mark.parametrize("cls,kwargs", CASES, ids=[f"{c}-{i}" for i, (c, _) in enumerate(CASES)])
def test_matches_keras(cls, kwargs):
    init, grads = _initial(1), _gradients(1)
    theirs, their_iters = _run_keras(cls, kwargs, init, grads)
    ours, our_iters = _run_gpuaccel(cls, kwargs, init, grads)
    _assert_close(ours, theirs)
    assert our_iters == their_iters == STEPS
    # The variables did move (the comparison is not vacuous).
    assert max(np.abs(o - i).max() for o, i in zip(ours, init)) > 1e-4


@pytest.mark.parametrize("cls", ["SGD", "Adam", "RMSprop"])
def test_small_gradients_match_keras(cls):
    # Gradients near epsilon's scale exercise the epsilon placement (Adam: outside the sqrt,
    # RMSprop: inside).
    init, grads = _initial(2), _gradients(2, scale=1e-4)
    kwargs = {"learning_rate": 0.01}
    theirs, _ = _run_keras(cls, kwargs, init, grads)
    ours, _ = _run_gpuaccel(cls, kwargs, init, grads)
    _assert_close(ours, theirs)


@pytest.mark.parametrize("cls", ["SGD", "Adam", "RMSprop"])
def test_none_gradient_skips_variable_like_keras(cls):
    init, grads = _initial(3), _gradients(3)
    kwargs = {"learning_rate": 0.01, "momentum": 0.9} if cls != "Adam" else {"learning_rate": 0.01}
    theirs, _ = _run_keras(cls, kwargs, init, grads, none_at=(2, 1))
    with pytest.warns(UserWarning, match="Gradients do not exist for variables"):
        ours, iters = _run_gpuaccel(cls, kwargs, init, grads, none_at=(2, 1))
    _assert_close(ours, theirs)
    assert iters == STEPS


@pytest.mark.parametrize("cls", ["SGD", "Adam", "RMSprop"])
def test_learning_rate_setter_reaches_the_update(cls):
    init, grads = _initial(4), _gradients(4)
    kwargs = {"learning_rate": 0.01}
    changes = {2: 0.1, 4: 0.001}
    theirs, _ = _run_keras(cls, kwargs, init, grads, lr_changes=changes)
    ours, _ = _run_gpuaccel(cls, kwargs, init, grads, lr_changes=changes)
    _assert_close(ours, theirs)
    # Without the change the result differs (the setter had an effect).
    unchanged, _ = _run_gpuaccel(cls, kwargs, init, grads)
    assert max(np.abs(a - b).max() for a, b in zip(ours, unchanged)) > 1e-4
    opt = getattr(gopt, cls)(learning_rate=0.01)
    opt.learning_rate = 0.25
    assert isinstance(opt.learning_rate, float) and opt.learning_rate == 0.25
    assert opt._cpp.learning_rate == 0.25


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_gradients(dtype):
    init, grads = _initial(5), _gradients(5)
    # Keras sees the same rounded values in float32.
    rounded = [[gpuaccel.tensor(g).to(dtype=dtype).to(dtype="float32").numpy() for g in gs]
               for gs in grads]
    theirs, _ = _run_keras("Adam", {"learning_rate": 0.01}, init, rounded)
    ours, _ = _run_gpuaccel("Adam", {"learning_rate": 0.01}, init, grads, grad_dtype=dtype)
    _assert_close(ours, theirs)


def test_apply_and_numpy_gradients():
    init, grads = _initial(6), _gradients(6)
    theirs, _ = _run_keras("SGD", {"momentum": 0.9}, init, grads)
    opt = gopt.SGD(momentum=0.9)
    variables = [gpuaccel.tensor(v) for v in init]
    for gs in grads:
        opt.apply(gs, variables)  # NumPy gradients are converted
    _assert_close([v.numpy() for v in variables], theirs)
    assert opt.iterations == STEPS


def test_defaults_and_config_match_keras():
    for cls in ["SGD", "Adam", "AdamW", "RMSprop"]:
        ours = getattr(gopt, cls)().get_config()
        theirs = getattr(keras.optimizers, cls)().get_config()
        ours.pop("name")
        theirs.pop("name")
        assert ours == theirs, cls
    cfg = gopt.RMSprop(learning_rate=0.5, momentum=0.2, centered=True, clipnorm=1.0).get_config()
    assert cfg["momentum"] == 0.2 and cfg["centered"] is True and cfg["clipnorm"] == 1.0
    clone = gopt.RMSprop.from_config(cfg)
    assert clone.get_config() == cfg


def test_names_follow_keras():
    assert gopt.Adam(name="mine").name == "mine"
    a, b = gopt.AdamW(), gopt.AdamW()
    assert a.name.startswith("adam_w") and b.name.startswith("adam_w") and a.name != b.name
    assert gopt.RMSprop().name.startswith("rm_sprop")


def test_variables_lists_iteration_lr_and_slots():
    opt = gopt.Adam(learning_rate=0.01, amsgrad=True)
    w = gpuaccel.tensor(np.ones((2, 2), np.float32))
    assert len(opt.variables) == 2
    opt.apply_gradients([(gpuaccel.tensor(np.full((2, 2), 0.5, np.float32)), w)])
    names = opt._variable_names()
    assert names[:2] == [f"{opt.name}/iteration", f"{opt.name}/learning_rate"]
    assert [n.rsplit("_0_", 1)[1] for n in names[2:]] == ["momentum", "velocity", "velocity_hat"]
    m = opt.variables[2].numpy()
    np.testing.assert_allclose(m, np.full((2, 2), 0.05, np.float32), rtol=1e-6)
    assert int(opt.variables[0].numpy()) == 1


def test_get():
    assert isinstance(gopt.get("sgd"), gopt.SGD)
    assert isinstance(gopt.get("Adam"), gopt.Adam)
    assert isinstance(gopt.get("ADAMW"), gopt.AdamW)
    assert isinstance(gopt.get("rmsprop"), gopt.RMSprop)
    assert isinstance(gopt.get("RMSprop"), gopt.RMSprop)
    opt = gopt.SGD()
    assert gopt.get(opt) is opt
    assert gopt.get(None) is None
    assert isinstance(gopt.get({"class_name": "Adam", "config": {"learning_rate": 0.5}}), gopt.Adam)
    with pytest.raises(ValueError, match="^Could not interpret optimizer identifier: foo$"):
        gopt.get("foo")
    with pytest.raises(ValueError, match="^Could not interpret optimizer identifier: 42$"):
        gopt.get(42)
    # Keras's own message for the same identifier (kept in sync).
    with pytest.raises(ValueError, match="^Could not interpret optimizer identifier: foo$"):
        keras.optimizers.get("foo")


def test_hyperparameter_errors():
    with pytest.raises(ValueError, match=r"^`momentum` must be a float between \[0, 1\]\.$"):
        gopt.SGD(momentum=1.5)
    with pytest.raises(ValueError, match=r"`momentum` must be a float between \[0\.0, 1\.0\]. "
                                         r"Received: momentum=-0\.5"):
        gopt.RMSprop(momentum=-0.5)
    with pytest.raises(ValueError, match=r"`beta_1` must be a float between \[0\.0, 1\.0\)"):
        gopt.Adam(beta_1=1.0)
    with pytest.raises(ValueError, match=r"`rho` must be a float between"):
        gopt.RMSprop(rho=1.5)
    with pytest.raises(ValueError, match=r"`learning_rate` must be a finite float >= 0\. "
                                         r"Received: learning_rate=-0\.1"):
        gopt.Adam(learning_rate=-0.1)
    with pytest.raises(ValueError, match=r"^Argument `weight_decay` must be a float\. "
                                         r"Received: weight_decay=None$"):
        gopt.AdamW(weight_decay=None)
    with pytest.raises(ValueError, match=r"^Argument\(s\) not recognized: \{'betas': 0\.9\}$"):
        gopt.Adam(betas=0.9)
    with pytest.raises(ValueError, match=r"Only one of `clipnorm`, `clipvalue` and "
                                         r"`global_clipnorm` can be set"):
        gopt.SGD(clipnorm=1.0, clipvalue=0.5)
    with pytest.raises(ValueError, match="Argument `learning_rate` should be float"):
        gopt.SGD(learning_rate="fast")
    with pytest.raises(NotImplementedError, match="loss_scale_factor"):
        gopt.Adam(loss_scale_factor=2.0)
    opt = gopt.SGD()
    with pytest.raises(ValueError, match=r"`learning_rate` must be a finite float >= 0"):
        opt.learning_rate = -1.0
    assert opt.learning_rate == 0.01
    with pytest.warns(UserWarning, match="`decay` is no longer supported"):
        gopt.SGD(decay=0.1)


def test_apply_errors():
    opt = gopt.Adam()
    w = gpuaccel.tensor(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="^No gradients provided for any variable.$"):
        opt.apply_gradients([(None, w)])
    with pytest.raises(gpuaccel.errors.InvalidArgumentError,
                       match=r"gradient 0 has shape \(3, 2\) but its variable has shape \(2, 3\)"):
        opt.apply_gradients([(gpuaccel.tensor(np.ones((3, 2), np.float32)), w)])
    with pytest.raises(gpuaccel.errors.InvalidArgumentError, match="gradient 0 has dtype int32"):
        opt.apply_gradients([(gpuaccel.tensor(np.ones((2, 3), np.int32)), w)])
    half = gpuaccel.tensor(np.ones((2, 3), np.float32)).to(dtype="float16")
    with pytest.raises(gpuaccel.errors.InvalidArgumentError,
                       match="variable 0 has dtype float16; optimizers update float32"):
        opt.apply_gradients([(gpuaccel.tensor(np.ones((2, 3), np.float32)), half)])
    with pytest.raises(ValueError, match="appears more than once"):
        g = gpuaccel.tensor(np.ones((2, 3), np.float32))
        opt.apply_gradients([(g, w), (g, w)])
    with pytest.raises(ValueError, match="apply got 1 gradients for 2 variables"):
        opt.apply([gpuaccel.tensor(np.ones((2, 3), np.float32))], [w, w])
    with pytest.raises(ValueError, match=r"\(gradient, variable\) pairs"):
        opt.apply_gradients([w])
    with pytest.raises(TypeError, match="variable 0 must be a gpuaccel Tensor"):
        opt.apply_gradients([(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))])
    # Nothing above changed the variable or counted a step.
    np.testing.assert_array_equal(w.numpy(), np.ones((2, 3), np.float32))
    assert opt.iterations == 0
    assert opt.apply_gradients([]) == 0  # empty: a no-op, as Keras


def test_exclude_from_weight_decay():
    opt = gopt.SGD(learning_rate=0.1, weight_decay=0.5)
    a = gpuaccel.tensor(np.ones(2, np.float32))
    b = gpuaccel.tensor(np.ones(2, np.float32))
    opt.exclude_from_weight_decay(var_list=[b])
    zeros = np.zeros(2, np.float32)
    opt.apply_gradients([(gpuaccel.tensor(zeros), a), (gpuaccel.tensor(zeros), b)])
    np.testing.assert_allclose(a.numpy(), 0.95, rtol=1e-7)
    np.testing.assert_array_equal(b.numpy(), np.ones(2, np.float32))
