"""Shared fixtures: the read-only reference material in ../shared (optional)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

# The tests' compiled templates and analyses go to a cache of their own, never
# the user's: one folder per checkout under the system's temporary folder, kept
# between runs (an entry is keyed by the code's fingerprint, the size and time of
# every module, so an edit never reads a stale one; a run of the fast loop after
# the first reads its analyses back), shared by a run's processes.
if "AUTOPARSER_TEST_CACHE_DIR" not in os.environ:
    _checkout = hashlib.sha256(str(Path(__file__).resolve().parent).encode()).hexdigest()[:12]
    _cache = Path(tempfile.gettempdir()) / f"autoparser-test-cache-{_checkout}"
    _cache.mkdir(exist_ok=True)
    os.environ["AUTOPARSER_TEST_CACHE_DIR"] = str(_cache)
os.environ["AUTOPARSER_CACHE_DIR"] = os.environ["AUTOPARSER_TEST_CACHE_DIR"]
os.environ.pop("AUTOPARSER_NO_CACHE", None)

# Hypothesis profiles, chosen by AUTOPARSER_HYPOTHESIS_PROFILE:
# - "dev" (the default outside CI): quick, a tenth of each test's examples
#   (at least 10), drawn at random; a failure prints the seed that reproduces it;
# - "ci" (the default when the CI variable is set, as .ci/run and CI services
#   do): every example, derived from each test, not drawn at random, so a run
#   repeats (no example database);
# - "full": every example, drawn at random.
# A test asks for its count through examples(n), which the profile scales.
from hypothesis import settings as _hypothesis_settings

# pytest keeps the test modules it rewrote for their assertions in __pycache__ (a
# run after the first reads them back: a few seconds of each worker's collection),
# also where the environment asks Python to write no bytecode
sys.dont_write_bytecode = False

HYPOTHESIS_PROFILES = {"dev": 0.1, "ci": 1.0, "full": 1.0}
_hypothesis_settings.register_profile("dev", deadline=None, derandomize=False)
_hypothesis_settings.register_profile("ci", derandomize=True, database=None, print_blob=True, deadline=None)
_hypothesis_settings.register_profile("full", deadline=None, derandomize=False)
HYPOTHESIS_PROFILE = os.environ.get("AUTOPARSER_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
if HYPOTHESIS_PROFILE not in HYPOTHESIS_PROFILES:
    raise pytest.UsageError(f"AUTOPARSER_HYPOTHESIS_PROFILE={HYPOTHESIS_PROFILE!r}: expected one of {', '.join(HYPOTHESIS_PROFILES)}")
_hypothesis_settings.load_profile(HYPOTHESIS_PROFILE)


def examples(count: int) -> int:
    """A property test's example count under the current Hypothesis profile
    (``dev``: a tenth, at least 10)."""
    return min(count, max(10, round(count * HYPOTHESIS_PROFILES[HYPOTHESIS_PROFILE])))

#: the CPU limit runaway tests run under (seconds; short, so the suite stays
#: fast; AUTOPARSER_TEST_RUNAWAY_CPU_S changes it, for a slow machine)
RUNAWAY_CPU_S = float(os.environ.get("AUTOPARSER_TEST_RUNAWAY_CPU_S", "0.3"))

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
#: deliberate differences from the reference corpus, with reasons (``check --known-failures``)
SHARED_KNOWN_FAILURES = TESTS / "shared-known-failures.json"
#: the templates-more templates not read, with reasons
MORE_KNOWN_FAILURES = TESTS / "templates-more-known-failures.json"
SHARED = ROOT.parent / "shared"
ZOO = SHARED / "templates"
PROJECT_TEMPLATES = ROOT / "templates"

needs_shared = pytest.mark.skipif(not ZOO.is_dir(), reason="../shared is absent")
#: the gguf extra (gguf and numpy): the tests that write .gguf files skip without it
needs_gguf = pytest.mark.skipif(
    importlib.util.find_spec("gguf") is None or importlib.util.find_spec("numpy") is None,
    reason="the gguf extra is absent (pip install '.[gguf]')",
)


@pytest.fixture
def runaway_limits(monkeypatch: pytest.MonkeyPatch) -> float:
    """Short CPU limits for a test whose template runs away, in the environment
    too (for commands run by the test); the per-render limit is returned."""
    monkeypatch.setenv("AUTOPARSER_CPU_S", str(RUNAWAY_CPU_S))
    monkeypatch.setenv("AUTOPARSER_TEMPLATE_CPU_S", str(3 * RUNAWAY_CPU_S))
    return RUNAWAY_CPU_S


def zoo_templates() -> list[Path]:
    return sorted(ZOO.glob("*.jinja")) if ZOO.is_dir() else []


def reference_analysis() -> list[dict]:
    path = SHARED / "reference" / "analysis.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def reference_constrained_part(case: dict[str, Any], output: str) -> str | None:
    """What the reference's grammar constrains in ``output`` (its triggers as
    llama.cpp applies them: a word at its first occurrence after the reasoning,
    a pattern at the first prefix of the output it matches, from its group)."""
    ref = case["reference"]
    if not ref["grammar_lazy"]:
        return ref["generation_prompt"] + output
    reasoning = (case["expected"].get("reasoning_content") or "").strip()
    start = output.find(reasoning) + len(reasoning) if reasoning and reasoning in output else 0
    found = []
    for trigger in ref["grammar_triggers"]:
        if trigger["type"] == 1:
            k = output.find(trigger["value"], start)
            if k >= 0:
                found.append(k)
        else:
            pattern = re.compile(trigger["value"])
            for end in range(start + 1, len(output) + 1):
                match = pattern.search(output, start, end)
                if match:
                    found.append(match.start(1) if pattern.groups else match.start())
                    break
    return output[min(found):] if found else None


#: A weather tool with a required string, an enum and an integer (closed to other names).
WEATHER_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                    "days": {"type": "integer"},
                },
                "required": ["city"],
                "additionalProperties": False,
            },
        },
    }
]
