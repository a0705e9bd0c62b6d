"""The ``render`` command: a template rendered with a conversation."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import typer

from analysis.fixtures import SCENARIOS
from autoparser_cli.common import (
    fail,
    handle_errors,
    note,
    parse_kwargs,
    read_json_file,
    source_or_default,
    write_stdout,
)
from autoparser_cli.options import SourceArg, ToolsOpt, VariantOpt


@handle_errors
def render(
    source: Path | None = SourceArg,
    messages: Path | None = typer.Option(None, "--messages", metavar="FILE", help="JSON file: list of messages."),
    tools: Path | None = ToolsOpt,
    add_generation_prompt: bool = typer.Option(
        True, "--add-generation-prompt/--no-add-generation-prompt", help="Append the assistant prompt."
    ),
    enable_thinking: bool | None = typer.Option(
        None, "--enable-thinking/--no-enable-thinking", help="Pass enable_thinking to the template."
    ),
    kwarg: list[str] | None = typer.Option(None, "--kwarg", metavar="KEY=JSON", help="Extra variable key=json (repeatable)."),
    scenario: str | None = typer.Option(
        None,
        "--scenario", metavar="NAME",
        help="A built-in one-exchange conversation: " + " | ".join([*SCENARIOS, "all"]) + " (instead of --messages).",
    ),
    variant: str | None = VariantOpt,
    bos_token: str | None = typer.Option(None, "--bos-token", metavar="TEXT", help="bos_token (default: the source's; a .jinja file has none)."),
    eos_token: str | None = typer.Option(None, "--eos-token", metavar="TEXT", help="eos_token (default: the source's; a .jinja file has none)."),
    adapt: bool = typer.Option(
        False, "--adapt", help="When the template rejects --messages, adapt them to its capabilities and render again."
    ),
) -> None:
    """Render a template with a conversation and print the prompt exactly.

    Without --messages or --scenario: a built-in conversation with a tool call.
    --messages render exactly as given: a template that rejects them is an
    error with the template's own message, unless --adapt is given. The
    built-in conversations (and --messages with --adapt), when the template
    rejects them, are adapted to the template's capabilities (system turn
    merged into the first user turn, ...) and rendered again; stderr says so,
    with the template's own error.

    Example: autoparser render templates/demo.jinja --scenario all
    """
    from analysis.fixtures import FULL_CONVERSATION, WEATHER_TOOL
    from analysis.probing import render_adapted, tokens_written
    from analysis.template import RENDER_ARGUMENTS, ChatTemplate, RenderRequest, load_template
    from analysis.userio import validate_tools

    if scenario is not None and messages is not None:
        raise fail("give --messages or --scenario, not both")
    if scenario is not None and scenario != "all" and scenario not in SCENARIOS:
        raise fail(f"--scenario {scenario!r}: expected one of {', '.join([*SCENARIOS, 'all'])}")
    msgs = read_json_file(messages, "messages")
    tool_list = validate_tools(read_json_file(tools, "tools"), str(tools))
    if msgs is None and tool_list is None:
        tool_list = [WEATHER_TOOL]
    if msgs is None:
        msgs = FULL_CONVERSATION
    else:
        from analysis.userio import validate_messages

        msgs = validate_messages(msgs, str(messages))
    loaded = load_template(source_or_default(source), variant, has_tools=bool(tool_list))
    loaded = dataclasses.replace(
        loaded,
        bos_token=loaded.bos_token if bos_token is None else bos_token,
        eos_token=loaded.eos_token if eos_token is None else eos_token,
    )
    template = ChatTemplate(loaded)
    extra = parse_kwargs(kwarg)
    reserved = sorted(set(extra) & RENDER_ARGUMENTS)
    if reserved:
        raise fail(f"--kwarg {reserved[0]}: that is a render argument, given by its own option (--messages, --tools, ...)")
    exact = messages is not None and not adapt  # (the user's own conversation, as given)
    names = list(SCENARIOS) if scenario == "all" else [scenario] if scenario else [None]
    texts = []
    for name in names:
        conversation = SCENARIOS[name] if name else msgs
        label = f"scenario {name}: " if name else ""
        render_request = RenderRequest(
            messages=conversation,
            tools=tool_list,
            add_generation_prompt=add_generation_prompt,
            enable_thinking=enable_thinking,
            extra=extra,
        )
        if exact:
            text = template.render(render_request)
        else:
            text = render_adapted(template, render_request, on_adapt=functools.partial(_adapted_note, label))
        texts.append(f"── {name} ──\n{text}\n" if scenario == "all" else text)
    write_stdout("".join(texts))
    unset = [name for name in ("bos_token", "eos_token") if not getattr(loaded, name)]
    if unset:
        read = tokens_written(template, unset, RenderRequest(conversation, tool_list, add_generation_prompt, enable_thinking, extra))
        if read:
            options = ", ".join("--" + name.replace("_", "-") for name in read)
            note(f"the template writes {' and '.join(read)}, which the source does not give: rendered empty (give {options})")


def _adapted_note(label: str, error: str) -> None:
    note(f"{label}the template rejected the conversation ({error}); rendered it adapted to the template's capabilities")
