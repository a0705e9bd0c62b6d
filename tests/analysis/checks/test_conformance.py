"""The shared conformance corpus, three ways per case.

parse, stream and grammar, as ``analysis.checks.conformance`` defines them (the same
code ``autoparser check --cases`` runs).

The 199 cases of templates the differential analysis handles and the 149 of
templates a dedicated handler owns (``specialized`` in the reference analysis)
are counted apart.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from analysis.checks.conformance import CaseRunner
from analysis.generation.generated import Generated
from analysis.generation.grammar_check import constrained_text
from analysis.generation.streaming import StreamParser
from analysis.messages.mapper import accumulate
from analysis.parsers.request import ChatRequest
from peg.gbnf_reader import read_gbnf
from peg.status import Status
from tests.conftest import SHARED, SHARED_KNOWN_FAILURES, ZOO, needs_shared, reference_analysis
from tests.reading import keeps_its_text

#: the zoo-wide and fuzzing runs: left out of the fast loop (pytest -m 'not slow')
pytestmark = pytest.mark.slow

CASES_FILE = SHARED / "conformance" / "cases.jsonl"
SPECIALIZED = {row["template"] for row in reference_analysis() if row.get("specialized")}
CASES = (
    [json.loads(line) for line in CASES_FILE.read_text().splitlines() if line.strip()] if CASES_FILE.is_file() else []
)
OURS = [c for c in CASES if c["template"] not in SPECIALIZED]
DEDICATED = [c for c in CASES if c["template"] in SPECIALIZED]

#: case id -> (check that fails, cause).  Each is a deliberate difference; the
#: list lives in tests/shared-known-failures.json (``check --known-failures``
#: reads the same file), as {"id": "check: cause"}.
KNOWN_FAILURES: dict[str, tuple[str, str]] = {
    key: tuple(reason.split(": ", 1))  # type: ignore[misc]
    for key, reason in json.loads(SHARED_KNOWN_FAILURES.read_text()).items()
    if "#" in key  # case ids (the file also lists the broken template)
}


RUNNER = CaseRunner(ZOO)


def run_case(case: dict[str, Any]) -> dict[str, str]:
    """Each check's failure reason (absent when it passed)."""
    return {f.check: f.reason for f in RUNNER.run(case)}


def _generated(case: dict[str, Any]) -> Generated:
    return RUNNER.parser_for(case["template"]).generate(ChatRequest.from_json(case["request"]))


@needs_shared
@pytest.mark.parametrize("case", OURS + DEDICATED, ids=[c["id"] for c in OURS + DEDICATED])
def test_case(case: dict[str, Any]) -> None:
    failures = {k: v for k, v in run_case(case).items() if v}
    known = KNOWN_FAILURES.get(case["id"])
    if known:
        assert set(failures) == {known[0]}, failures
    else:
        assert not failures, failures


@needs_shared
def test_the_corpus_and_its_known_failures() -> None:
    """``test_case`` runs each case once (so test processes never repeat one):
    199 cases of templates the generic analysis handles and 149 of the 13 with
    dedicated handlers; every case it lets fail is listed, with its cause, and
    each listed one exists (so 343 of the 348 pass)."""
    assert (len(OURS), len(DEDICATED)) == (199, 149)
    assert len({c["template"] for c in DEDICATED}) == 13
    ids = {c["id"] for c in CASES}
    assert set(KNOWN_FAILURES) <= ids and len(KNOWN_FAILURES) == 5


@needs_shared
def test_grammar_rejects_a_wrong_tool_name() -> None:
    """The grammar check can fail: a call to an undeclared function is rejected."""
    case = next(c for c in OURS if c["id"] == "Qwen3-Coder#02")
    generated = _generated(case)
    text = constrained_text(generated, case["output"].replace("special_function", "unknown_function"))
    assert text is not None
    assert read_gbnf(generated.grammar).match(text).status is Status.FAILURE


#: what the fuzz inserts: whitespace, marker pieces, JSON and string punctuation
FRAGMENTS = [" ", "\n", "\n\n", "\r\n", "  \n", "<", "</", "<b>", "[", "]", "{", "}", '"', "\\", "x", "word ", "é"]


@needs_shared
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_streaming_matches_prefix_parses_on_fuzzed_outputs(seed: int) -> None:
    """Each case's output with a random run of fragments inserted somewhere, fed
    in random chunks.  Whenever the output still fits (the final parse succeeds
    with no warning), the streamed message at random points equals a partial
    parse of that prefix, and the deltas add up to the final message; when it is
    cut short, the deltas add up to what the final parse reports; when it does
    not fit, a whole parse keeps the output unchanged and the stream's deltas
    add up to its own final message (what it showed, then the rest).  The
    stream shows open arguments, as a partial parse does (the default stream
    holds such a call until they close: the fuzz tests of real outputs check it)."""
    rng = random.Random(seed)
    fitting = mismatches = 0
    for case in CASES:
        if case["partial"]:
            continue
        generated = _generated(case)
        out = case["output"]
        pos = rng.randint(0, len(out))
        text = out[:pos] + "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 40))) * rng.randint(1, 20) + out[pos:]
        stream, deltas, seen, i = StreamParser(generated, show_open_arguments=True), [], [], 0
        while i < len(text):
            size = rng.randint(1, 9)
            deltas += stream.feed(text[i : i + size])
            i += size
            if rng.random() < 0.15:
                seen.append((i, accumulate(deltas)))
        final, outcome = stream.finish()
        if not outcome.ok and outcome.need_more:  # cut short: what the stream showed, reported
            assert accumulate(deltas + final) == outcome.message, case["id"]
            continue
        if not outcome.ok:
            # the whole output reads otherwise than the stream showed (a broken
            # format: a whole parse keeps the output unchanged): the stream keeps
            # what it showed and ends with the rest of the output
            whole = generated.parse(text)
            assert whole.ok or keeps_its_text(whole, text), case["id"]
            assert accumulate(deltas + final) == outcome.message, case["id"]
            continue
        if stream.warning:
            continue
        fitting += 1
        assert accumulate(deltas + final) == outcome.message, case["id"]
        for at, message in seen:
            if message != generated.parse(text[:at], partial=True).message:
                mismatches += 1
    assert fitting > 150 and mismatches == 0, (fitting, mismatches)


#: case id -> why our generation prompt differs from the reference's
PROMPT_DIFFERENCES = {
    "NVIDIA-Nemotron-Nano-v2#02": "the reference writes the continued reasoning with its start marker '<think>\\n\\n' after the "
    "template's own '<think>\\n'; ours reuses the opened block",
    "openai-gpt-oss-120b#17": "reasoning the template leaves out is written with the analysed markers; harmony also needs "
    "'<|start|>assistant' before the final channel, which the reference writes and we do not",
}


@needs_shared
def test_generation_prompts_match_the_reference() -> None:
    """The generation prompt (what the template appends, or the continued text)
    equals the reference's for every case but the listed differences."""
    differ = {
        case["id"]
        for case in CASES
        if _generated(case).generation_prompt != case["reference"]["generation_prompt"]
    }
    assert differ == set(PROMPT_DIFFERENCES), differ ^ set(PROMPT_DIFFERENCES)
