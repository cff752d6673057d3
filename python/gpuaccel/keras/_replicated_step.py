"""fit's step under a distribution strategy with several replicas for what the C++
``ReplicatedTrainer`` does not take: models with several outputs, sample weights (fit's,
``class_weight``'s or a Dataset's) and Python or weighted metrics.

Each global batch is split across the replicas as TF splits it (``distribute/_values.py``).
Each replica (the model, or its copy on the replica's device: ``distribute/_fit.py``) computes
its loss on its part under a GradientTape, divided by the number of replicas as Keras scales a
replica's loss, so the summed gradients are those of the replicas' mean loss; the gradients are
summed on replica 0's device and applied by the model's optimizer (so schedules and constraints
act once), and the other replicas take the new weights before their next part. The loss
trackers and metrics update on every replica's part, as Keras sums its metrics' states across
replicas: when the batch splits evenly, the logs and weights are one replica's on the whole
batch. The replicas step one after the other from Python (the C++ trainer runs them on
threads): the price of these cases, as ``_host_metrics.py`` is for one device."""
from .._tensor import GradientTape, no_grad
from ..distribute import _fit as distribute_fit
from ..distribute._values import split_batch
from ._added_losses_only import total_loss
from ._host_metrics import log_value
from ._multi_output import DeviceMeans, MultiOutputTrainer


class _OneOutputPart:
    """A replica's loss and metric updates for a model with one output."""

    def __init__(self, replica, model, means):
        self.replica, self.model, self.means = replica, model, means

    def losses(self, xs, y, sample_weight):
        y_pred = self.replica._graph().forward(xs, True)[0]
        compiled = None if self.model.loss is None else self.model.loss(y, y_pred, sample_weight)
        return total_loss(compiled, self.replica.losses), (y, y_pred, sample_weight)

    def update(self, total, state):
        y, y_pred, sample_weight = state
        model, y_pred = self.model, y_pred.detach()
        self.means.add(model._loss_tracker, total.detach(), int(y_pred.shape[0]))
        for metric in model.compiled_metrics:
            metric.update_state(y, y_pred)
        for metric in model._weighted_metrics:
            metric.update_state(y, y_pred, sample_weight)


class _SeveralOutputsPart:
    """A replica's loss and metric updates for a model with several outputs (the model's
    compiled outputs and trackers, the replica's forward)."""

    def __init__(self, replica, model, means):
        self.step = MultiOutputTrainer(replica, model._compiled_outputs, model._loss_tracker,
                                       means)

    def losses(self, xs, y, sample_weight):
        total, *state = self.step._losses(xs, y, sample_weight, True)
        return total, state

    def update(self, total, state):
        self.step._update(total, *state)


class ReplicatedPythonStep:
    """Answers the calls fit's loop makes on its trainer (``train_step``, ``reset_metrics``,
    ``results``) with the replicas stepping in Python."""

    def __init__(self, model, strategy):
        devices = list(strategy.worker_devices)
        if len(devices) != strategy.num_replicas_in_sync:
            raise NotImplementedError(
                "models with several outputs, sample weights, and Python or weighted metrics "
                "train under the replicas of one process (MirroredStrategy); across worker "
                "processes (MultiWorkerMirroredStrategy with several workers) they are not "
                "supported yet")
        self.model, self.strategy, self.optimizer = model, strategy, model.optimizer
        self.replicas = [model] + [distribute_fit._clone_model(model, device)
                                   for device in devices[1:]]
        part = _SeveralOutputsPart if model._compiled_outputs is not None else _OneOutputPart
        self.means = DeviceMeans()  # the replicas' loss sums, read with the logs
        self.parts = [part(replica, model, self.means) for replica in self.replicas]
        self._host_step = MultiOutputTrainer(model, model._compiled_outputs, means=self.means) \
            if model._compiled_outputs is not None else None

    def _copy_weights_to_replicas(self):
        with no_grad():
            for replica in self.replicas[1:]:
                for mine, theirs in zip(replica.weights, self.model.weights):
                    mine.assign(theirs.to(mine.device))

    def train_step(self, xs, y, sample_weight=None):
        model, count = self.model, len(self.replicas)
        self._copy_weights_to_replicas()
        parts = split_batch((list(xs), y), count)
        weights = [None] * count if sample_weight is None else split_batch(sample_weight, count)
        variables = model.trainable_variables
        device = variables[0].device if variables else None
        scale_loss = getattr(model.optimizer, "scale_loss", None)
        summed, done = None, []
        for part, replica, (xs_r, y_r), weights_r in zip(self.parts, self.replicas, parts,
                                                          weights):
            if not xs_r or int(xs_r[0].shape[0]) == 0:
                continue  # a replica left without rows adds nothing (Keras: a zero loss)
            own = replica.trainable_variables
            with GradientTape() as tape:
                total, state = part.losses(_placed(xs_r, replica), _placed(y_r, replica),
                                           _placed(weights_r, replica))
                target = total / count  # Keras's scale_loss_for_distribution
                target = target if scale_loss is None else scale_loss(target)
            grads = [None if g is None else g.to(device)
                     for g in tape.gradient(target, own)]
            summed = grads if summed is None else [
                b if a is None else a if b is None else a + b for a, b in zip(summed, grads)]
            done.append((part, total, state))
        model.optimizer.apply(summed, variables)
        with no_grad():  # the metrics' state lives with replica 0's (as its weights do)
            for part, total, state in done:
                part.update(_placed(total, model), _placed(state, model))

    def reset_metrics(self):
        self.means.clear()
        for metric in self.model.metrics:
            metric.reset_state()

    def results(self):
        if self._host_step is not None:
            return self._host_step.results()
        self.means.flush()
        pairs = []
        for metric in self.model.metrics:
            result = metric.result()  # a CompileMetrics container's is a dict by name
            pairs += ([(name, log_value(value)) for name, value in result.items()]
                      if isinstance(result, dict) else [(metric.name, log_value(result))])
        return pairs


def _placed(value, replica):
    """``value`` (a tensor, or a list/dict of them, or None) on ``replica``'s device."""
    if value is None:
        return None
    if isinstance(value, dict):
        return {key: _placed(v, replica) for key, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_placed(v, replica) for v in value) if isinstance(value, tuple) \
            else [_placed(v, replica) for v in value]
    weights = replica.weights
    if not weights or value.device == weights[0].device:
        return value
    return value.to(weights[0].device)


def replicated_python_step(model, strategy):
    """The model's ReplicatedPythonStep for ``strategy``, made on first use and kept until
    compile (its replicas are copies of the model: made once)."""
    current = getattr(model, "_replicated_python_step", None)
    if current is None or current.strategy is not strategy or \
            current.optimizer is not model.optimizer:
        current = model._replicated_python_step = ReplicatedPythonStep(model, strategy)
    return current
