"""Analyses computed once per template: the last :data:`CACHE_SIZE` in memory,
and those of templates rendered with the frozen clock in the disk cache."""

from __future__ import annotations

import pickle
from collections import OrderedDict
from pathlib import Path

from analysis import disk_cache
from analysis.phases.result import TemplateAnalysis
from analysis.template.rendering import FROZEN_CLOCK, ChatTemplate

#: analyses kept by :func:`cached_analysis` (the least recently used goes first)
CACHE_SIZE = 128
_CACHE: OrderedDict[str, TemplateAnalysis] = OrderedDict()


def cached_analysis(template: ChatTemplate, enable_thinking: bool = True) -> TemplateAnalysis:
    """The template's analysis, computed once per template source (and name,
    bos/eos, limits and ``enable_thinking``): the last :data:`CACHE_SIZE` are
    kept in memory and, for templates rendered with the frozen clock, in the
    disk cache (:mod:`analysis.disk_cache`; analyses with degraded phases are
    not written there, as a phase may have degraded by a CPU limit)."""
    t = template.loaded
    key = disk_cache.entry_key(
        "analysis", t.source, t.bos_token, t.eos_token, t.name, str(enable_thinking), repr(template.limits)
    )
    found = _CACHE.get(key)
    if found is not None:
        _CACHE.move_to_end(key)
        return found
    # the real clock puts the day's date in prompts: only the frozen one is kept
    folder = disk_cache.cache_dir() if template.clock is FROZEN_CLOCK else None
    analysis = _disk_analysis(key, folder)
    if analysis is None:
        from analysis.generation.analyzer import analyze_template  # the phases: only on a miss

        analysis = analyze_template(template, enable_thinking)
        if not analysis.degraded:
            disk_cache.store("analysis", key, pickle.dumps(analysis, pickle.HIGHEST_PROTOCOL), folder)
    _CACHE[key] = analysis
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return analysis


def _disk_analysis(key: str, folder: Path | None) -> TemplateAnalysis | None:
    data = disk_cache.load("analysis", key, folder)
    if data is None:
        return None
    try:
        found = pickle.loads(data)
    except Exception:  # noqa: BLE001 - any unreadable entry is a miss
        found = None
    if not isinstance(found, TemplateAnalysis):
        disk_cache.forget("analysis", key, folder)
        return None
    return found
