"""gpuaccel.train against TensorFlow 2.21's tf.train: the same saves and restores of the same
model give the same files, the same ``checkpoint`` state file (timestamps aside), the same
restored weights and optimizer state, and the same errors; a custom training loop saving every
epoch, interrupted, restored and continued ends with TensorFlow's weights."""
import os

import numpy as np
import pytest

import gpuaccel as gt
import tensorflow as tf  # the reference: tf.train and tf.keras (Keras 3)

from gpuaccel.errors import NotFoundError as GtNotFoundError

RNG = np.random.RandomState(7)
X = RNG.randn(4, 8, 3).astype(np.float32)   # 4 epochs of one batch of 8 samples
Y = RNG.randn(4, 8, 2).astype(np.float32)


def _model(api, weights=None):
    """A small Sequential of ``api`` (tf or gpuaccel), built with ``weights``; None: no Input,
    so not built until its first call."""
    inputs = [] if weights is None else [api.keras.Input((3,))]
    model = api.keras.Sequential(inputs + [api.keras.layers.Dense(4, activation="tanh"),
                                           api.keras.layers.Dense(2)])
    if weights is not None:
        model.set_weights(weights)
    return model


def _tf_model(weights=None):
    return _model(tf, weights)


def _gt_model(weights=None):
    return _model(gt, weights)


@pytest.fixture(scope="module")
def initial_weights():
    model = _tf_model()
    model.build((None, 3))
    return [np.asarray(w) for w in model.get_weights()]


def _tf_step(model, optimizer, epoch):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(X[epoch]) - Y[epoch]) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


def _gt_step(model, optimizer, epoch):
    with gt.GradientTape() as tape:
        loss = gt.reduce_mean((model(X[epoch]) - Y[epoch]) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


def _state_lines(directory):
    """The ``checkpoint`` state file's lines without the (wall-clock) timestamps."""
    with open(os.path.join(directory, "checkpoint"), encoding="utf-8") as f:
        return [line for line in f.read().splitlines() if "timestamp" not in line]


def _run_interrupted(api, new_model, step_fn, directory, initial, restore_unbuilt):
    """Epochs 0-1, saving each; then a fresh program restores the latest and runs epochs 2-3
    (``restore_unbuilt``: into a model not built yet, which gets the values once built).
    Returns (final weights, step, save paths, checkpoints listed, iterations)."""
    model, optimizer = new_model(initial), api.keras.optimizers.Adam(0.05)
    ckpt = api.train.Checkpoint(model=model, optimizer=optimizer, step=api.Variable(1))
    manager = api.train.CheckpointManager(ckpt, directory, max_to_keep=2)
    paths = []
    for epoch in range(2):
        step_fn(model, optimizer, epoch)
        ckpt.step.assign_add(1)
        paths.append(manager.save())
    step_fn(model, optimizer, 2)  # lost: the program dies before saving it
    # a new program: other initial weights, a new optimizer, the same attribute names
    model = new_model(None if restore_unbuilt else [w * 0.5 for w in initial])
    optimizer = api.keras.optimizers.Adam(0.05)
    ckpt = api.train.Checkpoint(model=model, optimizer=optimizer, step=api.Variable(1))
    manager = api.train.CheckpointManager(ckpt, directory, max_to_keep=2)
    ckpt.restore(manager.latest_checkpoint)
    for epoch in range(int(ckpt.step.numpy()) - 1, 4):
        step_fn(model, optimizer, epoch)
        ckpt.step.assign_add(1)
        paths.append(manager.save())
    return ([np.asarray(w) for w in model.get_weights()], int(ckpt.step.numpy()),
            paths, manager.checkpoints, int(np.asarray(optimizer.iterations)))


@pytest.mark.parametrize("restore_unbuilt", [False, True])
def test_interrupted_training_loop_resumes_as_tensorflow(tmp_path, initial_weights,
                                                         restore_unbuilt):
    tf_dir, gt_dir = str(tmp_path / "tf"), str(tmp_path / "gt")
    tf_w, tf_step, tf_paths, tf_kept, tf_iters = _run_interrupted(
        tf, _tf_model, _tf_step, tf_dir, initial_weights, restore_unbuilt)
    gt_w, gt_step, gt_paths, gt_kept, gt_iters = _run_interrupted(
        gt, _gt_model, _gt_step, gt_dir, initial_weights, restore_unbuilt)
    assert gt_step == tf_step == 5 and gt_iters == tf_iters == 4
    for ours, theirs in zip(gt_w, tf_w):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert [os.path.relpath(p, gt_dir) for p in gt_paths] == \
        [os.path.relpath(p, tf_dir) for p in tf_paths] == ["ckpt-1", "ckpt-2", "ckpt-3", "ckpt-4"]
    assert [os.path.relpath(p, gt_dir) for p in gt_kept] == \
        [os.path.relpath(p, tf_dir) for p in tf_kept]
    assert sorted(os.listdir(gt_dir)) == sorted(os.listdir(tf_dir))
    assert _state_lines(gt_dir) == _state_lines(tf_dir)


def test_save_write_and_restore_name_files_as_tensorflow(tmp_path, initial_weights):
    results = {}
    for name, api, new_model in (("tf", tf, _tf_model), ("gt", gt, _gt_model)):
        directory = tmp_path / name
        model = new_model(initial_weights)
        ckpt = api.train.Checkpoint(model=model, epoch=api.Variable(3.0))
        first = ckpt.save(str(directory / "ckpt"))
        ckpt.epoch.assign(4.0)
        second = ckpt.save(str(directory / "ckpt"))
        written = ckpt.write(str(directory / "plain"))
        model.set_weights([w * 0 for w in initial_weights])
        status = ckpt.restore(first)
        status.assert_consumed()
        results[name] = dict(
            paths=[os.path.relpath(p, directory) for p in (first, second, written)],
            files=sorted(os.listdir(directory)), state=_state_lines(directory),
            latest=os.path.relpath(api.train.latest_checkpoint(str(directory)), directory),
            weights=[np.asarray(w) for w in model.get_weights()],
            epoch=float(np.asarray(ckpt.epoch.numpy())),
            counter=int(np.asarray(ckpt.save_counter.numpy())),
            stored_epoch=float(api.train.load_variable(second, "epoch/.ATTRIBUTES/VARIABLE_VALUE")))
    tf_r, gt_r = results["tf"], results["gt"]
    assert gt_r["paths"] == tf_r["paths"] == ["ckpt-1", "ckpt-2", "plain"]
    assert gt_r["files"] == tf_r["files"]
    assert gt_r["state"] == tf_r["state"] == ['model_checkpoint_path: "ckpt-2"',
                                              'all_model_checkpoint_paths: "ckpt-2"']
    assert gt_r["latest"] == tf_r["latest"] == "ckpt-2"
    assert gt_r["epoch"] == tf_r["epoch"] == 3.0
    assert gt_r["counter"] == tf_r["counter"] == 1  # restored with the rest
    assert gt_r["stored_epoch"] == tf_r["stored_epoch"] == 4.0
    for ours, theirs, initial in zip(gt_r["weights"], tf_r["weights"], initial_weights):
        np.testing.assert_array_equal(ours, initial)  # not the zeros set before restoring
        np.testing.assert_array_equal(theirs, initial)


def test_manager_keeps_as_tensorflow(tmp_path):
    results = {}
    for name, api in (("tf", tf), ("gt", gt)):
        directory = str(tmp_path / name)
        ckpt = api.train.Checkpoint(v=api.Variable([1.0, 2.0]))
        manager = api.train.CheckpointManager(ckpt, directory, max_to_keep=3,
                                              checkpoint_name="model")
        assert manager.latest_checkpoint is None and manager.checkpoints == []
        for _ in range(4):
            manager.save()
        manager.save(checkpoint_number=100)
        # a new manager on the same directory takes over the list, and keeps counting
        again = api.train.CheckpointManager(ckpt, directory, max_to_keep=3,
                                            checkpoint_name="model")
        taken_over = [os.path.basename(p) for p in again.checkpoints]
        again.save()
        unlimited_dir = os.path.join(directory, "all")
        unlimited = api.train.CheckpointManager(ckpt, unlimited_dir, max_to_keep=None)
        for _ in range(3):
            unlimited.save()
        results[name] = (sorted(os.listdir(directory)), _state_lines(directory), taken_over,
                         [os.path.basename(p) for p in again.checkpoints],
                         os.path.basename(again.latest_checkpoint),
                         sorted(os.listdir(unlimited_dir)), _state_lines(unlimited_dir))
    assert results["gt"] == results["tf"]
    assert results["gt"][3] == ["model-4", "model-100", "model-6"]


def test_errors_as_tensorflow(tmp_path):
    messages = {}
    for name, api in (("tf", tf), ("gt", gt)):
        ckpt = api.train.Checkpoint(v=api.Variable([1.0, 2.0]))
        saved = ckpt.write(str(tmp_path / name / "x"))
        missing = str(tmp_path / name / "nothere")
        with pytest.raises(tf.errors.NotFoundError if api is tf else GtNotFoundError) as info:
            ckpt.restore(missing)
        not_found = str(info.value).replace(str(tmp_path / name), "DIR")
        with pytest.raises(ValueError, match="incompatible tensor with shape") as info:
            api.train.Checkpoint(v=api.Variable([0.0, 0.0, 0.0])).restore(saved)
        partial = api.train.Checkpoint(v=api.Variable([0.0, 0.0]), w=api.Variable(1.0))
        with pytest.raises(AssertionError, match="not bound to checkpointed values"):
            partial.restore(saved).assert_consumed()
        np.testing.assert_array_equal(np.asarray(partial.v.numpy()), [1.0, 2.0])
        partial.restore(saved).expect_partial()
        with pytest.raises(AssertionError) as none_info:
            ckpt.restore(None).assert_consumed()
        with pytest.raises(ValueError) as bad_info:
            api.train.Checkpoint(model=5)
        with pytest.raises(ValueError, match="positive integer or `None` for `max_to_keep`"):
            api.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=0)
        assert api.train.latest_checkpoint(str(tmp_path / "empty")) is None
        messages[name] = (not_found, str(none_info.value), str(bad_info.value).split(". ")[0])
    assert messages["gt"] == messages["tf"]


def test_subclassed_model_restores_by_attribute_names(tmp_path):
    class Net(gt.keras.Model):
        def __init__(self):
            super().__init__()
            self.encoder = gt.keras.layers.Dense(4)
            self.head = gt.keras.layers.Dense(1)

        def call(self, x):
            return self.head(self.encoder(x))

    net = Net()
    net(X[0])
    path = gt.train.Checkpoint(net=net).save(str(tmp_path / "net"))
    keys = [k for k, _ in gt.train.list_variables(path)]
    assert keys == ["net/encoder/vars/0", "net/encoder/vars/1", "net/head/vars/0",
                    "net/head/vars/1", "save_counter/.ATTRIBUTES/VARIABLE_VALUE"]
    built_later = Net()  # restored before its first call: the values wait for its variables
    status = gt.train.Checkpoint(net=built_later).restore(path)
    with pytest.raises(AssertionError, match="Unresolved object in checkpoint"):
        status.assert_consumed()
    np.testing.assert_array_equal(np.asarray(built_later(X[1])), np.asarray(net(X[1])))
    built_first = Net()
    built_first(X[0])
    gt.train.Checkpoint(net=built_first).restore(path).assert_consumed()
    np.testing.assert_array_equal(np.asarray(built_first(X[1])), np.asarray(net(X[1])))
    layer = gt.keras.layers.Dense(2)
    with pytest.raises(ValueError, match="not built"):
        gt.train.Checkpoint(layer=layer).restore(path)


def test_a_dataset_iterator_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="does not checkpoint where a dataset iterator is"):
        gt.train.Checkpoint(iterator=iter(gt.data.Dataset.from_tensor_slices([1.0, 2.0])))


def test_other_tf_train_names_are_refused_with_a_reason():
    assert hasattr(tf.train, "GradientDescentOptimizer") or hasattr(tf.compat.v1.train,
                                                                    "GradientDescentOptimizer")
    with pytest.raises(AttributeError, match="keras.optimizers.SGD"):
        gt.train.GradientDescentOptimizer  # noqa: B018
    with pytest.raises(AttributeError, match="gpuaccel.distribute"):
        gt.train.ClusterSpec  # noqa: B018


def test_hourly_keeping_and_step_interval_as_tensorflow(tmp_path, monkeypatch):
    """keep_checkpoint_every_n_hours and checkpoint_interval on a fake clock (both frameworks
    read time.time()): an hour passes per save."""
    import time
    clock = [1.0e9]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    results = {}
    for name, api in (("tf", tf), ("gt", gt)):
        clock[0] = 1.0e9
        directory = str(tmp_path / name)
        ckpt = api.train.Checkpoint(v=api.Variable([1.0]))
        hourly = api.train.CheckpointManager(ckpt, directory, max_to_keep=1,
                                             keep_checkpoint_every_n_hours=2)
        for _ in range(6):
            clock[0] += 3600.0
            hourly.save()
        step = api.Variable(0, dtype="int64", trainable=False)
        every_3 = api.train.CheckpointManager(ckpt, os.path.join(directory, "steps"),
                                              max_to_keep=None, step_counter=step,
                                              checkpoint_interval=3)
        saved = []
        for _ in range(8):
            saved.append(every_3.save() is not None)
            step.assign_add(1)
        with open(os.path.join(directory, "checkpoint"), encoding="utf-8") as f:
            state = f.read()
        results[name] = (sorted(os.listdir(directory)), state, saved)
    assert results["gt"] == results["tf"]
    assert results["gt"][2] == [True, False, False, True, False, False, True, False]
    # every second hour's checkpoint stays, beside the newest one
    assert [f for f in results["gt"][0] if f.endswith(".index")] == [
        "ckpt-2.index", "ckpt-4.index", "ckpt-6.index"]


def test_loss_scale_optimizer_state_is_restored(tmp_path, initial_weights):
    from gpuaccel.keras import mixed_precision
    model = _gt_model(initial_weights)
    optimizer = mixed_precision.LossScaleOptimizer(gt.keras.optimizers.SGD(0.1, momentum=0.9),
                                                   dynamic_growth_steps=2)
    for epoch in range(3):
        _gt_step(model, optimizer, epoch)
    path = gt.train.Checkpoint(model=model, optimizer=optimizer).save(str(tmp_path / "ls"))
    fresh = mixed_precision.LossScaleOptimizer(gt.keras.optimizers.SGD(0.1, momentum=0.9),
                                               initial_scale=8.0, dynamic_growth_steps=2)
    gt.train.Checkpoint(model=model, optimizer=fresh).restore(path).assert_consumed()
    assert (fresh._cpp.scale, fresh._cpp.step_counter, fresh.iterations) == \
        (optimizer._cpp.scale, optimizer._cpp.step_counter, 3)
    kernel = model.trainable_variables[0]
    np.testing.assert_array_equal(np.asarray(fresh._cpp.slot(kernel, "momentum").numpy()),
                                  np.asarray(optimizer._cpp.slot(kernel, "momentum").numpy()))


def test_tensorflows_own_checkpoint_is_refused_by_name(tmp_path):
    path = tf.train.Checkpoint(v=tf.Variable([1.0])).write(str(tmp_path / "tf_made"))
    with pytest.raises(ValueError, match="not TensorFlow's tensor bundles"):
        gt.train.Checkpoint(v=gt.Variable([0.0])).restore(path)
    ours = gt.train.Checkpoint(v=gt.Variable([1.0])).write(str(tmp_path / "cut"))
    with open(ours + ".data-00000-of-00001", "rb") as f:
        data = f.read()
    with open(ours + ".data-00000-of-00001", "wb") as f:
        f.write(data[:-20])
    with pytest.raises(gt.errors.DataLossError, match="truncated"):
        gt.train.Checkpoint(v=gt.Variable([0.0])).restore(ours)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int32"])
def test_variable_dtypes_round_trip_as_tensorflow(tmp_path, dtype):
    loaded = {}
    for name, api in (("tf", tf), ("gt", gt)):
        path = api.train.Checkpoint(v=api.Variable(np.array([1.5, -2.0]), dtype=dtype)).write(
            str(tmp_path / name))
        target = api.Variable(np.array([0.0, 0.0]), dtype=dtype)
        status = api.train.Checkpoint(v=target).restore(path)
        with pytest.raises(AssertionError, match="not bound to checkpointed values"):
            status.assert_consumed()  # `write` saved no save_counter; restore made one
        status.expect_partial()
        stored = api.train.load_variable(path, "v/.ATTRIBUTES/VARIABLE_VALUE")
        loaded[name] = (stored.dtype.name, stored.astype(np.float32).tolist(),
                        np.asarray(target.numpy()).astype(np.float32).tolist())
    assert loaded["gt"] == loaded["tf"]
