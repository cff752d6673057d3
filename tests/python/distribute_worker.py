"""One worker of the multi-worker tests (test_distribute.py starts two with TF_CONFIG):

- ``steps <optimizer>``: the equivalence model trained 10 steps of a global batch of 64 under
  MultiWorkerMirroredStrategy; prints the weights as JSON.
- ``seed_program``: the seed article's MultiWorkerMirroredStrategy program with only its
  imports changed (MNIST replaced by a small random set of the same shapes); prints the logs.
- ``one_leaves``: worker 1 exits once its join returns; worker 0 must then raise
  UnavailableError (while joining or in fit; not hang); prints what it raised and after how long.
- ``fit_error``: as ``steps`` with SGD, but prints what fit raised (the workers' environments
  differ) and after how long.
"""
import json
import os
import sys
import time

import numpy as np

import gpuaccel as tf
from gpuaccel import keras

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import distribute_programs  # noqa: E402


def main(mode, argument=None):
    if mode == "steps":
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        with strategy.scope():
            model = distribute_programs.equivalence_model(argument)
        distribute_programs.train_ten_steps(model)
        print(json.dumps({"rank": strategy.worker_index,
                          "replicas": strategy.num_replicas_in_sync,
                          "weights": [w.tolist() for w in model.get_weights()]}))
    elif mode == "seed_program":
        distribute_programs.patch_mnist(keras.datasets.mnist)
        namespace = {}
        exec(distribute_programs.SEED_MULTI_WORKER, namespace)  # noqa: S102 - our test program
        history = namespace["model"].history.history
        print(json.dumps({"history": {k: [float(v) for v in vs] for k, vs in history.items()},
                          "weights": float(sum(np.abs(w).sum()
                                               for w in namespace["model"].get_weights()))}))
    elif mode in ("one_leaves", "fit_error"):
        expected = tf.errors.UnavailableError if mode == "one_leaves" else tf.errors.OpError
        rank = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
        start = time.monotonic()
        try:
            # Worker 1 leaves as soon as its own join returns, which can be before worker 0's
            # has finished connecting: worker 0 may then raise while joining instead of in fit.
            # Either is the rule under test (a clear error within the timeout, no hang).
            strategy = tf.distribute.MultiWorkerMirroredStrategy()
            if mode == "one_leaves" and rank == 1:
                return
            with strategy.scope():
                model = distribute_programs.equivalence_model("sgd")
            distribute_programs.train_ten_steps(model)
            raised = None
        except expected as error:
            raised = type(error).__name__ + ": " + str(error)
        print(json.dumps({"rank": rank, "raised": raised, "seconds": time.monotonic() - start}))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(*sys.argv[1:])
