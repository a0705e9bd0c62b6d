"""A bounds check of a GGUF file's layout before any GGUF reader allocates for it.

A GGUF header declares counts and lengths (metadata pairs, strings, arrays,
tensor dimensions) that a reader turns into allocations.  A 262-byte file can
declare an array of 2^40 items.  :func:`check_gguf_layout` walks the header,
the metadata and the tensor descriptions with small reads, checking every
count times its items' smallest size against the bytes left in the file, so
that a corrupt or hostile file fails with one line naming the place instead of
exhausting memory.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

from analysis.errors import TemplateLoadError

#: the fixed size of each scalar value type (GGUF's numbering)
_SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9
#: how deep arrays may nest in arrays (the format allows it; models use none)
_MAX_ARRAY_DEPTH = 4
#: a tensor's dimensions (ggml has at most 4)
_MAX_DIMS = 8


class _Walker:
    def __init__(self, handle: BinaryIO, size: int, path: Path) -> None:
        self.handle, self.size, self.path = handle, size, path

    def fail(self, what: str, at: int | None = None) -> TemplateLoadError:
        """The error for what is wrong at byte ``at`` (default: where reading is)."""
        at = self.handle.tell() if at is None else at
        return TemplateLoadError(f"{self.path}: not a GGUF file we can read: {what} (at byte {at:,})")

    def left(self) -> int:
        return self.size - self.handle.tell()

    def read(self, n: int) -> bytes:
        if n > self.left():
            raise self.fail(f"needs {n:,} bytes, the file holds {self.left():,} more: truncated or corrupt")
        return self.handle.read(n)

    def u32(self) -> int:
        return int(struct.unpack("<I", self.read(4))[0])

    def u64(self) -> int:
        return int(struct.unpack("<Q", self.read(8))[0])

    def need(self, count: int, item_size: int, what: str) -> None:
        if count * item_size > self.left():
            declared = f"a string of {count:,} bytes" if item_size == 1 else f"{count:,} items of at least {item_size} bytes"
            raise self.fail(f"{what} declares {declared}, the file holds {self.left():,} more: truncated or corrupt")

    def skip(self, n: int) -> None:
        if n > self.left():
            raise self.fail(f"needs {n:,} bytes, the file holds {self.left():,} more: truncated or corrupt")
        self.handle.seek(n, 1)

    def string(self, what: str) -> None:
        length = self.u64()
        self.need(length, 1, what)
        self.skip(length)

    def value(self, kind: int, what: str, depth: int = 0) -> None:
        if kind in _SCALAR_SIZES:
            self.skip(_SCALAR_SIZES[kind])
        elif kind == _STRING:
            self.string(what)
        elif kind == _ARRAY:
            if depth >= _MAX_ARRAY_DEPTH:
                raise self.fail(f"{what}: arrays nested deeper than {_MAX_ARRAY_DEPTH}")
            item, count = self.u32(), self.u64()
            smallest = _SCALAR_SIZES.get(item, 8 if item == _STRING else 12)
            self.need(count, smallest, what)
            if item in _SCALAR_SIZES:
                self.skip(count * smallest)
            else:
                for _ in range(count):
                    self.value(item, what, depth + 1)
        else:
            raise self.fail(f"{what}: unknown value type {kind}")


def check_gguf_layout(path: Path) -> None:
    """Raise :class:`TemplateLoadError` unless ``path``'s header, metadata and
    tensor descriptions fit in the file (see the module docstring)."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        walker = _Walker(handle, size, path)
        if walker.read(4) != b"GGUF":
            raise walker.fail("no GGUF magic", at=0)  # (the first 4 bytes)
        version = walker.u32()
        if version not in (2, 3):
            raise walker.fail(f"GGUF version {version} (2 and 3 are read)", at=4)
        tensors, pairs = walker.u64(), walker.u64()
        walker.need(pairs, 8 + 4 + 1, "the metadata")
        for _ in range(pairs):
            length = walker.u64()
            walker.need(length, 1, "a metadata key")
            key = walker.read(length).decode("utf-8", "replace")
            walker.value(walker.u32(), f"metadata {key[:80]}")
        walker.need(tensors, 8 + 4 + 4 + 8, "the tensor descriptions")
        for _ in range(tensors):
            walker.string("a tensor name")
            dims = walker.u32()
            if dims > _MAX_DIMS:
                raise walker.fail(f"a tensor of {dims:,} dimensions")
            walker.skip(8 * dims + 4 + 8)
