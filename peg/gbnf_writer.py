"""A PEG parser as a llama.cpp-dialect GBNF grammar.

Lookaheads (``peek``, ``negate``) have no GBNF form and constrain nothing;
``until`` becomes the exclusion-chain pattern llama.cpp uses
(``([^<] | "<" [^/] | "</" [^t] ...)*``), generalised to several delimiters.
"""

from __future__ import annotations

from peg.combinators import (
    UNBOUNDED,
    Atomic,
    CharClass,
    Choice,
    End,
    Eps,
    Json,
    Literal,
    Not,
    Parser,
    Peek,
    Ref,
    Repetition,
    Rest,
    Rule,
    Schema,
    Sequence,
    Space,
    Tag,
    Until,
)
from peg.json_schema_gbnf import SPACE_RULE, SchemaConverter, gbnf_literal, rule_name


def _char_escape(c: str) -> str:
    """A character inside ``[...]``, escaped the way llama.cpp's GBNF reader takes
    it (it knows ``\\\\ \\[ \\] \\n \\r \\t`` and hex, not ``\\-`` or ``\\^``)."""
    if c in "]\\[":
        return "\\" + c
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(c, c)


def _class_body(ranges: list[tuple[str, str]]) -> str:
    """The inside of a character class: a lone ``-`` goes last (literal there),
    and a leading ``^`` (which would negate) is written in hex."""
    parts = [(lo, hi) for lo, hi in ranges if (lo, hi) != ("-", "-")]
    parts += [("-", "-")] if ("-", "-") in ranges else []
    body = "".join(_char_escape(lo) if lo == hi else f"{_char_escape(lo)}-{_char_escape(hi)}" for lo, hi in parts)
    return "\\x5E" + body[1:] if body.startswith("^") else body


def until_pattern(delimiters: tuple[str, ...], escape: str = "") -> str:
    """GBNF for any text that contains none of ``delimiters`` (prefix-trie
    exclusion); with ``escape``, a character after it is never a delimiter."""
    if escape:
        plain = until_pattern((*delimiters, escape))
        return plain[:-2] + f" | {gbnf_literal(escape)} [^\\n])*"
    if not delimiters:
        return ".*"
    alternatives: list[str] = []
    prefixes = sorted({d[:i] for d in delimiters for i in range(len(d))}, key=lambda p: (len(p), p))
    for prefix in prefixes:
        nexts = sorted({d[len(prefix)] for d in delimiters if d.startswith(prefix) and len(d) > len(prefix)})
        excluded = _class_body([(c, c) for c in nexts])
        cls = f"[^{excluded}]"
        alternatives.append(cls if not prefix else f"{gbnf_literal(prefix)} {cls}")
    return "(" + " | ".join(alternatives) + ")*"


class GbnfWriter:
    """Turns parser nodes into GBNF expressions, collecting rules."""

    def __init__(self) -> None:
        self.rules: dict[str, str] = {}
        self.schemas = SchemaConverter(self.rules)
        self._until_names: dict[tuple[str, ...], str] = {}
        self._rule_names: dict[int, str] = {}

    def expr(self, node: Parser) -> str:
        if isinstance(node, Literal):
            return gbnf_literal(node.text)
        if isinstance(node, CharClass):
            body = _class_body(list(node.ranges))
            cls = f"[{'^' if node.negated else ''}{body}]"
            return cls + _repeat_suffix(node.min, node.max)
        if isinstance(node, Sequence):
            parts = [self.expr(item) for item in node.items]
            parts = [p for p in parts if p != '""'] or ['""']
            return " ".join(parts)  # every form above is one term: a choice comes parenthesized
        if isinstance(node, Choice):
            return "(" + " | ".join(self.expr(o) for o in node.options) + ")"
        if isinstance(node, Repetition):
            inner = self.expr(node.item)
            return f"({inner}){_repeat_suffix(node.min, node.max)}"
        if isinstance(node, Until):
            key = (*node.delimiters, node.escape) if node.escape else node.delimiters
            if key not in self._until_names:
                name = "until-" + rule_name("-".join(key))[:40] if key else "until-end"
                self._until_names[key] = self.schemas.add_rule(name, until_pattern(node.delimiters, node.escape))
            return self._until_names[key]
        if isinstance(node, Rest):
            return ".*"
        if isinstance(node, Space):
            self.rules.setdefault("space", SPACE_RULE)
            return "space"
        if isinstance(node, (Eps, End, Peek, Not)):
            return '""'
        if isinstance(node, (Atomic, Tag)):
            return self.expr(node.item)
        if isinstance(node, Json):
            return self.schemas.primitive("value")
        if isinstance(node, Schema):
            return self.schemas.convert(node.schema, node.name + "-schema" if node.name else "schema")
        if isinstance(node, Rule):
            return self._rule(node)
        if isinstance(node, Ref):
            return self._rule(node.rule)
        raise TypeError(f"no GBNF form for {type(node).__name__}")

    def _rule(self, rule: Rule) -> str:
        if id(rule) in self._rule_names:
            return self._rule_names[id(rule)]
        name = rule_name(rule.name)
        while name in self.rules:
            name += "-x"
        self._rule_names[id(rule)] = name
        self.rules[name] = "PENDING"
        assert rule.body is not None
        self.rules[name] = self.expr(rule.body)
        return name


def _repeat_suffix(lo: int, hi: int) -> str:
    if hi == UNBOUNDED:
        return "*" if lo == 0 else ("+" if lo == 1 else f"{{{lo},}}")
    if lo == 0 and hi == 1:
        return "?"
    if lo == hi == 1:
        return ""
    return f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"


def to_gbnf(parser: Parser, root: str = "root") -> str:
    """A complete GBNF grammar whose ``root`` rule describes ``parser``."""
    writer = GbnfWriter()
    body = writer.expr(parser)
    rules = {root: body, **{k: v for k, v in writer.rules.items() if k != root}}
    return "".join(f"{name} ::= {rules[name]}\n" for name in [root, *sorted(k for k in rules if k != root)])


def schema_to_gbnf(json_schema: object, root: str = "root") -> str:
    """A complete GBNF grammar for a JSON schema."""
    converter = SchemaConverter()
    name = converter.convert(json_schema, root)
    rules = converter.rules
    return "".join(f"{n} ::= {rules[n]}\n" for n in [name, *sorted(k for k in rules if k != name)])
