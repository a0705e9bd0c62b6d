"""Start-up, cold and warm analysis, and generation from a cached analysis.

- start-up: the installed ``autoparser --version`` and ``--help`` (median of 21);
- per zoo template (``../shared/templates``), the installed command
  ``autoparser analyze T --json`` with an empty cache folder (cold) and again
  (warm: compiled template and analysis from the disk cache);
- in-process, per template: analysis + generation from scratch, and from the
  disk cache as a new process would (memory cleared): compile from the cached
  code, analysis from the cache, then generation for a one-message request
  with a tool.

    python benchmarks/bench_cli.py [N]      # from the checkout, venv active; N templates (default all)
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
ZOO = ROOT.parent / "shared" / "templates"

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


def wall(command: list[str], env: dict[str, str]) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, done.returncode


def quantiles(values: list[float]) -> str:
    values = sorted(values)
    p90 = values[min(len(values) - 1, int(len(values) * 0.9))]
    return f"median {statistics.median(values) * 1000:6.1f} ms, p90 {p90 * 1000:6.1f} ms, max {values[-1] * 1000:6.1f} ms"


def startup(command: str) -> None:
    env = dict(os.environ)
    for args in (["--version"], ["--help"], ["parse", "--help"]):
        times = sorted(wall([command, *args], env)[0] for _ in range(21))
        print(f"autoparser {' '.join(args):<14} median {statistics.median(times) * 1000:5.0f} ms, min {times[0] * 1000:5.0f} ms")


def command_line(command: str, templates: list[Path]) -> None:
    cold, warm = [], []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, AUTOPARSER_CACHE_DIR=tmp)
        env.pop("AUTOPARSER_NO_CACHE", None)
        for path in templates:
            first, code = wall([command, "analyze", str(path), "--json"], env)
            second, code2 = wall([command, "analyze", str(path), "--json"], env)
            if code == code2 == 0:
                cold.append(first)
                warm.append(second)
    print(f"analyze, command line, {len(cold)} templates:")
    print(f"  cold (empty cache)  {quantiles(cold)}")
    print(f"  warm (from cache)   {quantiles(warm)}")


def in_process(templates: list[Path]) -> None:
    from analysis import disk_cache
    from analysis.generation.analysis_cache import _CACHE, cached_analysis
    from analysis.generation.generator import AutoParser
    from analysis.parsers.request import ChatRequest
    from analysis.template.loading import load_template
    from analysis.template.render_worker import worker
    from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate

    request = ChatRequest.from_json({"messages": [{"role": "user", "content": "Hello"}], "tools": TOOLS})
    cold, warm, generate_only = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ[disk_cache.ENV_DIR] = tmp
        for path in templates:
            loaded = load_template(path)
            try:
                start = time.perf_counter()
                AutoParser(ChatTemplate(loaded, clock=FROZEN_CLOCK)).generate(request).grammar  # noqa: B018 - made on use
                cold.append(time.perf_counter() - start)
            except Exception:  # noqa: BLE001 - a template this tool cannot analyse is left out
                continue
            _CACHE.clear()
            worker().close()  # a new process: the worker holds no compiled template
            start = time.perf_counter()
            template = ChatTemplate(loaded, clock=FROZEN_CLOCK)
            parser = AutoParser(template, cached_analysis(template))
            middle = time.perf_counter()
            parser.generate(request).grammar  # noqa: B018 - the grammar is made on first use
            end = time.perf_counter()
            warm.append(end - start)
            generate_only.append(end - middle)
    print(f"in process, {len(cold)} templates (analysis + generation for one request with a tool):")
    print(f"  from scratch        {quantiles(cold)}")
    print(f"  from the disk cache {quantiles(warm)}")
    print(f"  generation alone    {quantiles(generate_only)}  (prompt, parser and grammar)")


def main() -> None:
    command = shutil.which("autoparser") or sys.exit("autoparser is not on PATH (activate the venv)")
    if not ZOO.is_dir():
        sys.exit(f"{ZOO} is absent")
    templates = sorted(ZOO.glob("*.jinja"))
    if len(sys.argv) > 1:
        templates = templates[: int(sys.argv[1])]
    startup(command)
    command_line(command, templates)
    in_process(templates)


if __name__ == "__main__":
    main()
