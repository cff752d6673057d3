"""gpuaccel._C.collective, the multi-worker engine (Gloo) as Python sees it: two worker
processes on 127.0.0.1 joined by TF_CONFIG all-reduce and broadcast; a killed worker gives the
survivor UnavailableError within the timeout; a worker that never arrives is an error, not a
hang; TF_CONFIG mistakes are ValueErrors naming the field. Every child process runs under a
pytest-level timeout, so a regression shows as a failure, never as a stuck CI job."""
import json
import os
import shutil
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

import gpuaccel  # noqa: F401
from gpuaccel import _C
from gpuaccel.errors import OpError, UnavailableError

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "collective_worker.py")
CHILD_TIMEOUT = 120  # seconds; far above what a passing run takes (a few seconds)

needs_gloo = pytest.mark.skipif(
    not _C.collective.gloo_available(),
    reason="built without Gloo (test_build_without_gloo_says_how_to_get_it covers that build)")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tf_config(index, ports, chief=False):
    """TF_CONFIG of worker `index` (rank order); with `chief`, the first address is the chief's."""
    addresses = [f"127.0.0.1:{p}" for p in ports]
    if chief:
        cluster = {"chief": addresses[:1], "worker": addresses[1:]}
        task = {"type": "chief", "index": 0} if index == 0 else {"type": "worker", "index": index - 1}
    else:
        cluster = {"worker": addresses}
        task = {"type": "worker", "index": index}
    return json.dumps({"cluster": cluster, "task": task})


def start_workers(mode, timeout_seconds, count=2, chief=False):
    ports = [free_port() for _ in range(count)]
    procs = []
    for index in range(count):
        env = dict(os.environ, TF_CONFIG=tf_config(index, ports, chief),
                   GPUACCEL_COLLECTIVE_TIMEOUT_SECONDS=str(timeout_seconds))
        procs.append(subprocess.Popen([sys.executable, WORKER, mode], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    return procs


def finish(proc):
    try:
        out, err = proc.communicate(timeout=CHILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"worker hung for {CHILD_TIMEOUT} s:\n{out}\n{err}")
    return proc.returncode, out, err


def check_sum_results(outputs, engine="gloo"):
    """The JSON lines of collective_worker.py 'sum' from both ranks."""
    results = {}
    for out in outputs:
        line = json.loads(out.strip().splitlines()[-1])
        results[line["rank"]] = line
    assert sorted(results) == [0, 1]
    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    for r in results.values():
        assert r["world_size"] == 2 and r["engine"] == engine
        np.testing.assert_allclose(r["a"], base * 1 + base * 2)
        np.testing.assert_allclose(r["b"], [0.5 + 1.5, -2.0])
        np.testing.assert_allclose(r["half"], [1.5 + 3.0, 4.0])  # exact in bfloat16
        assert r["ints"] == [1 + 2, 2 ** 41]  # int64, beyond float32's exact integers
        np.testing.assert_allclose(r["float16"], [0.25 + 0.5, 3.0])  # exact in float16
        np.testing.assert_allclose(r["weights"], [11.0, 21.0])  # rank 1's values


@needs_gloo
def test_two_processes_all_reduce_and_broadcast_with_tf_config():
    outputs = []
    for proc in start_workers("sum", timeout_seconds=60):
        code, out, err = finish(proc)
        assert code == 0, err
        outputs.append(out)
    check_sum_results(outputs)


@needs_gloo
@pytest.mark.skipif(shutil.which("mpirun") is None,
                    reason="mpirun not installed (.ci/test installs openmpi-bin)")
def test_two_ranks_under_mpirun_without_tf_config():
    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    env["GPUACCEL_COLLECTIVE_TIMEOUT_SECONDS"] = "60"
    # OpenMPI refuses root without these; --oversubscribe: two ranks on a machine with 1 core.
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    exported = ["-x", f"GPUACCEL_COORDINATOR=127.0.0.1:{free_port()}",
                "-x", "GPUACCEL_COLLECTIVE_TIMEOUT_SECONDS"]
    if "PYTHONPATH" in env:  # a build folder's staged package, as in the README's test command
        exported += ["-x", "PYTHONPATH"]
    proc = subprocess.Popen(
        ["mpirun", "--oversubscribe", "-np", "2", *exported, sys.executable, WORKER, "sum"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    code, out, err = finish(proc)
    assert code == 0, err
    lines = [line for line in out.splitlines() if line.startswith("{")]
    check_sum_results(lines)


@needs_gloo
def test_killed_worker_gives_the_survivor_unavailable_error_within_the_timeout():
    timeout = 4
    start = time.monotonic()
    chief, doomed = start_workers("die", timeout_seconds=timeout, chief=True)
    code, out, err = finish(doomed)
    assert code == -9  # SIGKILL: no cleanup, as when a machine dies
    code, out, err = finish(chief)
    assert code == 0, f"survivor did not raise UnavailableError:\n{out}\n{err}"
    report = json.loads(out.strip().splitlines()[-1])
    assert "rank 0 of 2" in report["error"]
    assert f"{timeout * 1000} ms" in report["error"]
    assert report["seconds"] <= timeout + 5
    assert time.monotonic() - start < CHILD_TIMEOUT


@needs_gloo
def test_worker_that_never_arrives_is_an_error_within_the_timeout():
    ports = [free_port(), free_port()]
    env = dict(os.environ, TF_CONFIG=tf_config(0, ports), GPUACCEL_COLLECTIVE_TIMEOUT_SECONDS="1.5")
    code = ("import gpuaccel; from gpuaccel import _C\n"
            "from gpuaccel.errors import UnavailableError\n"
            "try:\n    _C.collective.create_gloo()\n"
            "except UnavailableError as e:\n    print('UNAVAILABLE', e)\n")
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    returncode, out, err = finish(proc)
    assert returncode == 0, err
    assert "UNAVAILABLE" in out and "1500 ms" in out, out
    assert time.monotonic() - start < 60


@needs_gloo
def test_one_worker_without_tf_config_sums_to_itself(monkeypatch):
    for name in ("TF_CONFIG", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE"):
        monkeypatch.delenv(name, raising=False)
    collective = _C.collective.create_gloo(timeout_seconds=5)
    assert (collective.rank, collective.world_size, collective.engine) == (0, 1, "gloo")
    assert collective.timeout_seconds == 5
    t = _C.tensor_from_numpy(np.array([1.0, -2.0], np.float32))
    collective.all_reduce_sum([t])
    collective.broadcast([t], root=0)
    collective.barrier()
    np.testing.assert_array_equal(t.numpy(), [1.0, -2.0])
    with pytest.raises(ValueError, match="timeout_seconds is 0.0"):
        _C.collective.create_gloo(timeout_seconds=0)


def test_build_without_gloo_says_how_to_get_it():
    if _C.collective.gloo_available():
        assert _C.collective.create_gloo(_C.collective.ClusterSpec(), timeout_seconds=1).engine == "gloo"
    else:
        with pytest.raises(gpuaccel.errors.FailedPreconditionError, match="apt-get install libgloo-dev"):
            _C.collective.create_gloo(_C.collective.ClusterSpec(), timeout_seconds=1)


def test_tf_config_mistakes_are_value_errors_naming_the_field(monkeypatch):
    spec = _C.collective.parse_tf_config(tf_config(1, [5000, 5001]))
    assert (spec.rank, spec.world_size, spec.coordinator) == (1, 2, "127.0.0.1:5000")
    with pytest.raises(ValueError, match=r"field 'cluster.worker\[1\]' is \"b\": no ':port'"):
        _C.collective.parse_tf_config('{"cluster": {"worker": ["a:1", "b"]}}')
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 2}}')
    with pytest.raises(ValueError, match="'worker' job has 2 task"):
        _C.collective.cluster_spec_from_environment()
    monkeypatch.setenv("GPUACCEL_COLLECTIVE_TIMEOUT_SECONDS", "soon")
    with pytest.raises(ValueError, match="GPUACCEL_COLLECTIVE_TIMEOUT_SECONDS"):
        _C.collective.timeout_from_environment()


def test_binding_argument_errors_name_the_argument():
    with pytest.raises(TypeError, match=r"\[create_gloo\] argument 'spec' must be ClusterSpec"):
        _C.collective.create_gloo(spec=5)


def test_unavailable_error_is_tensorflows_class():
    assert issubclass(UnavailableError, OpError)
    assert UnavailableError.error_code == 14  # tf.errors.UNAVAILABLE
    assert gpuaccel.errors.UnavailableError is UnavailableError


@pytest.mark.gpu
def test_one_rank_nccl_communicator_on_gpu0():
    collective = _C.collective.create_nccl("GPU:0", spec=_C.collective.ClusterSpec(), timeout_seconds=60)
    assert (collective.rank, collective.world_size, collective.engine) == (0, 1, "nccl")
    values = np.array([1.0, -2.5, 3.0], np.float32)
    t = _C.tensor_from_numpy(values, device="GPU:0")
    collective.all_reduce_sum([t])
    collective.broadcast([t], root=0)
    collective.barrier()
    np.testing.assert_array_equal(t.numpy(), values)


def test_nccl_without_a_gpu_is_a_clear_error():
    if gpuaccel.cuda.is_available():
        pytest.skip("a GPU is present: test_one_rank_nccl_communicator_on_gpu0 runs instead")
    with pytest.raises((RuntimeError, gpuaccel.errors.OpError), match="GPU"):
        _C.collective.create_nccl("GPU:0", spec=_C.collective.ClusterSpec(), timeout_seconds=5)
