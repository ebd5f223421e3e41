"""The persistent compile cache: compiled ``.vmfb``s on disk, shared by every process of a user.

An IREE compile costs 0.4-2.5 s where XLA's takes 0.01-0.3 s, so a program's second run should not pay it again.
The key (made by the caller) covers the StableHLO after irax's passes, the flags (target, CPU), and the irax and
IREE versions. Beside the modules (``VMFB`` entries) the cache keeps the StableHLO each traced program lowers to
(``STABLEHLO`` entries, keyed by the traced module and irax's sources), so that a warm first call skips irax's
passes too. Each entry is written to a temporary file and renamed into place, so concurrent processes see a
whole entry or none; it starts with a magic tag and the SHA-256 of its body, checked on every read, so a corrupt
or truncated entry is deleted and compiled again, never loaded. The directory is bounded: past the size limit,
the least recently used entries go (a hit refreshes its entry's modification time). A directory that cannot be
written (read-only, full) turns the cache off for the process, with one warning.

The directory is ``$IRAX_CACHE_DIR`` (empty or ``none`` to disable), else ``$XDG_CACHE_HOME/irax`` or
``~/.cache/irax``; ``irax.config.update("irax_cache_dir", path_or_None)`` changes it at run time.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import warnings

_MAGIC = b"IRAXC1\n"
_DIGEST = 32
VMFB = ".vmfb"
STABLEHLO = ".mlir"
_SUFFIXES = (VMFB, STABLEHLO)
DEFAULT_MAX_BYTES = 1 << 30

_disabled_dirs: set = set()


def directory():
    from irax.config import config
    return config.irax_cache_dir or None


def _path(root, key, kind):
    return os.path.join(root, key[:2], key + kind)


def get(key: str, kind: str = VMFB):
    """The cached entry of ``kind`` for ``key``, or ``None`` (missing, unreadable, or corrupt and now deleted)."""
    root = directory()
    if root is None:
        return None
    path = _path(root, key, kind)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    body = data[len(_MAGIC) + _DIGEST:]
    if not data.startswith(_MAGIC) or hashlib.sha256(body).digest() != data[len(_MAGIC):len(_MAGIC) + _DIGEST]:
        _remove(path)
        return None
    try:
        os.utime(path)
    except OSError:
        pass
    return body


def put(key: str, data: bytes, kind: str = VMFB):
    root = directory()
    if root is None or root in _disabled_dirs:
        return
    path = _path(root, key, kind)
    tmp = None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(_MAGIC + hashlib.sha256(data).digest() + data)
        os.replace(tmp, path)
    except OSError as e:
        if tmp is not None:
            _remove(tmp)
        _disabled_dirs.add(root)
        warnings.warn(f"irax: the compile cache at {root} cannot be written ({e.strerror or e}); compiling without "
                      f"it from now on", RuntimeWarning, stacklevel=2)
        return
    evict(root, max_bytes())


def max_bytes() -> int:
    from irax.config import config
    return int(config.irax_cache_max_bytes)


def entries(root, kinds=_SUFFIXES):
    """``(path, size, mtime)`` of every entry of ``kinds``, oldest first."""
    found = []
    for sub in _scandir(root):
        if sub.is_dir():
            for entry in _scandir(sub.path):
                if entry.name.endswith(kinds):
                    try:
                        stat = entry.stat()
                    except OSError:
                        continue
                    found.append((entry.path, stat.st_size, stat.st_mtime))
    return sorted(found, key=lambda e: e[2])


def evict(root, limit):
    """Deletes the least recently used entries until the directory holds at most ``limit`` bytes."""
    found = entries(root)
    total = sum(size for _, size, _ in found)
    for path, size, _ in found:
        if total <= limit:
            break
        _remove(path)
        total -= size


def info(root=None) -> dict:
    root = root or directory()
    found = entries(root) if root else []
    return {"directory": root, "entries": len(found), "bytes": sum(size for _, size, _ in found),
            "max_bytes": max_bytes()}


def clear(root=None) -> int:
    """Deletes every entry; returns how many."""
    root = root or directory()
    found = entries(root) if root else []
    for path, _, _ in found:
        _remove(path)
    return len(found)


def _scandir(path):
    try:
        return list(os.scandir(path))
    except OSError:
        return []


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass
