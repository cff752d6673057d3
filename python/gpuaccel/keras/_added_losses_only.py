"""Training a model compiled without a loss (``compile(optimizer="adam")``): Keras 3 then
trains on the losses its layers add (``add_loss``, weight and activity regularizers) alone, and
raises its "No loss to compute" error when there are none. Its rule (``Trainer.compute_loss``):
the compiled loss, if any, plus each added loss summed to a scalar; neither is an error. Such a
model needs no labels: ``fit(x)`` trains it.

The C++ step always adds the layers' losses to its compiled loss, so for such a model it is
given ``AddedLossesOnly``: a compiled loss that is zero per example. Its Python runs once per
traced input signature, right after the step's forward pass and before any gradient or update,
and raises Keras's error there when that pass added no loss. Where fit has no labels, each
batch gets a placeholder column of zeros, which nothing reads."""
import weakref

import numpy as np

from .._tensor import from_numpy
from . import losses as losses_module

NO_LOSS_MESSAGE = "No loss to compute. Provide a `loss` argument in `compile()`."


def total_loss(compiled_loss, added_losses):
    """Keras's ``compute_loss`` sum: ``compiled_loss`` (a scalar tensor, or None for a model
    compiled without a loss) plus each of ``added_losses``; ValueError when there is neither."""
    losses = ([] if compiled_loss is None else [compiled_loss]) + list(added_losses)
    if not losses:
        raise ValueError(NO_LOSS_MESSAGE)
    total = losses[0]
    for loss in losses[1:]:
        total = total + loss
    return total


class AddedLossesOnly(losses_module.Loss):
    """The compiled loss of the C++ step for a model compiled without one: zero for every
    example, so the step's loss is the sum of the layers' added losses."""

    def __init__(self, model):
        self._model = weakref.ref(model)  # the model keeps its trainer, which keeps this loss
        super().__init__(name="added_losses_only")

    def call(self, y_true, y_pred):
        model = self._model()
        # The step's forward pass has just run: the layers hold the losses it added.
        if model is not None and not model.losses:
            raise ValueError(NO_LOSS_MESSAGE)
        rows = int(y_pred.shape[0]) if len(y_pred.shape) else 1
        return from_numpy(np.zeros((rows,), np.float32))


def step_loss(model):
    """The loss the C++ step computes for ``model``: its compiled loss, or ``AddedLossesOnly``
    (one per compile) when it was compiled without one."""
    if model.loss is not None:
        return model.loss
    loss = model.__dict__.get("_added_losses_only")
    if loss is None:
        loss = model.__dict__["_added_losses_only"] = AddedLossesOnly(model)
    return loss


def labels_optional(model):
    """Whether fit/evaluate may go without labels: no compiled loss and no compiled metric
    reads them (Keras's metrics fail on ``y=None``, as ours say they need labels)."""
    return model.loss is None and not model.compiled_metrics and not model._weighted_metrics


def give_placeholder_labels(data):
    """Lets ``data`` (an ``_data_adapter`` ArrayData or DatasetData) go without labels: arrays
    get a column of zeros; a Dataset's elements that are ``x`` alone get one per batch. Its
    ``placeholder_labels`` says so (a Python train_step is then given ``x`` alone, as Keras
    gives it)."""
    if hasattr(data, "split"):
        if data.y is None:
            data.y = np.zeros((data.num_samples,), np.float32)
            data.placeholder_labels = True
    else:
        data.placeholder_labels = True
