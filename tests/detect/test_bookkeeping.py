"""Bookkeeping: what a heartbeat writes that is no work."""

from __future__ import annotations

from datetime import UTC, datetime

from heartbeat.detect.bookkeeping import bookkeeping, records, without_bookkeeping, written
from heartbeat.detect.detectors.contract import ActionView
from heartbeat.detect.monitor import Monitor

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _heartbeats(*beats: list[tuple[str, dict[str, object], str]]) -> list[list[ActionView]]:
    """The actions of each heartbeat as a Monitor keeps them."""
    monitor = Monitor()
    for tick, calls in enumerate(beats, 1):
        monitor.start_tick(tick)
        for tool, args, output in calls:
            monitor.record(tool, args, output=output, now=T0)
    return [[a for a in monitor.history if a.tick == tick] for tick in range(1, len(beats) + 1)]


def test_the_same_record_of_its_own_as_earlier_is_bookkeeping_whatever_the_heartbeat_before_did() -> None:
    """A drift watcher appends "no drift" after each quiet plan; after a heartbeat that applied a
    fix (and appended nothing), its next "no drift" was work (live round 54: a ``cycle`` at the
    wake-up after each fix). The same line as it wrote earlier in the run is its record; a line it
    never wrote (a frozen job's log saying something new) or a write of data is not."""
    plan = ("bash", {"command": "terraform plan -no-color"}, "No changes.")
    logged = ("append_log", {"line": "no drift"}, "appended 1 line")
    first, applied, quiet, other = _heartbeats(
        [plan, logged],
        [plan, ("bash", {"command": "terraform apply -auto-approve"}, "Apply complete!")],
        [plan, logged],
        [
            plan,
            ("append_log", {"line": "drift seen twice"}, "appended 1 line"),
            ("write_row", {"row": 7}, "ok"),
        ],
    )
    kept = bookkeeping(applied, recorded=records(quiet, first))
    assert kept(quiet[1]) and not kept(quiet[0])
    assert without_bookkeeping(quiet, applied, recorded=records(quiet, first)) == [quiet[0]]
    assert not bookkeeping(applied)(quiet[1])  # nothing recorded earlier: as the heartbeat before says
    assert not any(map(kept, other[1:]))


def test_a_write_back_to_what_it_was_before_the_heartbeat_before_is_no_bookkeeping() -> None:
    """A pool size set to 20, then 10, then 20: the third is tried again, not moved on; a sync's
    saved time, never the same twice, stays bookkeeping."""
    beats = _heartbeats(*[[("set_config", {"pool": size}, "applied")] for size in (20, 10, 20)])
    older = written(beats[0])
    assert bookkeeping(beats[1])(beats[2][0])  # moved on, as far as the heartbeat before tells
    assert not bookkeeping(beats[1], older=older)(beats[2][0])
    times = _heartbeats(*[[("state.set", {"last_run": f"0{h}:00"}, "ok")] for h in range(3)])
    assert bookkeeping(times[1], older=written(times[0]))(times[2][0])
