"""The one tri-state outcome peg's readers share: a parse, a JSON scan, an
incremental JSON value, a GBNF match each end in success, failure, or a valid
prefix that needs more input."""

from __future__ import annotations

from enum import Enum


class Status(Enum):
    """Outcome of reading text: all of it fits, it cannot fit, or it is a valid prefix."""

    SUCCESS = "success"
    FAILURE = "failure"
    NEED_MORE = "need_more_input"


__all__ = ["Status"]
