"""``tf.config`` compared with TensorFlow on this CPU-only machine: one sequence of calls
(configure, start the runtime, configure again) runs in a fresh TensorFlow process and in a
fresh gpuaccel process, and every step must give the same value or the same error, TF's
RuntimeError words included. Configuration is process-global and freezes when the runtime
starts, hence the fresh processes (GPUs hidden on both sides, so a GPU machine agrees too)."""
import json
import os
import subprocess
import sys

import pytest

import gpuaccel as ga
from runtime_fixtures import package_environment

# Run in order with ``config`` = tf.config and ``cpu`` = the first physical CPU.
CONFIG_STEPS = [
    # the records: namedtuples with TensorFlow's fields, defaults, equality and repr
    "config.PhysicalDevice._fields",
    "config.LogicalDevice._fields",
    "config.LogicalDeviceConfiguration._fields",
    "config.LogicalDeviceConfiguration()",
    "config.LogicalDeviceConfiguration(memory_limit=1024)",
    "config.LogicalDeviceConfiguration(512, -1, 1)",
    "config.LogicalDeviceConfiguration(1024) == config.LogicalDeviceConfiguration("
    "memory_limit=1024)",
    "hash(config.LogicalDeviceConfiguration(1024)) == hash((1024, None, None))",
    "config.experimental.VirtualDeviceConfiguration is config.LogicalDeviceConfiguration",
    "config.PhysicalDevice(name='/physical_device:GPU:1', device_type='GPU')",
    "config.LogicalDevice('/device:GPU:1', 'GPU') == ('/device:GPU:1', 'GPU')",
    "repr(config.LogicalDevice('/device:GPU:1', 'GPU'))",
    # the calls, in order
    "config.list_physical_devices('CPU')",
    "config.list_physical_devices('GPU')",
    "config.get_visible_devices()",
    "config.get_visible_devices('CPU')",
    "config.experimental.get_device_details(cpu)",
    "config.get_logical_device_configuration(cpu)",
    "config.experimental.set_memory_growth(cpu, True)",  # a CPU has no memory growth
    "config.set_logical_device_configuration(cpu, [config.LogicalDeviceConfiguration(), "
    "config.LogicalDeviceConfiguration()])",
    "config.get_logical_device_configuration(cpu)",
    "config.experimental.get_virtual_device_configuration(cpu)",
    "config.set_visible_devices([], 'GPU')",
    "config.set_visible_devices(cpu)",
    "config.get_visible_devices()",
    "config.threading.get_inter_op_parallelism_threads()",
    "config.threading.get_intra_op_parallelism_threads()",
    "config.threading.set_inter_op_parallelism_threads(2)",
    "config.threading.set_intra_op_parallelism_threads(1)",
    "config.threading.get_inter_op_parallelism_threads()",
    "config.threading.get_intra_op_parallelism_threads()",
    "config.get_soft_device_placement()",
    "config.set_soft_device_placement(False)",
    "config.get_soft_device_placement()",
    "config.set_soft_device_placement(True)",
    "config.functions_run_eagerly()",
    "config.run_functions_eagerly(True)",
    "config.functions_run_eagerly()",
    "config.experimental_functions_run_eagerly()",
    "config.experimental_run_functions_eagerly(False)",
    "config.functions_run_eagerly()",
    "config.experimental_run_functions_eagerly(True)",
    "config.experimental_functions_run_eagerly()",
    "config.run_functions_eagerly(False)",
    "config.experimental_functions_run_eagerly()",
    "config.optimizer.get_jit()",
    "config.optimizer.set_jit('autoclustering')",
    "config.optimizer.get_jit()",
    "config.optimizer.set_jit(False)",
    "config.optimizer.get_jit()",
    "config.optimizer.set_jit(True)",
    "config.optimizer.get_jit()",
    "config.optimizer.set_jit('off')",
    "config.optimizer.get_jit()",
    # TensorFlow starts its runtime here; configuration freezes.
    "config.list_logical_devices('CPU')",
    "config.list_logical_devices()",
    "config.LogicalDevice(name='/device:CPU:1', device_type='CPU') in "
    "config.list_logical_devices()",
    "config.set_logical_device_configuration(cpu, [config.LogicalDeviceConfiguration()])",
    "config.set_logical_device_configuration(cpu, [config.LogicalDeviceConfiguration(), "
    "config.LogicalDeviceConfiguration()])",  # the same again: accepted
    "config.get_logical_device_configuration(cpu)",
    "config.set_visible_devices([cpu])",  # unchanged: accepted
    "config.set_visible_devices([], 'GPU')",
    "config.threading.set_inter_op_parallelism_threads(3)",
    "config.threading.set_inter_op_parallelism_threads(2)",  # unchanged: accepted
    "config.threading.set_intra_op_parallelism_threads(4)",
    "config.threading.get_intra_op_parallelism_threads()",
    "sorted(config.experimental.get_memory_info('CPU:0'))",
    "config.experimental.reset_memory_stats('CPU:0')",
    "config.experimental.get_memory_info('CPU:0')['peak'] >= 0",
]

_CHILD = r"""
import json, os, sys
os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'
if sys.argv[1] == 'tensorflow':
    import tensorflow as tf
else:
    import gpuaccel as tf
config = tf.config
cpu = config.list_physical_devices('CPU')[0]
results = []
for step in json.loads(sys.argv[2]):
    try:
        results.append(['value', repr(eval(step))])
    except Exception as e:
        results.append(['error', type(e).__name__, str(e)])
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def both_runs():
    """{framework: [step result]}: the two children run at the same time."""
    env = package_environment()
    env["CUDA_VISIBLE_DEVICES"] = ""
    children = {name: subprocess.Popen(
        [sys.executable, "-c", _CHILD, name, json.dumps(CONFIG_STEPS)], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name in ("tensorflow", "gpuaccel")}
    runs = {}
    for name, child in children.items():
        out, err = child.communicate(timeout=240)
        assert child.returncode == 0, err[-3000:]
        runs[name] = json.loads(out.strip().splitlines()[-1])
    return runs


@pytest.mark.parametrize("index", range(len(CONFIG_STEPS)),
                         ids=[step[:60] for step in CONFIG_STEPS])
def test_config_step_matches_tensorflow(both_runs, index):
    ours, theirs = both_runs["gpuaccel"][index], both_runs["tensorflow"][index]
    assert ours[:2] == theirs[:2]
    if theirs[0] == "error" and theirs[1] == "RuntimeError":
        # TF's "cannot be modified after ..." words, after gpuaccel's "[call] " prefix
        assert ours[2].endswith(theirs[2])


def test_configuring_after_start_raises_tensorflows_runtime_error(both_runs):
    # The sequence does reach the frozen state on both sides (not a vacuous comparison).
    frozen = CONFIG_STEPS.index(
        "config.set_logical_device_configuration(cpu, [config.LogicalDeviceConfiguration()])")
    assert both_runs["tensorflow"][frozen] == [
        "error", "RuntimeError", "Virtual devices cannot be modified after being initialized"]
    assert both_runs["gpuaccel"][frozen][2].endswith(both_runs["tensorflow"][frozen][2])


def test_a_memory_limit_that_is_not_whole_megabytes_is_refused_at_once():
    # TensorFlow stores any value and fails when its runtime starts; gpuaccel says at once.
    with pytest.raises(ValueError, match="memory_limit must be an integer number of megabytes"):
        ga.config.LogicalDeviceConfiguration(memory_limit=1.5)
