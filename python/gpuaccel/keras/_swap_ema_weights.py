"""``keras.callbacks.SwapEMAWeights``: evaluates and predicts with the optimizer's moving
average of the weights (``use_ema=True``) instead of the trained weights, as Keras does.

The exchange runs in C++ (``Optimizer::swap_variables_with_averages``): each trainable weight
and its average trade values in place on their device, so the training loop's tensors stay the
same objects and the next step trains the real weights again. The hooks and their conditions
are Keras 3.15's, including its ``on_predict_end``, which leaves the averages in the model
(Keras tests ``not self._ema_weights_in_model`` there; copied as it is so both libraries end a
``predict`` in the same state).
"""
from ._callback import Callback


class SwapEMAWeights(Callback):
    """``SwapEMAWeights(swap_on_epoch=False)``: the averages are in the model during
    ``evaluate``/``predict`` (and fit's validation); with ``swap_on_epoch=True`` also from each
    epoch's end to the next epoch's start, and after the last epoch the averages are set to the
    trained weights so that ``fit``'s final ``finalize_variable_values`` keeps the averages."""

    def __init__(self, swap_on_epoch=False):
        super().__init__()
        self.swap_on_epoch = swap_on_epoch
        self._ema_weights_in_model = False

    def _optimizer_with_ema(self):
        optimizer = self.model.optimizer
        inner = getattr(optimizer, "inner_optimizer", optimizer)
        if not getattr(inner, "use_ema", False):
            raise ValueError("SwapEMAWeights must be used when `use_ema=True` is set on the "
                             f"optimizer. Received: use_ema={getattr(inner, 'use_ema', False)}")
        return optimizer

    def _weights(self):
        from .optimizers import _unwrap_variable
        return [_unwrap_variable(w, i) for i, w in enumerate(self.model.trainable_weights)]

    def _swap_variables(self):
        self._optimizer_with_ema()._cpp.swap_variables_with_averages(self._weights())

    def _finalize_ema_values(self):
        self._optimizer_with_ema()._cpp.copy_variables_into_averages(self._weights())

    def on_epoch_begin(self, epoch, logs=None):
        if self.swap_on_epoch and self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    def on_epoch_end(self, epoch, logs=None):
        if self.swap_on_epoch and not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True
            if epoch == self.params["epochs"] - 1:
                self._finalize_ema_values()

    def on_test_begin(self, logs=None):
        if not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True

    def on_test_end(self, logs=None):
        if self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    def on_predict_begin(self, logs=None):
        if not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True

    def on_predict_end(self, logs=None):
        if not self._ema_weights_in_model:  # Keras's condition (see the module's docstring)
            self._swap_variables()
            self._ema_weights_in_model = False
