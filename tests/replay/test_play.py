"""Replay: fixture traces through Monitor and decide, the --json contract, the table, bad lines."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heartbeat.base.errors import TraceError, UsageError
from heartbeat.config.file import (
    DetectorsConfig,
    HeartbeatConfig,
    NoProgressConfig,
    PolicyConfig,
    RecurringConfig,
    RepeatConfig,
    ScheduleConfig,
)
from heartbeat.replay.play import SYNTHETIC_START, load_trace, render_json, render_table, replay
from heartbeat.replay.run import run_replay

TRACES = Path(__file__).parent.parent / "traces"


def replay_json(name: str, config: HeartbeatConfig | None = None) -> list[dict[str, Any]]:
    """``heartbeat replay TRACE --json`` over a fixture, one parsed object per output line."""
    out = io.StringIO()
    assert run_replay(TRACES / name, config or HeartbeatConfig(), as_json=True, out=out) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def shape(rows: list[dict[str, Any]]) -> list[tuple[int, list[tuple[str, int | None]], str, int]]:
    """Each tick as (tick, [(kind, action)], decision, stuck_streak)."""
    return [
        (r["tick"], [(a["kind"], a["action"]) for a in r["anomalies"]], r["decision"], r["stuck_streak"])
        for r in rows
    ]


def test_stuck_trace_replays_line_for_line_and_stops_at_escalate() -> None:
    """One identical search per heartbeat: repeat at tick 3; at tick 4 the agent makes the very call
    the recovery said to avoid, so a human is called; the later ticks never run. The metric has been
    flat for 4 samples, but over a watcher's rounds (the same look each heartbeat): no
    ``no_progress``, the repeat says it all."""
    out = io.StringIO()
    run_replay(TRACES / "stuck_repeat.jsonl", HeartbeatConfig(), as_json=True, out=out)
    repeat = (
        'search({\\"q\\":\\"grid storage\\"}) was called {n} times in a row '
        "with the same arguments and the same result (limit 3)"
    )
    expected = [
        '{"tick": 1, "anomalies": [], "decision": "continue", "stuck_streak": 0}',
        '{"tick": 2, "anomalies": [], "decision": "continue", "stuck_streak": 0}',
        '{"tick": 3, "anomalies": [{"kind": "repeat", "action": 3, "message": "'
        + repeat.replace("{n}", "3")
        + '"}], "decision": "try_alternative", "stuck_streak": 1}',
        '{"tick": 4, "anomalies": [{"kind": "repeat", "action": 4, "message": "'
        + repeat.replace("{n}", "4")
        + '"}], "decision": "escalate", "stuck_streak": 2}',
    ]
    assert out.getvalue().splitlines() == expected


def test_healthy_trace_continues_every_tick() -> None:
    """New arguments, an advancing cursor and rising progress: continue throughout."""
    assert shape(replay_json("healthy.jsonl")) == [(t, [], "continue", 0) for t in range(1, 5)]


def test_loop_is_found_and_a_clean_tick_recovers() -> None:
    """A fixed search/read cycle trips loop at action 4; two clean ticks end the stuck stretch."""
    rows = replay_json("loop_recover.jsonl")
    assert shape(rows) == [
        (1, [("loop", 4)], "try_alternative", 1),
        (2, [], "continue", 1),
        (3, [], "continue", 0),
    ]
    assert (
        'search({"q":"soil carbon"}) -> read({"url":"https://example.org/soil"})'
        in (rows[0]["anomalies"][0]["message"])
    )


def test_error_rate_is_numbered_across_ticks() -> None:
    """Actions are numbered across the trace: the window fills at action 10. The 503s of a flaky
    API, with answers between them, are its error rate, not one failure coming back (its metric
    flat: a rise measured at the heartbeat's end would overrule it)."""
    rows = replay_json("errors.jsonl")
    assert shape(rows) == [
        (1, [], "continue", 0),
        (2, [("error_rate", 10)], "try_alternative", 1),
        (3, [], "continue", 1),
    ]
    assert rows[1]["anomalies"][0]["message"] == (
        "5 of 10 actions failed (50%), last: fetch: 504 Gateway Timeout; 2 different failure(s) among them"
    )


def test_flat_progress_asks_to_reassess_then_recovers(tmp_path: Path) -> None:
    """Four samples within 0.01 trip no_progress alone: reassess_goal, then a real move continues."""
    quiet = HeartbeatConfig(detectors=DetectorsConfig(recurring=RecurringConfig(enabled=False)))
    rows = replay_json("flat_progress.jsonl", quiet)
    assert shape(rows)[3:] == [
        (4, [("no_progress", None)], "reassess_goal", 1),
        (5, [("no_progress", None)], "reassess_goal", 2),
        (6, [], "continue", 2),
    ]
    assert "moved only 0.004" in rows[4]["anomalies"][0]["message"]
    # With the defaults, the reworded searches that return the same page are caught at action 5,
    # but the metric's rise measured at that heartbeat's end (3 to 3.004: any measured sample above
    # the one before is a rise) speaks for them, and the policy never sees the finding.
    rows = replay_json("flat_progress.jsonl")
    assert shape(rows)[4][1] == [("no_progress", None)]
    still = tmp_path / "still.jsonl"
    still.write_text(
        (TRACES / "flat_progress.jsonl").read_text().replace('"progress": 3.004', '"progress": 3')
    )
    out = io.StringIO()
    assert run_replay(still, HeartbeatConfig(), as_json=True, out=out) == 0
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert shape(rows)[4][1] == [("recurring", 5), ("no_progress", None)]


def test_config_changes_the_replay() -> None:
    """With a repeat threshold of 10 (recurring honours it too), the stuck trace never escalates."""
    config = HeartbeatConfig(
        detectors=DetectorsConfig(
            repeat=RepeatConfig(threshold=10),
            recurring=RecurringConfig(threshold=10),
            no_progress=NoProgressConfig(samples=10),
        ),
        policy=PolicyConfig(escalate_after=3),
    )
    assert [r["decision"] for r in replay_json("stuck_repeat.jsonl", config)] == ["continue"] * 6


def test_bad_line_names_its_line_counting_blank_lines() -> None:
    """The bad line 3 (after a blank line 2) is reported as line 3, before anything is replayed."""
    out = io.StringIO()
    with pytest.raises(TraceError) as caught:
        run_replay(TRACES / "bad_line.jsonl", HeartbeatConfig(), as_json=True, out=out)
    assert caught.value.line == 3
    assert "line 3: actions[0].tool" in str(caught.value) and "string" in str(caught.value)
    assert caught.value.exit_code == 2
    assert out.getvalue() == ""


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "not a JSON object (found an array)"),
        ('"text"', "not a JSON object (found a string)"),
        ('{"progress": "0.5"}', "progress"),
        ('{"progress": NaN}', "progress: must be a finite number"),
        ('{"progress": Infinity}', "progress: must be a finite number"),
        ('{"progress": true}', "progress"),
        ('{"actions": {"tool": "x"}}', "actions: Input should be a valid list"),
        ('{"actions": [{"args": {}}]}', "actions[0].tool: Field required"),
        ('{"actions": [{"tool": "x", "args": [1]}]}', "actions[0].args"),
        ('{"actions": [{"tool": "x", "output": 5}]}', "actions[0].output"),
        ('{"actions": [{"tool": "x", "error": {"code": 503}}]}', "actions[0].error"),
        ('{"actions": [{"tool": "x", "cost": -1}]}', "actions[0].cost"),
        ('{"actions": [{"tool": ""}]}', "actions[0].tool"),
        ('{"at": "yesterday"}', "at: 'yesterday' is not an ISO 8601 time"),
        ('{"at": 1714557600}', "at: must be an ISO 8601 time text"),
    ],
)
def test_bad_lines_are_trace_errors(line: str, words: str) -> None:
    """Each kind of bad line is a TraceError with its line number and what is wrong."""
    with pytest.raises(TraceError) as caught:
        list(replay(['{"progress": 0.1}', "", line], HeartbeatConfig()))
    assert caught.value.line == 3
    assert words in caught.value.reason


def test_a_missing_trace_file_is_a_usage_error(tmp_path: Path) -> None:
    """A path that is not there is one clean error, not a traceback."""
    with pytest.raises(UsageError, match="no such trace file"):
        replay(tmp_path / "nope.jsonl", HeartbeatConfig())


def test_non_utf8_line_is_reported_by_line(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 are a TraceError on their line."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"progress": 1}\n{"actions": [{"tool": "\xff"}]}\n')
    with pytest.raises(TraceError, match="line 2: not UTF-8"):
        replay(path, HeartbeatConfig())


def test_minimal_lines_and_absent_fields_replay() -> None:
    """Empty objects, absent args/output/error and null progress are all valid heartbeats."""
    ticks = list(replay(["{}", '{"actions": [{"tool": "ping"}]}', '{"progress": null}'], HeartbeatConfig()))
    assert [t.tick for t in ticks] == [1, 2, 3]
    assert [t.actions for t in ticks] == [0, 1, 0] and ticks[1].first_action == 1


def test_time_comes_from_at_or_a_synthetic_clock() -> None:
    """``at`` is used as given (naive means UTC); otherwise the clock moves by the schedule interval."""
    config = HeartbeatConfig(schedule=ScheduleConfig(every=timedelta(minutes=15)))
    lines = ["{}", '{"at": "2024-05-01T10:00:00"}', "{}", '{"at": "2024-05-01T12:00:00+02:00"}']
    times = [t.at for t in replay(lines, config)]
    assert times[0] == SYNTHETIC_START
    assert times[1] == datetime(2024, 5, 1, 10, tzinfo=UTC)
    assert times[2] == times[1] + timedelta(minutes=15)
    assert times[3] == datetime(2024, 5, 1, 10, tzinfo=UTC)


def test_anomalies_carry_the_trace_time() -> None:
    """An anomaly's time is its heartbeat's ``at``."""
    ticks = list(replay(TRACES / "stuck_repeat.jsonl", HeartbeatConfig()))
    assert ticks[2].anomalies[0].at == datetime(2024, 5, 1, 11, tzinfo=UTC)
    assert ticks[2].line == 4  # the blank line 3 is counted


def test_replay_matches_a_live_monitor_across_heartbeats() -> None:
    """The decision carries recovery and instructions like the runner would store them."""
    ticks = list(
        replay(TRACES / "stuck_repeat.jsonl", HeartbeatConfig(policy=PolicyConfig(escalate_on_ignored=False)))
    )
    recovery = ticks[3].decision.recovery
    assert recovery is not None and recovery.attempts == 2 and recovery.since_tick == 3
    assert ticks[3].decision.instructions is not None
    assert 'Do not repeat: search({"q":"grid storage"})' in ticks[3].decision.instructions


def test_render_json_is_one_line_with_the_contract_keys() -> None:
    """render_json gives exactly tick, anomalies, decision, stuck_streak on one line."""
    tick = next(iter(replay(TRACES / "loop_recover.jsonl", HeartbeatConfig())))
    text = render_json(tick)
    assert "\n" not in text
    data = json.loads(text)
    assert list(data) == ["tick", "anomalies", "decision", "stuck_streak"]
    assert list(data["anomalies"][0]) == ["kind", "action", "message"]


def test_table_marks_anomalies_and_decisions() -> None:
    """The table has a row per tick, a '!' line per anomaly, '*' on recoveries and a summary."""
    out = io.StringIO()
    run_replay(TRACES / "stuck_repeat.jsonl", HeartbeatConfig(), as_json=False, out=out)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["tick", "actions", "progress", "decision", "streak", "anomalies"]
    rows = [line for line in lines[1:-1] if line.strip()[:1].isdigit()]
    assert len(rows) == 4
    assert "*escalate" in rows[-1] and "! repeat @4:" in rows[-1]
    assert lines[-1] == "replayed 4 heartbeats, 4 actions; escalated at heartbeat 4"


def test_table_of_an_empty_trace() -> None:
    """An empty trace renders a header and says so."""
    assert list(render_table(replay([], HeartbeatConfig())))[-1] == "replayed an empty trace"


def test_load_trace_keeps_line_numbers() -> None:
    """load_trace skips blank lines and keeps each heartbeat's line number."""
    found = load_trace(TRACES / "stuck_repeat.jsonl")
    assert [n for n, _ in found] == [1, 2, 4, 5, 6, 7]


def _reference(lines: list[str], config: HeartbeatConfig) -> list[tuple[int, list[dict[str, Any]], str, int]]:
    """The replay as the runner lives it: a Monitor built afresh from the saved state every heartbeat."""
    from heartbeat.core.models import AgentState
    from heartbeat.core.policy import decide
    from heartbeat.detect.monitor import Monitor

    state = AgentState()
    clock = SYNTHETIC_START
    found: list[tuple[int, list[dict[str, Any]], str, int]] = []
    for tick, (_, line) in enumerate(load_trace(lines), 1):
        now = line.at or clock
        clock = now + (config.schedule.every or timedelta(minutes=30))
        monitor = Monitor(
            config.detectors,
            history=state.history,
            progress=state.progress,
            actions_total=state.actions_total,
            tick=tick,
        )
        monitor.start_tick(tick, turn=line.turn or (None if line.at is None else False))  # as replay
        for a in line.actions:
            monitor.record(a.tool, a.args, output=a.output, error=a.error, cost=a.cost, now=now)
        monitor.add_progress(line.progress, now=now)
        decision = decide(state, monitor.tick_anomalies, now, config.policy)
        state = state.model_copy(
            update={
                "history": monitor.history,
                "progress": monitor.progress,
                "actions_total": monitor.actions_total,
                "stuck_streak": decision.stuck_streak,
                "recovery": decision.recovery,
            }
        )
        found.append(
            (tick, [a.model_dump() for a in monitor.tick_anomalies], decision.action, decision.stuck_streak)
        )
        if decision.action == "escalate":
            break
    return found


_trace_action = st.fixed_dictionaries(
    {"tool": st.sampled_from(["search", "read", "log", "poll"])},
    optional={
        "args": st.sampled_from([{"q": 1}, {"q": 2}, {"q": 3}]),
        "output": st.sampled_from(["", "x", "a long enough output"]),
        "error": st.just("boom"),
    },
)
_trace_line = st.fixed_dictionaries(
    {"actions": st.one_of(st.lists(_trace_action, max_size=4), _trace_action.map(lambda a: [a] * 25))},
    optional={"progress": st.sampled_from([None, 0.0, 0.5, 1.0])},
)
_configs = [
    HeartbeatConfig(policy=PolicyConfig(escalate_after=1000)),
    HeartbeatConfig.model_validate(
        {
            "detectors": {
                "exempt": ["log"],
                "polling": ["poll"],
                "loop": {"window": 6},
                "empty": {"threshold": 2},
                "error_rate": {"window": 3},
            },
            "policy": {"escalate_after": 1000},
        }
    ),
    HeartbeatConfig.model_validate(
        {
            "detectors": {
                "loop": {"window": 8, "exempt": ["read"]},
                "repeat": {"threshold": 2},
                "no_progress": {"samples": 3},
            },
            "policy": {"escalate_after": 4},
        }
    ),
]


@settings(max_examples=150, deadline=None, print_blob=True)  # a failure prints how to replay it
@given(lines=st.lists(_trace_line, max_size=30), which=st.sampled_from(range(len(_configs))))
def test_one_monitor_replays_exactly_as_a_monitor_rebuilt_every_heartbeat(
    lines: list[dict[str, Any]], which: int
) -> None:
    """Keeping one Monitor for the trace changes nothing: long repeat runs, exempt tools, flat metrics."""
    config = _configs[which]
    text = [json.dumps(line) for line in lines]
    got = [
        (t.tick, [a.model_dump() for a in t.anomalies], t.decision.action, t.decision.stuck_streak)
        for t in replay(text, config)
    ]
    assert got == _reference(text, config)


def test_an_at_too_late_for_the_next_heartbeat_is_a_bad_line() -> None:
    """`at` within one interval of the end of year 9999 is a TraceError on its line, before any replay."""
    lines = ['{"progress": 1}', "", '{"at": "9999-12-31T23:59:59+00:00"}']
    with pytest.raises(TraceError) as caught:
        replay(lines, HeartbeatConfig())
    assert caught.value.line == 3 and "too late" in caught.value.reason


def test_load_trace_reads_bytes_and_text_alike(tmp_path: Path) -> None:
    """A file (bytes, a BOM, CRLF) and the same lines as text load to equal heartbeats."""
    lines = [
        '{"progress": 0.5, "actions": [{"tool": "s", "args": {"q": "é", "n": 1e300}}]}',
        "  ",
        '{"at": "2024-05-01T10:00:00", "actions": [{"tool": "r", "cost": 2}]}',
        "\u00a0",
    ]
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode())
    assert (
        load_trace(path)
        == load_trace(lines)
        == [(1, load_trace(lines[:1])[0][1]), (3, load_trace(lines[2:3])[0][1])]
    )


def test_a_watcher_that_saw_nothing_move_is_judged_by_its_times() -> None:
    """An hourly certificate check answering the same days left: a trace that gives each line its
    time replays as a watcher that saw nothing move (no anomaly in 10 wake-ups); the same lines
    without times say nothing of time passing, and the same call answered alike is a repeat."""
    look = {"tool": "certcheck", "args": {"hosts": "api,www"}, "output": "api 61 days, www 61 days"}
    start = datetime(2026, 3, 10, 10, tzinfo=UTC)
    timed = [
        json.dumps({"at": (start + timedelta(hours=n)).isoformat(), "actions": [look]}) for n in range(10)
    ]
    untimed = [json.dumps({"actions": [look]}) for _ in range(10)]
    assert [t.anomalies for t in replay(timed, HeartbeatConfig())] == [()] * 10
    assert any(t.anomalies for t in replay(untimed, HeartbeatConfig()))
