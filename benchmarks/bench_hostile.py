"""Hostile input through the installed ``autoparser`` with the default limits.

For each template of ``tests/analysis/template/test_hostile.py`` (and a 5 MB and a 50 MB
template), runs ``autoparser analyze`` as a subprocess and reports the exit
code, wall time and the peak memory of the command and its render worker.
Then the sandbox escapes and repr payloads of ``tests/analysis/template/test_sandbox.py``
through ``render`` (nothing runs, nothing leaks), bad files and arguments
(FIFOs, devices, a hostile GGUF, wrong requests, limits: one line, exit 2),
fuzzed outputs (parsed whole and streamed), four concurrent ``check`` runs on
one cache, Ctrl-C during a parallel ``check`` (timed), and big inputs (timed); the last line counts the failures.

    python benchmarks/bench_hostile.py            # from the checkout, venv active
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.analysis.template.test_hostile import HOSTILE

_MEASURE = (
    "import json, resource, subprocess, sys\n"
    "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "print(json.dumps([r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.stderr.strip()]))\n"
)


def main() -> None:
    command = shutil.which("autoparser") or sys.exit("autoparser is not on PATH (activate the venv)")
    with tempfile.TemporaryDirectory() as tmp:
        sources = dict(HOSTILE)
        sources["template_5mb"] = ("{{ messages }}" + "x" * 5_000_000, "")
        sources["template_50mb"] = ("{{ messages }}" + "x" * 50_000_000, "")
        print(f"{'template':<18} {'exit':>4} {'wall s':>7} {'peak MB':>8} lines  message")
        worst_time = worst_mem = 0.0
        for name, (source, _) in sources.items():
            path = Path(tmp) / f"{name}.jinja"
            path.write_text(source, encoding="utf-8")
            start = time.monotonic()
            code, peak_kb, stderr = json.loads(
                subprocess.run(
                    [sys.executable, "-c", _MEASURE, command, "analyze", str(path)], capture_output=True, text=True
                ).stdout
            )
            wall = time.monotonic() - start
            lines, message = len(stderr.splitlines()), stderr[:100]
            worst_time, worst_mem = max(worst_time, wall), max(worst_mem, peak_kb / 1024)
            print(f"{name:<18} {code:>4} {wall:7.2f} {peak_kb / 1024:8.0f} {lines:>5}  {message}")
        print(f"worst: {worst_time:.2f} s wall, {worst_mem:.0f} MB peak")
        failures = _escapes(command, Path(tmp)) + _bad_inputs(command, Path(tmp)) + _fuzzed_outputs() + _concurrency(command, Path(tmp)) + _interrupt(command, Path(tmp))
        _big_inputs(command, Path(tmp))
        print(f"{failures} failures (a failure: not one line with exit 2, a traceback, or a run past its limit)")


def _escapes(command: str, tmp: Path) -> int:
    """Sandbox escapes and object reprs: each renders harmlessly or ends in one
    line; none runs code or shows an address, a module path or a secret."""
    import re

    from tests.analysis.template.test_sandbox import PAYLOADS, REPR_PAYLOADS

    marker = tmp / "PWNED_MARKER_FILE"
    leaks = re.compile(r"0x[0-9a-f]{4,}|x0[0-9a-f]{2,}|__builtins__|subprocess|<module |jinja2\.|analysis\.", re.IGNORECASE)
    failures = 0
    start = time.monotonic()
    for i, payload in enumerate([*PAYLOADS, *REPR_PAYLOADS]):
        path = tmp / f"escape{i}.jinja"
        path.write_text(payload, encoding="utf-8")
        done = subprocess.run([command, "render", str(path)], capture_output=True, text=True, cwd=tmp, timeout=30)
        text = done.stdout + done.stderr
        bad = bool(leaks.search(text)) or (done.returncode != 0 and len(done.stderr.strip().splitlines()) != 1)
        failures += bad or marker.exists()
        if bad:
            print(f"LEAK or not one line: {payload!r}: {text[:120]!r}")
    count = len(PAYLOADS) + len(REPR_PAYLOADS)
    print(f"\n{count} sandbox escapes and repr payloads through render: {failures} failures ({time.monotonic() - start:.1f} s)")
    return failures


def _bad_inputs(command: str, tmp: Path) -> int:
    """Bad files and arguments: each must end in one line with exit 2, fast."""
    import os
    import struct

    demo = Path(__file__).resolve().parent.parent / "templates" / "demo.jinja"
    fifo = tmp / "pipe.txt"
    os.mkfifo(fifo)
    gguf = tmp / "hostile.gguf"
    gguf.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 21) + b"tokenizer.ggml.tokens" + struct.pack("<IIQ", 9, 4, 1 << 40))
    request = tmp / "request.json"
    request.write_text('{"mesages": []}')
    big_number = tmp / "number.json"
    big_number.write_text('{"messages": [], "json_schema": {"maxLength": ' + "9" * 5000 + "}}")
    case = tmp / "cases.jsonl"
    case.write_text(json.dumps({"id": "x", "template": "../../etc/passwd", "request": {}, "output": "", "expected": {}}) + "\n")
    runs = {
        "parse /dev/zero": [command, "parse", "/dev/zero"],
        "parse a FIFO": [command, "parse", str(fifo)],
        "render a FIFO": [command, "render", str(fifo)],
        "GGUF of 2^40 items": [command, "analyze", str(gguf)],
        "unknown request key": [command, "parse", "--request", str(request), str(demo)],
        "5,000-digit number": [command, "parse", "--request", str(big_number), str(demo)],
        "case outside --templates": [command, "check", "--cases", str(case), "--templates", str(tmp)],
        "missing --lock": [command, "check", str(demo), "--lock", str(tmp / "missing.lock")],
        "limit of inf": ["env", "AUTOPARSER_CPU_S=inf", command, "analyze"],
    }
    print(f"\n{'bad input':<26} {'exit':>4} {'wall s':>7} lines  message")
    failures = 0
    for name, argv in runs.items():
        start = time.monotonic()
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=20)
            code, stderr = done.returncode, done.stderr.strip()
        except subprocess.TimeoutExpired:
            code, stderr = -1, "(timed out)"
        wall = time.monotonic() - start
        failures += code != 2 or len(stderr.splitlines()) != 1 or "Traceback" in stderr
        print(f"{name:<26} {code:>4} {wall:7.2f} {len(stderr.splitlines()):>5}  {stderr[:90]}")
    return failures


def _big_inputs(command: str, tmp: Path) -> None:
    """Big inputs grow the work linearly: ``analyze --tools`` with 5,000 and
    10,000 tools, ``check --cases`` with a 0.5 MB and a 1 MB output."""
    demo = Path(__file__).resolve().parent.parent / "templates" / "demo.jinja"
    (tmp / "demo.jinja").write_text(demo.read_text())
    print()
    for count in (5_000, 10_000):
        tools = tmp / f"tools{count}.json"
        tools.write_text(json.dumps([{"type": "function", "function": {"name": f"tool_{i}", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}} for i in range(count)]))
        start = time.monotonic()
        code = subprocess.run([command, "analyze", str(demo), "--tools", str(tools), "--json"], capture_output=True).returncode
        print(f"analyze --tools with {count:,} tools: exit {code}, {time.monotonic() - start:.1f} s")
    for size in (500_000, 1_000_000):
        text = "word " * (size // 5)
        cases = tmp / f"cases{size}.jsonl"
        cases.write_text(json.dumps({"id": "big", "template": "demo.jinja", "request": {"messages": [{"role": "user", "content": "x"}]}, "output": text, "expected": {"content": text}}) + "\n")
        start = time.monotonic()
        code = subprocess.run([command, "check", "--cases", str(cases), "--templates", str(tmp)], capture_output=True).returncode
        print(f"check --cases with a {size / 1e6:.1f} MB output: exit {code}, {time.monotonic() - start:.1f} s")


def _fuzzed_outputs(count: int = 2000) -> int:
    """Random outputs of marker pieces, JSON punctuation and text, parsed whole
    and streamed in random chunks through the demo template: no exception, a
    broken format keeps the output unchanged, and every stream's deltas add up
    to its final message."""
    import random

    from analysis.generation import auto_parser
    from analysis.generation.streaming import stream_output
    from analysis.messages.mapper import Message, accumulate
    from analysis.parsers import ChatRequest
    from analysis.template import demo_template_path, load_template

    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    generated = auto_parser(load_template(demo_template_path())).generate(
        ChatRequest.from_json({"messages": [{"role": "user", "content": "x"}], "tools": tools})
    )
    pieces = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_end|>", '{"name": "get_weather", "arguments": {"city": "Paris"}}', "{", "}", '"', "\\", "\n", " ", "word", "é", "\x00", "<", "</"]
    rng = random.Random(1)
    failures = 0
    start = time.monotonic()
    for _ in range(count):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        try:
            whole = generated.parse(text)
            deltas, final, _ = stream_output(generated, text, rng.randint(1, 9))
        except Exception as exc:  # noqa: BLE001 - what the bench counts
            failures += 1
            print(f"exception on {text!r}: {exc!r}")
            continue
        broken = not whole.ok and not whole.need_more and whole.message != Message(content=text)
        failures += broken or accumulate(deltas) != final.message
    print(f"\n{count} fuzzed outputs parsed whole and streamed: {failures} failures ({time.monotonic() - start:.1f} s)")
    return failures


def _concurrency(command: str, tmp: Path) -> int:
    """Four check runs at once on one cache folder: every run passes alike."""
    import os

    folder = Path(__file__).resolve().parent.parent / "templates"
    env = dict(os.environ, AUTOPARSER_CACHE_DIR=str(tmp / "shared-cache"))
    start = time.monotonic()
    runs = [subprocess.Popen([command, "check", str(folder), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for _ in range(4)]
    outs = [run.communicate(timeout=300) for run in runs]
    summaries = {json.loads(out)["passed"] for out, _ in outs}
    failures = sum(run.returncode != 0 for run in runs) + (len(summaries) != 1)
    print(f"\n4 concurrent check runs on one cache: {time.monotonic() - start:.1f} s, exit codes {[r.returncode for r in runs]}, passed {sorted(summaries)}")
    return failures


def _interrupt(command: str, tmp: Path) -> int:
    """Ctrl-C (SIGINT to the process group) during ``check --jobs 2`` of
    templates that render until their CPU limit: the seconds to exit 130
    (a failure past 1 s; the test checks the exit, not the time)."""
    import os
    import signal

    folder = tmp / "interrupted"
    folder.mkdir()
    for i in range(6):
        (folder / f"slow{i}.jinja").write_text("{% for a in range(900) %}{% for b in range(900) %}{% for c in range(900) %}{% endfor %}{% endfor %}{% endfor %}")
    env = dict(os.environ, AUTOPARSER_NO_CACHE="1", AUTOPARSER_CPU_S="5", AUTOPARSER_TEMPLATE_CPU_S="30")
    process = subprocess.Popen([command, "check", str(folder), "--jobs", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    time.sleep(1.5)
    os.killpg(process.pid, signal.SIGINT)
    start = time.monotonic()
    process.communicate(timeout=30)
    seconds = time.monotonic() - start
    print(f"\nCtrl-C during check --jobs 2: exit {process.returncode} after {seconds:.2f} s")
    return int(process.returncode != 130 or seconds > 1.0)


if __name__ == "__main__":
    main()
