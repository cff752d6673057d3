"""The course's program end to end: the seed CNN trained on Fashion-MNIST (5 epochs, batch 64,
Adam, SparseCategoricalCrossentropy(from_logits=True)) reaches at least 89% test accuracy.
Reads Debian's dataset-fashion-mnist files (installed by .ci/setup); no network."""
import numpy as np
import pytest

import gpuaccel
from gpuaccel import keras
from gpuaccel.demo import course_cnn


@pytest.mark.slow
def test_seed_cnn_reaches_89_percent_on_fashion_mnist():
    gpuaccel.random.set_seed(1234)
    (x_train, y_train), (x_test, y_test) = keras.datasets.fashion_mnist.load_data()
    x_train, x_test = x_train / 255.0, x_test / 255.0
    x_train, x_test = x_train[..., np.newaxis], x_test[..., np.newaxis]
    model = course_cnn(keras)  # the seed's Sequential, written out in gpuaccel/demo.py
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(x_train, y_train, epochs=5, batch_size=64, verbose=0,
                        validation_data=(x_test, y_test))
    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
    assert accuracy >= 0.89, history.history
    assert history.history["val_accuracy"][-1] == pytest.approx(accuracy, abs=1e-6)
    assert history.history["loss"][-1] < history.history["loss"][0]
