"""The fit loop reads the step results (loss, metrics, label checks) from the device only when
something asks: epoch ends, a progress-bar draw, a callback that reads batch logs. The C++ side
(tests/cpp/training_test.cc) proves a step itself copies nothing to the host; here the count of
reads the Python loop makes is checked through ``_C.Trainer.host_reads``."""
import numpy as np
import pytest

import gpuaccel
from gpuaccel import keras as gk
from gpuaccel.keras import _progbar

RNG = np.random.default_rng(5)
SAMPLES, BATCH, EPOCHS = 40, 8, 3
STEPS = SAMPLES // BATCH


def small_model():
    model = gk.Sequential([gk.Input((6,)), gk.layers.Dense(4)])
    model.compile(optimizer=gk.optimizers.Adam(0.01),
                  loss=gk.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def data(bad_label_at=None):
    x = RNG.standard_normal((SAMPLES, 6)).astype(np.float32)
    y = RNG.integers(0, 4, size=SAMPLES)
    if bad_label_at is not None:
        y[bad_label_at] = 7
    return x, y


def test_fit_without_callbacks_reads_only_at_epoch_ends():
    model = small_model()
    x, y = data()
    history = model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, verbose=0)
    assert model._cpp_trainer.host_reads == EPOCHS
    assert len(history.history["loss"]) == EPOCHS
    assert all(np.isfinite(history.history["loss"]))
    assert all(0.0 <= a <= 1.0 for a in history.history["accuracy"])


def test_evaluate_reads_once():
    model = small_model()
    x, y = data()
    model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)
    before = model._cpp_trainer.host_reads
    loss, accuracy = model.evaluate(x, y, batch_size=BATCH, verbose=0)
    assert model._cpp_trainer.host_reads == before + 1
    assert np.isfinite(loss) and 0.0 <= accuracy <= 1.0


def test_progress_bar_reads_only_when_it_draws(monkeypatch):
    # A live display whose clock never advances: the bar draws its first batch, then skips the
    # rest until the epoch's final line (which shows the epoch's logs, read once).
    monkeypatch.setattr(_progbar, "is_dynamic_display", lambda: True)
    monkeypatch.setattr(_progbar, "_clock", lambda: 1000.0)
    monkeypatch.setattr(_progbar, "_write", lambda text: None)
    draws = []
    original = _progbar.Progbar._draw_verbose1

    def counting_draw(self, current, now, finalize):
        draws.append(finalize)
        return original(self, current, now, finalize)

    monkeypatch.setattr(_progbar.Progbar, "_draw_verbose1", counting_draw)
    model = small_model()
    x, y = data()
    model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, verbose=1)
    assert draws.count(True) == EPOCHS
    assert 0 < len(draws) < EPOCHS * STEPS  # some batches were not drawn
    # One read per draw: the final draws reuse the epoch-end read.
    assert model._cpp_trainer.host_reads == len(draws)


def test_callback_reading_batch_logs_reads_every_batch():
    seen = []

    class Reader(gk.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            seen.append(logs["loss"])

    model = small_model()
    x, y = data()
    model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, verbose=0, callbacks=[Reader()])
    assert len(seen) == EPOCHS * STEPS
    assert model._cpp_trainer.host_reads == EPOCHS * STEPS + EPOCHS


def test_bad_label_raises_at_the_epoch_end_read_with_the_eager_text():
    model = small_model()
    x, y = data(bad_label_at=13)  # in the second batch of five
    with pytest.raises(gpuaccel.errors.InvalidArgumentError,
                       match=r"labels must be in \[0, 4\), got values from 0 to 7"):
        model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)
    # The same text as an eager loss call, which checks at once.
    with pytest.raises(gpuaccel.errors.InvalidArgumentError, match=r"must be in \[0, 4\)"):
        gk.losses.SparseCategoricalCrossentropy(from_logits=True)(
            y[8:16], np.zeros((8, 4), np.float32))


@pytest.mark.parametrize("jit_compile", [None, "auto", False])
def test_jit_compile_auto_or_off_runs_quietly_eagerly_on_the_cpu(jit_compile, capfd):
    model = small_model()
    model.compile(optimizer=gk.optimizers.SGD(0.1),
                  loss=gk.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=jit_compile)
    x, y = data()
    model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)
    trainer = model._cpp_trainer
    assert trainer.graph_captures == 0 and trainer.graph_replays == 0
    assert trainer.graph_fallback_reason == ""
    assert "no CUDA graph" not in capfd.readouterr().err


def test_jit_compile_true_says_once_why_the_cpu_runs_eagerly(capfd):
    model = small_model()
    model.compile(optimizer=gk.optimizers.SGD(0.1),
                  loss=gk.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=True)
    x, y = data()
    history = model.fit(x, y, batch_size=BATCH, epochs=2, verbose=0)
    assert "cannot capture graphs" in model._cpp_trainer.graph_fallback_reason
    assert capfd.readouterr().err.count("no CUDA graph") == 1
    assert np.isfinite(history.history["loss"]).all()


@pytest.mark.parametrize("bad", ["yes", 1, 0.0, "xla"])
def test_jit_compile_rejects_other_values(bad):
    model = gk.Sequential([gk.Input((6,)), gk.layers.Dense(4)])
    with pytest.raises(ValueError, match="jit_compile must be True, False, 'auto' or None"):
        model.compile(optimizer="sgd", loss="mse", jit_compile=bad)
