"""Options that act only beside another, declared once for every command:
one given without the option it acts beside, or beside one that makes it do
nothing, is refused, one line naming both (``--chunk`` without ``--stream``
was ignored, silently).
:func:`~autoparser_cli.common.handle_errors` checks each command's options
against :data:`REQUIRES` before the command runs."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

#: command -> (option, the option it acts beside, why); options by their
#: parameter names, each spelled as its long flag in the message
REQUIRES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "render": (("adapt", "messages", "the built-in conversations are adapted anyway"),),
    "parse": (
        ("open_arguments", "stream", "a whole parse shows only arguments that read"),
        ("chunk", "stream", "the chunk size of a stream"),
    ),
    "grammar": (("partial", "check_output_path", "the output --check tests is cut short"),),
    # (check's --update-lock without --lock is the library's to refuse: its message names the setting)
    "check": (
        ("ignore", "lint", "the lint rules not to run"),
        ("engine_names", "lint", "the engines lint's errors are for"),
        ("templates", "cases", "the folder of the cases' templates"),
        ("case_ids", "cases", "the cases to run"),
    ),
}


#: command -> (option, the option it does nothing beside, why)
EXCLUDES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "analyze": tuple(
        (option, "as_json", "--json prints the whole analysis and what is generated, tables apart")
        for option in ("diffs", "show_parser", "show_grammar", "show_all")
    ),
    "grammar": (("output_only", "check_output_path", "--check tests the output against the grammar as generated"),),
    "export": (("verify", "check_only", "--check is the reading with transformers"),),
}


def _given(value: Any) -> bool:
    return value is not None and value is not False and value != [] and value != ()


def _declared(func: Callable[..., Any], name: str, value: Any = True) -> tuple[str, Any]:
    """A parameter's long flag (or metavar) and default, as the command
    declares it; of an on/off pair, the one that gives ``value``."""
    info = inspect.signature(func).parameters[name].default
    decls = [d for d in getattr(info, "param_decls", ()) or () if d.startswith("-")]
    on, _, off = (max(decls, key=len) if decls else "").partition("/")
    flag = (off if value is False and off else on) or getattr(info, "metavar", None) or name
    return flag, getattr(info, "default", None)


def _set(value: Any, default: Any) -> bool:
    """Whether an option's value was given: it is not its default (an option
    at its default changes nothing), and not an empty one."""
    return value != default and value is not None and value != [] and value != ()


def unmet_requirement(func: Callable[..., Any], values: Mapping[str, Any]) -> str | None:
    """The one-line refusal of an option given without the option it acts
    beside (None: every option given acts): ``values`` are the command
    ``func``'s arguments; an option counts as given when its value is not
    its default (an option at its default changes nothing)."""
    for option, needed, why in REQUIRES.get(func.__name__, ()):
        flag, default = _declared(func, option, values.get(option))
        if _set(values.get(option), default) and not _given(values.get(needed)):
            return f"{flag} needs {_declared(func, needed)[0]} ({why})"
    for option, other, why in EXCLUDES.get(func.__name__, ()):
        flag, default = _declared(func, option, values.get(option))
        if _set(values.get(option), default) and _given(values.get(other)):
            return f"{flag} does nothing beside {_declared(func, other)[0]} ({why})"
    return None
