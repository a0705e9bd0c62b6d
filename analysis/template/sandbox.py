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

import bisect
import json
import marshal
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import CodeType, GeneratorType
from typing import Any, ClassVar, cast

import jinja2
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import UndefinedError
from jinja2.ext import Extension
from jinja2.runtime import Macro, Undefined
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace, missing
from markupsafe import Markup

from analysis import disk_cache
from analysis.errors import (
    LimitConfigError,
    RenderLimitError,
    SandboxViolation,
    TemplateRaisedError,
    TemplateRenderError,
    TemplateSyntaxError,
    one_line,
)


@dataclass(frozen=True)
class RenderLimits:
    """Bounds on compiling and rendering one template.  Defaults suit real
    templates (the largest of 70 real ones is 41 KB and renders in milliseconds);
    each can be changed here or through an ``AUTOPARSER_*`` environment variable
    (see :meth:`from_env` and the README)."""

    #: CPU seconds one compile or render may use (enforced by the OS in the worker).
    cpu_s: float = 2.0
    #: CPU seconds all renders of one template may use together (one command, or
    #: one template inside ``check``).
    template_cpu_s: float = 3.0
    #: Memory the render worker may allocate beyond what it started with.
    memory_mb: int = 400
    #: Characters of template source accepted for compiling.
    max_template_chars: int = 256_000
    #: Nesting depth of the template's syntax tree (blocks, expressions, filters).
    max_nesting: int = 60
    max_output_chars: int = 4_000_000
    #: Characters all renders of one template may produce together (what the
    #: parent reads and compares: a template printing megabytes per render would
    #: cost seconds of the parent's CPU, past the worker's own limit).
    template_output_chars: int = 16_000_000
    max_string_chars: int = 1_000_000
    max_range: int = 100_000
    #: Bits an integer may have (about 30,000 decimal digits).
    max_int_bits: int = 100_000

    @property
    def wall_s(self) -> float:
        """The wall-clock backstop for one request to the worker."""
        return max(30.0, 10 * self.cpu_s)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> RenderLimits:
        """Defaults overridden by ``AUTOPARSER_CPU_S``, ``AUTOPARSER_TEMPLATE_CPU_S``,
        ``AUTOPARSER_MEMORY_MB`` and ``AUTOPARSER_MAX_TEMPLATE_CHARS``."""
        changes: dict[str, Any] = {}
        for field_name, var, kind in _ENV_LIMITS:
            raw = environ.get(var)
            if raw is None or raw == "":
                continue
            try:
                value = kind(raw)
                # (a limit must be a finite number a timer or rlimit can hold: not inf, nan or 1e300)
                if not 0 < value <= _MAX_LIMIT:
                    raise ValueError
            except ValueError:
                raise LimitConfigError(
                    f"{var}={raw!r}: expected a positive {kind.__name__} up to {_MAX_LIMIT:g}"
                ) from None
            changes[field_name] = value
        return cls(**changes)


#: the largest value a limit takes (a day of CPU, a TB, ...: past it, a
#: platform's timers and rlimits overflow)
_MAX_LIMIT = 1e9

_ENV_LIMITS: tuple[tuple[str, str, type], ...] = (
    ("cpu_s", "AUTOPARSER_CPU_S", float),
    ("template_cpu_s", "AUTOPARSER_TEMPLATE_CPU_S", float),
    ("memory_mb", "AUTOPARSER_MEMORY_MB", int),
    ("max_template_chars", "AUTOPARSER_MAX_TEMPLATE_CHARS", int),
)


class _TemplateRaised(Exception):
    """Internal: carries a ``raise_exception`` message out of the render."""


class _LimitExceeded(Exception):
    """Internal: a sandbox bound was exceeded (converted to RenderLimitError)."""


class LenientUndefined(jinja2.ChainableUndefined):
    """Undefined that tolerates attribute chains (``x.additionalProperties``),
    iteration, comparison and JSON serialisation, as llama.cpp's engine does.

    It also notes the names of the variables a render read that nobody set
    (:attr:`read_names`, reset per render), so lint can tell which switches
    (``enable_thinking``, ``reasoning_effort``…) a template reads."""

    #: the top-level variables read but not set in the current render
    read_names: ClassVar[set[str]] = set()

    def __init__(self, hint: str | None = None, obj: Any = missing, name: str | None = None, exc: Any = UndefinedError) -> None:
        super().__init__(hint, obj, name, exc)
        if obj is missing and name is not None and hint is None:
            LenientUndefined.read_names.add(name)

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

    tags = {"generation"}  # noqa: RUF012 - declared so by jinja2's Extension

    def parse(self, parser: Any) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        mark = nodes.Output([self.call_method("_entered")], lineno=lineno)
        return nodes.Scope([mark, *body], lineno=lineno)

    def _entered(self) -> str:
        """Counts the block's renders (lint tells whether a template marks
        assistant text for ``return_assistant_tokens_mask``); writes nothing."""
        self.environment.generation_blocks += 1  # type: ignore[attr-defined]
        return ""


class _CheckedCodeGenerator(CodeGenerator):
    """Routes ``~`` through a size-checking join and lets ``{% set d.key = v %}``
    assign into dicts as well as namespaces (llama.cpp's engine allows both)."""

    def writeline(self, x: str, node: nodes.Node | None = None, extra: int = 0) -> None:
        # jinja2's visit_Assign guards dotted targets with this exact check.
        if x.startswith("if not isinstance(") and x.endswith(", Namespace):"):
            x = x[: -len("Namespace):")] + "(Namespace, dict)):"
        super().writeline(x, node, extra)

    def _output_child_to_const(self, node: nodes.Expr, frame: Frame, finalize: Any) -> str:
        # Every output is written by a statement of its own: a constant
        # (``{{ '<|im_end|>' }}``) or a run of template text is not folded into
        # the text of the statement before it, so a traced render names the
        # line that wrote it (the text is the same).
        raise nodes.Impossible()

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


def _lenient_str(value: Any) -> str:
    """How ``+`` stringifies a non-string operand next to a string."""
    if isinstance(value, Undefined):
        return ""
    if isinstance(value, (dict, list)):
        return tojson(value)
    return str(value)


#: Filters and string methods whose numeric arguments size what they build.
_SIZE_FILTERS = frozenset({"center", "indent", "wordwrap", "batch", "slice", "tojson"})
_SIZE_METHODS = frozenset({"ljust", "rjust", "center", "zfill", "expandtabs"})

#: Mutating methods allowed on lists and dicts the template works with (inputs are
#: deep-copied per render, so a template can never change the caller's data).
_ALLOWED_MUTATIONS = {
    list: frozenset({"append", "extend", "insert", "pop", "remove"}),
    dict: frozenset({"update", "pop", "setdefault"}),
}


class Opaque:
    """A function, method, class or object a template reached, with a fixed,
    address-free string form (``<function lipsum, sandboxed>``): Python's own forms carry
    memory addresses and module paths, which no filter, slice, escape or error
    message may show.  The environment unwraps it to call it or read its
    attributes, with the sandbox's checks on the real object."""

    __slots__ = ("_target", "_text")

    def __init__(self, target: Any, text: str) -> None:
        self._target = target
        self._text = text

    def __repr__(self) -> str:
        return self._text

    __str__ = __repr__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:  # (the environment calls the target itself)
        raise jinja2.exceptions.SecurityError(f"{self._text} is called only through the sandbox")


def opaque(value: Any, name: str = "") -> Any:
    """``value``, or an :class:`Opaque` stand-in where its string form would
    show an address or a module path (functions, methods, classes, objects
    with Python's default repr).  Data, undefined values and Jinja's own
    objects with a fixed form (macros, namespaces, loops) pass unchanged."""
    if isinstance(value, (str, int, float, bool, list, dict, tuple, Opaque, Undefined, Markup, Macro, Namespace)) or value is None:
        return value
    if isinstance(value, type):
        return Opaque(value, f"<class {name or value.__name__}, sandboxed>")
    if callable(value):
        return Opaque(value, f"<function {name or getattr(value, '__name__', type(value).__name__)}, sandboxed>")
    if getattr(type(value), "__repr__", None) is object.__repr__:
        return Opaque(value, f"<{type(value).__name__} object, sandboxed>")
    return value


def _real(value: Any) -> Any:
    return value._target if isinstance(value, Opaque) else value


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
            # No constant folding while compiling: folding runs filters and
            # operators at compile time, before any render limit applies.
            optimized=False,
        )
        self.limits = limits or RenderLimits()
        #: How often ``+`` had to turn a dict/list into JSON text (caps use it to
        #: tell templates that expect string tool-call arguments).
        self.stringified_containers = 0
        #: How often a ``{% generation %}`` block was rendered.
        self.generation_blocks = 0
        #: (offset, template line) of a traced render's pieces (see :meth:`render_guarded`)
        self.traced_lines: list[tuple[int, int]] = []
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
            self.filters[name] = self._checked_filter(func, sized=name in _SIZE_FILTERS)
        # what a template can reach has an address-free string form (see Opaque)
        for name, value in list(self.globals.items()):
            self.globals[name] = opaque(value, name)

    def _tojson(self, value: Any, *args: Any, **kwargs: Any) -> str:
        # (its indent is checked by the size-filter wrapper, as "tojson" is in _SIZE_FILTERS)
        if self.strict_undefined_json and isinstance(value, Undefined):
            value._fail_with_undefined_error()
        return tojson(value, *args, **kwargs)

    # -- size checks -------------------------------------------------------
    def _check_widths(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Refuse a width, indent or count argument that would build a string or
        list past the limit, before the C code that builds it runs."""
        for arg in (*args, *kwargs.values()):
            if isinstance(arg, int) and not isinstance(arg, bool) and abs(arg) > self.limits.max_string_chars:
                raise _LimitExceeded(
                    f"a width or count of {arg} exceeds the limit of {self.limits.max_string_chars}"
                )

    def _check_size(self, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > self.limits.max_int_bits:
            raise _LimitExceeded(f"an integer grew past {self.limits.max_int_bits} bits")
        if isinstance(value, str) and len(value) > self.limits.max_string_chars:
            raise _LimitExceeded(
                f"a string grew past {self.limits.max_string_chars} characters"
            )
        if isinstance(value, (list, tuple)) and len(value) > self.limits.max_string_chars:
            raise _LimitExceeded(f"a list grew past {self.limits.max_string_chars} items")
        return value

    def _checked_filter(self, func: Callable[..., Any], sized: bool = False) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if sized:  # the first argument is the value, or a context passed first
                self._check_widths(args[1:], kwargs)
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
                if (
                    isinstance(seq, (str, list, tuple))
                    and isinstance(n, int)
                    and len(seq) * max(n, 0) > self.limits.max_string_chars
                ):
                    raise _LimitExceeded(f"repetition would exceed {self.limits.max_string_chars} items")
        if operator == "**" and isinstance(right, (int, float)) and abs(right) > 1000:
            raise _LimitExceeded("exponent too large")
        if operator in ("*", "**") and isinstance(left, int) and isinstance(right, int):
            bits = left.bit_length() * max(right, 0) if operator == "**" else left.bit_length() + right.bit_length()
            if bits > self.limits.max_int_bits:
                raise _LimitExceeded(f"an integer would grow past {self.limits.max_int_bits} bits")
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

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        __obj = _real(__obj)
        if getattr(__obj, "__name__", None) in _SIZE_METHODS and isinstance(getattr(__obj, "__self__", None), str):
            __self._check_widths(args, kwargs)
        return opaque(__self._check_size(super().call(__context, __obj, *args, **kwargs)))

    def getattr(self, obj: Any, attribute: str) -> Any:
        return opaque(super().getattr(_real(obj), attribute))

    def getitem(self, obj: Any, argument: Any) -> Any:
        return opaque(super().getitem(_real(obj), argument))

    def _range(self, *args: int) -> range:
        r = range(*args)
        if len(r) > self.limits.max_range:
            raise _LimitExceeded(
                f"range() of {len(r)} items exceeds the limit of {self.limits.max_range}"
            )
        return r

    # -- rendering ---------------------------------------------------------
    def render_guarded(self, template: jinja2.Template, variables: dict[str, Any], name: str, trace: bool = False) -> str:
        """Render under the in-process limits (sizes, ranges), converting failures
        to project errors.  CPU time and memory are bounded by the worker process
        this runs in (:mod:`analysis.template.render_worker`).  With ``trace``,
        :attr:`traced_lines` holds the template line that wrote each piece of the text."""
        out: list[str] = []
        size = 0
        self.traced_lines = []
        chunks: Iterator[tuple[str, int | None]] = (
            _traced(template, variables) if trace else ((c, None) for c in template.generate(**variables))
        )
        try:
            for chunk, line in chunks:
                if line is not None and chunk and (not self.traced_lines or self.traced_lines[-1][1] != line):
                    self.traced_lines.append((size, line))
                size += len(chunk)
                if size > self.limits.max_output_chars:
                    raise _LimitExceeded(
                        f"output grew past {self.limits.max_output_chars} characters"
                    )
                out.append(chunk)
        except _TemplateRaised as exc:
            raise TemplateRaisedError(address_free(str(exc)), name, template_line(exc)) from None
        except _LimitExceeded as exc:
            raise RenderLimitError(f"sandbox limit: {exc}", name, template_line(exc)) from None
        except RecursionError as exc:
            detail, line = recursion_detail(exc)
            raise RenderLimitError(detail, name, line) from None
        except MemoryError:
            raise RenderLimitError(over_memory(self.limits.memory_mb), name) from None
        except jinja2.exceptions.SecurityError as exc:
            raise SandboxViolation(f"blocked by the sandbox: {address_free(str(exc))}", name, template_line(exc)) from None
        except TemplateRenderError:
            raise
        except Exception as exc:  # noqa: BLE001 - the template's own runtime errors (TypeError, ...)
            raise TemplateRenderError(
                f"render failed: {type(exc).__name__}: {address_free(one_line(exc, 300))}", name, template_line(exc)
            ) from None
        text = "".join(out)
        _check_output(text, name)
        return text


def _traced(template: jinja2.Template, variables: dict[str, Any]) -> Iterator[tuple[str, int | None]]:
    """``template.generate(**variables)``, each piece with the template line of
    the statement that wrote it (the line of the suspended ``yield`` in the
    compiled code, mapped back by the template's debug info; a macro's or a
    block set's text is written at the line that outputs it)."""
    debug = sorted((code, line) for line, code in template.debug_info)
    codes = [code for code, _ in debug]
    context = template.new_context(dict(variables))
    generator = cast("GeneratorType[str, None, None]", template.root_render_func(context))
    try:
        for chunk in generator:
            frame = generator.gi_frame
            line = None
            if frame is not None and debug:
                at = bisect.bisect_right(codes, frame.f_lineno) - 1
                line = debug[at][1] if at >= 0 else 1
            yield chunk, line
    except Exception:  # noqa: BLE001 - as jinja2's generate: the traceback rewritten to template lines
        template.environment.handle_exception()


def over_memory(memory_mb: int) -> str:
    """The message of a template that ran out of its memory limit."""
    return f"the template used more than {memory_mb} MB of memory"


#: A Python object's default repr carries its memory address, a class's repr its
#: module path; a template must print neither (they leak the layout of the
#: process and of this project).
_ADDRESS_REPR = re.compile(
    r"<[^<>]{1,200} at 0x[0-9a-fA-F]{4,}>|<class '[\w.]+'>"
    # (and the fixed forms of Opaque, which no markup spells: printing one is a template bug, or a probe)
    r"|<[^<>]{1,200}, sandboxed>",
    re.IGNORECASE,
)


#: a memory address in a Python form, in any case
_ADDRESS = re.compile(r" at 0x[0-9a-f]+", re.IGNORECASE)


def address_free(text: str) -> str:
    """``text`` (a message that leaves the worker) without memory addresses:
    the last check behind :class:`Opaque`, for forms it does not reach."""
    return _ADDRESS.sub("", text)


def _check_output(text: str, name: str) -> None:
    if _ADDRESS_REPR.search(text):
        raise SandboxViolation("blocked by the sandbox: the template printed a Python object", name)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise TemplateRenderError(
            f"render failed: the output holds a lone surrogate (U+{ord(text[exc.start]):04X}), not valid Unicode",
            name,
        ) from None


class IndexTrackingStr(str):
    """A string that counts how often a template indexes it like a list
    (``content[0]``): templates that do so expect typed (list) content.  The
    count is per render (the worker renders one template at a time)."""

    hits = 0

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, int):
            IndexTrackingStr.hits += 1
        return str.__getitem__(self, key)


@dataclass
class CompiledTemplate:
    """A template compiled in its own sandboxed environment."""

    env: SandboxedTemplateEnvironment
    template: jinja2.Template


def _nesting_depth(node: nodes.Node, limit: int) -> int:
    """Depth of ``node``'s tree, stopping once past ``limit`` (iterative: deep
    trees must not exhaust the interpreter's stack)."""
    deepest = 0
    stack: list[tuple[nodes.Node, int]] = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in current.iter_child_nodes())
    return deepest


class _CountingTokens:
    """The tokens a parser reads, counted (Jinja's tokens carry a line, not a column)."""

    def __init__(self, tokens: Iterator[Any]) -> None:
        self.tokens = tokens
        self.read = 0

    def __iter__(self) -> _CountingTokens:
        return self

    def __next__(self) -> Any:
        token = next(self.tokens)
        self.read += 1
        return token


def _failing_offset(env: jinja2.Environment, source: str) -> int | None:
    """The offset in ``source`` of the token at which Jinja's lexer or parser
    fails (None: it does not fail, or the place cannot be told): the source
    is lexed again and each token found in it in turn, and the parser is run
    over the same tokens, counted, to learn which one it stopped at."""
    from jinja2.lexer import TokenStream, ignored_tokens
    from jinja2.parser import Parser

    raw: list[tuple[str, str]] = []
    lexer_failed = False
    try:
        for _, kind, value in env.lexer.tokeniter(source, None):
            raw.append((kind, value))
    except jinja2.TemplateSyntaxError:
        lexer_failed = True
    offsets, at = [], 0
    for _, value in raw:
        found = source.find(value, at)
        if found < 0:
            return None
        offsets.append(found)
        at = found + len(value)
    if lexer_failed:  # (the lexer stopped after the last token it read)
        return at
    kept = [offset for (kind, _), offset in zip(raw, offsets, strict=True) if kind not in ignored_tokens]
    counting = _CountingTokens(env.lexer.wrap(iter(env.lexer.tokeniter(source, None))))
    parser = Parser(env, source)
    parser.stream = TokenStream(counting, None, None)
    try:
        parser.parse()
    except jinja2.TemplateSyntaxError:
        if parser.stream.current.type == "eof":  # (the template ended before a block did)
            return len(source.rstrip())
        index = counting.read - 1 - len(parser.stream._pushed)
        return kept[index] if 0 <= index < len(kept) else None
    return None


def _column_of(source: str, offset: int, line: int) -> int | None:
    """The 1-based column of ``offset``, if it is on ``line``."""
    if source.count("\n", 0, offset) + 1 != line:
        return None
    return offset - source.rfind("\n", 0, offset)


def syntax_column(source: str, line: int | None, message: str = "", env: jinja2.Environment | None = None) -> int | None:
    """The column of a syntax error on ``line``: given the environment, where
    the token Jinja failed at stands (its parser is run again over counted
    tokens); else, or where that cannot be told, where the token Jinja names
    (``unexpected '}'``) stands after the line's first tag opener, else that
    opener."""
    if not line:
        return None
    if env is not None:
        try:
            offset = _failing_offset(env, source)
        except Exception:  # noqa: BLE001 - a best effort: the line's heuristic below
            offset = None
        column = _column_of(source, offset, line) if offset is not None else None
        if column is not None:
            return column
    lines = source.splitlines()
    if not 0 < line <= len(lines):
        return None
    text = lines[line - 1]
    match = re.search(r"\{[%{#]", text)
    opener = match.start() if match else 0
    token = re.search(r"unexpected (?:char )?'(.{1,20}?)'", message)
    if token:
        at = text.find(token.group(1), opener + (2 if match else 0))
        if at >= 0:
            return at + 1
    return opener + 1


def compile_template(
    source: str, name: str, limits: RenderLimits, cache: Path | None = None
) -> CompiledTemplate:
    """Compile ``source`` in a fresh sandboxed environment, checking its nesting
    first (its size is checked by the caller, before it is sent to the worker);
    every failure is a :class:`TemplateSyntaxError`.  The compiled code is kept
    in the disk cache (:mod:`analysis.disk_cache`; ``cache`` is its folder, None
    for none) and taken from it when the same source was compiled before, with
    the same code and nesting limit."""
    env = SandboxedTemplateEnvironment(limits=limits)
    key = disk_cache.entry_key("code", source, str(limits.max_nesting))
    try:
        code = _cached_code(key, cache)
        if code is None:
            tree = env.parse(source)
            depth = _nesting_depth(tree, limits.max_nesting)
            if depth > limits.max_nesting:
                raise TemplateSyntaxError(
                    f"the template nests deeper than {limits.max_nesting} levels", name, None
                )
            code = env.compile(tree, filename="<template>")
            disk_cache.store("code", key, marshal.dumps(code), cache)
        template = env.template_class.from_code(env, code, env.make_globals(None), None)
    except TemplateSyntaxError:
        raise
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateSyntaxError(
            exc.message or "invalid syntax", name, exc.lineno, syntax_column(source, exc.lineno, exc.message or "", env)
        ) from None
    except RecursionError:
        raise TemplateSyntaxError("the template nests too deeply to compile", name, None) from None
    except MemoryError:
        raise TemplateSyntaxError(
            f"compiling the template used more than {limits.memory_mb} MB of memory", name, None
        ) from None
    except Exception as exc:  # noqa: BLE001 - Python's own compiler limits, oversized literals, ...
        raise TemplateSyntaxError(
            f"the template cannot be compiled ({type(exc).__name__}: {one_line(exc, 300)})", name, None
        ) from None
    return CompiledTemplate(env, template)


def _cached_code(key: str, cache: Path | None) -> CodeType | None:
    data = disk_cache.load("code", key, cache)
    if data is None:
        return None
    try:
        code = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        code = None
    if not isinstance(code, CodeType):
        disk_cache.forget("code", key, cache)
        return None
    return code


@dataclass(frozen=True)
class RenderNotes:
    """What a render noticed besides its text."""

    #: how often ``+`` had to turn a dict or list into JSON text
    stringified_containers: int = 0
    #: how often an :class:`IndexTrackingStr` was indexed like a list
    indexed_strings: int = 0
    #: how often a ``{% generation %}`` block was rendered
    generation_blocks: int = 0
    #: the top-level variables the render read that were not set, sorted
    read_unset: tuple[str, ...] = ()
    #: (offset, template line) where the text written by another line starts
    #: (traced renders only; see :func:`line_at`)
    lines: tuple[tuple[int, int], ...] = ()

    def line_at(self, offset: int) -> int | None:
        """The template line of the statement that wrote the character at
        ``offset`` (None when the render was not traced)."""
        starts = [start for start, _ in self.lines]
        at = bisect.bisect_right(starts, offset) - 1
        return self.lines[at][1] if at >= 0 else None


def render_compiled(
    compiled: CompiledTemplate,
    variables: dict[str, Any],
    name: str,
    now: datetime | None = None,
    strict_undefined_json: bool = False,
    trace: bool = False,
) -> tuple[str, RenderNotes]:
    """Render a compiled template: its text and what the render noticed (with
    ``trace``, the template line that wrote each piece of the text)."""
    env = compiled.env
    env.clock = (lambda: now) if now is not None else datetime.now
    env.strict_undefined_json = strict_undefined_json
    env.stringified_containers = 0
    env.generation_blocks = 0
    IndexTrackingStr.hits = 0
    LenientUndefined.read_names = set()
    text = env.render_guarded(compiled.template, variables, name, trace)
    return text, render_notes(env)


def render_notes(env: SandboxedTemplateEnvironment) -> RenderNotes:
    """What the environment's last render noticed (also after it failed)."""
    return RenderNotes(
        env.stringified_containers,
        IndexTrackingStr.hits,
        env.generation_blocks,
        tuple(sorted(LenientUndefined.read_names)),
        tuple(env.traced_lines),
    )


def recursion_detail(exc: RecursionError) -> tuple[str, int | None]:
    """What a render that recursed too deep says, and the template line: the
    macro that called itself most often in ``exc``'s traceback and the line it
    did so from (a template's own recursion, as Hermes 2 Pro's
    ``json_to_python_type`` on a type name it does not map, ``"str"``)."""
    from collections import Counter

    macros: Counter[str] = Counter()
    lines: Counter[int] = Counter()
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_filename == "<template>":
            lines[tb.tb_lineno] += 1
        elif isinstance(frame.f_locals.get("self"), Macro) and frame.f_code.co_name == "_invoke":
            macros[frame.f_locals["self"].name] += 1
        tb = tb.tb_next
    line = lines.most_common(1)[0][0] if lines else None
    if not macros:
        return "the template recursed without end on this request (recursion too deep)", line
    return f"the template recursed without end on this request: macro {macros.most_common(1)[0][0]} calls itself", line


def template_line(exc: BaseException) -> int | None:
    """The template line of the innermost template frame in ``exc``'s traceback."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
