"""``keras.callbacks.Callback``, the base class of every callback, in a module of its own.

The callbacks that are subsystems of their own (``TensorBoard`` in ``_tensorboard_callback``,
``BackupAndRestore`` in ``_backup_and_restore``) subclass it and ``keras.callbacks`` re-exports
them, so the base class sits below all three and none of them imports another back.
"""


def _default(method):
    """Marks a base-class hook as 'does nothing', so CallbackList can skip it."""
    method._is_default = True
    return method


def _is_default(method):
    return getattr(method, "_is_default", False)


class Callback:
    """Base class of callbacks: override the hooks you need.

    Attributes: ``params`` (dict: ``verbose``, ``epochs``, ``steps``) and ``model``.
    """

    def __init__(self):
        self.params = None
        self._model = None

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self._model = model

    @property
    def model(self):
        return self._model

    @_default
    def on_batch_begin(self, batch, logs=None):
        """Older name of ``on_train_batch_begin``."""

    @_default
    def on_batch_end(self, batch, logs=None):
        """Older name of ``on_train_batch_end``."""

    @_default
    def on_epoch_begin(self, epoch, logs=None):
        """At the start of epoch ``epoch`` (0-based), during ``fit``."""

    @_default
    def on_epoch_end(self, epoch, logs=None):
        """At the end of an epoch; ``logs`` holds the epoch's metrics (``val_`` ones too)."""

    @_default
    def on_train_batch_begin(self, batch, logs=None):
        """Before training batch ``batch`` (0-based within the epoch)."""
        self.on_batch_begin(batch, logs=logs)

    @_default
    def on_train_batch_end(self, batch, logs=None):
        """After a training batch; ``logs`` holds the metrics so far in the epoch."""
        self.on_batch_end(batch, logs=logs)

    @_default
    def on_test_batch_begin(self, batch, logs=None):
        """Before a batch of ``evaluate`` (or of validation in ``fit``)."""

    @_default
    def on_test_batch_end(self, batch, logs=None):
        """After a batch of ``evaluate`` (or of validation in ``fit``)."""

    @_default
    def on_predict_batch_begin(self, batch, logs=None):
        """Before a batch of ``predict``."""

    @_default
    def on_predict_batch_end(self, batch, logs=None):
        """After a batch of ``predict``."""

    @_default
    def on_train_begin(self, logs=None):
        """At the start of ``fit``."""

    @_default
    def on_train_end(self, logs=None):
        """At the end of ``fit``."""

    @_default
    def on_test_begin(self, logs=None):
        """At the start of ``evaluate`` (or of validation in ``fit``)."""

    @_default
    def on_test_end(self, logs=None):
        """At the end of ``evaluate`` (or of validation in ``fit``)."""

    @_default
    def on_predict_begin(self, logs=None):
        """At the start of ``predict``."""

    @_default
    def on_predict_end(self, logs=None):
        """At the end of ``predict``."""

    # Which batch hooks this callback implements; CallbackList dispatches only to those.
    # A subclass whose batch hooks are sometimes no-ops (ModelCheckpoint saving per epoch)
    # overrides these to say so.
    def _implements_train_batch_hooks(self):
        return not (_is_default(self.on_train_batch_begin) and _is_default(self.on_batch_begin)
                    and _is_default(self.on_train_batch_end) and _is_default(self.on_batch_end))

    def _implements_test_batch_hooks(self):
        return not (_is_default(self.on_test_batch_begin)
                    and _is_default(self.on_test_batch_end))

    def _implements_predict_batch_hooks(self):
        return not (_is_default(self.on_predict_batch_begin)
                    and _is_default(self.on_predict_batch_end))
