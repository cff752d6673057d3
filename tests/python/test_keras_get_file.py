"""``keras.utils.get_file`` against Keras's on the same origins, with no network: files served
by an http.server on 127.0.0.1 in a thread (which counts its requests, to see the cache reused)
and file:// URLs, each framework caching into its own folder under tmp_path."""
import functools
import hashlib
import http.server
import io
import os
import tarfile
import threading
import zipfile

import pytest

from gpuaccel import keras as gk

keras = pytest.importorskip("keras")

PAYLOAD = b"0123456789" * 500


def tar_bytes():
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in (("data/a.txt", b"alpha"), ("data/sub/b.txt", b"beta")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def zip_bytes():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("z/c.txt", b"gamma")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(base URL, folder served, paths requested so far)."""
    folder = tmp_path_factory.mktemp("served")
    for name, data in (("payload.bin", PAYLOAD), ("data.tar.gz", tar_bytes()),
                       ("archive.zip", zip_bytes())):
        (folder / name).write_bytes(data)
    requested = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            requested.append(self.path)
            super().do_GET()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", folder, requested
    server.shutdown()
    thread.join()


def both(tmp_path, **kwargs):
    """Each framework's get_file into its own cache folder: the paths relative to it."""
    results = []
    for name, get_file in (("ours", gk.utils.get_file), ("keras", keras.utils.get_file)):
        cache = tmp_path / name
        cache.mkdir(exist_ok=True)
        results.append((os.path.relpath(get_file(cache_dir=str(cache), **kwargs), cache), cache))
    (ours, our_cache), (theirs, _) = results
    assert ours == theirs
    return our_cache / ours


def tree(folder):
    return sorted((os.path.relpath(os.path.join(root, f), folder),
                   open(os.path.join(root, f), "rb").read())
                  for root, _, files in os.walk(folder) for f in files)


def test_download_lands_in_the_cache_and_is_reused(served, tmp_path):
    base, _, requested = served
    path = both(tmp_path, fname="copy.bin", origin=f"{base}/payload.bin")
    assert path.read_bytes() == PAYLOAD and str(path).endswith(os.path.join("datasets",
                                                                             "copy.bin"))
    before = len(requested)
    again = gk.utils.get_file("copy.bin", f"{base}/payload.bin", cache_dir=str(tmp_path / "ours"))
    assert again == str(path) and len(requested) == before  # no second download
    assert os.stat(path).st_mode & 0o777 == 0o644  # readable by the others sharing the cache
    named = both(tmp_path, origin=f"{base}/payload.bin", cache_subdir="models")
    assert named.name == "payload.bin" and named.parent.name == "models"
    leftovers = [f for f in os.listdir(tmp_path / "ours" / "datasets") if f != "copy.bin"]
    assert leftovers == []  # the temporary download file was renamed, nothing else is there


def test_file_origin_and_hashes(served, tmp_path):
    _, folder, _ = served
    origin = (folder / "payload.bin").as_uri()
    sha256, md5 = hashlib.sha256(PAYLOAD).hexdigest(), hashlib.md5(PAYLOAD).hexdigest()
    assert both(tmp_path, fname="a.bin", origin=origin, file_hash=sha256).read_bytes() == PAYLOAD
    assert both(tmp_path, fname="b.bin", origin=origin, file_hash=md5,
                hash_algorithm="md5").read_bytes() == PAYLOAD
    for get_file, cache in ((gk.utils.get_file, tmp_path / "ours"),
                            (keras.utils.get_file, tmp_path / "keras")):
        with pytest.raises(ValueError, match="Incomplete or corrupted file detected. The auto "
                                             "file hash does not match"):
            get_file("c.bin", origin, file_hash="0" * 64, cache_dir=str(cache))
    assert not (tmp_path / "ours" / "datasets" / "c.bin").exists()  # never saved


def test_a_cached_file_with_the_wrong_hash_is_downloaded_again(served, tmp_path):
    base, _, requested = served
    stale = tmp_path / "ours" / "datasets" / "p.bin"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"stale")
    before = len(requested)
    path = gk.utils.get_file("p.bin", f"{base}/payload.bin", cache_dir=str(tmp_path / "ours"),
                             file_hash=hashlib.sha256(PAYLOAD).hexdigest())
    assert open(path, "rb").read() == PAYLOAD and len(requested) == before + 1


def test_extract_returns_keras_3s_folder_with_the_same_files(served, tmp_path):
    base, _, _ = served
    extracted = both(tmp_path, fname="data.tar.gz", origin=f"{base}/data.tar.gz", extract=True)
    assert extracted.name == "data_extracted"
    assert tree(extracted) == tree(tmp_path / "keras" / "datasets" / "data_extracted") == [
        (os.path.join("data", "a.txt"), b"alpha"), (os.path.join("data", "sub", "b.txt"),
                                                    b"beta")]
    unnamed = both(tmp_path, origin=f"{base}/archive.zip", extract=True)
    assert unnamed.name == "archive.zip" and tree(unnamed) == [(os.path.join("z", "c.txt"),
                                                                 b"gamma")]
    assert (tmp_path / "ours" / "datasets" / "archive.zip_archive").is_file()
    untarred = both(tmp_path, fname="plain", origin=f"{base}/data.tar.gz", untar=True)
    assert untarred.name == "plain" and len(tree(untarred)) == 2


def test_default_cache_is_keras_home(served, tmp_path, monkeypatch):
    base, _, _ = served
    (tmp_path / "home").mkdir()  # a home that is missing or read-only falls back to /tmp/.keras
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "home"))
    path = gk.utils.get_file("d.bin", f"{base}/payload.bin")
    assert path == str(tmp_path / "home" / "datasets" / "d.bin")


def test_bad_requests_raise_keras_errors(served, tmp_path):
    base, _, _ = served
    for get_file, cache in ((gk.utils.get_file, tmp_path / "ours"),
                            (keras.utils.get_file, tmp_path / "keras")):
        with pytest.raises(Exception, match="URL fetch failure on .*missing.bin: 404"):
            get_file("m.bin", f"{base}/missing.bin", cache_dir=str(cache))
        with pytest.raises(ValueError, match='specify the "origin"'):
            get_file("m.bin", cache_dir=str(cache))
        with pytest.raises(ValueError, match="Paths are no longer accepted"):
            get_file(os.path.join("sub", "m.bin"), f"{base}/payload.bin", cache_dir=str(cache))
        with pytest.raises(ValueError, match="Can't parse the file name"):
            get_file(None, f"{base}/", cache_dir=str(cache))
        assert not (cache / "datasets" / "m.bin").exists()
