"""The multi-worker engine pip brings (MPI from PyPI's ``mpich``; docs/distribute.md, "Engines
for CPU workers"): how a CPU worker's engine is chosen and what it says when there is none
(monkeypatched, no MPI needed), then two ranks started by the wheel's ``mpiexec``: all-reduce
and broadcast of several dtypes, two workers training the reference model to one replica's
weights, the seed article's MultiWorkerMirroredStrategy program, a rank that never answers
(UnavailableError within the timeout) and Open MPI's mpirun refused as MPICH's launcher.

The two-rank tests need ``pip install mpich`` in the environment; without it they skip, except
where GPUACCEL_TEST_REQUIRE_MPI=1 (.ci/wheel runs this file so in its fresh virtual
environment, where the wheel was installed with pip alone and mpich added from PyPI: there a
missing MPI fails). GPUACCEL_COLLECTIVE_ENGINE=mpi makes a build that also has Gloo use MPI,
as a build without libgloo-dev does by itself."""
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import gpuaccel  # noqa: F401
from gpuaccel import _C
from gpuaccel.distribute import _cpu_engine
from gpuaccel.errors import FailedPreconditionError

import distribute_programs
from test_collective import check_sum_results, tf_config

HERE = os.path.dirname(os.path.abspath(__file__))
CHILD_TIMEOUT = 240  # seconds; a passing two-rank run takes a few (the seed program ~30 s)


def _mpich_file(name):
    try:
        files = importlib.metadata.distribution("mpich").files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    found = [f.locate() for f in files if f.name == name]
    return os.path.realpath(found[0]) if found else None


MPI_LIBRARY = _mpich_file("libmpi_abi.so.1")
MPIEXEC = _mpich_file("mpiexec")


@pytest.fixture
def mpich():
    """(library, mpiexec) of the installed mpich wheel."""
    if MPI_LIBRARY and MPIEXEC:
        return MPI_LIBRARY, MPIEXEC
    if os.environ.get("GPUACCEL_TEST_REQUIRE_MPI") == "1":
        pytest.fail("GPUACCEL_TEST_REQUIRE_MPI=1 but the mpich wheel (libmpi_abi.so.1 and "
                    "mpiexec) is not installed in this environment")
    pytest.skip("pip install mpich to run the MPI engine's two-rank tests (.ci/wheel runs them)")


# Each rank's standard output goes to a file of its own: under mpiexec the ranks share one
# stdout, where two long JSON lines written at once interleave.
_OWN_STDOUT = """
import os, runpy, sys
out = os.open(os.path.join(sys.argv[1], "rank" + os.environ["PMI_RANK"]), os.O_WRONLY | os.O_CREAT)
os.dup2(out, 1)
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def run_under_mpiexec(mpich, tmp_path, args, ranks=2, timeout_seconds=60):
    """Runs the script `args` as `ranks` Python processes under the mpich wheel's mpiexec, with
    the MPI engine; returns the JSON lines they printed, rank 0's first."""
    library, mpiexec = mpich
    environment = dict(os.environ, GPUACCEL_MPI_LIBRARY=library, GPUACCEL_COLLECTIVE_ENGINE="mpi",
                       GPUACCEL_COLLECTIVE_TIMEOUT_SECONDS=str(timeout_seconds))
    environment.pop("TF_CONFIG", None)
    done = subprocess.run([mpiexec, "-n", str(ranks), sys.executable, "-c", _OWN_STDOUT,
                           str(tmp_path), *args],
                          env=environment, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=CHILD_TIMEOUT)
    outputs = {f.name: f.read_text() for f in sorted(tmp_path.glob("rank*"))}
    assert done.returncode == 0, f"exit {done.returncode}\n{outputs}\n{done.stderr[-3000:]}"
    return [json.loads(line) for text in outputs.values() for line in text.splitlines()
            if line.startswith("{")]


# ---- choosing the engine (no MPI needed) ----

def two_workers():
    return _C.collective.parse_tf_config(tf_config(0, [12345, 12346]))


@pytest.fixture
def engines(monkeypatch):
    """Records which engine create_cpu_collective asks for, instead of joining anything."""
    calls = []
    for engine in ("gloo", "mpi"):
        monkeypatch.setattr(_C.collective, f"create_{engine}",
                            lambda *a, engine=engine: calls.append((engine, a)) or engine)
    monkeypatch.delenv(_cpu_engine.ENGINE_VARIABLE, raising=False)
    return calls


@pytest.mark.parametrize("has_gloo, mpi_library, expected", [
    (True, "/wheel/lib/libmpi_abi.so.1", "gloo"),   # Gloo first when built with it
    (False, "/wheel/lib/libmpi_abi.so.1", "mpi"),   # a build without libgloo-dev: pip's MPI
])
def test_auto_takes_gloo_when_built_with_it_else_mpi(engines, monkeypatch, has_gloo, mpi_library,
                                                     expected):
    monkeypatch.setattr(_C.collective, "gloo_available", lambda: has_gloo)
    monkeypatch.setattr(_cpu_engine, "find_mpi_library", lambda: mpi_library)
    assert _cpu_engine.create_cpu_collective(two_workers(), 30) == expected
    if expected == "mpi":
        assert engines[0][1][0] == mpi_library


def test_the_engine_variable_forces_mpi_and_names_only_real_engines(engines, monkeypatch):
    monkeypatch.setattr(_C.collective, "gloo_available", lambda: True)
    monkeypatch.setattr(_cpu_engine, "find_mpi_library", lambda: "/x/libmpi_abi.so.1")
    monkeypatch.setenv(_cpu_engine.ENGINE_VARIABLE, "MPI")
    assert _cpu_engine.create_cpu_collective(two_workers(), 30) == "mpi"
    monkeypatch.setenv(_cpu_engine.ENGINE_VARIABLE, "ring")
    with pytest.raises(ValueError, match="GPUACCEL_COLLECTIVE_ENGINE is 'ring'; expected one of "
                                         "auto, gloo, mpi"):
        _cpu_engine.create_cpu_collective(two_workers(), 30)


def test_without_gloo_or_mpi_the_error_says_what_to_pip_install(engines, monkeypatch):
    monkeypatch.setattr(_C.collective, "gloo_available", lambda: False)
    monkeypatch.setattr(_cpu_engine, "find_mpi_library", lambda: None)
    with pytest.raises(NotImplementedError) as raised:
        _cpu_engine.create_cpu_collective(two_workers(), 30)
    message = str(raised.value)
    assert message.startswith("TF_CONFIG describes 2 workers, but this build has no Gloo engine")
    assert "pip install mpich" in message and "mpiexec -n 2 python" in message
    assert engines == []


def test_mpi_library_variable_must_name_a_file(monkeypatch, tmp_path):
    monkeypatch.setenv(_cpu_engine.LIBRARY_VARIABLE, str(tmp_path / "missing.so"))
    with pytest.raises(ValueError,
                       match="GPUACCEL_MPI_LIBRARY is '.*missing.so', which is not a file"):
        _cpu_engine.find_mpi_library()
    library = tmp_path / "libmpi_abi.so.1"
    library.write_bytes(b"")
    monkeypatch.setenv(_cpu_engine.LIBRARY_VARIABLE, str(library))
    assert _cpu_engine.find_mpi_library() == str(library)


def test_a_library_that_is_not_a_standard_abi_mpi_is_refused_with_what_to_install(tmp_path):
    with pytest.raises(FailedPreconditionError,
                       match=r"cannot use '.*nothing.so'.*pip install mpich"):
        _C.collective.create_mpi(str(tmp_path / "nothing.so"), _C.collective.ClusterSpec(), 5)
    libm = "libm.so.6"  # a real library without MPI's functions
    with pytest.raises(FailedPreconditionError,
                       match=r"it has no MPI_Abi_get_version \(not an MPI 5.0 standard-ABI"):
        _C.collective.create_mpi(libm, _C.collective.ClusterSpec(), 5)


def test_tf_config_workers_are_told_to_use_mpiexec():
    with pytest.raises(ValueError, match="TF_CONFIG describes 2 workers started one by one, "
                                         "which the MPI engine cannot join.*mpiexec -n 2 python"):
        _C.collective.create_mpi("", two_workers(), 5)


# ---- two ranks under the mpich wheel's mpiexec ----

def test_two_ranks_all_reduce_and_broadcast_through_mpi(mpich, tmp_path):
    results = run_under_mpiexec(mpich, tmp_path,
                                [os.path.join(HERE, "collective_worker.py"), "sum", "mpi"])
    check_sum_results([json.dumps(r) for r in results], engine="mpi")


def test_a_rank_that_does_not_answer_gives_unavailable_error_within_the_timeout(mpich, tmp_path):
    timeout = 3
    (result,) = run_under_mpiexec(mpich, tmp_path,
                                  [os.path.join(HERE, "collective_worker.py"), "stall", "mpi"],
                                  timeout_seconds=timeout)
    assert result["rank"] == 0
    assert result["error"].startswith("[all_reduce_sum] rank 0 of 2: a peer did not answer within "
                                      f"the timeout of {timeout * 1000} ms (MPI engine, MPICH")
    assert timeout <= result["seconds"] <= timeout + 20  # a loaded machine's slack


def test_two_mpi_workers_match_one_replica_on_the_global_batch(mpich, tmp_path):
    expected, _ = distribute_programs.reference_weights("sgd")
    results = run_under_mpiexec(mpich, tmp_path,
                                [os.path.join(HERE, "distribute_worker.py"), "steps", "sgd"])
    assert sorted(r["rank"] for r in results) == [0, 1]
    for r in results:
        assert r["replicas"] == 2
        for w, e in zip(r["weights"], expected):
            np.testing.assert_allclose(np.asarray(w, np.float32), e, atol=2e-5, rtol=1e-4)
    for a, b in zip(results[0]["weights"], results[1]["weights"]):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_seed_article_multi_worker_program_runs_under_mpiexec(mpich, tmp_path):
    results = run_under_mpiexec(mpich, tmp_path,
                                [os.path.join(HERE, "distribute_worker.py"), "seed_program"])
    assert len(results) == 2
    assert results[0]["weights"] == results[1]["weights"]
    for r in results:
        assert len(r["history"]["loss"]) == 5
        assert r["history"]["loss"] == results[0]["history"]["loss"]  # logged globally


def test_open_mpis_mpirun_starting_mpich_ranks_is_refused_with_what_to_use(mpich):
    mpirun = shutil.which("mpirun")
    about = mpirun and subprocess.run([mpirun, "--version"], capture_output=True, text=True).stdout
    if not about or "Open MPI" not in about:
        pytest.skip("Open MPI's mpirun is not installed (.ci/test installs openmpi-bin)")
    env = dict(os.environ, GPUACCEL_MPI_LIBRARY=mpich[0], GPUACCEL_COLLECTIVE_ENGINE="mpi",
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop("TF_CONFIG", None)
    exported = ["-x", "GPUACCEL_MPI_LIBRARY", "-x", "GPUACCEL_COLLECTIVE_ENGINE"]
    if "PYTHONPATH" in env:
        exported += ["-x", "PYTHONPATH"]
    code = ("import gpuaccel as tf\ntry:\n    tf.distribute.MultiWorkerMirroredStrategy()\n"
            "except ValueError as error:\n    print('refused:', error, flush=True)\n")
    done = subprocess.run([mpirun, "--oversubscribe", "-np", "2", *exported, sys.executable,
                           "-c", code],
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT)
    # Refused before MPI_Init, where MPICH under Open MPI's launcher would abort the process.
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert done.stdout.count("refused:") == 2, done.stdout
    assert "Open MPI's mpirun started this process, but the MPI library is MPICH" in done.stdout
    assert "start the workers with MPICH's mpiexec" in done.stdout
