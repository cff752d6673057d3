"""Sequential and functional models against real Keras with the same weights: forward outputs,
one SGD and one Adam step, evaluate, get/set_weights order, summary counts, History keys; and
the fit loop's own contract (validation, callbacks, stopping, saving, errors)."""
import os

import numpy as np
import pytest

import gpuaccel
from gpuaccel import keras as gk
from gpuaccel.demo import course_cnn

keras = pytest.importorskip("keras")

RNG = np.random.default_rng(11)


def seed_cnn(lib):
    return course_cnn(lib)


def images(n):
    return RNG.uniform(size=(n, 28, 28, 1)).astype(np.float32)


def labels(n, classes=10):
    return RNG.integers(0, classes, size=n)


def copy_weights(src_keras, dst_ours):
    dst_ours.set_weights([w.numpy() if hasattr(w, "numpy") else w for w in src_keras.get_weights()])


def assert_close_scaled(ours, theirs, tol):
    ours, theirs = np.asarray(ours, np.float64), np.asarray(theirs, np.float64)
    scale = max(1.0, float(np.abs(theirs).max()))
    assert np.abs(ours - theirs).max() <= tol * scale, np.abs(ours - theirs).max()


def test_seed_cnn_parameters_and_summary_match_keras():
    ours, theirs = seed_cnn(gk), seed_cnn(keras)
    assert ours.count_params() == theirs.count_params() == 93322
    lines = []
    ours.summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert "Total params: 93,322 (364.54 KB)" in text
    assert "Trainable params: 93,322" in text and "Non-trainable params: 0" in text
    rows = [line for line in text.splitlines() if line.startswith("│")]
    assert [row.split("(")[1].split(")")[0] for row in rows] == \
        [type(layer).__name__ for layer in theirs.layers]
    assert [row.rstrip("│ ").split()[-1] for row in rows] == \
        [f"{layer.count_params():,}" for layer in theirs.layers]
    assert "(None, 3, 3, 64)" in text and "(None, 576)" in text


def test_summary_of_an_unbuilt_sequential_model_is_keras_table():
    texts = []
    for lib in (keras, gk):
        model = lib.Sequential(name="unbuilt")
        model.add(lib.layers.Embedding(input_dim=100, output_dim=8, name="embed"))
        model.add(lib.layers.Dense(4, name="head"))
        lines = []
        model.summary(print_fn=lines.append)
        texts.append("\n".join(lines).rstrip("\n"))  # (Keras ends its last line with one)
    assert texts[1] == texts[0]
    assert "0 (unbuilt)" in texts[1] and "Total params: 0 (0.00 B)" in texts[1]


def test_seed_cnn_forward_matches_keras_with_same_weights():
    ours, theirs = seed_cnn(gk), seed_cnn(keras)
    copy_weights(theirs, ours)
    x = images(8)
    assert_close_scaled(ours.predict(x, verbose=0), theirs.predict(x, verbose=0), 1e-5)
    assert_close_scaled(ours(x).numpy(), theirs(x).numpy(), 1e-5)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_one_training_step_matches_keras(optimizer):
    ours, theirs = seed_cnn(gk), seed_cnn(keras)
    copy_weights(theirs, ours)
    make = {"sgd": lambda lib: lib.optimizers.SGD(learning_rate=0.05),
            "adam": lambda lib: lib.optimizers.Adam(learning_rate=1e-3)}[optimizer]
    for model, lib in ((ours, gk), (theirs, keras)):
        model.compile(optimizer=make(lib),
                      loss=lib.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
    x, y = images(16), labels(16)
    our_logs = ours.train_on_batch(x, y, return_dict=True)
    their_logs = theirs.train_on_batch(x, y, return_dict=True)
    assert abs(our_logs["loss"] - float(their_logs["loss"])) <= 1e-5 * max(1, our_logs["loss"])
    assert our_logs["accuracy"] == pytest.approx(float(their_logs["accuracy"]), abs=1e-6)
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        assert_close_scaled(a, b, 1e-4)


def test_evaluate_matches_keras():
    ours, theirs = seed_cnn(gk), seed_cnn(keras)
    copy_weights(theirs, ours)
    for model, lib in ((ours, gk), (theirs, keras)):
        model.compile(optimizer="adam", metrics=["accuracy"],
                      loss=lib.losses.SparseCategoricalCrossentropy(from_logits=True))
    x, y = images(50), labels(50)
    loss, acc = ours.evaluate(x, y, batch_size=16, verbose=0)
    ref_loss, ref_acc = theirs.evaluate(x, y, batch_size=16, verbose=0)
    assert loss == pytest.approx(ref_loss, rel=1e-5)
    assert acc == pytest.approx(ref_acc, abs=1e-6)
    assert ours.evaluate(x, y, verbose=0, return_dict=True).keys() == {"loss", "accuracy"}


def test_history_keys_match_keras_and_loss_goes_down():
    gpuaccel.random.set_seed(3)
    x = RNG.normal(size=(256, 8)).astype(np.float32)
    y = (x[:, :2].sum(1) > 0).astype(np.int64)
    histories = []
    for lib in (gk, keras):
        model = lib.Sequential([lib.Input((8,)), lib.layers.Dense(16, activation="relu"),
                                lib.layers.Dense(2)])
        model.compile(optimizer=lib.optimizers.Adam(0.01), metrics=["accuracy"],
                      loss=lib.losses.SparseCategoricalCrossentropy(from_logits=True))
        histories.append(model.fit(x, y, epochs=4, batch_size=32, verbose=0,
                                   validation_data=(x[:64], y[:64])))
    ours, theirs = histories
    assert list(ours.history) == list(theirs.history)
    assert ours.epoch == [0, 1, 2, 3] and ours.params["steps"] == 8
    assert ours.history["loss"][-1] < ours.history["loss"][0]
    assert ours.history["accuracy"][-1] > 0.8


def test_functional_model_matches_keras():
    def build(lib):
        inputs = lib.Input(shape=(6,))
        h = lib.layers.Dense(5, activation="tanh")(inputs)
        out = lib.layers.Dense(3)(h)
        return lib.Model(inputs, out)
    ours, theirs = build(gk), build(keras)
    copy_weights(theirs, ours)
    x = RNG.normal(size=(7, 6)).astype(np.float32)
    assert_close_scaled(ours.predict(x, verbose=0), theirs.predict(x, verbose=0), 1e-5)
    assert ours.count_params() == theirs.count_params()
    # Keras 3 lists a functional model's InputLayer first
    assert [type(layer).__name__ for layer in ours.layers] == \
        [type(layer).__name__ for layer in theirs.layers] == ["InputLayer", "Dense", "Dense"]
    assert [layer.name for layer in ours.layers][0] == ours.inputs[0].name
    assert ours.get_layer(index=0) is ours.layers[0] and not ours.layers[0].weights


def test_shared_layer_in_functional_graph_trains_one_set_of_weights():
    inputs = gk.Input((4,))
    shared = gk.layers.Dense(4)
    out = shared(shared(inputs))
    model = gk.Model(inputs, out)
    assert len(model.layers) == 2 and len(model.get_weights()) == 2  # InputLayer, Dense
    kernel, bias = model.get_weights()
    x = RNG.normal(size=(3, 4)).astype(np.float32)
    expected = (x @ kernel + bias) @ kernel + bias
    assert_close_scaled(model.predict(x, verbose=0), expected, 1e-5)


def test_weights_order_matches_keras_with_batch_norm():
    def build(lib):
        return lib.Sequential([lib.Input((5,)), lib.layers.Dense(4),
                               lib.layers.BatchNormalization(), lib.layers.Dense(2)])
    ours, theirs = build(gk), build(keras)
    assert [w.shape for w in ours.get_weights()] == [tuple(w.shape) for w in theirs.get_weights()]
    assert len(ours.trainable_weights) == len(theirs.trainable_weights) == 6
    lines = []
    ours.summary(print_fn=lines.append)
    assert "Non-trainable params: 8" in lines[0]


def test_save_and_load_weights_round_trip_atomically(tmp_path):
    model = gk.Sequential([gk.Input((3,)), gk.layers.Dense(2)])
    path = tmp_path / "ckpt" / "model.weights.h5"
    model.save_weights(path)
    before = model.get_weights()
    model.set_weights([w + 1 for w in before])
    model.load_weights(path)
    for a, b in zip(model.get_weights(), before):
        np.testing.assert_array_equal(a, b)
    assert os.listdir(path.parent) == ["model.weights.h5"]  # no temporary left behind
    other = gk.Sequential([gk.Input((3,)), gk.layers.Dense(5)])
    with pytest.raises(ValueError, match="shape"):
        other.load_weights(path)
    with pytest.raises(FileNotFoundError):
        model.load_weights(tmp_path / "missing.weights.h5")


def test_weights_files_damaged_or_foreign_are_clear_errors_naming_the_file(tmp_path):
    # Whatever the format behind the name, a damaged file names itself and does not load.
    model = gk.Sequential([gk.Input((3,)), gk.layers.Dense(2)])
    path = tmp_path / "model.weights.h5"
    model.save_weights(path)
    good = path.read_bytes()
    rng = np.random.default_rng(4)
    before = model.get_weights()
    for cut in sorted(rng.integers(0, len(good), 8)):
        path.write_bytes(good[:cut])
        with pytest.raises((ValueError, OSError), match="model.weights.h5"):
            model.load_weights(path)
    garbage = tmp_path / "garbage.weights.h5"
    garbage.write_bytes(rng.bytes(2000))
    with pytest.raises((ValueError, OSError), match="garbage.weights.h5"):
        model.load_weights(garbage)
    for a, b in zip(model.get_weights(), before):
        np.testing.assert_array_equal(a, b)


def test_npz_weights_file_checks_what_it_holds(tmp_path):
    from gpuaccel.keras import _weights_file
    from gpuaccel._checksum import write_with_checksum
    import io
    model = gk.Sequential([gk.Input((3,)), gk.layers.Dense(2)])
    paths, shapes = model._weight_paths(), [w.shape for w in model.get_weights()]
    path = tmp_path / "w.npz"

    def write_npz(**entries):
        buffer = io.BytesIO()
        np.savez(buffer, **entries)
        write_with_checksum(path, buffer.getvalue())

    write_npz(a=np.zeros(3))
    with pytest.raises(ValueError, match="w.npz.*not a gpuaccel weights file.*no weight paths"):
        _weights_file.load(path, paths, shapes)
    write_npz(__weight_paths__=np.array(paths), w00000=np.zeros((3, 2), np.float32))
    with pytest.raises(ValueError, match=r"w.npz.*incomplete.*no values for 1 .*dense.*bias"):
        _weights_file.load(path, paths, shapes)
    _weights_file.save(path, paths[:1], [np.zeros((3, 2), np.float32)])
    with pytest.raises(ValueError, match="holds 1 weights but the model has 2"):
        _weights_file.load(path, paths, shapes)
    path.write_bytes(b"not a zip at all")
    with pytest.raises(OSError, match="w.npz.*truncated"):  # a DataLossError: no checksum
        _weights_file.load(path, paths, shapes)
    _weights_file.save(path, paths, model.get_weights())
    for got, want in zip(_weights_file.load(path, paths, shapes), model.get_weights()):
        np.testing.assert_array_equal(got, want)


def test_keras_api_misuse_gets_clear_errors():
    x, y = np.zeros((10, 3), np.float32), np.zeros((10, 2), np.float32)
    model = gk.Sequential([gk.Input((3,)), gk.layers.Dense(2)])
    # compile(optimizer=None) is allowed (evaluate/predict need none); fit says what is missing.
    model.compile(optimizer=None, loss="mse")
    assert np.isfinite(model.evaluate(x, y, verbose=0))
    with pytest.raises(ValueError, match="optimizer=None"):
        model.fit(x, y, verbose=0)
    with pytest.raises(ValueError, match="optimizer=None"):
        model.train_on_batch(x, y)
    model.compile(optimizer="sgd", loss="mse")
    # A callback that is not one is named, with its position.
    with pytest.raises(TypeError, match=r"callbacks\[1\] must be a keras.callbacks.Callback.*"
                                        r"object"):
        model.fit(x, y, verbose=0, callbacks=[gk.callbacks.History(), object()])
    with pytest.raises(TypeError, match=r"callbacks\[0\].*a class, not an instance"):
        model.fit(x, y, verbose=0, callbacks=[gk.callbacks.History])
    with pytest.raises(TypeError, match="must be a list"):
        model.fit(x, y, verbose=0, callbacks=5)
    # evaluate on no samples has no loss to report.
    with pytest.raises(ValueError, match="evaluate\\(\\) got no data: the input has 0 samples"):
        model.evaluate(x[:0], y[:0], verbose=0)


def _batches_with_empty_ones(x, y, pattern):
    """A Dataset yielding x/y cut at ``pattern`` (a list of row counts, 0 for an empty batch)."""
    def generate():
        start = 0
        for rows in pattern:
            yield x[start:start + rows], y[start:start + rows]
            start += rows
    spec = (gpuaccel.TensorSpec((None, x.shape[1]), "float32"),
            gpuaccel.TensorSpec((None, y.shape[1]), "float32"))
    return gpuaccel.data.Dataset.from_generator(generate, output_signature=spec)


def test_empty_batches_add_nothing_and_all_empty_is_an_error_not_zero():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    y = rng.standard_normal((4, 1)).astype(np.float32)
    model = gk.Sequential([gk.Input((3,)), gk.layers.Dense(1)])
    model.compile(optimizer=gk.optimizers.SGD(0.0), loss="mse", metrics=["mae"])
    expected = model.evaluate(x, y, verbose=0, return_dict=True)
    # Empty batches among others add nothing to the batch-weighted means (as in Keras): the loss
    # of an empty batch, a mean over nothing, made the whole mean NaN.
    mixed = _batches_with_empty_ones(x, y, [1, 0, 3, 0])
    got = model.evaluate(mixed, verbose=0, return_dict=True)
    assert got == pytest.approx(expected, rel=1e-6), (got, expected)
    history = model.fit(mixed, verbose=0).history
    assert history["loss"][0] == pytest.approx(expected["loss"], rel=1e-6), history
    # Only empty batches: there is no mean to report. Keras 3 reports 0.0 (a perfect model);
    # here it is the same error as for no batch at all.
    empty = _batches_with_empty_ones(x, y, [0, 0])
    message = r"got no data: all 2 of its batches were empty \(0 samples\), so there is no loss"
    with pytest.raises(ValueError, match=r"evaluate\(\) " + message):
        model.evaluate(empty, verbose=0)
    with pytest.raises(ValueError, match=r"fit\(\) " + message):
        model.fit(empty, verbose=0)
    with pytest.raises(ValueError, match=r"fit\(\)'s validation_data " + message):
        model.fit(x, y, validation_data=empty, verbose=0)
    for method in (model.test_on_batch, model.train_on_batch):
        with pytest.raises(ValueError, match=rf"{method.__name__}\(\) got no data: the input "
                                             "has 0 samples"):
            method(x[:0], y[:0])


def test_validation_freq_zero_is_a_value_error_not_a_division_by_zero():
    # Keras 3 divides by it too (ZeroDivisionError at the first epoch's end).
    x, y = np.ones((4, 3), np.float32), np.ones((4, 1), np.float32)
    model = gk.Sequential([gk.Input((3,)), gk.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    for bad in (0, -2, True, 1.5, "2"):
        with pytest.raises(ValueError, match=f"validation_freq must be a positive integer .* "
                                             f"or a list of epochs, got {bad!r}"):
            model.fit(x, y, validation_split=0.5, validation_freq=bad, verbose=0)
    history = model.fit(x, y, validation_split=0.5, validation_freq=[2], epochs=2, verbose=0)
    assert len(history.history["val_loss"]) == 1


def test_set_random_seed_makes_initialization_and_fit_repeat():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((40, 3)).astype(np.float32)
    y = rng.standard_normal((40, 1)).astype(np.float32)

    def run():
        gk.utils.set_random_seed(5)
        model = gk.Sequential([gk.Input((3,)), gk.layers.Dense(4), gk.layers.Dropout(0.5),
                               gk.layers.Dense(1)])
        model.compile(optimizer="adam", loss="mse")
        model.fit(x, y, epochs=2, batch_size=8, verbose=0)
        return model.get_weights(), np.random.random(), __import__("random").random()

    (w1, n1, p1), (w2, n2, p2) = run(), run()
    for a, b in zip(w1, w2):
        np.testing.assert_array_equal(a, b)  # the same computation twice in one process
    assert (n1, p1) == (n2, p2)
    for bad in (1.5, "3", True, -1, 2 ** 32):
        with pytest.raises(ValueError, match="seed"):
            gk.utils.set_random_seed(bad)
    gpuaccel.config.experimental.enable_op_determinism()
    assert gpuaccel.config.experimental.is_op_determinism_enabled()
    gpuaccel.config.experimental.disable_op_determinism()
    assert not gpuaccel.config.experimental.is_op_determinism_enabled()


class Recorder(gk.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.events = []

    def on_epoch_end(self, epoch, logs=None):
        self.events.append(("epoch", epoch, dict(logs)))

    def on_train_batch_end(self, batch, logs=None):
        self.events.append(("batch", batch, dict(logs)))


def test_fit_callbacks_validation_split_and_steps():
    x = RNG.normal(size=(100, 4)).astype(np.float32)
    y = RNG.normal(size=(100, 1)).astype(np.float32)
    model = gk.Sequential([gk.Input((4,)), gk.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    recorder = Recorder()
    history = model.fit(x, y, batch_size=20, epochs=2, verbose=0, validation_split=0.2,
                        callbacks=[recorder])
    batches = [e for e in recorder.events if e[0] == "batch"]
    assert len(batches) == 8  # 80 training samples / 20, two epochs
    assert set(history.history) == {"loss", "val_loss"}
    assert recorder.events[-1][2]["val_loss"] == history.history["val_loss"][-1]
    recorder.events.clear()
    model.fit(x, y, batch_size=10, epochs=1, steps_per_epoch=3, verbose=0, callbacks=[recorder])
    assert len([e for e in recorder.events if e[0] == "batch"]) == 3


def scripted_score(callbacks_module, scores):
    """A callback (of gpuaccel's or Keras's base class) that puts a chosen 'score' into each
    epoch's logs before EarlyStopping reads them: the stopping rule is tested on known
    numbers, not on how a float mean over shuffled batches rounds on this CPU."""

    class ScriptedScore(callbacks_module.Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs["score"] = scores[epoch]

    return ScriptedScore()


def test_early_stopping_and_learning_rate_scheduler_drive_the_loop():
    x = RNG.normal(size=(64, 4)).astype(np.float32)
    y = RNG.normal(size=(64, 1)).astype(np.float32)
    model = gk.Sequential([gk.Input((4,)), gk.layers.Dense(1)])
    model.compile(optimizer=gk.optimizers.SGD(0.01), loss="mse")
    # Best at epoch 1; with patience=2, epochs 2 and 3 do not beat it by min_delta=0.05
    # (0.47 improves by only 0.03), so fit stops after epoch 3: 4 epochs of 20.
    scores = [1.0, 0.5, 0.6, 0.47, 0.1] + [0.0] * 15
    stop = gk.callbacks.EarlyStopping(monitor="score", mode="min", patience=2,
                                      min_delta=0.05)
    history = model.fit(x, y, epochs=20, verbose=0,
                        callbacks=[scripted_score(gk.callbacks, scores), stop])
    assert history.epoch == [0, 1, 2, 3]
    assert stop.stopped_epoch == 3 and stop.best_epoch == 1
    assert history.history["score"] == scores[:4]
    # The same rule in real Keras stops at the same epoch.
    theirs = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    theirs.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    ref_stop = keras.callbacks.EarlyStopping(monitor="score", mode="min", patience=2,
                                             min_delta=0.05)
    ref = theirs.fit(x, y, epochs=20, verbose=0,
                     callbacks=[scripted_score(keras.callbacks, scores), ref_stop])
    assert ref.epoch == history.epoch and ref_stop.stopped_epoch == stop.stopped_epoch
    schedule = gk.callbacks.LearningRateScheduler(lambda epoch, lr: 0.1 / (epoch + 1))
    model.fit(x, y, epochs=3, verbose=0, callbacks=[schedule])
    assert model.optimizer.learning_rate == pytest.approx(0.1 / 3)


def test_nan_loss_is_reported_and_terminate_on_nan_stops():
    x = np.full((32, 2), 1e30, np.float32)
    y = np.zeros((32, 1), np.float32)
    model = gk.Sequential([gk.Input((2,)), gk.layers.Dense(1, kernel_initializer="ones")])
    model.compile(optimizer=gk.optimizers.SGD(1.0), loss="mse")
    history = model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    assert not np.isfinite(history.history["loss"][-1])
    model2 = gk.Sequential([gk.Input((2,)), gk.layers.Dense(1, kernel_initializer="ones")])
    model2.compile(optimizer=gk.optimizers.SGD(1.0), loss="mse")
    recorder = Recorder()
    model2.fit(x, y, epochs=3, batch_size=8, verbose=0,
               callbacks=[gk.callbacks.TerminateOnNaN(), recorder])
    batches = [e for e in recorder.events if e[0] == "batch"]
    assert len(batches) < 12


def test_fit_argument_errors():
    model = gk.Sequential([gk.Input((3,)), gk.layers.Dense(2)])
    x, y = np.zeros((10, 3), np.float32), np.zeros(10, np.int64)
    with pytest.raises(RuntimeError, match="compile"):
        model.fit(x, y, verbose=0)
    with pytest.raises(ValueError, match="Could not interpret optimizer"):
        model.compile(optimizer="adamax_of_doom", loss="mse")
    with pytest.raises(ValueError, match="Could not interpret loss"):
        model.compile(optimizer="adam", loss="hinge_of_doom")
    model.compile(optimizer="adam", metrics=["accuracy"],
                  loss=gk.losses.SparseCategoricalCrossentropy(from_logits=True))
    with pytest.raises(ValueError, match="x sizes: 10, y sizes: 9"):
        model.fit(x, y[:9], verbose=0)
    with pytest.raises(ValueError, match=r"\[0, 2\)"):
        model.fit(x, np.full(10, 7), verbose=0)
    with pytest.raises(ValueError, match="incompatible|expected|shape"):
        model.fit(np.zeros((10, 5), np.float32), y, verbose=0)
    with pytest.raises(ValueError, match="batch_size"):
        model.fit(x, y, batch_size=0, verbose=0)
    with pytest.raises(ValueError, match="needs labels"):
        model.fit(x, verbose=0)


def test_fit_accepts_a_dataset():
    # Its own data and seed: the module's RNG and gpuaccel's generator are shared with the tests
    # that ran before, so in a shuffled order the data and the initial weights would differ.
    rng = np.random.default_rng(21)
    x = rng.normal(size=(96, 4)).astype(np.float32)
    y = (x.sum(1) > 0).astype(np.int64)
    gk.utils.set_random_seed(1)
    ds = gpuaccel.data.Dataset.from_tensor_slices((x, y)).shuffle(96, seed=1).batch(16) \
        .prefetch(gpuaccel.data.AUTOTUNE)
    model = gk.Sequential([gk.Input((4,)), gk.layers.Dense(2)])
    model.compile(optimizer=gk.optimizers.Adam(0.05), metrics=["accuracy"],
                  loss=gk.losses.SparseCategoricalCrossentropy(from_logits=True))
    recorder = Recorder()
    history = model.fit(ds, epochs=3, verbose=0, callbacks=[recorder])
    assert len([e for e in recorder.events if e[0] == "batch"]) == 18
    assert history.history["loss"][-1] < 0.6 * history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.8  # about 0.97 with this seed


def test_progress_bar_prints_keras_style_epoch_lines(capsys):
    x = RNG.normal(size=(40, 4)).astype(np.float32)
    y = RNG.normal(size=(40, 1)).astype(np.float32)
    model = gk.Sequential([gk.Input((4,)), gk.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, y, epochs=2, batch_size=10, verbose=2)
    out = capsys.readouterr().out
    assert "Epoch 1/2" in out and "Epoch 2/2" in out and "loss:" in out


def test_a_layer_called_outside_a_tape_gives_a_value_as_keras_and_records_inside_one():
    """layer(x).numpy() works as in Keras (TF records nothing outside a GradientTape), for a
    built-in layer and a Python-defined one; under a tape the gradients reach the weights."""
    class Scale(gk.layers.Layer):
        def build(self, shape):
            self.w = self.add_weight(shape=(shape[-1],), initializer="ones")

        def call(self, x):
            return x * self.w

    x = RNG.normal(size=(2, 4)).astype(np.float32)
    dense = gk.layers.Dense(3)
    theirs = keras.layers.Dense(3)
    theirs.build((None, 4))
    dense.build((None, 4))
    dense.set_weights(theirs.get_weights())
    np.testing.assert_allclose(dense(x).numpy(), theirs(x).numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(Scale()(x).numpy(), x)
    with gpuaccel.GradientTape() as tape:
        loss = gpuaccel.reduce_sum(dense(x))
    kernel_grad, bias_grad = tape.gradient(loss, dense.trainable_weights)
    np.testing.assert_allclose(kernel_grad.numpy(), np.repeat(x.sum(0)[:, None], 3, 1), rtol=1e-5)
    np.testing.assert_allclose(bias_grad.numpy(), np.full(3, 2.0))


def test_custom_loop_with_gradient_tape_matches_fit_step():
    """model(x) records under a GradientTape (TF's custom training loop) and not outside it."""
    x = RNG.normal(size=(16, 3)).astype(np.float32)
    y = RNG.normal(size=(16, 1)).astype(np.float32)
    a = gk.Sequential([gk.Input((3,)), gk.layers.Dense(1)])
    b = gk.Sequential([gk.Input((3,)), gk.layers.Dense(1)])
    b.set_weights(a.get_weights())
    assert not a(x).requires_grad  # outside a tape: a plain value, .numpy() works
    loss_fn = gk.losses.MeanSquaredError()
    optimizer = gk.optimizers.SGD(0.1)
    with gpuaccel.GradientTape() as tape:
        loss = loss_fn(y, a(x, training=True))
    grads = tape.gradient(loss, a.trainable_weights)
    optimizer.apply_gradients(zip(grads, a.trainable_weights))
    b.compile(optimizer=gk.optimizers.SGD(0.1), loss="mse")
    b.train_on_batch(x, y)
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_allclose(wa, wb, rtol=1e-6, atol=1e-7)


def test_functional_model_lists_a_nested_model_as_one_layer_as_keras():
    def build(lib):
        inner_in = lib.Input((4,))
        inner = lib.Model(inner_in, lib.layers.Dense(3)(inner_in), name="inner")
        x = lib.Input((4,), name="x")
        return lib.Model(x, lib.layers.Dense(1, name="head")(inner(x)))
    ours, theirs = build(gk), build(keras)
    assert [layer.name for layer in ours.layers] == [layer.name for layer in theirs.layers] == \
        ["x", "inner", "head"]
    assert ours.get_layer("inner") is ours.layers[1] and len(ours.layers[1].weights) == 2
    assert [w.shape for w in ours.weights] == [tuple(w.shape) for w in theirs.weights]
