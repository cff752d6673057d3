"""keras.callbacks LambdaCallback, ProgbarLogger, BackupAndRestore and RemoteMonitor inside a
real ``fit``,
against real Keras running the same model (same starting weights, data and hooks): the hooks
fire in the same order with the same logs, the bar prints the same lines (keras.utils.Progbar
too, driven by hand), and a fit interrupted and run again resumes at the same epoch with the
same weights."""
import http.server
import json
import os
import re
import threading
import urllib.parse

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402

from gpuaccel import keras as gk  # noqa: E402
from gpuaccel.keras import _progbar  # noqa: E402

RNG = np.random.default_rng(31)
X = RNG.normal(size=(8, 3)).astype(np.float32)
Y = RNG.normal(size=(8, 1)).astype(np.float32)
X_VAL, Y_VAL = X[:4] * 0.5, Y[:4]
START = [RNG.normal(size=(3, 1)).astype(np.float32), np.zeros(1, np.float32)]


@pytest.fixture(autouse=True)
def not_a_terminal(monkeypatch):
    """Captured output is not a terminal for either bar, whatever ran before."""
    monkeypatch.setattr(_progbar, "is_dynamic_display", lambda: False)


def make_model(framework):
    model = framework.Sequential([framework.Input((3,)), framework.layers.Dense(1)])
    model.set_weights(START)
    model.compile(optimizer=framework.optimizers.SGD(0.1), loss="mse")
    return model


def recorded_events(framework):
    """The (hook, index, sorted log keys) a LambdaCallback sees in a 2-epoch fit."""
    events, epoch_losses = [], []

    def record(hook):
        def called(*args, logs=None):  # logs come by keyword to batch hooks, as in Keras
            if logs is None and args:
                *args, logs = args
            events.append((hook, *args, tuple(sorted(logs or {}))))
        return called

    callback = framework.callbacks.LambdaCallback(
        on_train_begin=record("train_begin"), on_epoch_begin=record("epoch_begin"),
        on_train_batch_begin=record("batch_begin"), on_train_batch_end=record("batch_end"),
        on_epoch_end=lambda epoch, logs: (events.append(("epoch_end", epoch,
                                                         tuple(sorted(logs)))),
                                          epoch_losses.append(logs["loss"])),
        on_train_end=record("train_end"))
    model = make_model(framework)
    model.fit(X, Y, batch_size=4, epochs=2, validation_data=(X_VAL, Y_VAL), shuffle=False,
              verbose=0, callbacks=[callback])
    return events, epoch_losses


def test_lambda_callback_sees_the_hooks_keras_calls():
    ours, our_losses = recorded_events(gk)
    theirs, their_losses = recorded_events(keras)
    assert ours == theirs
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-5)
    seen = []  # any other hook is given by keyword, in both
    for framework in (gk, keras):
        framework.callbacks.LambdaCallback(
            on_test_begin=lambda logs, f=framework: seen.append(f)).on_test_begin({})
    assert seen == [gk, keras]


NUMBER = re.compile(r"(\w+): (-?\d+\.\d+(?:e[-+]\d+)?)")
TIMING = re.compile(r"\d+m?s(?=\b)|\d+us")


def printed_lines(framework, capsys, verbose):
    make_model(framework).fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=verbose,
                              callbacks=[framework.callbacks.ProgbarLogger()])
    return drawn_lines(capsys)


def drawn_lines(capsys):
    text = re.sub(r"\x1b\[[0-9;]*m|\x08", "", capsys.readouterr().out)
    # what a reader sees: Keras 3 redraws each bar in place with \r even when the output is not
    # a terminal (gpuaccel prints only the final line there), so keep each line's last drawing
    drawn = [line.split("\r")[-1].rstrip() for line in text.split("\n")]
    return [line for line in drawn if line]


def assert_same_lines(ours, theirs):
    """The same layout, timings aside, and metric values equal to rounding."""
    assert len(ours) == len(theirs), (ours, theirs)
    for mine, reference in zip(ours, theirs):
        # the layout is the same; timings differ, metric values agree to rounding
        assert TIMING.sub("T", NUMBER.sub(r"\1: V", mine)) == \
            TIMING.sub("T", NUMBER.sub(r"\1: V", reference)), (mine, reference)
        mine_values = [(k, float(v)) for k, v in NUMBER.findall(mine)]
        reference_values = [(k, float(v)) for k, v in NUMBER.findall(reference)]
        assert [k for k, _ in mine_values] == [k for k, _ in reference_values]
        np.testing.assert_allclose([v for _, v in mine_values],
                                   [v for _, v in reference_values], atol=2e-4)


@pytest.mark.parametrize("verbose", [1, 2])
def test_progbar_logger_prints_keras_lines(capsys, verbose):
    ours = printed_lines(gk, capsys, verbose)
    theirs = printed_lines(keras, capsys, verbose)
    assert len(ours) == 4
    assert_same_lines(ours, theirs)


@pytest.mark.parametrize("verbose, stateful", [(1, None), (2, None), (1, ["acc"])])
def test_utils_progbar_averages_and_prints_like_keras(capsys, verbose, stateful):
    def drive(utils):
        bar = utils.Progbar(5, verbose=verbose, stateful_metrics=stateful, unit_name="sample")
        bar.update(1, values=[("loss", 0.5), ("acc", 0.25)])
        bar.add(2, values=[("loss", 0.25), ("acc", 0.5)])  # weighs 2 steps in the mean
        bar.update(5, values=[("loss", 0.125), ("acc", 0.75)])
        return drawn_lines(capsys)

    ours, theirs = drive(gk.utils), drive(keras.utils)
    assert len(ours) == 1 and "5/5" in ours[0]
    assert_same_lines(ours, theirs)


class InterruptAt(Exception):
    pass


def interrupted_then_resumed(framework, backup_dir):
    """A 4-epoch fit stopped by an exception during epoch 2, then run again: the epochs the
    second fit runs, its history, the final weights and whether the backup is left."""
    def stop(epoch, logs):
        if epoch == 2:
            raise InterruptAt()

    model = make_model(framework)
    backup = framework.callbacks.BackupAndRestore(backup_dir)
    with pytest.raises(InterruptAt):
        model.fit(X, Y, batch_size=4, epochs=4, shuffle=False, verbose=0,
                  callbacks=[backup, framework.callbacks.LambdaCallback(on_epoch_begin=stop)])
    left_after_interruption = os.path.isdir(backup_dir) and bool(os.listdir(backup_dir))
    resumed, epochs = make_model(framework), []
    history = resumed.fit(X, Y, batch_size=4, epochs=4, shuffle=False, verbose=0, callbacks=[
        framework.callbacks.BackupAndRestore(backup_dir),
        framework.callbacks.LambdaCallback(on_epoch_begin=lambda e, logs: epochs.append(e))])
    return (epochs, len(history.history["loss"]), left_after_interruption,
            os.path.exists(backup_dir), resumed.get_weights())


def test_backup_and_restore_resumes_where_keras_resumes(tmp_path):
    ours = interrupted_then_resumed(gk, str(tmp_path / "ours"))
    theirs = interrupted_then_resumed(keras, str(tmp_path / "keras"))
    assert ours[:4] == theirs[:4] == ([2, 3], 2, True, False)
    for mine, reference in zip(ours[4], theirs[4], strict=True):
        np.testing.assert_allclose(mine, reference, rtol=1e-5, atol=1e-6)
    for framework in (gk, keras):
        with pytest.raises(ValueError, match="save_freq"):
            framework.callbacks.BackupAndRestore(str(tmp_path), save_freq="batch")


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Keeps each POST's path, content type and body on the server object."""

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.posts.append((self.path, self.headers["Content-Type"],
                                  self.headers.get("X-Run"), body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture()
def recording_server():
    server = http.server.HTTPServer(("127.0.0.1", 0), _Recorder)
    server.posts = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def decoded(post, as_json):
    path, content_type, run, body = post
    if as_json:
        return path, content_type, run, json.loads(body)
    form = urllib.parse.parse_qs(body.decode())
    assert list(form) == ["logs"], form
    return path, content_type, run, json.loads(form["logs"][0])


@pytest.mark.parametrize("as_json", [False, True])
def test_remote_monitor_posts_what_keras_posts(recording_server, as_json):
    root = f"http://127.0.0.1:{recording_server.server_port}"
    sent = {}
    for framework in (gk, keras):
        recording_server.posts.clear()
        monitor = framework.callbacks.RemoteMonitor(root=root, path="/epoch/", field="logs",
                                                     headers={"X-Run": "r1"},
                                                     send_as_json=as_json)
        make_model(framework).fit(X, Y, batch_size=4, epochs=2, validation_data=(X_VAL, Y_VAL),
                                  shuffle=False, verbose=0, callbacks=[monitor])
        sent[framework] = [decoded(p, as_json) for p in recording_server.posts]
    ours, theirs = sent[gk], sent[keras]
    assert len(ours) == len(theirs) == 2
    for mine, reference in zip(ours, theirs):
        assert mine[:3] == reference[:3]  # path, content type, the user's header
        assert mine[3].keys() == reference[3].keys() and mine[3]["epoch"] == reference[3]["epoch"]
        np.testing.assert_allclose([mine[3][k] for k in sorted(mine[3])],
                                   [reference[3][k] for k in sorted(mine[3])], rtol=1e-5)


def test_remote_monitor_warns_like_keras_when_nobody_listens():
    for framework in (gk, keras):
        monitor = framework.callbacks.RemoteMonitor(root="http://127.0.0.1:9")
        with pytest.warns(UserWarning, match="Could not reach RemoteMonitor root server"):
            monitor.on_epoch_end(0, {"loss": 1.0})
