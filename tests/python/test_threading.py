"""tf.config.threading (intra/inter-op thread counts with TF's rules) and the OpenMP wait
policy gpuaccel picks for shared cores."""
import os
import subprocess
import sys
import threading

import pytest

import gpuaccel
from gpuaccel import _openmp_env
from gpuaccel.config import threading as config_threading
from runtime_fixtures import fresh_runtime, package_environment  # noqa: F401

pytestmark = pytest.mark.usefixtures("fresh_runtime")

SETTERS = [
    (config_threading.set_intra_op_parallelism_threads,
     config_threading.get_intra_op_parallelism_threads, "Intra op parallelism"),
    (config_threading.set_inter_op_parallelism_threads,
     config_threading.get_inter_op_parallelism_threads, "Inter op parallelism"),
]


@pytest.mark.parametrize("setter,getter,what", SETTERS)
def test_counts_default_to_zero_and_are_set_before_start(setter, getter, what):
    assert getter() == 0
    setter(1)
    assert getter() == 1


@pytest.mark.parametrize("setter,getter,what", SETTERS)
def test_changing_a_count_after_start_is_tensorflows_runtime_error(setter, getter, what):
    setter(1)
    gpuaccel.config.list_logical_devices()  # starts the runtime, as in TF
    setter(1)  # the same value changes nothing and is accepted
    with pytest.raises(RuntimeError, match=f"{what} cannot be modified after initialization"):
        setter(2)
    assert getter() == 1


@pytest.mark.parametrize("setter,getter,what", SETTERS)
@pytest.mark.parametrize("bad,error", [(-1, ValueError), ("2", TypeError), (True, TypeError),
                                       (1.5, TypeError), (2 ** 40, ValueError)])
def test_bad_counts_are_refused_naming_the_value(setter, getter, what, bad, error):
    with pytest.raises(error, match=repr(bad) if error is TypeError else str(bad)):
        setter(bad)
    assert getter() == 0


def test_intra_op_count_sets_the_team_of_every_thread_that_runs_ops():
    default = gpuaccel._C.cpu_threads_for_this_thread()
    config_threading.set_intra_op_parallelism_threads(1)
    assert gpuaccel._C.cpu_threads_for_this_thread() == 1
    # OpenMP keeps the count per thread: another thread (as the prefetcher) follows on its
    # next op.
    seen = []
    worker = threading.Thread(target=lambda: seen.append(gpuaccel._C.cpu_threads_for_this_thread()))
    worker.start()
    worker.join()
    assert seen == [1]
    # Ops still compute the same numbers with one thread.
    a = gpuaccel.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert (a @ a).numpy().tolist() == [[7.0, 10.0], [15.0, 22.0]]
    gpuaccel._C._reset_runtime_for_testing(None)  # a fresh configuration: back to OpenMP's own
    assert gpuaccel._C.cpu_threads_for_this_thread() == default


def _child_stderr(code, **env):
    environ = package_environment(**env)
    for name in _openmp_env.USER_KNOBS:
        if name not in env:
            environ.pop(name, None)
    result = subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True,
                            text=True, timeout=120, cwd="/tmp")
    assert result.returncode == 0, result.stderr
    return result.stdout, result.stderr


def test_import_shortens_openmps_spin_before_openmp_loads():
    # OMP_DISPLAY_ENV=VERBOSE makes libgomp print the settings it read when it was loaded:
    # the proof that the default reached OpenMP, not just os.environ.
    out, err = _child_stderr("import gpuaccel, gpuaccel._openmp_env as e; print(e.applied)",
                             OMP_DISPLAY_ENV="VERBOSE")
    assert out.strip() == "True"
    assert f"GOMP_SPINCOUNT = '{_openmp_env.SPIN_COUNT}'" in err


@pytest.mark.parametrize("knob,value", [("OMP_WAIT_POLICY", "ACTIVE"), ("GOMP_SPINCOUNT", "5")])
def test_a_users_wait_policy_is_left_alone(knob, value):
    out, err = _child_stderr(
        "import os, gpuaccel, gpuaccel._openmp_env as e; "
        "print(e.applied, os.environ.get('GOMP_SPINCOUNT'))",
        OMP_DISPLAY_ENV="VERBOSE", **{knob: value})
    applied, spin = out.split()
    assert applied == "False"
    assert spin == (value if knob == "GOMP_SPINCOUNT" else "None")
    assert f"{knob} = '{value}'" in err
