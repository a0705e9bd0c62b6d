"""Compiled templates and analyses kept on disk, shared by runs.

Most of a command's time after start-up is compiling the template and
analysing it; both depend only on the template's text, this tool's code and a
few settings, so they are kept under the user cache directory:

- ``$AUTOPARSER_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/autoparser``, else
  ``~/.cache/autoparser``;
- ``AUTOPARSER_NO_CACHE=1`` (the CLI's ``--no-cache``) turns reading and
  writing off.

Entries are keyed by a SHA-256 of what they depend on, including
:func:`code_fingerprint` (Python and jinja2 versions, and the size and time of
every module of this tool), so a new version or an edited checkout never reads
an old entry.  Each entry is written to a temporary file and renamed into
place, so concurrent runs see a whole entry or none; an entry that cannot be
read (truncated, corrupt, foreign) is a miss.  The folder is made private to
the user (mode 0700): its entries are loaded as code and pickles, so they are
trusted like the user's own files.  Each kind keeps its
:data:`MAX_ENTRIES` most recently written entries.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import sys
from pathlib import Path

ENV_DIR = "AUTOPARSER_CACHE_DIR"
ENV_OFF = "AUTOPARSER_NO_CACHE"
#: entries kept per kind (the oldest written go first)
MAX_ENTRIES = 2000
#: a store prunes its kind's folder once per this many writes (by the key)
_PRUNE_EVERY = 64


_enabled = True


def set_enabled(enabled: bool) -> None:
    """Turn the cache on or off for this process (and the workers it forks
    from now on); ``AUTOPARSER_NO_CACHE`` turns it off whatever this says."""
    global _enabled
    _enabled = enabled


def cache_dir() -> Path | None:
    """The cache folder, or None when the cache is off."""
    if not _enabled or os.environ.get(ENV_OFF, "").strip() not in ("", "0"):
        return None
    explicit = os.environ.get(ENV_DIR)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "autoparser"


@functools.cache
def code_fingerprint() -> str:
    """What every entry depends on besides its own inputs: the Python and jinja2
    versions and the size and modification time of each module of ``analysis``
    and ``peg`` (stat calls only; about a millisecond)."""
    import jinja2

    parts = [sys.version, jinja2.__version__]
    root = Path(__file__).resolve().parent.parent
    for package in ("analysis", "peg"):
        for path in sorted((root / package).rglob("*.py")):
            stat = path.stat()
            parts.append(f"{path.relative_to(root)}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def entry_key(kind: str, *inputs: str) -> str:
    """The key of an entry of ``kind`` computed from ``inputs`` (and the code)."""
    digest = hashlib.sha256()
    for part in (kind, code_fingerprint(), *inputs):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little") + data)
    return digest.hexdigest()


def _path(kind: str, key: str, folder: Path | None) -> Path | None:
    return None if folder is None else folder / kind / key


def load(kind: str, key: str, folder: Path | None) -> bytes | None:
    """The entry's bytes, or None (a miss, the cache off, or unreadable).
    ``folder`` is the cache folder, None when the cache is off: what
    :func:`cache_dir` says, or what the render worker's parent sent."""
    path = _path(kind, key, folder)
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


def store(kind: str, key: str, data: bytes, folder: Path | None) -> None:
    """Write an entry atomically; a cache that cannot be written is skipped."""
    path = _path(kind, key, folder)
    if path is None:
        return
    import tempfile  # (here: the CLI's help reads the cache and must start fast)

    try:
        root = path.parent.parent
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.parent.mkdir(exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError:
        return
    if int(key[:8], 16) % _PRUNE_EVERY == 0:
        prune(path.parent, MAX_ENTRIES)


def forget(kind: str, key: str, folder: Path | None) -> None:
    """Remove an entry that turned out unreadable (another run may rewrite it)."""
    path = _path(kind, key, folder)
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink()


def prune(folder: Path, keep: int) -> None:
    """Keep the ``keep`` most recently written entries of ``folder``."""
    try:
        entries = []
        for entry in os.scandir(folder):
            try:
                entries.append((entry.stat().st_mtime_ns, entry.path))
            except OSError:
                continue  # removed by a concurrent prune
    except OSError:
        return
    entries.sort(reverse=True)
    for _, stale in entries[keep:]:
        with contextlib.suppress(OSError):
            os.unlink(stale)
