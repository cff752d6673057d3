"""gpuaccel.keras.callbacks and the progress bar, driven by a fake model and hand-made logs,
compared with real Keras callbacks fed the same sequences wherever the behaviour shows: which
epoch stops, which weights are restored, which checkpoint files appear, the learning rates, the
CSV bytes and the progress-bar text."""
import io
import math
import os
import re
import sys
import warnings

import numpy as np
import pytest

import keras
from keras.src.utils import progbar as keras_progbar_module

from gpuaccel.keras import _progbar
from gpuaccel.keras import callbacks as cbs


_real_is_dynamic_display = _progbar.is_dynamic_display


@pytest.fixture(autouse=True)
def not_a_terminal(monkeypatch):
    """Output is captured, so the bar is non-dynamic, even if another test imported ipykernel
    or PyCharm runs the suite; tests of the in-place display switch it on themselves."""
    monkeypatch.setattr(_progbar, "is_dynamic_display", lambda: False)


# -- a fake model ---------------------------------------------------------------------------

class FakeOptimizer:
    def __init__(self, lr=0.1):
        self._lr = lr
        self.set_calls = []

    @property
    def learning_rate(self):
        return self._lr

    @learning_rate.setter
    def learning_rate(self, value):
        self.set_calls.append(value)
        self._lr = value


class FakeModel:
    """What the callbacks may touch: stop_training, optimizer.learning_rate, weights,
    save/save_weights (writing the path, to show which files appear), history."""

    def __init__(self, lr=0.1, metrics=()):
        self.stop_training = False
        self.optimizer = FakeOptimizer(lr)
        self.weights = [np.zeros((2, 2), np.float32), np.zeros(3, np.float32)]
        self.saved = []
        self.history = None
        self.metrics = list(metrics)

    def get_weights(self):
        return [w.copy() for w in self.weights]

    def set_weights(self, weights):
        self.weights = [np.array(w) for w in weights]

    def save_weights(self, filepath, overwrite=True):
        self.saved.append(os.path.basename(filepath))
        with open(filepath, "w") as f:
            f.write("w")

    def save(self, filepath, overwrite=True):
        self.saved.append(os.path.basename(filepath))
        with open(filepath, "w") as f:
            f.write("m")


def run_epochs(callback_or_list, model, epoch_logs, steps=0, batch_logs=None):
    """A fit loop: weights become the epoch's number during epoch e (e+1 everywhere), logs
    handed over as copies; stops when a callback sets model.stop_training. Returns the epochs
    run and the logs each callback saw last."""
    cl = callback_or_list
    cl.set_model(model)
    cl.on_train_begin()
    ran = []
    for epoch, logs in enumerate(epoch_logs):
        cl.on_epoch_begin(epoch)
        for b in range(steps):
            cl.on_train_batch_begin(b)
            cl.on_train_batch_end(b, dict(batch_logs(epoch, b)) if batch_logs else {})
        model.set_weights([np.full_like(w, epoch + 1) for w in model.weights])
        ran.append(epoch)
        cl.on_epoch_end(epoch, dict(logs))
        if model.stop_training:
            break
    cl.on_train_end()
    return ran


def ours_and_keras(make_ours, make_keras, epoch_logs, **kw):
    m1, m2 = FakeModel(), FakeModel()
    c1, c2 = make_ours(), make_keras()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r1 = run_epochs(c1, m1, epoch_logs, **kw)
        r2 = run_epochs(c2, m2, epoch_logs, **kw)
    return (c1, m1, r1), (c2, m2, r2)


# -- EarlyStopping --------------------------------------------------------------------------

LOSSES = [
    [1.0, 0.9, 0.95, 0.97, 0.85, 0.99, 0.99, 0.99],
    [1.0, 1.0, 1.0, 1.0, 1.0],
    [0.5, 0.6, 0.7, 0.4, 0.45, 0.44, 0.43, 0.42, 0.6],
    [1.0, 0.99, 0.985, 0.984, 0.983, 0.7, 0.7],
]


@pytest.mark.parametrize("losses", LOSSES)
@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(patience=2),
    dict(patience=1, restore_best_weights=True),
    dict(patience=2, min_delta=0.02, restore_best_weights=True),
    dict(patience=1, baseline=0.8, restore_best_weights=True),
    dict(patience=1, baseline=0.8),
    dict(patience=1, start_from_epoch=3, restore_best_weights=True),
    dict(patience=3, mode="max"),
])
def test_early_stopping_matches_keras(losses, kwargs):
    seq = [{"loss": 2.0, "val_loss": v} for v in losses]
    (ours, m1, r1), (ref, m2, r2) = ours_and_keras(
        lambda: cbs.EarlyStopping(**kwargs), lambda: keras.callbacks.EarlyStopping(**kwargs),
        seq)
    assert r1 == r2
    assert ours.stopped_epoch == ref.stopped_epoch
    assert ours.best_epoch == ref.best_epoch
    assert m1.stop_training == m2.stop_training
    for a, b in zip(m1.weights, m2.weights):
        np.testing.assert_array_equal(a, b)


def test_early_stopping_restores_the_best_epochs_weights_and_says_so(capsys):
    model = FakeModel()
    es = cbs.EarlyStopping(monitor="val_accuracy", mode="max", patience=1, verbose=1,
                           restore_best_weights=True)
    seq = [{"val_accuracy": a} for a in (0.5, 0.8, 0.7, 0.6, 0.9)]
    ran = run_epochs(cbs.CallbackList([es]), model, seq)
    assert ran == [0, 1, 2]
    assert es.stopped_epoch == 2 and es.best_epoch == 1
    np.testing.assert_array_equal(model.weights[0], np.full((2, 2), 2.0))  # epoch 1's weights
    out = capsys.readouterr().out
    assert out == ("Epoch 3: early stopping\n"
                   "Restoring model weights from the end of the best epoch: 2.\n")


def test_early_stopping_warns_when_the_monitor_is_missing():
    es = cbs.EarlyStopping()
    es.set_model(FakeModel())
    es.on_train_begin()
    with pytest.warns(UserWarning, match=r"Early stopping conditioned on metric `val_loss` "
                                         r"which is not available. Available metrics are: "
                                         r"accuracy,loss"):
        es.on_epoch_end(0, {"accuracy": 0.5, "loss": 1.0})
    assert es.model.stop_training is False


def test_mode_auto_infers_direction_and_rejects_unknown_metrics():
    es = cbs.EarlyStopping(monitor="val_accuracy", patience=0)
    model = FakeModel()
    run_epochs(es, model, [{"val_accuracy": a} for a in (0.5, 0.6, 0.55, 0.7)])
    assert es.stopped_epoch == 2  # accuracy is maximised: 0.55 < 0.6 stops

    class Score:
        name = "my_score"
        _direction = "up"

    es = cbs.EarlyStopping(monitor="my_score")
    run_epochs(es, FakeModel(metrics=[Score()]), [{"my_score": a} for a in (1.0, 2.0, 1.5)])
    assert es.stopped_epoch == 2

    es = cbs.EarlyStopping(monitor="my_score")
    es.set_model(FakeModel())
    es.on_train_begin()
    with pytest.raises(ValueError, match="isn't able to automatically determine whether that "
                                         "metric should be maximized or minimized"):
        es.on_epoch_end(0, {"my_score": 1.0})
    ref = keras.callbacks.EarlyStopping(monitor="my_score")
    ref.set_model(FakeModel())
    ref.on_train_begin()
    with pytest.raises(ValueError, match="isn't able to automatically determine"):
        ref.on_epoch_end(0, {"my_score": 1.0})


def test_unknown_mode_warns_and_falls_back_to_auto():
    with pytest.warns(UserWarning, match="EarlyStopping mode 'best' is unknown, fallback to "
                                         "auto mode."):
        es = cbs.EarlyStopping(mode="best")
    assert es.mode == "auto"


# -- ModelCheckpoint ------------------------------------------------------------------------

CKPT_LOGS = [{"loss": l, "val_loss": v} for l, v in
             [(1.0, 0.9), (0.8, 0.95), (0.7, 0.85), (0.6, 0.85), (0.5, 0.7)]]


@pytest.mark.parametrize("kwargs", [
    dict(filepath="ckpt-{epoch:02d}-{val_loss:.2f}.weights.h5", save_weights_only=True),
    dict(filepath="ckpt-{epoch:02d}-{val_loss:.2f}.weights.h5", save_weights_only=True,
         save_best_only=True),
    dict(filepath="best.keras", save_best_only=True),
    dict(filepath="m-{epoch}.keras", save_best_only=True, monitor="loss"),
    dict(filepath="m-{epoch}.keras", save_best_only=True, mode="max"),
    dict(filepath="m-{epoch}.keras", save_best_only=True, initial_value_threshold=0.88),
    dict(filepath="sub/dir/m-{epoch}.h5"),
])
def test_model_checkpoint_saves_the_same_files_as_keras(tmp_path, kwargs):
    kwargs = dict(kwargs)
    pattern = kwargs.pop("filepath")
    d1, d2 = tmp_path / "ours", tmp_path / "keras"
    d1.mkdir(), d2.mkdir()
    (_, m1, _), (_, m2, _) = ours_and_keras(
        lambda: cbs.ModelCheckpoint(str(d1 / pattern), **kwargs),
        lambda: keras.callbacks.ModelCheckpoint(str(d2 / pattern), **kwargs), CKPT_LOGS)
    assert m1.saved == m2.saved
    assert m1.saved  # something was saved in every case
    files = lambda d: sorted(os.path.relpath(os.path.join(r, f), d)
                             for r, _, fs in os.walk(d) for f in fs)
    assert files(d1) == files(d2)


def test_model_checkpoint_every_n_batches_matches_keras(tmp_path):
    pattern = "b-{epoch}-{batch}.weights.h5"
    d1, d2 = tmp_path / "ours", tmp_path / "keras"
    d1.mkdir(), d2.mkdir()
    (o, m1, _), (_, m2, _) = ours_and_keras(
        lambda: cbs.CallbackList([cbs.ModelCheckpoint(str(d1 / pattern), save_freq=2,
                                                      save_weights_only=True)]),
        lambda: keras.callbacks.ModelCheckpoint(str(d2 / pattern), save_freq=2,
                                                save_weights_only=True),
        CKPT_LOGS[:3], steps=3, batch_logs=lambda e, b: {"loss": 1.0})
    assert m1.saved == m2.saved == ["b-1-2.weights.h5", "b-2-1.weights.h5",
                                    "b-2-3.weights.h5", "b-3-2.weights.h5"]
    assert o.needs_batch_hooks("train")


def test_model_checkpoint_per_epoch_needs_no_batch_hooks(tmp_path):
    cl = cbs.CallbackList([cbs.ModelCheckpoint(str(tmp_path / "m.keras"))])
    assert not cl.needs_batch_hooks("train")


@pytest.mark.parametrize("kwargs, message", [
    (dict(filepath="m.keras", save_freq="batch"), "Unrecognized save_freq: batch"),
    (dict(filepath="m.h5", save_weights_only=True), "must end in `.weights.h5`"),
    (dict(filepath="m.ckpt"), "must end in `.keras`"),
])
def test_model_checkpoint_rejects_what_keras_rejects(kwargs, message):
    with pytest.raises(ValueError, match=message):
        cbs.ModelCheckpoint(**kwargs)
    with pytest.raises(ValueError, match=message):
        keras.callbacks.ModelCheckpoint(**kwargs)


@pytest.mark.parametrize("save_freq", [0, -1, -5, True, False, 1.5, 2.0, "batch", "Epoch",
                                       "1", None, [1]])
def test_model_checkpoint_save_freq_is_epoch_or_a_positive_count(save_freq):
    # Keras 3 takes 0 and negative counts (then saves after every batch) and True/False (bools
    # are ints); here they are refused with Keras's message, as BackupAndRestore refuses them.
    with pytest.raises(ValueError, match=rf"Unrecognized save_freq: {re.escape(str(save_freq))}"
                                         r"\. Expected save_freq are 'epoch' or a positive "
                                         r"integer"):
        cbs.ModelCheckpoint("m.keras", save_freq=save_freq)
    for good in ("epoch", 1, 3):
        assert cbs.ModelCheckpoint("m.keras", save_freq=good).save_freq == good


def test_model_checkpoint_missing_format_key_is_a_key_error(tmp_path):
    mc = cbs.ModelCheckpoint(str(tmp_path / "m-{val_acc}.keras"))
    mc.set_model(FakeModel())
    with pytest.raises(KeyError, match="Failed to format this callback filepath"):
        mc.on_epoch_end(0, {"loss": 1.0})


def test_model_checkpoint_verbose_messages(tmp_path, capsys):
    mc = cbs.ModelCheckpoint(str(tmp_path / "m.keras"), save_best_only=True, verbose=1)
    run_epochs(mc, FakeModel(), [{"val_loss": 0.5}, {"val_loss": 0.6}])
    path = str(tmp_path / "m.keras")
    assert capsys.readouterr().out == (
        f"\nEpoch 1: val_loss improved from None to 0.50000, saving model to {path}\n"
        f"\nEpoch 1: finished saving model to {path}\n"
        "\nEpoch 2: val_loss did not improve from 0.50000\n")


# -- LearningRateScheduler and ReduceLROnPlateau --------------------------------------------

def halve_after_two(epoch, lr):
    return lr if epoch < 2 else lr * 0.5


@pytest.mark.parametrize("schedule", [halve_after_two, lambda epoch: 0.1 / (epoch + 1)])
def test_learning_rate_scheduler_matches_keras(schedule):
    seq = [{"loss": 1.0}] * 5
    (_, m1, _), (_, m2, _) = ours_and_keras(
        lambda: cbs.CallbackList([cbs.LearningRateScheduler(schedule)], add_history=True),
        lambda: keras.callbacks.CallbackList([keras.callbacks.LearningRateScheduler(schedule)],
                                             add_history=True), seq)
    assert m1.optimizer.set_calls == pytest.approx(m2.optimizer.set_calls)
    assert len(m1.optimizer.set_calls) == 5
    assert m1.history.history["learning_rate"] == pytest.approx(
        m2.history.history["learning_rate"])
    assert list(m1.history.history) == list(m2.history.history) == ["loss", "learning_rate"]


@pytest.mark.parametrize("bad", ["0.1", None, [0.1]])
def test_learning_rate_scheduler_rejects_a_non_number(bad):
    lrs = cbs.LearningRateScheduler(lambda epoch, lr: bad)
    lrs.set_model(FakeModel())
    with pytest.raises(ValueError, match="The output of the `schedule` function should be a "
                                         "float. Got: "):
        lrs.on_epoch_begin(0)


def test_learning_rate_scheduler_accepts_numpy_and_int_and_prints(capsys):
    model = FakeModel()
    lrs = cbs.LearningRateScheduler(lambda epoch, lr: np.float32(0.25) if epoch else 1,
                                    verbose=1)
    lrs.set_model(model)
    lrs.on_epoch_begin(0)
    assert model.optimizer.learning_rate == 1.0 and type(model.optimizer.learning_rate) is float
    lrs.on_epoch_begin(1)
    assert model.optimizer.learning_rate == 0.25
    assert capsys.readouterr().out == (
        "\nEpoch 1: LearningRateScheduler setting learning rate to 1.0.\n"
        "\nEpoch 2: LearningRateScheduler setting learning rate to 0.25.\n")


def test_learning_rate_scheduler_does_not_hide_type_errors_inside_the_schedule():
    def schedule(epoch, lr):
        return lr + "x"

    lrs = cbs.LearningRateScheduler(schedule)
    lrs.set_model(FakeModel())
    with pytest.raises(TypeError):
        lrs.on_epoch_begin(0)


@pytest.mark.parametrize("kwargs", [
    dict(patience=1), dict(patience=2, factor=0.5, cooldown=1),
    dict(patience=1, min_lr=0.02), dict(monitor="loss", patience=0, factor=0.2),
])
def test_reduce_lr_on_plateau_matches_keras(kwargs):
    seq = [{"loss": l, "val_loss": v} for l, v in
           [(1.0, 1.0), (0.9, 1.1), (0.8, 1.2), (0.8, 0.9), (0.8, 0.95), (0.8, 0.97),
            (0.8, 0.99), (0.8, 0.99)]]
    (_, m1, _), (_, m2, _) = ours_and_keras(
        lambda: cbs.CallbackList([cbs.ReduceLROnPlateau(**kwargs)], add_history=True),
        lambda: keras.callbacks.CallbackList([keras.callbacks.ReduceLROnPlateau(**kwargs)],
                                             add_history=True), seq)
    assert m1.optimizer.set_calls == pytest.approx(m2.optimizer.set_calls)
    assert m1.optimizer.set_calls  # it did reduce
    assert m1.history.history["learning_rate"] == pytest.approx(
        m2.history.history["learning_rate"])


def test_reduce_lr_on_plateau_rejects_factor_one():
    with pytest.raises(ValueError, match="does not support a factor >= 1.0"):
        cbs.ReduceLROnPlateau(factor=1.0)


# -- CSVLogger ------------------------------------------------------------------------------

@pytest.mark.parametrize("logs, kwargs", [
    ([{"loss": 0.5, "accuracy": 0.75, "val_loss": 0.625, "val_accuracy": 0.5}] * 2, {}),
    ([{"loss": 0.5, "accuracy": 0.1}, {"loss": 0.25, "accuracy": 0.3}], {}),  # NA val_ columns
    ([{"loss": 0.5}, {"loss": 0.25}], {"separator": ";"}),
])
def test_csv_logger_writes_what_keras_writes(tmp_path, logs, kwargs):
    f1, f2 = tmp_path / "ours.csv", tmp_path / "keras.csv"
    ours_and_keras(lambda: cbs.CSVLogger(str(f1), **kwargs),
                   lambda: keras.callbacks.CSVLogger(str(f2), **kwargs), logs)
    ours_and_keras(lambda: cbs.CSVLogger(str(f1), append=True, **kwargs),
                   lambda: keras.callbacks.CSVLogger(str(f2), append=True, **kwargs), logs)
    assert f1.read_bytes() == f2.read_bytes()
    assert f1.read_bytes().count(b"epoch") == 1  # the appended run wrote no second header


def test_csv_logger_flushes_every_epoch(tmp_path):
    f = tmp_path / "log.csv"
    logger = cbs.CSVLogger(str(f))
    logger.set_model(FakeModel())
    logger.on_train_begin()
    logger.on_epoch_end(0, {"loss": 0.5, "val_loss": 0.25})
    assert f.read_text().splitlines() == ["epoch,loss,val_loss", "0,0.5,0.25"]
    logger.on_train_end()


# -- TerminateOnNaN, History, LambdaCallback ------------------------------------------------

@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_terminate_on_nan_stops_like_keras(capsys, bad):
    out = []
    for cb in (cbs.TerminateOnNaN(), keras.callbacks.TerminateOnNaN()):
        model = FakeModel()
        cl = cbs.CallbackList([cb]) if isinstance(cb, cbs.Callback) else \
            keras.callbacks.CallbackList([cb])
        cl.set_model(model)
        cl.on_train_batch_end(0, {"loss": 1.0})
        assert not model.stop_training
        cl.on_train_batch_end(3, {"loss": bad})
        if hasattr(cl, "_flush_futures"):
            cl._flush_futures()
        assert model.stop_training
        out.append(capsys.readouterr().out)
    assert out[0] == out[1] == "Batch 3: Invalid loss, terminating training\n"


def test_terminate_on_nan_can_raise():
    with pytest.raises(RuntimeError, match="NaN or Inf loss encountered at batch 1"):
        cbs.TerminateOnNaN(raise_error=True).on_train_batch_end(1, {"loss": math.nan})


def test_history_records_sorted_epoch_logs_and_sets_model_history():
    model = FakeModel()
    cl = cbs.CallbackList(add_history=True, model=model, verbose=0, epochs=3, steps=10)
    run_epochs(cl, model, [{"val_loss": 1.0 - e, "loss": 2.0 - e, "accuracy": np.float32(0.5)}
                           for e in range(3)])
    h = model.history
    assert isinstance(h, cbs.History)
    assert h.epoch == [0, 1, 2]
    assert list(h.history) == ["accuracy", "loss", "val_loss"]
    assert h.history["loss"] == [2.0, 1.0, 0.0]
    assert type(h.history["accuracy"][0]) is float
    assert h.params == {"verbose": 0, "epochs": 3, "steps": 10}


def test_lambda_callback_hooks_are_called():
    seen = []
    lc = cbs.LambdaCallback(on_epoch_end=lambda e, logs: seen.append(("epoch", e)),
                            on_train_batch_end=lambda b, logs: seen.append(("batch", b)))
    cl = cbs.CallbackList([lc])
    assert cl.needs_batch_hooks("train") and not cl.needs_batch_hooks("test")
    run_epochs(cl, FakeModel(), [{"loss": 1.0}], steps=2)
    assert seen == [("batch", 0), ("batch", 1), ("epoch", 0)]


# -- CallbackList dispatch ------------------------------------------------------------------

class EpochOnly(cbs.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def on_epoch_end(self, epoch, logs=None):
        self.calls.append(epoch)


class OldStyleBatch(cbs.Callback):
    def __init__(self):
        super().__init__()
        self.batches = []

    def on_batch_end(self, batch, logs=None):
        self.batches.append((batch, dict(logs)))


class PredictListener(cbs.Callback):
    def on_predict_batch_begin(self, batch, logs=None):
        pass


def test_callback_list_skips_batch_dispatch_when_nobody_listens():
    cb = EpochOnly()
    cl = cbs.CallbackList([cb], verbose=0, epochs=1, steps=5)
    assert [cl.needs_batch_hooks(m) for m in ("train", "test", "predict")] == [False] * 3

    def never():
        raise AssertionError("logs were built for nobody")

    cl.on_train_batch_begin(0, never)
    cl.on_train_batch_end(0, never)
    cl.on_test_batch_end(0, never)
    cl.on_epoch_end(0, {"loss": 1.0})
    assert cb.calls == [0]


def test_old_style_on_batch_end_gets_train_batches_only():
    cb = OldStyleBatch()
    cl = cbs.CallbackList([cb])
    assert cl.needs_batch_hooks("train") and not cl.needs_batch_hooks("test")
    cl.on_train_batch_end(0, {"loss": 1.0})
    cl.on_test_batch_end(1, {"loss": 2.0})
    cl.on_train_batch_end(2, lambda: {"loss": 3.0})  # a lazy log is resolved for it
    assert cb.batches == [(0, {"loss": 1.0}), (2, {"loss": 3.0})]
    assert cbs.CallbackList([PredictListener()]).needs_batch_hooks("predict")


def test_lazy_batch_logs_are_built_once_and_only_when_needed(monkeypatch):
    clock = FakeClock(monkeypatch)
    calls = []

    def logs():
        calls.append(1)
        return {"loss": 0.5}

    cl = cbs.CallbackList(add_progbar=True, verbose=1, epochs=1, steps=100)
    assert cl.needs_batch_hooks("train") and not cl.needs_batch_logs("train")
    cl.set_model(FakeModel())
    cl.on_train_begin()
    cl.on_epoch_begin(0)
    for b in range(10):
        clock.t += 0.001
        cl.on_train_batch_end(b, logs)
    assert calls == []  # not a terminal: nothing drawn, nothing built

    cb = OldStyleBatch()
    cl = cbs.CallbackList([cb], add_progbar=True, verbose=1, epochs=1, steps=100)
    assert cl.needs_batch_logs("train")
    cl.on_train_batch_end(0, logs)
    assert calls == [1]


def test_callback_list_adds_defaults_once_sets_model_and_params():
    h, p = cbs.History(), cbs.ProgbarLogger()
    model = FakeModel()
    cl = cbs.CallbackList([h, [p]], add_history=True, add_progbar=True, model=model,
                          verbose=2, epochs=4, steps=7)
    assert cl.callbacks == [h, p]
    assert model.history is h and h.model is model and p.model is model
    assert p.verbose == 2 and p.epochs == 4 and p.target == 7
    assert not cl.needs_batch_hooks("train")  # verbose 2 with a known step count
    cl2 = cbs.CallbackList(add_progbar=True, verbose=2, epochs=4, steps=None)
    assert cl2.needs_batch_hooks("train")  # it must count the steps


def test_hooks_run_in_order_with_one_shared_epoch_log_dict():
    seen = []

    class Adder(cbs.Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs["extra"] = 1.0

    class Reader(cbs.Callback):
        def on_epoch_end(self, epoch, logs=None):
            seen.append(dict(logs))

    loop_logs = {"loss": 1.0}
    cl = cbs.CallbackList([Adder(), Reader()])
    cl.on_epoch_end(0, loop_logs)
    assert seen == [{"loss": 1.0, "extra": 1.0}]
    assert loop_logs == {"loss": 1.0}  # the loop's dict is not modified


# -- the progress bar -----------------------------------------------------------------------

class FakeClock:
    """Replaces the bar's clock (ours and Keras's) with a counter the test advances."""

    def __init__(self, monkeypatch, start=1000.0):
        self.t = start
        monkeypatch.setattr(_progbar, "_clock", lambda: self.t)
        fake_time = type("FakeTime", (), {"time": staticmethod(lambda: self.t)})
        monkeypatch.setattr(keras_progbar_module, "time", fake_time)


def drive_fit(cl, clock, epochs, steps, first_step=0.5, step=0.006, val=False,
              unknown_steps=False):
    cl.set_model(FakeModel())
    cl.on_train_begin()
    for epoch in range(epochs):
        cl.on_epoch_begin(epoch)
        for b in range(steps):
            cl.on_train_batch_begin(b)
            clock.t += first_step if b == 0 else step
            cl.on_train_batch_end(b, {"loss": 1.0 / (b + 1 + epoch), "accuracy": b / steps})
        logs = {"loss": 0.83 - epoch * 0.1, "accuracy": 0.71}
        if val:
            cl.on_test_begin()
            for b in range(3):
                cl.on_test_batch_end(b, {"loss": 9.0})
            cl.on_test_end({"loss": 0.5})
            logs.update(val_loss=0.5, val_accuracy=0.75)
        cl.on_epoch_end(epoch, logs)
    cl.on_train_end()


def test_progbar_not_a_terminal_prints_only_final_lines(capsys, monkeypatch):
    clock = FakeClock(monkeypatch)
    cl = cbs.CallbackList(add_progbar=True, verbose=1, epochs=2, steps=12)
    drive_fit(cl, clock, epochs=2, steps=12, val=True)
    out = capsys.readouterr().out
    bar = "\u2501" * 20
    assert out == (
        "Epoch 1/2\n"
        f"12/12 {bar} 1s 6ms/step - accuracy: 0.7100 - loss: 0.8300 - val_accuracy: 0.7500"
        " - val_loss: 0.5000\n"
        "Epoch 2/2\n"
        f"12/12 {bar} 1s 6ms/step - accuracy: 0.7100 - loss: 0.7300 - val_accuracy: 0.7500"
        " - val_loss: 0.5000\n")


def test_progbar_verbose_2_prints_one_line_per_epoch(capsys, monkeypatch):
    clock = FakeClock(monkeypatch)
    cl = cbs.CallbackList(add_progbar=True, verbose=2, epochs=2, steps=938)
    drive_fit(cl, clock, epochs=2, steps=938, step=0.0002)  # (0.5 + 937 * 0.0002) / 938 s
    assert capsys.readouterr().out == (
        "Epoch 1/2\n938/938 - 1s - 733us/step - accuracy: 0.7100 - loss: 0.8300\n"
        "Epoch 2/2\n938/938 - 1s - 733us/step - accuracy: 0.7100 - loss: 0.7300\n")


def test_progbar_single_epoch_has_no_epoch_header(capsys, monkeypatch):
    clock = FakeClock(monkeypatch)
    drive_fit(cbs.CallbackList(add_progbar=True, verbose=1, epochs=1, steps=3), clock, 1, 3)
    out = capsys.readouterr().out
    assert not out.startswith("Epoch") and out.startswith("3/3 ")


@pytest.mark.parametrize("verbose, steps, val, unknown", [
    (1, 12, False, False), (1, 938, True, False), (2, 50, True, False), (1, 30, False, True),
])
def test_progbar_dynamic_output_matches_keras(capsys, monkeypatch, verbose, steps, val,
                                              unknown):
    monkeypatch.setattr(_progbar, "is_dynamic_display", lambda: True)
    outputs = []
    for module in (cbs, keras.callbacks):
        clock = FakeClock(monkeypatch)
        cl = module.CallbackList(add_progbar=True, verbose=verbose, epochs=2,
                                 steps=None if unknown else steps)
        drive_fit(cl, clock, epochs=2, steps=steps, val=val)
        outputs.append(capsys.readouterr().out)
    ours, ref = outputs
    assert ours == ref.replace("\b", "")  # Keras also backspaces over the previous line
    if verbose == 1:
        assert ours.count("\r") > 4


def test_progbar_dynamic_redraws_in_place_and_throttles(capsys, monkeypatch):
    clock = FakeClock(monkeypatch)
    bar = _progbar.Progbar(938, verbose=1, stateless_metrics=set(), dynamic=True)
    bar.update(1, {"accuracy": 0.5, "loss": 1.25})          # first update always draws
    clock.t += 0.01
    bar.update(2, {"accuracy": 0.5, "loss": 1.0})           # within 0.05 s: skipped
    clock.t += 0.05
    bar.update(12, {"accuracy": 0.71, "loss": 0.83})
    out = capsys.readouterr().out
    lines = out.split("\r")[1:]
    assert len(lines) == 2
    plain = [_strip_ansi(line) for line in lines]
    bar_empty = "\u2501" * 20
    assert plain[0] == "  1/938 " + bar_empty + " 0s 0s/step - accuracy: 0.5000 - loss: 1.2500"
    # Step time from the steps after the first: 0.06 s / 11 = 5.45 ms; ETA 926 of them = 5 s.
    # 12 of 938 steps fill no twentieth of the bar yet.
    assert plain[1] == (" 12/938 " + bar_empty + " 5s 5ms/step"
                        " - accuracy: 0.7100 - loss: 0.8300")
    assert "\x1b[1m" in lines[1] and "\n" not in out
    clock.t += 0.001
    bar.update(938, {"accuracy": 0.9, "loss": 0.2})          # the final update always draws
    final = capsys.readouterr().out
    assert final.startswith("\r") and final.endswith("\n")
    assert _strip_ansi(final).strip().startswith("938/938 " + "\u2501" * 20 + " 0s")


def test_progbar_pads_a_shorter_line(capsys, monkeypatch):
    clock = FakeClock(monkeypatch)
    bar = _progbar.Progbar(None, verbose=1, stateless_metrics=set(), dynamic=True)
    bar.update(1, {"loss": 123456.0})
    clock.t += 1
    bar.update(2, {"loss": 1.0})
    first, second = capsys.readouterr().out.split("\r")[1:]
    assert len(_strip_ansi(second)) == len(_strip_ansi(first))
    assert _strip_ansi(second).startswith("      2/Unknown 1s")


def test_progbar_unknown_steps_learns_the_count_after_the_first_epoch(capsys, monkeypatch):
    clock = FakeClock(monkeypatch)
    cl = cbs.CallbackList(add_progbar=True, verbose=1, epochs=2, steps=None)
    drive_fit(cl, clock, epochs=2, steps=5)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Epoch 1/2" and lines[1].startswith("5/5 \u2501")
    assert lines[2] == "Epoch 2/2" and lines[3].startswith("5/5 \u2501")


def test_evaluate_and_predict_draw_their_own_bar_but_fit_validation_is_silent(capsys,
                                                                              monkeypatch):
    clock = FakeClock(monkeypatch)
    cl = cbs.CallbackList(add_progbar=True, verbose=1, epochs=1, steps=4)
    assert cl.needs_batch_hooks("test") and cl.needs_batch_hooks("predict")
    cl.on_test_begin()
    for b in range(4):
        clock.t += 0.01
        cl.on_test_batch_end(b, {"loss": 0.25})
    cl.on_test_end({"loss": 0.25})
    out = capsys.readouterr().out
    assert out == "4/4 " + "\u2501" * 20 + " 0s 10ms/step - loss: 0.2500\n"

    cl.on_train_begin()
    assert not cl.needs_batch_hooks("test")  # validation inside fit prints nothing
    cl.on_test_begin()
    cl.on_test_batch_end(0, {"loss": 1.0})
    cl.on_test_end({"loss": 1.0})
    assert capsys.readouterr().out == ""


def test_formatting_helpers():
    assert _progbar.format_eta(5.7) == "5s"
    assert _progbar.format_eta(125) == "2:05"
    assert _progbar.format_eta(3725) == "1:02:05"
    assert _progbar.format_duration_per_unit(0.0063, "step") == " 6ms/step"
    assert _progbar.format_duration_per_unit(2.4, "step") == " 2s/step"
    assert _progbar.format_duration_per_unit(0.00005, "step") == " 50us/step"
    assert _progbar.format_duration_per_unit(0, "step") == " 0s/step"
    assert _progbar.format_metric_value(0.83) == "0.8300"
    assert _progbar.format_metric_value(-0.5) == "-0.5000"
    assert _progbar.format_metric_value(0.0001234) == "1.2340e-04"


def test_dynamic_display_detection(monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    monkeypatch.delenv("PYCHARM_HOSTED", raising=False)
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    assert _real_is_dynamic_display() is False
    monkeypatch.setitem(sys.modules, "ipykernel", object())
    assert _real_is_dynamic_display() is True
    monkeypatch.delitem(sys.modules, "ipykernel")

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdout", Terminal())
    assert _real_is_dynamic_display() is True


def test_stateless_metrics_are_averaged_like_keras(capsys, monkeypatch):
    outs = []
    for cls in (_progbar.Progbar, keras.utils.Progbar):
        clock = FakeClock(monkeypatch)
        bar = cls(3, verbose=2)
        for i, v in enumerate((1.0, 2.0, 6.0)):
            clock.t += 0.1
            bar.update(i + 1, [("loss", v)], finalize=False)
        bar.update(3, [("loss", 3.0)], finalize=True)
        clock.t += 0.1
        bar2 = cls(4, verbose=2)
        bar2.add(2, [("m", 1.0)])
        bar2.add(2, [("m", 4.0)])
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]
    assert outs[0].endswith("- m: 4.0000\n")


def _strip_ansi(text):
    import re
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def test_mode_auto_reads_the_direction_from_the_metric_class():
    class TopTwoAccuracy:  # a compiled metric with a custom name and no direction attribute
        name = "top2"

    es = cbs.EarlyStopping(monitor="val_top2")
    model = FakeModel()
    model.compiled_metrics = [TopTwoAccuracy()]
    run_epochs(es, model, [{"val_top2": a} for a in (0.5, 0.6, 0.55)])
    assert es.stopped_epoch == 2
