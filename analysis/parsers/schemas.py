"""What a request's tools declare, as the parsers read it: the functions, their
parameters, and which values a schema allows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from analysis.parsers.request import ChatRequest
from peg import combinators as p
from peg.combinators import Parser


def declared_functions(tools: Sequence[Mapping[str, Any]] | None) -> list[Mapping[str, Any]]:
    out = []
    for tool in tools or ():
        function = tool.get("function", tool) if isinstance(tool, Mapping) else None
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            out.append(function)
    return out


def parameters_of(function: Mapping[str, Any]) -> Mapping[str, Any]:
    params = function.get("parameters")
    return params if isinstance(params, Mapping) else {"type": "object"}


def is_string_schema(schema: Any) -> bool:
    if not isinstance(schema, Mapping):
        return False
    kind = schema.get("type")
    if kind == "string" or (isinstance(kind, list) and "string" in kind):
        return True
    if "enum" in schema and all(isinstance(v, str) for v in schema["enum"]):
        return True
    return any(is_string_schema(s) for s in schema.get("anyOf", []) or schema.get("oneOf", []) or [])


def arguments_schema(function: Mapping[str, Any], held: Sequence[str] = ()) -> Parser:
    return p.schema(p.json_value(held), f"{function['name']}-args", parameters_of(function))


#: a request's own tool, or (name "") any other
ANY_TOOL: Mapping[str, Any] = {"name": "", "parameters": {"type": "object"}}


def properties_of(params: Mapping[str, Any]) -> Mapping[str, Any]:
    properties = params.get("properties") or {}
    return properties if isinstance(properties, Mapping) else {}


def is_only_string(schema: Any) -> bool:
    """Whether every value ``schema`` allows is a string (a type list or
    ``anyOf`` with another type, or ``nullable``, is not)."""
    if not isinstance(schema, Mapping) or schema.get("nullable"):
        return False
    kind = schema.get("type")
    if kind == "string" or kind == ["string"]:
        return True
    if kind is None and "enum" in schema and all(isinstance(v, str) for v in schema["enum"]):
        return True
    alternatives = schema.get("anyOf") or schema.get("oneOf")
    return kind is None and isinstance(alternatives, list) and bool(alternatives) and all(is_only_string(s) for s in alternatives)


def takes_structure(schema: Mapping[str, Any]) -> bool:
    """Whether ``schema`` allows an object or an array and no string."""
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else []
    return bool({"object", "array"} & set(kinds)) and "string" not in kinds


def tool_functions(request: ChatRequest) -> list[Mapping[str, Any]]:
    """The request's functions, longest names first (PEG choice commits: "f"
    must not win over "f_with_opt")."""
    return sorted(declared_functions(request.tools), key=lambda f: -len(f["name"]))
