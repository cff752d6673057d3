import numpy as np

import gpuaccel as ga
from gpuaccel import keras

L = keras.layers



def _images(rng, n, shape=(8, 8, 2)):
    return rng.normal(size=(n, *shape)).astype("float32")


def build(family):
    """(model, x, y) for ``family``, built on the device of the enclosing scope."""
    rng = np.random.default_rng(7)
    n = 32
    y = rng.normal(size=(n, 1)).astype("float32")
    if family == "core":
        x = rng.normal(size=(n, 6)).astype("float32")
        layers = [keras.Input((6,)), L.Dense(8, activation="relu"), L.Activation("tanh"), L.Dense(1)]
    elif family == "conv":
        x = _images(rng, n)
        layers = [keras.Input((8, 8, 2)), L.Conv2D(4, 3, activation="relu"), L.Flatten(), L.Dense(1)]
    elif family == "transposed":
        x = _images(rng, n, (4, 4, 2))
        layers = [keras.Input((4, 4, 2)), L.Conv2DTranspose(3, 3, strides=2, padding="same"),
                  L.GlobalAveragePooling2D(), L.Dense(1)]
    elif family == "depthwise_separable":
        x = _images(rng, n)
        layers = [keras.Input((8, 8, 2)), L.DepthwiseConv2D(3, depth_multiplier=2),
                  L.SeparableConv2D(4, 3), L.GlobalAveragePooling2D(), L.Dense(1)]
    elif family == "pooling":
        x = _images(rng, n)
        layers = [keras.Input((8, 8, 2)), L.Conv2D(4, 3, padding="same"), L.MaxPooling2D(),
                  L.AveragePooling2D(2), L.GlobalMaxPooling2D(), L.Dense(1)]
    elif family == "normalization":
        x = rng.normal(size=(n, 6)).astype("float32")
        layers = [keras.Input((6,)), L.Dense(8), L.BatchNormalization(), L.LayerNormalization(),
                  L.Dense(1)]
    elif family == "regularization_reshape":
        x = rng.normal(size=(n, 12)).astype("float32")
        layers = [keras.Input((12,)), L.Dense(12, kernel_regularizer="l2"), L.Dropout(0.25),
                  L.Reshape((3, 4)), L.Flatten(), L.Dense(1)]
    elif family == "embedding":
        x = rng.integers(0, 20, size=(n, 5)).astype("int64")
        layers = [keras.Input((5,), dtype="int64"), L.Embedding(20, 4),
                  L.GlobalAveragePooling1D(), L.Dense(1)]
    elif family == "attention":
        x = rng.normal(size=(n, 5, 6)).astype("float32")
        inputs = keras.Input((5, 6))
        h = L.MultiHeadAttention(num_heads=2, key_dim=4)(inputs, inputs)
        return keras.Model(inputs, L.Dense(1)(L.GlobalAveragePooling1D()(h))), x, y
    elif family == "recurrent":
        x = rng.normal(size=(n, 5, 3)).astype("float32")
        layers = [keras.Input((5, 3)), L.LSTM(4, return_sequences=True), L.GRU(3), L.Dense(1)]
    elif family == "merging":
        a, b = (rng.normal(size=(n, 4)).astype("float32") for _ in range(2))
        ia, ib = keras.Input((4,)), keras.Input((4,))
        merged = L.Concatenate()([L.Add()([ia, ib]), L.Multiply()([ia, ib])])
        return keras.Model([ia, ib], L.Dense(1)(merged)), [a, b], y
    elif family == "preprocessing":
        x = (rng.normal(size=(n, 6)) * 5 + 3).astype("float32")
        norm = L.Normalization()
        norm.adapt(x)
        layers = [keras.Input((6,)), norm, L.Rescaling(0.5, offset=0.1), L.Dense(1)]
    else:
        raise ValueError(family)
    return keras.Sequential(layers), x, y


FAMILIES = ["core", "conv", "transposed", "depthwise_separable", "pooling", "normalization",
            "regularization_reshape", "merging", "embedding", "attention", "recurrent",
            "preprocessing"]



def fit(family, device):
    """(per-epoch losses, final weights as lists) of two epochs of SGD on ``device``: plain
    SGD, so a numerical difference between devices stays as small in the weights as it is
    in the gradients (Adam's normalised steps would magnify it)."""
    ga.random.set_seed(3)
    with ga.device(device):
        model, x, y = build(family)
        model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.05), loss="mse")
        history = model.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0)
    return history.history["loss"], [np.asarray(w).tolist() for w in model.get_weights()]
