"""``heartbeat log``: read, filter, merge, follow and render journal events.

Several agents' journals are merged by time, with an agent column. ``follow``
polls the live file for new complete lines (like ``tail -F``) and starts over
when the journal was rotated under it. ``log --follow`` takes its starting
point before it reads what it shows first, and shows what was written after
it exactly once; SIGINT ends it (exit 0) even in a process started with
SIGINT ignored.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..base.errors import UsageError
from ..config.types import parse_since
from ..core.models import printable
from ..state.journal import EVENT_KINDS, Journal
from ..state.killswitch import kill_text
from .style import Style

if TYPE_CHECKING:
    import argparse

    from ..tick.runner import Heartbeat

__all__ = ["EventFilter", "Follower", "follow", "read_events", "render_event", "run_log"]

_ERROR_EVENTS = {"step_error", "metric_error", "anomaly", "escalation", "kill", "budget"}


def _event_time(event: dict[str, Any]) -> datetime | None:
    at = event.get("at")
    if not isinstance(at, str):
        return None
    try:
        parsed = datetime.fromisoformat(at.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


@dataclass(frozen=True)
class EventFilter:
    """Which events to show: kinds (``--event``), a start time (``--since``)."""

    kinds: frozenset[str] = frozenset()
    since: datetime | None = None

    def __call__(self, event: dict[str, Any]) -> bool:
        """True when ``event`` passes."""
        if self.kinds and event.get("event") not in self.kinds:
            return False
        if self.since is not None:
            at = _event_time(event)
            if at is None or at < self.since:
                return False
        return True


def read_events(
    journals: Sequence[tuple[str, Path]],
    keep: Callable[[dict[str, Any]], bool],
    *,
    last: int = 0,
    ends: Mapping[Path, int] | None = None,
) -> list[dict[str, Any]]:
    """The events of each ``(agent, journal)`` that pass ``keep``, by time; the last ``last`` (0: all).

    ``ends``: each live journal read only up to there (:attr:`Follower.ends`: what it shows next).
    """
    ends = ends or {}
    unfiltered = isinstance(keep, EventFilter) and not keep.kinds and keep.since is None
    if len(journals) == 1 and last > 0 and unfiltered:
        agent, path = journals[0]
        # tail() reads from the end: `log -n 5` on a 100 MB journal reads a few KB.
        return [{"agent": agent, **event} for event in Journal(path).tail(last, end=ends.get(path))]
    found: list[tuple[datetime, int, dict[str, Any]]] = []
    order = 0
    for agent, path in journals:
        for event in Journal(path).read(end=ends.get(path)):
            if keep(event):
                event.setdefault("agent", agent)
                at = _event_time(event) or datetime.min.replace(tzinfo=UTC)
                found.append((at, order, event))
                order += 1
    if len(journals) > 1:  # one journal is in write order already; several are merged by time
        found.sort(key=lambda item: (item[0], item[1]))
    events = [event for _, _, event in found]
    return events[-last:] if last > 0 else events


class Follower:
    """The events appended to some journals from the moment it is made (its starting point)."""

    def __init__(self, journals: Sequence[tuple[str, Path]]) -> None:
        self._tails = [_Tail(agent, path) for agent, path in journals]

    def __repr__(self) -> str:
        return f"Follower({[str(tail.path) for tail in self._tails]})"

    @property
    def ends(self) -> dict[Path, int]:
        """Where each live journal ended when the follower was made: what came before is not its."""
        return {tail.path: tail.offset for tail in self._tails}

    def events(
        self,
        keep: Callable[[dict[str, Any]], bool],
        *,
        poll: float = 0.5,
        stop: Callable[[], bool] = lambda: False,
    ) -> Iterator[dict[str, Any]]:
        """New events as they are appended, those ``keep`` passes, until ``stop()`` says so."""
        while not stop():
            quiet = True
            for tail in self._tails:
                for event in tail.new_events():
                    quiet = False
                    if keep(event):
                        yield event
            if quiet:
                time.sleep(poll)


def follow(
    journals: Sequence[tuple[str, Path]],
    keep: Callable[[dict[str, Any]], bool],
    *,
    poll: float = 0.5,
    stop: Callable[[], bool] = lambda: False,
) -> Iterator[dict[str, Any]]:
    """New events as they are appended from this call on (not from the first ``next``), until ``stop()``."""
    return Follower(journals).events(keep, poll=poll, stop=stop)


class _Tail:
    """The new complete lines of one journal file, across rotations."""

    def __init__(self, agent: str, path: Path) -> None:
        self.agent, self.path = agent, path
        self.inode, self.offset = self._where()

    def _where(self) -> tuple[int, int]:
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return 0, 0
        return info.st_ino, info.st_size

    def new_events(self) -> Iterable[dict[str, Any]]:
        inode, size = self._where()
        if inode != self.inode or size < self.offset:  # rotated or replaced: read the new file from its start
            self.inode, self.offset = inode, 0
        if size <= self.offset:
            return []
        with open(self.path, "rb") as handle:
            handle.seek(self.offset)
            chunk = handle.read(size - self.offset)
        end = chunk.rfind(b"\n") + 1  # a line still being written waits for the next poll
        self.offset += end
        events = []
        for line in chunk[:end].splitlines():
            try:
                event = json.loads(line.decode("utf-8"))
            except (ValueError, RecursionError):  # bad bytes, bad JSON, an integer of 5,000 digits
                continue
            if isinstance(event, dict):
                event.setdefault("agent", self.agent)
                events.append(event)
        return events


_QUIET_KEYS = ("at", "event", "agent", "tick", "traceback")


def render_event(event: dict[str, Any], style: Style, *, agent_width: int = 0) -> str:
    """One line per event: time, [agent,] tick, kind and what matters; errors stand out."""
    at = str(event.get("at", ""))[:19].replace("T", " ")
    kind = str(event.get("event", "?"))
    rest = {k: v for k, v in event.items() if k not in _QUIET_KEYS and v not in (None, "", [], {})}
    if kind == "action":
        detail = str(rest.get("summary", rest.get("tool", "")))
        if rest.get("error"):
            detail += f" -> error: {rest['error']}"
    elif kind in ("spend", "unpriced"):
        detail = _spend_text(rest)
    elif kind == "kill" and rest.get("by"):  # which stop: the KILL file or the fleet stop
        detail = kill_text(rest)
    else:
        text = rest.pop("message", None) or rest.pop("reason", None) or rest.pop("error", None)
        detail = str(text) if text else ", ".join(f"{k}={v}" for k, v in rest.items())
        if kind == "anomaly" and rest.get("kind") and text:  # which detector: "repeat: search(...) ..."
            detail = f"{rest['kind']}: {detail}"
    # One line, and nothing that moves the terminal: a journal written before errors were
    # escaped at record time, or by hand, may hold an escape sequence.
    detail = printable(" ".join(detail.split()))
    failed = kind in _ERROR_EVENTS or (kind == "action" and bool(event.get("error")))
    failed = failed or (kind == "tick" and event.get("exit_code") not in (0, None))
    agent = f"{event.get('agent', '')!s:<{agent_width}}  " if agent_width else ""
    tick = event.get("tick") or "-"  # 0: outside any tick (a KILL found before one, a stop between)
    line = f"{at}  {agent}tick {tick!s:>4}  {kind:<11} {detail}"
    return (
        style.paint(line, "red")
        if failed and kind != "action"
        else style.paint(line, "yellow")
        if failed
        else line
    )


def _spend_text(rest: dict[str, Any]) -> str:
    """A ``spend`` event as tokens and dollars by model; an ``unpriced`` one as the model and why."""
    if "model" in rest:
        return f"{rest['model']}: {rest.get('reason', 'no price')}"
    raw = rest.get("models")
    models: dict[str, Any] = raw if isinstance(raw, dict) else {}
    parts = [
        f"{name} {used.get('calls', 0)} call(s) {used.get('input', 0) + used.get('output', 0)} tokens"
        + (f", {used['unpriced']} with no price" if used.get("unpriced") else "")
        for name, used in sorted(models.items())
        if isinstance(used, dict)
    ]
    return f"{rest.get('tokens', 0)} tokens, ${float(rest.get('cost') or 0):.4f}" + (
        f" ({'; '.join(parts)})" if parts else ""
    )


def run_log(heartbeats: Sequence[Heartbeat], args: argparse.Namespace, out: TextIO, now: datetime) -> int:
    """Carry out ``heartbeat log`` over the agents' journals (filtered, merged, maybe followed); exit 0."""
    from .status import require_state_dir

    width = max(len(hb.name) for hb in heartbeats) if len(heartbeats) > 1 else 0  # the agent column
    present = [hb for hb in heartbeats if hb.state_dir.is_dir()]
    if not present and len(heartbeats) == 1:  # the wrong folder (a fleet's agents make theirs as they tick)
        require_state_dir(heartbeats[0])
    since = parse_since(args.since, now) if args.since else None
    keep = EventFilter(_kinds(args.event or ()), since)
    journals = [(hb.name, hb.store.journal_path) for hb in present]
    style = Style.for_stream(out)

    def show(event: dict[str, Any]) -> None:
        out.write((json.dumps(event) if args.json else render_event(event, style, agent_width=width)) + "\n")

    if not args.follow:
        shown = 0
        for event in read_events(journals, keep, last=args.lines):
            show(event)
            shown += 1
        if not shown and not args.json:  # a blank screen reads as a broken command
            asked = args.event or args.since
            out.write("no events match\n" if asked else "no events yet (no heartbeat has run)\n")
        out.flush()
        return 0
    try:
        # Ready before the first line shows: whoever reads it may act on it at once (write an
        # event, or press Ctrl-C), so both the starting point and the signal come first.
        with _sigint_interrupts():
            follower = Follower(journals)
            for event in read_events(journals, keep, last=args.lines, ends=follower.ends):
                show(event)
            out.flush()
            for event in follower.events(keep):
                show(event)
                out.flush()
    except KeyboardInterrupt:  # the way to end --follow: not an error
        return 0
    return 0


def _kinds(asked: Sequence[str]) -> frozenset[str]:
    """The event kinds ``--event`` asked for; a kind no journal holds is a usage error (a typo would
    show nothing, as if no such event had happened)."""
    for kind in asked:
        if kind not in EVENT_KINDS:
            near = difflib.get_close_matches(kind, sorted(EVENT_KINDS), n=1)
            hint = f"did you mean {near[0]!r}? " if near else ""
            raise UsageError(
                f"--event {kind!r} is no kind of event; {hint}kinds: {', '.join(sorted(EVENT_KINDS))}"
            )
    return frozenset(asked)


@contextlib.contextmanager
def _sigint_interrupts() -> Iterator[None]:
    """Within the block (main thread), SIGINT raises KeyboardInterrupt, as Python's own handler does.

    Even when the process started with SIGINT ignored: a shell without job control (a script's
    ``&``, a CI step) starts commands so, and Python leaves it ignored, but --follow ends on no
    other signal of its own (``run`` and ``tick`` install theirs too).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if previous is not None:  # None: a handler not set from Python, which cannot be put back
            signal.signal(signal.SIGINT, previous)
