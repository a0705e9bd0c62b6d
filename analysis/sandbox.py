"""A sandboxed Jinja environment with the semantics real chat templates expect.

Templates are untrusted code (CVE-2024-34359 was a GGUF chat template that ran
code in llama-cpp-python).  We render them in jinja2's
``ImmutableSandboxedEnvironment`` and add:

* transformers' recipe: ``trim_blocks``, ``lstrip_blocks``, ``loopcontrols``,
  a pass-through ``{% generation %}`` block, ``raise_exception``,
  ``strftime_now`` (with a clock that can be frozen) and transformers' ``tojson``;
* the leniency llama.cpp's own engine has and real templates rely on (see the
  README's table): chained undefined attributes, ``tojson`` over generators and
  undefined values, Python-ish string methods;
* resource limits: a wall-clock budget enforced by a watchdog, bounded ``range``,
  bounded string growth through ``~``, ``+``, ``*``, ``%``, calls and filters, and a
  bounded output size.
"""

from __future__ import annotations

import ctypes
import json
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Iterator

import jinja2
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.ext import Extension
from jinja2.runtime import Undefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from analysis.errors import RenderLimitError, TemplateRaisedError


@dataclass(frozen=True)
class RenderLimits:
    """Bounds on one render.  All are configurable; defaults suit real templates."""

    timeout_s: float = 2.0
    max_output_chars: int = 4_000_000
    max_string_chars: int = 1_000_000
    max_range: int = 100_000


class _TemplateRaised(Exception):
    """Internal: carries a ``raise_exception`` message out of the render."""


class _LimitExceeded(Exception):
    """Internal: a sandbox bound was exceeded (converted to RenderLimitError)."""


class _Timeout(BaseException):
    """Injected asynchronously into the rendering thread by the watchdog.

    A BaseException so that templates' own ``try``-free code and jinja2 internals
    that catch ``Exception`` cannot swallow it.
    """


class LenientUndefined(jinja2.ChainableUndefined):
    """Undefined that tolerates attribute chains (``x.additionalProperties``),
    iteration, comparison and JSON serialisation, as llama.cpp's engine does."""

    def __iter__(self) -> Iterator[Any]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __getattr__(self, name: str) -> Any:
        # ``undefined.items()`` iterates nothing, as in llama.cpp's engine.
        if name in ("items", "keys", "values"):
            return lambda: ()
        return super().__getattr__(name)


class GenerationExtension(Extension):
    """``{% generation %}...{% endgeneration %}`` renders its body unchanged."""

    tags = {"generation"}

    def parse(self, parser: Any) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.Scope(body, lineno=lineno)


class _CheckedCodeGenerator(CodeGenerator):
    """Routes ``~`` through a size-checking join and lets ``{% set d.key = v %}``
    assign into dicts as well as namespaces (llama.cpp's engine allows both)."""

    def writeline(self, x: str, node: nodes.Node | None = None, extra: int = 0) -> None:
        # jinja2's visit_Assign guards dotted targets with this exact check.
        if x.startswith("if not isinstance(") and x.endswith(", Namespace):"):
            x = x[: -len("Namespace):")] + "(Namespace, dict)):"
        super().writeline(x, node, extra)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.checked_concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


def _to_json_ready(value: Any) -> Any:
    if isinstance(value, Undefined):
        return None
    if isinstance(value, dict):
        return {k: _to_json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_json_ready(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "__iter__"):
        return [_to_json_ready(v) for v in value]
    return str(value)


def tojson(
    value: Any,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
    ensure_ascii: bool = False,
) -> str:
    """transformers' ``tojson``: key order kept, no HTML escaping."""
    return json.dumps(
        _to_json_ready(value),
        indent=indent,
        separators=tuple(separators) if separators else None,  # type: ignore[arg-type]
        sort_keys=sort_keys,
        ensure_ascii=ensure_ascii,
    )


def raise_exception(message: Any = "") -> None:
    """The ``raise_exception(msg)`` global templates use to reject input."""
    raise _TemplateRaised(str(message))


class _RenderGuard:
    """Per-render state: the deadline watchdog and size checks."""

    def __init__(self, limits: RenderLimits):
        self.limits = limits
        self._lock = threading.Lock()
        self._done = False
        self._fired = False
        self._thread_id = threading.get_ident()
        self._timer = threading.Timer(limits.timeout_s, self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        with self._lock:
            if self._done:
                return
            self._fired = True
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(self._thread_id), ctypes.py_object(_Timeout)
            )

    def __enter__(self) -> "_RenderGuard":
        self._timer.start()
        return self

    def finish(self) -> None:
        with self._lock:
            self._done = True
        self._timer.cancel()

    def __exit__(self, *exc: Any) -> None:
        self.finish()


def _lenient_str(value: Any) -> str:
    """How ``+`` stringifies a non-string operand next to a string."""
    if isinstance(value, Undefined):
        return ""
    if isinstance(value, (dict, list)):
        return tojson(value)
    return str(value)


#: Mutating methods allowed on lists and dicts the template works with (inputs are
#: deep-copied per render, so a template can never change the caller's data).
_ALLOWED_MUTATIONS = {
    list: frozenset({"append", "extend", "insert", "pop", "remove"}),
    dict: frozenset({"update", "pop", "setdefault"}),
}


class SandboxedTemplateEnvironment(ImmutableSandboxedEnvironment):
    """The environment every template is rendered in."""

    code_generator_class = _CheckedCodeGenerator
    intercepted_binops = frozenset({"+", "*", "%", "**"})

    def __init__(self, limits: RenderLimits | None = None, clock: Callable[[], datetime] | None = None):
        super().__init__(
            trim_blocks=True,
            lstrip_blocks=True,
            extensions=[GenerationExtension, "jinja2.ext.loopcontrols"],
            undefined=LenientUndefined,
            keep_trailing_newline=False,
            autoescape=False,
        )
        self.limits = limits or RenderLimits()
        #: How often ``+`` had to turn a dict/list into JSON text (caps use it to
        #: tell templates that expect string tool-call arguments).
        self.stringified_containers = 0
        #: When set, ``tojson`` of an undefined value raises (as in llama.cpp's
        #: engine); capability probes use it to mirror the reference.
        self.strict_undefined_json = False
        self.filters["_iterable"] = lambda value: () if value is None or isinstance(value, Undefined) else value
        self.clock = clock or datetime.now
        self.filters["tojson"] = self._tojson
        self.globals["raise_exception"] = raise_exception
        self.globals["strftime_now"] = lambda fmt: self.clock().strftime(str(fmt))
        self.globals["range"] = self._range
        # Filters can grow strings (replace, indent, join, center, ...): check results.
        for name, func in list(self.filters.items()):
            self.filters[name] = self._checked_filter(func)

    def _tojson(self, value: Any, *args: Any, **kwargs: Any) -> str:
        if self.strict_undefined_json and isinstance(value, Undefined):
            value._fail_with_undefined_error()
        return tojson(value, *args, **kwargs)

    # -- size checks -------------------------------------------------------
    def _check_size(self, value: Any) -> Any:
        if isinstance(value, str) and len(value) > self.limits.max_string_chars:
            raise _LimitExceeded(
                f"a string grew past {self.limits.max_string_chars} characters"
            )
        if isinstance(value, (list, tuple)) and len(value) > self.limits.max_string_chars:
            raise _LimitExceeded(f"a list grew past {self.limits.max_string_chars} items")
        return value

    def _checked_filter(self, func: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return self._check_size(func(*args, **kwargs))

        for attr in ("jinja_pass_arg",):
            if hasattr(func, attr):
                setattr(wrapper, attr, getattr(func, attr))
        wrapper.__name__ = getattr(func, "__name__", "filter")
        return wrapper

    def checked_concat(self, parts: tuple[Any, ...]) -> str:
        """The ``~`` operator, refusing results over the string limit."""
        total = 0
        strs = []
        for part in parts:
            s = part if isinstance(part, str) else jinja2.runtime.str_join((part,))
            total += len(s)
            if total > self.limits.max_string_chars:
                raise _LimitExceeded(
                    f"a string grew past {self.limits.max_string_chars} characters"
                )
            strs.append(s)
        return "".join(strs)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(n, int):
                    if len(seq) * max(n, 0) > self.limits.max_string_chars:
                        raise _LimitExceeded(
                            f"repetition would exceed {self.limits.max_string_chars} items"
                        )
        if operator == "**" and isinstance(right, (int, float)) and abs(right) > 1000:
            raise _LimitExceeded("exponent too large")
        if operator == "+" and (isinstance(left, str) or isinstance(right, str)):
            # llama.cpp's engine concatenates a string with anything (undefined as
            # empty, objects as JSON); jinja2 would raise.
            if not (isinstance(left, str) and isinstance(right, str)):
                if isinstance(left, (dict, list)) or isinstance(right, (dict, list)):
                    self.stringified_containers += 1
                left, right = _lenient_str(left), _lenient_str(right)
        elif operator == "+" and isinstance(left, Undefined) and isinstance(right, Undefined):
            return left
        result = super().call_binop(context, operator, left, right)
        return self._check_size(result)

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        # ``{% for x in none %}`` iterates nothing in llama.cpp's engine.
        for loop in tree.find_all(nodes.For):
            loop.iter = nodes.Filter(loop.iter, "_iterable", [], [], None, None, lineno=loop.lineno)
        return tree

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        for kind, allowed in _ALLOWED_MUTATIONS.items():
            if type(obj) is kind and attr in allowed:
                return True
        return super().is_safe_attribute(obj, attr, value)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        return __self._check_size(super().call(__context, __obj, *args, **kwargs))

    def _range(self, *args: int) -> range:
        r = range(*args)
        if len(r) > self.limits.max_range:
            raise _LimitExceeded(
                f"range() of {len(r)} items exceeds the limit of {self.limits.max_range}"
            )
        return r

    # -- rendering ---------------------------------------------------------
    def render_guarded(self, template: jinja2.Template, variables: dict[str, Any], name: str) -> str:
        """Render under the limits, converting failures to project errors."""
        out: list[str] = []
        size = 0
        guard = _RenderGuard(self.limits)
        try:
            with guard:
                for chunk in template.generate(**variables):
                    size += len(chunk)
                    if size > self.limits.max_output_chars:
                        raise _LimitExceeded(
                            f"output grew past {self.limits.max_output_chars} characters"
                        )
                    out.append(chunk)
                guard.finish()
        except _Timeout:
            raise RenderLimitError(
                f"render took longer than {self.limits.timeout_s:g} s (runaway template?)", name
            ) from None
        except _TemplateRaised as exc:
            raise TemplateRaisedError(str(exc), name, template_line(exc)) from None
        except _LimitExceeded as exc:
            raise RenderLimitError(f"sandbox limit: {exc}", name, template_line(exc)) from None
        except RecursionError:
            raise RenderLimitError("recursion too deep", name) from None
        except MemoryError:
            raise RenderLimitError("out of memory while rendering", name) from None
        return "".join(out)


def template_line(exc: BaseException) -> int | None:
    """The template line of the innermost template frame in ``exc``'s traceback."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
