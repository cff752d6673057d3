"""What the distribute tests run in this process and in worker processes alike: the seed
article's two programs (tensorflow imports changed to gpuaccel, nothing else), a small random
MNIST in place of the real one, and the model and steps of the "two replicas equal one" check.
"""
import numpy as np

import gpuaccel as tf
from gpuaccel import keras

# The seed article's programs (seeds/003: "Entrenamiento multi-GPU" and "Entrenamiento
# distribuido"), preceded by its data preparation, with only the imports changed.
_PREAMBLE = """
import gpuaccel as tf
from gpuaccel.keras.datasets import mnist
from gpuaccel.keras.models import Sequential
from gpuaccel.keras.layers import Conv2D, MaxPooling2D, Flatten, Dense
(x_train, y_train), (x_test, y_test) = mnist.load_data()
x_train, x_test = x_train / 255.0, x_test / 255.0
x_train = x_train[..., tf.newaxis]
x_test = x_test[..., tf.newaxis]
"""
_MODEL = """
model = Sequential([
Conv2D(32, (3, 3), activation='relu', input_shape=(28, 28, 1)),
MaxPooling2D((2, 2)),
Conv2D(64, (3, 3), activation='relu'),
MaxPooling2D((2, 2)),
Conv2D(64, (3, 3), activation='relu'),
Flatten(),
Dense(64, activation='relu'),
Dense(10)
])
model.compile(optimizer='adam',
loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
metrics=['accuracy'])
"""
_FIT = "model.fit(x_train, y_train, epochs=5, batch_size=64, validation_data=(x_test, y_test))\n"


def _indent(text):
    return "".join("    " + line + "\n" for line in text.strip().splitlines())


SEED_MIRRORED = (_PREAMBLE + "strategy = tf.distribute.MirroredStrategy()\n"
                 "with strategy.scope():\n" + _indent(_MODEL) + _FIT)
SEED_MULTI_WORKER = (_PREAMBLE + "# Estrategia de entrenamiento distribuido\n"
                     "strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()\n"
                     "with strategy.scope():\n# Definición del modelo\n" + _indent(_MODEL)
                     + "# Entrenamiento del modelo\n" + _FIT)


def patch_mnist(mnist_module, train=128, test=32):
    """Replaces ``load_data`` by a small random set of MNIST's shapes and dtypes (the same in
    every process)."""
    def load_data(path="mnist.npz"):
        rng = np.random.default_rng(0)
        return ((rng.integers(0, 256, (train, 28, 28), dtype=np.uint8),
                 rng.integers(0, 10, train, dtype=np.uint8)),
                (rng.integers(0, 256, (test, 28, 28), dtype=np.uint8),
                 rng.integers(0, 10, test, dtype=np.uint8)))
    mnist_module.load_data = load_data


def equivalence_data():
    rng = np.random.default_rng(1)
    return rng.standard_normal((640, 6, 6, 1)).astype(np.float32), rng.integers(0, 4, 640)


def equivalence_model(optimizer):
    """A small CNN with fixed initial weights (the same in every process)."""
    model = keras.Sequential([
        keras.Input((6, 6, 1)),
        keras.layers.Conv2D(4, 3, activation="relu"),
        keras.layers.Flatten(),
        keras.layers.Dense(8, activation="relu"),
        keras.layers.Dense(4),
    ])
    rng = np.random.default_rng(2)
    model.set_weights([0.3 * rng.standard_normal(w.shape).astype(np.float32)
                       for w in model.get_weights()])
    opt = keras.optimizers.SGD(0.1) if optimizer == "sgd" else keras.optimizers.Adam(0.01)
    model.compile(optimizer=opt, metrics=["accuracy"],
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def train_ten_steps(model):
    """10 steps of a global batch of 64, in order; returns the history."""
    x, y = equivalence_data()
    return model.fit(x, y, batch_size=64, epochs=1, shuffle=False, verbose=0).history


def reference_weights(optimizer):
    """One replica on the whole global batch: what every distributed run must reproduce."""
    with tf.device("/CPU:0"):
        model = equivalence_model(optimizer)
        history = train_ten_steps(model)
    return model.get_weights(), history
