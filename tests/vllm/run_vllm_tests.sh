#!/usr/bin/env bash
# The vLLM-bound tests of the autoparser plugin (tests/vllm/test_vllm_*.py),
# against vLLM 0.33.0, in a virtual environment of their own (vLLM pulls
# torch: it never goes into the project's own environment). CPU only: vLLM's
# parsers import and run without a GPU, so the GPU-only kernels vLLM lists
# (flashinfer, tilelang, CUDA video codecs...) are left out.
#
#   bash tests/vllm/run_vllm_tests.sh [VENV]      # default VENV: /tmp/autoparser-vllm-venv
#
# Then: the differential tests against vLLM's own parsers, the plugin through
# ParserManager as serving drives it, and the response_template route; and a
# summary of the comparison (cases, agreements, differences). .ci/run does not
# run this script.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="${1:-/tmp/autoparser-vllm-venv}"
VLLM_VERSION="0.33.0"

if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip install -q --disable-pip-version-check)

if ! "$VENV/bin/python" -c "import vllm, sys; sys.exit(vllm.__version__ != '$VLLM_VERSION')" 2>/dev/null; then
    WHEELS="$(mktemp -d)"
    "$VENV/bin/python" -m pip download -q --disable-pip-version-check --no-deps -d "$WHEELS" "vllm==$VLLM_VERSION"
    "${PIP[@]}" --no-deps "$WHEELS"/vllm-*.whl
    # vLLM's own requirements, read from its wheel, less the GPU-only ones
    "$VENV/bin/python" - "$WHEELS/requirements.txt" <<'EOF'
import re
import sys
from importlib.metadata import distribution

try:
    from packaging.requirements import Requirement
except ImportError:  # a fresh virtual environment: pip's own copy
    from pip._vendor.packaging.requirements import Requirement

gpu_only = re.compile(r"^(flashinfer|tilelang|nvidia|pynvvideocodec|quack-kernels|tokenspeed|humming-kernels|torchaudio|torchvision|torchcodec|fastsafetensors|instanttensor|apache-tvm-ffi|nvtx)", re.I)
lines = []
for text in distribution("vllm").requires or []:
    req = Requirement(text)
    if gpu_only.match(req.name) or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
        continue  # a GPU-only kernel, an extra's, or another platform's
    req.marker = None
    lines.append(str(req))
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
EOF
    "${PIP[@]}" -r "$WHEELS/requirements.txt"
    rm -rf "$WHEELS"
fi

# the project (its own dependencies only: the test extra pins a transformers vLLM 0.33 does not take) and pytest
"${PIP[@]}" -e "$ROOT"
"${PIP[@]}" pytest pytest-xdist pytest-benchmark hypothesis

cd "$ROOT"
# vLLM must import here: the tests skip without it, and a run that skips them proves nothing
"$VENV/bin/python" -c "import vllm.parser.parser_manager, autoparser_vllm.vllm_parsers" 2>/dev/null \
    || { echo "run_vllm_tests: vLLM $VLLM_VERSION does not import in $VENV" >&2; exit 2; }
"$VENV/bin/python" -m pytest -q -n 0 -p no:cacheprovider tests/vllm
"$VENV/bin/python" -m tests.vllm.test_vllm_differential
