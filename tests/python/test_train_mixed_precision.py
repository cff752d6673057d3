"""The course's homework check: the seed CNN under mixed_bfloat16 reaches test accuracy within
one point of float32 on Fashion-MNIST (5 epochs, batch 64, Adam). Same data and seed for both;
reads Debian's dataset-fashion-mnist files (installed by .ci/setup)."""
import warnings

import numpy as np
import pytest

import gpuaccel
from gpuaccel import keras
from gpuaccel.demo import course_cnn


def _train_and_evaluate(policy, data):
    (x_train, y_train), (x_test, y_test) = data
    keras.mixed_precision.set_global_policy(policy)
    try:
        gpuaccel.random.set_seed(1234)
        model = course_cnn(keras)
        model.compile(optimizer="adam", metrics=["accuracy"],
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        model.fit(x_train, y_train, epochs=5, batch_size=64, verbose=0)
        assert model.layers[0].compute_dtype == ("bfloat16" if policy == "mixed_bfloat16"
                                                  else "float32")
        return model.evaluate(x_test, y_test, verbose=0)[1]
    finally:
        keras.mixed_precision.set_global_policy("float32")


@pytest.mark.slow
def test_mixed_bfloat16_matches_float32_accuracy_within_one_point():
    (x_train, y_train), (x_test, y_test) = keras.datasets.fashion_mnist.load_data()
    data = ((x_train[..., np.newaxis] / 255.0, y_train), (x_test[..., np.newaxis] / 255.0, y_test))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "no fast bfloat16 here" on AVX2 CPUs
        mixed = _train_and_evaluate("mixed_bfloat16", data)
    full = _train_and_evaluate("float32", data)
    assert full >= 0.89
    assert abs(mixed - full) <= 0.01, (mixed, full)

