"""Adagrad, Adamax, Nadam, Adadelta, Lion and Ftrl against real Keras 3: the same initial
variables and random gradients through five apply_gradients steps give the same variables and
the same optimizer variables (names in Keras's order, values); a small Dense model fit for three
epochs from the same weights ends with the same weights; get_config / from_config / get match
Keras's; the argument checks raise where Keras's do; a .weights.h5 written after training loads
into Keras and back. Also the base class keras.optimizers.Optimizer's documented surface."""
import keras
import numpy as np
import pytest

import gpuaccel
from gpuaccel.keras import optimizers as gopt
from gpuaccel import keras as gk
from test_optimizers import _assert_close, _gradients, _initial, _run_gpuaccel, _run_keras

CASES = [
    ("Adagrad", {}),
    ("Adagrad", {"learning_rate": 0.05, "initial_accumulator_value": 0.5, "epsilon": 1e-3}),
    ("Adagrad", {"learning_rate": 0.05, "weight_decay": 0.01, "clipnorm": 1.0}),
    ("Adamax", {}),
    ("Adamax", {"learning_rate": 0.02, "beta_1": 0.5, "beta_2": 0.8, "epsilon": 1e-4}),
    ("Nadam", {}),
    ("Nadam", {"learning_rate": 0.02, "beta_1": 0.7, "beta_2": 0.9, "clipvalue": 0.5}),
    ("Adadelta", {}),
    ("Adadelta", {"learning_rate": 1.0, "rho": 0.6, "epsilon": 1e-4}),
    ("Lion", {}),
    ("Lion", {"learning_rate": 0.01, "beta_1": 0.5, "beta_2": 0.9, "weight_decay": 0.1}),
    ("Ftrl", {}),
    ("Ftrl", {"learning_rate": 0.1, "learning_rate_power": -0.7, "initial_accumulator_value": 0.3,
              "l1_regularization_strength": 0.01, "l2_regularization_strength": 0.02,
              "l2_shrinkage_regularization_strength": 0.05, "beta": 0.2}),
    ("Ftrl", {"learning_rate": 0.1, "learning_rate_power": 0.0, "global_clipnorm": 2.0}),
    ("ScheduleFreeAdamW", {}),
    ("ScheduleFreeAdamW", {"learning_rate": 0.05, "beta_1": 0.8, "beta_2": 0.9, "epsilon": 1e-4,
                           "warmup_steps": 3, "weight_decay": 0.05, "clipnorm": 1.0}),
]
NEW = ["Adagrad", "Adamax", "Nadam", "Adadelta", "Lion", "Ftrl", "ScheduleFreeAdamW"]


@pytest.mark.parametrize("cls,kwargs", CASES, ids=[f"{c}-{i}" for i, (c, _) in enumerate(CASES)])
def test_matches_keras(cls, kwargs):
    init, grads = _initial(11), _gradients(11)
    theirs, their_iters = _run_keras(cls, kwargs, init, grads)
    ours, our_iters = _run_gpuaccel(cls, kwargs, init, grads)
    # Nadam's and Ftrl's step factors are computed in another order than Keras's (the same
    # float32 operands, a few ulps apart); 2e-6 relative still tells every rule apart.
    _assert_close(ours, theirs, rtol=2e-6)
    assert our_iters == their_iters == 5
    # The variables moved by more than the tolerance (Adadelta's default rate moves ~1e-5).
    assert max(np.abs(o - i).max() for o, i in zip(ours, init)) > 5e-6


@pytest.mark.parametrize("cls", NEW)
def test_optimizer_variables_match_keras_names_order_and_values(cls):
    init, grads = _initial(12), _gradients(12)
    theirs = getattr(keras.optimizers, cls)(learning_rate=0.01)
    ours = getattr(gopt, cls)(learning_rate=0.01)
    k_vars = [keras.Variable(v.copy()) for v in init]
    g_vars = [gpuaccel.tensor(v.copy()) for v in init]
    for gs in grads:
        theirs.apply_gradients(zip(gs, k_vars))
        ours.apply_gradients(zip([gpuaccel.tensor(g) for g in gs], g_vars))
    # Keras names the slots "<optimizer>/<variable's name>_<slot>"; Nadam adds its u_product
    # scalar last, which gpuaccel keeps as device state (rebuilt from iterations).
    their_slots = [v for v in theirs.variables[2:] if v.shape != ()]
    our_names = ours._variable_names()[2:]
    assert len(our_names) == len(their_slots) == len(ours._cpp.slot_kinds) * len(init)
    for name, ours_value, their_var in zip(our_names, ours.variables[2:], their_slots):
        kind = name.split("/", 1)[1].split("_", 2)[2]  # "<opt>/variable_<k>_<slot>"
        assert their_var.path.endswith("_" + kind), (name, their_var.path)
        np.testing.assert_allclose(ours_value.numpy(), their_var.numpy(), rtol=2e-5,
                                   atol=2e-6 * float(np.abs(their_var.numpy()).max()))


def _dense_model(lib, seed=3):
    model = lib.Sequential([lib.Input((4,)), lib.layers.Dense(5, activation="tanh"),
                            lib.layers.Dense(1)])
    rng = np.random.default_rng(seed)
    model.set_weights([rng.normal(size=w.shape).astype(np.float32) * 0.5
                       for w in model.get_weights()])
    return model


@pytest.mark.parametrize("cls", ["Nadam", "Ftrl"])
def test_fit_three_epochs_matches_keras(cls, tmp_path):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(32, 4)).astype(np.float32)
    y = rng.normal(size=(32, 1)).astype(np.float32)
    models = {}
    for name, lib, opts in (("keras", keras, keras.optimizers), ("gpuaccel", gk, gopt)):
        model = _dense_model(lib)
        model.compile(optimizer=getattr(opts, cls)(learning_rate=0.05), loss="mse")
        model.fit(x, y, epochs=3, batch_size=8, shuffle=False, verbose=0)
        models[name] = model
    for ours, theirs in zip(models["gpuaccel"].get_weights(), models["keras"].get_weights()):
        np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=2e-6)
    assert models["gpuaccel"].optimizer.iterations == 12

    # The trained weights travel through .weights.h5 both ways.
    path = str(tmp_path / f"{cls}.weights.h5")
    models["gpuaccel"].save_weights(path)
    reloaded = _dense_model(keras, seed=9)
    reloaded.load_weights(path)
    np.testing.assert_allclose(reloaded.predict(x, verbose=0),
                               models["gpuaccel"].predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    back_path = str(tmp_path / f"{cls}_keras.weights.h5")
    reloaded.save_weights(back_path)
    back = _dense_model(gk, seed=10)
    back.compile(optimizer=getattr(gopt, cls)(), loss="mse")
    back.load_weights(back_path)
    for a, b in zip(back.get_weights(), models["gpuaccel"].get_weights()):
        np.testing.assert_array_equal(a, b)


def test_schedule_free_momentum_starts_at_the_weights_in_fit_too():
    # Keras 3.15's fit (TensorFlow backend) leaves ScheduleFreeAdamW's momentum at zero instead
    # of the weights' copy its build assigns (with learning_rate=0 one step sets every weight
    # to 0 there); its apply_gradients starts it at the weights, as the algorithm says, and so
    # does gpuaccel everywhere: with learning_rate=0, fit keeps the weights.
    model = _dense_model(gk)
    before = model.get_weights()
    model.compile(optimizer=gopt.ScheduleFreeAdamW(learning_rate=0.0), loss="mse")
    x = np.ones((8, 4), np.float32)
    model.fit(x, x[:, :1], epochs=1, batch_size=4, verbose=0)
    for after, start in zip(model.get_weights(), before):
        np.testing.assert_allclose(after, start, rtol=1e-6)
    assert model.optimizer.iterations == 2


CLASS_PAIRS = [
    (gopt.Adagrad, keras.optimizers.Adagrad),
    (gopt.Adamax, keras.optimizers.Adamax),
    (gopt.Nadam, keras.optimizers.Nadam),
    (gopt.Adadelta, keras.optimizers.Adadelta),
    (gopt.Lion, keras.optimizers.Lion),
    (gopt.Ftrl, keras.optimizers.Ftrl),
    (gopt.ScheduleFreeAdamW, keras.optimizers.ScheduleFreeAdamW),
]


@pytest.mark.parametrize("ours_cls,their_cls", CLASS_PAIRS, ids=NEW)
def test_config_round_trip_and_get_match_keras(ours_cls, their_cls):
    cls = their_cls.__name__
    assert ours_cls.__name__ == cls
    ours = ours_cls().get_config()
    theirs = their_cls().get_config()
    ours.pop("name")
    theirs.pop("name")
    assert ours == theirs
    configured = ours_cls(learning_rate=0.25, clipnorm=2.0, name="mine")
    cfg = configured.get_config()
    clone = ours_cls.from_config(cfg)
    assert clone.get_config() == cfg and clone.name == "mine"
    # Keras reads gpuaccel's config and gpuaccel reads Keras's.
    assert their_cls.from_config(cfg).get_config() == cfg
    their_cfg = their_cls(learning_rate=0.5).get_config()
    assert ours_cls.from_config(their_cfg).get_config() == their_cfg
    assert type(gopt.get(cls.lower())) is ours_cls
    assert type(keras.optimizers.get(cls.lower())) is their_cls
    serialized = gopt.serialize(configured)
    assert serialized["class_name"] == cls
    assert gopt.deserialize(serialized).get_config() == cfg


@pytest.mark.parametrize("cls,kwargs,message", [
    ("Lion", {"beta_1": 0.0}, "Argument `beta_1` must be in the [0, 1] range"),
    ("Lion", {"beta_1": 1.5}, "Received: beta_1=1.5"),
    ("Ftrl", {"learning_rate_power": 0.5}, "`learning_rate_power` needs to be negative or zero"),
    ("Ftrl", {"initial_accumulator_value": -0.1},
     "`initial_accumulator_value` needs to be positive or zero"),
    ("Ftrl", {"l1_regularization_strength": -1.0},
     "`l1_regularization_strength` needs to be positive or zero"),
    ("Ftrl", {"l2_regularization_strength": -1.0},
     "`l2_regularization_strength` needs to be positive or zero"),
    ("Ftrl", {"l2_shrinkage_regularization_strength": -1.0},
     "`l2_shrinkage_regularization_strength` needs to be positive or zero"),
])
def test_argument_errors_match_keras(cls, kwargs, message):
    with pytest.raises(ValueError, match=__import__("re").escape(message)):
        getattr(keras.optimizers, cls)(**kwargs)
    with pytest.raises(ValueError, match=__import__("re").escape(message)):
        getattr(gopt, cls)(**kwargs)


def test_argument_errors_keras_does_not_check():
    # Values Keras takes and then trains to NaN with: gpuaccel refuses them up front.
    with pytest.raises(ValueError, match=r"`beta_1` must be a float between \[0.0, 1.0\)"):
        gopt.Nadam(beta_1=1.0)
    with pytest.raises(ValueError, match=r"`rho` must be a float between \[0.0, 1.0\]"):
        gopt.Adadelta(rho=1.5)
    with pytest.raises(ValueError, match="`initial_accumulator_value` must be a finite float"):
        gopt.Adagrad(initial_accumulator_value=-1.0)
    with pytest.raises(ValueError, match="Argument `epsilon` should be a float"):
        gopt.Adamax(epsilon="small")


def test_optimizer_base_class_surface_matches_keras():
    ours, theirs = gopt.Adagrad(learning_rate=0.1), keras.optimizers.Adagrad(learning_rate=0.1)
    assert isinstance(ours, gopt.Optimizer) and isinstance(theirs, keras.optimizers.Optimizer)
    for cls in NEW:
        assert issubclass(getattr(gopt, cls), gopt.Optimizer)
        assert issubclass(getattr(keras.optimizers, cls), keras.optimizers.Optimizer)
    assert int(ours.iterations) == int(theirs.iterations) == 0
    ours.learning_rate = 0.02
    theirs.learning_rate = 0.02
    assert float(ours.learning_rate) == pytest.approx(float(theirs.learning_rate))
    w = np.ones((2,), np.float32)
    ours.apply_gradients([(gpuaccel.tensor(np.full(2, 0.5, np.float32)), gpuaccel.tensor(w))])
    theirs.apply_gradients([(np.full(2, 0.5, np.float32), keras.Variable(w))])
    assert int(ours.iterations) == int(theirs.iterations) == 1
    assert set(ours.get_config()) == set(theirs.get_config())
    # from_config on the base class is cls(**config): the concrete class rebuilds itself.
    assert type(gopt.Optimizer.from_config.__func__(gopt.Adagrad, ours.get_config())) is \
        gopt.Adagrad
    assert type(keras.optimizers.Optimizer.from_config.__func__(
        keras.optimizers.Adagrad, theirs.get_config())) is keras.optimizers.Adagrad
    with pytest.raises(TypeError, match="Optimizer is the base class"):
        gopt.Optimizer(learning_rate=0.1)


@pytest.mark.parametrize("name", ["Muon"])
def test_missing_keras_optimizers_are_refused_with_an_alternative(name):
    assert hasattr(keras.optimizers, name)
    with pytest.raises(AttributeError, match=f"keras.optimizers.{name} is not supported by "
                                             "gpuaccel yet; use .+ instead"):
        getattr(gopt, name)


def test_legacy_names_exist_and_raise_keras_3s_import_error():
    from gpuaccel.keras.optimizers.legacy import Adam as OurLegacyAdam
    from keras.optimizers.legacy import Adam as TheirLegacyAdam
    names = ["Adagrad", "Adam", "Ftrl", "Optimizer", "RMSprop", "SGD"]
    assert [n for n in names if hasattr(keras.optimizers.legacy, n)] == names
    assert [n for n in names if hasattr(gopt.legacy, n)] == names
    messages = []
    for cls in (OurLegacyAdam, TheirLegacyAdam, gopt.legacy.SGD, keras.optimizers.legacy.SGD,
                gopt.legacy.Optimizer, keras.optimizers.legacy.Optimizer):
        with pytest.raises(ImportError) as caught:
            cls(learning_rate=0.1)
        messages.append(str(caught.value))
    assert len(set(messages)) == 1
    assert messages[0].startswith("`keras.optimizers.legacy` is not supported in Keras 3.")
    assert "TF_USE_LEGACY_KERAS=True" in messages[0]


class _InterruptAt(gk.callbacks.Callback):
    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == self.epoch:
            raise RuntimeError("Interrupting!")


@pytest.mark.parametrize("cls", ["Adagrad", "Nadam", "Ftrl"])
def test_resumed_training_continues_the_optimizer_state(cls, tmp_path):
    # BackupAndRestore saves the slots (Adagrad's and Ftrl's accumulators start at 0.1, not 0)
    # and the iterations (Nadam rebuilds its schedule product from them): an interrupted and
    # resumed fit ends where an uninterrupted one does.
    rng = np.random.default_rng(5)
    x = rng.normal(size=(16, 4)).astype(np.float32)
    y = rng.normal(size=(16, 1)).astype(np.float32)

    def fit(callbacks, model=None):
        model = model or _dense_model(gk)
        if model.optimizer is None:
            model.compile(optimizer=getattr(gopt, cls)(learning_rate=0.05), loss="mse")
        model.fit(x, y, epochs=4, batch_size=4, shuffle=False, verbose=0, callbacks=callbacks)
        return model

    straight = fit([])
    backup = gk.callbacks.BackupAndRestore(backup_dir=str(tmp_path / "backup"))
    with pytest.raises(RuntimeError, match="Interrupting"):
        fit([backup, _InterruptAt(2)])
    resumed = fit([backup])
    assert resumed.optimizer.iterations == straight.optimizer.iterations == 16
    for a, b in zip(resumed.get_weights(), straight.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
