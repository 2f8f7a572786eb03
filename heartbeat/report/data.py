"""What a report shows, gathered from journal events: heartbeats, anomalies, decisions, actions.

Pure: :func:`collect` takes the events (dicts as ``journal.jsonl`` holds them)
and returns a :class:`Timeline`; it reads no file and no clock. A tick's
events are journaled as one batch that ends with its ``tick`` event, so a
heartbeat is everything up to and including a ``tick`` event; events written
outside a tick (``pause``, ``resume``, a ``kill`` that found no lock) join the
next heartbeat, or stand alone at the end.

Every text is passed through ``redact`` as it is read, so nothing past this
module sees a secret.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..state.killswitch import kill_text
from .rows import ActionRow, action_rows, event_tick

__all__ = ["Mark", "Slot", "Timeline", "collect", "parse_at"]

MAX_SLOTS = 600
"""Points on the timeline at most: longer journals are shown in buckets of consecutive heartbeats."""
LOOKBACK = 20
"""Ticks before the last stuck streak that the default stretch may reach back for an earlier anomaly."""
MAX_NOTABLE = 300
"""Entries of the "what happened" list at most (the newest)."""

RECOVERIES = ("try_alternative", "reassess_goal")
_OUTSIDE = frozenset({"pause", "resume", "kill", "interrupted"})
"""Events journaled outside a heartbeat's batch (a kill is inside when it came during the step)."""
MARK_KINDS = ("recovery", "recovered", "escalation", "kill", "pause", "resume", "budget", "step_error")
"""Timeline marks other than anomalies, in lane order."""


def parse_at(value: object) -> datetime | None:
    """An event's ``at`` as an aware UTC datetime, or None when absent or unreadable."""
    if not isinstance(value, str):
        return None
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        return None
    if at.tzinfo is None:
        return at.replace(tzinfo=UTC)
    try:
        return at.astimezone(UTC)
    except OverflowError:  # hours from the calendar's first or last day: no UTC time to place it at
        return None


@dataclass(slots=True)
class Mark:
    """A point on the timeline that is not an anomaly: a recovery, an escalation, a KILL, ..."""

    kind: str
    tick: int
    at: str
    text: str
    detail: str = ""
    between: bool = False
    """Between heartbeats (a pause, a resume, a KILL before the step): after ``tick``, not in it."""


@dataclass(slots=True)
class Slot:
    """One point of the timeline: a heartbeat, or a bucket of consecutive ones."""

    index: int
    first_tick: int
    last_tick: int
    first_at: str
    last_at: str
    heartbeats: int = 0
    progress: float | None = None
    actions: int = 0
    errors: int = 0
    cost: float = 0.0
    tokens: int = 0
    """Model tokens of the slot's heartbeats (their ``spend`` events)."""
    models: dict[str, dict[str, float]] = field(default_factory=dict)
    """Their model calls by model: ``calls``, ``tokens``, ``cost``."""
    outcome: str | None = None
    streak: int = 0
    anomalies: dict[str, list[str]] = field(default_factory=dict)
    marks: dict[str, list[Mark]] = field(default_factory=dict)

    @property
    def ticks(self) -> str:
        """``"7"`` or ``"7-12"``: the tick numbers it covers."""
        if self.first_tick == self.last_tick:
            return str(self.first_tick)
        return f"{self.first_tick}-{self.last_tick}"

    def merge(self, other: Slot) -> None:
        """Take in the next slot (bucketing): counts add up, the progress is the newest."""
        self.last_tick, self.last_at = other.last_tick, other.last_at
        self.heartbeats += other.heartbeats
        if other.progress is not None:
            self.progress = other.progress
        self.actions += other.actions
        self.errors += other.errors
        self.cost += other.cost
        self.tokens += other.tokens
        for model, used in other.models.items():
            _add_model(self.models, model, used)
        self.outcome = other.outcome or self.outcome
        self.streak = max(self.streak, other.streak)
        for kind, messages in other.anomalies.items():
            self.anomalies.setdefault(kind, []).extend(messages)
        for kind, marks in other.marks.items():
            self.marks.setdefault(kind, []).extend(marks)


@dataclass(slots=True)
class Timeline:
    """Everything a page shows from the journal."""

    slots: list[Slot]
    heartbeats: int
    events: int
    actions_total: int
    cost_total: float
    errors_total: int
    anomaly_counts: dict[str, int]
    mark_counts: dict[str, int]
    notable: list[Mark]
    notable_dropped: int
    rows: list[ActionRow]
    stretch: tuple[int, int] | None
    stretch_actions: int
    stretch_dropped: int
    first_at: str | None
    last_at: str | None
    last_heartbeat_at: str | None
    bucket: int
    max_tick_actions: int = 0
    tokens_total: int = 0
    models: dict[str, dict[str, float]] = field(default_factory=dict)
    """The journal's model calls by model: ``calls``, ``tokens``, ``cost``."""


class _Builder:
    """Folds events into slots; one pass, one open heartbeat at a time."""

    def __init__(self, redact: Callable[[str], str]) -> None:
        self.redact = redact
        self.slots: list[Slot] = []
        self.open: Slot | None = None
        self.actions: list[Mapping[str, Any]] = []
        self.tripped: dict[int, list[str]] = {}
        self.notable: list[Mark] = []
        self.notable_total = 0
        self.anomaly_counts: dict[str, int] = {}
        self.mark_counts: dict[str, int] = {}
        self.escalation_ticks: list[int] = []
        self.recovery_starts: list[int] = []
        self.anomaly_ticks: list[int] = []
        self.resume_ticks: list[int] = []
        self.cost = 0.0
        self.tokens = 0
        self.models: dict[str, dict[str, float]] = {}
        self.errors = 0
        self.events = 0
        self.first_at: str | None = None
        self.last_at: str | None = None
        self.last_heartbeat_at: str | None = None
        self.max_tick_actions = 0
        self.tick = 0  # the newest tick number seen
        self.stuck = 0  # heartbeats in a row whose decision was a recovery
        self.outside = False  # the event being added was written between heartbeats

    def slot(self) -> Slot:
        if self.open is None:
            self.open = Slot(len(self.slots), -1, -1, "", "")
        return self.open

    def mark(self, slot: Slot, kind: str, tick: int, at: str, text: str, detail: str = "") -> None:
        mark = Mark(kind, tick, at, self.redact(text), self.redact(detail), self.outside)
        slot.marks.setdefault(kind, []).append(mark)
        self.mark_counts[kind] = self.mark_counts.get(kind, 0) + 1
        self.note(mark)

    def note(self, mark: Mark) -> None:
        self.notable.append(mark)
        self.notable_total += 1
        if len(self.notable) > 2 * MAX_NOTABLE:  # keep memory flat over a long journal
            del self.notable[:MAX_NOTABLE]

    def add(self, event: Mapping[str, Any]) -> None:
        self.events += 1
        kind = event.get("event")
        raw_at = event.get("at")
        at = raw_at if isinstance(raw_at, str) else ""
        tick = event.get("tick")
        tick = tick if isinstance(tick, int) and not isinstance(tick, bool) else 0
        if at:
            self.first_at = self.first_at or at
            self.last_at = at
        slot = self.slot()
        self.outside = kind in _OUTSIDE and not (kind == "kill" and event.get("during_step"))
        if self.outside:
            # Written between heartbeats: it shows at the next one, and says nothing of its ticks.
            tick = tick or self.tick
        else:
            if slot.first_tick < 0:
                slot.first_tick, slot.first_at = tick, at
            if tick >= slot.last_tick:
                slot.last_tick, slot.last_at = tick, at
            self.tick = max(self.tick, tick)
        if kind == "action":
            self.actions.append(event)
            slot.actions += 1
            cost = event.get("cost")
            if isinstance(cost, int | float) and not isinstance(cost, bool):
                slot.cost += cost
                self.cost += cost
            if event.get("error"):
                slot.errors += 1
                self.errors += 1
        elif kind == "anomaly":
            name = str(event.get("kind") or "anomaly")
            slot.anomalies.setdefault(name, []).append(self.redact(str(event.get("message") or "")))
            self.anomaly_counts[name] = self.anomaly_counts.get(name, 0) + 1
            self.anomaly_ticks.append(tick)
            index = event.get("action")
            if isinstance(index, int):
                self.tripped.setdefault(index, []).append(name)
        elif kind == "decision":
            decision = str(event.get("decision") or "")
            streak = event.get("stuck_streak")
            slot.streak = max(slot.streak, streak if isinstance(streak, int) else 0)
            if decision in RECOVERIES:
                if streak == 1:
                    self.recovery_starts.append(tick)
                text = f"{decision}, streak {streak}"
                self.mark(slot, "recovery", tick, at, text, str(event.get("instructions") or ""))
            elif decision == "continue" and self.stuck:
                self.mark(slot, "recovered", tick, at, f"recovered after {self.stuck} stuck heartbeat(s)")
            # Stuck heartbeats in a row so far (the policy's streak may decay more slowly).
            self.stuck = self.stuck + 1 if decision in RECOVERIES else 0
        elif kind == "escalation":
            self.escalation_ticks.append(tick)
            self.mark(slot, "escalation", tick, at, str(event.get("reason") or "escalated"))
        elif kind == "kill":
            self.mark(slot, "kill", tick, at, kill_text(event))
        elif kind == "interrupted":
            self.mark(slot, "kill", tick, at, f"interrupted: {event.get('reason') or 'by a signal'}")
        elif kind == "pause":
            self.mark(slot, "pause", tick, at, f"paused: {event.get('reason') or 'by hand'}")
        elif kind == "resume":
            self.stuck = 0  # a human reset it: what follows is not the instructions' doing
            note = event.get("note")
            text = f"resumed from {event.get('from') or '?'}" + (f"; note: {note}" if note else "")
            self.resume_ticks.append(tick)
            self.mark(slot, "resume", tick, at, text)
        elif kind == "budget":
            self.mark(slot, "budget", tick, at, f"budget: {event.get('reason') or ''}")
        elif kind == "spend":
            self.spend(slot, event)
        elif kind == "unpriced":
            text = f"no price for model {event.get('model') or '?'}: {event.get('reason') or ''}"
            self.note(Mark("unpriced", tick, at, self.redact(text)))
        elif kind in ("step_error", "metric_error"):
            what = "step raised" if kind == "step_error" else "metric failed"
            self.mark(slot, "step_error", tick, at, f"{what}: {event.get('error') or ''}")
        elif kind == "delivery" and event.get("undelivered"):
            undelivered = event.get("undelivered")
            lines = undelivered if isinstance(undelivered, list) else [undelivered]
            text = "not delivered: " + "; ".join(str(u) for u in lines)
            self.note(Mark("undelivered", tick, at, self.redact(text)))
        elif kind == "tick":
            slot.heartbeats += 1
            slot.outcome = str(event.get("outcome") or "")
            count = event.get("actions")
            if isinstance(count, int) and count > self.max_tick_actions:
                self.max_tick_actions = count
            progress = event.get("progress")
            if isinstance(progress, int | float) and not isinstance(progress, bool):
                slot.progress = float(progress)
            self.last_heartbeat_at = at or self.last_heartbeat_at
            self.close()

    def spend(self, slot: Slot, event: Mapping[str, Any]) -> None:
        """A heartbeat's model calls: tokens and dollars by model (the actions' cost came with them)."""
        models = event.get("models")
        if not isinstance(models, Mapping):
            return
        for model, raw in models.items():
            if not isinstance(raw, Mapping):
                continue
            used = {
                "calls": _number(raw.get("calls")),
                "tokens": _number(raw.get("input")) + _number(raw.get("output")),
                "cost": _number(raw.get("cost")),
            }
            name = self.redact(str(model))
            _add_model(slot.models, name, used)
            _add_model(self.models, name, used)
            slot.tokens += int(used["tokens"])
            self.tokens += int(used["tokens"])
            slot.cost += used["cost"]
            self.cost += used["cost"]

    def close(self) -> None:
        slot = self.open
        if slot is not None:
            if slot.first_tick < 0:  # only events from between heartbeats
                slot.first_tick = slot.last_tick = self.tick
                slot.first_at = slot.last_at = self.last_at or ""
            self.slots.append(slot)
            self.open = None


def collect(
    events: Iterable[Mapping[str, Any]],
    *,
    since: datetime | None = None,
    stretch: tuple[int, int] | None = None,
    redact: Callable[[str], str] = lambda text: text,
) -> Timeline:
    """Fold journal events (oldest first) into what a report page shows.

    ``since`` drops events before it; ``stretch`` (first and last tick) picks
    the actions shown in the table, by default the stretch that led to the
    last escalation (else to the last anomaly, else the last five ticks).
    """
    builder = _Builder(redact)
    for event in events:
        if since is not None:
            at = parse_at(event.get("at"))
            if at is None or at < since:
                continue
        builder.add(event)
    heartbeats = sum(slot.heartbeats for slot in builder.slots)
    builder.close()  # events after the last heartbeat: a slot of their own
    slots = builder.slots
    bucket = max(1, -(-len(slots) // MAX_SLOTS))
    if bucket > 1:
        slots = _bucketed(slots, bucket)
    actions = builder.actions
    chosen = stretch or _default_stretch(builder, actions)
    rows, in_stretch, dropped = action_rows(actions, chosen, builder.tripped, redact)
    notable = builder.notable[-MAX_NOTABLE:]
    return Timeline(
        slots=slots,
        heartbeats=heartbeats,
        events=builder.events,
        actions_total=len(actions),
        cost_total=builder.cost,
        errors_total=builder.errors,
        anomaly_counts=builder.anomaly_counts,
        mark_counts=builder.mark_counts,
        notable=notable,
        notable_dropped=builder.notable_total - len(notable),
        rows=rows,
        stretch=chosen,
        stretch_actions=in_stretch,
        stretch_dropped=dropped,
        first_at=builder.first_at,
        last_at=builder.last_at,
        last_heartbeat_at=builder.last_heartbeat_at,
        bucket=bucket,
        max_tick_actions=builder.max_tick_actions,
        tokens_total=builder.tokens,
        models=builder.models,
    )


def _number(value: object) -> float:
    return (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else 0.0
    )


def _add_model(models: dict[str, dict[str, float]], model: str, used: Mapping[str, float]) -> None:
    kept = models.setdefault(model, {"calls": 0.0, "tokens": 0.0, "cost": 0.0})
    for key, value in used.items():
        kept[key] = kept.get(key, 0.0) + value


def _bucketed(slots: list[Slot], size: int) -> list[Slot]:
    """Consecutive slots merged ``size`` at a time (renumbered)."""
    merged: list[Slot] = []
    for start in range(0, len(slots), size):
        head = slots[start]
        head.index = len(merged)
        for other in slots[start + 1 : start + size]:
            head.merge(other)
        merged.append(head)
    return merged


def _default_stretch(builder: _Builder, actions: list[Mapping[str, Any]]) -> tuple[int, int] | None:
    """The ticks worth a look: the stuck stretch that led to the last escalation, else the last anomaly.

    An escalation a human resumed from gives way to anomalies that came after it.

    It starts one tick before the last stuck streak began, or one tick before
    an earlier anomaly of the same night (since the last resume, at most
    ``LOOKBACK`` ticks back), so a recovered stall that came first is in view.
    """
    escalated = builder.escalation_ticks[-1] if builder.escalation_ticks else None
    resolved = escalated is not None and any(t >= escalated for t in builder.resume_ticks)
    if escalated is not None and not (resolved and max(builder.anomaly_ticks, default=0) > escalated):
        end = escalated
    elif builder.anomaly_ticks:
        end = max(builder.anomaly_ticks)
    elif actions:
        last = event_tick(actions[-1])
        return max(1, last - 4), last
    else:
        return None
    starts = [t for t in builder.recovery_starts if t <= end]
    start = starts[-1] if starts else end
    resumed = max((t for t in builder.resume_ticks if t < end), default=0)
    earlier = [t for t in builder.anomaly_ticks if max(resumed, start - LOOKBACK) < t < start]
    if earlier:
        start = min(earlier)
    return max(1, start - 1), end
