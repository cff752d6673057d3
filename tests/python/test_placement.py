"""Placement: gpuaccel.device scopes (TF and PyTorch spellings), soft placement, and the
placement log, checked through the device self-check matmul (a real op)."""
import threading

import pytest

import gpuaccel
from gpuaccel import config
from runtime_fixtures import T4, fresh_runtime, reset_runtime  # noqa: F401

pytestmark = pytest.mark.usefixtures("fresh_runtime")

CPU0_FULL = "/job:localhost/replica:0/task:0/device:CPU:0"


def run_matmul():
    result = gpuaccel._C.matmul_self_check(32)
    assert result["max_abs_error"] <= result["tolerance"]
    return result["device"]


def test_default_placement_without_gpu_is_cpu():
    config.set_visible_devices([], "GPU")
    assert run_matmul() == CPU0_FULL


@pytest.mark.parametrize("name", ["/CPU:0", "cpu", "/device:CPU:0", CPU0_FULL])
def test_cpu_scope_spellings(name):
    with gpuaccel.device(name):
        assert run_matmul() == CPU0_FULL


def test_scope_on_second_logical_cpu_and_nesting():
    config.set_logical_device_configuration(
        config.list_physical_devices("CPU")[0],
        [config.LogicalDeviceConfiguration(), config.LogicalDeviceConfiguration()])
    with gpuaccel.device("/CPU:1"):
        assert run_matmul().endswith("device:CPU:1")
        with gpuaccel.device("/CPU:0"):
            assert run_matmul() == CPU0_FULL
        assert run_matmul().endswith("device:CPU:1")
        with gpuaccel.device(None):  # clears the request
            assert run_matmul() == CPU0_FULL
    logical = config.list_logical_devices("CPU")[1]
    with gpuaccel.device(logical):
        assert run_matmul().endswith("device:CPU:1")


def test_missing_gpu_falls_back_to_cpu_under_soft_placement():
    config.set_visible_devices([], "GPU")
    with gpuaccel.device("/GPU:0"):
        assert run_matmul() == CPU0_FULL
    with gpuaccel.device("cuda:3"):
        assert run_matmul() == CPU0_FULL


def test_missing_gpu_without_soft_placement_is_invalid_argument():
    config.set_visible_devices([], "GPU")
    config.set_soft_device_placement(False)
    with gpuaccel.device("/GPU:0"):
        with pytest.raises(gpuaccel.errors.InvalidArgumentError) as info:
            run_matmul()
    err = info.value
    assert isinstance(err, ValueError)
    assert err.op_name == "MatMul"
    assert "Could not satisfy device specification '/job:localhost/replica:0/task:0/device:GPU:0'" in str(err)
    assert CPU0_FULL in str(err)


def test_bad_device_names_are_value_errors_quoting_the_input():
    for bad in ["/XPU:0", "gpu0", "cuda:x", ""]:
        with pytest.raises(ValueError, match="Accepted forms") as info:
            gpuaccel.device(bad)
        assert repr(bad) in str(info.value) or f"'{bad}'" in str(info.value)
    with pytest.raises(ValueError, match="device name string"):
        gpuaccel.device(3.5)


def test_log_device_placement_prints_tf_line(capsys):
    gpuaccel.debugging.set_log_device_placement(True)
    assert gpuaccel.debugging.get_log_device_placement()
    with gpuaccel.device("/CPU:0"):
        run_matmul()
    gpuaccel.debugging.set_log_device_placement(False)
    run_matmul()
    err = capsys.readouterr().err
    assert err.count("Executing op MatMul in device " + CPU0_FULL) == 1


def test_scopes_are_per_thread():
    config.set_logical_device_configuration(
        config.list_physical_devices("CPU")[0],
        [config.LogicalDeviceConfiguration(), config.LogicalDeviceConfiguration()])
    seen = {}

    def worker():
        seen["thread"] = run_matmul()

    with gpuaccel.device("/CPU:1"):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        seen["main"] = run_matmul()
    assert seen["main"].endswith("CPU:1")
    assert seen["thread"] == CPU0_FULL


def test_torch_style_device_object():
    d = gpuaccel.device("cuda:1")
    assert (d.type, d.index, d.device_type, d.name) == ("cuda", 1, "GPU", "/device:GPU:1")
    assert repr(d) == "device(type='cuda', index=1)"
    assert str(gpuaccel.device("cpu")) == "cpu"
    assert gpuaccel.device("cuda:0") == "/GPU:0"
    assert gpuaccel.device("cuda") != "cpu"


def test_course_idiom_picks_a_device_that_works():
    dev = "cuda" if gpuaccel.cuda.is_available() else "cpu"
    with gpuaccel.device(dev):
        assert "device:" in run_matmul()


def test_simulated_gpu_is_default_device_for_placement_decisions():
    reset_runtime([T4])
    gpuaccel.debugging.set_log_device_placement(False)
    record = gpuaccel._C.place_op("MatMul")
    assert record["full_name"] == "/job:localhost/replica:0/task:0/device:GPU:0"
