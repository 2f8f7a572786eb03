"""Reading a heartbeat trace: one JSON object per heartbeat, or a format :mod:`heartbeat.formats` knows.

The trace format (the README's "Tuning with replay")::

    {"progress": 0.25, "actions": [{"tool": "search", "args": {"q": "x"}, "output": "3 hits"}]}

Blank lines are skipped but counted, so a :class:`~heartbeat.base.errors.TraceError`
names the line as an editor shows it.
"""

from __future__ import annotations

import gc
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..base.errors import HeartbeatError, TraceError, UsageError
from ..base.fsutil import read_regular
from ..core.models import clip
from .lines import KeyedAction, ResumedLine, TraceAction, TraceLine, TraceUsage

__all__ = ["KeyedAction", "ResumedLine", "TraceAction", "TraceLine", "TraceUsage", "load_any", "load_trace"]


def _where(loc: Sequence[int | str]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text or "line"


def _problem(error: ValidationError) -> str:
    first = error.errors(include_url=False)[0]
    message = str(first["msg"]).removeprefix("Value error, ")
    got = first.get("input")
    shown = "" if first["type"] in ("missing", "value_error") else f", got {clip(repr(got), 60)}"
    if first["type"] == "finite_number":
        message = "must be a finite number"
    return f"{_where(first['loc'])}: {message}{shown}"


def _parse(text: str, path: str, number: int) -> TraceLine:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceError(path, number, f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    except ValueError as exc:  # an integer of 5,000 digits: Python's limit on reading one
        raise TraceError(path, number, f"not valid JSON: {str(exc).partition(':')[0]}") from None
    except RecursionError:
        raise TraceError(path, number, "not valid JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise TraceError(path, number, f"not a JSON object (found {_json_type(data)})")
    progress = data.get("progress")
    if isinstance(progress, float) and not math.isfinite(progress):
        raise TraceError(path, number, f"progress: must be a finite number, got {progress}")
    try:
        return TraceLine.model_validate(data)
    except ValidationError as exc:
        raise TraceError(path, number, _problem(exc)) from None


def _json_type(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


def _lines(source: Path | str | Iterable[str]) -> tuple[str, Iterable[bytes | str]]:
    """The name used in errors and the trace's lines (bytes from a file, else as given)."""
    if isinstance(source, Path | str):
        path = Path(source)
        try:
            raw = read_regular(path)  # a FIFO or /dev/zero: one line, never a wait or an endless read
        except FileNotFoundError:
            raise UsageError(f"{path}: no such trace file") from None
        except IsADirectoryError:
            raise UsageError(f"{path}: is a directory, not a trace file") from None
        except OSError as exc:
            raise UsageError(f"{path}: cannot read the trace: {exc.strerror}") from None
        return str(path), raw.removeprefix(b"\xef\xbb\xbf").split(b"\n")
    return "<trace>", source


def _line(raw: bytes | str, path: str, number: int) -> TraceLine | None:
    """One line as a TraceLine, None when blank; TraceError when bad."""
    if not raw.strip():
        return None
    # The fast path: pydantic parses and validates the line in one pass (TraceLine is
    # strict, so it accepts exactly what the path below accepts, with the same values).
    # Anything it refuses takes the path below, for its exact messages.
    try:
        return TraceLine.model_validate_json(raw)
    except ValidationError:
        pass
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TraceError(path, number, f"not UTF-8 text (byte {exc.start + 1})") from None
    else:
        text = raw
    if not text.strip():  # only Unicode whitespace: blank too
        return None
    return _parse(text, path, number)


def _load(source: Path | str | Iterable[str]) -> tuple[str, list[tuple[int, TraceLine]]]:
    path, lines = _lines(source)
    found: list[tuple[int, TraceLine]] = []
    # Building tens of thousands of small models sets off the cyclic GC again and
    # again (three quarters of the load time), though none of them is garbage yet.
    enabled = gc.isenabled()
    gc.disable()
    try:
        for number, raw in enumerate(lines, 1):
            line = _line(raw, path, number)
            if line is not None:
                found.append((number, line))
    finally:
        if enabled:
            gc.enable()
    return path, found


# The keys of a trace line (anything else on it starts with "_"): a first line with one
# of them, or with nothing else, is a trace, whose other lines are not parsed to sniff.
_TRACE_KEYS = frozenset(["progress", "actions", "at", "turn", "heard"])

_UNREAD: Any = object()  # the file's JSON was not read whole while sniffing


def _trace_like(line: object) -> bool:
    """Whether a parsed first line reads as a trace line, not the start of a JSON Lines history."""
    return (
        not isinstance(line, dict) or bool(_TRACE_KEYS & line.keys()) or all(k.startswith("_") for k in line)
    )


def _json_lines(raw: bytes) -> tuple[list[Any], bool]:
    """The JSON values of ``raw``'s lines up to the first one that is not JSON; True when all were."""
    rows: list[Any] = []
    for line in raw.removeprefix(b"\xef\xbb\xbf").split(b"\n"):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except (ValueError, RecursionError):
                return rows, False
    return rows, True


def _sniff(path: Path) -> tuple[str | None, Any]:
    """The import format a file is in (None: the project's own trace format) and its JSON, if read whole.

    Tried in turn: the first line alone (a journal line stands for the
    journal), the whole file as one JSON document, then the list of its
    lines (JSON Lines dumps of messages, Claude Code and Codex sessions).
    The lines are parsed only when the first line is not a trace line, so
    a trace is never parsed twice to be sniffed. The JSON comes back when
    it was read whole (a document, or lines that all parsed), so the
    loader does not read the file again.
    """
    from ..formats import detect_format

    try:
        raw = read_regular(path)
    except OSError:
        return None, _UNREAD  # the trace loader gives the one-line error
    first_raw = next((line for line in raw.split(b"\n") if line.strip()), b"")
    try:
        first: Any = json.loads(first_raw)
    except (ValueError, RecursionError):
        first = _UNREAD  # an indented document, or not JSON at all
    if first is not _UNREAD:
        found = detect_format([first] if isinstance(first, dict) and "event" in first else first)
        if found is not None:
            return found, _UNREAD
    try:
        whole = json.loads(raw)
    except (ValueError, RecursionError):
        whole = _UNREAD
    if whole is not _UNREAD:
        found = detect_format(whole)
        if found is not None or _trace_like(whole):
            return found, whole
        rows, complete = [whole], True  # a file of one line: that line is the list
    elif first is _UNREAD or _trace_like(first):
        return None, _UNREAD
    else:
        rows, complete = _json_lines(raw)
    # a history with a bad line is still that history: its loader names the line
    return detect_format(rows), rows if complete else _UNREAD


def _import_format(path: Path) -> str | None:
    """The import format a file is in, or None for the project's own trace format.

    Only a file an import format recognises is read as one (a journal's
    ``event`` lines, a ``.traj``, a list of chat messages, JSON Lines of
    messages or session entries, ...); anything else is a trace, so the
    trace loader keeps its line-by-line errors.
    """
    return _sniff(path)[0]


def _regroup(lines: list[tuple[int, TraceLine]], size: int) -> list[tuple[int, TraceLine]]:
    """The actions of ``lines`` grouped ``size`` per heartbeat, each keeping what came with it.

    A line's progress sample was measured after its last action, so it goes to the new
    heartbeat holding that action (the latest sample of a heartbeat wins: one heartbeat
    measures once, at its end); its model calls, and its baseline (measured before them), go to
    the one holding its first action, and each new heartbeat takes the time and ``turn`` of the
    line its first action came from. A line without actions gives its sample and calls to the
    heartbeat before. No heartbeat spans a human's resume: a resumed line starts a new one.
    Dropping the samples instead would replay a working agent whose metric rises as if it had none.
    """
    groups: list[_Group] = []
    for _, line in lines:
        if isinstance(line, ResumedLine) or not groups:
            groups.append(_Group(resumed=isinstance(line, ResumedLine)))
        calls = line.usage
        for action in line.actions:
            if len(groups[-1].actions) == size:
                groups.append(_Group())
            group = groups[-1]
            if not group.actions:
                group.at, group.turn, group.heard = line.at, line.turn, line.heard
            if action is line.actions[0] and group.progress is None:  # measured before its first action
                group.baseline = line.baseline
            group.actions.append(action)
            group.usage.extend(calls)
            calls = []
        groups[-1].usage.extend(calls)
        if line.progress is not None:
            groups[-1].progress = line.progress
    kept = [g for g in groups if g.actions]
    return [(n, g.line()) for n, g in enumerate(kept, 1)]


@dataclass
class _Group:
    """One heartbeat being regrouped: its actions and what their lines came with."""

    resumed: bool = False
    actions: list[TraceAction] = field(default_factory=list)
    usage: list[TraceUsage] = field(default_factory=list)
    progress: float | None = None
    baseline: float | None = None
    at: datetime | None = None
    turn: bool = False
    heard: bool = True

    def line(self) -> TraceLine:
        """The heartbeat as a trace line (a resumed one when a human resumed before it)."""
        kind = ResumedLine if self.resumed else TraceLine
        return kind(
            actions=self.actions,
            usage=self.usage,
            progress=self.progress,
            baseline=self.baseline,
            at=self.at,
            turn=self.turn,
            heard=self.heard,
        )


def load_any(
    source: Path | str | Iterable[str], *, fmt: str | None = None, per_heartbeat: int | None = None
) -> tuple[str, list[tuple[int, TraceLine]]]:
    """A trace, or a history in an import format (``fmt``, else detected), as heartbeat lines.

    ``per_heartbeat`` groups the actions anew (imports default to 5 per heartbeat; the
    project's own journal and an OTLP export to the heartbeats they record).
    """
    if per_heartbeat is not None and per_heartbeat < 1:
        raise UsageError(f"--per-heartbeat must be >= 1, not {per_heartbeat}")
    data: Any = _UNREAD
    if fmt is None and isinstance(source, Path | str):
        detected, data = _sniff(Path(source))
        fmt = detected or "trace"
    elif isinstance(source, Path | str) and Path(source).is_file():
        _named_format_fits(Path(source), fmt)
    if not isinstance(source, Path | str) or fmt in (None, "trace"):
        path, lines = _load(source)
        return path, lines if per_heartbeat is None else _regroup(lines, per_heartbeat)
    from ..formats import FORMATS, load_actions, read_json

    where = Path(source)
    if where.is_dir():
        raise UsageError(f"{where}: is a directory, not a trace file")
    if not where.exists():
        raise UsageError(f"{where}: no such trace file")
    if fmt == "journal":
        # Its own heartbeats (the ticks it journaled), from its rotated files too; regrouped
        # only when asked, the detector keys kept either way.
        beats = _journal_heartbeats(where)
        return str(where), beats if per_heartbeat is None else _regroup(beats, per_heartbeat)
    if data is _UNREAD:
        data = read_json(where)
    if per_heartbeat is None:
        own = _own_heartbeats(where, data, fmt)
        if own is not None:
            return str(where), own
    found = load_actions(where, data, fmt)
    calls = [a.pop("usage", []) for a in found]  # model calls, each before the action it led to
    if not found and not FORMATS[fmt].sniff(data):  # named by --format, and it reads nothing here
        raise UsageError(
            f"{where}: --format {fmt} finds no tool call in this file, nor does any other format"
        )
    try:
        actions = [TraceAction.model_validate(a) for a in found]
        spent = [[TraceUsage.model_validate(u) for u in used] for used in calls]
    except ValidationError as exc:
        raise TraceError(str(where), 1, _problem(exc)) from None
    size = per_heartbeat or 5
    return str(where), [
        (
            n + 1,
            TraceLine(actions=actions[i : i + size], usage=[u for used in spent[i : i + size] for u in used]),
        )
        for n, i in enumerate(range(0, len(actions), size))
    ]


def _journal_heartbeats(where: Path) -> list[tuple[int, TraceLine]]:
    """The heartbeats of heartbeat's own journal (its rotated files first), with the keys computed live."""
    from ..formats.journal import ticks
    from ..state.journal import Journal

    lines: list[tuple[int, TraceLine]] = []
    number = 0
    for n, beat in enumerate(ticks(Journal(where).read()), 1):
        kind = ResumedLine if beat["resumed"] else TraceLine
        try:
            actions: list[TraceAction] = []
            for row in beat["actions"]:
                number += 1
                actions.append(_keyed(row, number))
            usage = [TraceUsage.model_validate(u) for u in beat["usage"]]
            at, progress, turn, heard = beat["at"], beat["progress"], beat["turn"], beat["heard"]
            line = kind(actions=actions, at=at, progress=progress, usage=usage, turn=turn, heard=heard)
            line.baseline = beat["baseline"]
            lines.append((n, line))
        except ValidationError as exc:
            raise TraceError(str(where), 1, f"heartbeat {n}: {_problem(exc)}") from None
        except ValueError as exc:  # keys heartbeat never writes (check_keys)
            raise TraceError(str(where), 1, f"heartbeat {n}: action {number}: {exc}") from None
    return lines


def _keyed(row: dict[str, Any], number: int) -> KeyedAction:
    """A journal's action event as a KeyedAction: the keys computed live, or again for an older one.

    An older journal kept no output: its result is one no other action has,
    so an unknown output never counts as the same result.
    """
    from ..detect.detectors import prints
    from ..detect.recorded import KEY_FIELDS, check_keys
    from ..formats.journal import summary_args

    tool = str(row.get("tool") or "(unknown)")
    summary = str(row.get("summary") or tool)
    error = str(row["error"]) if row.get("error") else None
    length = row.get("output_len")
    if "fingerprint" in row:
        keys = {name: row.get(name) for name in KEY_FIELDS}
    else:
        found = prints(tool, summary_args(tool, summary), None, error)
        keys = {name: getattr(found, name, None) for name in KEY_FIELDS}
        if error is None and length is not None:
            keys["result"] = f"?{number}"
    keys.update(summary=summary, output_len=length)
    check_keys(keys)
    cost = row.get("cost")
    cost = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else 0.0
    return KeyedAction(tool=tool, error=error, cost=cost, keys=keys)


def _named_format_fits(where: Path, fmt: str | None) -> None:
    """UsageError when ``--format fmt`` does not recognise the file and another format does: name it.

    ``--format`` is for a history detection misses; given for a file that
    is plainly another format's, it would read nothing ("an empty trace",
    exit 0) or fail deep in the reader.
    """
    from ..formats import FORMATS, read_json

    module = FORMATS.get(fmt or "")
    if fmt != "trace" and module is None:
        return  # an unknown name: load_actions lists the known ones
    seen = _sniff(where)[0]
    if seen is None and fmt != "trace":
        try:
            seen = "a heartbeat trace" if any(line.actions for _, line in _load(where)[1]) else None
        except HeartbeatError:
            seen = None
        if seen:
            raise UsageError(
                f"{where}: --format {fmt} does not read this file: it looks like {seen} (leave --format out)"
            )
    if seen is None or seen == fmt:
        return
    if module is not None:
        try:
            data = read_json(where)
        except HeartbeatError:
            return  # its reader says what is wrong with it
        if module.sniff(data):
            return  # it reads this file too (an older codex rollout is also openai-responses)
    raise UsageError(
        f"{where}: --format {fmt} does not read this file: it looks like {seen} "
        f"(give --format {seen}, or leave --format out)"
    )


def _own_heartbeats(where: Path, data: Any, fmt: str) -> list[tuple[int, TraceLine]] | None:
    """The heartbeats of a format that knows them (its ``ticks``), else None."""
    from ..formats import FORMATS, misfit

    ticks = getattr(FORMATS.get(fmt), "ticks", None)
    if ticks is None:
        return None
    try:
        return [
            (n, t if isinstance(t, TraceLine) else TraceLine.model_validate(t))
            for n, t in enumerate(ticks(data), 1)
        ]
    except ValidationError as exc:
        raise TraceError(str(where), 1, _problem(exc)) from None
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        raise TraceError(str(where), 1, misfit(fmt, exc)) from None


def load_trace(source: Path | str | Iterable[str]) -> list[tuple[int, TraceLine]]:
    """Every heartbeat of a trace with its line number; TraceError at the first bad line."""
    return _load(source)[1]
