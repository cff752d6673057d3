"""The course's homework check: the seed CNN under mixed_bfloat16 reaches test accuracy within
one point of float32 on Fashion-MNIST (5 epochs, batch 64, Adam). Same data and seed for both;
the runs are in course_training.py (the float32 one is shared with the accuracy test)."""
import pytest

from course_training import course_cnn_run


@pytest.mark.slow
def test_mixed_bfloat16_matches_float32_accuracy_within_one_point():
    _, _, mixed, mixed_dtype = course_cnn_run("mixed_bfloat16")
    _, _, full, full_dtype = course_cnn_run("float32")
    assert (mixed_dtype, full_dtype) == ("bfloat16", "float32")
    assert full >= 0.89
    assert abs(mixed - full) <= 0.01, (mixed, full)
