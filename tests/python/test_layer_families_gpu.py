"""Every layer family trains on a GPU as on the CPU: a small model of each (see
layer_family_models.py) is fitted on GPU 0 and on the CPU with the same seed and data, and the
losses and weights must agree. On this machine the GPU is the fake CUDA library's (its kernels
are the CPU backend's, so the runs agree to float rounding and any difference is the device
path: placement, uploads, copies between devices); marked ``gpu``, on a real GPU (cuBLAS and
cuDNN kernels, so within a tolerance)."""
import pathlib

import numpy as np
import pytest

from layer_family_models import FAMILIES, fit
from test_library_backend import run_with_fake

FAKE_GPU_PROBE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])  # this folder, for layer_family_models
import gpuaccel as ga
from layer_family_models import FAMILIES, fit
# measured oneDNN implementation choices could differ between the two runs
ga.config.experimental.enable_op_determinism()
print(json.dumps({family: {"gpu": fit(family, "/GPU:0"), "cpu": fit(family, "/CPU:0")}
                  for family in FAMILIES}))
"""


def _assert_same_training(gpu, cpu, rtol, atol):
    (gpu_losses, gpu_weights), (cpu_losses, cpu_weights) = gpu, cpu
    assert np.all(np.isfinite(cpu_losses)) and cpu_losses[1] != cpu_losses[0]  # it trained
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=rtol, atol=atol)
    assert len(gpu_weights) == len(cpu_weights) > 0
    for g, c in zip(gpu_weights, cpu_weights):
        np.testing.assert_allclose(np.asarray(g), np.asarray(c), rtol=rtol, atol=atol)


@pytest.fixture(scope="module")
def fake_gpu_runs():
    return run_with_fake(FAKE_GPU_PROBE, args=[str(pathlib.Path(__file__).resolve().parent)])


@pytest.mark.parametrize("family", FAMILIES)
def test_family_trains_on_the_fake_gpu_as_on_the_cpu(fake_gpu_runs, family):
    runs = fake_gpu_runs[family]
    _assert_same_training(runs["gpu"], runs["cpu"], rtol=1e-5, atol=1e-7)


@pytest.mark.gpu
@pytest.mark.parametrize("family", FAMILIES)
def test_family_trains_on_the_gpu_as_on_the_cpu(family):
    _assert_same_training(fit(family, "/GPU:0"), fit(family, "/CPU:0"), rtol=2e-3, atol=2e-4)
