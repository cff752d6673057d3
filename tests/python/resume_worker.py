"""A small seeded training run for test_backup_and_restore.py, run as a child process so it can
be killed with SIGKILL (no cleanup, no finally blocks) at a chosen point and run again.

    python resume_worker.py OUT.npy BACKUP_DIR SAVE_FREQ [KILL_STEP KILL_WHERE]

SAVE_FREQ is 'epoch', a number of batches, or 'none' (no BackupAndRestore: the reference run).
KILL_WHERE: 'before_save' (at the end of batch KILL_STEP, before a backup of it is written),
'after_save' (after it is written), or 'mid_write' (the process dies half way through writing
the backup after batch KILL_STEP, or the next backup when none is written there).
The final weights (all of them, concatenated) are saved to OUT.npy.
"""
import os
import signal
import sys

import numpy as np

import gpuaccel
from gpuaccel import _atomic_file, _checksum, keras

SAMPLES, BATCH, EPOCHS = 60, 8, 4  # 8 batches per epoch, the last one short


def die():
    os.kill(os.getpid(), signal.SIGKILL)


class KillAt(keras.callbacks.Callback):
    def __init__(self, global_step):
        super().__init__()
        self.global_step = global_step
        self.done = 0

    def on_train_batch_end(self, batch, logs=None):
        self.done += 1
        if self.done == self.global_step:
            die()


def die_in_the_next_backup_write():
    def half_write(path, data):
        with _atomic_file.atomic_open(path) as f:
            f.write(data[:len(data) // 2])
            f.flush()
            die()
    _checksum.atomic_write_bytes = half_write


class KillInBackup(KillAt):
    def on_train_batch_end(self, batch, logs=None):
        self.done += 1
        if self.done == self.global_step:
            die_in_the_next_backup_write()


def main(out, backup_dir, save_freq, kill_step=None, kill_where=None):
    keras.utils.set_random_seed(1234)
    gpuaccel.config.experimental.enable_op_determinism()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((SAMPLES, 6)).astype(np.float32)
    y = rng.integers(0, 3, SAMPLES)
    model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dropout(0.3), keras.layers.Dense(3)])
    model.compile(optimizer=keras.optimizers.Adam(0.01),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    callbacks = []
    killer = None
    if kill_step is not None:
        kind = KillInBackup if kill_where == "mid_write" else KillAt
        killer = kind(int(kill_step))
    if killer is not None and kill_where == "before_save":
        callbacks.append(killer)
    if save_freq != "none":
        freq = save_freq if save_freq == "epoch" else int(save_freq)
        callbacks.append(keras.callbacks.BackupAndRestore(backup_dir, save_freq=freq))
    if killer is not None and kill_where != "before_save":
        callbacks.append(killer)
    model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, shuffle=True, verbose=0,
              callbacks=callbacks)
    np.save(out, np.concatenate([w.ravel() for w in model.get_weights()]))


if __name__ == "__main__":
    main(*sys.argv[1:])
