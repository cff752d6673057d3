"""Runs test code in a separate Python process, so that a crash (SIGSEGV, abort) or a hang in
gpuaccel fails the one test with what was running, instead of killing pytest.

The fuzz suites send every generated example to an ``IsolatedWorker``; the crash regression
tests run their snippet there. When the worker dies, the test fails with the signal, the call
(the reproducer: a module function and its arguments, or the snippet) and the tail of the
worker's stderr, where faulthandler printed the Python stack; the next call starts a new
worker. Requests and replies are pickled over the worker's stdin/stdout pipes; everything the
worker (or gpuaccel) prints goes to its stderr.

    isolated.call("test_fuzz_ops", "check_binary", case)   # AssertionError on failure or crash
    outcome = isolated.run("import gpuaccel\\nresult = gpuaccel.ones(2**31, 2**31)")
    outcome.error_type == "InvalidArgumentError"
"""
import dataclasses
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
import traceback

import pytest

_HEADER = struct.Struct("<Q")


@dataclasses.dataclass
class Outcome:
    """What a snippet did: ``value`` (repr of its ``result`` variable) or the exception it
    raised (class name, names of its classes, message, traceback)."""
    value: str = None
    error_type: str = None
    error_bases: tuple = ()
    message: str = None
    traceback: str = None

    def raised(self, name):
        return name in self.error_bases


class WorkerCrashed(AssertionError):
    """The worker process died (a signal or an exit) or hung while running a request."""


def _send(stream, obj):
    data = pickle.dumps(obj)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read_exactly(fd, count, deadline):
    chunks, remaining = [], count
    while remaining:
        timeout = None if deadline is None else max(deadline - time.monotonic(), 0)
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            raise TimeoutError
        chunk = os.read(fd, remaining)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _receive(fd, deadline=None):
    (size,) = _HEADER.unpack(_read_exactly(fd, _HEADER.size, deadline))
    return pickle.loads(_read_exactly(fd, size, deadline))


class IsolatedWorker:
    """One worker process at a time, started on first use and after a crash."""

    def __init__(self, timeout=300, env=None):
        self.timeout = timeout
        self.env = env
        self._process = None
        self._stderr = None

    def _start(self):
        from runtime_fixtures import package_environment
        env = package_environment(**(self.env or {}))
        here = os.path.dirname(os.path.abspath(__file__))
        env["PYTHONPATH"] = os.pathsep.join([here, env.get("PYTHONPATH", "")])
        self._stderr = tempfile.TemporaryFile()
        self._process = subprocess.Popen(
            [sys.executable, "-X", "faulthandler", os.path.abspath(__file__), "--worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, env=env,
            cwd=tempfile.gettempdir())

    def _stderr_tail(self, limit=6000):
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        text = self._stderr.read().decode(errors="replace")
        return text[-limit:]

    def _request(self, request, description):
        if self._process is None or self._process.poll() is not None:
            self._start()
        try:
            _send(self._process.stdin, request)
            return _receive(self._process.stdout.fileno(), time.monotonic() + self.timeout)
        except (EOFError, BrokenPipeError, TimeoutError) as error:
            hung = isinstance(error, TimeoutError)
            if hung:
                self._process.kill()
            code = self._process.wait()
            reason = (f"hung for more than {self.timeout} s" if hung else
                      f"died with signal {signal.Signals(-code).name}" if code < 0 else
                      f"exited with status {code}")
            tail = self._stderr_tail()
            self._process = None
            raise WorkerCrashed(f"the isolated worker {reason} while running:\n{description}\n"
                                f"--- worker stderr (tail) ---\n{tail}") from None

    def call(self, module, function, *args, **kwargs):
        """``module.function(*args, **kwargs)`` in the worker; returns its result. Its
        exceptions come back as an AssertionError carrying the remote traceback."""
        description = f"{module}.{function}(*{args!r}, **{kwargs!r})"
        reply = self._request(("call", module, function, args, kwargs), description)
        if reply[0] == "ok":
            return reply[1]
        raise AssertionError(f"{description} failed in the worker:\n{reply[1]['traceback']}")

    def run(self, source):
        """Executes a snippet in a fresh namespace of the worker; its ``result`` variable (if
        any) comes back as a repr, an exception as the Outcome's error fields."""
        return Outcome(**self._request(("exec", source), source)[1])

    def close(self):
        if self._process is not None and self._process.poll() is None:
            self._process.stdin.close()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None


@pytest.fixture(scope="module")
def isolated():
    worker = IsolatedWorker()
    yield worker
    worker.close()


def _outcome_of(error):
    # A dict, not an Outcome: the worker runs this file as __main__, the test imports it.
    return dict(error_type=type(error).__name__,
                error_bases=tuple(c.__name__ for c in type(error).__mro__),
                message=str(error), traceback=traceback.format_exc())


def _serve():
    import importlib
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # prints (ours and the C++ core's) go to stderr, not into the protocol
    requests = sys.stdin.buffer
    while True:
        header = requests.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        request = pickle.loads(requests.read(_HEADER.unpack(header)[0]))
        print(f"--- request: {request!r}"[:2000], file=sys.stderr, flush=True)
        if request[0] == "call":
            _, module, function, args, kwargs = request
            try:
                reply = ("ok", getattr(importlib.import_module(module), function)(*args, **kwargs))
            except BaseException as error:  # noqa: BLE001 -- every failure goes back to the test
                reply = ("error", _outcome_of(error))
        else:
            namespace = {}
            try:
                exec(compile(request[1], "<isolated snippet>", "exec"), namespace)
                reply = ("ok", dict(value=repr(namespace.get("result"))))
            except BaseException as error:  # noqa: BLE001
                reply = ("error", _outcome_of(error))
        _send(replies, reply)


if __name__ == "__main__" and sys.argv[1:] == ["--worker"]:
    _serve()
