"""The CUDA backend's library boundary from Python, with the tests' fake CUDA library
(tests/cpp/fake_cuda_library.h: two fake GPUs whose memory is host memory and whose ops the CPU
backend computes) loaded in a fresh interpreter through GPUACCEL_CUDA_BACKEND: an op failing
inside another shared library raises the Python exception of its kind with the op's prefix, a
workspace the library takes from the GPU pool shows in the memory stats and hits the pool's
limit, and a Keras fit on the fake GPU trains exactly as on the CPU while the library counts
its copies (FAKE_COUNTERS below reads them, for tests of what a step does on a GPU)."""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import gpuaccel

FAKE_NAME = "libgpuaccel_fake_cuda.so"


def fake_library():
    """The fake library built beside this gpuaccel (a CMake build with GPUACCEL_BUILD_TESTS=ON:
    build/dev/stage/gpuaccel -> build/dev, or the repository's build/release for .ci/test)."""
    here = pathlib.Path(gpuaccel.__file__).resolve().parent
    candidates = [here.parent.parent / FAKE_NAME]
    repo = pathlib.Path(__file__).resolve().parents[2]
    candidates += [path for path in sorted((repo / "build").glob("*/" + FAKE_NAME))
                   if not _sanitized_build(path.parent)]
    for path in candidates:
        if path.is_file():
            return str(path)
    pytest.fail(f"{FAKE_NAME} was not built (looked at {[str(c) for c in candidates]}); "
                "build with -DGPUACCEL_BUILD_TESTS=ON")


def _sanitized_build(build_dir):
    """Whether a CMake build folder is a sanitizer build (.ci/sanitize's build/asan): its
    libraries need the sanitizer runtime preloaded, which a plain interpreter does not have."""
    cache = build_dir / "CMakeCache.txt"
    if not cache.is_file():
        return False
    for line in cache.read_text(errors="replace").splitlines():
        if line.startswith("GPUACCEL_SANITIZE:"):
            return line.split("=", 1)[1].strip() != ""
    return False


# Reads the fake library's counters (FakeCudaCounters in tests/cpp/fake_cuda_library.h) in the
# process that loaded it: dlopen of the same path returns the same library.
FAKE_COUNTERS = r"""
import ctypes, os
class _FakeCudaCounters(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int64) for n in (
        'backends_created', 'ops', 'copies_to_device', 'copies_to_host', 'device_mallocs',
        'device_frees', 'events_created', 'events_recorded', 'events_destroyed', 'synchronizes',
        'graph_captures', 'graph_launches', 'graphs_destroyed', 'copy_stream_copies',
        'backend_events_created', 'backend_events_recorded', 'stream_waits', 'host_event_waits',
        'unrecorded_waits', 'kernel_layout_copies', 'nonfinite_checks')]
_fake = ctypes.CDLL(os.environ['GPUACCEL_CUDA_BACKEND'])
_fake.gpuaccel_fake_cuda_counters.restype = ctypes.POINTER(_FakeCudaCounters)
fake_counters = _fake.gpuaccel_fake_cuda_counters().contents
"""

FIT_PROBE = FAKE_COUNTERS + r"""
import json
import numpy as np
import gpuaccel as ga
from gpuaccel import keras

rng = np.random.default_rng(0)
x = rng.normal(size=(64, 8)).astype('float32')
y = (x.sum(axis=1) > 0).astype('int64')

def fit(device):
    ga.random.set_seed(1)
    with ga.device(device):
        model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4, activation='relu'),
                                  keras.layers.Dense(2)])
        model.compile(optimizer='adam',
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(x, y, epochs=2, batch_size=16, verbose=0)
    return history.history['loss'], [w.tolist() for w in model.get_weights()]

ops = fake_counters.ops
gpu_loss, gpu_weights = fit('/GPU:0')
# The GPU model's teardown may wait for the cycle collector, which could then run it in the
# middle of the CPU fit and count its device work there: collect it now.
import gc
gc.collect()
out = {'ops': fake_counters.ops - ops, 'to_host': fake_counters.copies_to_host,
       'to_device': fake_counters.copies_to_device}
ops = fake_counters.ops
cpu_loss, cpu_weights = fit('/CPU:0')
out.update(gpu_loss=gpu_loss, cpu_loss=cpu_loss, same_weights=gpu_weights == cpu_weights,
           ops_during_cpu_fit=fake_counters.ops - ops)
print(json.dumps(out))
"""

PROBE = r"""
import json
import numpy as np
import gpuaccel as ga
from gpuaccel import errors

out = {'available': ga.cuda.is_available(), 'count': ga.cuda.device_count(),
       'name': ga.cuda.get_device_name(0)}
x = ga.tensor(np.array([0.0, 1.0, 2.0], dtype=np.float32))
out['device'] = str(x.device)
out['exp'] = x.exp().numpy().tolist()
for method in ('log', 'sqrt', 'tanh'):
    try:
        getattr(x, method)()
        out[method] = None
    except Exception as e:
        out[method] = [type(e).__name__, isinstance(e, ValueError), str(e)]
before = ga.cuda.memory_stats(0)['requested_bytes.all.allocated']
ga.tensor(np.zeros((8,), np.float32)).abs()  # asks the pool for 1 MiB per element
out['workspace_bytes'] = ga.cuda.memory_stats(0)['requested_bytes.all.allocated'] - before
try:
    ga.tensor(np.zeros((4096,), np.float32)).abs()  # 4 GiB: more than the fake GPU's pool
    out['oom'] = None
except errors.ResourceExhaustedError as e:
    out['oom'] = str(e)
print(json.dumps(out))
"""


def run_with_fake(probe=None, args=(), **env_changes):
    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(gpuaccel.__file__))
    env["PYTHONPATH"] = os.pathsep.join(
        [package_root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["GPUACCEL_CUDA_BACKEND"] = fake_library()
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env.update(env_changes)
    out = subprocess.run([sys.executable, "-c", probe or PROBE, *args], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_errors_inside_the_library_reach_python_typed():
    r = run_with_fake(GPUACCEL_FAKE_CUDA_FAULTS="1")
    assert r["available"] and r["count"] == 2 and r["name"] == "Fake GPU 0"
    assert r["device"] == "cuda:0"
    assert r["exp"] == pytest.approx([1.0, 2.7182817, 7.389056])
    # The library's own typed error: InvalidArgumentError, which is also a ValueError.
    assert r["log"] == ["InvalidArgumentError", True, "[unary] fake: log refused"]
    # Any other C++ exception out of the library: InternalError with its text.
    assert r["sqrt"] == ["InternalError", False, "[unary] fake: a plain std::runtime_error"]
    assert r["tanh"][0] == "UnimplementedError"
    assert r["tanh"][2].startswith("[unary] ")


def test_library_workspaces_are_pool_memory():
    r = run_with_fake(GPUACCEL_FAKE_CUDA_FAULTS="1")
    # 8 MiB of workspace, besides the input and output tensors of 32 bytes each.
    assert 8 << 20 <= r["workspace_bytes"] < (8 << 20) + 4096
    # The pool's own out-of-memory report, raised by the core inside the library's op.
    assert r["oom"] is not None
    assert r["oom"].startswith("[unary] workspace of 4294967296 bytes: OOM when allocating")
    assert "GPU_0_pool" in r["oom"]


def test_a_fit_on_the_fake_gpu_trains_as_on_the_cpu_and_is_counted():
    r = run_with_fake(FIT_PROBE)
    assert r["gpu_loss"] == r["cpu_loss"]  # the same kernels on the same numbers
    assert r["same_weights"]
    assert r["ops"] > 100  # 8 steps of forward, backward and update went through the library
    assert r["to_device"] >= 8  # at least one batch upload per step
    assert r["to_host"] >= 1
    assert r["ops_during_cpu_fit"] == 0


COMPOSED_LOSS_AND_HOST_METRICS_PROBE = r"""
import json
import numpy as np
import gpuaccel as ga
from gpuaccel import keras

rng = np.random.default_rng(3)
x = rng.normal(size=(48, 6)).astype('float32')
y = (x[:, :1] > 0).astype('float32')
w = rng.uniform(0.5, 2.0, size=48).astype('float32')

def fit(device):
    ga.random.set_seed(2)
    with ga.device(device):
        model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(5, activation='relu'),
                                  keras.layers.Dense(1, activation='sigmoid')])
        model.compile(optimizer='sgd', loss=keras.losses.BinaryFocalCrossentropy(gamma=1.5),
                      metrics=[keras.metrics.AUC(name='auc'), keras.metrics.Precision(name='p'),
                               keras.metrics.RootMeanSquaredError(name='rmse')],
                      weighted_metrics=[keras.metrics.Recall(name='r')])
        history = model.fit(x, y, epochs=2, batch_size=16, verbose=0, shuffle=False,
                            sample_weight=w)
    return {k: [float(v) for v in vs] for k, vs in history.history.items()}

print(json.dumps({'gpu': fit('/GPU:0'), 'cpu': fit('/CPU:0')}))
"""


def test_a_composed_loss_and_host_kept_metrics_fit_on_the_fake_gpu_as_on_the_cpu():
    """keras.losses formulas composed from ops run on the device, and the metrics kept on the
    host read the device's predictions: the same history as on the CPU."""
    r = run_with_fake(COMPOSED_LOSS_AND_HOST_METRICS_PROBE)
    assert sorted(r["gpu"]) == ["auc", "loss", "p", "r", "rmse"]
    for name, values in r["cpu"].items():
        assert r["gpu"][name] == pytest.approx(values, rel=1e-6, abs=1e-7), name
    assert r["gpu"]["loss"][0] != r["gpu"]["loss"][1]


# A fit on the fake GPU with graphs (jit_compile's default) and without: the fake records
# launches while capturing and replays the recording, with the step's memory in the graph's
# arena, so a replay that read or wrote the wrong memory would change the numbers.
GRAPH_PROBE = FAKE_COUNTERS + r"""
import json, sys
import numpy as np
import gpuaccel as ga
from gpuaccel import keras

rng = np.random.default_rng(0)
x = rng.normal(size=(72, 8)).astype('float32')  # 4 batches of 16, then one of 8
y = (x.sum(axis=1) > 0).astype('int64')

# After the graph is captured, allocates GPU tensors that must survive every later replay:
# memory the capture used and gave back would be handed to them, were it not the graph's.
class KeepTensors(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        if batch == 2 and not hasattr(self, 'kept'):
            with ga.device('/GPU:0'):
                self.kept = [ga.convert_to_tensor(np.full((n,), 7.0, np.float32))
                             for n in (16, 32, 64, 8, 128) * 8]

    def intact(self):
        return all(bool((t.numpy() == 7.0).all()) for t in self.kept)

def fit(jit_compile, dropout=False, optimizer='adam'):
    ga.random.set_seed(1)
    keep = KeepTensors()
    with ga.device('/GPU:0'):
        layers = [keras.Input((8,)), keras.layers.Dense(4, activation='relu')]
        if dropout:
            layers.append(keras.layers.Dropout(0.5))
        model = keras.Sequential(layers + [keras.layers.Dense(2)])
        model.compile(optimizer=optimizer, metrics=['accuracy'], jit_compile=jit_compile,
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        before = (fake_counters.graph_captures, fake_counters.graph_launches)
        history = model.fit(x, y, epochs=3, batch_size=16, verbose=0, shuffle=False,
                            callbacks=[keep])
        trainer = model._cpp_trainer
        return {'loss': history.history['loss'], 'accuracy': history.history['accuracy'],
                'weights': [w.tolist() for w in model.get_weights()],
                'captures': fake_counters.graph_captures - before[0],
                'launches': fake_counters.graph_launches - before[1],
                'trainer_captures': trainer.graph_captures, 'trainer_replays': trainer.graph_replays,
                'reason': trainer.graph_fallback_reason,
                'iterations': int(model.optimizer.iterations), 'kept_intact': keep.intact()}

which = sys.argv[1]
if which == 'graphs':
    out = {'on': fit('auto'), 'off': fit(False), 'sgd_on': fit(True, optimizer='sgd'),
           'sgd_off': fit(False, optimizer='sgd')}
elif which == 'dropout':
    out = {'dropout': fit('auto', dropout=True)}
elif which == 'two_pass':
    # Lamb and Adafactor (device reductions between two element passes) and
    # ScheduleFreeAdamW, with use_ema (averages from a device step count).
    out = {}
    for name in ('Lamb', 'Adafactor', 'ScheduleFreeAdamW'):
        for mode, jit in (('on', 'auto'), ('off', False)):
            opt = getattr(keras.optimizers, name)(learning_rate=0.01, use_ema=True)
            out[name + '_' + mode] = fit(jit, optimizer=opt)
    out['overwrite'] = fit('auto', optimizer=keras.optimizers.SGD(use_ema=True,
                                                                 ema_overwrite_frequency=2))
else:
    out = {'refused': fit(True)}
import gc
gc.collect()  # the models are gone: their trainers' graphs are destroyed with them
out['destroyed'] = fake_counters.graphs_destroyed
print(json.dumps(out))
"""


def test_fit_on_the_gpu_captures_each_shape_once_then_replays_with_the_same_numbers():
    r = run_with_fake(GRAPH_PROBE, args=["graphs"])
    for on, off in (("on", "off"), ("sgd_on", "sgd_off")):
        # 3 epochs of 4 batches of 16 and one of 8: two signatures, each warmed up eagerly once,
        # captured once, then replayed (15 steps = 2 warm-ups + 13 launches).
        assert r[on]["captures"] == r[on]["trainer_captures"] == 2, r[on]
        assert r[on]["launches"] == r[on]["trainer_replays"] == 13
        assert r[on]["reason"] == ""
        assert r[on]["iterations"] == r[off]["iterations"] == 15
        # Replays compute exactly what eager steps compute (the same kernels, in the same order).
        assert r[on]["loss"] == r[off]["loss"]
        assert r[on]["accuracy"] == r[off]["accuracy"]
        assert r[on]["weights"] == r[off]["weights"]
        # Tensors allocated after the capture are never in the graph's memory.
        assert r[on]["kept_intact"] and r[off]["kept_intact"]
        # jit_compile=False never captures.
        assert r[off]["captures"] == r[off]["launches"] == r[off]["trainer_captures"] == 0
    assert r["destroyed"] == 4


def test_two_pass_optimizers_and_moving_averages_are_captured_and_replay_exactly():
    r = run_with_fake(GRAPH_PROBE, args=["two_pass"])
    for name in ("Lamb", "Adafactor", "ScheduleFreeAdamW"):
        on, off = r[name + "_on"], r[name + "_off"]
        assert on["captures"] == 2 and on["launches"] == 13 and on["reason"] == "", (name, on)
        assert on["loss"] == off["loss"] and on["weights"] == off["weights"], name
        assert on["iterations"] == off["iterations"] == 15
    # The overwrite every N steps is decided on the host: such steps run eagerly, and say so.
    assert r["overwrite"]["captures"] == 0
    assert r["overwrite"]["reason"].startswith("use_ema with ema_overwrite_frequency")


ADAFACTOR_UNDER_DEVICE_LOSS_SCALE_PROBE = r"""
import json
import numpy as np
import gpuaccel as ga
from gpuaccel import keras
with ga.device('/GPU:0'):
    w = ga.convert_to_tensor(np.ones((2, 3), np.float32))
    opt = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adafactor())
    try:
        opt.apply_gradients([(ga.convert_to_tensor(np.ones((2, 3), np.float32)), w)])
        out = {'error': None}
    except Exception as e:
        out = {'error': type(e).__name__, 'message': str(e),
               'unchanged': bool((w.numpy() == 1).all())}
print(json.dumps(out))
"""


def test_adafactor_under_a_device_loss_scale_is_refused_before_any_change():
    # Its factored moments are written by ops that cannot skip a step the device decided to
    # skip: a typed error, and the variable is untouched.
    r = run_with_fake(ADAFACTOR_UNDER_DEVICE_LOSS_SCALE_PROBE)
    assert r["error"] == "UnimplementedError"
    assert "cannot skip a step on the device" in r["message"] and r["unchanged"]


def test_a_step_that_cannot_be_captured_runs_eagerly_and_says_why():
    r = run_with_fake(GRAPH_PROBE, args=["dropout"])["dropout"]
    assert r["captures"] == r["launches"] == 0
    assert r["reason"] == "Dropout layer 'dropout' draws its random offset on the host every step"
    assert r["iterations"] == 15
    # A backend whose capture fails: the step reruns eagerly, counted once, and says so.
    r = run_with_fake(GRAPH_PROBE, args=["refused"], GPUACCEL_FAKE_CUDA_NO_CAPTURE="1")["refused"]
    assert r["captures"] == r["launches"] == 0
    assert r["reason"].startswith("capture failed: [begin_capture] fake: stream capture refused")
    assert r["iterations"] == 15


# mixed_float16 with dynamic loss scaling on the fake GPU and on the CPU: the GPU keeps the
# finite check and the scale's state machine on the device. An initial scale of 2**24 makes the
# first steps overflow float16 (skipped, scale halved) and a growth every 3 steps brings
# overflows back, so skips and updates mix.
LOSS_SCALE_PROBE = FAKE_COUNTERS + r"""
import json
import numpy as np
import gpuaccel as ga
from gpuaccel import keras

rng = np.random.default_rng(0)
x = rng.normal(size=(64, 8)).astype('float32')
y = (x.sum(axis=1) > 0).astype('int64')

def fit(device, jit_compile):
    ga.random.set_seed(1)
    keras.mixed_precision.set_global_policy('mixed_float16')
    with ga.device(device):
        model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4, activation='relu'),
                                  keras.layers.Dense(2, dtype='float32')])
        opt = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(0.01),
                                                  initial_scale=2.0**24, dynamic_growth_steps=3)
        model.compile(optimizer=opt, jit_compile=jit_compile,
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        to_host, checks = fake_counters.copies_to_host, fake_counters.nonfinite_checks
        history = model.fit(x, y, epochs=6, batch_size=16, verbose=0, shuffle=False)
        t = model._cpp_trainer
        return {'copies_to_host': fake_counters.copies_to_host - to_host,
                'nonfinite_checks': fake_counters.nonfinite_checks - checks,
                'gradients': len(model.trainable_weights),
                'loss': history.history['loss'],
                'weights': [w.tolist() for w in model.get_weights()],
                'iterations': int(opt.iterations), 'scale': float(opt.dynamic_scale),
                'counter': int(opt.step_counter), 'captures': t.graph_captures,
                'reason': t.graph_fallback_reason}

print(json.dumps({'graphs': fit('/GPU:0', 'auto'), 'eager': fit('/GPU:0', False),
                  'cpu': fit('/CPU:0', False)}))
"""


def test_loss_scaling_runs_on_the_gpu_without_host_reads_and_is_captured():
    r = run_with_fake(LOSS_SCALE_PROBE)
    cpu = r["cpu"]
    assert 0 < cpu["iterations"] < 24  # 24 steps: some skipped on overflow, some applied
    for gpu in (r["graphs"], r["eager"]):
        # The same decisions as the host's state machine: losses, weights, counts, scale.
        assert gpu["loss"] == cpu["loss"]
        assert gpu["weights"] == cpu["weights"]
        assert (gpu["iterations"], gpu["scale"], gpu["counter"]) == (
            cpu["iterations"], cpu["scale"], cpu["counter"])
        # No read per step: the 6 epochs' logs and nothing else (24 steps).
        assert gpu["copies_to_host"] <= 7
        # The finite check is one fused launch per step over all 4 gradients (a replayed graph
        # runs its recorded launch), not a reduction per gradient.
        assert gpu["gradients"] == 4
        assert gpu["nonfinite_checks"] == 24
    assert r["graphs"]["captures"] == 1 and r["graphs"]["reason"] == ""
    assert r["eager"]["captures"] == 0


# Grouped convolutions through the library boundary: the groups travel in Conv2dParams to the
# fake's launches (its KRSC kernel copy of a (KH, KW, C / groups, F) kernel included) and give
# the CPU's numbers, forward and both gradients; a depthwise Keras fit trains as on the CPU.
GROUPED_CONV_PROBE = FAKE_COUNTERS + r"""
import json
import numpy as np
import gpuaccel as ga
from gpuaccel import keras

rng = np.random.default_rng(5)
x = rng.normal(size=(2, 6, 5, 4)).astype('float32')
kernels = {2: rng.normal(size=(3, 3, 2, 6)).astype('float32'),
           4: rng.normal(size=(3, 3, 1, 8)).astype('float32')}

def grouped(device, groups):
    with ga.device(device):
        tx, tw = ga.Variable(x), ga.Variable(kernels[groups])
        with ga.GradientTape() as tape:
            y = ga.nn.conv2d(tx, tw, strides=2, padding='SAME', groups=groups)
            total = ga.reduce_sum(y * y)
        gx, gw = tape.gradient(total, [tx, tw])
    return [y.detach().numpy().tolist(), gx.numpy().tolist(), gw.numpy().tolist()]

def fit(device):
    ga.random.set_seed(4)
    with ga.device(device):
        model = keras.Sequential([keras.Input((6, 5, 4)),
                                  keras.layers.DepthwiseConv2D(3, depth_multiplier=2),
                                  keras.layers.Flatten(), keras.layers.Dense(1)])
        model.compile(optimizer='sgd', loss='mse')
        history = model.fit(x, np.ones((2, 1), 'float32'), epochs=2, batch_size=2, verbose=0)
    return history.history['loss']

layout_copies = fake_counters.kernel_layout_copies
out = {'gpu': [grouped('/GPU:0', g) for g in (2, 4)],
       'layout_copies': fake_counters.kernel_layout_copies - layout_copies,
       'cpu': [grouped('/CPU:0', g) for g in (2, 4)],
       'gpu_fit': fit('/GPU:0'), 'cpu_fit': fit('/CPU:0')}
print(json.dumps(out))
"""


def test_grouped_convolutions_on_the_fake_gpu_match_the_cpu():
    r = run_with_fake(GROUPED_CONV_PROBE)
    assert r["layout_copies"] >= 2  # the grouped kernels went through the library's KRSC copy
    for gpu, cpu in zip(r["gpu"], r["cpu"]):
        for got, want in zip(gpu, cpu):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r["gpu_fit"], r["cpu_fit"], rtol=1e-5)


SELECT_SORT_TRIG_PROBE = r"""
import json
import numpy as np
import gpuaccel as ga

x = np.array([[3.0, np.nan, 1.0, -np.inf, 1.0], [0.5, -0.0, 0.0, 2.0, -3.0]], np.float32)

def run(device):
    with ga.device(device):
        v = ga.Variable(np.nan_to_num(x, nan=7.0, neginf=-7.0))
        with ga.GradientTape() as tape:
            sorted_values = ga.sort(v, axis=1, direction='DESCENDING')
            loss = ga.reduce_sum(sorted_values * np.arange(10, dtype='float32').reshape(2, 5))
        grad = tape.gradient(loss, v)
        picked = ga.where(x > 0, x, ga.math.sin(x))
        return {'device': str(picked.device), 'argsort': ga.argsort(x, axis=1).numpy().tolist(),
                'grad': grad.numpy().tolist(),
                'picked': np.nan_to_num(picked.numpy(), nan=99.0).tolist(),
                'atan2': ga.math.atan2(x[1], x[0]).numpy().tolist()}

print(json.dumps({'gpu': run('/GPU:0'), 'cpu': run('/CPU:0')}))
"""


def test_select_sort_and_trig_on_the_fake_gpu_match_the_cpu():
    """The library path of the new ops (the sort's workspace comes from the GPU pool)."""
    r = run_with_fake(SELECT_SORT_TRIG_PROBE)
    assert r["gpu"]["device"] == "cuda:0" and r["cpu"]["device"] == "cpu"
    assert r["gpu"]["argsort"] == [[3, 2, 4, 0, 1], [4, 1, 2, 0, 3]]
    assert {k: v for k, v in r["gpu"].items() if k != "device"} == {
        k: v for k, v in r["cpu"].items() if k != "device"}


BITWISE_UNIQUE_PROBE = r"""
import json
import numpy as np
import gpuaccel as ga
import gpuaccel.torch as torch

a = np.array([5, -5, 1, 12, 7], np.int32)
counts = np.array([-1, 32, 31, 2, 40], np.int32)

def run(device):
    with ga.device(device):
        x, n = ga.constant(a), ga.constant(counts)
        values, inverse, tally = torch.unique(ga.constant(np.array([3, 1, 3, 2, 1])),
                                              return_inverse=True, return_counts=True)
        return {'device': str(x.device), 'shifted': (x << n).numpy().tolist(),
                'tf_shifted': ga.bitwise.left_shift(x, n).numpy().tolist(),
                'mixed': ((x & 6) ^ ~x).numpy().tolist(),
                'unique': [values.numpy().tolist(), inverse.numpy().tolist(),
                           tally.numpy().tolist()]}

print(json.dumps({'gpu': run('/GPU:0'), 'cpu': run('/CPU:0')}))
"""


def test_bitwise_and_unique_on_the_fake_gpu_match_the_cpu():
    """The bitwise op crosses the library boundary (and unique's sorts and gathers run there)."""
    r = run_with_fake(BITWISE_UNIQUE_PROBE)
    assert r["gpu"]["device"] == "cuda:0" and r["cpu"]["device"] == "cpu"
    assert r["gpu"]["shifted"] == [0, 0, -2147483648, 48, 0]
    assert r["gpu"]["unique"] == [[1, 2, 3], [2, 0, 2, 1, 0], [2, 1, 2]]
    assert {k: v for k, v in r["gpu"].items() if k != "device"} == {
        k: v for k, v in r["cpu"].items() if k != "device"}
