"""The persistent compilation cache: compiled XLA executables kept on disk, so that a
later process running the same program loads it instead of compiling it (JAX's
`jax.experimental.compilation_cache`).

`xla.compile_text` asks `load` before compiling and hands each fresh compile to
`store`. An entry is the executable as jaxlib serializes it
(`client.serialize_executable`), zlib-compressed, behind a header holding its compile
time; its file name is a SHA-256 of everything that decides the compiled program: the
StableHLO text, the platform, device kind and id, the jaxlib version and the
compiler options set with `funcad.compiler_options`. Programs that call back into
Python are never cached (their text names the callbacks only by index).

Settings (funcad.config, also under JAX's `jax_` names): `compilation_cache_dir`
(None: no cache), `enable_compilation_cache` (True), `persistent_cache_min_compile_time_secs`
(1.0: quicker compiles are not written), `persistent_cache_min_entry_size_bytes` (0 or -1:
any size). As in JAX, the cache is trusted: loading an entry runs code it holds, so do
not share the directory with users you do not trust.

`stats` counts `hits`, `misses` and `writes` in this process.
"""
from __future__ import annotations

import hashlib
import logging
import os
import struct
import tempfile
import threading
import zlib

from ..core import options as _options
from ..core.version import installed_jaxlib_version

__all__ = ["set_cache_dir", "reset_cache", "is_initialized", "initialize_cache", "load", "store",
           "stats"]

_log = logging.getLogger("funcad")

# the settings, written by funcad.config
cache_dir: str | None = None
enabled: bool = True
min_compile_time_secs: float = 1.0
min_entry_size_bytes: int = 0


stats = {"hits": 0, "misses": 0, "writes": 0}
_lock = threading.Lock()
_initialized = False   # a directory was set and made ready (reset_cache undoes it)
_HEADER = struct.Struct("<4sd")   # magic, compile time in seconds
_MAGIC = b"FCC1"


def set_cache_dir(path) -> None:
    """Keep compiled programs in the directory `path` (made if missing), and look there
    before compiling.

    >>> import tempfile, funcad
    >>> from funcad.experimental.compilation_cache import compilation_cache as cc
    >>> cc.set_cache_dir(tempfile.mkdtemp()); funcad.config.compilation_cache_dir is not None
    True
    >>> cc.set_cache_dir(None); cc.reset_cache()
    """
    global cache_dir, _initialized
    cache_dir = None if path is None else os.fspath(path)
    _initialized = False


def initialize_cache(path) -> None:
    """The same as `set_cache_dir` (JAX's older name)."""
    set_cache_dir(path)


def is_initialized() -> bool:
    """Whether the cache is enabled (as JAX's: a directory need not be set yet)."""
    return enabled


def reset_cache() -> None:
    """Back to the state before first use: the directory is made ready again on the next
    compile, and the counts in `stats` start from zero."""
    global _initialized
    with _lock:
        _initialized = False
        for k in stats:
            stats[k] = 0


def active() -> bool:
    return enabled and bool(cache_dir)


def _ready() -> str | None:
    global _initialized
    path = cache_dir
    if not (enabled and path):
        return None
    if not _initialized:
        with _lock:
            os.makedirs(path, exist_ok=True)
            _initialized = True
    return path


def key(mlir: str, device, overrides) -> str:
    """The file name of a program's entry: what decides the executable, hashed."""
    h = hashlib.sha256()
    for part in (mlir, device.platform, getattr(device, "device_kind", ""), str(device.id),
                 installed_jaxlib_version(), repr(overrides)):
        h.update(part.encode())
        h.update(b"\0")
    return "funcad-" + h.hexdigest()


def load(key_: str, deserialize) -> object | None:
    """The executable stored under `key_` (`deserialize(bytes)` loads it), or None."""
    path = _ready()
    if path is None:
        return None
    try:
        with open(os.path.join(path, key_), "rb") as f:
            data = f.read()
        magic, _ = _HEADER.unpack_from(data)
        if magic != _MAGIC:
            raise ValueError("not a funcad cache entry")
        exe = deserialize(zlib.decompress(data[_HEADER.size:]))
    except FileNotFoundError:
        stats["misses"] += 1
        return None
    except Exception as e:  # a bad entry costs a compile, never a failure
        _log.warning("funcad's compilation cache could not read %s (%s); compiling instead", key_, e)
        stats["misses"] += 1
        return None
    stats["hits"] += 1
    _log.debug("Persistent compilation cache hit for %s", key_)
    return exe


def store(key_: str, serialized: bytes, compile_time: float) -> bool:
    """Write an executable's entry, unless it compiled too quickly or is too small."""
    path = _ready()
    if path is None or compile_time < min_compile_time_secs:
        return False
    data = _HEADER.pack(_MAGIC, compile_time) + zlib.compress(serialized)
    if min_entry_size_bytes > 0 and len(data) < min_entry_size_bytes:
        return False
    try:  # written whole, then renamed: a reader never sees half an entry
        fd, tmp = tempfile.mkstemp(dir=path, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, os.path.join(path, key_))
    except OSError as e:
        _log.warning("funcad's compilation cache could not write %s (%s)", key_, e)
        return False
    stats["writes"] += 1
    return True


def _setting(option: str, attr: str) -> None:
    def set_(v) -> None:
        globals()[attr] = v
    _options.bind(option, on_set=set_cache_dir if attr == "cache_dir" else set_,
                  get=lambda: globals()[attr])


for _option, _attr in (("compilation_cache_dir", "cache_dir"), ("enable_compilation_cache", "enabled"),
                       ("persistent_cache_min_compile_time_secs", "min_compile_time_secs"),
                       ("persistent_cache_min_entry_size_bytes", "min_entry_size_bytes")):
    _setting(_option, _attr)
