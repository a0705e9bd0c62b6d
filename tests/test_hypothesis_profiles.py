"""The Hypothesis profiles, chosen by AUTOPARSER_HYPOTHESIS_PROFILE: "dev"
(quick: a tenth of the examples, random; the default outside CI), "ci"
(every example, derandomized; the default with CI set), "full"."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

PROBE = (
    "import json; from hypothesis import settings; import tests.conftest as c; "
    "s = settings.default; print(json.dumps([c.HYPOTHESIS_PROFILE, s.derandomize, s.database is None, c.examples(1000), c.examples(6)]))"
)


def _profile(**env: str) -> list[object]:
    clean = {k: v for k, v in os.environ.items() if k not in ("CI", "AUTOPARSER_HYPOTHESIS_PROFILE")}
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True, check=True)
    return list(json.loads(done.stdout))


@pytest.mark.parametrize(
    "env, expected",
    [
        # (a Python process each: not the fast loop's)
        pytest.param({"CI": "1"}, ["ci", True, True, 1000, 6], marks=pytest.mark.slow),
        pytest.param({}, ["dev", False, False, 100, 6], marks=pytest.mark.slow),
        pytest.param({"AUTOPARSER_HYPOTHESIS_PROFILE": "ci"}, ["ci", True, True, 1000, 6], marks=pytest.mark.slow),
        pytest.param(
            {"CI": "1", "AUTOPARSER_HYPOTHESIS_PROFILE": "dev"}, ["dev", False, True, 100, 6], marks=pytest.mark.slow
        ),  # (Hypothesis keeps no database under CI)
        pytest.param({"AUTOPARSER_HYPOTHESIS_PROFILE": "full"}, ["full", False, False, 1000, 6], marks=pytest.mark.slow),
    ],
)
def test_the_profile_is_chosen_by_the_environment(env: dict[str, str], expected: list[object]) -> None:
    assert _profile(**env) == expected


@pytest.mark.slow  # (a Python run of its own: not the fast loop's)
def test_an_unknown_profile_is_refused() -> None:
    with pytest.raises(subprocess.CalledProcessError) as caught:
        _profile(AUTOPARSER_HYPOTHESIS_PROFILE="fast")
    assert "expected one of dev, ci, full" in caught.value.stderr
