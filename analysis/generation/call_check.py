"""Checking parsed tool calls against the request's tools.

The parser is lenient (arguments in any order, optional ones may be missing):
it reads what the model wrote.  Whether what it wrote is a valid call is a
separate question, answered here with the tool's JSON schema (through the
``jsonschema`` library): an unknown tool, arguments that are not a JSON object,
a duplicated argument, a missing required one, a value of the wrong type or
outside its enum.  Each problem is data (:class:`CallProblem`) that prints as
one line naming the call.  A type name JSON Schema does not know (``"float"``,
``"str"``: written for Python) is not checked: :func:`schema_notes` names each.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analysis.messages.mapper import Message


@dataclass(frozen=True)
class CallProblem:
    """One way a parsed call breaks the request's tools: the call's place in
    the message, its function name, and what is wrong."""

    index: int
    name: str
    detail: str

    def __str__(self) -> str:
        return f"tool call {self.index} ({self.name}): {self.detail}"


class _Duplicate(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _Duplicate(key)
        seen[key] = value
    return seen


def _functions(tools: Sequence[Mapping[str, Any]] | None) -> dict[str, Mapping[str, Any]]:
    out: dict[str, Mapping[str, Any]] = {}
    for tool in tools or ():
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            out[function["name"]] = function
    return out


#: the type names JSON Schema knows
_JSON_TYPES = frozenset({"null", "boolean", "object", "array", "number", "string", "integer"})
#: keywords whose values are data, not schemas
_VALUES = frozenset({"enum", "const", "default", "examples"})


def _known_types(schema: Any, path: str, unknown: list[str]) -> Any:
    """``schema`` without each ``type`` that names a type JSON Schema does not
    know (that value's type is not checked: ``["float", "null"]`` may mean a
    number); each such name is added to ``unknown`` as ``path has type 'name'``."""
    if isinstance(schema, list):
        return [_known_types(item, f"{path}[{i}]", unknown) for i, item in enumerate(schema)]
    if not isinstance(schema, Mapping):
        return schema
    declared = schema.get("type")
    keyword = isinstance(declared, (str, list))  # (else a property named "type")
    out = {
        key: value if key in _VALUES else _known_types(value, f"{path}.{key}" if path else str(key), unknown)
        for key, value in schema.items()
        if key != "type" or not keyword
    }
    if keyword:
        names = declared if isinstance(declared, list) else [declared]
        bad = [name for name in names if isinstance(name, str) and name not in _JSON_TYPES]
        unknown.extend(f"{path or 'parameters'} has type {name!r}" for name in bad)
        if not bad:
            out["type"] = declared
    return out


def schema_notes(message: Message, tools: Sequence[Mapping[str, Any]] | None) -> list[str]:
    """One line per tool the message calls whose schema declares a type JSON
    Schema does not know: those values' types are not checked."""
    functions = _functions(tools)
    notes = []
    for name in dict.fromkeys(call.name for call in message.tool_calls or ()):
        function = functions.get(name)
        unknown: list[str] = []
        if function is not None:
            _known_types(function.get("parameters") or {}, "", unknown)
        if unknown:
            notes.append(f"tool {name}: {', '.join(unknown)}, which JSON Schema does not know: not checked")
    return notes


def _where(path: Sequence[Any]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def call_problems(message: Message, tools: Sequence[Mapping[str, Any]] | None) -> list[CallProblem]:
    """Each way the message's tool calls break ``tools`` (empty: all valid)."""
    if not message.tool_calls:
        return []  # (and jsonschema, slow to import, is not needed)
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    functions = _functions(tools)
    problems: list[CallProblem] = []
    for i, call in enumerate(message.tool_calls):

        def problem(detail: str, i: int = i, name: str = call.name) -> None:
            problems.append(CallProblem(i, name, detail))

        function = functions.get(call.name)
        if function is None:
            known = ", ".join(sorted(functions)) or "none"
            problem(f"no such tool (the request has: {known})")
            continue
        try:
            arguments = json.loads(call.arguments or "{}", object_pairs_hook=_no_duplicates)
        except _Duplicate as exc:
            problem(f"argument {exc} is given twice")
            continue
        except ValueError:
            problem("the arguments are not JSON")
            continue
        if not isinstance(arguments, dict):
            problem("the arguments are not a JSON object")
            continue
        schema = _known_types(function.get("parameters") or {"type": "object"}, "", [])
        try:
            errors = sorted(Draft202012Validator(schema).iter_errors(arguments), key=lambda e: list(e.absolute_path))
        except SchemaError as exc:  # pragma: no cover - a request's own broken schema
            problem(f"the tool's schema is not valid ({exc.message})")
            continue
        for error in errors:
            where = _where(error.absolute_path)
            problem(f"{where + ': ' if where else ''}{error.message}")
    return problems
