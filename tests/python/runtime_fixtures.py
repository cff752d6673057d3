"""Fixtures that give each test a fresh runtime: device configuration is process-global and
freezes once the runtime starts, so tests that configure devices start from a clean registry
(optionally over simulated GPUs, which report properties but run nothing)."""
import pytest

import gpuaccel
from gpuaccel.testing import child_environment

T4 = {"name": "Tesla T4", "total_memory": 15 * 2**30, "major": 7, "minor": 5,
      "multi_processor_count": 40}


# Environment for a child Python that imports the same gpuaccel as this process.
package_environment = child_environment


def reset_runtime(simulated_gpus=None):
    gpuaccel._C._reset_runtime_for_testing(simulated_gpus)


@pytest.fixture
def fresh_runtime():
    """A fresh runtime with the machine's real devices."""
    reset_runtime()
    yield
    reset_runtime()


@pytest.fixture
def two_simulated_gpus(fresh_runtime):
    """A fresh runtime that sees two simulated Tesla T4s (after, and so not undone by, the
    plain fresh_runtime a module may also use)."""
    reset_runtime([T4, dict(T4)])
    yield
    reset_runtime()
