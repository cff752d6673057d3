"""The course's program end to end: the seed CNN trained on Fashion-MNIST (5 epochs, batch 64,
Adam, SparseCategoricalCrossentropy(from_logits=True)) reaches at least 89% test accuracy.
The run itself is in course_training.py (shared with the mixed-precision test)."""
import pytest

from course_training import course_cnn_run


@pytest.mark.slow
def test_seed_cnn_reaches_89_percent_on_fashion_mnist():
    history, _, accuracy, _ = course_cnn_run("float32")
    assert accuracy >= 0.89, history
    assert history["val_accuracy"][-1] == pytest.approx(accuracy, abs=1e-6)
    assert history["loss"][-1] < history["loss"][0]
