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
