"""The row-gather kernels behind embeddings and tf.gather (backend ops gather_rows and
scatter_rows adding) against NumPy, TensorFlow and Keras: values and gradients with repeated ids,
vocabularies whose one-hot product would need tens of gigabytes, every dtype and non-finite
values gathered exactly, and a Keras text model's training step with a large vocabulary."""
import numpy as np
import pytest
import tensorflow as tf_real
import keras

import gpuaccel as tf
import gpuaccel.torch as torch
from gpuaccel import errors
from gpuaccel import keras as gkeras

RNG = np.random.default_rng(31)


def test_embedding_of_a_large_vocabulary_and_its_gradient_match_numpy():
    # 2,000,000 x 4 table, 6,000 ids: the one-hot product would hold 6,000 x 2,000,000 floats
    # (48 GB); the gather holds the ids' rows.
    vocabulary, width = 2_000_000, 4
    table = RNG.standard_normal((vocabulary, width)).astype(np.float32)
    ids = RNG.integers(0, vocabulary, size=(3, 2000))
    ids[0, :10] = 7  # repeated ids sum their gradients
    weights = RNG.standard_normal((3, 2000, width)).astype(np.float32)
    t = torch.tensor(table, requires_grad=True)
    rows = torch.nn.functional.embedding(torch.tensor(ids), t)
    np.testing.assert_array_equal(rows.detach().numpy(), table[ids])
    (rows * torch.tensor(weights)).sum().backward()
    want = np.zeros_like(table)
    np.add.at(want, ids.reshape(-1), weights.reshape(-1, width))
    touched = np.unique(ids)
    np.testing.assert_allclose(t.grad.numpy()[touched], want[touched], rtol=1e-6, atol=1e-6)
    assert not t.grad.numpy()[np.setdiff1d(np.arange(100), touched)].any()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8", "bool"])
def test_gather_is_exact_for_every_dtype(dtype):
    params = (RNG.standard_normal((6, 3, 2)) * 50).astype(dtype)
    indices = np.array([[5, 0], [2, 2]])
    for axis in (0, 1):
        got = tf.gather(tf.constant(params, dtype=dtype), indices % params.shape[axis], axis=axis)
        want = tf_real.gather(params, indices % params.shape[axis], axis=axis).numpy()
        assert got.dtype == want.dtype.name
        np.testing.assert_array_equal(got.numpy(), want)


def test_gather_keeps_inf_and_nan_where_they_are():
    params = np.array([[1.0, np.inf], [np.nan, -2.0], [3.0, -np.inf]], np.float32)
    got = tf.gather(tf.constant(params), [2, 0, 1, 2]).numpy()
    np.testing.assert_array_equal(got, tf_real.gather(params, [2, 0, 1, 2]).numpy())


def test_gather_gradient_sums_repeated_indices_as_tensorflow():
    params = RNG.standard_normal((5, 3)).astype(np.float32)
    indices = [4, 1, 4, 4, 0]
    weights = RNG.standard_normal((5, 3)).astype(np.float32)
    p_real = tf_real.Variable(params)
    with tf_real.GradientTape() as tape:
        loss = tf_real.reduce_sum(tf_real.gather(p_real, indices) * weights)
    want = tf_real.convert_to_tensor(tape.gradient(loss, p_real)).numpy()
    p = tf.Variable(params)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.gather(p, indices) * weights)
    np.testing.assert_allclose(tape.gradient(loss, p).numpy(), want, rtol=1e-6, atol=1e-7)


def test_ids_out_of_range_are_an_error_not_a_read_outside_the_table():
    table = torch.ones(4, 2)
    with pytest.raises(errors.InvalidArgumentError, match=r"\[0, 4\)"):
        torch.nn.functional.embedding(torch.tensor([1, 4]), table)
    with pytest.raises(errors.InvalidArgumentError):
        tf.gather(tf.constant(np.ones((4, 2), np.float32)), [-1])


def _text_model(k, vocabulary):
    inputs = k.Input((12,), dtype="int32")
    x = k.layers.Embedding(vocabulary, 8)(inputs)
    x = k.layers.GlobalAveragePooling1D()(x)
    outputs = k.layers.Dense(1)(x)
    return k.Model(inputs, outputs)


def test_a_large_vocabulary_text_model_trains_as_keras():
    # 300,000 words: the one-hot product of a 32 x 12 batch would be 4.6e8 floats per step.
    vocabulary = 300_000
    ids = RNG.integers(0, vocabulary, size=(32, 12)).astype(np.int32)
    ids[:, 0] = 123  # a word in every example
    y = RNG.standard_normal((32, 1)).astype(np.float32)
    ours, theirs = _text_model(gkeras, vocabulary), _text_model(keras, vocabulary)
    ours.set_weights(theirs.get_weights())
    for model in (ours, theirs):
        model.compile(optimizer=model_optimizer(model), loss="mse")
    ours_loss = ours.train_on_batch(ids, y)
    theirs_loss = theirs.train_on_batch(ids, y)
    assert float(np.asarray(ours_loss)) == pytest.approx(float(np.asarray(theirs_loss)), rel=1e-5)
    for got, want in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def model_optimizer(model):
    module = gkeras if isinstance(model, gkeras.Model) else keras
    return module.optimizers.SGD(learning_rate=0.5)


def test_torch_gather_and_scatter_add_match_pytorch_with_gradients():
    import torch_reference
    x = RNG.standard_normal((4, 5, 3))
    x[0, 0, 0], x[1, 2, 1] = np.inf, np.nan  # gathered exactly, never spread
    index = RNG.integers(0, 5, size=(3, 6, 2))  # smaller than x outside dim 1, as torch allows
    src = RNG.standard_normal((4, 5, 3))
    scatter_index = RNG.integers(0, 5, size=(4, 5, 3))
    ref = torch_reference.run(
        "t = torch.tensor(x, requires_grad=True); g = torch.gather(t, 1, torch.tensor(index))\n"
        "w = torch.tensor(np.linspace(-1, 1, g.numel()).reshape(g.shape))\n"
        "torch.nan_to_num(g * w, nan=0.0, posinf=0.0).sum().backward()\n"
        "out['g'] = g.detach().numpy(); out['dx'] = t.grad.numpy()\n"
        "s = torch.tensor(src, requires_grad=True)\n"
        "y = torch.zeros(4, 5, 3, dtype=torch.float64).scatter_add(1, torch.tensor(si), s)\n"
        "(y * torch.tensor(np.arange(60.).reshape(4, 5, 3))).sum().backward()\n"
        "out['y'] = y.detach().numpy(); out['ds'] = s.grad.numpy()",
        x=x, index=index, src=src, si=scatter_index)
    t = torch.tensor(x, dtype=torch.float64)
    t.requires_grad = True
    g = torch.gather(t, 1, torch.tensor(index))
    np.testing.assert_array_equal(g.detach().numpy(), ref["g"])
    w = torch.tensor(np.linspace(-1, 1, g.numel()).reshape(tuple(g.shape)), dtype=torch.float64)
    torch.nan_to_num(g * w, nan=0.0, posinf=0.0).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), ref["dx"], rtol=1e-12, atol=1e-15)
    s = torch.tensor(src, dtype=torch.float64)
    s.requires_grad = True
    y = torch.zeros(4, 5, 3, dtype=torch.float64).scatter_add(1, torch.tensor(scatter_index), s)
    (y * torch.tensor(np.arange(60.).reshape(4, 5, 3), dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), ref["y"], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(s.grad.numpy(), ref["ds"], rtol=1e-12, atol=1e-14)


def test_a_bfloat16_gradient_of_a_repeated_id_is_summed_in_float32():
    # 300 adds of bfloat16(0.01): rounded after each add they drift to 3.21875; summed in
    # float32 and rounded once they give bfloat16(3.003) = 3.0, as the matrix product did.
    import ml_dtypes
    table = torch.zeros(4, 2, dtype=torch.bfloat16)
    table.requires_grad = True
    rows = torch.nn.functional.embedding(torch.tensor([1] * 300 + [3]), table)
    (rows * 0.01).sum().backward()
    step = float(np.array(0.01, ml_dtypes.bfloat16))
    want = float(np.array(300 * step, np.float32).astype(ml_dtypes.bfloat16))
    assert table.grad.dtype == torch.bfloat16
    np.testing.assert_array_equal(table.grad.float().numpy()[:, 0], [0.0, want, 0.0, step])
