"""gpuaccel.cuda against torch.cuda's names: the no-GPU answers on this machine, the answers for
simulated GPUs (properties, indices, visibility, errors), and, marked ``gpu``, the real thing."""
import re

import pytest

import gpuaccel
from gpuaccel import _C, config, cuda
from runtime_fixtures import T4, reset_runtime

A100 = {"name": "NVIDIA A100-SXM4-40GB", "total_memory": 40 * 2**30, "major": 8, "minor": 0,
        "multi_processor_count": 108}


@pytest.fixture
def real_runtime():
    reset_runtime()
    yield
    reset_runtime()


@pytest.fixture
def t4():
    reset_runtime([T4])
    yield
    reset_runtime()


@pytest.fixture
def t4_and_a100():
    reset_runtime([T4, A100])
    yield
    reset_runtime()


# ---- this machine: no usable GPU ----

def _skip_if_real_gpu():
    if cuda.is_available():
        pytest.skip("this machine has a usable GPU")


@pytest.mark.usefixtures("real_runtime")
def test_no_gpu_answers():
    _skip_if_real_gpu()
    assert cuda.is_available() is False
    assert cuda.device_count() == 0
    dev = "cuda" if cuda.is_available() else "cpu"
    assert dev == "cpu"


@pytest.mark.usefixtures("real_runtime")
@pytest.mark.parametrize("call", [
    lambda: cuda.get_device_name(0), lambda: cuda.get_device_properties(0),
    lambda: cuda.get_device_capability(), lambda: cuda.current_device(),
    lambda: cuda.synchronize(),
], ids=["get_device_name", "get_device_properties", "get_device_capability", "current_device",
        "synchronize"])
def test_calls_that_need_a_gpu_raise_runtime_error_with_the_reason(call):
    _skip_if_real_gpu()
    reason = _C.gpu_unavailable_reason()
    assert reason
    with pytest.raises(RuntimeError, match="no CUDA GPU is available") as info:
        call()
    assert reason in str(info.value)


# ---- simulated GPUs ----

@pytest.mark.usefixtures("t4")
def test_simulated_t4_reads_like_torch():
    assert cuda.is_available()
    assert cuda.device_count() == 1
    assert cuda.current_device() == 0
    assert cuda.get_device_name(0) == "Tesla T4"
    assert cuda.get_device_name() == "Tesla T4"
    assert cuda.get_device_capability(0) == (7, 5)
    props = cuda.get_device_properties(0)
    assert props.name == "Tesla T4"
    assert props.total_memory == 15 * 2**30
    assert (props.major, props.minor) == (7, 5)
    assert props.multi_processor_count == 40
    assert repr(props).startswith(
        "_CudaDeviceProperties(name='Tesla T4', major=7, minor=5, total_memory=15360MB, "
        "multi_processor_count=40, ")
    assert re.search(r"memory_bandwidth=[0-9.]+GB/s\)$", repr(props))
    with pytest.raises(AttributeError):
        props.total_memory = 1
    assert cuda.is_bf16_supported() is False  # Turing has no bf16 tensor cores
    cuda.synchronize()  # nothing runs on a simulated GPU; it must not fail
    assert not _C.is_initialized()  # none of this starts the runtime


@pytest.mark.usefixtures("t4")
@pytest.mark.parametrize("name", ["cuda", "cuda:0", "/GPU:0", "/physical_device:GPU:0", 0])
def test_devices_can_be_named_as_torch_and_tf_do(name):
    assert cuda.get_device_name(name) == "Tesla T4"


@pytest.mark.usefixtures("t4")
def test_a_physical_device_object_names_its_gpu():
    gpu = config.list_physical_devices("GPU")[0]
    assert cuda.get_device_capability(gpu) == (7, 5)


@pytest.mark.usefixtures("t4")
def test_bad_indices_are_value_errors_naming_the_valid_range():
    with pytest.raises(ValueError, match=r"invalid device index 1; valid CUDA device indices "
                                         r"are 0\.\.0 \(1 visible GPU"):
        cuda.get_device_name(1)
    with pytest.raises(ValueError, match="invalid device index -1"):
        cuda.get_device_properties(-1)
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        cuda.get_device_name("cpu")
    with pytest.raises(ValueError):
        cuda.get_device_name(True)
    with pytest.raises(ValueError):
        cuda.get_device_name("tpu:0")


@pytest.mark.usefixtures("t4_and_a100")
def test_indices_follow_set_visible_devices():
    assert cuda.device_count() == 2
    assert cuda.get_device_name(1) == "NVIDIA A100-SXM4-40GB"
    gpus = config.list_physical_devices("GPU")
    config.set_visible_devices([gpus[1]], "GPU")
    assert cuda.device_count() == 1
    assert cuda.get_device_name(0) == "NVIDIA A100-SXM4-40GB"  # renumbered, as torch does
    assert cuda.get_device_capability() == (8, 0)
    assert cuda.is_bf16_supported() is True
    with pytest.raises(ValueError, match=r"0\.\.0"):
        cuda.get_device_name(1)


@pytest.mark.usefixtures("t4_and_a100")
def test_hiding_every_gpu_says_so():
    config.set_visible_devices([], "GPU")
    assert cuda.is_available() is False
    with pytest.raises(RuntimeError, match="hidden by gpuaccel.config.set_visible_devices"):
        cuda.get_device_name(0)


@pytest.mark.usefixtures("t4")
def test_the_torch_idiom_places_ops_on_the_gpu():
    dev = "cuda" if gpuaccel.cuda.is_available() else "cpu"
    assert dev == "cuda"
    with gpuaccel.device(dev):
        placed = _C.place_op("MatMul")
    assert (placed["device_type"], placed["index"]) == ("GPU", 0)


@pytest.mark.usefixtures("real_runtime")
def test_diagnose_prints_and_returns_the_report(capsys):
    text = cuda.diagnose()
    assert capsys.readouterr().out.strip() == text.strip()
    assert "Problems" in text and "Versions" in text


# ---- a real GPU (Colab) ----

@pytest.mark.gpu
@pytest.mark.usefixtures("real_runtime")
def test_real_gpu_properties():
    props = cuda.get_device_properties(0)
    assert props.total_memory > 2**30
    assert props.major >= 7
    assert props.multi_processor_count > 0
    assert props.memory_bus_width > 0 and props.memory_clock_rate > 0
    assert props.memory_bandwidth > 50  # GB/s; a T4 has ~320
    assert cuda.get_device_name(0) == props.name
    cuda.synchronize()
    cuda.synchronize(0)


@pytest.mark.gpu
@pytest.mark.usefixtures("real_runtime")
def test_real_gpu_matmul_matches_float64():
    with gpuaccel.device("/GPU:0"):
        result = _C.matmul_self_check(128)
    assert "GPU:0" in result["device"]
    assert result["max_abs_error"] <= result["tolerance"]


# ---- torch.cuda memory names ----

def test_cuda_memory_calls_answer_zero_without_gpu():
    if gpuaccel.cuda.is_available():
        pytest.skip("this machine has a GPU; covered by test_cuda_memory_calls_track_gpu_pool")
    assert gpuaccel.cuda.memory_allocated() == 0
    assert gpuaccel.cuda.max_memory_allocated() == 0
    assert gpuaccel.cuda.memory_reserved() == 0
    assert gpuaccel.cuda.memory_stats() == {}
    assert "No CUDA GPU" in gpuaccel.cuda.memory_summary()
    gpuaccel.cuda.empty_cache()
    gpuaccel.cuda.reset_peak_memory_stats()


@pytest.mark.gpu
def test_cuda_memory_calls_track_gpu_pool():
    before = gpuaccel.cuda.memory_allocated(0)
    handle = gpuaccel._C._memory_allocate_for_testing("cuda:0", 1 << 20)
    try:
        assert gpuaccel.cuda.memory_allocated(0) >= before + (1 << 20)
        assert gpuaccel.cuda.max_memory_allocated(0) >= before + (1 << 20)
        assert gpuaccel.cuda.memory_reserved(0) >= gpuaccel.cuda.memory_allocated(0)
        assert gpuaccel.cuda.memory_stats(0)["allocated_bytes.all.current"] >= 1 << 20
    finally:
        gpuaccel._C._memory_free_for_testing(handle)
