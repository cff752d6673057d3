"""The course's Fashion-MNIST training run (the seed CNN, 5 epochs, batch 64, Adam,
SparseCategoricalCrossentropy(from_logits=True), seed 1234), shared by the tests that need it.
Training takes about a minute on two cores, and the float32 run is the same run for the
accuracy test and for the mixed-precision comparison, so each policy is trained once per pytest
process. Reads Debian's dataset-fashion-mnist files (installed by .ci/setup); no network."""
import functools
import warnings

import numpy as np

import gpuaccel
from gpuaccel import keras
from gpuaccel.demo import course_cnn


@functools.lru_cache(maxsize=None)
def fashion_mnist_scaled():
    (x_train, y_train), (x_test, y_test) = keras.datasets.fashion_mnist.load_data()
    return ((x_train[..., np.newaxis] / 255.0, y_train),
            (x_test[..., np.newaxis] / 255.0, y_test))


@functools.lru_cache(maxsize=None)
def course_cnn_run(policy="float32"):
    """(history dict, test loss, test accuracy, first layer's compute dtype) of one run."""
    (x_train, y_train), (x_test, y_test) = fashion_mnist_scaled()
    keras.mixed_precision.set_global_policy(policy)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "no fast bfloat16 here" on AVX2 CPUs
            gpuaccel.random.set_seed(1234)
            model = course_cnn(keras)  # the seed's Sequential, written out in gpuaccel/demo.py
            model.compile(optimizer="adam", metrics=["accuracy"],
                          loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
            history = model.fit(x_train, y_train, epochs=5, batch_size=64, verbose=0,
                                validation_data=(x_test, y_test))
            loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
        return history.history, loss, accuracy, model.layers[0].compute_dtype
    finally:
        keras.mixed_precision.set_global_policy("float32")
