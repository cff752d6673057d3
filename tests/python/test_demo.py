"""`python -m gpuaccel.demo` — the end of set-up command 1 — runs, reports every device and
checks a matmul on each, in a fresh process as a student would run it."""
import subprocess
import sys

import pytest

from runtime_fixtures import package_environment


def run_module(module, env_extra=None):
    env = package_environment(**(env_extra or {}))
    return subprocess.run([sys.executable, "-m", module], capture_output=True, text=True,
                          env=env, timeout=120, cwd="/")


def test_demo_checks_matmul_on_every_logical_device():
    proc = run_module("gpuaccel.demo")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Matmul self-check" in proc.stdout
    lines = [l for l in proc.stdout.splitlines() if "/job:localhost/replica:0/task:0/device:" in l]
    assert lines and all(l.rstrip().endswith("OK") for l in lines), proc.stdout


def test_demo_runs_on_cpu_when_gpus_are_hidden_by_cuda_visible_devices():
    proc = run_module("gpuaccel.demo", {"CUDA_VISIBLE_DEVICES": ""})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "device:CPU:0" in proc.stdout
    assert "device:GPU:" not in proc.stdout


@pytest.mark.parametrize("n", [1, 7, 64, 300])
def test_self_check_matmul_is_accurate(n):
    import gpuaccel
    r = gpuaccel._C.matmul_self_check(n, seed=n)
    assert r["n"] == n
    assert r["max_abs_error"] <= r["tolerance"]


@pytest.mark.parametrize("n", [0, -1, 5000])
def test_self_check_rejects_bad_sizes(n):
    import gpuaccel
    with pytest.raises(ValueError, match="n must be in 1..4096"):
        gpuaccel._C.matmul_self_check(n)
