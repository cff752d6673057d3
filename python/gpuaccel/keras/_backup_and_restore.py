"""``keras.callbacks.BackupAndRestore``: a ``fit`` killed at any moment (a Colab disconnect, an
out-of-memory kill, a preempted node) goes on from its last backup when run again.

Keras 3's arguments and behaviour: the state is restored in ``on_train_begin`` when a backup
exists, saved at the end of every epoch (``save_freq='epoch'``) or every ``save_freq`` batches,
and the backup is deleted when ``fit`` completes (``delete_checkpoint=True``);
``double_checkpoint=True`` keeps the previous backup too and falls back to it when the latest
cannot be read. Deliberately better than Keras: the backup holds the optimizer state, where
in the epoch the run was and the random and shuffling state (``_training_state``), so a run
resumed mid-epoch continues with the very batch that was next instead of restarting the
epoch, and ends with the weights an uninterrupted run has. It is one checksummed file
written atomically, so a kill while saving leaves the previous backup intact.
"""
import os
import warnings

from ..errors import DataLossError
from . import _training_state
from ._callback import Callback

_LATEST = "training_state.npz"
_PREVIOUS = "_training_state.npz"


class BackupAndRestore(Callback):
    """Backs up the training state in ``backup_dir`` and restores it when ``fit`` restarts.

    ``backup_dir`` must be used by this callback only (another run's backup there would be
    restored). The model must be compiled the same way when ``fit`` runs again.
    """

    def __init__(self, backup_dir, save_freq="epoch", delete_checkpoint=True,
                 double_checkpoint=False):
        super().__init__()
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        if save_freq is False:
            raise ValueError("save_freq=False (Keras's preemption checkpointing on TPUs) is not "
                             "supported; use save_freq='epoch' or a number of batches")
        if save_freq != "epoch" and (isinstance(save_freq, bool)
                                     or not isinstance(save_freq, int) or save_freq < 1):
            raise ValueError("Invalid value for argument `save_freq`. Received: "
                             f"save_freq={save_freq!r}. Expected either 'epoch' or a positive "
                             "integer value.")
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq = save_freq
        self.delete_checkpoint = bool(delete_checkpoint)
        self.double_checkpoint = bool(double_checkpoint)
        self._latest = os.path.join(self.backup_dir, _LATEST)
        self._previous = os.path.join(self.backup_dir, _PREVIOUS)
        self._batches_since_save = 0

    # ---- restore ----

    def on_train_begin(self, logs=None):
        self._batches_since_save = 0
        position = None
        if os.path.exists(self._latest):
            try:
                position = _training_state.restore(self._latest, self.model)
            except DataLossError as exc:
                if not (self.double_checkpoint and os.path.exists(self._previous)):
                    raise
                warnings.warn(f"{exc} Resuming from the previous backup {self._previous!r}.",
                              stacklevel=2)
                position = _training_state.restore(self._previous, self.model)
        elif self.double_checkpoint and os.path.exists(self._previous):
            # Killed between moving the latest backup aside and writing the new one.
            position = _training_state.restore(self._previous, self.model)
        if position is not None:
            self.model._resume_from = position

    # ---- save ----

    def _implements_train_batch_hooks(self):
        return self.save_freq != "epoch"

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        self._batches_since_save += 1
        if self._batches_since_save >= self.save_freq:
            self._batches_since_save = 0
            self._save()

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save()

    def _save(self):
        if self.double_checkpoint and os.path.exists(self._latest):
            os.replace(self._latest, self._previous)
        _training_state.save(self._latest, self.model, self.model._fit_position)

    # ---- done ----

    def on_train_end(self, logs=None):
        if not self.delete_checkpoint:
            return
        for path in (self._latest, self._previous):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        try:  # Keras removes the folder; only when nothing else is in it.
            os.rmdir(self.backup_dir)
        except OSError:
            pass
