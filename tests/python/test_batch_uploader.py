"""Batches uploaded on the GPU's copy stream (cpp/train/batch_uploader.h): a Keras fit on the
fake CUDA library, whose copy stream runs its DMAs only when an event behind them is waited for
(the slowest possible copy engine), trains to exactly the numbers of a fit that uploads on the
compute stream, eagerly and with CUDA graphs, from arrays and from a prefetched Dataset, with every upload on the copy stream and no wait
on an event never recorded; and, marked ``gpu`` (.ci/device_check runs it on the device
machine), the same comparison on a real GPU. predict (train/predictor.h) uploads through the
same BatchPlacement: on the fake its outputs equal the CPU model's, from arrays and from a
prefetched Dataset, with every batch on the copy stream; so does a prefetched Dataset iterated
under the GPU's scope outside fit, whose batches stay whole when the caller keeps them all.
Ordering itself (the host never waits for a step,
slots reused only after their events) is tested in C++ (tests/cpp/batch_uploader_test.cc)."""
import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel import keras

from test_library_backend import FAKE_COUNTERS, run_with_fake

COPY_STREAM_PROBE = FAKE_COUNTERS + r"""
import json
import numpy as np
import gpuaccel as ga
from gpuaccel import keras

rng = np.random.default_rng(0)
x = rng.normal(size=(72, 8)).astype('float32')  # 4 batches of 16, then one of 8
y = (x.sum(axis=1) > 0).astype('int64')

class UploadSwitch(keras.callbacks.Callback):
    def __init__(self, on):
        super().__init__()
        self.on = on
    def on_train_begin(self, logs=None):
        self.model._cpp_trainer.upload_on_copy_stream = self.on

def fit(copy_stream, jit_compile, dataset=False):
    ga.random.set_seed(1)
    data = dict(x=x, y=y, batch_size=16, shuffle=False)
    if dataset:  # the course's pipeline: prefetched on a C++ thread, under the GPU's scope
        with ga.device('/GPU:0'):
            data = dict(x=ga.data.Dataset.from_tensor_slices((x, y)).batch(16)
                        .prefetch(ga.data.AUTOTUNE))
    with ga.device('/GPU:0'):
        model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4, activation='relu'),
                                  keras.layers.Dense(2)])
        model.compile(optimizer='adam', metrics=['accuracy'], jit_compile=jit_compile,
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        names = [f[0] for f in fake_counters._fields_]
        before = {n: getattr(fake_counters, n) for n in names}
        history = model.fit(**data, epochs=3, verbose=0, callbacks=[UploadSwitch(copy_stream)],
                            validation_data=(x[:32], y[:32]), validation_batch_size=16)
        delta = {n: getattr(fake_counters, n) - before[n] for n in names}
        trainer = model._cpp_trainer
        return {'loss': history.history['loss'], 'accuracy': history.history['accuracy'],
                'val_loss': history.history['val_loss'],
                'weights': [w.tolist() for w in model.get_weights()],
                'uploads': trainer.copy_stream_uploads, 'replays': trainer.graph_replays,
                'counters': delta}

out = {f'{jit}_{copy}': fit(copy == 'copy', jit)
       for jit in ('auto', False) for copy in ('copy', 'compute')}
out['dataset'] = fit(True, 'auto', dataset=True)
print(json.dumps(out))
"""


def test_uploads_on_the_copy_stream_train_exactly_as_uploads_on_the_compute_stream():
    r = run_with_fake(COPY_STREAM_PROBE)
    steps = 15  # 3 epochs of 5 batches
    for jit in ("auto", "False"):
        on, off = r[f"{jit}_copy"], r[f"{jit}_compute"]
        assert on["loss"] == off["loss"], jit
        assert on["accuracy"] == off["accuracy"], jit
        assert on["val_loss"] == off["val_loss"], jit
        assert on["weights"] == off["weights"], jit
        # Every batch (x and y) went through the copy stream, training and validation (two
        # batches of 16 per epoch), and none in the comparison run.
        assert on["uploads"] == steps + 6
        assert on["counters"]["copy_stream_copies"] == 2 * (steps + 6)
        assert off["uploads"] == 0 and off["counters"]["copy_stream_copies"] == 0
        # Each upload: the compute stream waits for it; each slot reuse: the copy stream waits
        # for the step that read it. Nothing waits on an event that was never recorded.
        assert on["counters"]["stream_waits"] == 2 * (steps + 6)
        assert on["counters"]["unrecorded_waits"] == 0
        # Two slots, two events each, made once for the fit.
        assert on["counters"]["backend_events_created"] == 4
        # The host waits at most once per upload, and only for a slot's earlier DMA; the copy
        # stream adds no read of the device: no device-to-host copy per step (one per epoch's
        # logs, and one more), as with uploads on the compute stream.
        assert on["counters"]["host_event_waits"] <= steps + 6
        assert on["counters"]["copies_to_host"] == off["counters"]["copies_to_host"] <= 2 * 3 + 1
        assert on["counters"]["synchronizes"] == off["counters"]["synchronizes"] == 0
    # With graphs, the two signatures (batches of 16 and of 8) are captured and replayed as before.
    assert r["auto_copy"]["replays"] == r["auto_compute"]["replays"] == 13
    # A prefetched Dataset made under the GPU's scope: fit keeps its batches on the host, so the
    # prefetch thread queues nothing on the stream a step captures, and the Trainer uploads
    # them on the copy stream: the same batches, the same numbers, the same graphs.
    d = r["dataset"]
    assert d["uploads"] == steps + 6 and d["counters"]["copy_stream_copies"] == 2 * (steps + 6)
    assert d["replays"] == 13
    for key in ("loss", "accuracy", "val_loss", "weights"):
        assert d[key] == r["auto_copy"][key], key


PREDICT_PROBE = FAKE_COUNTERS + r"""
import json
import numpy as np
import gpuaccel as ga
from gpuaccel import keras

rng = np.random.default_rng(0)
x = rng.normal(size=(72, 8)).astype('float32')  # 4 batches of 16, then one of 8

def model_on(device):
    ga.random.set_seed(1)
    with ga.device(device):
        return keras.Sequential([keras.Input((8,)), keras.layers.Dense(4, activation='relu'),
                                 keras.layers.Dense(2)])

cpu = model_on('/CPU:0')
gpu = model_on('/GPU:0')  # not compiled: predict needs no loss
gpu.set_weights(cpu.get_weights())
names = [f[0] for f in fake_counters._fields_]

def predict(copy_stream, dataset=False):
    predictor = gpu._predictor()
    predictor.upload_on_copy_stream = copy_stream
    uploads = predictor.copy_stream_uploads
    before = {n: getattr(fake_counters, n) for n in names}
    if dataset:  # prefetched on a C++ thread, made under the GPU's scope
        with ga.device('/GPU:0'):
            data = ga.data.Dataset.from_tensor_slices(x).batch(16).prefetch(ga.data.AUTOTUNE)
        out = gpu.predict(data, verbose=0)
    else:
        out = gpu.predict(x, batch_size=16, verbose=0)
    delta = {n: getattr(fake_counters, n) - before[n] for n in names}
    return {'out': out.tolist(), 'uploads': gpu._predictor().copy_stream_uploads - uploads,
            'counters': delta}

out = {'cpu': cpu.predict(x, batch_size=16, verbose=0).tolist(),
       'copy': predict(True), 'compute': predict(False), 'dataset': predict(True, dataset=True),
       'on_batch': gpu.predict_on_batch(x[:5]).tolist()}
print(json.dumps(out))
"""


def test_predict_uploads_on_the_copy_stream_and_gives_the_cpu_models_outputs():
    r = run_with_fake(PREDICT_PROBE)
    # The fake runs copy-stream DMAs only when an event behind them is waited for: an output
    # computed from an upload the compute stream did not wait for would not be the CPU's.
    np.testing.assert_allclose(r["copy"]["out"], r["cpu"], rtol=1e-6, atol=1e-6)
    assert r["copy"]["out"] == r["compute"]["out"] == r["dataset"]["out"]
    np.testing.assert_allclose(r["on_batch"], r["cpu"][:5], rtol=1e-6, atol=1e-6)
    for run in ("copy", "dataset"):
        c = r[run]["counters"]
        # Five batches of x, each on the copy stream; the compute stream waits for each, and
        # the copy stream for the step that read a slot before refilling it.
        assert r[run]["uploads"] == 5, run
        assert c["copy_stream_copies"] == 5, run
        assert c["stream_waits"] == 10, run
        assert c["unrecorded_waits"] == 0 and c["synchronizes"] == 0, run
        # The outputs are read back once per batch (predict returns NumPy), nothing more.
        assert c["copies_to_host"] == r["compute"]["counters"]["copies_to_host"] == 5, run
    assert r["compute"]["uploads"] == 0 and r["compute"]["counters"]["copy_stream_copies"] == 0


DATASET_PROBE = FAKE_COUNTERS + r"""
import json
import numpy as np
import gpuaccel as ga

rng = np.random.default_rng(0)
x = rng.normal(size=(72, 8)).astype('float32')  # 4 batches of 16, then one of 8
y = np.arange(72, dtype=np.int64)
names = [f[0] for f in fake_counters._fields_]
with ga.device('/GPU:0'):
    dataset = ga.data.Dataset.from_tensor_slices((x, y)).batch(16).prefetch(2)
    before = {n: getattr(fake_counters, n) for n in names}
    kept, steps = [], []
    for xb, yb in dataset:
        kept.append((xb, yb))  # all kept: more than the uploader's two slots
        steps.append(xb * 2.0)  # the consumer's "step", on the compute stream
    delta = {n: getattr(fake_counters, n) - before[n] for n in names}
out = {'x': np.concatenate([b[0].numpy() for b in kept]).tolist(),
       'y': np.concatenate([b[1].numpy() for b in kept]).tolist(),
       'steps': np.concatenate([s.numpy() for s in steps]).tolist(),
       'devices': sorted({t._device_type for b in kept for t in b}), 'counters': delta}
print(json.dumps(out))
"""


def test_a_prefetched_dataset_on_a_gpu_outside_fit_uploads_on_the_copy_stream():
    r = run_with_fake(DATASET_PROBE)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(72, 8)).astype("float32")
    # Whole batches although every one was kept past the slots' reuse, and the steps read them
    # whole (the fake's copy stream runs a DMA only once an event behind it is waited for).
    assert r["x"] == x.tolist() and r["y"] == list(range(72))
    assert r["steps"] == (x * 2).tolist()
    assert r["devices"] == ["GPU"]
    c = r["counters"]
    assert c["copy_stream_copies"] == 2 * 5  # x and y of each of the 5 batches
    assert c["stream_waits"] == 2 * 5  # per batch: the compute stream's, and the slot's reuse
    assert c["unrecorded_waits"] == 0 and c["synchronizes"] == 0


def _course_cnn_fit(copy_stream, jit_compile, steps=20, batch=32):
    rng = np.random.default_rng(0)
    x = rng.random((steps * batch, 28, 28, 1), dtype=np.float32)
    y = rng.integers(0, 10, len(x)).astype(np.int64)
    ga.random.set_seed(3)
    L = keras.layers

    class UploadSwitch(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.model._cpp_trainer.upload_on_copy_stream = copy_stream

    with ga.device("/GPU:0"):
        model = keras.Sequential([keras.Input((28, 28, 1)), L.Conv2D(8, 3, activation="relu"),
                                  L.MaxPooling2D(2), L.Conv2D(16, 3, activation="relu"),
                                  L.Flatten(), L.Dense(10)])
        model.compile(optimizer="adam", metrics=["accuracy"], jit_compile=jit_compile,
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(x, y, batch_size=batch, epochs=1, verbose=0, shuffle=False,
                            callbacks=[UploadSwitch()])
    return model, history.history["loss"][0]


@pytest.mark.gpu
@pytest.mark.parametrize("jit_compile", [False, True])
def test_copy_stream_uploads_give_the_weights_of_compute_stream_uploads_on_a_gpu(jit_compile):
    on, loss_on = _course_cnn_fit(copy_stream=True, jit_compile=jit_compile)
    off, loss_off = _course_cnn_fit(copy_stream=False, jit_compile=jit_compile)
    assert on._cpp_trainer.copy_stream_uploads == 20
    assert off._cpp_trainer.copy_stream_uploads == 0
    if jit_compile:
        assert on._cpp_trainer.graph_replays == off._cpp_trainer.graph_replays == 19
    # cuDNN may pick algorithms whose sums are ordered differently between runs: close, not
    # equal. A batch read before its upload finished would be off by far more.
    assert loss_on == pytest.approx(loss_off, rel=1e-4)
    for a, b in zip(on.get_weights(), off.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)


@pytest.mark.gpu
def test_predict_and_a_prefetched_dataset_upload_on_the_copy_stream_of_a_gpu():
    rng = np.random.default_rng(0)
    x = rng.random((10 * 64 + 8, 28, 28, 1), dtype=np.float32)
    L = keras.layers

    def cnn(device):
        ga.random.set_seed(5)
        with ga.device(device):
            return keras.Sequential([keras.Input((28, 28, 1)), L.Conv2D(8, 3, activation="relu"),
                                     L.MaxPooling2D(2), L.Flatten(), L.Dense(10)])

    cpu, gpu = cnn("/CPU:0"), cnn("/GPU:0")
    gpu.set_weights(cpu.get_weights())
    expected = cpu.predict(x, batch_size=64, verbose=0)
    got = gpu.predict(x, batch_size=64, verbose=0)
    assert gpu._predictor().copy_stream_uploads == 11
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    # Iterated directly under the GPU's scope, every batch kept: whole, on the GPU.
    with ga.device("/GPU:0"):
        kept = list(ga.data.Dataset.from_tensor_slices(x).batch(64).prefetch(2))
    np.testing.assert_array_equal(np.concatenate([b.numpy() for b in kept]), x)
