"""Small end-to-end programs in the style of the tutorials a course points students to (our own
code, with only the import changed from tensorflow/torch/keras), each checked against NumPy or
real Keras: TensorFlow's expert quickstart (a subclassed model trained with a GradientTape loop
and with fit), the "Use a GPU" guide, the Keras simple MNIST convnet, the Keras mixed
precision guide, and PyTorch's tensors tutorial. Tiny data and one epoch keep each fast."""
import numpy as np
import pytest

import gpuaccel as tf
import gpuaccel.torch as torch
from gpuaccel import keras

real_keras = pytest.importorskip("keras")


def images(n=32, seed=0, size=10):
    rng = np.random.default_rng(seed)
    return rng.random((n, size, size, 1)).astype(np.float32), rng.integers(0, 10, n)


def _expert_model(lib):
    class MyModel(lib.Model):
        def __init__(self):
            super().__init__()
            self.conv1 = lib.layers.Conv2D(4, 3, activation="relu")
            self.flatten = lib.layers.Flatten()
            self.d1 = lib.layers.Dense(16, activation="relu")
            self.d2 = lib.layers.Dense(10)

        def call(self, x, training=False):
            x = self.conv1(x)
            x = self.flatten(x)
            x = self.d1(x)
            return self.d2(x)

    return MyModel()


def test_expert_quickstart_gradient_tape_loop_matches_keras():
    x, y = images()
    model, reference = _expert_model(keras), _expert_model(real_keras)
    model(x[:1])
    reference(x[:1])
    reference.set_weights(model.get_weights())
    loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = keras.optimizers.SGD(learning_rate=0.1)
    train_loss = keras.metrics.Mean(name="train_loss")
    train_accuracy = keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")

    @tf.function
    def train_step(batch, labels):
        with tf.GradientTape() as tape:
            predictions = model(batch, training=True)
            loss = loss_object(labels, predictions)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        train_loss(loss)
        train_accuracy(labels, predictions)

    ref_loss = real_keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    ref_optimizer = real_keras.optimizers.SGD(learning_rate=0.1)
    import tensorflow as real_tf
    losses = []
    for start in range(0, 32, 8):
        batch, labels = x[start:start + 8], y[start:start + 8]
        train_step(batch, labels)
        with real_tf.GradientTape() as tape:
            loss = ref_loss(labels, reference(batch, training=True))
        grads = tape.gradient(loss, reference.trainable_variables)
        ref_optimizer.apply_gradients(zip(grads, reference.trainable_variables))
        losses.append(float(loss))
    for ours, theirs in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(ours, theirs, rtol=1e-3, atol=1e-5)
    assert float(train_loss.result()) == pytest.approx(np.mean(losses), rel=1e-4)
    assert 0.0 <= float(train_accuracy.result()) <= 1.0


def test_subclassed_model_trains_with_fit_and_python_lists():
    x, y = images(16)
    model = _expert_model(keras)
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(
        from_logits=True), metrics=["accuracy"])
    history = model.fit(x.tolist(), y.tolist(), epochs=2, batch_size=8, verbose=0)
    assert len(history.history["loss"]) == 2
    assert [type(l).__name__ for l in model.layers] == ["Conv2D", "Flatten", "Dense", "Dense"]
    assert model.predict(x, verbose=0).shape == (16, 10)


def test_subclassed_call_with_raw_ops_is_traced_once():
    class Raw(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(2)

        def call(self, x):
            return self.dense(x) * 2.0 + 1.0

    model = Raw()
    x = np.ones((4, 3), np.float32)
    first, second = model(x).numpy(), model(x).numpy()
    np.testing.assert_allclose(first, tf.stop_gradient(model.dense(x)).numpy() * 2.0 + 1.0, rtol=1e-6)
    np.testing.assert_allclose(second, first)
    assert model._call_layer_cpp.python_calls == 1


def test_use_a_gpu_guide_placement_and_matmul():
    print("Num GPUs Available: ", len(tf.config.list_physical_devices("GPU")))
    with tf.device("/CPU:0"):
        a = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        b = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        c = tf.matmul(a, b)
        d = tf.matmul(a, b, transpose_a=True, transpose_b=True)
    np.testing.assert_allclose(c.numpy(), a.numpy() @ b.numpy())
    np.testing.assert_allclose(d.numpy(), a.numpy().T @ b.numpy().T)
    assert "CPU" in c.device.name.upper()
    total = tf.math.reduce_sum(tf.random.normal([100, 100]))
    assert np.isfinite(float(total))


def _convnet(lib, dropout):
    layers = [lib.Input((10, 10, 1)), lib.layers.Conv2D(4, 3, activation="relu"),
              lib.layers.MaxPooling2D(2), lib.layers.Flatten()]
    if dropout:
        layers.append(lib.layers.Dropout(0.5))
    layers.append(lib.layers.Dense(10, activation="softmax"))
    return lib.Sequential(layers)


def test_simple_mnist_convnet_one_epoch_matches_keras():
    x, labels = images(48)
    y = keras.utils.to_categorical(labels, 10)
    np.testing.assert_array_equal(y, real_keras.utils.to_categorical(labels, 10))
    model, reference = _convnet(keras, False), _convnet(real_keras, False)
    reference.set_weights(model.get_weights())
    for m in (model, reference):
        m.compile(loss="categorical_crossentropy", optimizer=m_sgd(m), metrics=["accuracy"])
    model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
    reference.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
    for ours, theirs in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(ours, theirs, rtol=1e-3, atol=1e-5)
    with_dropout = _convnet(keras, True)
    with_dropout.compile(loss="categorical_crossentropy", optimizer="adam",
                         metrics=["accuracy"])
    history = with_dropout.fit(x, y, batch_size=16, epochs=1, validation_split=0.25, verbose=0)
    assert set(history.history) >= {"loss", "accuracy", "val_loss", "val_accuracy"}


def m_sgd(model):
    lib = keras if type(model).__module__.startswith("gpuaccel") else real_keras
    return lib.optimizers.SGD(learning_rate=0.05)


def test_mixed_precision_guide_softmax_in_float32():
    x, y = images(16)
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        inputs = keras.Input((10, 10, 1))
        hidden = keras.layers.Flatten()(inputs)
        dense = keras.layers.Dense(8, activation="relu")
        hidden = dense(hidden)
        logits = keras.layers.Dense(10)(hidden)
        outputs = keras.layers.Activation("softmax", dtype="float32")(logits)
        model = keras.Model(inputs, outputs)
        assert dense.compute_dtype == "float16" and dense.variable_dtype == "float32"
        model.compile(loss="sparse_categorical_crossentropy", optimizer="adam")
        model.fit(x, y, batch_size=8, epochs=1, verbose=0)
        predictions = model.predict(x, verbose=0)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert predictions.dtype == np.float32
    np.testing.assert_allclose(predictions.sum(1), np.ones(16), rtol=1e-3)
    w = model.get_weights()  # the same network in float64 NumPy
    flat = x.reshape(16, -1)
    hidden_np = np.maximum(flat @ w[0] + w[1], 0)
    z = hidden_np @ w[2] + w[3]
    expected = np.exp(z - z.max(1, keepdims=True))
    expected /= expected.sum(1, keepdims=True)
    np.testing.assert_allclose(predictions, expected, atol=2e-2)


def test_pytorch_tensors_tutorial_operations():
    data = [[1, 2], [3, 4]]
    x_data = torch.tensor(data)
    np_array = np.array(data)
    x_np = torch.from_numpy(np_array)
    np.add(np_array, 1, out=np_array)  # from_numpy shares memory
    np.testing.assert_array_equal(x_np.numpy(), [[2, 3], [4, 5]])
    x_ones = torch.ones_like(x_data)
    x_rand = torch.rand_like(x_data, dtype=torch.float)
    assert x_ones.dtype == torch.int64 and x_rand.dtype == torch.float
    shape = (2, 3)
    assert tuple(torch.rand(shape).shape) == shape and tuple(torch.zeros(shape).shape) == shape
    tensor = torch.ones(4, 4)
    assert tensor.dtype == torch.float32 and "cpu" in tensor.device.name.lower()
    tensor[:, 1] = 0
    t1 = torch.cat([tensor, tensor, tensor], dim=1)
    expected = np.ones((4, 4), np.float32)
    expected[:, 1] = 0
    np.testing.assert_array_equal(t1.numpy(), np.concatenate([expected] * 3, 1))
    y1 = tensor @ tensor.T
    y2 = tensor.matmul(tensor.T)
    y3 = torch.rand_like(y1)
    torch.matmul(tensor, tensor.T, out=y3)
    for y in (y1, y2, y3):
        np.testing.assert_array_equal(y.numpy(), expected @ expected.T)
    z3 = torch.rand_like(tensor)
    torch.mul(tensor, tensor, out=z3)
    np.testing.assert_array_equal(z3.numpy(), expected * expected)
    agg = tensor.sum()
    assert agg.item() == 12.0
    tensor.add_(5)
    np.testing.assert_array_equal(tensor.numpy(), expected + 5)
