"""compile/fit/evaluate of a model with several outputs (``keras.Model(inputs, [a, b])`` or
``{'a': a, 'b': b}``): Keras 3's CompileLoss and CompileMetrics rules, and the training step
that applies them.

The C++ step (``_C.Trainer``) takes one label tensor and one loss, so a model with several
outputs steps in Python instead, on the same C++ graph: one forward under a GradientTape, the
per-output losses (gpuaccel's differentiable losses), their weighted sum plus the layers' added
losses, the gradients, and the optimizer's update; the loss trackers and the metrics then update
on that forward's predictions. The loss trackers' sums stay on the device until the logs are
read (``DeviceMeans``), as a one-output model's C++ step keeps its loss; the compiled metrics
update on the host each batch.

Keras's rules kept here: ``loss`` is one loss for every output, a list with one entry per output
or a dict by output name (``None`` for an output without a loss); ``loss_weights`` likewise (a
float for all); ``metrics`` a list with one entry (a metric or a list) per output or a dict by
output name. The logs are ``loss`` (the weighted total, with the added losses), ``<name>_loss``
per output (unweighted, only when several outputs have a loss) and ``<name>_<metric>``; the
names are the dict's keys for a dict of outputs, else the output layers' names."""
from .._tensor import GradientTape, Tensor, from_numpy, no_grad
from . import losses as losses_module
from . import metrics as metrics_module
from ._data_adapter import SeveralLabels, label_array
from ._host_metrics import log_value


def output_names(model):
    """The names Keras gives the outputs in compile() arguments, labels and logs: a dict's
    keys, else the output layers' names; a subclassed model whose ``call`` returns a list or
    tuple has none (None each)."""
    if model._output_keys is not None:
        return list(model._output_keys)
    if model._is_subclassed():
        return [None] * len(model.output_names)
    return list(model.output_names)


def _per_output(value, names, argument):
    """``value`` given per output (a list with one entry per output, or a dict by output name)
    as a list in output order (``None`` where a dict leaves an output out)."""
    if isinstance(value, dict) and None in names:
        raise ValueError(f"`{argument}` is a dict ({list(value)}), but the outputs of this "
                         f"subclassed model have no names: its call returns a list/tuple of "
                         f"{len(names)}; give `{argument}` as a list with one entry per output "
                         "(or return a dict from call)")
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(names), key=str)
        if unknown:
            raise ValueError(f"Expected keys {names} in {argument} dict, but found "
                             f"{argument}.keys()={list(value)} ({unknown} name no output)")
        return [value.get(name) for name in names]
    if len(value) != len(names):
        raise ValueError(f"`{argument}` must have one entry per output ({len(names)}: {names}); "
                         f"got {len(value)} entries: {value!r}")
    return list(value)


def _loss_weights(loss_weights, nested_loss, names):
    if loss_weights is None:
        return [None] * len(names)
    if isinstance(loss_weights, (int, float)) and not isinstance(loss_weights, bool):
        return [float(loss_weights)] * len(names)
    if not isinstance(loss_weights, (list, tuple, dict)):
        raise ValueError("Expected `loss_weights` argument to be a float (single output case) "
                         "or a list, tuple, or dict (multiple output case). Received instead: "
                         f"loss_weights={loss_weights} of type {type(loss_weights)}")
    if not nested_loss:  # Keras pairs the weights with the losses: one loss, one weight
        raise ValueError(f"`loss_weights` must match the number of losses, got 1 losses and "
                         f"{len(loss_weights)} weights.")
    weights = _per_output(loss_weights, names, "loss_weights")
    missing = [name for name, w in zip(names, weights) if w is None]
    if isinstance(loss_weights, dict) and missing:
        raise ValueError(f"loss_weights has no weight for the outputs {missing}; give one per "
                         f"output: {names}")
    return [float(w) for w in weights]


def _metric_lists(metrics, names, argument):
    """One list of metric identifiers per output (empty where an output has none)."""
    if not metrics:
        return [[] for _ in names]
    if isinstance(metrics, (list, tuple)) and len(metrics) != len(names):
        raise ValueError(f"Invalid `{argument}`. `{argument}` should contain metrics objects "
                         f"and either be a dict or a list matching the output names of the "
                         f"functional model {names} (one entry per output). Received: "
                         f"{argument}={metrics!r}")
    if not isinstance(metrics, (list, tuple, dict)):
        raise ValueError(f"Expected `{argument}` argument to be a list, tuple, or dict. "
                         f"Received instead: {argument}={metrics!r} of type {type(metrics)}")
    out = []
    for entry in _per_output(metrics, names, argument):
        out.append([] if entry is None else list(entry) if isinstance(entry, (list, tuple))
                   else [entry])
    return out


class CompiledOutputs:
    """What compile() made of its arguments for a model with several outputs."""

    def __init__(self, model, loss, loss_weights, metrics, weighted_metrics):
        self.names = output_names(model)
        nested = isinstance(loss, (list, tuple, dict))
        given = _per_output(loss, self.names, "loss") if nested else [loss] * len(self.names)
        if all(entry is None for entry in given):
            raise ValueError("compile() got no loss for any output; pass loss= (one loss, a "
                             f"list or a dict by output name: {self.names})")
        self.losses = [None if entry is None else losses_module.get(entry) for entry in given]
        for each in self.losses:
            losses_module.check_fit_reduction(each)
        self.loss_weights = _loss_weights(loss_weights, nested, self.names)
        with_loss = [i for i, each in enumerate(self.losses) if each is not None]
        # Keras tracks each output's (unweighted) loss only when there are several.
        self.loss_trackers = {i: metrics_module.Mean(name=self._tracker_name(i, given[i]))
                              for i in with_loss} if len(with_loss) > 1 else {}
        self.metrics = []  # (log name, metric, output index, weighted)
        taken = {"loss"} | {tracker.name for tracker in self.loss_trackers.values()}
        for weighted, argument, given_metrics in ((False, "metrics", metrics),
                                                  (True, "weighted_metrics", weighted_metrics)):
            for i, identifiers in enumerate(_metric_lists(given_metrics, self.names, argument)):
                for identifier in identifiers:
                    metric = metrics_module.get(identifier, self.losses[i])
                    self.metrics.append((self._log_name(metric.name, i, weighted, taken),
                                         metric, i, weighted))

    def _tracker_name(self, output, identifier):
        """Keras's name of an output's loss tracker: ``<output>_loss``, or for an output
        without a name ``<loss>_loss`` (the identifier a string gave, else the loss's name;
        two outputs with the same loss then share the name, as in Keras)."""
        name = self.names[output]
        if name is None:
            name = identifier if isinstance(identifier, str) else self.losses[output].name
        return f"{name}_loss"

    def _log_name(self, name, output, weighted, taken):
        """Keras's CompileMetrics.result names: ``<output>_<metric>`` (``<metric>`` for an
        output without a name); a repeated name gets ``_1``, ``_2``..., or for a weighted
        metric ``<output>_weighted_<metric>`` first."""
        prefix = "" if self.names[output] is None else f"{self.names[output]}_"
        candidate = prefix + name
        if candidate in taken and weighted:
            candidate = f"{prefix}weighted_{name}"
        if candidate in taken:
            base, index = candidate, 1
            while f"{base}_{index}" in taken:
                index += 1
            candidate = f"{base}_{index}"
        taken.add(candidate)
        return candidate

    @property
    def metric_objects(self):
        return list(self.loss_trackers.values()) + [metric for _, metric, _, _ in self.metrics]

    @property
    def metric_names(self):
        return ([tracker.name for tracker in self.loss_trackers.values()]
                + [name for name, _, _, _ in self.metrics])

    def logs_as_list(self, logs):
        """evaluate's and train_on_batch's list, in Keras's order (its Trainer's
        _flatten_metrics_in_order): ``loss``, the logs named as the compiled metrics are (a
        metric of an output without a name), the outputs' losses, then the rest by name."""
        names = (["loss"] + [metric.name for _, metric, _, _ in self.metrics]
                 + [tracker.name for tracker in self.loss_trackers.values()])
        return ([logs[name] for name in names if name in logs]
                + [logs[name] for name in sorted(logs) if name not in names])

    def flatten_labels(self, y):
        """The labels of each output in output order, from a list/tuple (one entry per output)
        or a dict by output name, as fit/evaluate take them."""
        if isinstance(y, dict) and None in self.names:
            _per_output(y, self.names, "y")  # raises: these outputs have no names
        if isinstance(y, dict):
            missing = [name for name in self.names if name not in y]
            if missing or len(y) != len(self.names):
                raise ValueError(f"y is a dict with keys {list(y)}, but the model's outputs are "
                                 f"{self.names}: give one entry per output name")
            return [y[name] for name in self.names]
        if isinstance(y, (list, tuple)) and len(y) == len(self.names):
            return list(y)
        raise ValueError(f"The model has {len(self.names)} outputs {self.names}: y must be a "
                         f"list of {len(self.names)} label arrays or a dict keyed by those "
                         f"names; got {_describe(y)}")

    def sample_weights_like_labels(self, y, sample_weight):
        """fit/evaluate/train_on_batch's ``sample_weight`` given per output, in output order:
        as in Keras it has the structure of ``y`` (a list/tuple with one entry per output, or
        a dict by output name; ``None`` for an unweighted output)."""
        same_kind = isinstance(sample_weight, dict) == isinstance(y, dict)
        if not same_kind or (not isinstance(y, dict) and len(sample_weight) != len(y)):
            raise ValueError("You should provide one `sample_weight` array per output in `y`. "
                             f"The two structures did not match:\n- y: {_describe(y)}\n"
                             f"- sample_weight: {_describe(sample_weight)}")
        return _per_output(sample_weight, self.names, "sample_weight")

    def weights_per_output(self, sample_weight):
        """One sample-weight tensor (or None) per output, in output order, from: None; one
        (batch,) tensor weighing every output; a (batch, outputs) tensor (fit's in-memory
        per-output weights, stacked so they shuffle together: _sample_weights.with_weights);
        or a list or dict by output name (a Dataset's, or compute_loss's argument)."""
        count = len(self.names)
        if sample_weight is None:
            return [None] * count
        if isinstance(sample_weight, (list, tuple, dict)):
            return _per_output(sample_weight, self.names, "sample_weight")
        if sample_weight.ndim == 2 and int(sample_weight.shape[1]) == count:
            return [sample_weight[:, i] for i in range(count)]
        return [sample_weight] * count

    def total_loss(self, ys, y_preds, sample_weights):
        """(the weighted sum of the outputs' losses, each output's unweighted loss or None);
        ``sample_weights``: one tensor or None per output."""
        total, values = None, []
        for loss, weight, y, y_pred, sample_weight in zip(self.losses, self.loss_weights, ys,
                                                           y_preds, sample_weights):
            if loss is None:
                values.append(None)
                continue
            value = loss(y, y_pred, sample_weight)
            values.append(value)
            weighted = value if weight is None else value * weight
            total = weighted if total is None else total + weighted
        return total, values

    def update_metrics(self, ys, y_preds, sample_weights):
        for _, metric, i, weighted in self.metrics:
            metric.update_state(ys[i], y_preds[i], sample_weights[i] if weighted else None)


def _describe(y):
    if isinstance(y, dict):
        return f"a dict with keys {list(y)}"
    if isinstance(y, (list, tuple)):
        return f"a {type(y).__name__} of {len(y)}"
    return type(y).__name__ + (f" of shape {tuple(y.shape)}" if hasattr(y, "shape") else "")


def labels_for_arrays(compiled, y):
    """fit/evaluate's in-memory ``y`` for a model with several outputs: one label array per
    output, batched together with the inputs."""
    return None if y is None else SeveralLabels(compiled.flatten_labels(y))


def _as_label_tensor(value):
    return value if isinstance(value, Tensor) else from_numpy(label_array(value))


class DeviceMeans:
    """The loss trackers' running means with their sums kept on the device between reads:
    each step adds ``loss * rows`` there (an op, no host read) and the trackers take the sums
    when the logs are read (``flush``: at a batch callback, the epoch's end, evaluate's end),
    as the C++ step keeps its loss on the device."""

    def __init__(self):
        self._pending = {}  # id(tracker) -> (tracker, device sum of loss * rows, rows)

    def add(self, tracker, value, rows):
        weighted = value * float(rows)
        entry = self._pending.get(id(tracker))
        if entry is not None:
            weighted, rows = entry[1] + weighted, entry[2] + rows
        self._pending[id(tracker)] = (tracker, weighted, rows)

    def flush(self):
        """Adds the pending sums to the trackers (one host read each); whether any was."""
        pending = bool(self._pending)
        for tracker, total, rows in self._pending.values():
            tracker.update_state(float(total.numpy()) / rows, sample_weight=rows)
        self._pending.clear()
        return pending

    def clear(self):
        self._pending.clear()


class MultiOutputTrainer:
    """The training and test steps of a model with several outputs; answers the calls fit's
    loop makes on ``_C.Trainer`` (``train_step``, ``test_step``, ``reset_metrics``,
    ``results``)."""

    def __init__(self, model, compiled, loss_tracker=None, means=None):
        self.model = model
        self.compiled = compiled
        # a replica's copy of the model (keras/_replicated_step.py) updates the model's tracker
        # and shares the model's pending sums
        self.loss_tracker = model._loss_tracker if loss_tracker is None else loss_tracker
        self.means = DeviceMeans() if means is None else means
        self.host_reads = 0

    def _placed(self, tensors):
        weights = self.model.weights
        if not weights:
            return tensors
        device = weights[0].device
        return [t if t.device == device else t.to(device) for t in tensors]

    def _losses(self, xs, y, sample_weight, training):
        ys = self._placed([_as_label_tensor(v) for v in self.compiled.flatten_labels(y)])
        weights = [None if w is None else self._placed([w])[0]
                   for w in self.compiled.weights_per_output(sample_weight)]
        y_preds = list(self.model._graph().forward(self._placed(list(xs)), training))
        total, values = self.compiled.total_loss(ys, y_preds, weights)
        for added in self.model.losses:
            total = total + added
        return total, values, ys, y_preds, weights

    def train_step(self, xs, y, sample_weight=None):
        model = self.model
        variables = model.trainable_variables
        # a LossScaleOptimizer (mixed_float16) takes the gradients of the scaled loss, as in
        # Keras's train step, and unscales them itself
        scale_loss = getattr(model.optimizer, "scale_loss", None)
        with GradientTape() as tape:
            total, values, ys, y_preds, weights = self._losses(xs, y, sample_weight, True)
            target = total if scale_loss is None else scale_loss(total)
        model.optimizer.apply(tape.gradient(target, variables), variables)
        self._update(total, values, ys, y_preds, weights)
        return total

    def test_step(self, xs, y, sample_weight=None):
        with no_grad():
            total, values, ys, y_preds, weights = self._losses(xs, y, sample_weight, False)
        self._update(total, values, ys, y_preds, weights)
        return total

    def _update(self, total, values, ys, y_preds, sample_weight):
        batch = int(y_preds[0].shape[0])
        with no_grad():
            self.means.add(self.loss_tracker, total.detach(), batch)
            for i, tracker in self.compiled.loss_trackers.items():
                self.means.add(tracker, values[i].detach(), batch)
            if self.compiled.metrics:  # these update on the host (keras/_host_metrics.py)
                self.compiled.update_metrics(ys, [p.detach() for p in y_preds], sample_weight)
                self.host_reads += 1

    def reset_metrics(self):
        self.means.clear()
        self.loss_tracker.reset_state()
        for metric in self.compiled.metric_objects:
            metric.reset_state()

    def results(self):
        if self.means.flush():
            self.host_reads += 1
        pairs = [("loss", self.loss_tracker.result())]
        pairs += [(tracker.name, tracker.result())
                  for tracker in self.compiled.loss_trackers.values()]
        pairs += [(name, metric.result()) for name, metric, _, _ in self.compiled.metrics]
        return [(name, log_value(value)) for name, value in pairs]
