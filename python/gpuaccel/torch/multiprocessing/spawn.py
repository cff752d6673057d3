"""``torch.multiprocessing.spawn``: start ``nprocs`` processes running ``fn(i, *args)`` and
join them, so that the first one to fail ends the others and raises in the parent with the
child's traceback (``ProcessRaisedException``) or its exit code or signal
(``ProcessExitedException``), with PyTorch's messages. Without this a DDP program whose rank 1
raised would leave rank 0 blocked in a collective until its timeout."""
import multiprocessing
import multiprocessing.connection
import signal
import sys
import traceback
import warnings


class ProcessException(Exception):
    """A spawned process failed: ``error_index`` is its index (the rank ``fn`` was given),
    ``pid`` its process id."""

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """The process's ``fn`` raised; the message ends with the child's traceback."""

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg, error_index, error_pid)


class ProcessExitedException(ProcessException):
    """The process ended with a non-zero exit code (``exit_code``) or by a signal
    (``exit_code`` is minus the signal's number, ``signal_name`` its name)."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _run_in_child(fn, index, args, error_queue):
    """A child's entry point: ``fn(index, *args)``; an exception's traceback goes to the parent
    through ``error_queue`` and the child exits with 1. An interrupt (the parent ending the
    child after another one failed) is a quiet exit."""
    try:
        fn(index, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes ``start_processes(..., join=False)`` started, to join later."""

    def __init__(self, processes, error_queues):
        self.processes = processes
        self.error_queues = error_queues
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self):
        return [int(process.pid) for process in self.processes]

    def join(self, timeout=None):
        """Waits up to ``timeout`` seconds (None: until one ends) for processes to end. Returns
        True once all have ended successfully, False while some still run; when one has
        failed, ends the others and raises ProcessRaisedException / ProcessExitedException."""
        if not self.sentinels:
            return True
        ended = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ended:
            index = self.sentinels.pop(sentinel)
            self.processes[index].join()
            if self.processes[index].exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self.sentinels
        for process in self.processes:
            if process.is_alive():
                process.terminate()
            process.join()
        raise self._failure(failed)

    def _failure(self, index):
        process = self.processes[index]
        if self.error_queues[index].empty():  # it died without raising: a signal or exit code
            code = process.exitcode
            if code < 0:
                name = signal.Signals(-code).name
                return ProcessExitedException(f"process {index} terminated with signal {name}",
                                              error_index=index, error_pid=process.pid,
                                              exit_code=code, signal_name=name)
            return ProcessExitedException(f"process {index} terminated with exit code {code}",
                                          error_index=index, error_pid=process.pid,
                                          exit_code=code)
        message = (f"\n\n-- Process {index} terminated with the following error:\n"
                   + self.error_queues[index].get())
        return ProcessRaisedException(message, index, process.pid)


class SpawnContext(ProcessContext):
    """ProcessContext's name before PyTorch 1.4."""

    def __init__(self, processes, error_queues):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.")
        super().__init__(processes, error_queues)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """``spawn`` with any start method of ``multiprocessing`` ('spawn', 'fork',
    'forkserver'). Returns None after joining them all (``join=True``), else the
    ProcessContext."""
    context = multiprocessing.get_context(start_method)
    processes, error_queues = [], []
    for index in range(nprocs):
        error_queue = context.SimpleQueue()
        process = context.Process(target=_run_in_child, args=(fn, index, args, error_queue),
                                  daemon=daemon)
        process.start()
        processes.append(process)
        error_queues.append(error_queue)
    started = ProcessContext(processes, error_queues)
    if not join:
        return started
    while not started.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Runs ``fn(i, *args)`` in ``nprocs`` new processes (i = 0 .. nprocs-1); ``fn`` must be
    defined at the top level of a module, since the 'spawn' method pickles it. Returns None
    after all succeed (``join=True``) or the ProcessContext (``join=False``)."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      f"To use a different start_method use:\n\t\t "
                      f"torch.multiprocessing.start_processes(...)")
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
