"""``gpuaccel.testing``: what an instructor needs to grade course work with pytest.

- :func:`assert_close_to_keras`: a gpuaccel model computes what its real Keras twin computes;
- :func:`measure_epoch` and :func:`assert_speedup`: wall-clock time per epoch, and the
  speedup a homework must reach;
- :mod:`gpuaccel.testing.homework171`: class 171's homework (baseline, mixed precision +
  memory growth, the bottleneck named, a fix, >= 1.5x), graded criterion by criterion;
- :mod:`gpuaccel.testing.notebook`: run a notebook in a real Jupyter kernel;
- the pytest plugin (:mod:`gpuaccel.testing.plugin`, loaded automatically once gpuaccel is
  installed): markers ``gpu`` (skipped without a GPU, with the reason) and ``slow``, and the
  ``homework171_submission`` fixture.

``python -m gpuaccel.grade notebook.ipynb`` executes a student's notebook and prints the rubric.
See ``docs/grading/README.md``.
"""
from ._child_env import child_environment
from ._compare import assert_close_to_keras
from ._speed import EpochTiming, assert_speedup, measure_epoch

__all__ = ["assert_close_to_keras", "assert_speedup", "measure_epoch", "EpochTiming",
           "child_environment"]
