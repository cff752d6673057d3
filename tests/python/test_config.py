"""gpuaccel.config against TensorFlow's tf.config semantics: listing, visibility, memory growth,
logical devices, device details, and every error path, on the CPU and on simulated GPUs."""
import os

import pytest

import gpuaccel
from gpuaccel import config
from gpuaccel.config import LogicalDeviceConfiguration, PhysicalDevice
from runtime_fixtures import fresh_runtime, two_simulated_gpus  # noqa: F401

pytestmark = pytest.mark.usefixtures("fresh_runtime")

CPU0 = PhysicalDevice(name="/physical_device:CPU:0", device_type="CPU")


def test_list_physical_devices_has_the_cpu_in_tf_form():
    devices = config.list_physical_devices()
    assert devices[0] == CPU0
    assert repr(devices[0]) == "PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')"
    assert config.list_physical_devices("CPU") == [CPU0]
    assert config.list_physical_devices("cpu") == [CPU0]  # deliberately case-insensitive
    assert not gpuaccel._C.is_initialized()  # listing does not start the runtime


def test_unknown_device_type_is_a_value_error():
    with pytest.raises(ValueError, match="Unknown device_type 'TPU'"):
        config.list_physical_devices("TPU")


def test_list_logical_devices_starts_the_runtime_and_freezes_configuration():
    config.set_logical_device_configuration(
        CPU0, [LogicalDeviceConfiguration(), LogicalDeviceConfiguration()])
    logical = config.list_logical_devices("CPU")
    assert [d.name for d in logical] == ["/device:CPU:0", "/device:CPU:1"]
    assert repr(logical[1]) == "LogicalDevice(name='/device:CPU:1', device_type='CPU')"
    assert gpuaccel._C.is_initialized()
    # The same configuration again is a no-op; a different one is TF's RuntimeError.
    config.set_logical_device_configuration(
        CPU0, [LogicalDeviceConfiguration(), LogicalDeviceConfiguration()])
    with pytest.raises(RuntimeError, match="Virtual devices cannot be modified after being initialized"):
        config.set_logical_device_configuration(CPU0, [LogicalDeviceConfiguration()])


def test_logical_device_configuration_round_trips():
    assert config.get_logical_device_configuration(CPU0) is None
    config.set_logical_device_configuration(CPU0, [LogicalDeviceConfiguration(memory_limit=64)])
    assert config.get_logical_device_configuration(CPU0) == [
        LogicalDeviceConfiguration(memory_limit=64)]
    assert repr(LogicalDeviceConfiguration(memory_limit=10)) == (
        "LogicalDeviceConfiguration(memory_limit=10, experimental_priority=None, "
        "experimental_device_ordinal=None)")


@pytest.mark.parametrize("bad", [0, -5])
def test_non_positive_memory_limit_is_rejected(bad):
    with pytest.raises(ValueError, match="positive"):
        config.set_logical_device_configuration(CPU0, [LogicalDeviceConfiguration(memory_limit=bad)])


def test_memory_limit_must_be_an_integer():
    with pytest.raises(ValueError, match="megabytes"):
        LogicalDeviceConfiguration(memory_limit=1.5)


def test_set_logical_device_configuration_rejects_non_configurations():
    with pytest.raises(ValueError, match="LogicalDeviceConfiguration"):
        config.set_logical_device_configuration(CPU0, [64])


def test_memory_growth_on_cpu_is_tf_value_error():
    with pytest.raises(ValueError, match="Cannot set memory growth on non-GPU and non-Pluggable devices"):
        config.experimental.set_memory_growth(CPU0, True)
    with pytest.raises(ValueError, match="not a GPU"):
        config.experimental.get_memory_growth(CPU0)


@pytest.mark.parametrize("bad", ["x", "/physical_device:CPU:0", None,
                                 PhysicalDevice("/physical_device:GPU:7", "GPU")])
def test_unrecognized_devices(bad):
    with pytest.raises(ValueError, match="Unrecognized device"):
        config.set_visible_devices(bad)
    with pytest.raises(ValueError, match="Unrecognized device"):
        config.experimental.set_memory_growth(bad, True)


def test_get_device_details():
    assert config.experimental.get_device_details(CPU0) == {}
    with pytest.raises(ValueError, match="device must be a tf.config.PhysicalDevice, but got: 'x'"):
        config.experimental.get_device_details("x")


def test_visible_devices_cpu_cannot_be_hidden():
    assert config.get_visible_devices() == config.list_physical_devices()
    config.set_visible_devices([], "GPU")  # hiding all GPUs is the course's idiom
    assert config.get_visible_devices("GPU") == []
    with pytest.raises(ValueError, match="CPU cannot be hidden"):
        config.set_visible_devices([], "CPU")


def test_soft_placement_default_and_toggle():
    assert config.get_soft_device_placement() is True  # TF 2 default
    config.set_soft_device_placement(False)
    assert config.get_soft_device_placement() is False


def test_experimental_aliases_are_the_same_calls():
    assert config.experimental.list_physical_devices("CPU") == [CPU0]
    assert config.experimental.VirtualDeviceConfiguration is LogicalDeviceConfiguration
    config.experimental.set_virtual_device_configuration(
        CPU0, [LogicalDeviceConfiguration(), LogicalDeviceConfiguration()])
    assert len(config.experimental.get_virtual_device_configuration(CPU0)) == 2


# ---- GPU rules on simulated GPUs ----

@pytest.mark.usefixtures("two_simulated_gpus")
class TestSimulatedGpus:
    def gpus(self):
        return config.list_physical_devices("GPU")

    def test_listing_and_details(self):
        gpus = self.gpus()
        assert [g.name for g in gpus] == ["/physical_device:GPU:0", "/physical_device:GPU:1"]
        assert config.experimental.get_device_details(gpus[1]) == {
            "device_name": "Tesla T4", "compute_capability": (7, 5)}

    def test_memory_growth_the_course_way(self):
        gpus = self.gpus()
        assert config.experimental.get_memory_growth(gpus[0]) is None
        for gpu in gpus:
            config.experimental.set_memory_growth(gpu, True)
        assert config.experimental.get_memory_growth(gpus[0]) is True
        logical = config.list_logical_devices("GPU")
        assert len(logical) == 2
        with pytest.raises(RuntimeError, match="Physical devices cannot be modified after being initialized"):
            config.experimental.set_memory_growth(gpus[0], False)

    def test_memory_growth_cannot_differ(self):
        config.experimental.set_memory_growth(self.gpus()[0], True)
        with pytest.raises(ValueError, match="Memory growth cannot differ between GPU devices"):
            config.list_logical_devices()
        assert not gpuaccel._C.is_initialized()

    def test_hide_one_gpu_then_only_one_logical(self):
        gpus = self.gpus()
        config.set_visible_devices(gpus[1], "GPU")
        assert config.get_visible_devices("GPU") == [gpus[1]]
        assert [d.name for d in config.list_logical_devices("GPU")] == ["/device:GPU:0"]
        with pytest.raises(RuntimeError, match="Visible devices cannot be modified after being initialized"):
            config.set_visible_devices(gpus, "GPU")

    def test_split_gpu_into_logical_devices(self):
        gpu0 = self.gpus()[0]
        config.set_logical_device_configuration(
            gpu0, [LogicalDeviceConfiguration(memory_limit=1024),
                   LogicalDeviceConfiguration(memory_limit=1024)])
        with pytest.raises(ValueError, match="Cannot set memory growth on device when virtual devices configured"):
            config.experimental.set_memory_growth(gpu0, True)
        with pytest.raises(ValueError, match="Setting memory limit is required for GPU virtual devices"):
            config.set_logical_device_configuration(self.gpus()[1], [LogicalDeviceConfiguration()])
        assert [d.name for d in config.list_logical_devices("GPU")] == [
            "/device:GPU:0", "/device:GPU:1", "/device:GPU:2"]


def test_forced_growth_env_var(monkeypatch):
    from runtime_fixtures import T4, reset_runtime
    reset_runtime([T4])
    monkeypatch.setenv("GPUACCEL_FORCE_GPU_ALLOW_GROWTH", "true")
    assert gpuaccel._C.forced_gpu_memory_growth() is True
    records = gpuaccel._C.logical_devices("GPU")
    assert records[0]["memory_growth"] is True
    monkeypatch.setenv("GPUACCEL_FORCE_GPU_ALLOW_GROWTH", "false")
    assert gpuaccel._C.forced_gpu_memory_growth() is False


def test_device_type_must_be_a_string():
    for call in (config.list_physical_devices, config.list_logical_devices,
                 config.get_visible_devices):
        with pytest.raises(TypeError, match="device_type must be None or a string") as info:
            call(5)
        assert "incompatible function arguments" not in str(info.value)


# The CPU backend's measured oneDNN implementation choices: (getter, setter, env var, a name).
_IMPL_SETTINGS = {
    "backward_data": ("conv2d_backward_data_impl_setting", "set_conv2d_backward_data_impl",
                      "GPUACCEL_ONEDNN_CONV_BWD_DATA", "jit:avx2"),
    "backward_weights": ("conv2d_backward_weights_impl_setting",
                         "set_conv2d_backward_weights_impl", "GPUACCEL_ONEDNN_CONV_BWD_WEIGHTS",
                         "jit:avx2@1thread"),
}


@pytest.mark.parametrize("which", sorted(_IMPL_SETTINGS))
def test_op_determinism_fixes_the_conv_backward_implementation(which):
    # 'measure' (the default) times oneDNN's backward implementations on a shape's first call,
    # so two runs may pick differently; op determinism takes oneDNN's own pick instead, and
    # leaves an implementation the user named alone.
    import warnings
    from gpuaccel import _C
    getter, setter, _, named = _IMPL_SETTINGS[which]
    get, set_ = getattr(_C, getter), getattr(_C, setter)
    experimental = config.experimental
    before = get()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the GPU-determinism warning, with a GPU visible
            set_("measure")
            experimental.enable_op_determinism()
            assert get() == "default"
            experimental.disable_op_determinism()
            assert get() == "measure"
            set_(named)
            experimental.enable_op_determinism()
            assert get() == named
            experimental.disable_op_determinism()
            assert get() == named
        with pytest.raises(gpuaccel.errors.InvalidArgumentError, match="'measure', 'default'"):
            set_("")
    finally:
        experimental.disable_op_determinism()
        set_(before)


@pytest.mark.parametrize("which", sorted(_IMPL_SETTINGS))
def test_conv_backward_implementation_setting_starts_from_its_environment_variable(which):
    import subprocess
    import sys
    getter, _, env_var, named = _IMPL_SETTINGS[which]
    code = f"from gpuaccel import _C; print(_C.{getter}())"
    for value, expected in ((named, named), ("", "measure")):
        env = dict(os.environ, **{env_var: value})
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout.strip()
        assert out == expected, (env_var, value, out)
