"""``tf.distribute``'s classes around ``run`` and distributed datasets (Strategy,
StrategyExtended, ReplicaContext, DistributedValues, DistributedDataset, DistributedIterator,
RunOptions, experimental_set_strategy) compared with TensorFlow on a MirroredStrategy of two
logical CPUs: the same probe runs in both frameworks and answers the same.

TensorFlow splits its CPU into two logical devices only before its runtime starts, which other
tests in this process may already have done, so its half of the probe runs in a child Python
(one per module); gpuaccel's runs here on a fresh runtime."""
import json
import os
import subprocess
import sys

import pytest

import gpuaccel as ga
from gpuaccel.config import LogicalDeviceConfiguration
from runtime_fixtures import fresh_runtime, package_environment  # noqa: F401

tf = pytest.importorskip("tensorflow")

HERE = os.path.dirname(os.path.abspath(__file__))

_TF_CHILD = """
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
sys.path.insert(0, {here!r})
from test_tf_distribute_values import probe
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
print(json.dumps(probe(tf)))
"""


def _ints(strategy, value):
    return [_numbers(v) for v in strategy.experimental_local_results(value)]


def _numbers(value):
    import numpy as np
    return np.asarray(value).tolist()


def _device_suffixes(devices):
    """'device:CPU:1' of TF's '/job:localhost/replica:0/task:0/device:CPU:1' and of gpuaccel's
    '/device:CPU:1' (gpuaccel has no jobs or tasks in its names)."""
    return [d[d.index("device:"):] for d in devices]


def probe(framework):
    """What ``framework`` (tensorflow or gpuaccel, its CPU split in two) answers."""
    distribute = framework.distribute
    strategy = distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    extended = strategy.extended
    out = {
        "strategy": isinstance(strategy, distribute.Strategy),
        "extended": [isinstance(extended, distribute.StrategyExtended),
                     _device_suffixes(extended.worker_devices),
                     _device_suffixes(extended.parameter_devices),
                     extended.experimental_require_static_shapes],
        "run_options": [list(distribute.RunOptions._fields), list(distribute.RunOptions())],
    }

    # Noted from inside, not returned: TF regroups a returned tuple, or a Python value every
    # replica returns, differently from gpuaccel's run (one PerReplica of whatever fn returns).
    seen = []

    def replica_facts():
        context = distribute.get_replica_context()
        seen.append([isinstance(context, distribute.ReplicaContext),
                     int(context.replica_id_in_sync_group), context.num_replicas_in_sync])
        return framework.constant(0)
    strategy.run(replica_facts)
    out["replica_context"] = sorted(seen)  # TF runs its replicas in threads
    replica_ids = strategy.run(
        lambda: distribute.get_replica_context().replica_id_in_sync_group,
        options=distribute.RunOptions())
    single = distribute.OneDeviceStrategy("/cpu:0").run(lambda: framework.constant(1))
    out["distributed_values"] = [isinstance(replica_ids, distribute.DistributedValues),
                                 _ints(strategy, replica_ids),
                                 isinstance(single, distribute.DistributedValues)]

    dataset = strategy.experimental_distribute_dataset(framework.data.Dataset.range(10).batch(4))
    iterator = iter(dataset)
    steps = [_ints(strategy, iterator.get_next()), _ints(strategy, next(iterator))]
    steps += [_ints(strategy, step) for step in iterator]
    try:
        iterator.get_next()
        end = None
    except framework.errors.OutOfRangeError:
        end = "OutOfRangeError"
    total = dataset.reduce(framework.constant(0, dtype=framework.int64), lambda state, element:
                           state + framework.add_n([framework.reduce_sum(v) for v in
                                                    strategy.experimental_local_results(element)]))
    out["dataset"] = [isinstance(dataset, distribute.DistributedDataset),
                      isinstance(iterator, distribute.DistributedIterator), steps, end,
                      int(total)]

    other = distribute.OneDeviceStrategy("/cpu:0")
    try:
        distribute.experimental_set_strategy(strategy)
        current = [distribute.get_strategy() is strategy, distribute.has_strategy(),
                   distribute.in_cross_replica_context()]
        try:
            with other.scope():
                pass
        except RuntimeError as e:
            current.append(str(e).split(":")[0])
    finally:
        distribute.experimental_set_strategy(None)
    current.append(distribute.has_strategy())
    with strategy.scope():
        try:
            distribute.experimental_set_strategy(other)
        except RuntimeError as e:
            current.append(str(e))
    current.append(distribute.has_strategy())
    out["set_strategy"] = current
    return out


@pytest.fixture(scope="module")
def tensorflow_answers():
    done = subprocess.run([sys.executable, "-c", _TF_CHILD.format(here=HERE)],
                          capture_output=True, text=True, timeout=300,
                          env=package_environment())
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.usefixtures("fresh_runtime")
def test_distribute_classes_answer_as_tensorflow(tensorflow_answers):
    cpu = ga.config.list_physical_devices("CPU")[0]
    ga.config.set_logical_device_configuration(
        cpu, [LogicalDeviceConfiguration(), LogicalDeviceConfiguration()])
    ours = json.loads(json.dumps(probe(ga)))  # tuples as lists, as the child's JSON has them
    assert ours == tensorflow_answers
    # not vacuous: two replicas, and the last batch of 2 rows split one per replica
    assert tensorflow_answers["dataset"][2] == [[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8], [9]]]
    assert tensorflow_answers["distributed_values"] == [True, [0, 1], False]
    assert not ga.distribute.has_strategy()


def _outcome(action):
    try:
        return ("value", action())
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return ("error", type(e).__name__, str(e))


@pytest.mark.parametrize("which", ["one_device", "default"])
def test_one_replica_classes_match_tensorflow_in_this_process(which):
    """One replica needs no split CPU, so TensorFlow answers here. The default strategy's
    dataset is the dataset itself and its devices are TF's RuntimeError, in both."""
    def strategy(distribute):
        return distribute.OneDeviceStrategy("/cpu:0") if which == "one_device" else \
            distribute.get_strategy()
    theirs_strategy, ours_strategy = strategy(tf.distribute), strategy(ga.distribute)
    theirs_dataset = theirs_strategy.experimental_distribute_dataset(
        tf.data.Dataset.range(4).batch(2))
    ours_dataset = ours_strategy.experimental_distribute_dataset(
        ga.data.Dataset.range(4).batch(2))
    theirs = [isinstance(theirs_strategy, tf.distribute.Strategy),
              isinstance(theirs_strategy.extended, tf.distribute.StrategyExtended),
              isinstance(theirs_dataset, tf.distribute.DistributedDataset),
              isinstance(iter(theirs_dataset), tf.distribute.DistributedIterator),
              isinstance(tf.distribute.get_replica_context(), tf.distribute.ReplicaContext),
              isinstance(theirs_strategy.run(lambda: tf.constant(1)),
                         tf.distribute.DistributedValues),
              _outcome(lambda: _device_suffixes(theirs_strategy.extended.worker_devices)),
              _outcome(lambda: _device_suffixes(theirs_strategy.extended.parameter_devices))]
    ours = [isinstance(ours_strategy, ga.distribute.Strategy),
            isinstance(ours_strategy.extended, ga.distribute.StrategyExtended),
            isinstance(ours_dataset, ga.distribute.DistributedDataset),
            isinstance(iter(ours_dataset), ga.distribute.DistributedIterator),
            isinstance(ga.distribute.get_replica_context(), ga.distribute.ReplicaContext),
            isinstance(ours_strategy.run(lambda: ga.constant(1)),
                       ga.distribute.DistributedValues),
            _outcome(lambda: _device_suffixes(ours_strategy.extended.worker_devices)),
            _outcome(lambda: _device_suffixes(ours_strategy.extended.parameter_devices))]
    assert ours == theirs
    assert theirs[2] is (which == "one_device")  # not vacuous: the two strategies differ


@pytest.mark.parametrize("namespace, name", [
    ("distribute", "ParameterServerStrategy"), ("distribute", "Server"),
    ("distribute", "coordinator"), ("config", "experimental_connect_to_cluster"),
    ("config", "experimental_connect_to_host")])
def test_parameter_servers_and_remote_eager_are_refused_with_what_to_use(namespace, name):
    assert hasattr(getattr(tf, namespace), name)  # TensorFlow has it
    with pytest.raises(AttributeError, match="not supported by gpuaccel.*"
                                             "MultiWorkerMirroredStrategy"):
        getattr(getattr(ga, namespace), name)
