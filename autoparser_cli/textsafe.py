"""Model output and template text made safe for a terminal.

Text from a model or a template may hold control characters: an escape
sequence (``\\x1b[31m``, ``\\x1b]0;title\\x07``) would recolour the terminal,
retitle the window or move the cursor, and a carriage return would overwrite
what was printed.  Everything shown by Rich goes through :func:`terminal_safe`
first; ``--json`` output is JSON-escaped and needs nothing.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, and the C1 controls.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def terminal_safe(text: str) -> str:
    """``text`` with every control character but newline and tab written as a
    visible ``\\xNN`` escape."""
    return _CONTROL.sub(_escape, text) if _CONTROL.search(text) else text


def one_line_safe(text: str) -> str:
    """``text`` as one terminal line: control characters escaped
    (:func:`terminal_safe`), and newlines, carriage returns and tabs too
    (``\\n``), so no message, file or variant name can split an error line."""
    return terminal_safe(text).replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
