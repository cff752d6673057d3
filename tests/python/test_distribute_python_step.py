"""fit under MirroredStrategy with two replicas (logical CPUs) for what the C++ replicated
trainer does not take, stepped from Python (keras/_replicated_step.py): a model with several
outputs and per-output sample weights, a Dataset's (x, y, sample_weight) elements,
class_weight, and Python and weighted metrics. Each global batch splits evenly, so the logs and
weights must be real Keras's on one device with the whole batch."""
import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel import keras as gk
from gpuaccel.config import LogicalDeviceConfiguration

from runtime_fixtures import fresh_runtime  # noqa: F401
from test_custom_metrics import guide_metrics, keras_ops, ours_ops
from test_keras_multi_output import SW, SW2, X, X2, YA, YB, assert_logs_close, two_head_model

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")

pytestmark = pytest.mark.usefixtures("fresh_runtime")


def two_replicas():
    cpu = ga.config.list_physical_devices("CPU")[0]
    ga.config.set_logical_device_configuration(
        cpu, [LogicalDeviceConfiguration(), LogicalDeviceConfiguration()])
    strategy = ga.distribute.MirroredStrategy()
    assert strategy.num_replicas_in_sync == 2
    return strategy


def assert_weights_close(ours, theirs):
    for g, k in zip(ours, theirs):
        np.testing.assert_allclose(g, k, rtol=1e-4, atol=2e-6)


def test_several_outputs_with_per_output_weights_on_two_replicas_match_keras_on_one():
    theirs = two_head_model(keras)
    with two_replicas().scope():
        ours = two_head_model(gk)
        ours.set_weights(theirs.get_weights())
    results = []
    for lib, model in ((keras, theirs), (gk, ours)):
        model.compile(lib.optimizers.SGD(0.1), loss=["sparse_categorical_crossentropy", "mse"],
                      loss_weights=[0.5, 2.0], metrics=["accuracy", ["mae"]],
                      weighted_metrics=[["accuracy"], ["mse"]])
        history = model.fit([X, X2], [YA, YB], sample_weight=[SW, SW2], epochs=2, batch_size=8,
                            shuffle=False, verbose=0).history
        results.append((history, model.get_weights()))
    assert_logs_close(results[1][0], results[0][0])
    assert_weights_close(results[1][1], results[0][1])
    replicas = ours._replicated_python_step.replicas  # the copy steps on its own device
    assert len(replicas) == 2 and replicas[1].weights[0].device != ours.weights[0].device


def test_dataset_weights_class_weight_and_python_metrics_on_two_replicas_match_keras_on_one():
    x = np.random.default_rng(4).normal(size=(16, 4)).astype("float32")
    y = (x[:, :1] + x[:, 1:2] > 0).astype("float32")
    keras.utils.set_random_seed(0)
    theirs = keras.Sequential([keras.Input((4,)), keras.layers.Dense(6, activation="relu"),
                               keras.layers.Dense(1, activation="sigmoid")])
    with two_replicas().scope():
        ours = gk.Sequential([gk.Input((4,)), gk.layers.Dense(6, activation="relu"),
                              gk.layers.Dense(1, activation="sigmoid")])
        ours.set_weights(theirs.get_weights())
    results = []
    for lib, model, dataset, ops in ((keras, theirs, tf.data.Dataset, keras_ops()),
                                     (gk, ours, ga.data.Dataset, ours_ops())):
        true_positives = guide_metrics(lib, ops)[0]
        model.compile(lib.optimizers.SGD(0.2), "binary_crossentropy",
                      metrics=["accuracy", true_positives()], weighted_metrics=["accuracy"])
        weighted = model.fit(dataset.from_tensor_slices((x, y, SW)).batch(8), epochs=2,
                             verbose=0).history
        by_class = model.fit(x, y, class_weight={0: 0.5, 1: 2.0}, batch_size=8, epochs=1,
                             shuffle=False, verbose=0).history
        unweighted = model.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0).history
        results.append((weighted, by_class, unweighted, model.get_weights()))
    for g, k in zip(results[1][:3], results[0][:3]):
        assert_logs_close(g, k)
    assert_weights_close(results[1][3], results[0][3])
    assert results[1][0]["weighted_accuracy"] != pytest.approx(results[1][0]["accuracy"])


def test_weights_a_python_dataset_brings_mid_fit_are_still_refused_under_two_replicas():
    """A PyDataset does not say before its first batch that it carries sample weights, and
    the C++ replicated step takes none."""
    class Weighted(gk.utils.PyDataset):
        def __len__(self):
            return 1

        def __getitem__(self, index):
            return X, YB, SW

    with two_replicas().scope():
        model = gk.Sequential([gk.Input((4,)), gk.layers.Dense(1)])
        model.compile("sgd", "mse")
    with pytest.raises(NotImplementedError, match="under a distribution strategy with several "
                                                  "replicas are not supported yet"):
        model.fit(Weighted(), verbose=0)


def test_several_outputs_across_worker_processes_are_still_refused():
    """One replica here of two in sync: the other is another worker process, which this step
    does not reach (a stand-in strategy, as a real one needs two processes)."""
    from types import SimpleNamespace
    model = two_head_model(gk)
    model.compile("sgd", loss=["sparse_categorical_crossentropy", "mse"])
    model._distribute_strategy = SimpleNamespace(num_replicas_in_sync=2,
                                                 worker_devices=("/device:CPU:0",))
    with pytest.raises(NotImplementedError, match="across worker processes"):
        model.fit([X, X2], [YA, YB], verbose=0)
