"""Monitor: the detectors fed action by action, each kind once per heartbeat, seeded from state."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heartbeat.config.file import (
    DetectorsConfig,
    EmptyConfig,
    ErrorRateConfig,
    LoopConfig,
    NoProgressConfig,
    RecurringErrorConfig,
    RepeatConfig,
)
from heartbeat.core.models import HISTORY_LIMIT, PROGRESS_LIMIT, ActionRecord, Anomaly, ProgressSample
from heartbeat.detect.detectors import History, Loop, Repeat, build_detectors, fingerprint
from heartbeat.detect.monitor import Monitor
from heartbeat.detect.recorded import journal_keys

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def at(minutes: int) -> datetime:
    """A fixed, timezone-aware time ``minutes`` after T0."""
    return T0 + timedelta(minutes=minutes)


def test_record_builds_the_action_record() -> None:
    """index, tick, fingerprint, summary, stripped output length and error are filled in."""
    monitor = Monitor(tick=4, actions_total=10)
    assert monitor.record("search", {"q": "x"}, output="  3 hits \n", error=None, cost=0.5, now=T0) is None
    record = monitor.history[-1]
    assert (record.index, record.tick, record.at, record.tool) == (11, 4, T0, "search")
    assert record.fingerprint == fingerprint("search", {"q": "x"})
    assert record.summary == 'search({"q":"x"})'
    assert (record.output_len, record.error, record.cost) == (6, None, 0.5)
    assert monitor.actions_total == 11


def test_constructed_records_equal_validated_ones() -> None:
    """The unvalidated fast path gives exactly what pydantic validation would."""
    monitor = Monitor(DetectorsConfig(volatile_args=["rid"], polling=["poll"]))
    monitor.record("search", {"q": "é", "rid": 1}, output="x", cost=2, now=T0)
    monitor.record("poll", None, error="boom", now=at(1))
    monitor.record("w", None, error="", now=at(2))
    for record in monitor.history:
        again = ActionRecord.model_validate(record.model_dump())
        assert again == record
        assert again.model_dump_json() == record.model_dump_json()
        assert record.model_fields_set == again.model_fields_set
    assert monitor.history[2].error is None


def test_constructed_anomalies_equal_validated_ones() -> None:
    """An anomaly from a tracker survives a validation round trip unchanged."""
    monitor = Monitor()
    found = [monitor.record("search", {"q": "x"}, output="", now=at(i)) for i in range(3)]
    anomaly = found[-1]
    assert anomaly is not None
    assert Anomaly.model_validate_json(anomaly.model_dump_json()) == anomaly


def test_third_identical_call_returns_repeat() -> None:
    """record returns the repeat anomaly on the third identical call."""
    monitor = Monitor(tick=1)
    results = [monitor.record("search", {"q": "x"}, output="plenty of results", now=at(i)) for i in range(3)]
    assert results[:2] == [None, None]
    assert results[2] is not None and results[2].kind == "repeat" and results[2].action == 3
    assert monitor.tick_anomalies == [results[2]]


def test_each_kind_is_kept_once_per_tick_and_reported_again_while_it_goes_on() -> None:
    """Further repeats in the same tick come back flagged ``again``, kept once; a new tick reports anew."""
    monitor = Monitor(tick=1)
    results = [monitor.record("search", {"q": "x"}, output="plenty of results", now=at(i)) for i in range(6)]
    # repeat at the third call, recurring (the same call and result five times) at the fifth.
    assert [r.kind if r else None for r in results] == [None, None, "repeat", "repeat", "recurring", "repeat"]
    assert [r.again if r else None for r in results] == [None, None, False, True, False, True]
    assert results[3] is not None and results[3].evidence["count"] == 4 and results[3].action == 4
    assert [a.kind for a in monitor.tick_anomalies] == ["repeat", "recurring"]
    assert "again" not in results[3].model_dump()  # never saved or journaled as such
    monitor.start_tick(2)
    assert monitor.tick_anomalies == []
    again = monitor.record("search", {"q": "x"}, output="plenty of results", now=at(9))
    assert again is not None and again.tick == 2 and again.evidence["count"] == 7 and not again.again


def test_a_pattern_that_stops_is_no_longer_reported() -> None:
    """Once the repeating call changes, the next action reports nothing (not the old finding)."""
    monitor = Monitor(tick=1)
    for i in range(4):
        monitor.record("search", {"q": "x"}, output="plenty of results", now=at(i))
    assert monitor.record("search", {"q": "other"}, output="other results", now=at(5)) is None


def test_a_new_finding_is_returned_before_one_seen_again() -> None:
    """An action that continues a repeat and trips a new kind returns the new kind, unflagged."""
    monitor = Monitor(tick=1)
    results = [monitor.record("search", {"q": "x"}, output="plenty of results", now=at(i)) for i in range(5)]
    assert results[4] is not None and results[4].kind == "recurring" and not results[4].again


def test_one_action_can_trip_several_kinds_and_returns_the_first() -> None:
    """repeat and empty on the same action: both are kept, repeat is returned."""
    monitor = Monitor()
    monitor.record("search", {"q": "x", "page": 1}, output="12 hits, the first of them ...", now=at(0))
    results = [monitor.record("search", {"q": "x", "page": 2}, output="", now=at(i)) for i in range(1, 4)]
    assert results[2] is not None and results[2].kind == "repeat"
    assert [a.kind for a in monitor.tick_anomalies] == ["repeat", "empty"]


def test_a_stall_spread_over_heartbeats_is_seen_from_persisted_state() -> None:
    """One identical call per heartbeat, each heartbeat a new Monitor seeded from the last: repeat."""
    history: list[ActionRecord] = []
    found = []
    for tick in range(1, 4):
        monitor = Monitor(history=history, actions_total=len(history), tick=tick)
        found.append(monitor.record("get_report", {"day": "today"}, output="same report", now=at(tick)))
        history = monitor.history
    assert found[:2] == [None, None]
    assert found[2] is not None and found[2].kind == "repeat" and found[2].tick == 3


def test_seeded_monitor_continues_a_loop_across_heartbeats() -> None:
    """A search/read cycle split over heartbeats is still a loop."""
    history: list[ActionRecord] = []
    anomalies: list[Anomaly] = []
    for tick, (tool, args) in enumerate([("search", {"q": 1}), ("read", {"u": 1})] * 2, 1):
        monitor = Monitor(history=history, tick=tick)
        if (hit := monitor.record(tool, args, output="a long enough output", now=at(tick))) is not None:
            anomalies.append(hit)
        history = monitor.history
    assert [(a.kind, a.tick, a.action) for a in anomalies] == [("loop", 4, 4)]


def test_error_rate_is_checked_only_after_an_errored_action() -> None:
    """A success in a failing window reports nothing; the next failure trips error_rate."""
    cfg = DetectorsConfig(
        error_rate=ErrorRateConfig(window=4, threshold=0.5),
        recurring_error=RecurringErrorConfig(enabled=False),
    )
    monitor = Monitor(cfg)
    for i in range(3):
        monitor.record("fetch", {"u": i}, error="503", now=at(i))
    assert [a.kind for a in monitor.tick_anomalies] == []
    assert monitor.record("fetch", {"u": 3}, output="fine now, thanks", now=at(3)) is None
    hit = monitor.record("fetch", {"u": 4}, error="503", now=at(4))
    assert hit is not None and hit.kind == "error_rate"
    assert hit.message.startswith("3 of 4 actions failed (75%), last: fetch: 503")


def test_empty_is_checked_only_after_an_action_with_output() -> None:
    """Actions that report no output neither count as empty nor trip it."""
    monitor = Monitor(DetectorsConfig(repeat=RepeatConfig(enabled=False)))
    for i in range(5):
        assert monitor.record("write", {"i": i}, now=at(i)) is None
    monitor.record("search", {"i": 0}, output="a real answer, long enough", now=at(9))
    hits = [monitor.record("search", {"q": q}, output=" ", now=at(10 + i)) for i, q in enumerate("abc")]
    assert hits[:2] == [None, None] and hits[2] is not None and hits[2].kind == "empty"


def test_flat_progress_trips_no_progress_once_per_tick() -> None:
    """Four flat samples trip no_progress on the fourth; a missing value is not checked."""
    monitor = Monitor()
    found = []
    for tick in range(1, 5):
        monitor.start_tick(tick)
        found.append(monitor.add_progress(7, now=at(tick)))
    assert found[:3] == [None] * 3
    assert found[3] is not None and found[3].kind == "no_progress" and "stayed at 7" in found[3].message
    assert monitor.add_progress(7, now=at(6)) is None  # already reported in this tick
    monitor.start_tick(6)
    assert monitor.add_progress(None, now=at(7), error="metric timed out") is None
    assert monitor.progress[-1].error == "metric timed out"


def test_polling_tool_with_its_own_threshold_stays_silent() -> None:
    """get_status with a threshold of 10 may poll nine times with the same answer, not ten."""
    cfg = DetectorsConfig(repeat=RepeatConfig(tools={"get_status": 10}))
    monitor = Monitor(cfg)
    hits = [monitor.record("get_status", None, output="job 17 is running", now=at(i)) for i in range(10)]
    assert hits[:9] == [None] * 9 and monitor.tick_anomalies[:1] == hits[9:]
    assert hits[9] is not None and hits[9].kind == "repeat"
    # The tool's own threshold holds for recurring too: the same answer the tenth time.
    assert [a.kind for a in monitor.tick_anomalies] == ["repeat", "recurring"]


def test_polling_tool_trips_repeat_when_its_result_stops_changing() -> None:
    """Changing results are fine; the third identical result trips repeat."""
    monitor = Monitor(DetectorsConfig(polling=["get_status"]))
    outputs = ["job 17: 10% done", "job 17: 40% done"] + ["job 17: 70% done"] * 3
    hits = [monitor.record("get_status", {"job": 1}, output=o, now=at(i)) for i, o in enumerate(outputs)]
    assert hits[:4] == [None] * 4
    assert hits[4] is not None and "the same result" in hits[4].message


def test_volatile_args_do_not_hide_a_repeat() -> None:
    """A request id that changes each call does not make the call new."""
    monitor = Monitor(DetectorsConfig(volatile_args=["request_id"]))
    hits = [
        monitor.record("search", {"q": "x", "request_id": i}, output="a long enough output", now=at(i))
        for i in range(3)
    ]
    assert hits[2] is not None and hits[2].kind == "repeat"
    assert "request_id" not in monitor.history[-1].summary


def test_exempt_tools_are_recorded_but_never_checked() -> None:
    """An exempt tool goes into the history; no detector looks at it and it breaks no run."""
    monitor = Monitor(DetectorsConfig(exempt=["log"]))
    hits = []
    for i in range(3):
        hits.append(monitor.record("log", {"line": "same"}, output="", now=at(2 * i)))
        hits.append(monitor.record("search", {"q": "x"}, output="a long enough output", now=at(2 * i + 1)))
    assert [h.kind if h else None for h in hits] == [None] * 5 + ["repeat"]
    assert [r.tool for r in monitor.history].count("log") == 3


def test_an_answer_of_nothing_is_recorded_with_its_own_length() -> None:
    """A search's "No results for '...'" is an answer of nothing to the detectors, and the record
    keeps its real length: the journal, ESCALATION.md and the report said "9 chars" (the length of
    "not found") of 38 to 45 characters until 2026-12-06 (live round 45, M1)."""
    monitor = Monitor()
    answers = [f"No results for '{q}'." for q in ("Severn barrage study", "Orkney stream output", "x")]
    for i, answer in enumerate(answers):
        monitor.record("search", {"q": answer[16:-2]}, output=answer, now=at(i))
    assert [r.output_len for r in monitor.history] == [len(a) for a in answers]


def test_history_and_progress_are_bounded() -> None:
    """The kept lists never grow past their limits; actions_total keeps counting."""
    monitor = Monitor()
    for i in range(HISTORY_LIMIT + 50):
        monitor.record("list", {"cursor": i}, output="a long enough output", now=at(i))
        monitor.add_progress(float(i), now=at(i))
    assert len(monitor.history) == monitor.history_limit == HISTORY_LIMIT
    assert monitor.history[-1].index == monitor.actions_total == HISTORY_LIMIT + 50
    assert len(monitor.progress) == PROGRESS_LIMIT


def test_history_limit_grows_with_the_largest_window() -> None:
    """A loop window of 500 keeps 500 actions; seeding trims a longer history."""
    cfg = DetectorsConfig(loop=LoopConfig(window=500))
    assert Monitor(cfg).history_limit == 500
    long = Monitor(history_limit=1000)
    for i in range(700):
        long.record("list", {"cursor": i}, now=at(i))
    seeded = Monitor(history=long.history)
    assert len(seeded.history) == HISTORY_LIMIT and seeded.history[0].index == 700 - HISTORY_LIMIT + 1
    assert seeded.actions_total == 700


def test_explicit_detectors_and_plain_functions() -> None:
    """detectors= replaces the built-ins; a plain function is wrapped and run after each action."""
    seen: list[int] = []

    def costly(history: History, now: datetime) -> Anomaly | None:
        last = history.last
        assert last is not None
        seen.append(len(history.actions))
        if last.cost > 1:
            return Anomaly(
                kind="costly",
                message=f"{last.tool} cost {last.cost}",
                tick=history.tick,
                action=last.index,
                at=now,
                tool=last.tool,
            )
        return None

    monitor = Monitor(detectors=[costly, Repeat(threshold=2)])
    assert [d.kind for d in monitor.detectors] == ["costly", "repeat"]
    assert monitor.record("llm", {"p": 1}, cost=0.5, now=at(0)) is None
    hit = monitor.record("llm", {"p": 2}, cost=3.0, now=at(1))
    assert hit is not None and hit.kind == "costly" and seen == [1, 2]


def test_a_detector_returning_junk_is_a_type_error() -> None:
    """A custom detector must return an Anomaly or None."""

    def junk(history: History, now: datetime) -> Any:
        return "stuck!"

    monitor = Monitor(detectors=[junk])
    with pytest.raises(TypeError, match="not an Anomaly"):
        monitor.record("x", None, now=T0)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"tool": ""}, TypeError),
        ({"tool": 3}, TypeError),
        ({"cost": -1.0}, ValueError),
        ({"cost": float("nan")}, ValueError),
        ({"cost": True}, ValueError),
        ({"now": datetime(2024, 1, 1)}, ValueError),
    ],
)
def test_record_refuses_bad_input(kwargs: dict[str, Any], error: type[Exception]) -> None:
    """A bad tool, cost or naive time is refused before anything is recorded."""
    monitor = Monitor()
    call: dict[str, Any] = {"tool": "search", "now": T0, **kwargs}
    with pytest.raises(error):
        monitor.record(call.pop("tool"), None, **call)
    assert monitor.history == [] and monitor.actions_total == 0


def test_add_progress_refuses_nan() -> None:
    """A NaN progress value is a bug in the metric, not a sample."""
    with pytest.raises(ValueError, match="finite"):
        Monitor().add_progress(float("nan"), now=T0)


def test_an_integer_cost_is_kept_as_a_float() -> None:
    """cost=2 is recorded as 2.0."""
    monitor = Monitor()
    monitor.record("llm", None, cost=2, now=T0)
    assert monitor.history[0].cost == 2.0 and isinstance(monitor.history[0].cost, float)


def test_repr_names_the_detectors() -> None:
    """The repr shows the tick, the counts and the detector kinds."""
    text = repr(Monitor(tick=3))
    assert "tick=3" in text
    assert (
        "repeat, loop, empty, error_rate, near_repeat, recurring, recurring_error, cycle, no_progress" in text
    )


_steps = st.lists(
    st.tuples(
        st.sampled_from(["search", "read", "log"]),
        st.sampled_from([None, {"q": 1}, {"q": 2}, {"q": 12}]),
        st.sampled_from([None, "", "a long enough output", "x " * 60 + "1", "x " * 60 + "2"]),
        st.sampled_from([None, "boom"]),
        st.booleans(),  # start a new heartbeat (and re-seed) before this action
    ),
    # At most the kept history (HISTORY_LIMIT): a Monitor that is not re-seeded may count a
    # run of repeats past it, which a fresh one seeded from the kept history cannot.
    max_size=HISTORY_LIMIT,
)


@settings(max_examples=150, deadline=None, print_blob=True)  # a failure prints how to replay it
@given(steps=_steps, exempt=st.booleans())
def test_monitor_matches_the_pure_checks_and_reseeding(steps: list[Any], exempt: bool) -> None:
    """Re-seeded each heartbeat or not, the Monitor reports what the pure checks say, each kind kept once.

    Without exempt tools error_rate and recurring_error see failed actions only.
    """
    skipped = {"log"} if exempt else set()
    cfg = DetectorsConfig(
        exempt=sorted(skipped),
        loop=LoopConfig(window=6),
        empty=EmptyConfig(threshold=2),
        error_rate=ErrorRateConfig(window=3),
        no_progress=NoProgressConfig(enabled=False),
    )
    detectors = build_detectors(cfg)
    kept = Monitor(cfg, tick=1)
    history: list[ActionRecord] = []
    tick = 1
    reported: set[str] = set()
    for i, (tool, args, output, error, new_tick) in enumerate(steps):
        if new_tick:
            tick += 1
            kept.start_tick(tick)
            reported = set()
        fresh = Monitor(cfg, history=history, actions_total=len(history), tick=tick)
        hit = fresh.record(tool, args, output=output, error=error, now=at(i))
        history = fresh.history
        kept_hit = kept.record(tool, args, output=output, error=error, now=at(i))
        assert [r.model_dump() for r in kept.history] == [r.model_dump() for r in history]
        visible = [a for a in history if a.tool not in skipped]
        expected = [
            a
            for d in detectors
            if history[-1].tool not in skipped
            and (a := d.check(History(visible, tick=tick), at(i))) is not None
        ]
        new = [a for a in expected if a.kind not in reported]
        reported |= {a.kind for a in new}
        # A new kind first; else the first kind already reported that trips again, flagged so.
        first = new[0] if new else expected[0] if expected else None
        assert (kept_hit.model_dump() if kept_hit else None) == (first.model_dump() if first else None)
        assert (kept_hit.again if kept_hit else None) == (None if first is None else not new)
        # A fresh monitor per action knows nothing of this tick's reports; compare what tripped.
        assert (hit.model_dump() if hit else None) == (expected[0].model_dump() if expected else None)


def test_error_detectors_count_the_actions_between_failures_from_their_indices() -> None:
    """Seeded with actions_total past the kept history, the failure windows still count actions.

    error_rate and recurring_error skip successful actions and move their windows by index;
    each answer must be what their pure checks say about the kept history.
    """
    seed = Monitor(detectors=[])
    for i, error in enumerate(["boom", None, "boom", None]):
        seed.record("run", {"i": i % 2}, output="x" * 20, error=error, now=at(i))
    cfg = DetectorsConfig(
        error_rate=ErrorRateConfig(window=4), recurring_error=RecurringErrorConfig(window=4)
    )
    detectors = [d for d in build_detectors(cfg) if d.kind in ("error_rate", "recurring_error")]
    monitor = Monitor(cfg, detectors=detectors, history=seed.history, actions_total=40)
    history = seed.history
    found = []
    for i, error in enumerate([None, "boom", None, "boom", "boom", None, None, None, "boom", None], 10):
        monitor.start_tick(i)
        # One call fails, another passes: a call passing between its own failures is no re-run.
        hit = monitor.record("run", {"i": 0 if error else 1}, output="x" * 20, error=error, now=at(i))
        history = [*history, monitor.history[-1]]
        expected = [a for d in detectors if (a := d.check(History(history, tick=i), at(i))) is not None]
        assert (hit and hit.model_dump()) == (expected[0].model_dump() if expected else None)
        found.extend(a.kind for a in expected)
    assert "error_rate" in found and "recurring_error" in found  # the windows did fill and trip


def test_loop_window_500_costs_no_rescans() -> None:
    """Recording stays correct at window 500: a late cycle is found, with the shortest period."""
    monitor = Monitor(detectors=[Loop(window=500)])
    for i in range(400):
        monitor.record("list", {"cursor": i}, now=at(i))
    hits = [monitor.record(t, {"k": 1}, now=at(500 + i)) for i, t in enumerate(["a", "b", "c"] * 2)]
    assert hits[-1] is not None and hits[-1].evidence["period"] == 3
    assert [h for h in hits[:-1] if h] == []


def test_progress_samples_seed_no_progress() -> None:
    """Samples persisted from earlier heartbeats count toward the flat run."""
    samples = [ProgressSample(tick=t, at=at(t), value=1.0) for t in range(1, 5)]
    monitor = Monitor(progress=samples, tick=5)
    hit = monitor.add_progress(1.0, now=at(5))
    assert hit is not None and hit.kind == "no_progress" and hit.tick == 5


def test_a_custom_tracker_is_used_instead_of_check() -> None:
    """A custom detector offering tracker() gets pushes, and its check is never called."""

    class CountingTracker:
        def __init__(self, seeded: int) -> None:
            self.count = seeded

        def push(self, action: ActionRecord) -> Anomaly | None:
            self.count += 1
            if self.count < 4:
                return None
            return Anomaly(
                kind="busy",
                message=f"{self.count} actions",
                tick=action.tick,
                action=action.index,
                at=action.at,
            )

    class Busy:
        kind = "busy"

        def check(self, history: History, now: datetime) -> Anomaly | None:
            raise AssertionError("the tracker should be used")

        def tracker(self, history: History) -> CountingTracker:
            return CountingTracker(len(history.actions))

    seed = Monitor()
    for i in range(2):
        seed.record("x", {"i": i}, now=at(i))
    monitor = Monitor(detectors=[Busy()], history=seed.history)
    assert monitor.record("x", {"i": 2}, now=at(2)) is None
    hit = monitor.record("x", {"i": 3}, now=at(3))
    assert hit is not None and hit.message == "4 actions"


@settings(max_examples=150, deadline=None, print_blob=True)  # a failure prints how to replay it
@given(steps=_steps, exempt=st.booleans())
def test_reseeding_at_start_tick_answers_like_a_monitor_built_from_the_kept_state(
    steps: list[Any], exempt: bool
) -> None:
    """start_tick(reseed=True) = a new Monitor from history/progress/actions_total; the runner's way."""
    cfg = DetectorsConfig(
        exempt=["log"] if exempt else [],
        loop=LoopConfig(window=6),
        empty=EmptyConfig(threshold=2),
        error_rate=ErrorRateConfig(window=3),
        no_progress=NoProgressConfig(samples=2),
    )
    kept = Monitor(cfg, tick=1)
    fresh = Monitor(cfg, tick=1)
    tick = 1
    for i, (tool, args, output, error, new_tick) in enumerate([*steps, *steps]):
        if new_tick:
            tick += 1
            kept.start_tick(tick, reseed=True)
            fresh = Monitor(
                cfg,
                history=fresh.history,
                progress=fresh.progress,
                actions_total=fresh.actions_total,
                tick=tick,
            )
            fresh.start_tick(tick)
            assert kept.add_progress(float(i % 2), now=at(i)) == fresh.add_progress(float(i % 2), now=at(i))
        got = kept.record(tool, args, output=output, error=error, now=at(i))
        want = fresh.record(tool, args, output=output, error=error, now=at(i))
        assert (got and got.model_dump()) == (want and want.model_dump())
    assert [r.model_dump() for r in kept.history] == [r.model_dump() for r in fresh.history]


def test_trackers_that_slide_answer_like_ones_seeded_from_a_short_kept_history(rng: random.Random) -> None:
    """repeat, empty and no_progress slide with the kept history instead of a reseed; every answer is
    a fresh Monitor's, also when runs, quiet shapes and flat values outlast a short kept history."""
    for _ in range(60):
        limit = rng.randint(2, 12)
        cfg = DetectorsConfig(
            exempt=["log"] if rng.random() < 0.3 else [],
            empty=EmptyConfig(threshold=rng.randint(1, 4), max_chars=rng.choice([0, 5, 10])),
            no_progress=NoProgressConfig(samples=rng.randint(2, 6)),
            repeat=RepeatConfig(
                threshold=rng.randint(2, 5), tools={"read": "off"} if rng.random() < 0.3 else {}
            ),
        )
        kept, fresh = Monitor(cfg, tick=1, history_limit=limit), Monitor(cfg, tick=1, history_limit=limit)
        unmeasured, again = rng.random(), rng.random()  # how often a sample is None, an action the last
        action: tuple[Any, ...] = ("search", None, None, None)
        for i in range(rng.randint(50, 300)):
            if rng.random() < 0.35:
                kept.start_tick(kept.tick + 1, reseed=True)
                fresh = Monitor(
                    cfg, history=fresh.history, progress=fresh.progress, actions_total=fresh.actions_total,
                    tick=kept.tick, history_limit=limit,
                )  # fmt: skip
                value = None if rng.random() < unmeasured else rng.choice([1.0, 1.005, 2.0, float(i)])
                got, want = kept.add_progress(value, now=at(i)), fresh.add_progress(value, now=at(i))
                assert (got and got.model_dump()) == (want and want.model_dump())
            if rng.random() >= again:
                action = (
                    rng.choice(["search", "read", "log"]),
                    rng.choice([None, {"q": 1}, {"q": 2}, {"q": rng.randint(0, 50)}]),
                    rng.choice([None, "", "ok", "a long enough output", "x " * 30 + str(rng.randint(0, 3))]),
                    rng.choice([None, None, None, "boom"]),
                )
            tool, args, output, error = action
            got = kept.record(tool, args, output=output, error=error, now=at(i))
            want = fresh.record(tool, args, output=output, error=error, now=at(i))
            assert (got and got.model_dump()) == (want and want.model_dump())


def test_trackers_after_one_that_raised_are_seeded_anew_not_slid() -> None:
    """A tracker that raises leaves the ones after it without that action: the next reseed seeds
    them from the kept history instead of letting them slide, so they answer as a fresh Monitor."""

    class Boom:
        kind = "boom"

        def check(self, history: History, now: datetime) -> Anomaly | None:
            return None

        def tracker(self, history: History) -> Boom:
            return self

        def push(self, action: ActionRecord) -> Anomaly | None:
            if action.tool == "fail":
                raise RuntimeError("boom")
            return None

    detectors = [Boom(), Repeat(threshold=3)]
    kept = Monitor(detectors=detectors, tick=1)
    for i in range(2):
        kept.record("search", {"q": "x"}, output="same page", now=at(i))
    with pytest.raises(RuntimeError):
        kept.record("fail", None, now=at(2))  # in the history; repeat never took it
    kept.start_tick(2, reseed=True)
    fresh = Monitor(detectors=detectors, history=kept.history, actions_total=kept.actions_total, tick=2)
    # Slid, repeat would count a third search in a row; the history has a fail between.
    assert kept.record("search", {"q": "x"}, output="same page", now=at(3)) is None
    assert fresh.record("search", {"q": "x"}, output="same page", now=at(3)) is None


def test_a_long_run_is_counted_within_the_kept_history_after_a_reseed() -> None:
    """Without reseed a repeat run is counted past the kept history; reseeding counts as a fresh Monitor."""
    carried, reseeded = Monitor(tick=1), Monitor(tick=1)
    for tick in range(1, 9):
        carried.start_tick(tick)
        reseeded.start_tick(tick, reseed=True)
        for i in range(5):  # the first call of each heartbeat reports the run so far
            hits = (
                carried.record("search", {"q": "x"}, output="same page", now=at(tick * 10 + i)),
                reseeded.record("search", {"q": "x"}, output="same page", now=at(tick * 10 + i)),
            )
            if i == 0 and tick > 1:
                first = hits
    long, bounded = first
    assert long is not None and bounded is not None
    assert long.evidence["count"] == 36
    assert bounded.evidence["count"] == HISTORY_LIMIT + 1


def test_progress_samples_are_built_like_validated_ones() -> None:
    """add_progress's unvalidated sample equals a validated ProgressSample."""
    monitor = Monitor(tick=3)
    monitor.add_progress(2, now=T0, error="x" * 500)
    monitor.add_progress(None, now=at(1))
    for sample in monitor.progress:
        again = ProgressSample.model_validate(sample.model_dump())
        assert again == sample and again.model_dump_json() == sample.model_dump_json()
        assert again.model_fields_set == sample.model_fields_set
        assert again.model_fields_set == sample.model_fields_set


def test_light_records_read_back_as_the_records_a_custom_detector_gets() -> None:
    """The default Monitor's light records build the same ActionRecords a custom detector gets."""
    light, full = (
        Monitor(),
        Monitor(detectors=[*build_detectors(DetectorsConfig()), lambda history, now: None]),
    )
    assert light._light and not full._light
    for i, args in enumerate([None, {}, {"q": "x" * 300}, {"b": [1, 2], "a": {"z": None}}, {"k": 5}]):
        for monitor in (light, full):
            monitor.record(
                "tool", args, output="out" if i % 2 else None, error="e" if i == 3 else None, now=at(i)
            )
    assert [r.model_dump() for r in light.history] == [r.model_dump() for r in full.history]
    assert light.history[2].summary.endswith("…") and len(light.history[2].summary) == 200


def test_records_and_anomalies_built_without_validation_copy_with_updates() -> None:
    """model_copy(update=...) works on what the Monitor builds, as on validated models."""
    for monitor in (
        Monitor(),
        Monitor(detectors=[*build_detectors(DetectorsConfig()), lambda history, now: None]),
    ):
        hits = [monitor.record("search", {"q": "x"}, output="same page", now=at(i)) for i in range(3)]
        anomaly = hits[-1]
        assert anomaly is not None
        assert anomaly.model_copy(update={"message": "m"}).message == "m"
        record = monitor.history[-1]
        assert record.model_copy(update={"shape": None}).shape is None
        assert record.model_fields_set == set(type(record).model_fields)


def _pager(monitor: Monitor, ticks: int, per: int, *, rising: bool, same: bool = False) -> list[list[str]]:
    """A pager over ``ticks`` heartbeats of ``per`` reads: each tick's reported kinds."""
    found: list[list[str]] = []
    n = 0
    for tick in range(1, ticks + 1):
        monitor.start_tick(tick, reseed=True)
        for _ in range(per):
            n += 1
            page = 1 if same else n
            text = f"Page {page}: revenue rose {page}% here"
            monitor.record("read_page", {"cursor": n}, output=text, now=T0)
        monitor.add_progress(float(n if rising else 0), now=T0)
        found.append([a.kind for a in monitor.tick_anomalies])
    return found


def test_a_rising_metric_overrules_findings_of_no_visible_effect() -> None:
    """One shape of call, numbers changing, the same page each time but the metric rising each
    heartbeat: nothing is stuck; the same pager with a flat metric trips near_repeat (and
    no_progress). A pager bringing a new page each time is reading: only the flat metric speaks."""
    rising = _pager(Monitor(), 20, 5, rising=True, same=True)
    # no evidence before two samples: the first is the baseline the second rises from, and the
    # second, measured after the second heartbeat's actions, overrules what they showed
    assert rising[:1] == [["recurring"]]
    assert rising[1:] == [[]] * 19
    flat = _pager(Monitor(), 6, 5, rising=False, same=True)
    assert "near_repeat" in flat[2] and "no_progress" in flat[3]
    reading = _pager(Monitor(), 6, 5, rising=False)
    assert [kinds for kinds in reading if kinds] == [["no_progress"]] * 3


def test_an_identical_call_with_an_identical_result_stands_whatever_the_metric() -> None:
    """repeat is not overruled: the same call, the same answer, back to back."""
    monitor = Monitor()
    monitor.start_tick(1)
    for value in (1.0, 2.0):
        monitor.add_progress(value, now=T0)
    monitor.start_tick(2)
    kinds = [monitor.record("get", {"id": 1}, output="the same long answer", now=T0) for _ in range(3)]
    assert [k and k.kind for k in kinds] == [None, None, "repeat"]


def test_a_rise_speaks_only_for_the_stretch_that_holds_actions_from_before_it() -> None:
    """After the metric stops rising, a detector judges alone again once its window holds
    no action from before the last rise: recurring (window 30) fires again at action 30 + 5,
    near_repeat (window 15; its look-back of 2W for old ground only qualifies what it counts)
    at 15 + 5."""
    monitor = Monitor()
    monitor.start_tick(1)
    for i in range(5):
        body = f"item {i} body text, different each time"
        monitor.record("fetch", {"url": f"/items/{i}"}, output=body, now=T0)
    monitor.add_progress(0.0, now=T0)
    monitor.add_progress(5.0, now=T0)  # rose: speaks for actions 1..5
    assert monitor.rise_index == 5
    assert monitor.overruled("recurring", 34) and not monitor.overruled("recurring", 35)
    # repeat's stretch is its N calls: a run that goes on past the rise is judged again.
    assert monitor.overruled("repeat", 7) and not monitor.overruled("repeat", 8)
    hits: list[list[str]] = []
    for tick in range(2, 10):  # actions 6..45, five a heartbeat, the metric flat
        monitor.start_tick(tick)
        for i in range(5):
            url = f"/items/{tick * 5 + i}"
            monitor.record("fetch", {"url": url}, output="the same body every time", now=T0)
        hits.append([f"{a.kind}@{a.action}" for a in monitor.tick_anomalies])
        monitor.add_progress(5.0, now=T0)
    # recurring would fire at the 5th same result (action 10), but the rise at action 5 is
    # inside its window of 30 until action 35; near_repeat counts over 15 (its old ground
    # over 30 only qualifies those), so the rise is out of its stretch at action 20
    found = [kind for tick in hits for kind in tick]
    assert next(k for k in found if k.startswith("recurring@")) == "recurring@35"
    assert next(k for k in found if k.startswith("near_repeat@")) == "near_repeat@20"


def test_the_rise_is_the_same_for_a_monitor_seeded_from_the_saved_state() -> None:
    """A kept Monitor and one built from its history and samples agree on the last rise."""
    kept = Monitor()
    for tick in range(1, 5):
        kept.start_tick(tick, reseed=True)
        for i in range(3):
            kept.record("read_page", {"cursor": tick * 10 + i}, output=f"page {tick}.{i}", now=T0)
        kept.add_progress(float(min(tick, 2)), now=T0)
    fresh = Monitor(history=kept.history, progress=kept.progress, actions_total=kept.actions_total, tick=4)
    assert kept.rise_index == fresh.rise_index == 6  # the metric last rose after tick 2's actions


def test_a_rise_that_appears_when_an_old_high_is_trimmed_is_seen_by_a_kept_monitor_too() -> None:
    """A rise is a new high among the kept samples: once the old high of 5 is trimmed from them, the
    climb from 3 to 4 is one. A kept Monitor finds it at its next heartbeat, as a fresh one seeded
    from the same samples does, also when the sample that pushed the high out was unmeasured (it
    was looked for again only when a rise was already known, until 2026-12-03)."""
    kept = Monitor()
    values: list[float | None] = [5.0, 3.0, 4.0, *[None] * (PROGRESS_LIMIT - 2)]
    for tick, value in enumerate(values, 1):
        kept.start_tick(tick, reseed=True)
        kept.record("read", {"page": tick}, output=f"page {tick} of the report", now=T0)
        kept.add_progress(value, now=T0)
    kept.start_tick(kept.tick + 1, reseed=True)
    fresh = Monitor(
        history=kept.history, progress=kept.progress, actions_total=kept.actions_total, tick=kept.tick
    )
    assert kept.progress[0].value == 3.0  # the high of 5 is gone
    assert kept.rise_index == fresh.rise_index > 0


def test_record_keys_answers_as_record_did_from_the_keys_alone() -> None:
    """A Monitor fed the keys another one computed (a journal's) reports the same, action by action."""
    live, replayed = Monitor(tick=1), Monitor(tick=1)
    rng = random.Random(5)
    for i in range(300):
        if i % 7 == 0:
            live.start_tick(i // 7 + 1, reseed=True)
            replayed.start_tick(i // 7 + 1, reseed=True)
        tool = rng.choice(["search", "read", "run"])
        args = {"q": rng.choice(["a", "b", f"c{i % 4}"])}
        output = rng.choice([None, "", "same long output of the tool", f"result {i % 3}"])
        error = rng.choice([None, None, None, "ValueError: bad"])
        hit = live.record(tool, args, output=output, error=error, now=at(i))
        newest = live.newest
        assert newest is not None
        keys = {**journal_keys(newest), "summary": newest.summary, "output_len": newest.output_len}
        again = replayed.record_keys(tool, keys, error=newest.error, cost=newest.cost, now=at(i))
        assert (again.model_dump() if again else None) == (hit.model_dump() if hit else None)
        assert (again.again if again else None) == (hit.again if hit else None)
    assert [r.model_dump() for r in replayed.history] == [r.model_dump() for r in live.history]


def test_an_agent_naming_a_new_tool_at_every_call_grows_no_index_for_ever() -> None:
    """The last success and last failure kept per tool name are forgotten once old, so a long-lived
    Monitor fed a new tool name at every call stays bounded; detection is unchanged meanwhile."""
    from heartbeat.detect.detectors.window import NAMES_KEPT

    monitor = Monitor()
    monitor.start_tick(1)
    for i in range(3 * NAMES_KEPT):
        monitor.record(f"tool_{i}", {"i": i}, output=f"answer {i}", error="boom" if i % 2 else None, now=T0)
    # White-box: the two indexes themselves (the Monitor's and recurring_error's tracker's).
    trackers = [step.__self__ for _, _, step, _ in monitor._steps if hasattr(step, "__self__")]
    failed = [t._failed for t in trackers if hasattr(t, "_failed")]
    assert failed and all(len(index) <= NAMES_KEPT + 1 for index in failed)
    assert len(monitor._successes) <= NAMES_KEPT + 1


@dataclass(frozen=True)
class _Busy:
    """A custom detector that fires on every action, with or without a declared stretch."""

    stretch: int | None = None
    kind: str = "busy"

    def check(self, history: History, now: datetime) -> Anomaly | None:
        last = history.actions[-1]
        return Anomaly(kind=self.kind, message="busy", tick=last.tick, action=last.index, at=now)


def test_a_custom_detector_that_declares_a_stretch_is_overruled_by_a_rise_within_it() -> None:
    """Declaring ``stretch`` says a finding only guesses that the calls had no effect: a rise
    within its last ``stretch`` actions overrules it; a detector that declares none stands."""
    found: dict[int | None, list[int | None]] = {}
    for stretch in (4, None):
        monitor = Monitor(detectors=[_Busy(stretch)])
        monitor.start_tick(1)
        monitor.record("work", {"i": 0}, output="done 0", now=T0)
        monitor.add_progress(0.0, now=T0)
        monitor.add_progress(1.0, now=T0)  # rose: speaks for action 1
        monitor.start_tick(2)
        hits = [monitor.record("work", {"i": i}, output=f"done {i}", now=T0) for i in range(1, 6)]
        found[stretch] = [hit and hit.action for hit in hits]
    # actions 2..4 hold action 1 in their last 4; from 5 on the detector judges alone again
    assert found == {4: [None, None, None, 5, 6], None: [2, 3, 4, 5, 6]}


def test_an_edit_saying_it_changed_nothing_is_recorded_as_failed() -> None:
    """An editing tool that answers "No replacement was performed" failed, whichever channel it
    says so on: recorded with that line as its error, as a failure reported as one would be, so
    the same edit refused three times is a recurring error; an edit that applied is no failure."""
    refused = "No replacement was performed, old_str `x = 1` did not appear verbatim in /a.py."
    monitor = Monitor()
    found = [
        monitor.record("str_replace_editor", {"old_str": "x = 1", "new": n}, output=refused, now=T0)
        for n in range(3)
    ]
    said = refused.replace("`x = 1`", "`…`")  # the old_str it quotes back is the call's own
    assert [r.error for r in monitor.history] == [said] * 3
    assert found[2] is not None and found[2].kind == "recurring_error"
    monitor.record("str_replace_editor", {"old_str": "x=1"}, output="The file /a.py has been edited.", now=T0)
    assert monitor.history[-1].error is None


def test_an_answer_opening_with_error_is_recorded_as_failed() -> None:
    """tau-bench's tools return their failures as text: the same refusal three times, in three
    reshuffled calls, is a recurring error, as the corpus's runs (which mark it ``tool_error``) are."""
    monitor = Monitor()
    refused = "Error: non-pending order cannot be cancelled"
    found = [
        monitor.record("cancel_pending_order", {"order_id": "#W1", "reason": r}, output=refused, now=T0)
        for r in ("no longer needed", "ordered by mistake", "no longer needed ")
    ]
    assert [r.error for r in monitor.history] == [refused] * 3
    assert found[2] is not None and found[2].kind == "recurring_error"
