"""``compile``, ``fit``, ``evaluate`` and ``predict`` (Keras 3's Trainer): Python walks the
epochs and batches and calls the callbacks; each batch's forward, loss, backward and optimizer
update run in one C++ call (``_C.Trainer.train_step``) with the GIL released."""
import importlib
import warnings

import numpy as np

from .. import _C
from .. import config as _config
from . import callbacks as callbacks_module
from . import constraints as constraints_module
from . import losses as losses_module
from . import metrics as metrics_module
from . import optimizers as optimizers_module
from . import (_added_losses_only, _compile_metrics, _host_metrics, _mask_flow, _multi_output,
               _python_step, _replicated_step, _sample_weights)
from ._data_adapter import adapt, inputs_in_order
from ._training_state import FitPosition
from ..distribute import _fit as distribute_fit
from ..distribute import _idle_gpus, _strategy as distribute_strategy
from ..profiler import _session as profiler_session


def _global_policy_name():
    """The global mixed-precision policy's name; 'float32' when the policy module is absent."""
    name = __package__ + ".mixed_precision"
    try:
        mixed_precision = importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name != name:
            raise
        return "float32"
    return mixed_precision.global_policy().name


def _labels_absent(data):
    """Whether ``data``'s labels are placeholders fit gave it (_added_losses_only.py)."""
    return getattr(data, "placeholder_labels", False)


def _resolve_verbose(verbose):
    if verbose == "auto":
        return 1
    if verbose not in (0, 1, 2):
        raise ValueError(f"verbose must be 'auto', 0, 1 or 2, got {verbose!r}")
    return verbose


def _flatten_metrics(metrics, argument="metrics"):
    if metrics is None:
        return []
    if isinstance(metrics, dict):
        raise NotImplementedError(f"per-output {argument} (a dict) are not supported yet; "
                                  "models here have one output")
    if isinstance(metrics, (str, metrics_module.Metric)) or isinstance(metrics, type):
        return [metrics]
    if not isinstance(metrics, (list, tuple)):
        raise ValueError(f"Expected `{argument}` argument to be a list, tuple, or dict. "
                         f"Received instead: {argument}={metrics!r} of type "
                         f"{type(metrics)}")  # Keras's words
    return list(metrics)


class Trainer:
    """Mixed into keras.Model: the compile/fit/evaluate/predict surface."""

    def _init_trainer(self):
        self.compiled = False
        self.optimizer = None
        self.loss = None
        self.compiled_metrics = []
        self._weighted_metrics = []
        self._compiled_outputs = None  # a model with several outputs: _multi_output's
        self.stop_training = False
        self.history = None
        self._cpp_trainer = None
        # Where the running fit is (read by BackupAndRestore), and where the next fit starts
        # when a BackupAndRestore restored a checkpoint in on_train_begin.
        self._fit_position = None
        self._resume_from = None
        # tf.distribute: the strategy whose scope was open as the model was created, the one
        # compile() chose, and fit's replicas under it (gpuaccel/distribute/_fit.py).
        self._created_in_strategy = (distribute_strategy.get_strategy()
                                     if distribute_strategy.has_strategy() else None)
        self._distribute_strategy = None
        self._replicated_fit = None

    # ---- compile ----

    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None,
                weighted_metrics=None, run_eagerly=False, steps_per_execution=1,
                jit_compile="auto", auto_scale_loss=True):
        # A subclassed model is built by its first call: until then its outputs (and so what
        # loss/metrics mean) are unknown, and compile's arguments are resolved once it is
        # built (_resolve_compile_after_build).
        self._compile_arguments = None
        if self._is_subclassed() and not self.built:
            self._compile_arguments = (loss, loss_weights, metrics, weighted_metrics)
        self._capture_mode = _jit_compile_mode(jit_compile)
        self._distribute_strategy = distribute_fit.strategy_at_compile(self)
        self._replicated_fit = self._replicated_python_step = None
        self.optimizer = optimizers_module.get(optimizer)
        if (auto_scale_loss and self.optimizer is not None
                and _global_policy_name() == "mixed_float16"
                and not isinstance(self.optimizer, optimizers_module.LossScaleOptimizer)):
            # Keras 3: float16 gradients need dynamic loss scaling (fit scales the loss by the
            # optimizer's loss_scale, the optimizer unscales in its fused update).
            self.optimizer = optimizers_module.LossScaleOptimizer(
                self.optimizer, name="loss_scale_optimizer")
        self._loss_tracker = metrics_module.Mean(name="loss")
        if self._compile_arguments is None:
            self._resolve_losses_and_metrics(loss, loss_weights, metrics, weighted_metrics)
        else:
            try:  # as for one output, so a custom loop may use compute_loss before fit
                self._resolve_losses_and_metrics(loss, loss_weights, metrics, weighted_metrics)
            except (ValueError, TypeError, NotImplementedError):
                # arguments given per output (lists, dicts, loss_weights): once built
                self.loss, self._compiled_outputs = loss, None
                self.compiled_metrics, self._weighted_metrics = [], []
        self.compiled = True
        self._cpp_trainer = None  # rebuilt on first use (the model may not be built yet)

    def _resolve_losses_and_metrics(self, loss, loss_weights, metrics, weighted_metrics):
        """compile's loss and metrics arguments for the model's outputs: per output for
        several (keras/_multi_output.py), else the C++ step's loss and metrics."""
        several = self._has_several_outputs()
        if loss_weights is not None and not several:
            raise NotImplementedError("loss_weights is not supported yet for a model with one "
                                      "output (scale the loss instead)")
        self._compiled_outputs = None
        if several and loss is not None:
            # Keras keeps what was passed as model.loss; the per-output losses are resolved
            # here (keras/_multi_output.py)
            self._compiled_outputs = _multi_output.CompiledOutputs(
                self, loss, loss_weights, metrics, weighted_metrics)
            self.loss = loss
            self.compiled_metrics, self._weighted_metrics = [], []
        else:
            self.loss = None if loss is None else losses_module.get(loss)
            losses_module.check_fit_reduction(self.loss)
            self.compiled_metrics = [metrics_module.get(m, self.loss)
                                     for m in _flatten_metrics(metrics)]
            self._weighted_metrics = _host_metrics.compile_weighted(
                _flatten_metrics(weighted_metrics, "weighted_metrics"), self.loss,
                [m.name for m in self.compiled_metrics])
        names = [m.name for m in self.compiled_metrics + self._weighted_metrics]
        if len(set(names)) != len(names) or "loss" in names:
            raise ValueError(f"metric names must be unique and not 'loss'; got {names}")

    def _resolve_compile_after_build(self, x):
        """A subclassed model compiled before it was built: builds it from in-memory ``x``
        (a Dataset's model must be built first, as before) and resolves compile's arguments
        for the outputs its ``call`` returned, once."""
        arguments = getattr(self, "_compile_arguments", None)
        if arguments is None:
            return
        if not self.built and x is not None:
            xs = list(x) if isinstance(x, (list, tuple)) else [x]
            if xs and all(hasattr(v, "shape") and len(v.shape) for v in xs):
                self._build_from_shapes([(None,) + tuple(v.shape[1:]) for v in xs])
        if not self.built:
            return
        self._compile_arguments = None
        self._resolve_losses_and_metrics(*arguments)
        self._cpp_trainer = None

    # ---- what an overridden train_step/test_step uses (Keras 3's Trainer API) ----

    @property
    def metrics(self):
        """The loss tracker, then compile's metrics in one CompileMetrics container, as Keras 3
        lists them (an overridden train_step updates them; keras/_compile_metrics.py)."""
        tracker = getattr(self, "_loss_tracker", None)
        compiled = _compile_metrics.container_for(self)
        outputs = self._compiled_outputs
        return ([tracker] if tracker is not None else []) + \
            ([compiled] if compiled is not None else []) + \
            ([] if outputs is None else outputs.metric_objects)

    def reset_metrics(self):
        for metric in self.metrics:
            metric.reset_state()

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        """Keras 3: updates compile's metrics (the weights reach weighted_metrics alone; a
        model with several outputs updates each output's) and returns
        ``get_metrics_result()``."""
        compiled = _compile_metrics.container_for(self)
        if compiled is not None:
            compiled.update_state(y, y_pred, sample_weight)
        outputs = self._compiled_outputs
        if outputs is not None:
            outputs.update_metrics(outputs.flatten_labels(y), outputs.flatten_labels(y_pred),
                                   outputs.weights_per_output(sample_weight))
        return self.get_metrics_result()

    def get_metrics_result(self):
        """The result of every metric of ``self.metrics`` by name, a container's dict spread
        into the top level (Keras 3)."""
        results = {}
        for metric in self.metrics:
            result = metric.result()
            if isinstance(result, dict):
                results.update(result)
            else:
                results[metric.name] = result
        return results

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The compiled loss of (y, y_pred) plus the losses the layers added (Keras 3); a
        model compiled without a loss has the added ones alone, and without those Keras's
        ValueError."""
        outputs = self._compiled_outputs
        if outputs is not None:
            compiled, _ = outputs.total_loss(outputs.flatten_labels(y),
                                             outputs.flatten_labels(y_pred),
                                             outputs.weights_per_output(sample_weight))
        else:
            compiled = None if self.loss is None else self.loss(y, y_pred, sample_weight)
        return _added_losses_only.total_loss(compiled, getattr(self, "losses", []))

    @property
    def metrics_names(self):
        outputs = self._compiled_outputs
        if outputs is not None:
            return ["loss"] + outputs.metric_names
        return ["loss"] + [m.name for m in self.compiled_metrics + self._weighted_metrics]

    def _input_names(self):
        """The names of the model's keras.Input tensors, which a dict of inputs is keyed by
        (None for a subclassed model, whose call takes what it is given)."""
        if self._is_subclassed():
            return None
        inputs = getattr(self, "inputs", None)
        return [t.name for t in inputs] if inputs else None

    def _labels(self, y, sample_weight=None):
        """(fit/evaluate's ``y``, ``sample_weight``): for a model with several outputs, one
        label array per output in the model's order (from a list or a dict by output name),
        and per-output weights (the structure of ``y``) likewise."""
        outputs = self._compiled_outputs
        if outputs is None:
            return y, sample_weight
        if isinstance(sample_weight, (list, tuple, dict)):
            sample_weight = _sample_weights.SeveralWeights(
                outputs.sample_weights_like_labels(y, sample_weight))
        return _multi_output.labels_for_arrays(outputs, y), sample_weight

    def _check_compiled(self, what):
        if not self.compiled:
            raise RuntimeError(f"You must call `compile()` before using the model ({what}).")

    def _trainer_for(self, what):
        self._check_compiled(what)
        self._resolve_compile_after_build(None)  # a subclassed model built since compile
        if self.loss is not None:  # (compiled without one, the step reads no output)
            _mask_flow.refuse_output_mask(getattr(self, "_output_mask", None), self.name)
        if what in ("fit", "train_on_batch") and self.optimizer is None:
            raise ValueError(f"{what}() needs an optimizer, but the model was compiled with "
                             "optimizer=None; pass one to compile(), e.g. "
                             "compile(optimizer='adam', ...)")
        if what in ("fit", "train_on_batch") and \
                isinstance(self.optimizer, optimizers_module.MultiOptimizer):
            self.optimizer.build(self.trainable_weights)  # assigns each weight an optimizer
        if self._cpp_trainer is None and self._compiled_outputs is not None:
            self._cpp_trainer = _multi_output.MultiOutputTrainer(self, self._compiled_outputs)
        if self._cpp_trainer is None:
            self._cpp_trainer = _C.Trainer(
                self._graph(), _added_losses_only.step_loss(self)._cpp,
                None if self.optimizer is None else self.optimizer._cpp,
                [m._cpp for m in self.compiled_metrics if not _host_metrics.is_host_metric(m)])
            self._cpp_trainer.set_jit_compile(self._capture_mode)
        return self._cpp_trainer

    def _has_host_metrics(self):
        return bool(self._weighted_metrics) or any(
            _host_metrics.is_host_metric(m) for m in self.compiled_metrics)

    def _with_host_metrics(self, trainer):
        """``trainer``, or where Python or weighted metrics were compiled, the trainer that also
        updates them once per batch (``_host_metrics.py``, the eager fallback for metrics)."""
        if not self._has_host_metrics():
            return trainer
        return _host_metrics.HostMetricsTrainer(self, trainer)

    def _predictor(self):
        """The C++ predict step of the model's graph (no compile() needed): host batches of a
        GPU model are uploaded on the copy stream, as fit's and evaluate's are."""
        graph = self._graph()
        predictor = getattr(self, "_cpp_predictor", None)
        if predictor is None or predictor.graph is not graph:
            predictor = self._cpp_predictor = _C.Predictor(graph)
        return predictor

    def _results(self, trainer, prefix=""):
        return {prefix + name: _host_metrics.log_value(value)
                for name, value in trainer.results()}

    def _fit_trainer(self, data, weighted):
        """What fit steps: the C++ Trainer, or under a strategy with several replicas the
        replicated step (the same calls; stepped from Python for several outputs, sample
        weights (``weighted``: in-memory ones; or the Dataset's) and Python or weighted
        metrics), or the model's own Python train_step. With no strategy and several GPUs
        visible, says once that they sit idle."""
        if _python_step.runs_without_graph(self, "train_step"):
            self._check_compiled("fit")
            _python_step.warn_once(self, "train_step")
            return _python_step.PythonStepTrainer(self, None, _labels_absent(data))
        trainer = self._trainer_for("fit")
        if _python_step.overrides(self, "train_step"):
            _python_step.warn_once(self, "train_step")
            return _python_step.PythonStepTrainer(self, trainer, _labels_absent(data))
        strategy = self._distribute_strategy
        if distribute_fit.uses_replicas(strategy):
            if (self._compiled_outputs is not None or self.loss is None or self._has_host_metrics() or weighted
                    or _sample_weights.batches_weighed(data)):
                return _replicated_step.replicated_python_step(self, strategy)
            replicated = distribute_fit.replicated_fit(self, strategy)
            replicated.start()
            return replicated
        if strategy is None:
            _idle_gpus.warn_idle_gpus_once(len(_config.list_physical_devices("GPU")))
        return self._with_host_metrics(trainer)

    def _epoch_results(self, trainer):
        """The epoch's logs: over every worker's replicas when several workers train."""
        across = getattr(trainer, "results_across_workers", None)
        pairs = across() if across is not None else trainer.results()
        return {name: _host_metrics.log_value(value) for name, value in pairs}

    # ---- fit ----

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, steps_per_epoch=None, validation_steps=None,
            validation_batch_size=None, validation_freq=1):
        x, y, weighted = self._weighted_inputs(x, y, sample_weight, class_weight)
        verbose = _resolve_verbose(verbose)
        if isinstance(x, distribute_strategy.DistributedDataset):
            x = x.unwrap()  # fit splits each global batch across the replicas itself
        if not isinstance(epochs, (int, np.integer)) or epochs < 0:
            raise ValueError(f"epochs must be a non-negative integer, got {epochs!r}")
        if not isinstance(initial_epoch, (int, np.integer)) or initial_epoch < 0:
            raise ValueError(f"initial_epoch must be a non-negative integer, got {initial_epoch!r}")
        if steps_per_epoch is not None and (not isinstance(steps_per_epoch, (int, np.integer))
                                            or steps_per_epoch < 1):
            raise ValueError(f"steps_per_epoch must be a positive integer, got {steps_per_epoch!r}")
        if not ((isinstance(validation_freq, (list, tuple, set, range))) or (
                isinstance(validation_freq, int) and not isinstance(validation_freq, bool)
                and validation_freq >= 1)):  # 0 was a ZeroDivisionError (in Keras 3 too)
            raise ValueError(f"validation_freq must be a positive integer (validate every that "
                             f"many epochs) or a list of epochs, got {validation_freq!r}")
        data = adapt(x, y, batch_size, self._keeps_integer_inputs(), steps_per_epoch, "fit",
                     self._compiled_outputs is not None, self._input_names())
        _sample_weights.dataset_class_weights(data, class_weight)
        self._labels_or_placeholder(data, "fit")
        val_data = None
        if validation_data is not None:
            val_data = self._validation_adapter(validation_data,
                                                validation_batch_size or batch_size,
                                                validation_steps)
        elif validation_split:
            if not hasattr(data, "split"):
                raise ValueError("validation_split is only supported for NumPy/tensor inputs, "
                                 "not for a Dataset; pass validation_data instead")
            val_data = data.split(validation_split)
            if validation_batch_size:
                val_data.batch_size = int(validation_batch_size)

        if not _python_step.runs_without_graph(self, "train_step"):
            self._ensure_built_for(_sample_weights.WithoutWeights(data) if weighted else data)
        trainer = self._fit_trainer(data, weighted)
        weighs = isinstance(trainer, (_C.Trainer, _host_metrics.HostMetricsTrainer,
                                      _multi_output.MultiOutputTrainer,
                                      _replicated_step.ReplicatedPythonStep,
                                      _python_step.PythonStepTrainer))
        if weighted and not weighs:
            raise NotImplementedError(_WEIGHTS_UNDER_STRATEGY)
        steps = data.steps if steps_per_epoch is None or hasattr(data, "dataset") else \
            min(steps_per_epoch, data.steps)
        callback_list = callbacks if isinstance(callbacks, callbacks_module.CallbackList) else \
            callbacks_module.CallbackList(callbacks, add_history=True, add_progbar=verbose != 0,
                                          model=self, verbose=verbose, epochs=epochs, steps=steps)
        batch_hooks = _wants_batch_hooks(callback_list, "train")
        apply_schedule = self.optimizer._schedule_hook()  # None for a fixed learning rate
        apply_constraints = constraints_module.after_step_hook(self)  # None without constraints
        seed = _seed_from_global()
        if hasattr(trainer, "agree_on_seed"):
            seed = trainer.agree_on_seed(seed)  # every worker shuffles the same way
        rng = np.random.default_rng(seed)

        self.stop_training = False
        self._resume_from = None
        callback_list.on_train_begin()
        logs = {}
        global_step = 0  # batches counted from 1 across epochs: the profiler's step numbers
        skip = 0  # batches of the first epoch a restored checkpoint had already done
        resume, self._resume_from = self._resume_from, None
        if resume is not None:
            initial_epoch, skip, global_step = resume.epoch, resume.step, resume.global_step
            if resume.shuffle_state is not None:
                rng.bit_generator.state = resume.shuffle_state
        for epoch in range(initial_epoch, epochs):
            trainer.reset_metrics()
            # The shuffling generator's state before this epoch draws its order: a checkpoint
            # taken mid-epoch replays the same order.
            self._fit_position = FitPosition(epoch, skip, global_step, rng.bit_generator.state)
            callback_list.on_epoch_begin(epoch)
            step = first_step = skip
            samples = 0
            batches = iter(data.batches(shuffle=bool(shuffle), rng=rng, start_step=skip))
            skip = 0
            while steps_per_epoch is None or step < steps_per_epoch:
                # The step marker spans fetching the batch and the step, so a profile shows
                # how much of each step was spent waiting for input.
                marker = profiler_session.step_marker("train", global_step + 1)
                with profiler_session.input_wait():
                    batch = next(batches, None)
                if batch is None:
                    break
                xs, yb = batch
                xs, weights = _sample_weights.split_batch(xs, weighted)
                if weights is not None and not weighs:
                    raise NotImplementedError(_WEIGHTS_UNDER_STRATEGY)
                if batch_hooks:
                    callback_list.on_train_batch_begin(step)
                if apply_schedule is not None:
                    apply_schedule()
                trainer.train_step(xs, yb, *([] if weights is None else [weights]))
                if apply_constraints is not None:
                    apply_constraints()
                marker.commit()
                samples += _rows(xs)
                global_step += 1
                self._fit_position.step = step + 1
                self._fit_position.global_step = global_step
                if batch_hooks:
                    # A function: the logs are built only if a callback reads them.
                    callback_list.on_train_batch_end(step, lambda: self._results(trainer))
                step += 1
                if self.stop_training:
                    break
            if step == 0:
                warnings.warn("Your input ran out of data; interrupting training. Make sure "
                              "that your dataset can generate at least `steps_per_epoch * "
                              "epochs` batches.", stacklevel=2)
                break
            if step > first_step:  # (a resume may start past the epoch's last batch)
                _check_some_samples("fit()", step - first_step, samples)
            logs = self._epoch_results(trainer)
            if val_data is not None and _should_validate(epoch, validation_freq):
                val_logs = self._evaluate_data(val_data, callbacks=callback_list, verbose=0,
                                               what="fit()'s validation_data",
                                               weighted=weighted and validation_data is None,
                                               apply_weights=class_weight is None)
                logs.update({"val_" + k: v for k, v in val_logs.items()})
            # A checkpoint taken at the end of the epoch resumes at the next one's start.
            self._fit_position = FitPosition(epoch + 1, 0, global_step, rng.bit_generator.state)
            callback_list.on_epoch_end(epoch, logs)
            if getattr(data, "exhausted", False) and steps_per_epoch is not None:
                warnings.warn("Your input ran out of data; interrupting training.", stacklevel=2)
                break
            if self.stop_training:
                break
        if epochs > 0:
            # Keras: with use_ema, the trained variables become their moving averages.
            self.optimizer.finalize_variable_values(self.trainable_weights)
        callback_list.on_train_end(logs)
        return self.history

    def _labels_or_placeholder(self, data, what):
        """A model compiled without a loss or metrics trains and evaluates without labels
        (Keras's fit(x)): ``data`` then gets placeholder ones; other models need them."""
        if _added_losses_only.labels_optional(self):
            _added_losses_only.give_placeholder_labels(data)
        elif hasattr(data, "y") and data.y is None:
            raise ValueError(f"{what}() needs labels: pass y= (or a Dataset of (x, y) pairs)")

    def _validation_adapter(self, validation_data, batch_size, steps):
        from ._data_adapter import _is_dataset
        if _is_dataset(validation_data):
            return adapt(validation_data, None, None, self._keeps_integer_inputs(), steps,
                         labels_per_output=self._compiled_outputs is not None,
                         input_names=self._input_names())
        if not isinstance(validation_data, (tuple, list)) or len(validation_data) not in (2, 3):
            raise ValueError("validation_data must be a tuple (x_val, y_val) or a Dataset; got "
                             f"{type(validation_data).__name__}")
        if len(validation_data) == 3:
            raise NotImplementedError("validation sample weights are not supported yet")
        return adapt(validation_data[0], self._labels(validation_data[1])[0], batch_size,
                     self._keeps_integer_inputs(), steps, "fit", input_names=self._input_names())

    # ---- evaluate ----

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None,
                 steps=None, callbacks=None, return_dict=False):
        self._resolve_compile_after_build(x)
        x = inputs_in_order(x, self._input_names())
        y, sample_weight = self._labels(y, sample_weight)
        x, weighted = _sample_weights.with_weights(x, y, sample_weight, None)
        verbose = _resolve_verbose(verbose)
        data = adapt(x, y, batch_size, self._keeps_integer_inputs(), steps, "evaluate",
                     self._compiled_outputs is not None, self._input_names())
        self._labels_or_placeholder(data, "evaluate")
        if not _python_step.runs_without_graph(self, "test_step"):
            self._ensure_built_for(_sample_weights.WithoutWeights(data) if weighted else data)
        logs = self._evaluate_data(data, callbacks, verbose, steps, weighted=weighted)
        if return_dict:
            return logs
        return self._logs_as_list(logs, [logs[name] for name in self.metrics_names
                                         if name in logs])

    def _evaluate_data(self, data, callbacks, verbose, steps=None, what="evaluate()",
                       weighted=False, apply_weights=True):
        """``weighted``: the data's last column is sample weights; ``apply_weights``: weigh the
        loss with them (Keras weighs a validation_split by sample_weight, not by class_weight)."""
        if _python_step.runs_without_graph(self, "test_step"):
            self._check_compiled("evaluate")
            trainer = None
        else:
            trainer = self._trainer_for("evaluate")
        if _python_step.overrides(self, "test_step"):
            _python_step.warn_once(self, "test_step")
            trainer = _python_step.PythonStepTrainer(self, trainer, _labels_absent(data))
        else:
            trainer = self._with_host_metrics(trainer)
        callback_list = callbacks if isinstance(callbacks, callbacks_module.CallbackList) else \
            callbacks_module.CallbackList(callbacks, add_progbar=verbose != 0, model=self,
                                          verbose=verbose, epochs=1, steps=data.steps)
        batch_hooks = _wants_batch_hooks(callback_list, "test")
        trainer.reset_metrics()
        callback_list.on_test_begin()
        ran = samples = 0
        for step, (xs, yb) in enumerate(data.batches()):
            if steps is not None and step >= steps:
                break
            xs, weights = _sample_weights.split_batch(xs, weighted)
            weights = weights if apply_weights else None
            if batch_hooks:
                callback_list.on_test_batch_begin(step)
            trainer.test_step(xs, yb, *([] if weights is None else [weights]))
            ran += 1
            samples += _rows(xs)
            if batch_hooks:
                callback_list.on_test_batch_end(step, lambda: self._results(trainer))
        _check_some_samples(what, ran, samples)
        logs = self._results(trainer)
        callback_list.on_test_end(logs)
        return logs

    # ---- predict ----

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        verbose = _resolve_verbose(verbose)
        data = adapt(x, None, batch_size, self._keeps_integer_inputs(), steps, "predict",
                     input_names=self._input_names())
        self._ensure_built_for(data)
        predictor = self._predictor()
        callback_list = callbacks if isinstance(callbacks, callbacks_module.CallbackList) else \
            callbacks_module.CallbackList(callbacks, add_progbar=verbose != 0, model=self,
                                          verbose=verbose, epochs=1, steps=data.steps)
        batch_hooks = _wants_batch_hooks(callback_list, "predict")
        callback_list.on_predict_begin()
        outputs = []
        batches = data.batches() if hasattr(data, "split") else data.batches(with_labels=False)
        for step, (xs, _) in enumerate(batches):
            if steps is not None and step >= steps:
                break
            if batch_hooks:
                callback_list.on_predict_batch_begin(step)
            # a copy (._numpy()): .numpy() would view an output buffer a later step may reuse
            outputs.append([value._numpy() for value in predictor.predict_step(xs)])
            if batch_hooks:
                callback_list.on_predict_batch_end(
                    step, {"outputs": self._pack_outputs(outputs[-1])})
        callback_list.on_predict_end()
        if not outputs:
            raise ValueError("predict() got no data: the input is empty")
        return self._pack_outputs([np.concatenate(per_output, axis=0)
                                   for per_output in zip(*outputs)])

    # ---- single batches ----

    def _weighted_inputs(self, x, y, sample_weight, class_weight):
        """(x with the sample weights as its last column where there are any, y as the step
        takes it, whether x carries weights): what fit and train_on_batch share."""
        self._resolve_compile_after_build(x)
        x = inputs_in_order(x, self._input_names())
        if class_weight is not None and self._has_several_outputs():
            raise ValueError("`class_weight` is only supported for Models with a single "
                             "output.")  # Keras's words
        y, sample_weight = self._labels(y, sample_weight)
        x, weighted = _sample_weights.with_weights(x, y, sample_weight, class_weight)
        return x, y, weighted

    def _one_batch_data(self, x, y, sample_weight, class_weight):
        """(the data of train_on_batch/test_on_batch as one batch, whether its last input
        column is sample weights): the weights as fit takes them."""
        x, y, weighted = self._weighted_inputs(x, y, sample_weight, class_weight)
        data = adapt(x, y, 1 << 62, self._keeps_integer_inputs(),
                     labels_per_output=self._compiled_outputs is not None)
        if _added_losses_only.labels_optional(self):
            _added_losses_only.give_placeholder_labels(data)
        self._ensure_built_for(_sample_weights.WithoutWeights(data) if weighted else data)
        return data, weighted

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        data, weighted = self._one_batch_data(x, y, sample_weight, class_weight)
        trainer = self._with_host_metrics(self._trainer_for("train_on_batch"))
        trainer.reset_metrics()
        batches = [batch for batch in data.batches() if _rows(batch[0])]
        _check_some_samples("train_on_batch()", len(batches), len(batches))  # before any step
        apply_schedule = self.optimizer._schedule_hook()
        apply_constraints = constraints_module.after_step_hook(self)
        for xs, yb in batches:
            xs, weights = _sample_weights.split_batch(xs, weighted)
            if apply_schedule is not None:
                apply_schedule()
            trainer.train_step(xs, yb, *([] if weights is None else [weights]))
            if apply_constraints is not None:
                apply_constraints()
        return self._single_batch_logs(trainer, return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        data, weighted = self._one_batch_data(x, y, sample_weight, None)
        trainer = self._with_host_metrics(self._trainer_for("test_on_batch"))
        trainer.reset_metrics()
        ran = samples = 0
        for xs, yb in data.batches():
            xs, weights = _sample_weights.split_batch(xs, weighted)
            trainer.test_step(xs, yb, *([] if weights is None else [weights]))
            ran, samples = ran + 1, samples + _rows(xs)
        _check_some_samples("test_on_batch()", ran, samples)
        return self._single_batch_logs(trainer, return_dict)

    def predict_on_batch(self, x):
        data = adapt(x, None, 1 << 62, self._keeps_integer_inputs(), what="predict_on_batch",
                     input_names=self._input_names())
        self._ensure_built_for(data)
        batches = data.batches() if hasattr(data, "split") else data.batches(with_labels=False)
        batch = next(iter(batches), None)
        if batch is None:  # StopIteration must not escape (a caller's generator would end)
            raise ValueError("predict_on_batch() got no data: the input has 0 samples (or the "
                             "Dataset yielded no batch)")
        return self._pack_outputs([value._numpy()
                                   for value in self._predictor().predict_step(batch[0])])

    def _single_batch_logs(self, trainer, return_dict):
        logs = self._results(trainer)
        if return_dict:
            return logs
        return self._logs_as_list(logs, list(logs.values()))

    def _logs_as_list(self, logs, values):
        """What evaluate/train_on_batch return without return_dict: a float for one value, else
        ``values`` (for several outputs, Keras's order of the logs)."""
        if self._compiled_outputs is not None:
            values = self._compiled_outputs.logs_as_list(logs)
        return values[0] if len(values) == 1 else values


_WEIGHTS_UNDER_STRATEGY = ("sample_weight/class_weight (and a Dataset's sample weights) under a "
                           "distribution strategy with several replicas are not supported yet")


def _rows(xs):
    """The examples in a batch (its inputs' first dimension)."""
    return int(xs[0].shape[0]) if xs and xs[0].ndim else 0


def _check_some_samples(what, batches, samples):
    """A loss or metric is a mean over the samples seen: over none it is undefined, and the 0.0
    the trackers hold would read as a perfect model. Keras 3 reports 0.0 for empty batches
    and, with no batch at all, warns "Your input ran out of data" and returns [] (which fails
    later where a number is expected); the error says what is wrong right here."""
    if samples:
        return
    if batches == 0:
        detail = "the input has 0 samples (or the Dataset yielded no batch)"
    else:
        detail = f"all {batches} of its batches were empty (0 samples)"
    raise ValueError(f"{what} got no data: {detail}, so there is no loss or metric to "
                     "report")


def _jit_compile_mode(jit_compile):
    """compile()'s ``jit_compile`` as the C++ Trainer's capture mode. ``"auto"`` (Keras 3's
    default) or ``None`` (tf.keras's): fit's train steps are captured into a CUDA graph on a GPU
    and run eagerly on the CPU; ``True``: capture, and say why when it cannot; ``False``: never
    (docs/gpu_step.md)."""
    if jit_compile is None or (isinstance(jit_compile, str) and jit_compile == "auto"):
        return "auto"
    if isinstance(jit_compile, (bool, np.bool_)):
        return "on" if jit_compile else "off"
    raise ValueError(f"jit_compile must be True, False, 'auto' or None; got {jit_compile!r}")


def _wants_batch_hooks(callback_list, mode):
    check = getattr(callback_list, "needs_batch_hooks", None)
    return True if check is None else bool(check(mode))


def _should_validate(epoch, validation_freq):
    if isinstance(validation_freq, int):
        return (epoch + 1) % validation_freq == 0
    return (epoch + 1) in validation_freq


def _seed_from_global():
    """A shuffling seed drawn from gpuaccel's global generator: fits after
    gpuaccel.random.set_seed(s) shuffle identically, and successive fits differ."""
    from .._tensor import rand
    return int(rand(2).numpy().astype(np.float64) @ np.array([2.0 ** 31, 2.0 ** 10]))
