"""``tf.distribute``'s cluster resolvers, input helpers and context queries compared with
TensorFlow in this process (none of them configures TensorFlow's runtime): the same
expressions give the same value, or the same error with the same words."""
import json

import numpy as np
import pytest
import tensorflow as tf

import gpuaccel as ga
from gpuaccel.config import LogicalDeviceConfiguration
from runtime_fixtures import fresh_runtime  # noqa: F401

TF_CONFIG = {"cluster": {"worker": ["host1:2222", "host2:2222"], "chief": ["host0:2222"],
                         "ps": ["p:1"]},
             "task": {"type": "worker", "index": 1}}


def _frameworks():
    """{name: the eval scope in which ``distribute`` and ``ClusterSpec`` are that framework's}."""
    return {"tensorflow": {"distribute": tf.distribute, "ClusterSpec": tf.train.ClusterSpec,
                           "VariableAggregation": tf.VariableAggregation},
            "gpuaccel": {"distribute": ga.distribute,
                         "ClusterSpec": ga.distribute.cluster_resolver.ClusterSpec}}


def _outcome(expression, scope):
    try:
        return ("value", repr(eval(expression, dict(scope))))
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return ("error", type(e).__name__, str(e))


def _assert_same(expression):
    theirs, ours = (_outcome(expression, scope) for scope in _frameworks().values())
    assert ours == theirs, expression


RESOLVER_EXPRESSIONS = [
    "distribute.cluster_resolver.TFConfigClusterResolver().cluster_spec()",
    "distribute.cluster_resolver.TFConfigClusterResolver().cluster_spec().as_dict()",
    "distribute.cluster_resolver.TFConfigClusterResolver().cluster_spec().jobs",
    "distribute.cluster_resolver.TFConfigClusterResolver().task_type",
    "distribute.cluster_resolver.TFConfigClusterResolver().task_id",
    "distribute.cluster_resolver.TFConfigClusterResolver().rpc_layer",
    "distribute.cluster_resolver.TFConfigClusterResolver().environment",
    "distribute.cluster_resolver.TFConfigClusterResolver().master()",
    "distribute.cluster_resolver.TFConfigClusterResolver().master('chief', 0)",
    "distribute.cluster_resolver.TFConfigClusterResolver().master('worker', 1, 'grpc')",
    "distribute.cluster_resolver.TFConfigClusterResolver(rpc_layer='grpc').master()",
    "distribute.cluster_resolver.TFConfigClusterResolver(task_type='chief', task_id=0).master()",
    "distribute.cluster_resolver.TFConfigClusterResolver().master('evaluator', 0)",
    "dict(distribute.cluster_resolver.TFConfigClusterResolver().num_accelerators())",
    "distribute.cluster_resolver.SimpleClusterResolver(ClusterSpec({'worker': ['a:1', 'b:2']}),"
    " task_type='worker', task_id=0).master()",
    "distribute.cluster_resolver.SimpleClusterResolver(ClusterSpec({'worker': ['a:1', 'b:2']}),"
    " master='grpc://a:1').master()",
    "distribute.cluster_resolver.SimpleClusterResolver(ClusterSpec({'worker': ['a:1', 'b:2']}),"
    " rpc_layer='grpc').master('worker', 1)",
    "distribute.cluster_resolver.SimpleClusterResolver(ClusterSpec({'worker': ['a:1']})"
    ").task_type",
    "distribute.cluster_resolver.SimpleClusterResolver(ClusterSpec({'worker': ['a:1']}), "
    "num_accelerators={'GPU': 2}).num_accelerators()",
    "distribute.cluster_resolver.SimpleClusterResolver({'worker': ['a:1']})",
    "distribute.cluster_resolver.SimpleClusterResolver(ClusterSpec({}), master=3)",
    "ClusterSpec({'worker': {1: 'b:2', 3: 'c:3'}}).as_dict()",
    "ClusterSpec({'worker': {1: 'b:2', 3: 'c:3'}}).job_tasks('worker')",
    "ClusterSpec({'worker': {1: 'b:2', 3: 'c:3'}}).task_indices('worker')",
    "ClusterSpec({'worker': ['a:1']}) == ClusterSpec({'worker': ['a:1']})",
    "ClusterSpec({'worker': ['a:1']}) != ClusterSpec({'worker': ['a:2']})",
    "ClusterSpec({'worker': ['a:1'], 'chief': ['c:0']}).num_tasks('worker')",
    "ClusterSpec(ClusterSpec({'worker': ['a:1'], 'chief': ['c:0']})).jobs",
    "ClusterSpec({'worker': ['a:1']}).task_address('worker', 5)",
    "ClusterSpec({'worker': ['a:1']}).num_tasks('ps')",
    "(ClusterSpec({}), bool(ClusterSpec({})), bool(ClusterSpec({'w': ['a:1']})))",
    "ClusterSpec(5)",
    "ClusterSpec({'worker': 'a:1'})",
]


@pytest.mark.parametrize("expression", RESOLVER_EXPRESSIONS)
def test_cluster_resolvers_read_tf_config_as_tensorflow(monkeypatch, expression):
    monkeypatch.setenv("TF_CONFIG", json.dumps(TF_CONFIG))
    _assert_same(expression)


@pytest.mark.parametrize("expression", [
    "distribute.cluster_resolver.TFConfigClusterResolver().cluster_spec()",
    "distribute.cluster_resolver.TFConfigClusterResolver().task_type",
    "distribute.cluster_resolver.TFConfigClusterResolver().master()",
])
@pytest.mark.parametrize("tf_config", [None, '{"cluster": {"worker": ["a:1"]}, "task": '
                                             '{"type": "worker", "index": 0}, '
                                             '"rpc_layer": "grpc"}', "{not json"])
def test_cluster_resolvers_without_or_with_odd_tf_config(monkeypatch, tf_config, expression):
    if tf_config is None:
        monkeypatch.delenv("TF_CONFIG", raising=False)
    else:
        monkeypatch.setenv("TF_CONFIG", tf_config)
    _assert_same(expression)


@pytest.mark.parametrize("expression", [
    "str(distribute.InputContext(num_input_pipelines=2, input_pipeline_id=1, "
    "num_replicas_in_sync=4))",
    "[getattr(distribute.InputContext(2, 1, 4), a) for a in ('num_input_pipelines', "
    "'input_pipeline_id', 'num_replicas_in_sync')]",
    "distribute.InputContext(2, 1, 4).get_per_replica_batch_size(64)",
    "distribute.InputContext(2, 1, 4).get_per_replica_batch_size(30)",
    "distribute.InputContext().num_replicas_in_sync",
    "distribute.InputOptions()",
    "distribute.InputOptions(experimental_fetch_to_device=False)",
    "distribute.InputOptions()._fields",
    "distribute.InputOptions() == distribute.InputOptions()",
    "distribute.InputOptions(bogus=1)",
    "list(distribute.InputReplicationMode)",
    "distribute.InputReplicationMode('PER_REPLICA')",
    "list(distribute.ReduceOp)",
    "distribute.ReduceOp('MEAN')",
    "distribute.ReduceOp.SUM.value",
])
def test_input_records_and_reduce_op_match_tensorflow(expression):
    _assert_same(expression)


def _contexts(distribute, strategy):
    """(outside, in the scope, inside run) answers of the context queries."""
    def ask():
        context = distribute.get_replica_context()
        return (distribute.in_cross_replica_context(), distribute.has_strategy(),
                None if context is None else
                (int(context.replica_id_in_sync_group), context.num_replicas_in_sync))
    outside = ask()
    with strategy.scope():
        in_scope = ask() + (distribute.get_strategy() is strategy,)
        in_run = strategy.run(ask)
    return outside, in_scope, in_run


def test_context_queries_match_tensorflow():
    assert ga.distribute.in_cross_replica_context() is tf.distribute.in_cross_replica_context()
    ours = _contexts(ga.distribute, ga.distribute.OneDeviceStrategy("/cpu:0"))
    theirs = _contexts(tf.distribute, tf.distribute.OneDeviceStrategy("/cpu:0"))
    assert ours == theirs
    assert theirs[0] == (False, False, (0, 1))  # not vacuous: the default replica context


def _datasets(distribute, data, strategy):
    seen = []

    def dataset_fn(context):
        seen.append((context.num_input_pipelines, context.input_pipeline_id,
                     context.num_replicas_in_sync))
        return data.Dataset.range(10).batch(context.get_per_replica_batch_size(4))

    from_function = [np.asarray(x).tolist()
                     for x in strategy.distribute_datasets_from_function(dataset_fn)]
    distributed = [np.asarray(x).tolist() for x in strategy.experimental_distribute_dataset(
        data.Dataset.range(5).batch(2))]
    return seen, from_function, distributed


@pytest.mark.parametrize("strategy", ["default", "one_device"])
def test_distributed_datasets_match_tensorflow(strategy):
    def make(distribute):
        return distribute.get_strategy() if strategy == "default" else \
            distribute.OneDeviceStrategy("/cpu:0")
    theirs = _datasets(tf.distribute, tf.data, make(tf.distribute))
    ours = _datasets(ga.distribute, ga.data, make(ga.distribute))
    assert ours == theirs
    assert theirs[1] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_per_replica_input_mode_is_refused_as_tensorflow_does_outside_mirrored():
    options = "distribute.InputOptions(experimental_replication_mode=" \
              "distribute.InputReplicationMode.PER_REPLICA)"
    for distribute in (tf.distribute, ga.distribute):
        strategy = distribute.OneDeviceStrategy("/cpu:0")
        with pytest.raises(NotImplementedError, match="PER_REPLICA"):
            strategy.distribute_datasets_from_function(
                lambda context: None, options=eval(options, {"distribute": distribute}))


# ---- gpuaccel only: two replicas in this process (two logical CPUs) ----

@pytest.mark.usefixtures("fresh_runtime")
def test_two_replicas_take_consecutive_batches_and_the_short_one_gets_an_empty_batch():
    cpu = ga.config.list_physical_devices("CPU")[0]
    ga.config.set_logical_device_configuration(
        cpu, [LogicalDeviceConfiguration(), LogicalDeviceConfiguration()])
    strategy = ga.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    seen = []

    def dataset_fn(context):
        seen.append((context.num_input_pipelines, context.input_pipeline_id,
                     context.num_replicas_in_sync))
        per_replica = context.get_per_replica_batch_size(4)
        return ga.data.Dataset.range(10).batch(per_replica)

    steps = [[np.asarray(v).tolist() for v in step.values]
             for step in strategy.distribute_datasets_from_function(dataset_fn)]
    assert seen == [(1, 0, 2)]
    assert steps == [[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8, 9], []]]
    with pytest.raises(NotImplementedError, match="one replica per process"):
        strategy.distribute_datasets_from_function(dataset_fn).unwrap()


@pytest.mark.usefixtures("fresh_runtime")
def test_multi_worker_strategy_takes_a_resolver_that_reads_tf_config(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    resolver = ga.distribute.cluster_resolver.TFConfigClusterResolver()
    strategy = ga.distribute.MultiWorkerMirroredStrategy(cluster_resolver=resolver)
    assert strategy.cluster_resolver is resolver and strategy.num_replicas_in_sync == 1
    with pytest.raises(NotImplementedError, match="reads TF_CONFIG as it is"):
        ga.distribute.MultiWorkerMirroredStrategy(
            cluster_resolver=ga.distribute.cluster_resolver.TFConfigClusterResolver(
                task_type="worker", task_id=3))
