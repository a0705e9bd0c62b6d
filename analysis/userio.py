"""Reading user input and writing user output files safely.

JSON from a user or a model repository is untrusted like a template: it may nest
deeper than the interpreter's stack, hold lone surrogates (``"\\ud800"``, valid
JSON but not valid Unicode, so it can be neither printed nor written as UTF-8),
or give tools in shapes no template can use.  Every reader here turns those into
one-line :class:`InputError` messages that name the input and the place.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

from analysis.errors import InputError, one_line

#: How deep JSON input may nest (real requests and configs stay under 20).
MAX_JSON_DEPTH = 100


def _first_problem(value: Any) -> str | None:
    """Why ``value`` is unusable (too deep, a lone surrogate), or None.  Iterative,
    so that no input can exhaust the stack."""
    stack: list[tuple[Any, int, str]] = [(value, 0, "$")]
    while stack:
        item, depth, path = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return f"nests deeper than {MAX_JSON_DEPTH} levels (at {path[:80]})"
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError as exc:
                    return f"holds a lone surrogate U+{ord(item[exc.start]):04X} at {path[:80]}, not valid Unicode"
        elif isinstance(item, dict):
            for key, child in item.items():
                stack.append((key, depth + 1, path))
                stack.append((child, depth + 1, f"{path}.{key}" if isinstance(key, str) else path))
        elif isinstance(item, list):
            stack.extend((child, depth + 1, f"{path}[{i}]") for i, child in enumerate(item))
    return None


def checked(value: Any, where: str) -> Any:
    """``value`` unchanged if it nests within the limit and holds valid Unicode."""
    problem = _first_problem(value)
    if problem:
        raise InputError(f"{where}: {problem}")
    return value


def loads(text: str, where: str) -> Any:
    """Parse JSON text; errors name ``where`` and the line and column."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise InputError(f"{where}: JSON nests too deeply to read") from None
    except ValueError as exc:  # an integer of more digits than Python converts (4,300)
        raise InputError(f"{where}: unreadable JSON number ({one_line(exc, 120)})") from None
    return checked(value, where)


#: The most a file or stdin given to the tool may hold (a model output, a
#: request, a config, a template): 64 MiB.  Past it, reading stops with one line.
MAX_INPUT_BYTES = 64 * 1024 * 1024


def regular_file_size(path: Path) -> int:
    """The size of ``path``, checked to be a regular file first: a FIFO, a
    device (``/dev/zero``) or a socket is refused, as reading it could block
    or never end."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"{path}: is a directory, expected a file")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{path}: not a regular file (a FIFO, a device or a socket); give a file, or - for stdin")
    return info.st_size


def read_bytes(path: Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """A regular file's bytes, at most ``limit`` of them: its type
    (:func:`regular_file_size`) and size are checked before it is read."""
    size = regular_file_size(path)
    if size > limit:
        raise InputError(f"{path}: {size:,} bytes, over the limit of {limit:,} bytes")
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    if len(data) > limit:  # (it grew while read)
        raise InputError(f"{path}: over the limit of {limit:,} bytes")
    return data


def read_stream(stream: BinaryIO, where: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """At most ``limit`` bytes of a stream (stdin), or a one-line error."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"{where}: over the limit of {limit:,} bytes")
    return data


def read_text(path: Path, limit: int = MAX_INPUT_BYTES) -> str:
    """A UTF-8 text file (see :func:`read_bytes`); one-line errors for every way
    reading can fail."""
    return decode_utf8(read_bytes(path, limit), str(path))


def decode_utf8(data: bytes, where: str) -> str:
    """Bytes (stdin, a model output) as UTF-8 text, or a one-line error."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def validate_messages(messages: Any, where: str) -> list[dict[str, Any]]:
    """Messages: a list of objects, each with a string ``role`` (a tools file
    given as messages is named, not rendered as a bare generation prompt)."""
    if not isinstance(messages, list):
        raise InputError(f"{where}: expected a JSON list of messages")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            hint = " (this looks like a list of tools: give it as `tools`)" if isinstance(message, dict) and "function" in message else ""
            raise InputError(f"{where}[{i}]: a message must be an object with a string 'role'{hint}", ("tools",))
    return messages


def validate_tools(tools: Any, where: str) -> list[dict[str, Any]] | None:
    """Tools in the OpenAI shape: a list of ``{"type": "function", "function":
    {"name": ..., "parameters": {...}}}`` objects (``type`` may be left out).
    None stays None; anything else is a one-line error naming the bad entry."""
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise InputError(f"{where}: tools must be a JSON list, not {type(tools).__name__}")
    for i, tool in enumerate(tools):
        at = f"{where}: tool {i}"
        if not isinstance(tool, dict):
            raise InputError(f"{at} must be an object with a 'function', not {json.dumps(tool)[:40]}")
        if tool.get("type", "function") != "function":
            raise InputError(f"{at}: type must be 'function', not {tool.get('type')!r}")
        function = tool.get("function")
        if not isinstance(function, dict):
            raise InputError(f"{at}: 'function' must be an object with a name")
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise InputError(f"{at}: the function needs a non-empty string 'name'")
        params = function.get("parameters")
        if params is not None and not isinstance(params, dict):
            raise InputError(f"{at} ({name}): 'parameters' must be a JSON schema object")
    return tools


def _write_into(path: Path, text: str, what: str) -> None:
    """Write into what ``path`` is (a link's target, a FIFO with a reader, a
    device); a FIFO nobody reads is an error, not a hang."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | (os.O_TRUNC if path.is_file() else 0))
    except OSError as exc:
        why = "a FIFO nobody reads" if exc.errno == errno.ENXIO else exc.strerror
        raise InputError(f"{path}: cannot write the {what} ({why})") from None
    try:
        os.set_blocking(fd, True)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
    except OSError as exc:
        raise InputError(f"{path}: cannot write the {what} ({exc.strerror})") from None


def ensure_writable(path: Path, what: str) -> None:
    """Fail early (before a long run) when ``path`` cannot be written."""
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise InputError(f"{path}: is a directory, cannot write the {what} there")
    if not parent.is_dir():
        raise InputError(f"{path}: cannot write the {what}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise InputError(f"{path}: cannot write the {what}: permission denied")


def _umask() -> int:
    """The process's umask (read by setting it, then set back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _give_mode(fd: int, existing: os.stat_result | None) -> None:
    """Give the temporary file ``fd`` (made 0600 by ``mkstemp``) the mode the
    file it replaces had (and its owner, where this process may), or for a new
    file the mode the umask gives (0644 under umask 0022)."""
    if existing is None:
        os.fchmod(fd, 0o666 & ~_umask())
        return
    os.fchmod(fd, stat.S_IMODE(existing.st_mode))
    if hasattr(os, "fchown") and (existing.st_uid, existing.st_gid) != (os.geteuid(), os.getegid()):
        try:
            os.fchown(fd, existing.st_uid, existing.st_gid)
        except OSError:
            pass  # (only root may give a file away: the mode is kept all the same)


def write_atomic(path: Path, text: str, what: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (a temporary file renamed
    into place), so a failure never leaves half a file.  Only a regular file
    (or a new one) is replaced so: a symbolic link, a FIFO or a device
    (``/dev/null``) is written into, never replaced by a file.  The file keeps
    the mode (and owner) it had; a new one gets the mode the umask gives."""
    try:
        existing: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        existing = None
    except OSError as exc:
        raise InputError(f"{path}: cannot write the {what} ({exc.strerror})") from None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        _write_into(path, text, what)
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent if str(path.parent) else ".")
        try:
            _give_mode(fd, existing)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as exc:
        raise InputError(f"{path}: cannot write the {what} ({exc.strerror})") from None
