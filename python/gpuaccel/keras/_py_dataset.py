"""``keras.utils.PyDataset`` (and its older name ``Sequence``): batches made by Python code,
``__getitem__(index)`` per batch and ``__len__`` (or ``num_batches``) for their count, fed to
``fit``/``evaluate``/``predict``.

Why it exists: course code written for Keras subclasses it to load or augment batches on the
fly. As in Keras, ``fit(shuffle=True)`` draws the batches of each epoch in a new order (from
fit's seeded generator here), and ``on_epoch_begin``/``on_epoch_end`` run around every pass.
Batches are made in the training thread: ``workers``, ``use_multiprocessing`` and
``max_queue_size`` are accepted and kept, and change nothing.
"""
import itertools


class PyDataset:
    """Subclass it, implement ``__getitem__(index)`` returning a batch (``x``, ``(x, y)`` or
    ``(x, y, sample_weight)``) and ``__len__`` (or the ``num_batches`` property; None means
    endless), and call ``super().__init__(**kwargs)``."""

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    @property
    def workers(self):
        return getattr(self, "_workers", 1)

    @workers.setter
    def workers(self, value):
        self._workers = value

    @property
    def use_multiprocessing(self):
        return getattr(self, "_use_multiprocessing", False)

    @use_multiprocessing.setter
    def use_multiprocessing(self, value):
        self._use_multiprocessing = value

    @property
    def max_queue_size(self):
        return getattr(self, "_max_queue_size", 10)

    @max_queue_size.setter
    def max_queue_size(self, value):
        self._max_queue_size = value

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__(index), "
                                  "returning the batch at that index")

    @property
    def num_batches(self):
        """The number of batches (``len(self)``), or None for an endless dataset."""
        if hasattr(self, "__len__"):
            return len(self)
        raise NotImplementedError(f"{type(self).__name__} must implement __len__ or the "
                                  "num_batches property (None for an endless dataset)")

    def on_epoch_begin(self):
        """Called before each pass over the batches."""

    def on_epoch_end(self):
        """Called after each pass over the batches."""

    def __iter__(self):
        count = self.num_batches
        for index in (range(count) if count is not None else itertools.count()):
            yield self[index]


Sequence = PyDataset
