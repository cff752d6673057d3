"""Mixed precision policies and layer dtypes (issue 6, items 1 and 3), checked against real
Keras 3: the same policies and models give the same compute/variable dtypes per layer and the
same output dtypes; integer inputs are not cast; weights stay float32 and receive float32
gradients; a mixed_bfloat16 model trains; the hardware warning is given once.

Every test leaves the global policy at float32 (the autouse fixture), so other test files see
the default."""
import warnings

import keras
import numpy as np
import pytest

import gpuaccel
from gpuaccel import keras as gk
from gpuaccel.keras import mixed_precision as mp

MIXED_NAMES = ["float32", "mixed_float16", "mixed_bfloat16", "float16", "bfloat16"]


@pytest.fixture(autouse=True)
def _float32_afterwards():
    mp._reset_warnings()
    yield
    mp.set_global_policy("float32")
    keras.mixed_precision.set_global_policy("float32")
    mp._reset_warnings()


def _quiet_set(module, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module.mixed_precision.set_global_policy(name)


# ---- policies ----

@pytest.mark.parametrize("name", MIXED_NAMES)
def test_policy_matches_keras(name):
    ours, theirs = mp.DTypePolicy(name), keras.mixed_precision.DTypePolicy(name)
    assert (ours.name, ours.compute_dtype, ours.variable_dtype) == \
        (theirs.name, theirs.compute_dtype, theirs.variable_dtype)
    assert repr(ours) == repr(theirs)
    assert ours.get_config() == theirs.get_config()
    assert mp.Policy is mp.DTypePolicy
    assert mp.DTypePolicy.from_config(ours.get_config()) == ours
    assert ours != mp.DTypePolicy("float32" if name != "float32" else "mixed_float16")


def test_global_policy_roundtrip_and_aliases():
    assert mp.global_policy().name == "float32" == keras.mixed_precision.global_policy().name
    _quiet_set(gpuaccel, "mixed_bfloat16")
    assert mp.global_policy().name == "mixed_bfloat16"
    assert mp.dtype_policy() is mp.global_policy()
    assert gpuaccel.mixed_precision is mp and gk.mixed_precision is mp
    mp.set_dtype_policy(mp.Policy("float32"))
    assert mp.global_policy() == mp.DTypePolicy("float32")
    # DTypePolicy() with no name takes the global policy's, as Keras.
    _quiet_set(gk, "mixed_float16")
    assert mp.DTypePolicy().name == "mixed_float16"


@pytest.mark.parametrize("bad", ["mixed_float32", "float31", "fp16", "mixed_int8"])
def test_invalid_names_raise_keras_value_error(bad):
    with pytest.raises(ValueError) as theirs:
        keras.mixed_precision.set_global_policy(bad)
    with pytest.raises(ValueError) as ours:
        mp.set_global_policy(bad)
    assert str(ours.value) == str(theirs.value)
    assert mp.global_policy().name == "float32"  # unchanged
    with pytest.raises(ValueError, match="Cannot convert"):
        gk.layers.Dense(2, dtype=bad)


def test_invalid_policy_types_raise_like_keras():
    with pytest.raises(ValueError) as theirs:
        keras.mixed_precision.set_global_policy(16)
    with pytest.raises(ValueError) as ours:
        mp.set_global_policy(16)
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(TypeError, match="'name' must be a string"):
        mp.DTypePolicy(16)
    with pytest.raises(ValueError, match="Cannot interpret `dtype` argument"):
        gk.layers.Dense(2, dtype=object())


def test_names_keras_accepts_but_gpuaccel_cannot_compute():
    keras.mixed_precision.DTypePolicy("float64")  # valid in Keras
    with pytest.raises(NotImplementedError, match="float32, float16 or bfloat16"):
        mp.DTypePolicy("float64")


# ---- layer dtype attributes against Keras ----

def _layer_specs(lib):
    L = lib.layers
    return [
        lambda **kw: L.Conv2D(4, 3, activation="relu", **kw),
        lambda **kw: L.BatchNormalization(**kw),
        lambda **kw: L.MaxPooling2D(**kw),
        lambda **kw: L.AveragePooling2D(1, **kw),
        lambda **kw: L.Dropout(0.25, **kw),
        lambda **kw: L.Flatten(**kw),
        lambda **kw: L.Dense(8, **kw),
        lambda **kw: L.LayerNormalization(**kw),
        lambda **kw: L.Dense(3, **kw),
    ]


def _cnn(lib, softmax_float32):
    layers = [spec() for spec in _layer_specs(lib)]
    if softmax_float32:
        layers.append(lib.layers.Activation("softmax", dtype="float32"))
    else:
        layers.append(lib.layers.Activation("softmax"))
    return lib.Sequential([lib.Input((6, 6, 2))] + layers)


def _dtype_name(dtype):
    return getattr(dtype, "name", str(dtype))


def _np(t):
    """A gpuaccel tensor's values as float32 NumPy (bfloat16 widened exactly)."""
    return np.asarray(t.detach().numpy(), dtype=np.float32)


@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16", "bfloat16"])
@pytest.mark.parametrize("softmax_float32", [True, False])
def test_layer_dtypes_and_outputs_match_keras(policy, softmax_float32):
    _quiet_set(keras, policy)
    _quiet_set(gk, policy)
    theirs, ours = _cnn(keras, softmax_float32), _cnn(gk, softmax_float32)
    assert len(theirs.layers) == len(ours.layers)
    for a, b in zip(theirs.layers, ours.layers):
        assert (b.dtype_policy.name, b.compute_dtype, b.variable_dtype, b.dtype) == \
            (a.dtype_policy.name, a.compute_dtype, a.variable_dtype, a.dtype), b.name
    x = np.random.default_rng(0).random((4, 6, 6, 2)).astype(np.float32)
    # Eager layer by layer: each output has the Keras dtype.
    ta, tb = x, x
    for a, b in zip(theirs.layers, ours.layers):
        ta, tb = a(ta), b(tb)
        assert _dtype_name(tb.dtype) == _dtype_name(ta.dtype), b.name
    # The whole model, and its symbolic output.
    assert _dtype_name(ours(x).dtype) == _dtype_name(theirs(x).dtype)
    # Functional API: the symbolic output has the same dtype as Keras's.
    sym = []
    for lib in (keras, gk):
        t = lib.Input((6, 6, 2))
        for spec in _layer_specs(lib):
            t = spec()(t)
        t = lib.layers.Activation("softmax", dtype="float32" if softmax_float32 else None)(t)
        sym.append(_dtype_name(t.dtype))
    assert sym[0] == sym[1]
    expected = "float32" if softmax_float32 else policy.replace("mixed_", "")
    assert _dtype_name(ours(x).dtype) == expected


def test_layer_dtype_argument_forms():
    L = gk.layers
    assert L.Dense(2).dtype_policy.name == "float32"
    _quiet_set(gk, "mixed_bfloat16")
    d = L.Dense(2)
    assert (d.compute_dtype, d.variable_dtype, d.dtype) == ("bfloat16", "float32", "float32")
    assert L.Dense(2, dtype=mp.DTypePolicy("mixed_float16")).compute_dtype == "float16"
    assert L.Dense(2, dtype=gpuaccel.float16).dtype_policy.name == "float16"
    assert L.Dense(2, dtype=np.float32).dtype_policy.name == "float32"
    assert L.Dense(2, dtype="float32").compute_dtype == "float32"
    assert L.Dense(2, dtype="mixed_float16").get_config()["dtype"] == "mixed_float16"
    # The global policy is read at construction: changing it later leaves existing layers alone.
    mp.set_global_policy("float32")
    assert d.compute_dtype == "bfloat16"
    assert _dtype_name(d(np.ones((1, 3), np.float32)).dtype) == "bfloat16"
    # Setting a layer's policy changes what its C++ layer computes in.
    d.dtype_policy = "float32"
    assert _dtype_name(d(np.ones((1, 3), np.float32)).dtype) == "float32"


def test_float32_layer_after_mixed_layers_casts_up():
    _quiet_set(gk, "mixed_bfloat16")
    hidden = gk.layers.Dense(5)
    head = gk.layers.Activation("softmax", dtype="float32")
    h = hidden(np.random.default_rng(1).random((3, 4)).astype(np.float32))
    assert _dtype_name(h.dtype) == "bfloat16"
    p = head(h)
    assert _dtype_name(p.dtype) == "float32"
    np.testing.assert_allclose(_np(p).sum(axis=-1), 1.0, rtol=1e-6)
    # Same numbers as Keras's softmax of the same bfloat16 values computed in float32.
    hf = _np(h)
    np.testing.assert_allclose(_np(p), keras.ops.softmax(hf).numpy(), rtol=1e-5, atol=1e-6)


def test_integer_inputs_are_not_cast():
    _quiet_set(keras, "mixed_bfloat16")
    _quiet_set(gk, "mixed_bfloat16")
    ids = np.array([[1, 4, 2], [0, 3, 3]], dtype=np.int32)
    ours, theirs = gk.layers.Embedding(5, 3), keras.layers.Embedding(5, 3)
    out = ours(ids)
    assert _dtype_name(out.dtype) == _dtype_name(theirs(ids).dtype) == "bfloat16"
    ours_f32 = gk.layers.Embedding(5, 3, dtype="float32")
    out32 = ours_f32(ids)
    # Rows gathered by the integer ids (a cast of the ids to bfloat16 would still be exact
    # for these small values, so check the lookup itself against the float32 table).
    table = ours.get_weights()[0]
    np.testing.assert_allclose(_np(out), table[ids], rtol=1e-2)
    np.testing.assert_array_equal(_np(out32), ours_f32.get_weights()[0][ids])
    # Large ids are exact only if they were never rounded to bfloat16 (8 bits of mantissa).
    big = gk.layers.Embedding(1000, 2)
    big_ids = np.array([[257, 999]], dtype=np.int64)
    np.testing.assert_allclose(_np(big(big_ids)),
                               big.get_weights()[0][big_ids], rtol=1e-2)
    # Functional API: an integer Input stays integer into the Embedding.
    inp = gk.Input((3,), dtype="int32")
    assert _dtype_name(ours(inp).dtype) == "bfloat16"


def test_weights_stay_float32_and_get_float32_gradients():
    _quiet_set(gk, "mixed_bfloat16")
    layer = gk.layers.Dense(4, activation="relu")
    x = np.random.default_rng(2).random((8, 3)).astype(np.float32)
    with gpuaccel.GradientTape() as tape:
        y = layer(x)
        loss = gpuaccel.math.reduce_sum(y)
    assert _dtype_name(y.dtype) == "bfloat16"
    assert [_dtype_name(w.dtype) for w in layer.weights] == ["float32", "float32"]
    grads = tape.gradient(loss, layer.trainable_weights)
    assert [_dtype_name(g.dtype) for g in grads] == ["float32", "float32"]
    # d(sum relu(xW+b))/dW = x^T relu'(z) at the layer's own z: which units are active is read
    # from its bfloat16 output (y > 0 exactly where z > 0). A float32 recomputation of z would
    # test the rounding instead: a pre-activation within bf16's error of 0 can change sign.
    active = _np(y) > 0
    np.testing.assert_allclose(_np(grads[0]), x.T @ active.astype(np.float32), rtol=0.05,
                               atol=0.05)
    np.testing.assert_allclose(_np(grads[1]), active.sum(axis=0), rtol=0.05, atol=0.05)


def test_mixed_bfloat16_sequential_trains_with_fit():
    _quiet_set(gk, "mixed_bfloat16")
    gpuaccel.random.set_seed(3)
    rng = np.random.default_rng(3)
    x = rng.normal(size=(256, 10)).astype(np.float32)
    y = (x[:, :3].sum(axis=1) > 0).astype(np.int32)
    model = gk.Sequential([gk.Input((10,)), gk.layers.Dense(32, activation="relu"),
                           gk.layers.Dense(2)])
    model.compile(optimizer="adam",
                  loss=gk.losses.SparseCategoricalCrossentropy(from_logits=True))
    before = [w.copy() for w in model.get_weights()]
    history = model.fit(x, y, epochs=8, batch_size=32, verbose=0)
    losses = history.history["loss"]
    assert all(np.isfinite(losses))
    assert losses[-1] < 0.8 * losses[0]
    assert _dtype_name(model(x[:4]).dtype) == "bfloat16"
    assert all(_dtype_name(w.dtype) == "float32" for w in model.weights)
    assert all(w.dtype == np.float32 for w in model.get_weights())
    assert any(not np.array_equal(a, b) for a, b in zip(before, model.get_weights()))


# ---- hardware truth ----

def test_supported_on_this_cpu():
    flags = gpuaccel._C.cpu_info()["flags"]
    truth = gpuaccel.mixed_precision.supported("CPU")
    assert truth["device"] == "CPU:0" and truth["float32"] is True
    assert truth["float16"] is False  # gpuaccel computes float16 in float32 on every CPU
    assert truth["bfloat16"] is bool(flags["amx_bf16"] or flags["avx512_bf16"])
    assert "float16" in truth["reason"] and "bfloat16" in truth["reason"]
    assert mp.supported("cpu:0") == truth
    if not gpuaccel._C.visible_devices("GPU"):
        assert mp.supported() == truth
    with pytest.raises(ValueError):
        mp.supported(3.5)


def _expect_warning():
    truth = mp.supported()
    return not truth["bfloat16"], not truth["float16"]


def test_warns_once_when_no_fast_path():
    warn_bf16, warn_fp16 = _expect_warning()
    if warn_bf16:
        with pytest.warns(UserWarning, match=r"Mixed precision compatibility check "
                                             r"\(mixed_bfloat16\).*only shown once"):
            mp.set_global_policy("mixed_bfloat16")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second warning would raise
        mp.set_global_policy("mixed_bfloat16")
        mp.set_global_policy("bfloat16")
        mp.set_global_policy("float32")
    if warn_fp16:
        with pytest.warns(UserWarning, match=r"\(mixed_float16\).*float16 is always computed "
                                             r"in float32"):
            mp.set_global_policy("mixed_float16")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mp.set_global_policy("mixed_float16")
    # float32 never warns, even after a reset.
    mp._reset_warnings()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mp.set_global_policy("float32")


class _FakeHardware:
    """Stands in for gpuaccel._C in mixed_precision: a CPU with these flags and these GPUs
    (name, (major, minor)), so the CPU and GPU rules can be checked on any machine."""

    def __init__(self, flags=None, gpus=()):
        self._flags = dict(gpuaccel._C.cpu_info()["flags"], **(flags or {}))
        self._gpus = list(gpus)
        self.parse_device_name = gpuaccel._C.parse_device_name

    def cpu_info(self):
        return {"flags": self._flags}

    def visible_devices(self, device_type=None):
        return [("GPU", i) for i in range(len(self._gpus))]

    def gpu_info(self, index):
        name, (major, minor) = self._gpus[index]
        return {"name": name, "major": major, "minor": minor}


NO_BF16 = {"amx_bf16": False, "avx512_bf16": False, "avx512f": False}


@pytest.mark.parametrize("flags,bf16_fast,text", [
    (NO_BF16, False, "no AVX-512"),
    (dict(NO_BF16, avx512f=True), False, "emulated with AVX-512"),
    (dict(NO_BF16, avx512f=True, avx512_bf16=True), True, "AVX512-BF16"),
    (dict(NO_BF16, avx512f=True, amx_bf16=True), True, "AMX"),
])
def test_cpu_rules(monkeypatch, flags, bf16_fast, text):
    monkeypatch.setattr(mp, "_C", _FakeHardware(flags))
    truth = mp.supported()
    assert truth["device"] == "CPU:0"
    assert (truth["float16"], truth["bfloat16"]) == (False, bf16_fast)
    assert text in truth["reason"]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        mp.set_global_policy("mixed_bfloat16")
    assert len(record) == (0 if bf16_fast else 1)
    if record:
        assert text in str(record[0].message) and "CPU:0" in str(record[0].message)
    with pytest.warns(UserWarning, match="float16 is always computed in float32"):
        mp.set_global_policy("mixed_float16")


@pytest.mark.parametrize("name,cc,fp16,bf16", [
    ("Tesla P100", (6, 0), False, False),
    ("Tesla V100", (7, 0), True, False),
    ("Tesla T4", (7, 5), True, False),
    ("A100", (8, 0), True, True),
    ("H100", (9, 0), True, True),
])
def test_gpu_rules(monkeypatch, name, cc, fp16, bf16):
    monkeypatch.setattr(mp, "_C", _FakeHardware(NO_BF16, gpus=[(name, cc)]))
    truth = mp.supported()  # a GPU is preferred over the CPU
    assert truth["device"] == "GPU:0" and truth["compute_capability"] == cc
    assert (truth["float16"], truth["bfloat16"]) == (fp16, bf16)
    assert name in truth["reason"]
    assert mp.supported("cuda:0") == truth == mp.supported("GPU:0")
    assert mp.supported("CPU")["device"] == "CPU:0"
    for policy, fast, need in (("mixed_float16", fp16, "7.0"), ("mixed_bfloat16", bf16, "8.0")):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            mp.set_global_policy(policy)
        assert len(record) == (0 if fast else 1), policy
        if record:
            text = str(record[0].message)
            assert f"compute capability of at least {need}" in text
            assert f"{cc[0]}.{cc[1]}" in text
