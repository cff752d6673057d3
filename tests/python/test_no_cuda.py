"""The no-CUDA path, in fresh interpreters: importing gpuaccel never needs CUDA, and with the
backend library missing, or no NVIDIA driver (as on this machine), the GPU list is empty and the
reason names the cause."""
import json
import os
import subprocess
import sys

import pytest

import gpuaccel
from gpuaccel import _C

PROBE = r"""
import json, gpuaccel
from gpuaccel import _C, config, cuda
maps = open('/proc/self/maps').read()
loaded_at_import = 'libgpuaccel_cuda' in maps
result = {
    'loaded_at_import': loaded_at_import,
    'gpus': [list(d) for d in _C.physical_devices('GPU')],
    'tf_gpus': [d.name for d in config.list_physical_devices('GPU')],
    'is_available': cuda.is_available(),
    'device_count': cuda.device_count(),
    'reason': _C.gpu_unavailable_reason(),
    'status': _C.cuda_backend_status(),
}
try:
    cuda.get_device_name(0)
    result['error'] = None
except RuntimeError as e:
    result['error'] = str(e)
result['loaded_after_query'] = 'libgpuaccel_cuda' in open('/proc/self/maps').read()
print(json.dumps(result))
"""


def child_env(**changes):
    """This process's environment with `changes` (None: unset), importing the same gpuaccel."""
    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(gpuaccel.__file__))
    env["PYTHONPATH"] = os.pathsep.join(
        [package_root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def run_probe(tmp_path, **env_changes):
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         cwd=tmp_path, env=child_env(**env_changes), timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_missing_backend_library(tmp_path):
    path = "/nonexistent/libgpuaccel_cuda.so"
    r = run_probe(tmp_path, GPUACCEL_CUDA_BACKEND=path)
    assert r["gpus"] == [] and r["tf_gpus"] == []
    assert r["is_available"] is False and r["device_count"] == 0
    assert path in r["reason"]
    assert r["status"]["problem"] == "library_missing"
    assert r["status"]["loaded"] is False
    assert r["error"] and path in r["error"]


def test_import_never_loads_the_cuda_backend(tmp_path):
    r = run_probe(tmp_path, GPUACCEL_CUDA_BACKEND=None)
    assert r["loaded_at_import"] is False
    # ...and the check above can see it: asking for GPUs is what loads it.
    assert r["loaded_after_query"] is r["status"]["loaded"]


def test_no_driver_as_it_is_on_this_machine(tmp_path):
    r = run_probe(tmp_path, GPUACCEL_CUDA_BACKEND=None, CUDA_VISIBLE_DEVICES=None)
    status = r["status"]
    if not status["built"]:
        assert status["problem"] == "not_built"
        assert "without its CUDA backend" in r["reason"]
        return
    if status["problem"] != "no_driver":
        pytest.skip(f"this machine's CUDA problem is {status['problem']!r}")
    assert status["loaded"] is True  # the backend itself loads without a driver
    assert r["gpus"] == [] and r["is_available"] is False
    assert "Could not find cuda drivers" in r["reason"]
    assert "libcuda.so.1" in r["reason"]
    assert status["driver_version"] is None
    assert "Could not find cuda drivers" in r["error"]


def test_info_runs_without_the_backend(tmp_path):
    env = child_env(GPUACCEL_CUDA_BACKEND="/nonexistent/libgpuaccel_cuda.so")
    out = subprocess.run([sys.executable, "-m", "gpuaccel.info"], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "[library_missing]" in out.stdout
    assert "/nonexistent/libgpuaccel_cuda.so" in out.stdout


def _build_cuda_version():
    """The CUDA this gpuaccel's backend was built with, as the APIs encode it (13000)."""
    major, minor = (_C.build_info()["cuda"] or "13.0").split(".")
    return int(major) * 1000 + int(minor) * 10


def test_probe_distinguishes_a_file_that_is_not_a_library(tmp_path):
    bogus = tmp_path / "libgpuaccel_cuda.so"
    bogus.write_text("not a shared library")
    # With a driver new enough (pretended: there is none here) the load failure is the problem.
    status = _C.probe_cuda_backend(str(bogus), driver_cuda_version=_build_cuda_version())
    assert status["problem"] == "library_load_failed"
    assert str(bogus) in status["reason"] and status["detail"] in status["reason"]
    # Without a driver, the driver is the first thing to fix.
    status = _C.probe_cuda_backend(str(bogus), driver_cuda_version=0)
    assert status["problem"] == "no_driver"
    assert "Could not find cuda drivers" in status["reason"]


def test_a_driver_of_an_older_cuda_is_named_before_the_backend_is_loaded(tmp_path):
    """Colab: a CUDA 12 driver; a backend of a newer CUDA must not send the student to install
    that CUDA's wheels (their cuDNN would replace PyTorch's)."""
    if _C.build_info()["cuda"] is None:
        pytest.skip("built without the CUDA backend: no backend CUDA version to compare")
    built = _build_cuda_version()
    older_driver = (built // 1000 - 1) * 1000 + 40
    bogus = tmp_path / "libgpuaccel_cuda.so"
    bogus.write_text("not a shared library")  # fails to load, as with its libraries missing
    status = _C.probe_cuda_backend(str(bogus), driver_cuda_version=older_driver)
    assert status["problem"] == "driver_too_old"
    assert status["loaded"] is False and status["libraries"] == []
    assert f"supports CUDA {_C.cuda_version_string(older_driver)}" in status["reason"]
    assert f"needs CUDA {_C.build_info()['cuda']}" in status["reason"]
    assert "pip install nvidia" not in status["reason"]
