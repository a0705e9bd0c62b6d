"""Capability detection details not covered by the zoo comparison."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor

from analysis.probing.caps import detect_capabilities
from analysis.template.loading import LoadedTemplate
from analysis.template.rendering import ChatTemplate

TYPED = "{% for m in messages %}{{ m.content[0] }}{% endfor %}"
PLAIN = "{% for m in messages %}{{ m.content }}{% endfor %}"


def compiled(source: str) -> ChatTemplate:
    return ChatTemplate(LoadedTemplate(name="inline.jinja", source=source))


def test_typed_content_is_the_template_indexing_content() -> None:
    assert detect_capabilities(compiled(TYPED)).supports_typed_content is True
    assert detect_capabilities(compiled(PLAIN)).supports_typed_content is False


def test_typed_content_detection_is_safe_in_threads() -> None:
    """Each detection tracks its own probe (a server may analyse templates in threads)."""
    sources = [TYPED, PLAIN] * 40
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            flags = list(pool.map(lambda s: detect_capabilities(compiled(s)).supports_typed_content, sources))
    finally:
        sys.setswitchinterval(old)
    assert flags == [s is TYPED for s in sources]
