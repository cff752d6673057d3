"""Storage versions and derived copies (cpp/tensor/derived_copies.h) from Python: every way a
user or the training loop writes into an existing tensor bumps its version; a convolution's
reordered kernel and a mixed-precision layer's low-precision kernel are made once per weights
version, so predict derives them once in all and fit once per step; the results are those of
weights that keep no copies."""
import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel import keras
from gpuaccel.keras import mixed_precision as mp
from test_library_backend import FAKE_COUNTERS, run_with_fake


def _version(t):
    return t._version


def _writers():
    """(name, function writing into t) for each public in-place writer."""
    def setitem(t):
        with ga.no_grad():
            t[0] = 5.0

    def torch_add_(t):
        with ga.no_grad():
            t.add_(1.0)

    def fill_(t):
        with ga.no_grad():
            t.fill_(2.0)

    return [
        ("assign", lambda t: t.assign(np.full((4,), 3.0, np.float32))),
        ("assign_add", lambda t: t.assign_add(np.ones((4,), np.float32))),
        ("assign_sub", lambda t: t.assign_sub(np.ones((4,), np.float32))),
        ("setitem", setitem),
        ("add_", torch_add_),
        ("fill_", fill_),
    ]


@pytest.mark.parametrize("name,write", _writers(), ids=[n for n, _ in _writers()])
def test_every_python_writer_bumps_the_version(name, write):
    t = ga.tensor(np.arange(4, dtype=np.float32))
    before = _version(t)
    write(t)
    assert _version(t) > before, name


def _conv_model():
    ga.random.set_seed(3)
    model = keras.Sequential([keras.Input((8, 8, 3)),
                              keras.layers.Conv2D(8, 3, padding="same", activation="relu"),
                              keras.layers.Conv2D(16, 3, activation="relu"),
                              keras.layers.Flatten(), keras.layers.Dense(4)])
    model.compile(optimizer=keras.optimizers.SGD(0.01),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def _data(n=32):
    rng = np.random.default_rng(0)
    return rng.normal(size=(n, 8, 8, 3)).astype(np.float32), rng.integers(0, 4, size=n)


def _kernels(model):
    return [layer.weights[0] for layer in model.layers if layer.weights]


def test_set_weights_fit_and_optimizer_bump_the_versions():
    model = _conv_model()
    x, y = _data()
    kernels = _kernels(model)
    before = [_version(k) for k in kernels]
    model.set_weights(model.get_weights())
    after_set = [_version(k) for k in kernels]
    assert all(a > b for a, b in zip(after_set, before))
    model.fit(x, y, batch_size=16, epochs=1, verbose=0)  # two steps
    after_fit = [_version(k) for k in kernels]
    assert all(a >= b + 2 for a, b in zip(after_fit, after_set))
    opt = keras.optimizers.Adam(0.01)
    opt.apply_gradients([(ga.ones_like(kernels[0]), kernels[0])])
    assert _version(kernels[0]) > after_fit[0]


def test_predict_derives_each_kernel_once_and_matches_uncached_weights():
    model = _conv_model()
    x, _ = _data(64)
    first = model.predict(x[:8], verbose=0)
    made = [k._derived_copies["made"] for k in _kernels(model)]
    out = model.predict(x, batch_size=8, verbose=0)  # 8 more batches
    assert [k._derived_copies["made"] for k in _kernels(model)] == made
    np.testing.assert_allclose(out[:8], first, rtol=1e-5, atol=1e-6)

    # The same model on weights whose storages keep no copies (written through the buffer
    # protocol's writable view) computes the same numbers.
    plain = _conv_model()
    plain.set_weights(model.get_weights())
    for k in _kernels(plain):
        memoryview(k)  # exports a writable buffer: the storage stops caching
        assert not k._derived_copies["cacheable"]
    np.testing.assert_allclose(plain.predict(x, batch_size=8, verbose=0), out, rtol=1e-5, atol=1e-5)


def test_fit_with_kept_copies_matches_fit_without():
    x, y = _data(64)
    trained = []
    for keep in (True, False):
        model = _conv_model()
        if not keep:
            for w in model.weights:
                memoryview(w)
        history = model.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False)
        trained.append((history.history["loss"], model.get_weights()))
    np.testing.assert_allclose(trained[0][0], trained[1][0], rtol=1e-5)
    for a, b in zip(trained[0][1], trained[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_mixed_bfloat16_casts_each_kernel_once_per_version():
    mp.set_global_policy("mixed_bfloat16")
    try:
        model = _conv_model()
        x, y = _data(64)
        model.predict(x[:8], verbose=0)
        dense = model.layers[-1].weights[0]
        made = dense._derived_copies["made"]
        assert made >= 1
        model.predict(x, batch_size=8, verbose=0)
        assert dense._derived_copies["made"] == made  # eight batches, no new cast
        history = model.fit(x, y, batch_size=16, epochs=1, verbose=0)
        assert np.isfinite(history.history["loss"]).all()
        # Four steps: the first reads the weights predict cast; each later one reads weights the
        # previous step updated, and casts them once.
        assert dense._derived_copies["made"] == made + 3
    finally:
        mp.set_global_policy("float32")


def test_a_second_predict_reorders_no_convolution_weights():
    model = _conv_model()
    x, _ = _data(64)
    start = ga._C._conv_weights_reorders()
    model.predict(x[:8], verbose=0)
    first = ga._C._conv_weights_reorders() - start
    assert first <= 2  # at most one per convolution (none where oneDNN reads hwio directly)
    start = ga._C._conv_weights_reorders()
    model.predict(x, batch_size=8, verbose=0)  # eight batches
    assert ga._C._conv_weights_reorders() == start
    # A training step: each kernel reordered once per layout its primitives use, not per call.
    start = ga._C._conv_weights_reorders()
    y = np.zeros(16, dtype=np.int64)
    model.fit(x[:16], y, batch_size=16, epochs=1, verbose=0)
    assert ga._C._conv_weights_reorders() - start <= 2 * 2


# A conv model on the fake GPU (tests/cpp/fake_cuda_library.h), whose convolutions compute from
# the KRSC copy the CUDA backend would make: a stale copy gives other numbers. Graphs on and off,
# and the CPU, must train to the same weights.
GPU_CONV_PROBE = FAKE_COUNTERS + r"""
import json
import numpy as np
import gpuaccel as ga
from gpuaccel import keras

rng = np.random.default_rng(0)
x = rng.normal(size=(48, 6, 6, 2)).astype('float32')
y = rng.integers(0, 3, size=48)

# Inference between epochs caches copies of the weights as they are then; the replays of the
# next epoch update the weights without running host code, so the trainer's version bump after
# each replay is what makes the final inference re-derive them.
class InferBetweenEpochs(keras.callbacks.Callback):
    def __init__(self, xd):
        super().__init__()
        self.xd = xd

    def on_epoch_end(self, epoch, logs=None):
        self.model(self.xd, training=False).numpy()

def fit(device, jit_compile):
    ga.random.set_seed(2)
    with ga.device(device):
        xd = ga.convert_to_tensor(x)
        model = keras.Sequential([keras.Input((6, 6, 2)),
                                  keras.layers.Conv2D(4, 3, padding='same', activation='relu'),
                                  keras.layers.Conv2D(4, 3, activation='relu'),
                                  keras.layers.Flatten(), keras.layers.Dense(3)])
        model.compile(optimizer='adam', jit_compile=jit_compile,
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        copies = fake_counters.kernel_layout_copies
        model.fit(x, y, epochs=3, batch_size=16, verbose=0, shuffle=False,
                  callbacks=[InferBetweenEpochs(xd)])
        fit_copies = fake_counters.kernel_layout_copies - copies
        p1 = model(xd, training=False).numpy()
        copies = fake_counters.kernel_layout_copies
        p2 = model(xd, training=False).numpy()
        predict_copies = fake_counters.kernel_layout_copies - copies
    return {'weights': [w.tolist() for w in model.get_weights()], 'fit_copies': fit_copies,
            'predict_copies': predict_copies, 'same_predictions': bool(np.allclose(p1, p2)),
            'predictions': p2.tolist()}

print(json.dumps({'eager': fit('/GPU:0', False), 'graphs': fit('/GPU:0', True),
                  'cpu': fit('/CPU:0', False)}))
"""


def test_fake_gpu_keeps_krsc_kernels_per_version_and_graphs_redo_them():
    r = run_with_fake(GPU_CONV_PROBE)
    eager, graphs, cpu = r["eager"], r["graphs"], r["cpu"]
    # Nine steps; each kernel is copied once per weights version it is read at: the nine
    # forwards (each after an update but the first; backward-data reuses forward's copy, layer 1
    # has none) and the inference after the last epoch (the other epoch ends reuse theirs in the
    # next step's forward). Two convolutions: 2 * 10 copies.
    assert eager["fit_copies"] == 20, eager
    # Inference after training: weights unchanged, so the copies made by the first call serve
    # the second one entirely.
    assert eager["predict_copies"] == 0 and graphs["predict_copies"] == 0
    assert eager["same_predictions"] and graphs["same_predictions"]
    # A replayed graph re-derives KRSC every step (the copy is part of the graph): more copies.
    assert graphs["fit_copies"] > eager["fit_copies"]
    for other in (graphs, cpu):
        for a, b in zip(eager["weights"], other["weights"]):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(eager["predictions"], other["predictions"], rtol=1e-4, atol=1e-5)
