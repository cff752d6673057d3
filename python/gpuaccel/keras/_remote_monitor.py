"""``keras.callbacks.RemoteMonitor``: posts each epoch's logs to an HTTP server, as Keras does.

Keras sends them with the ``requests`` package; gpuaccel uses the standard library's urllib
(no extra dependency) and sends the same request: a form field holding the logs as JSON, or
the logs as a JSON body with ``send_as_json=True``. A server that cannot be reached gives
Keras's warning, not an error, so training goes on.
"""
import json
import numbers
import urllib.error
import urllib.parse
import urllib.request
import warnings

from ._callback import Callback


class RemoteMonitor(Callback):
    """``RemoteMonitor(root='http://localhost:9000', path='/publish/epoch/end/', field='data',
    headers=None, send_as_json=False)``: at the end of each epoch, POST ``{'epoch': epoch,
    **logs}`` to ``root + path``."""

    def __init__(self, root="http://localhost:9000", path="/publish/epoch/end/", field="data",
                 headers=None, send_as_json=False):
        super().__init__()
        self.root, self.path, self.field = root, path, field
        self.headers = dict(headers or {})
        self.send_as_json = bool(send_as_json)

    def on_epoch_end(self, epoch, logs=None):
        payload = {"epoch": epoch}
        for key, value in (logs or {}).items():
            # logs hold Python floats, NumPy scalars or 0-d arrays; JSON takes plain numbers
            payload[key] = value if isinstance(value, (numbers.Number, str)) else (
                value.item() if hasattr(value, "item") else value)
        if self.send_as_json:
            body = json.dumps(payload).encode()
            content_type = "application/json"
        else:
            body = urllib.parse.urlencode({self.field: json.dumps(payload)}).encode()
            content_type = "application/x-www-form-urlencoded"
        request = urllib.request.Request(self.root + self.path, data=body, method="POST",
                                         headers={"Content-Type": content_type, **self.headers})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                response.read()
        except urllib.error.HTTPError:
            pass  # the server answered: requests.post does not raise on its status either
        except (urllib.error.URLError, OSError, ValueError):
            warnings.warn(f"Could not reach RemoteMonitor root server at {self.root}",
                          stacklevel=2)
