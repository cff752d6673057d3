"""Skips tests marked ``@pytest.mark.gpu`` when gpuaccel sees no usable CUDA GPU (the marker is
declared in pyproject.toml), with gpuaccel's own reason, so the GPU tests run unchanged on Colab
and skip everywhere else."""
import pytest


def _no_gpu_reason():
    try:
        from gpuaccel import _C, cuda
        if cuda.is_available() and _C.gpu_provider_kind() == "cuda":
            return None
        return "needs a CUDA GPU: " + (_C.gpu_unavailable_reason() or "none is visible")
    except Exception as e:  # noqa: BLE001 -- an import problem shows up in the tests themselves
        return f"needs a CUDA GPU; gpuaccel could not tell ({type(e).__name__}: {e})"


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu_items:
        return
    reason = _no_gpu_reason()
    if reason is not None:
        for item in gpu_items:
            item.add_marker(pytest.mark.skip(reason=reason))
