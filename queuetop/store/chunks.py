"""Roll-up chunks: the buckets of one job type and level, each figure a column of differences from the bucket
before, compressed; ~20 bytes a bucket where a row of its own costs ~50."""

from __future__ import annotations

import sys
import zlib
from array import array
from collections.abc import Mapping, Sequence
from itertools import accumulate

from queuetop.store.model import FIGURES, Values

# -- roll-up chunks ------------------------------------------------------------------------------------------------
# A bucket row costs ~50 bytes in a table of its own (a 20-column record header and a few bytes per figure), which
# puts a week of 50 types at ~70 MB. Stored as chunks — the buckets of one job type and level, CHUNK_BUCKETS at a
# time, each figure a column of differences from the bucket before, compressed — it costs ~20.
CHUNK_BUCKETS = 64
Entry = tuple[int, Values, int | None]  # (polls, values, breaches) of one bucket


NONE = -(2**63)  # an unknown figure inside a chunk
BREACHES = -1  # `HistoryStore._column`'s index for a chunk's breach flags (the figures are 0 …)


def _deltas(column: Sequence[int | None]) -> list[int]:
    """Differences from the value before (the first from 0); None kept as NONE, skipped by the differences."""
    if None not in column:  # the usual case, without a Python loop per value
        return [b - a for a, b in zip((0, *column), column, strict=False)]
    out = []
    previous = 0
    for value in column:
        if value is None:
            out.append(NONE)
        else:
            out.append(value - previous)
            previous = value
    return out


def _sums(column: Sequence[int]) -> list[int | None]:
    if NONE not in column:
        return list(accumulate(column))
    out: list[int | None] = []
    previous = 0
    for value in column:
        if value == NONE:
            out.append(None)
        else:
            previous += value
            out.append(previous)
    return out


def encode_chunk(entries: Mapping[int, Entry]) -> bytes:
    """A chunk's buckets (slot in the chunk → entry) as compressed columns of 64-bit integers: the count, the
    slots, polls and breaches, then each figure as differences from the bucket before (a slowly changing figure
    becomes small numbers). The bytes are laid out plane by plane (every value's lowest byte first, …) before
    zlib: small numbers leave whole planes of zeros, which cost nothing."""
    slots = sorted(entries)
    numbers = array("q", [len(slots), *slots])
    numbers.extend(entries[s][0] for s in slots)
    numbers.extend(NONE if entries[s][2] is None else entries[s][2] for s in slots)
    for i in range(len(FIGURES)):
        numbers.extend(_deltas([entries[s][1][i] for s in slots]))
    if sys.byteorder == "big":
        numbers.byteswap()
    raw = numbers.tobytes()
    return zlib.compress(b"".join(raw[k::8] for k in range(8)), 6)


def _numbers(blob: bytes) -> array:
    planes = zlib.decompress(blob)
    size = len(planes) // 8
    raw = bytearray(len(planes))
    for k in range(8):
        raw[k::8] = planes[k * size:(k + 1) * size]
    numbers = array("q")
    numbers.frombytes(bytes(raw))
    if sys.byteorder == "big":
        numbers.byteswap()
    return numbers


def decode_column(blob: bytes, index: int) -> list[tuple[int, int, int | None]]:
    """One figure of a chunk: (slot, polls, value) per bucket — what a chart's line needs, without the rest."""
    numbers = _numbers(blob)
    n = numbers[0]
    values = _sums(numbers[1 + (3 + index) * n:1 + (4 + index) * n])
    return list(zip(numbers[1:1 + n], numbers[1 + n:1 + 2 * n], values, strict=True))


def decode_breaches(blob: bytes) -> list[tuple[int, int | None]]:
    """A chunk's breach flags: (slot, flags) per bucket (None: no breach in it)."""
    numbers = _numbers(blob)
    n = numbers[0]
    return [(slot, None if flags == NONE else flags) for slot, flags in zip(numbers[1:1 + n],
                                                                             numbers[1 + 2 * n:1 + 3 * n],
                                                                             strict=True)]  # fmt: skip


def decode_chunk(blob: bytes) -> dict[int, Entry]:
    numbers = _numbers(blob)
    n = numbers[0]
    slots, polls, breaches = numbers[1:1 + n], numbers[1 + n:1 + 2 * n], numbers[1 + 2 * n:1 + 3 * n]
    figures = [_sums(numbers[1 + (3 + i) * n:1 + (4 + i) * n]) for i in range(len(FIGURES))]
    return {slot: (polls[j], tuple(column[j] for column in figures), None if breaches[j] == NONE else breaches[j])
            for j, slot in enumerate(slots)}  # fmt: skip


