"""gpuaccel.distribute against TensorFlow's tf.distribute: the strategy API (default strategy,
scopes, run/reduce vs NumPy, distributed datasets split as TF splits them), fit under
MirroredStrategy on two logical CPUs and under MultiWorkerMirroredStrategy as two processes
on 127.0.0.1 giving the weights of one replica on the whole global batch (SGD and Adam; the
all-reduce overlapped with the backward pass in small buckets, and blocking after it, agreeing
with each other), the seed article's programs with only the import changed, a worker that
leaves making the other's fit raise UnavailableError, TF's error for a model built outside the
scope, the all-reduce switches and CommunicationOptions, GPU workers joining through NCCL, and
the idle-GPU message."""
import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import gpuaccel as tf
from gpuaccel import _C, keras
from gpuaccel.config import LogicalDeviceConfiguration
from gpuaccel.distribute import _fit, _idle_gpus

import distribute_programs
from runtime_fixtures import fresh_runtime, two_simulated_gpus  # noqa: F401
from test_collective import finish, free_port, tf_config

pytestmark = pytest.mark.usefixtures("fresh_runtime")

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "distribute_worker.py")
# float32 sums in another order: the replicas' gradients add up in a different order than one
# replica's batch reduction, so weights agree to rounding, not bit for bit.
ATOL = 2e-5

needs_gloo = pytest.mark.skipif(
    not _C.collective.gloo_available(),
    reason="built without Gloo (test_collective covers that build's error)")


# The all-reduce modes the equivalence tests run: overlapped with the backward pass in buckets
# of 64 bytes (the equivalence model's gradients then travel in several buckets, started while
# the backward pass runs), and blocking after the backward pass.
OVERLAPPED = {"GPUACCEL_ALL_REDUCE_OVERLAP": "1", "GPUACCEL_ALL_REDUCE_BUCKET_BYTES": "64"}
BLOCKING = {"GPUACCEL_ALL_REDUCE_OVERLAP": "0"}


def set_all_reduce_mode(monkeypatch, mode):
    for name, value in mode.items():
        monkeypatch.setenv(name, value)


def two_logical_cpus():
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [LogicalDeviceConfiguration(), LogicalDeviceConfiguration()])


# ---- the strategy API ----

def test_default_strategy_outside_every_scope():
    assert not tf.distribute.has_strategy()
    default = tf.distribute.get_strategy()
    assert default.num_replicas_in_sync == 1
    assert default is tf.distribute.get_strategy()
    assert default.run(lambda a: a + 1, args=(1,)) == 2
    assert tf.distribute.get_replica_context().replica_id_in_sync_group == 0


def test_scope_sets_the_current_strategy_and_refuses_mixing():
    two_logical_cpus()
    strategy = tf.distribute.MirroredStrategy()
    assert strategy.num_replicas_in_sync == 2
    assert list(strategy.extended.worker_devices) == ["/device:CPU:0", "/device:CPU:1"]
    with strategy.scope():
        assert tf.distribute.has_strategy()
        assert tf.distribute.get_strategy() is strategy
        assert tf.distribute.get_replica_context() is None  # cross-replica context
        with strategy.scope():  # the same strategy nests
            assert tf.distribute.get_strategy() is strategy
        other = tf.distribute.OneDeviceStrategy("/cpu:0")
        with pytest.raises(RuntimeError, match="Mixing different tf.distribute.Strategy objects"):
            with other.scope():
                pass
    assert not tf.distribute.has_strategy()


def test_names_reachable_through_the_tf_face():
    assert tf.distribute.experimental.MultiWorkerMirroredStrategy is \
        tf.distribute.MultiWorkerMirroredStrategy
    assert tf.distribute.ReduceOp.SUM is not tf.distribute.ReduceOp.MEAN
    with pytest.raises(ValueError, match="devices must be a list"):
        tf.distribute.MirroredStrategy(devices="/cpu:0")
    with pytest.raises(ValueError, match="does not exist"):
        tf.distribute.MirroredStrategy(devices=["/cpu:0", "/cpu:5"])


def test_run_and_reduce_match_numpy():
    two_logical_cpus()
    strategy = tf.distribute.MirroredStrategy()
    value = np.array([1.0, 2.0], np.float32)

    def times_replica(x):
        ctx = tf.distribute.get_replica_context()
        return tf.constant(x * (ctx.replica_id_in_sync_group + 1))

    per_replica = strategy.run(times_replica, args=(value,))
    local = [v.numpy() for v in strategy.experimental_local_results(per_replica)]
    np.testing.assert_allclose(local, [value, 2 * value])
    SUM, MEAN = tf.distribute.ReduceOp.SUM, tf.distribute.ReduceOp.MEAN
    np.testing.assert_allclose(strategy.reduce(SUM, per_replica, axis=None).numpy(), 3 * value)
    np.testing.assert_allclose(strategy.reduce(MEAN, per_replica, axis=None).numpy(), 1.5 * value)
    np.testing.assert_allclose(strategy.reduce("SUM", per_replica, axis=0).numpy(), 9.0)
    np.testing.assert_allclose(strategy.reduce("mean", per_replica, axis=0).numpy(), 2.25)
    # TF's rules for a plain (not per-replica) value and for unknown ops.
    np.testing.assert_allclose(strategy.reduce(MEAN, tf.constant(value), axis=None).numpy(), value)
    with pytest.raises(ValueError, match="A non-DistributedValues value"):
        strategy.reduce(SUM, tf.constant(value), axis=None)
    with pytest.raises(ValueError, match="'MAX' is not a valid ReduceOp"):
        strategy.reduce("MAX", per_replica, axis=None)


def test_distributed_dataset_splits_each_global_batch_as_tf_does():
    two_logical_cpus()
    strategy = tf.distribute.MirroredStrategy()
    dataset = tf.data.Dataset.from_tensor_slices(np.arange(10, dtype=np.float32)).batch(5)
    batches = list(strategy.experimental_distribute_dataset(dataset))
    assert len(batches) == 2
    first = [v.numpy().tolist() for v in batches[0].values]
    assert first == [[0.0, 1.0, 2.0], [3.0, 4.0]]  # TF: the first replica takes the extra row
    sums = strategy.run(lambda b: tf.reduce_sum(b), args=(batches[1],))
    assert float(strategy.reduce("SUM", sums, axis=None).numpy()) == sum(range(5, 10))


# ---- fit ----

@pytest.mark.parametrize("mode", [OVERLAPPED, BLOCKING], ids=["overlapped", "blocking"])
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_two_logical_cpu_replicas_match_one_replica_on_the_global_batch(optimizer, mode,
                                                                         monkeypatch):
    set_all_reduce_mode(monkeypatch, mode)
    two_logical_cpus()
    expected, expected_history = distribute_programs.reference_weights(optimizer)
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        model = distribute_programs.equivalence_model(optimizer)
    history = distribute_programs.train_ten_steps(model)
    got = model.get_weights()
    assert any(np.abs(w - e).max() > 1e-3 for w, e in
               zip(distribute_programs.equivalence_model(optimizer).get_weights(), expected))
    for w, e in zip(got, expected):
        np.testing.assert_allclose(w, e, atol=ATOL, rtol=1e-4)
    # The replica's copy holds the same weights (updated by the same all-reduced gradients).
    for w, c in zip(got, model._replicated_fit._clones[0].get_weights()):
        np.testing.assert_array_equal(w, c)
    # The logs cover the global batch.
    np.testing.assert_allclose(history["loss"], expected_history["loss"], rtol=1e-4)
    np.testing.assert_allclose(history["accuracy"], expected_history["accuracy"])


def test_cross_device_ops_is_honoured_where_it_names_the_engine_and_refused_otherwise():
    # It was accepted whatever it was and ignored. CPU replicas sum in the memory they share:
    # ReductionToOneDevice() is what they do, and trains as one replica on the global batch.
    two_logical_cpus()
    expected, _ = distribute_programs.reference_weights("sgd")
    strategy = tf.distribute.MirroredStrategy(
        cross_device_ops=tf.distribute.ReductionToOneDevice())
    assert strategy.num_replicas_in_sync == 2
    with strategy.scope():
        model = distribute_programs.equivalence_model("sgd")
    distribute_programs.train_ten_steps(model)
    for w, e in zip(model.get_weights(), expected):
        np.testing.assert_allclose(w, e, atol=ATOL, rtol=1e-4)
    # What names another engine is refused, saying what would do.
    with pytest.raises(ValueError, match=r"NcclAllReduce\(num_packs=1\) needs GPU replicas, "
                                         r"but the 2 replicas are CPUs.*ReductionToOneDevice"):
        tf.distribute.MirroredStrategy(cross_device_ops=tf.distribute.NcclAllReduce())
    with pytest.raises(NotImplementedError, match="hierarchical copy.*is not implemented"):
        tf.distribute.MirroredStrategy(cross_device_ops=tf.distribute.HierarchicalCopyAllReduce())
    with pytest.raises(NotImplementedError, match="reduce_to_device and accumulation_fn are not"):
        tf.distribute.MirroredStrategy(
            cross_device_ops=tf.distribute.ReductionToOneDevice(reduce_to_device="/cpu:0"))
    with pytest.raises(NotImplementedError, match="of one's own is not supported"):
        tf.distribute.MirroredStrategy(cross_device_ops=tf.distribute.CrossDeviceOps())
    # Not a CrossDeviceOps at all: a TypeError naming the argument and the choices.
    for bad in ("nccl", 5, tf.distribute.NcclAllReduce):
        with pytest.raises(TypeError, match=r"cross_device_ops must be a "
                                            r"tf.distribute.CrossDeviceOps instance or None"):
            tf.distribute.MirroredStrategy(cross_device_ops=bad)
    import tensorflow
    with pytest.raises(TypeError, match="a TensorFlow object: use gpuaccel.distribute's class"):
        tf.distribute.MirroredStrategy(cross_device_ops=tensorflow.distribute.NcclAllReduce())
    # One replica: nothing crosses devices, so any of TF's is accepted (as TF does).
    for ops in (tf.distribute.NcclAllReduce(), tf.distribute.HierarchicalCopyAllReduce(),
                tf.distribute.ReductionToOneDevice()):
        assert tf.distribute.MirroredStrategy(["/cpu:0"], cross_device_ops=ops
                                              )._cross_device_ops is ops
    # TF's own argument checks: num_packs is a non-negative integer.
    with pytest.raises(ValueError, match=r"num_packs must be in \[0, 2\*\*63 - 1\], got -1"):
        tf.distribute.NcclAllReduce(num_packs=-1)
    with pytest.raises(ValueError):
        tensorflow.distribute.NcclAllReduce(num_packs=-1)


def test_cross_device_ops_on_gpu_replicas():
    # The same rule for GPU replicas, whose engine is NCCL (no GPU needed to decide).
    from gpuaccel.distribute._cross_device_ops import check_cross_device_ops
    nccl = tf.distribute.NcclAllReduce()
    assert check_cross_device_ops(nccl, "GPU", 2) is nccl
    assert check_cross_device_ops(None, "GPU", 2) is None
    with pytest.raises(NotImplementedError, match="buckets of bytes.*"
                                                  "GPUACCEL_ALL_REDUCE_BUCKET_BYTES"):
        check_cross_device_ops(tf.distribute.NcclAllReduce(num_packs=2), "GPU", 2)
    with pytest.raises(NotImplementedError, match="GPU replicas reduce with NCCL"):
        check_cross_device_ops(tf.distribute.ReductionToOneDevice(), "GPU", 2)


def test_overlapped_and_blocking_all_reduce_give_the_same_weights(monkeypatch):
    two_logical_cpus()
    weights = {}
    for name, mode in (("overlapped", OVERLAPPED), ("blocking", BLOCKING)):
        set_all_reduce_mode(monkeypatch, mode)
        strategy = tf.distribute.MirroredStrategy()
        with strategy.scope():
            model = distribute_programs.equivalence_model("adam")
        distribute_programs.train_ten_steps(model)
        weights[name] = model.get_weights()
    for a, b in zip(weights["overlapped"], weights["blocking"]):
        np.testing.assert_allclose(a, b, atol=1e-6, rtol=1e-6)


def test_all_reduce_switches_are_validated(monkeypatch):
    assert _fit.all_reduce_options() == (True, _C.DEFAULT_ALL_REDUCE_BUCKET_BYTES)
    assert _C.DEFAULT_ALL_REDUCE_BUCKET_BYTES == 256 * 1024
    monkeypatch.setenv("GPUACCEL_ALL_REDUCE_OVERLAP", "off")
    monkeypatch.setenv("GPUACCEL_ALL_REDUCE_BUCKET_BYTES", "4096")
    assert _fit.all_reduce_options() == (False, 4096)
    monkeypatch.setenv("GPUACCEL_ALL_REDUCE_OVERLAP", "maybe")
    with pytest.raises(ValueError, match="GPUACCEL_ALL_REDUCE_OVERLAP='maybe': expected 1"):
        _fit.all_reduce_options()
    monkeypatch.setenv("GPUACCEL_ALL_REDUCE_OVERLAP", "1")
    for bad in ("0", "-5", "1MB"):
        monkeypatch.setenv("GPUACCEL_ALL_REDUCE_BUCKET_BYTES", bad)
        with pytest.raises(ValueError, match="GPUACCEL_ALL_REDUCE_BUCKET_BYTES=.*positive"):
            _fit.all_reduce_options()


def test_communication_options_set_the_bucket_size_as_tf_names_it(monkeypatch):
    monkeypatch.delenv("GPUACCEL_ALL_REDUCE_BUCKET_BYTES", raising=False)
    options = tf.distribute.experimental.CommunicationOptions(bytes_per_pack=1 << 20,
                                                              implementation="ring")
    assert options.implementation is tf.distribute.experimental.CommunicationImplementation.RING
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    assert strategy.communication_options is options
    assert _fit.all_reduce_options(strategy) == (True, 1 << 20)
    # 0 is TF's "decide automatically".
    default = tf.distribute.MultiWorkerMirroredStrategy(
        communication_options=tf.distribute.experimental.CommunicationOptions())
    assert _fit.all_reduce_options(default)[1] == _C.DEFAULT_ALL_REDUCE_BUCKET_BYTES
    with pytest.raises(ValueError, match=r"bytes_per_pack must be in \[0, 2\*\*63 - 1\], got -1"):
        tf.distribute.experimental.CommunicationOptions(bytes_per_pack=-1)
    with pytest.raises(ValueError, match="timeout_seconds must be a positive"):
        tf.distribute.experimental.CommunicationOptions(timeout_seconds=0)
    with pytest.raises(ValueError, match="implementation must be one of AUTO, RING, NCCL"):
        tf.distribute.experimental.CommunicationOptions(implementation="MPI")
    with pytest.raises(ValueError, match="communication_options must be a"):
        tf.distribute.MultiWorkerMirroredStrategy(communication_options={"bytes_per_pack": 1})


def test_weights_set_between_fits_reach_every_replica():
    two_logical_cpus()
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        model = distribute_programs.equivalence_model("sgd")
    distribute_programs.train_ten_steps(model)
    zeros = [np.zeros_like(w) for w in model.get_weights()]
    model.set_weights(zeros)
    x, y = distribute_programs.equivalence_data()
    model.fit(x[:64], y[:64], batch_size=64, epochs=1, verbose=0)
    # From all-zero weights ReLU layers pass no gradient to the kernels: only the last bias
    # moves, and it must be the same on both replicas.
    for w, c in zip(model.get_weights(), model._replicated_fit._clones[0].get_weights()):
        np.testing.assert_array_equal(w, c)
    assert np.abs(model.get_weights()[-1]).max() > 0


def test_model_built_outside_the_scope_raises_tensorflows_error():
    two_logical_cpus()
    model = distribute_programs.equivalence_model("sgd")
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        with pytest.raises(ValueError) as error:
            model.compile(optimizer="sgd", loss="mse")
    message = str(error.value)
    assert "was not created in the distribution strategy scope of" in message
    assert "Try to make sure your code looks similar to the following.\nwith strategy.scope():" \
        "\n  model=_create_model()\n  model.compile(...)" in message


def test_seed_article_mirrored_program_runs_with_only_the_import_changed(monkeypatch):
    two_logical_cpus()
    # Saved first, so the real load_data comes back after the test.
    monkeypatch.setattr(keras.datasets.mnist, "load_data", keras.datasets.mnist.load_data)
    distribute_programs.patch_mnist(keras.datasets.mnist)
    namespace = {}
    exec(distribute_programs.SEED_MIRRORED, namespace)  # noqa: S102 - our test program
    strategy, model = namespace["strategy"], namespace["model"]
    assert strategy.num_replicas_in_sync == 2
    history = model.history.history
    assert len(history["loss"]) == 5 and np.isfinite(history["val_loss"]).all()
    assert model._replicated_fit is not None


# The first step of a fresh process, where both replicas reach each convolution shape at once
# and the CPU backend chooses its backward-data kernel by timing the candidates
# (docs/benchmarks.md): concurrent choices once corrupted the heap in 10-50% of such processes
# (oneDNN's own primitive cache, docs/reliability.md "Concurrent implementation measurements";
# the C++ two-thread tests in onednn_context_test.cc are the sharper guard), so four fresh
# processes catch a regression of the whole path most of the time.
FRESH_MIRRORED_CONV_FIT = """
import numpy as np, gpuaccel as tf
from gpuaccel import keras
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
tf.config.threading.set_intra_op_parallelism_threads(2)
rng = np.random.default_rng(0)
x = rng.random((256, 28, 28, 1), dtype=np.float32); y = rng.integers(0, 10, 256)
L = keras.layers
with tf.distribute.MirroredStrategy().scope():
    model = keras.Sequential([keras.Input((28, 28, 1)), L.Conv2D(32, 3, activation="relu"),
        L.MaxPooling2D(2), L.Conv2D(64, 3, activation="relu"), L.MaxPooling2D(2),
        L.Conv2D(64, 3, activation="relu"), L.Flatten(), L.Dense(64, activation="relu"),
        L.Dense(10)])
    model.compile(optimizer="adam", metrics=["accuracy"],
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
for _ in range(3):
    model.fit(x, y, epochs=1, batch_size=64, verbose=0)
print("trained")
"""


def test_fresh_processes_fit_conv_replicas_while_choosing_kernels():
    env = dict(os.environ, GPUACCEL_ONEDNN_CONV_BWD_DATA="measure")
    for attempt in range(4):
        done = subprocess.run([sys.executable, "-c", FRESH_MIRRORED_CONV_FIT], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and "trained" in done.stdout, (
            f"attempt {attempt}: exit {done.returncode}\n{done.stderr[-2000:]}")


# ---- several workers ----

def run_workers(*args, count=2, timeout_seconds=60, mode=OVERLAPPED, gpu_per_worker=False,
                modes=None):
    """Runs `count` workers of distribute_worker.py with the all-reduce `mode` (or worker i with
    `modes[i]`); `gpu_per_worker`: worker i sees only GPU i (else none: the workers train on
    their CPUs through Gloo)."""
    ports = [free_port() for _ in range(count)]
    gpus = [{"CUDA_VISIBLE_DEVICES": str(i) if gpu_per_worker else ""} for i in range(count)]
    modes = modes or [mode] * count
    procs = [subprocess.Popen([sys.executable, WORKER, *args],
                              env=dict(os.environ, TF_CONFIG=tf_config(i, ports),
                                       GPUACCEL_COLLECTIVE_TIMEOUT_SECONDS=str(timeout_seconds),
                                       **modes[i], **gpus[i]),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(count)]
    results = []
    for proc in procs:
        code, out, err = finish(proc)
        assert code == 0, err[-3000:]
        lines = out.strip().splitlines()
        if lines:
            results.append(json.loads(lines[-1]))
    return results


@needs_gloo
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_two_worker_processes_match_one_replica_on_the_global_batch(optimizer):
    expected, _ = distribute_programs.reference_weights(optimizer)
    results = run_workers("steps", optimizer)
    assert sorted(r["rank"] for r in results) == [0, 1]
    for r in results:
        assert r["replicas"] == 2
        for w, e in zip(r["weights"], expected):
            np.testing.assert_allclose(np.asarray(w, np.float32), e, atol=ATOL, rtol=1e-4)
    # Every worker applied the same updates.
    for a, b in zip(results[0]["weights"], results[1]["weights"]):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@needs_gloo
def test_two_worker_processes_agree_with_the_all_reduce_overlapped_or_blocking():
    expected, _ = distribute_programs.reference_weights("sgd")
    blocking = run_workers("steps", "sgd", mode=BLOCKING)
    overlapped = run_workers("steps", "sgd", mode=OVERLAPPED)
    for a, b, e in zip(blocking[0]["weights"], overlapped[0]["weights"], expected):
        np.testing.assert_allclose(np.asarray(a, np.float32), e, atol=ATOL, rtol=1e-4)
        np.testing.assert_allclose(np.asarray(a, np.float32), np.asarray(b, np.float32),
                                   atol=1e-6, rtol=1e-6)


@needs_gloo
def test_workers_with_different_all_reduce_options_all_raise_at_once():
    results = run_workers("fit_error", timeout_seconds=60,
                          modes=[OVERLAPPED, dict(OVERLAPPED, GPUACCEL_ALL_REDUCE_BUCKET_BYTES="128")])
    assert sorted(r["rank"] for r in results) == [0, 1]
    for r in results:
        assert r["raised"] is not None and r["raised"].startswith("InvalidArgumentError"), r
        assert "1 worker(s) use other gradient all-reduce options than worker 0 (overlapped " \
               "all-reduce, buckets of 64 bytes" in r["raised"]
        assert r["seconds"] < 30  # not the 60 s timeout of a mismatched collective
    (worker1,) = [r for r in results if r["rank"] == 1]
    assert "this worker: overlapped all-reduce, buckets of 128 bytes" in worker1["raised"]


@needs_gloo
def test_seed_article_multi_worker_program_runs_as_two_processes():
    results = run_workers("seed_program")
    assert results[0]["weights"] == results[1]["weights"]
    for r in results:
        assert len(r["history"]["loss"]) == 5
        assert r["history"]["loss"] == results[0]["history"]["loss"]  # logged globally


@needs_gloo
@pytest.mark.parametrize("mode", [OVERLAPPED, BLOCKING], ids=["overlapped", "blocking"])
def test_a_worker_that_leaves_makes_the_others_fit_raise_within_the_timeout(mode):
    (result,) = run_workers("one_leaves", timeout_seconds=5, mode=mode)
    assert result["raised"] is not None and result["raised"].startswith("UnavailableError")
    assert result["seconds"] < 5 + 30  # the timeout, plus a loaded machine's slack


# ---- GPU workers (NCCL) ----

def test_gpu_workers_join_through_nccl_not_gloo(two_simulated_gpus, monkeypatch):
    # No GPU here: the simulated ones make the strategy choose NCCL; the engine is faked.
    calls = []
    monkeypatch.setenv("TF_CONFIG", tf_config(1, [free_port(), free_port()]))
    monkeypatch.setattr(_C.collective, "create_nccl",
                        lambda *args: calls.append(("nccl", args)) or "nccl rank")
    monkeypatch.setattr(_C.collective, "create_gloo",
                        lambda *args: calls.append(("gloo", args)) or "gloo rank")
    options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=7)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    assert [name for name, _ in calls] == ["nccl"]
    device, cluster, timeout = calls[0][1]
    assert device == "/device:GPU:0" and timeout == 7
    assert (cluster.rank, cluster.world_size) == (1, 2)
    assert strategy.collective == "nccl rank"
    assert list(strategy.worker_devices) == ["/device:GPU:0"]
    assert strategy.num_replicas_in_sync == 2


@pytest.mark.gpu
def test_overlapped_all_reduce_on_a_one_rank_nccl_communicator_matches_one_replica():
    # One GPU runs a one-rank communicator: the buckets go through NCCL's communication stream
    # while the backward pass runs on the compute stream; the sum of one rank is the gradient.
    expected, _ = distribute_programs.reference_weights("adam")
    with tf.device("/GPU:0"):
        model = distribute_programs.equivalence_model("adam")
        collective = _C.collective.create_nccl("GPU:0", spec=_C.collective.ClusterSpec(),
                                               timeout_seconds=60)
        trainer = _C.ReplicatedTrainer(model._graph(), model.optimizer._cpp, [], model.loss._cpp,
                                       0, collective, overlap=True, bucket_bytes=64)
        x, y = distribute_programs.equivalence_data()
        for step in range(10):
            rows = slice(64 * step, 64 * (step + 1))
            trainer.train_step([tf.constant(x[rows])], tf.constant(y[rows]))
    for w, e in zip(model.get_weights(), expected):
        np.testing.assert_allclose(w, e, atol=1e-4, rtol=1e-3)


@pytest.mark.gpu
def test_two_gpu_worker_processes_match_one_replica():
    if len(tf.config.list_physical_devices("GPU")) < 2:
        pytest.skip("needs two GPUs: NCCL refuses two ranks on one GPU")
    expected, _ = distribute_programs.reference_weights("adam")
    results = run_workers("steps", "adam", mode=OVERLAPPED, gpu_per_worker=True)
    for r in results:
        for w, e in zip(r["weights"], expected):
            np.testing.assert_allclose(np.asarray(w, np.float32), e, atol=1e-4, rtol=1e-3)
    for a, b in zip(results[0]["weights"], results[1]["weights"]):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


# ---- the idle GPUs (class 171) ----

def test_idle_gpus_message_names_the_idle_count_and_the_fix():
    assert _idle_gpus.idle_gpus_message(0) is None
    assert _idle_gpus.idle_gpus_message(1) is None
    message = _idle_gpus.idle_gpus_message(4)
    assert "4 GPUs are visible" in message and "3 GPUs are idle" in message
    assert "strategy = tf.distribute.MirroredStrategy()" in message
    assert "with strategy.scope():" in message
    assert "1 GPU is idle" in _idle_gpus.idle_gpus_message(2)
    with pytest.raises(ValueError, match="visible_gpus"):
        _idle_gpus.idle_gpus_message(-1)


def test_idle_gpus_warning_prints_once(monkeypatch):
    monkeypatch.setattr(_idle_gpus, "_warned", False)
    stream = io.StringIO()
    assert not _idle_gpus.warn_idle_gpus_once(1, stream)
    assert _idle_gpus.warn_idle_gpus_once(2, stream)
    assert not _idle_gpus.warn_idle_gpus_once(2, stream)
    assert stream.getvalue().count("GPUs are visible") == 1


def test_fit_without_a_strategy_on_two_gpus_prints_the_fix_once(two_simulated_gpus, monkeypatch,
                                                                 capsys):
    monkeypatch.setattr(_idle_gpus, "_warned", False)
    with tf.device("/CPU:0"):  # simulated GPUs run nothing: the model trains on the CPU
        model = distribute_programs.equivalence_model("sgd")
        x, y = distribute_programs.equivalence_data()
        model.fit(x[:64], y[:64], batch_size=64, verbose=0)
        model.fit(x[:64], y[:64], batch_size=64, verbose=0)
    err = capsys.readouterr().err
    assert err.count("2 GPUs are visible but fit() trains on one; 1 GPU is idle") == 1, err
    assert "strategy = tf.distribute.MirroredStrategy()\n    with strategy.scope():" in err


def test_fit_on_one_device_says_nothing(monkeypatch, capsys):
    monkeypatch.setattr(_idle_gpus, "_warned", False)
    model = distribute_programs.equivalence_model("sgd")
    x, y = distribute_programs.equivalence_data()
    model.fit(x[:64], y[:64], batch_size=64, verbose=0)
    assert "GPUs are visible" not in capsys.readouterr().err


# ---- logical GPUs split from one physical GPU (the fake CUDA library's GPU 0) ----

SPLIT_GPU_PROBE_BODY = r"""
import json, os, sys
import numpy as np
sys.path.insert(0, os.environ["TESTS_DIR"])
import distribute_programs
import gpuaccel as tf
from gpuaccel.config import LogicalDeviceConfiguration

gpu0 = tf.config.list_physical_devices("GPU")[0]
tf.config.set_visible_devices([gpu0], "GPU")  # a one-GPU machine (the fake has two)
tf.config.set_logical_device_configuration(
    gpu0, [LogicalDeviceConfiguration(memory_limit=64), LogicalDeviceConfiguration(memory_limit=64)])
out = {"logical_gpus": [d.name for d in tf.config.list_logical_devices("GPU")]}
try:
    tf.distribute.MirroredStrategy(cross_device_ops=tf.distribute.NcclAllReduce())
    out["nccl"] = None
except ValueError as e:
    out["nccl"] = str(e)
expected, expected_history = distribute_programs.reference_weights("adam")
strategy = tf.distribute.MirroredStrategy()
out["replicas"] = strategy.num_replicas_in_sync
with strategy.scope():
    model = distribute_programs.equivalence_model("adam")
ops, to_host = fake_counters.ops, fake_counters.copies_to_host
history = distribute_programs.train_ten_steps(model)
out["gpu_ops"] = fake_counters.ops - ops  # the replicas ran on the (fake) GPUs
out["copies_to_host"] = fake_counters.copies_to_host - to_host  # gradients staged to the host
out["max_abs_diff"] = max(float(np.abs(a - b).max()) for a, b in zip(model.get_weights(), expected))
out["loss"] = [history["loss"][0], expected_history["loss"][0]]
print(json.dumps(out))
"""


def test_mirrored_strategy_on_logical_gpus_of_one_gpu_reduces_without_nccl():
    """Two logical GPUs on one physical GPU (how a one-GPU Colab tries MirroredStrategy): NCCL
    refuses two ranks on one device, so the replicas sum through host memory (TF falls back to
    ReductionToOneDevice for virtual GPUs) and match one replica on the global batch. The fake
    library has no NCCL: choosing it would fail here."""
    from test_library_backend import FAKE_COUNTERS, run_with_fake
    r = run_with_fake(FAKE_COUNTERS + SPLIT_GPU_PROBE_BODY,
                      TESTS_DIR=os.path.dirname(os.path.abspath(__file__)))
    assert r["logical_gpus"] == ["/device:GPU:0", "/device:GPU:1"]
    assert r["nccl"] is not None and "Duplicate GPU detected" in r["nccl"]
    assert "ReductionToOneDevice()" in r["nccl"]
    assert r["replicas"] == 2
    assert r["gpu_ops"] > 0 and r["copies_to_host"] >= 2 * 10, r  # each rank, every step
    assert r["max_abs_diff"] <= ATOL, r
    assert r["loss"][0] == pytest.approx(r["loss"][1], abs=ATOL)


def test_reduction_to_one_device_is_accepted_for_logical_gpus_sharing_one_gpu():
    from gpuaccel.distribute._cross_device_ops import check_cross_device_ops
    one = tf.distribute.ReductionToOneDevice()
    assert check_cross_device_ops(one, "GPU", 2, gpus_share_a_device=True) is one
    with pytest.raises(ValueError, match="Duplicate GPU detected"):
        check_cross_device_ops(tf.distribute.NcclAllReduce(), "GPU", 2, gpus_share_a_device=True)
    with pytest.raises(NotImplementedError, match="reduce_to_device and accumulation_fn"):
        check_cross_device_ops(tf.distribute.ReductionToOneDevice(reduce_to_device="/gpu:0"),
                               "GPU", 2, gpus_share_a_device=True)
