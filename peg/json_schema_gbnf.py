"""JSON schema to GBNF, with the semantics of llama.cpp's json-schema-to-grammar.

Objects list required properties in schema order, then optional ones; extra
properties only where ``additionalProperties`` allows them.  Anything the
converter cannot express raises :class:`~peg.errors.GrammarError` naming the
schema path, never a silently wrong grammar.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from peg.errors import GrammarError

SPACE_RULE = '| " " | "\\n"{1,2} [ \\t]{0,20}'

PRIMITIVES: dict[str, tuple[str, tuple[str, ...]]] = {
    "boolean": ('("true" | "false") space', ()),
    "decimal-part": ("[0-9]{1,16}", ()),
    "integral-part": ("[0] | [1-9] [0-9]{0,15}", ()),
    "number": ('("-"? integral-part) ("." decimal-part)? ([eE] [-+]? integral-part)? space', ("integral-part", "decimal-part")),
    "integer": ('("-"? integral-part) space', ("integral-part",)),
    "value": ("object | array | string | number | boolean | null", ("object", "array", "string", "number", "boolean", "null")),
    "object": ('"{" space ( string ":" space value ("," space string ":" space value)* )? "}" space', ("string", "value")),
    "array": ('"[" space ( value ("," space value)* )? "]" space', ("value",)),
    "char": ('[^"\\\\\\x7F\\x00-\\x1F] | [\\\\] (["\\\\bfnrt] | "u" [0-9a-fA-F]{4})', ()),
    "string": ('"\\"" char* "\\"" space', ("char",)),
    "null": ('"null" space', ()),
}

FORMATS: dict[str, tuple[str, tuple[str, ...]]] = {
    "date": ('[0-9]{4} "-" ( "0" [1-9] | "1" [0-2] ) "-" ( "0" [1-9] | [1-2] [0-9] | "3" [0-1] )', ()),
    "time": (
        '([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{3} )? '
        '( "Z" | ( "+" | "-" ) ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] )',
        (),
    ),
    "date-time": ('date "T" time', ("date", "time")),
    "uuid": ('[0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12}', ()),
}

_UNSUPPORTED_KEYS = {"not", "if", "then", "else", "dependentSchemas", "patternProperties", "contains", "uniqueItems"}


def gbnf_literal(text: str) -> str:
    """``text`` as a quoted GBNF literal."""
    out = []
    for c in text:
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\x{ord(c):02X}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def rule_name(text: str) -> str:
    """A GBNF-safe rule name (``[a-zA-Z0-9-]+``)."""
    return re.sub(r"[^a-zA-Z0-9-]+", "-", text).strip("-") or "rule"


class SchemaConverter:
    """Accumulates GBNF rules for one or more schemas."""

    def __init__(self, rules: dict[str, str] | None = None):
        self.rules: dict[str, str] = rules if rules is not None else {}
        self._root_schema: Mapping[str, Any] = {}
        self._ref_names: dict[str, str] = {}

    # -- rule table --------------------------------------------------------
    def add_rule(self, name: str, body: str) -> str:
        """Add ``name ::= body``; a clash with a different body gets a numbered name."""
        key = rule_name(name)
        if self.rules.get(key, body) == body:
            self.rules[key] = body
            return key
        i = 1
        while f"{key}{i}" in self.rules and self.rules[f"{key}{i}"] != body:
            i += 1
        self.rules[f"{key}{i}"] = body
        return f"{key}{i}"

    def primitive(self, name: str, table: Mapping[str, tuple[str, tuple[str, ...]]] = PRIMITIVES) -> str:
        body, deps = table[name]
        if self.rules.get(name) == body:
            return name  # already there (primitives refer to each other: value -> object -> value)
        self.rules[name] = body
        for dep in deps:
            if dep in PRIMITIVES:
                self.primitive(dep)
            else:
                self.primitive(dep, FORMATS)
        self.rules.setdefault("space", SPACE_RULE)
        return self.add_rule(name, body)

    # -- conversion --------------------------------------------------------
    def convert(self, schema: Any, name: str) -> str:
        """Add rules for ``schema`` under ``name``; returns the rule name."""
        self._root_schema = schema if isinstance(schema, Mapping) else {}
        self.rules.setdefault("space", SPACE_RULE)
        return self.add_rule(name, self._visit(schema, name, "#"))

    def _visit(self, schema: Any, name: str, path: str) -> str:  # noqa: C901 - one branch per JSON Schema keyword
        if schema is True or schema == {}:
            return self.primitive("value")
        if schema is False:
            raise GrammarError(f"schema {path}: 'false' schema matches nothing")
        if not isinstance(schema, Mapping):
            raise GrammarError(f"schema {path}: expected an object, got {type(schema).__name__}")
        for key in _UNSUPPORTED_KEYS & set(schema):
            raise GrammarError(f"schema {path}/{key}: unsupported JSON schema keyword {key!r}")
        if "$ref" in schema:
            return self._ref(schema["$ref"], path)
        if "const" in schema:
            return gbnf_literal(json.dumps(schema["const"], ensure_ascii=False)) + " space"
        if "enum" in schema:
            return "(" + " | ".join(gbnf_literal(json.dumps(v, ensure_ascii=False)) for v in schema["enum"]) + ") space"
        for key in ("anyOf", "oneOf"):
            if key in schema:
                alts = [
                    self.add_rule(f"{name}-{i}", self._visit(sub, f"{name}-{i}", f"{path}/{key}/{i}"))
                    for i, sub in enumerate(schema[key])
                ]
                return " | ".join(alts)
        if "allOf" in schema:
            return self._visit(self._merge_all_of(schema, path), name, path)
        schema_type = schema.get("type")
        if isinstance(schema_type, list):
            alts = [
                self.add_rule(f"{name}-{t}", self._visit({**schema, "type": t}, f"{name}-{t}", path))
                for t in schema_type
            ]
            return " | ".join(alts)
        if schema.get("nullable") is True:
            inner = dict(schema)
            inner.pop("nullable")
            return self.add_rule(f"{name}-nonnull", self._visit(inner, name, path)) + " | " + self.primitive("null")
        if schema_type == "object" or (schema_type is None and "properties" in schema):
            return self._object(schema, name, path)
        if schema_type == "array" or (schema_type is None and ("items" in schema or "prefixItems" in schema)):
            return self._array(schema, name, path)
        if schema_type == "string":
            return self._string(schema, name, path)
        if schema_type in ("integer", "number", "boolean", "null"):
            for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
                if key in schema:
                    raise GrammarError(f"schema {path}/{key}: numeric bounds are not supported")
            return self.primitive(schema_type)
        if schema_type is None:
            return self.primitive("value")
        raise GrammarError(f"schema {path}/type: unknown type {schema_type!r}")

    def _ref(self, ref: str, path: str) -> str:
        if ref in self._ref_names:
            return self._ref_names[ref]
        if not ref.startswith("#/"):
            raise GrammarError(f"schema {path}/$ref: only local references are supported, got {ref!r}")
        target = self._resolve(ref, path)
        name = rule_name("ref-" + ref.split("/")[-1])
        self._ref_names[ref] = name
        self.rules[name] = "PENDING"
        self.rules[name] = self._visit(target, name, ref)
        return name

    def _merge_all_of(self, schema: Mapping[str, Any], path: str) -> dict[str, Any]:
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for i, sub in enumerate(schema["allOf"]):
            if isinstance(sub, Mapping) and "$ref" in sub:
                sub = self._resolve(sub["$ref"], f"{path}/allOf/{i}")
            if not isinstance(sub, Mapping) or sub.get("type", "object") != "object":
                raise GrammarError(f"schema {path}/allOf/{i}: only object schemas can be combined")
            merged["properties"].update(sub.get("properties", {}))
            merged["required"].extend(r for r in sub.get("required", []) if r not in merged["required"])
        return merged

    def _resolve(self, ref: str, path: str) -> Any:
        target: Any = self._root_schema
        for part in ref[2:].split("/"):
            if not isinstance(target, Mapping) or part not in target:
                raise GrammarError(f"schema {path}/$ref: {ref!r} does not resolve")
            target = target[part]
        return target

    def _object(self, schema: Mapping[str, Any], name: str, path: str) -> str:
        props: Mapping[str, Any] = schema.get("properties", {}) or {}
        required = [k for k in schema.get("required", []) if k in props]
        optional = [k for k in props if k not in required]
        additional = schema.get("additionalProperties", not props)
        kv: dict[str, str] = {}
        for key in [*required, *optional]:
            value_rule = self.add_rule(f"{name}-{key}", self._visit(props[key], f"{name}-{key}", f"{path}/properties/{key}"))
            kv[key] = self.add_rule(f"{name}-{key}-kv", f'{gbnf_literal(json.dumps(key, ensure_ascii=False))} space ":" space {value_rule}')
        extra = None
        if additional is not False:
            value = self.primitive("value") if additional is True else self.add_rule(
                f"{name}-additional-value", self._visit(additional, f"{name}-additional-value", f"{path}/additionalProperties")
            )
            extra = self.add_rule(f"{name}-additional-kv", f'{self.primitive("string")} ":" space {value}')
        parts: list[str] = []
        if required:
            parts.append(' "," space '.join(kv[k] for k in required))
        # Optional properties in schema order, any subset of them: a choice of the
        # first one present, then each later one independently ("," kv)?.
        heads = [kv[k] for k in optional] + ([f'{extra} ( "," space {extra} )*'] if extra else [])
        follows = [f'( "," space {kv[k]} )?' for k in optional] + ([f'( "," space {extra} )*'] if extra else [])
        starts = [" ".join([heads[i], *follows[i + 1 :]]) for i in range(len(heads))]
        chain = " | ".join(f"( {s} )" for s in starts) if len(starts) > 1 else "".join(starts)
        if parts and chain:
            body = f'"{{" space {parts[0]} ( "," space ( {chain} ) )? "}}" space'
        elif parts:
            body = f'"{{" space {parts[0]} "}}" space'
        elif chain:
            body = f'"{{" space ( {chain} )? "}}" space'
        else:
            body = '"{" space "}" space'
        return body

    def _array(self, schema: Mapping[str, Any], name: str, path: str) -> str:
        if "prefixItems" in schema:
            items = [
                self.add_rule(f"{name}-tuple-{i}", self._visit(s, f"{name}-tuple-{i}", f"{path}/prefixItems/{i}"))
                for i, s in enumerate(schema["prefixItems"])
            ]
            return '"[" space ' + ' "," space '.join(items) + ' "]" space'
        item = self.add_rule(f"{name}-item", self._visit(schema.get("items", True), f"{name}-item", f"{path}/items"))
        lo = int(schema.get("minItems", 0))
        hi = schema.get("maxItems")
        hi = int(hi) if hi is not None else None
        if hi is not None and hi < lo:
            raise GrammarError(f"schema {path}: maxItems < minItems")
        if hi == 0:
            return '"[" space "]" space'
        more_lo = max(lo - 1, 0)
        more = f'( "," space {item} )' + _quantifier(more_lo, None if hi is None else hi - 1)
        inner = f"{item} {more}"
        if lo == 0:
            inner = f"( {inner} )?"
        return f'"[" space {inner} "]" space'

    def _string(self, schema: Mapping[str, Any], name: str, path: str) -> str:
        if "pattern" in schema:
            return '"\\"" ' + regex_to_gbnf(schema["pattern"], f"{path}/pattern") + ' "\\"" space'
        fmt = schema.get("format")
        if fmt is not None:
            if fmt not in FORMATS:
                raise GrammarError(f"schema {path}/format: unsupported string format {fmt!r}")
            return '"\\"" ' + self.primitive(fmt, FORMATS) + ' "\\"" space'
        lo = int(schema.get("minLength", 0))
        hi = schema.get("maxLength")
        if lo == 0 and hi is None:
            return self.primitive("string")
        char = self.primitive("char")
        return f'"\\"" {char}{_quantifier(lo, None if hi is None else int(hi))} "\\"" space'


def _quantifier(lo: int, hi: int | None) -> str:
    if hi is None:
        return "*" if lo == 0 else ("+" if lo == 1 else f"{{{lo},}}")
    if lo == 0 and hi == 1:
        return "?"
    return f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"


def regex_to_gbnf(pattern: str, path: str) -> str:  # noqa: C901 - one branch per regex construct
    """An anchored regular expression (``^...$``) as a GBNF expression."""
    if not (pattern.startswith("^") and pattern.endswith("$")):
        raise GrammarError(f"schema {path}: only anchored patterns (^...$) are supported")
    body = pattern[1:-1]
    pos = 0

    def alternation() -> str:
        nonlocal pos
        alts = [sequence()]
        while pos < len(body) and body[pos] == "|":
            pos += 1
            alts.append(sequence())
        return alts[0] if len(alts) == 1 else "(" + " | ".join(alts) + ")"

    def sequence() -> str:
        items: list[str] = []
        while pos < len(body) and body[pos] not in "|)":
            atom_text = atom()
            items.append(atom_text + quant())
        return " ".join(items) if items else '""'

    def quant() -> str:
        nonlocal pos
        if pos < len(body) and body[pos] in "*+?":
            pos += 1
            return body[pos - 1]
        if pos < len(body) and body[pos] == "{":
            end = body.index("}", pos)
            spec = body[pos + 1 : end]
            pos = end + 1
            return "{" + spec + "}"
        return ""

    def atom() -> str:
        nonlocal pos
        c = body[pos]
        if c == "(":
            pos += 1
            if body.startswith("?:", pos):
                pos += 2
            inner = alternation()
            if pos >= len(body) or body[pos] != ")":
                raise GrammarError(f"schema {path}: unbalanced parenthesis in pattern")
            pos += 1
            return f"({inner})"
        if c == "[":
            end = pos + 1
            if end < len(body) and body[end] == "^":
                end += 1
            if end < len(body) and body[end] == "]":
                end += 1
            while end < len(body) and body[end] != "]":
                end += 2 if body[end] == "\\" else 1
            cls = body[pos : end + 1]
            pos = end + 1
            return cls.replace('"', '\\"')
        if c == ".":
            pos += 1
            return '[^"\\n]'
        if c == "\\":
            pos += 2
            e = body[pos - 1]
            classes = {"d": "[0-9]", "w": "[a-zA-Z0-9_]", "s": "[ \\t\\n]", "D": "[^0-9]", "W": "[^a-zA-Z0-9_]", "S": "[^ \\t\\n]"}
            if e in classes:
                return classes[e]
            return gbnf_literal(e)
        if c in "^$":
            raise GrammarError(f"schema {path}: anchors inside a pattern are not supported")
        pos += 1
        return gbnf_literal(c)

    result = alternation()
    if pos != len(body):
        raise GrammarError(f"schema {path}: cannot translate pattern at offset {pos + 1}")
    return f"({result})"
