"""Example instructor tests for class 171's homework: one pytest test per rubric criterion.

    pytest docs/grading/test_homework171.py --submission entregas/ana.ipynb
    pytest docs/grading/test_homework171.py --submission entregas/ana_informe.json

``--submission`` (or GPUACCEL_SUBMISSION) comes from gpuaccel's pytest plugin, which pytest loads
by itself once gpuaccel is installed; so does the ``homework171_submission`` fixture: the rubric
of the submission, a notebook being executed once, in a temporary folder. A failing test prints
the criterion's Spanish and English message, the same text the student sees.

The last two tests show the helpers for writing your own checks (``gpuaccel.testing``).
"""
import time

import numpy as np
import pytest

from gpuaccel.testing import assert_close_to_keras, assert_speedup, homework171, measure_epoch


def test_notebook_runs_top_to_bottom(homework171_submission):
    # A saved report (.json) has no such line: nothing was executed.
    for result in homework171_submission.results:
        if result.key == "notebook":
            assert result.passed, result.message


@pytest.mark.parametrize("criterion", homework171.CRITERIA)
def test_homework171(homework171_submission, criterion):
    result = homework171_submission[criterion]
    assert result.passed, result.message


def test_course_cnn_computes_what_keras_computes():
    import keras  # the real one (tensorflow-cpu or keras from PyPI)
    from gpuaccel.demo import course_cnn
    x = np.random.default_rng(0).random((8, 28, 28, 1), dtype=np.float32)
    assert_close_to_keras(course_cnn(), course_cnn(keras), x, rtol=1e-4)


@pytest.mark.slow
def test_prefetch_makes_a_slow_pipeline_faster():
    import gpuaccel
    from gpuaccel import keras

    def slow_load(images, labels):
        time.sleep(0.05)  # reading and decoding a batch
        return images, labels

    x = np.random.default_rng(0).random((64 * 16, 20), dtype=np.float32)
    y = np.arange(len(x)) % 10
    model = keras.Sequential([keras.layers.Dense(32, activation="relu", input_shape=(20,)),
                              keras.layers.Dense(10)])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    batches = gpuaccel.data.Dataset.from_tensor_slices((x, y)).batch(64)
    serial = measure_epoch(model, batches.map(slow_load), warmup_epochs=1)
    overlapped = measure_epoch(model, batches.map(slow_load, num_parallel_calls=8)
                               .prefetch(gpuaccel.data.AUTOTUNE), warmup_epochs=1)
    assert_speedup(serial, overlapped, at_least=1.5)
