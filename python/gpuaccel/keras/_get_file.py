"""``keras.utils.get_file``: a file fetched once into Keras's cache (``~/.keras/<cache_subdir>``,
or ``cache_dir``), checked against a hash and optionally extracted, with Keras 3's file
naming and return values, so tutorial code that downloads its data runs unchanged.

The download itself is ``keras.datasets``'s (``_files.download``): the bytes go to a temporary
file that is renamed into place only after the hash matched, so an interrupted or corrupted
download never poses as the cached file (Keras leaves a corrupted one in place).
"""
import hashlib
import os
import tarfile
import tempfile
import urllib.error
import urllib.parse
import warnings
import zipfile

from .datasets import _files
from ._io_utils import print_msg

__all__ = ["get_file"]


def _hasher(algorithm, file_hash=None):
    """Keras's choice: sha256 when asked, or 'auto' with a 64-digit hash; md5 otherwise."""
    if algorithm == "sha256" or (algorithm == "auto" and file_hash is not None
                                 and len(file_hash) == 64):
        return hashlib.sha256()
    return hashlib.md5()


def _matches(path, file_hash, algorithm):
    hasher = _hasher(algorithm, file_hash)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            hasher.update(chunk)
    return hasher.hexdigest() == str(file_hash)


def _inside(base, member):
    base = os.path.realpath(base)
    return os.path.commonpath([base, os.path.realpath(os.path.join(base, member))]) == base


def _extract(path, folder, archive_format):
    """Extracts a tar (any compression) or zip archive into ``folder``, leaving out members
    that would land outside it; False when ``path`` is none of ``archive_format``."""
    if archive_format is None:
        return False
    formats = ["tar", "zip"] if archive_format == "auto" else (
        [archive_format] if isinstance(archive_format, str) else list(archive_format))
    for kind in formats:
        if kind not in ("tar", "zip"):
            raise NotImplementedError(kind)
        if kind == "tar" and tarfile.is_tarfile(path):
            with tarfile.open(path) as archive:
                members = [m for m in archive.getmembers() if _inside(folder, m.name)]
                archive.extractall(folder, members=members, filter="data")
            return True
        if kind == "zip" and zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                archive.extractall(folder, members=[m for m in archive.infolist()
                                                    if _inside(folder, m.filename)])
            return True
    return False


def _targets(fname, origin, datadir, extract):
    """(download path, extraction folder or None), named as Keras 3 names them."""
    provided = fname
    fname = os.fspath(fname) if fname is not None else ""
    if not fname:
        fname = os.path.basename(urllib.parse.urlsplit(origin).path)
        if not fname:
            raise ValueError(f"Can't parse the file name from the origin provided: '{origin}'."
                             "Please specify the `fname` argument.")
    elif os.sep in fname:
        raise ValueError("Paths are no longer accepted as the `fname` argument. To specify the "
                         f"file's parent directory, use the `cache_dir` argument. Received: "
                         f"fname={fname}")
    if not extract:
        return os.path.join(datadir, fname), None
    if provided and "." in fname:  # 'data.tar.gz' downloads as itself, extracts to data_extracted
        return os.path.join(datadir, fname), os.path.join(datadir,
                                                          fname[:fname.find(".")] + "_extracted")
    return os.path.join(datadir, f"{fname}_archive"), os.path.join(datadir, fname)


def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None,
             cache_subdir="datasets", hash_algorithm="auto", extract=False,
             archive_format="auto", cache_dir=None, force_download=False):
    """``keras.utils.get_file``: the path of ``origin``'s file in the cache, downloaded unless
    a copy is there already (and matches ``file_hash``); with ``extract=True`` the archive is
    unpacked and the folder it went to is returned."""
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    base = os.path.expanduser(cache_dir if cache_dir is not None else _files.keras_home())
    if not os.access(base, os.W_OK):  # Keras's fallback for a read-only cache
        base = os.path.join("/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir(),
                            ".keras")
    datadir = os.path.join(base, cache_subdir)
    os.makedirs(datadir, exist_ok=True)
    extract = bool(extract or untar)
    target, folder = _targets(fname, origin, datadir, extract)

    download = force_download or not os.path.exists(target)
    if not download and file_hash is not None and not _matches(target, file_hash,
                                                               hash_algorithm):
        print_msg(f"A local file was found, but it seems to be incomplete or outdated because "
                  f"the {hash_algorithm} file hash does not match the original value of "
                  f"{file_hash} so we will re-download the data.")
        download = True
    if download:
        print_msg(f"Downloading data from {origin}")

        def check(path):
            if file_hash is not None and not _matches(path, file_hash, hash_algorithm):
                raise ValueError(f"Incomplete or corrupted file detected. The {hash_algorithm} "
                                 f"file hash does not match the provided value of {file_hash}.")
            return True

        try:
            _files.download(origin, target, check)
        except urllib.error.HTTPError as error:
            raise OSError(f"URL fetch failure on {origin}: {error.code} -- {error.msg}") from None
        except urllib.error.URLError as error:
            raise OSError(f"URL fetch failure on {origin}: {error.errno} -- "
                          f"{error.reason}") from None
    if not extract:
        return target
    if not _extract(target, folder, "tar" if untar else archive_format):
        warnings.warn("Could not extract archive.", stacklevel=2)
    return folder
