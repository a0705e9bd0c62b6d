"""Compile and render untrusted templates in a separate, resource-limited process.

A Jinja template is code, and some of what it can do runs in C where no
Python-level watchdog reaches it (``(10**1000)**1000``, ``repr`` of a huge nested
list, a filter building a gigabyte string).  So every compile and render happens
in a worker process forked from this one, where the operating system enforces the
limits:

* **CPU time per compile or render**: ``ITIMER_PROF`` counts the worker's CPU time
  (not wall-clock time, so a loaded machine does not time out legitimate
  templates) and its default action ends the process, whatever it is running.
* **Memory**: ``RLIMIT_AS`` caps the worker's address space at what it had when it
  started plus :attr:`RenderLimits.memory_mb`; an allocation over it raises
  ``MemoryError`` in the worker, which reports it.
* **Wall clock**: a backstop only (the worker stopped being scheduled at all).

The parent talks to the worker over two pipes with length-prefixed pickles of
plain data (sources, variables, strings, error fields), so nothing of the
template's objects ever reaches the parent.  A worker that dies is reported as a
:class:`RenderLimitError` and replaced by a new one at the next request.
Renders from several threads are serialised through one worker per process.
"""

from __future__ import annotations

import atexit
import os
import pickle
import resource
import select
import signal
import struct
import threading
import time
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from analysis.errors import (
    RenderLimitError,
    SandboxViolation,
    TemplateRaisedError,
    TemplateRenderError,
    TemplateSyntaxError,
)
from analysis.template.sandbox import (
    RenderLimits,
    RenderNotes,
    compile_template,
    over_memory,
    render_compiled,
    render_notes,
)

_HEADER = struct.Struct("!Q")
#: Compiled templates a worker keeps (keyed by source and limits).
_CACHE_SIZE = 64


@dataclass(frozen=True)
class RenderStats:
    """What one render cost and noticed, besides its text."""

    cpu_s: float
    #: what the render noticed (also when it failed)
    notes: RenderNotes = field(default_factory=RenderNotes)


#: what went wrong, as data: (kind, message, line, [column]); kind is "syntax",
#: "raised", "limit", "sandbox" or "render" (``rendering._raise_reply`` raises it)
ErrorReply = tuple[Any, ...]


@dataclass(frozen=True)
class WorkerRequest:
    """One request to the worker: compile a template, or render it with ``variables``."""

    op: Literal["compile", "render"]
    key: str  #: the template source's key (the worker keeps compiled sources by it)
    name: str
    limits: RenderLimits
    cpu_s: float  #: CPU seconds this request may use
    #: the source (sent once per worker; None when the worker knows the key)
    source: str | None = None
    cache: Path | None = None  #: the disk cache folder, for compiled templates
    variables: dict[str, Any] | None = None
    now: datetime | None = None
    strict_undefined_json: bool = False
    #: note the template line that wrote each piece of the text
    trace: bool = False


@dataclass(frozen=True)
class WorkerReply:
    """The worker's answer: ``ok`` with the text (None for a compile), ``error``
    with an :data:`ErrorReply`, or ``unknown`` (the source must be sent again)."""

    status: Literal["ok", "error", "unknown"]
    payload: Any = None  #: str | None for ok, ErrorReply for error
    stats: RenderStats | None = None


# -- framing ---------------------------------------------------------------


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _send(fd: int, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    _write_all(fd, _HEADER.pack(len(data)) + data)


def _read_exact(fd: int, size: int, deadline: float | None) -> bytes | None:
    """``size`` bytes from ``fd``, or None at end of file; TimeoutError past ``deadline``."""
    chunks: list[bytes] = []
    while size:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _recv(fd: int, deadline: float | None = None) -> Any:
    header = _read_exact(fd, _HEADER.size, deadline)
    if header is None:
        return None
    body = _read_exact(fd, _HEADER.unpack(header)[0], deadline)
    if body is None:
        return None
    return pickle.loads(body)


# -- the worker side ---------------------------------------------------------


def _address_space_now() -> int | None:
    """This process's virtual size in bytes (Linux), or None where unknown."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _cpu_now() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _error_reply(exc: BaseException) -> tuple[Any, ...]:
    """A project error as plain fields (exception classes with custom
    constructors do not pickle reliably)."""
    if isinstance(exc, TemplateSyntaxError):
        return ("syntax", exc.detail, exc.line, exc.column)
    if isinstance(exc, TemplateRaisedError):
        return ("raised", exc.template_message, exc.line)
    if isinstance(exc, RenderLimitError):
        return ("limit", exc.detail, exc.line)
    if isinstance(exc, SandboxViolation):
        return ("sandbox", exc.detail, exc.line)
    if isinstance(exc, TemplateRenderError):
        return ("render", exc.detail, exc.line)
    return ("render", f"render failed: {type(exc).__name__}", None)


class _Worker:
    """The loop run in the forked process."""

    def __init__(self, memory_mb: int):
        self.compiled: OrderedDict[tuple[str, RenderLimits], Any] = OrderedDict()
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        base = _address_space_now()
        if base is not None and memory_mb > 0:
            cap = base + memory_mb * 1024 * 1024
            try:
                resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            except (ValueError, OSError):  # pragma: no cover - a lower hard limit is already set
                pass

    def handle(self, request: WorkerRequest) -> WorkerReply:
        limits = request.limits
        key = (request.key, limits)
        start = _cpu_now()
        signal.setitimer(signal.ITIMER_PROF, request.cpu_s)
        try:
            compiled = self.compiled.get(key)
            if compiled is None:
                if request.source is None:
                    return WorkerReply("unknown")
                compiled = compile_template(request.source, request.name, limits, request.cache)
                self.compiled[key] = compiled
                if len(self.compiled) > _CACHE_SIZE:
                    self.compiled.popitem(last=False)
            self.compiled.move_to_end(key)
            if request.op == "compile":
                return WorkerReply("ok", None, RenderStats(_cpu_now() - start))
            text, notes = render_compiled(
                compiled,
                request.variables or {},
                request.name,
                now=request.now,
                strict_undefined_json=request.strict_undefined_json,
                trace=request.trace,
            )
            return WorkerReply("ok", text, RenderStats(_cpu_now() - start, notes))
        except MemoryError:
            return WorkerReply("error", ("limit", over_memory(limits.memory_mb), None))
        except RecursionError:
            return WorkerReply("error", ("limit", "recursion too deep", None))
        except Exception as exc:  # noqa: BLE001 - every failure goes back as data
            # What the failed render noticed still counts (a template may index
            # content as a list and then reject the conversation).
            noticed = render_notes(compiled.env) if compiled is not None else RenderNotes()
            return WorkerReply("error", _error_reply(exc), RenderStats(_cpu_now() - start, noticed))
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)


def _serve(request_fd: int, reply_fd: int, memory_mb: int) -> None:  # pragma: no cover - runs in the child
    for sig in (signal.SIGPROF, signal.SIGXCPU, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and closes the pipe
    worker = _Worker(memory_mb)
    while True:
        request = _recv(request_fd)
        if request is None:
            return
        reply = worker.handle(request)
        try:
            _send(reply_fd, reply)
        except MemoryError:
            _send(reply_fd, WorkerReply("error", ("limit", over_memory(memory_mb), None)))


# -- the parent side ---------------------------------------------------------


class RenderWorker:
    """The parent's handle on one worker process (started on first use)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._owner = os.getpid()
        self._request_fd = -1
        self._reply_fd = -1
        self._memory_mb = 0
        #: Source keys the current worker has seen (it is sent each source once).
        self._known: set[str] = set()

    def _start(self, memory_mb: int) -> None:
        request_r, request_w = os.pipe()
        reply_r, reply_w = os.pipe()
        with warnings.catch_warnings():
            # Python 3.12+ warns about fork() beside other threads; the child
            # runs only this module's loop, which takes no lock they may hold.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 0
            try:
                os.close(request_w)
                os.close(reply_r)
                _serve(request_r, reply_w, memory_mb)
            except BaseException:  # noqa: BLE001 - a token the reader cannot decode reads as none
                code = 1
            finally:
                os._exit(code)
        os.close(request_r)
        os.close(reply_w)
        self._pid, self._request_fd, self._reply_fd = pid, request_w, reply_r
        self._memory_mb = memory_mb
        self._known = set()

    def _stop(self) -> int | None:
        """End the worker; its wait status, if it could be collected."""
        status = None
        if self._pid is not None:
            for fd in (self._request_fd, self._reply_fd):
                try:
                    os.close(fd)
                except OSError:
                    pass
            try:
                os.kill(self._pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                status = os.waitpid(self._pid, 0)[1]
            except ChildProcessError:
                pass
        self._pid = None
        return status

    def close(self) -> None:
        """Stop the worker process (a new one starts at the next request)."""
        with self._lock:
            if self._owner == os.getpid():
                self._stop()

    def request(self, request: WorkerRequest, source: str) -> WorkerReply:
        """Send one compile or render request (with ``source`` unless the worker has it); the worker's reply."""
        with self._lock:
            if self._owner != os.getpid():  # inherited through a fork: start our own
                self._owner, self._pid, self._known = os.getpid(), None, set()
            limits = request.limits
            if self._pid is None or self._memory_mb != limits.memory_mb:
                self._stop()
                self._start(limits.memory_mb)
            for attempt in range(2):
                known = request.key in self._known
                message = replace(request, source=None if known else source)
                deadline = time.monotonic() + limits.wall_s
                try:
                    _send(self._request_fd, message)
                    reply = _recv(self._reply_fd, deadline)
                except TimeoutError:
                    self._stop()
                    return WorkerReply("error", ("limit", f"the render did not finish within {limits.wall_s:g} s of wall-clock time", None))
                except (BrokenPipeError, OSError):
                    reply = None
                if reply is None:
                    status = self._stop()
                    # A worker ended by its CPU timer used all the time it was given.
                    spent = RenderStats(request.cpu_s) if _cpu_killed(status) else None
                    return WorkerReply("error", ("limit", _death_reason(status, request), None), spent)
                if not isinstance(reply, WorkerReply):  # pragma: no cover - the worker only sends replies
                    raise TypeError(f"unexpected worker reply {type(reply).__name__}")
                if reply.status == "unknown" and attempt == 0:
                    self._known.discard(request.key)
                    continue
                self._known.add(request.key)
                return reply
            raise AssertionError("worker forgot a source it was just sent")  # pragma: no cover


def _cpu_killed(status: int | None) -> bool:
    return status is not None and os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGPROF, signal.SIGXCPU)


def _death_reason(status: int | None, request: WorkerRequest) -> str:
    limits = request.limits
    if status is not None and os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig in (signal.SIGPROF, signal.SIGXCPU):
            if request.cpu_s < limits.cpu_s:
                return (
                    f"the template used more than {limits.template_cpu_s:g} s of CPU time in all "
                    "(AUTOPARSER_TEMPLATE_CPU_S)"
                )
            return (
                f"the template used more than {limits.cpu_s:g} s of CPU time in one render "
                "(runaway template? AUTOPARSER_CPU_S)"
            )
        if sig == signal.SIGKILL:
            return "the render was killed (out of memory?)"
        return f"the render worker died ({signal.Signals(sig).name})"
    return "the render worker ended unexpectedly"


_WORKER = RenderWorker()
# Collect the worker at exit (so its resource use is accounted to this process).
atexit.register(_WORKER.close)


def worker() -> RenderWorker:
    """This process's render worker."""
    return _WORKER
