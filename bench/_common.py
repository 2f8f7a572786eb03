"""Shared helpers of the benchmarks: medians, tables, the machine line, a trivial agent.

Every benchmark measures its subject and its baseline in the same run,
interleaved, and prints the ratio last. Nothing here is timed itself.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent

TRIVIAL_AGENT = '''\
"""A trivial agent for the benchmarks: one recorded action per tick, never stuck."""


def word(n):
    # Letters, not digits: near_repeat and recurring mask numbers, so a counter in the call is
    # "the same call with only a number changed", and a trivial agent must look like fresh work.
    text = ""
    while True:
        n, r = divmod(n, 26)
        text = "abcdefghijklmnopqrstuvwxyz"[r] + text
        if n == 0:
            return text


def step(ctx):
    ctx.record("noop", {"q": word(ctx.tick)}, output=f"results for the query {word(ctx.tick)}")
'''


def _word(n: int) -> str:
    """``n`` spelt in letters (a, b, ..., ba, bb, ...): fresh text that no detector masks as a number."""
    letters = ""
    while True:
        n, digit = divmod(n, 26)
        letters = chr(97 + digit) + letters
        if n == 0:
            return letters


def trivial_step(ctx: Any) -> None:
    """The in-process trivial step: one ``ctx.record`` with fresh arguments and a fresh answer.

    Fresh in words, not numbers: detection v2 calls a run of calls that differ
    only in numbers paging (``near_repeat``), and this step must stay healthy.
    """
    word = _word(ctx.tick)
    ctx.record("noop", {"topic": word}, output=f"results about {word} for the query")


def count(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``minimum`` (else argparse's one-line error)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, not {value}")
        return value

    return parse


def median(values: Sequence[float]) -> float:
    """The median of a non-empty sequence."""
    return statistics.median(values)


def quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) by nearest rank; fine for the sample sizes used here."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def us(seconds: float) -> str:
    """Seconds as microseconds, right-aligned for tables."""
    return f"{seconds * 1e6:,.1f}"


def ms(seconds: float) -> str:
    """Seconds as milliseconds."""
    return f"{seconds * 1e3:,.1f}"


def human_bytes(n: float) -> str:
    """A byte count as B / KB / MB (powers of 1000, like `ls -l --si`)."""
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:,.1f} GB"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], title: str | None = None) -> None:
    """Print a plain-text table: first column left-aligned, the others right-aligned."""
    cells = [[str(h) for h in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        parts = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        return "  ".join(parts).rstrip()

    if title:
        print(f"\n{title}")
    print(line(cells[0]))
    print("  ".join("-" * w for w in widths))
    for row in cells[1:]:
        print(line(row))


def machine() -> str:
    """One line saying where the numbers come from."""
    return (
        f"python {platform.python_version()} on {platform.system()} {platform.release()}, "
        f"{os.cpu_count()} CPU(s), {sys.executable}"
    )


def verdict(ratio: float, target: float) -> str:
    """'met' or 'MISSED' for a ratio that must stay at or under ``target``."""
    return f"target <= {target:g}x: {'met' if ratio <= target else 'MISSED'}"
