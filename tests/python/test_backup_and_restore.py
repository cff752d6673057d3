"""keras.callbacks.BackupAndRestore: a fit killed with SIGKILL at random points (between
batches, before or after a backup, half way through writing one) and run again ends with the
weights of an uninterrupted run, bit for bit (same machine, same thread count, seeded); damaged
or foreign backups give clear errors; the callback follows Keras 3's arguments and file life
cycle."""
import os
import signal
import subprocess
import sys
import warnings

import numpy as np
import pytest

import gpuaccel
from gpuaccel import keras as gk
from gpuaccel.errors import DataLossError
from gpuaccel.keras import _training_state

from runtime_fixtures import package_environment

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "resume_worker.py")
STEPS = 4 * 8  # resume_worker: 4 epochs of 8 batches


def run_worker(out, backup_dir, save_freq, *kill):
    # One thread: the same reduction order in every run, as the reference.
    env = package_environment(OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, WORKER, str(out), str(backup_dir), str(save_freq),
                           *map(str, kill)], env=env, capture_output=True, text=True,
                          timeout=120)


def start_worker(out, backup_dir, save_freq, *kill):
    env = package_environment(OMP_NUM_THREADS="1")
    return subprocess.Popen([sys.executable, WORKER, str(out), str(backup_dir), str(save_freq),
                             *map(str, kill)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reference")
    done = run_worker(folder / "w.npy", folder / "unused", "none")
    assert done.returncode == 0, done.stderr
    return np.load(folder / "w.npy")


def trials():
    """20 kills: random steps, save frequencies and kill points, seeded so a failure can be
    rerun (the parameter id names the trial)."""
    rng = np.random.default_rng(18)
    out = []
    for i in range(20):
        freq = ["epoch", 1, 3, 5][i % 4]
        where = ["before_save", "after_save", "mid_write"][int(rng.integers(0, 3))]
        out.append((freq, int(rng.integers(1, STEPS)), where))
    return out


def test_killed_fits_resume_to_the_uninterrupted_weights(tmp_path, reference):
    plan = trials()
    # Two trials at a time (one thread each) keep the test near half a minute on 2 cores.
    for first in range(0, len(plan), 2):
        running = []
        for k, (freq, step, where) in enumerate(plan[first:first + 2], start=first):
            folder = tmp_path / f"trial{k}"
            running.append((k, folder, freq, start_worker(folder / "w.npy", folder / "backup",
                                                          freq, step, where)))
        for k, folder, freq, process in running:
            _, err = process.communicate(timeout=120)
            label = f"trial {k} {plan[k]}"
            assert process.returncode in (-signal.SIGKILL, 0), f"{label}: {err}"
            if process.returncode == 0:  # the kill point came after the last backup
                assert not (folder / "backup").exists()
            resumed = run_worker(folder / "w.npy", folder / "backup", freq)
            assert resumed.returncode == 0, f"{label}: {resumed.stderr}"
            np.testing.assert_array_equal(np.load(folder / "w.npy"), reference, err_msg=label)
            # delete_checkpoint=True: the backup (and any half-written temporary) is gone.
            assert not (folder / "backup").exists(), (label, os.listdir(folder / "backup"))


# ---- in-process behaviour ----

def small_model(optimizer=None):
    model = gk.Sequential([gk.Input((3,)), gk.layers.Dense(4, activation="relu"),
                           gk.layers.Dense(2)])
    model.compile(optimizer=optimizer or gk.optimizers.Adam(0.01), loss="mse")
    return model


def data(n=20):
    rng = np.random.default_rng(3)
    return (rng.standard_normal((n, 3)).astype(np.float32),
            rng.standard_normal((n, 2)).astype(np.float32))


class Interrupt(gk.callbacks.Callback):
    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == self.epoch:
            raise RuntimeError("Interrupting!")


def test_keras_docstring_example_runs_the_remaining_epochs(tmp_path):
    # Keras's own example: interrupted at epoch 4 of 10, the second fit runs 6 epochs.
    x, y = data()
    backup = gk.callbacks.BackupAndRestore(backup_dir=str(tmp_path / "backup"))
    model = small_model(gk.optimizers.SGD())
    with pytest.raises(RuntimeError, match="Interrupting"):
        model.fit(x, y, epochs=10, batch_size=4, verbose=0, callbacks=[backup, Interrupt(4)])
    assert sorted(os.listdir(tmp_path / "backup")) == ["training_state.npz"]
    history = model.fit(x, y, epochs=10, batch_size=4, verbose=0, callbacks=[backup])
    assert len(history.history["loss"]) == 6 and history.epoch == [4, 5, 6, 7, 8, 9]
    assert not (tmp_path / "backup").exists()  # deleted when fit completes


def test_the_backup_holds_optimizer_slots_and_counters(tmp_path):
    x, y = data()
    model = small_model()
    path = tmp_path / "backup" / "training_state.npz"
    model.fit(x, y, epochs=2, batch_size=5, verbose=0,
              callbacks=[gk.callbacks.BackupAndRestore(tmp_path / "backup",
                                                       delete_checkpoint=False)])
    meta, arrays = _training_state.read(path)
    assert (meta["epoch"], meta["step"], meta["global_step"]) == (2, 0, 8)
    assert meta["optimizer"]["iterations"] == 8 == model.optimizer.iterations
    assert meta["optimizer"]["slot_kinds"] == ["momentum", "velocity"]
    for i, w in enumerate(model.weights):
        for kind in ("momentum", "velocity"):
            np.testing.assert_array_equal(
                arrays[f"slot_{kind}_{i:05d}"], model.optimizer._cpp.slot(w, kind).numpy())
    # A fresh model and optimizer restored from it hold the same state.
    other = small_model()
    position = _training_state.restore(path, other)
    assert (position.epoch, position.step) == (2, 0)
    assert other.optimizer.iterations == 8
    for a, b in zip(other.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)
    for w_other, w in zip(other.weights, model.weights):
        np.testing.assert_array_equal(other.optimizer._cpp.slot(w_other, "velocity").numpy(),
                                      model.optimizer._cpp.slot(w, "velocity").numpy())


def test_loss_scale_state_is_restored(tmp_path):
    x, y = data()
    lso = gk.optimizers.LossScaleOptimizer(gk.optimizers.SGD(0.01, momentum=0.9),
                                           initial_scale=2.0 ** 10, dynamic_growth_steps=3)
    model = small_model(lso)
    model.fit(x, y, epochs=1, batch_size=4, verbose=0,
              callbacks=[gk.callbacks.BackupAndRestore(tmp_path, delete_checkpoint=False)])
    assert lso.dynamic_scale == 2.0 ** 11 and lso.step_counter == 2  # 5 finite steps
    other_lso = gk.optimizers.LossScaleOptimizer(gk.optimizers.SGD(0.01, momentum=0.9),
                                                 initial_scale=2.0 ** 10, dynamic_growth_steps=3)
    other = small_model(other_lso)
    _training_state.restore(tmp_path / "training_state.npz", other)
    assert other_lso.dynamic_scale == 2.0 ** 11 and other_lso.step_counter == 2
    assert other_lso.iterations == 5


def test_random_generator_state_is_restored(tmp_path):
    x, y = data()
    model = small_model()
    model.fit(x, y, epochs=1, verbose=0,
              callbacks=[gk.callbacks.BackupAndRestore(tmp_path, delete_checkpoint=False)])
    expected = gpuaccel.random.uniform((5,)).numpy()
    gpuaccel.random.set_seed(99)
    _training_state.restore(tmp_path / "training_state.npz", small_model())
    np.testing.assert_array_equal(gpuaccel.random.uniform((5,)).numpy(), expected)


def saved_backup(tmp_path):
    x, y = data()
    model = small_model()
    model.fit(x, y, epochs=1, verbose=0,
              callbacks=[gk.callbacks.BackupAndRestore(tmp_path, delete_checkpoint=False)])
    return tmp_path / "training_state.npz"


def test_damaged_backups_are_clear_errors_naming_the_file(tmp_path):
    path = saved_backup(tmp_path)
    good = path.read_bytes()
    rng = np.random.default_rng(5)
    x, y = data()
    for cut in sorted(rng.integers(0, len(good), 10)):
        path.write_bytes(good[:cut])
        with pytest.raises(DataLossError, match="training_state.npz.*truncated"):
            small_model().fit(x, y, epochs=2, verbose=0,
                              callbacks=[gk.callbacks.BackupAndRestore(tmp_path)])
    for _ in range(10):
        damaged = bytearray(good)
        at = int(rng.integers(0, len(good) - 100))
        damaged[at] ^= 1 + int(rng.integers(0, 255))
        path.write_bytes(bytes(damaged))
        with pytest.raises(DataLossError, match="training_state.npz"):
            small_model().fit(x, y, epochs=2, verbose=0,
                              callbacks=[gk.callbacks.BackupAndRestore(tmp_path)])
    path.write_bytes(rng.bytes(5000))
    with pytest.raises(DataLossError, match="training_state.npz"):
        _training_state.restore(path, small_model())


def test_a_backup_of_another_model_is_refused_before_anything_changes(tmp_path):
    path = saved_backup(tmp_path)
    other = gk.Sequential([gk.Input((3,)), gk.layers.Dense(5), gk.layers.Dense(2)])
    other.compile(optimizer="adam", loss="mse")
    before = other.get_weights()
    with pytest.raises(ValueError, match="does not fit this training run.*shapes"):
        _training_state.restore(path, other)
    for a, b in zip(before, other.get_weights()):
        np.testing.assert_array_equal(a, b)
    sgd_model = small_model(gk.optimizers.SGD(0.1))
    with pytest.raises(ValueError, match="saved with a Adam optimizer"):
        _training_state.restore(path, sgd_model)
    weights_file = tmp_path / "plain.weights.npz"
    small_model().save_weights(weights_file)
    with pytest.raises(ValueError, match="not a gpuaccel training checkpoint"):
        _training_state.restore(weights_file, small_model())


def test_double_checkpoint_falls_back_to_the_previous_backup(tmp_path):
    x, y = data()
    model = small_model()
    backup = gk.callbacks.BackupAndRestore(tmp_path, delete_checkpoint=False,
                                           double_checkpoint=True)
    model.fit(x, y, epochs=2, verbose=0, callbacks=[backup])
    assert sorted(os.listdir(tmp_path)) == ["_training_state.npz", "training_state.npz"]
    latest = tmp_path / "training_state.npz"
    latest.write_bytes(latest.read_bytes()[:100])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = small_model().fit(x, y, epochs=3, verbose=0, callbacks=[backup])
    assert any("previous backup" in str(w.message) for w in caught)
    assert history.epoch == [1, 2]  # the previous backup was taken after epoch 0


def test_arguments_are_checked_as_keras_does(tmp_path):
    with pytest.raises(ValueError, match="Empty `backup_dir`"):
        gk.callbacks.BackupAndRestore("")
    for bad in ("batch", 0, -3, 2.5, True):
        with pytest.raises(ValueError, match="save_freq"):
            gk.callbacks.BackupAndRestore(tmp_path, save_freq=bad)


def test_the_last_batch_of_an_epoch_resumes_into_the_epoch_end(tmp_path):
    # A backup after the epoch's last batch (save_freq divides the steps) but before the epoch
    # ended: the resumed fit runs no batch of that epoch and goes on with the next.
    x, y = data(16)
    model = small_model()
    model.fit(x, y, epochs=1, batch_size=4, verbose=0,
              callbacks=[gk.callbacks.BackupAndRestore(tmp_path, save_freq=4,
                                                       delete_checkpoint=False)])
    meta, _ = _training_state.read(tmp_path / "training_state.npz")
    assert (meta["epoch"], meta["step"]) == (0, 4)
    history = small_model().fit(x, y, epochs=2, batch_size=4, verbose=0,
                                callbacks=[gk.callbacks.BackupAndRestore(tmp_path,
                                                                         save_freq=4)])
    assert history.epoch == [0, 1]
