"""The stuck detectors as pure functions over histories built by a small factory."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heartbeat.config import DetectorsConfig, LoopConfig, RepeatConfig
from heartbeat.detectors import (
    Cycle,
    Detector,
    Empty,
    ErrorRate,
    FunctionDetector,
    History,
    Loop,
    NearRepeat,
    NoProgress,
    Recurring,
    RecurringError,
    Repeat,
    as_detector,
    build_detectors,
    canonical_args,
    fingerprint,
    prints,
    summarize,
)
from heartbeat.errors import ConfigError
from heartbeat.models import ActionRecord, Anomaly, ProgressSample

T0 = datetime(2024, 1, 1, tzinfo=UTC)

Call = tuple[str, Mapping[str, Any] | None] | Mapping[str, Any]


def actions(
    calls: Iterable[Call],
    *,
    volatile: Sequence[str] = (),
    polling: Sequence[str] = (),
    tick: int = 1,
) -> list[ActionRecord]:
    """ActionRecords for ``calls``: ``(tool, args)`` pairs or dicts with output/error/tick too."""
    found = []
    for index, call in enumerate(calls, 1):
        spec: dict[str, Any] = {"tool": call[0], "args": call[1]} if isinstance(call, tuple) else dict(call)
        output = spec.get("output")
        keys = prints(
            spec["tool"],
            spec.get("args"),
            output,
            spec.get("error"),
            volatile=volatile,
            polling=spec["tool"] in polling,
        )
        found.append(
            ActionRecord(
                index=index,
                tick=spec.get("tick", tick),
                at=T0 + timedelta(minutes=index),
                tool=spec["tool"],
                fingerprint=keys.fingerprint,
                summary=keys.summary,
                output_len=len(output.strip()) if output is not None else None,
                error=spec.get("error"),
                shape=keys.shape,
                result=keys.result,
            )
        )
    return found


def trips(detector: Detector, records: Sequence[ActionRecord]) -> list[Anomaly | None]:
    """What ``check`` says after each action, as the monitor would ask it."""
    return [
        detector.check(History(records[: i + 1], tick=records[i].tick), records[i].at)
        for i in range(len(records))
    ]


def samples(values: Iterable[float | None]) -> list[ProgressSample]:
    """One progress sample per heartbeat."""
    return [ProgressSample(tick=i, at=T0 + timedelta(hours=i), value=v) for i, v in enumerate(values, 1)]


# -- fingerprints -------------------------------------------------------------


def test_absent_and_none_args_fingerprint_as_empty_object() -> None:
    """No arguments, None and {} are one fingerprint."""
    assert fingerprint("get_status", None) == fingerprint("get_status", {})
    assert canonical_args(None) == canonical_args({}) == "{}"


def test_fingerprint_ignores_key_order_but_not_values() -> None:
    """Key order is canonicalised away; a changed value is a different call."""
    assert fingerprint("s", {"a": 1, "b": [1, {"y": 2, "x": 1}]}) == fingerprint(
        "s", {"b": [1, {"x": 1, "y": 2}], "a": 1}
    )
    assert fingerprint("s", {"a": 1}) != fingerprint("s", {"a": 2})
    assert fingerprint("s", {"a": 1}) != fingerprint("t", {"a": 1})


def test_canonical_args_is_compact_sorted_json() -> None:
    """Canonical JSON has sorted keys, no spaces and keeps non-ASCII text."""
    assert canonical_args({"q": "café", "a": [1, 2]}) == '{"a":[1,2],"q":"café"}'


def test_volatile_args_are_left_out_of_fingerprint_and_summary() -> None:
    """A volatile argument changing does not make a new call."""
    one = fingerprint("search", {"q": "x", "request_id": 1}, volatile=["request_id"])
    two = fingerprint("search", {"q": "x", "request_id": 2}, volatile=["request_id"])
    assert one == two
    assert summarize("search", {"q": "x", "request_id": 2}, ["request_id"]) == 'search({"q":"x"})'


def test_output_is_part_of_fingerprint_only_when_given() -> None:
    """A polling tool's result changes its fingerprint."""
    assert fingerprint("get_status", {}, output="busy") != fingerprint("get_status", {}, output="done")
    assert fingerprint("get_status", {}, output="busy") != fingerprint("get_status", {})


def test_fingerprint_survives_values_json_cannot_hold() -> None:
    """Dates, mixed key types and self-references still fingerprint, deterministically."""
    loop: dict[str, Any] = {}
    loop["self"] = loop
    assert fingerprint("t", {"when": T0}) == fingerprint("t", {"when": T0})
    assert fingerprint("t", {1: "a", "b": 2}) == fingerprint("t", {"b": 2, 1: "a"})
    assert len(fingerprint("t", loop)) == 16


def test_summary_reads_like_a_call_and_is_cut() -> None:
    """A summary is tool(args), tool() without args, at most 200 characters."""
    assert summarize("search", {"q": "x"}) == 'search({"q":"x"})'
    assert summarize("get_status", None) == "get_status()"
    long = summarize("write", {"text": "x" * 500})
    assert len(long) == 200 and long.endswith("…")


# -- repeat ---------------------------------------------------------------------


def test_advancing_cursor_of_a_polling_tool_stays_silent() -> None:
    """A paging tool declared in ``polling``, its cursor moving on, trips no detector."""
    calls = [{"tool": "list_items", "args": {"cursor": i}, "output": f"page {i} " * 5} for i in range(30)]
    records = actions(calls, polling=["list_items"])
    for detector in build_detectors(DetectorsConfig(polling=["list_items"])):
        assert trips(detector, records) == [None] * 30, detector


def test_reading_one_file_in_a_few_pages_stays_silent() -> None:
    """Four pages of one file among other work are normal reading."""
    calls: list[Call] = []
    for page in range(4):
        calls.append(("sed", {"cmd": f"sed -n '{page * 50 + 1},{page * 50 + 50}p' src/app.py"}))
        calls.append(("grep", {"cmd": f"grep -n name{page} src/app.py"}))
    words = ["def", "class", "return", "import", "self", "value", "parse", "error"]
    records = actions(
        [
            {"tool": t, "args": a, "output": " ".join(words[(i + k) % 8] for k in range(i + 20))}
            for i, (t, a) in enumerate(calls)
        ]
    )
    for detector in build_detectors(DetectorsConfig()):
        assert trips(detector, records) == [None] * len(records), detector


def test_third_identical_call_trips_repeat() -> None:
    """Two identical calls are fine; the third trips repeat and says which call and how often."""
    found = trips(Repeat(), actions([("search", {"q": "x"})] * 3))
    assert found[:2] == [None, None]
    anomaly = found[2]
    assert anomaly is not None and anomaly.kind == "repeat"
    assert anomaly.action == 3 and anomaly.tool == "search"
    assert 'search({"q":"x"})' in anomaly.message and "3 times in a row" in anomaly.message
    assert anomaly.evidence["count"] == 3 and anomaly.evidence["threshold"] == 3


def test_repeat_keeps_firing_while_the_run_goes_on() -> None:
    """Each further identical call is still a repeat, with the run's length."""
    found = trips(Repeat(), actions([("search", {"q": "x"})] * 5))
    counts = [a.evidence["count"] if a else None for a in found]
    assert counts == [None, None, 3, 4, 5]


def test_per_tool_threshold_lets_a_polling_tool_poll() -> None:
    """A tool with its own threshold of 10 may repeat 9 times without a repeat."""
    detector = Repeat(3, tools={"get_status": 10})
    found = trips(detector, actions([("get_status", None)] * 10))
    assert found[:9] == [None] * 9
    assert found[9] is not None and found[9].evidence["threshold"] == 10


def test_polling_tool_with_own_threshold_stays_silent() -> None:
    """Polling get_status five times under its threshold of 10 trips nothing."""
    cfg = DetectorsConfig(repeat=RepeatConfig(tools={"get_status": 10}))
    records = actions([{"tool": "get_status", "output": "running"}] * 5)
    assert all(trips(d, records) == [None] * 5 for d in build_detectors(cfg) if d.kind == "repeat")


def test_polling_tool_trips_repeat_once_its_output_stops_changing() -> None:
    """With output in the fingerprint, changing results are silent and a frozen one repeats."""
    outputs = ["queued 5", "queued 4", "queued 3", "queued 2", "queued 2", "queued 2"]
    records = actions([{"tool": "get_status", "output": o} for o in outputs], polling=["get_status"])
    found = trips(Repeat(polling={"get_status"}), records)
    assert found[:5] == [None] * 5
    assert found[5] is not None and "same result" in found[5].message


def test_repeat_off_exempts_a_tool() -> None:
    """A tool set to "off" never trips repeat."""
    assert (
        trips(Repeat(tools={"heartbeat_ping": "off"}), actions([("heartbeat_ping", None)] * 9)) == [None] * 9
    )


def test_volatile_args_ignored_by_repeat() -> None:
    """Calls differing only in a volatile argument are one repeated call."""
    calls = [("search", {"q": "x", "request_id": i}) for i in range(3)]
    assert trips(Repeat(), actions(calls))[-1] is None
    assert trips(Repeat(), actions(calls, volatile=["request_id"]))[-1] is not None


# -- loop -----------------------------------------------------------------------


def test_search_read_with_new_arguments_is_not_a_loop() -> None:
    """search(q1) read(u1) search(q2) read(u2) ... moves on: no loop."""
    calls: list[Call] = []
    for i in range(10):
        calls += [("search", {"q": f"q{i}"}), ("read", {"u": f"u{i}"})]
    assert trips(Loop(), actions(calls)) == [None] * 20


def test_search_read_with_fixed_arguments_is_a_loop() -> None:
    """search(q) read(u) search(q) read(u) is a loop at the fourth action, named by its cycle."""
    found = trips(Loop(), actions([("search", {"q": "x"}), ("read", {"u": "y"})] * 3))
    assert found[:3] == [None] * 3
    first, last = found[3], found[5]
    assert first is not None and last is not None
    assert first.action == 4 and first.evidence["period"] == 2 and first.evidence["repeats"] == 2
    assert 'search({"q":"x"}) -> read({"u":"y"})' in last.message
    assert last.evidence["repeats"] == 3 and "3 times" in last.message


def test_a_two_step_retry_with_a_failure_needs_a_third_pass() -> None:
    """A malformed turn, then submit, twice (a harness's confirmation) is not yet a loop."""
    steps: list[Call] = [
        {
            "tool": "(no_command)",
            "args": None,
            "output": "Please give exactly one action",
            "error": "format_error",
        },
        {"tool": "submit", "args": {"cmd": "submit"}, "output": "Review your changes, then submit again"},
    ]
    found = trips(Loop(), actions(steps * 3))
    assert found[:5] == [None] * 5 and found[5] is not None and found[5].evidence["repeats"] == 3


def test_identical_calls_are_repeat_never_loop() -> None:
    """A A A A has one distinct fingerprint: never a loop."""
    assert trips(Loop(), actions([("search", {"q": "x"})] * 8)) == [None] * 8


def test_loop_reports_the_shortest_period() -> None:
    """A B A B A B A B loops with period 2, not 4."""
    found = trips(Loop(window=20, repeats=2), actions([("a", None), ("b", None)] * 4))
    assert all(f is not None and f.evidence["period"] == 2 for f in found[3:])


def test_loop_cycle_may_repeat_a_fingerprint() -> None:
    """A A B A A B is a 3-step cycle of two distinct fingerprints."""
    found = trips(Loop(), actions([("a", None), ("a", None), ("b", None)] * 2))
    assert found[-1] is not None and found[-1].evidence["period"] == 3


def test_loop_must_sit_at_the_tail_of_the_window() -> None:
    """A cycle longer than the window allows, or broken by a new call, is not reported."""
    assert trips(Loop(window=5), actions([("a", None), ("b", None), ("c", None)] * 2))[-1] is None
    broken = actions([("a", None), ("b", None), ("a", None), ("b", None), ("c", None)])
    assert trips(Loop(), broken)[-1] is None


def test_loop_needs_the_configured_repeats() -> None:
    """With repeats=3 a cycle seen twice is not yet a loop; the third time it is."""
    found = trips(Loop(repeats=3), actions([("a", None), ("b", None)] * 3))
    assert found[3] is None and found[5] is not None


def test_loop_exempt_tools_are_invisible() -> None:
    """A tool left out of loops neither forms nor breaks one."""
    calls = [("a", None), ("log", {"n": 1}), ("b", None), ("a", None), ("log", {"n": 2}), ("b", None)]
    calls += [("a", None), ("log", {"n": 3}), ("b", None)]
    assert trips(Loop(), actions(calls))[-1] is None
    assert trips(Loop(exempt={"log"}), actions(calls))[-1] is not None


# -- empty ----------------------------------------------------------------------


def test_three_near_empty_outputs_trip_empty() -> None:
    """From a call that answered before, outputs of at most 10 characters three times trip empty."""
    calls = [{"tool": "search", "args": {"page": 0}, "output": "12 hits: a, b, c, ..."}]
    calls += [{"tool": "search", "args": {"page": i}, "output": " [] "} for i in range(1, 4)]
    found = trips(Empty(), actions(calls))
    assert found[:3] == [None, None, None]
    assert found[3] is not None and found[3].evidence["count"] == 3


def test_silent_by_design_tools_are_never_empty() -> None:
    """sed -i, a heredoc write, think and a calculator's short answer are normal."""
    calls: list[Call] = [
        {"tool": "sed", "args": {"cmd": f"sed -i s/a{i}/b/ f.py"}, "output": ""} for i in range(4)
    ]
    calls += [{"tool": "think", "args": {"thought": f"step {i}"}, "output": ""} for i in range(4)]
    calls += [
        {"tool": "calculate", "args": {"expression": f"{i} * 3"}, "output": f"{i * 3}.0"} for i in range(4)
    ]
    calls += [{"tool": "status", "args": {"flight": f"HAT{i}"}, "output": "available"} for i in range(4)]
    assert trips(Empty(), actions(calls)) == [None] * 16


def test_empty_skips_actions_without_output_and_resets_on_real_output() -> None:
    """Actions that report no output do not count; a long output ends the run."""
    calls: list[Call] = [
        {"tool": "s", "args": {"i": 1}, "output": ""},
        {"tool": "w", "args": {"i": 2}},
        {"tool": "s", "args": {"i": 3}, "output": ""},
        {"tool": "s", "args": {"i": 4}, "output": "a real answer, long enough"},
        {"tool": "s", "args": {"i": 5}, "output": ""},
        {"tool": "s", "args": {"i": 6}, "output": ""},
        {"tool": "w", "args": {"i": 7}},
        {"tool": "s", "args": {"i": 8}, "output": "   "},
    ]
    found = trips(Empty(), actions(calls))
    assert [i for i, f in enumerate(found) if f] == [7]


# -- error_rate -----------------------------------------------------------------


def test_three_errors_in_a_window_of_four_trip_error_rate_at_75_percent() -> None:
    """3 failures in the last 4 actions is 75%, over a threshold of 0.5."""
    calls: list[Call] = [
        {"tool": "fetch", "args": {"u": 1}, "error": "503"},
        {"tool": "fetch", "args": {"u": 2}},
        {"tool": "fetch", "args": {"u": 3}, "error": "503"},
        {"tool": "fetch", "args": {"u": 4}, "error": "503 Service Unavailable"},
    ]
    found = trips(ErrorRate(window=4, threshold=0.5), actions(calls))
    assert found[:3] == [None] * 3
    anomaly = found[3]
    assert anomaly is not None
    assert anomaly.message.startswith("3 of 4 actions failed (75%), last: fetch: 503")
    assert anomaly.evidence["rate"] == 0.75 and anomaly.evidence["failing"] == {"fetch": 3}


def test_error_rate_is_checked_only_after_a_failure() -> None:
    """A success in a bad window reports nothing; the next failure does."""
    calls: list[Call] = [{"tool": "f", "args": {"i": i}, "error": "x"} for i in range(3)]
    calls.append({"tool": "f", "args": {"i": 9}})
    calls.append({"tool": "f", "args": {"i": 10}, "error": "x"})
    found = trips(ErrorRate(window=4, threshold=0.5), actions(calls))
    assert found[3] is None and found[4] is not None


def test_error_rate_waits_for_a_full_window() -> None:
    """Fewer than W actions never trip error_rate, even if all failed."""
    calls: list[Call] = [{"tool": "f", "args": {"i": i}, "error": "x"} for i in range(9)]
    assert trips(ErrorRate(), actions(calls)) == [None] * 9


def test_error_rate_threshold_is_compared_as_a_quotient() -> None:
    """3 of 10 reaches a threshold of 0.3 even though 0.3 * 10 is not exactly 3."""
    calls: list[Call] = [{"tool": "f", "args": {"i": i}} for i in range(7)]
    calls += [{"tool": "f", "args": {"i": i}, "error": "x"} for i in range(7, 10)]
    assert trips(ErrorRate(window=10, threshold=0.3), actions(calls))[-1] is not None


# -- no_progress ----------------------------------------------------------------


def _flat(values: Iterable[float | None], detector: NoProgress | None = None) -> list[Anomaly | None]:
    det = detector or NoProgress()
    progress = samples(values)
    return [det.check(History(progress=progress[: i + 1]), T0) for i in range(len(progress))]


def test_flat_metric_for_five_heartbeats_trips_no_progress() -> None:
    """The same value five heartbeats running trips no_progress, naming the value."""
    found = _flat([3, 3, 3, 3, 3])
    assert found[:4] == [None] * 4
    anomaly = found[4]
    assert anomaly is not None and anomaly.kind == "no_progress" and anomaly.action is None
    assert "stayed at 3 for the last 5 heartbeats" in anomaly.message
    assert anomaly.evidence["value"] == 3


def test_small_moves_are_still_no_progress_and_real_moves_are_not() -> None:
    """A spread under min_delta is flat; a spread of min_delta is progress."""
    assert _flat([1.0, 1.002, 1.004, 1.001, 1.003])[-1] is not None
    assert _flat([1.0, 1.0, 1.0, 1.0, 1.01])[-1] is None


def test_failed_measurements_are_left_out() -> None:
    """Samples without a value neither count nor trip the detector."""
    found = _flat([2, None, 2, 2, None, 2, 2])
    assert found[4] is None and found[6] is not None


# -- parameters, custom detectors, building ---------------------------------------


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: Repeat(threshold=1), "threshold"),
        (lambda: Repeat(tools={"x": 1}), "tools.x"),
        (lambda: Loop(repeats=1), "repeats"),
        (lambda: Empty(max_chars=-1), "max_chars"),
        (lambda: ErrorRate(threshold=1.5), "threshold"),
        (lambda: NoProgress(min_delta=float("nan")), "min_delta"),
    ],
)
def test_bad_parameters_are_config_errors(make: Any, words: str) -> None:
    """A detector refuses parameters that could never work, naming the parameter."""
    with pytest.raises(ConfigError, match=words):
        make()


def test_detectors_have_a_useful_repr_and_hash() -> None:
    """The repr shows the parameters; equal detectors hash equal."""
    assert repr(Loop(window=8)) == "Loop(window=8, repeats=2, exempt=frozenset())"
    assert "tools={'get_status': 10}" in repr(Repeat(tools={"get_status": 10}))
    assert hash(Repeat(tools={"a": 5})) == hash(Repeat(tools={"a": 5}))


def test_build_detectors_follows_the_config() -> None:
    """Disabled detectors are left out; thresholds and exempt tools are passed on."""
    cfg = DetectorsConfig(exempt=["log"], loop=LoopConfig(enabled=False), repeat=RepeatConfig(threshold=5))
    found = build_detectors(cfg)
    assert [d.kind for d in found] == [
        "repeat",
        "empty",
        "error_rate",
        "near_repeat",
        "recurring",
        "recurring_error",
        "cycle",
        "no_progress",
    ]
    repeat = found[0]
    assert isinstance(repeat, Repeat) and repeat.threshold == 5 and "log" in repeat.exempt


def test_globally_exempt_tools_are_seen_by_no_detector() -> None:
    """An exempt tool's calls never trip anything and do not break other runs."""
    cfg = DetectorsConfig(exempt=["log"])
    calls: list[Call] = [("search", {"q": "x"}), ("log", None), ("search", {"q": "x"})]
    calls += [("log", None), ("log", None), ("log", None), ("search", {"q": "x"})]
    records = actions(calls)
    for detector in build_detectors(cfg):
        found = trips(detector, records)
        assert all(f is None for f, r in zip(found, records, strict=True) if r.tool == "log")
    assert trips(build_detectors(cfg)[0], records)[-1] is not None


def test_a_plain_function_is_accepted_as_a_detector() -> None:
    """A callable is wrapped; its name becomes the detector's kind."""

    def too_costly(history: History, now: datetime) -> Anomaly | None:
        return None

    wrapped = as_detector(too_costly)
    assert isinstance(wrapped, FunctionDetector) and wrapped.kind == "too_costly"
    assert wrapped.check(History(), T0) is None
    with pytest.raises(TypeError, match="not a detector"):
        as_detector(42)


_CUSTOM = textwrap.dedent(
    '''
    from heartbeat.models import Anomaly

    class Costly:
        """Trips on any action whose cost is over 1."""
        kind = "costly"

        def check(self, history, now):
            last = history.last
            if last is not None and last.cost > 1:
                return Anomaly(kind=self.kind, message="too costly", tick=history.tick,
                               action=last.index, at=now, tool=last.tool)
            return None

    def writes(history, now):
        return None

    NOT_A_DETECTOR = 3
    '''
)


@pytest.fixture
def custom_module(tmp_path: Path) -> Iterable[str]:
    """A module of custom detectors importable from ``tmp_path``."""
    name = f"custom_detectors_{abs(hash(tmp_path)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(_CUSTOM)
    yield name
    sys.modules.pop(name, None)


def test_custom_detectors_load_from_module_attr(custom_module: str, tmp_path: Path) -> None:
    """A class is instantiated, a function wrapped, both appended after the built-ins."""
    cfg = DetectorsConfig(custom=[f"{custom_module}:Costly", f"{custom_module}:writes"])
    found = build_detectors(cfg, search_path=tmp_path)
    assert [d.kind for d in found][-2:] == ["costly", "writes"]
    record = ActionRecord(index=1, tick=1, at=T0, tool="gpt", fingerprint="f", summary="gpt()", cost=2.0)
    anomaly = found[-2].check(History([record], tick=1), T0)
    assert anomaly is not None and anomaly.kind == "costly"


def test_custom_detector_that_is_not_one_is_a_config_error(custom_module: str, tmp_path: Path) -> None:
    """An attribute that neither has check nor is callable is refused, by name."""
    spec = f"{custom_module}:NOT_A_DETECTOR"
    with pytest.raises(ConfigError, match="NOT_A_DETECTOR"):
        build_detectors(DetectorsConfig(custom=[spec]), search_path=tmp_path)
    with pytest.raises(ConfigError, match="nowhere"):
        build_detectors(DetectorsConfig(custom=[f"{custom_module}:nowhere"]), search_path=tmp_path)


# -- the incremental trackers agree with check ------------------------------------

_TOOLS = ["search", "read", "get_status", "log"]
_call = st.fixed_dictionaries(
    {
        "tool": st.sampled_from(_TOOLS),
        "args": st.sampled_from([None, {"q": 1}, {"q": 2}, {"q": 12}, {"page": "p3"}]),
        "output": st.sampled_from(
            [None, "", "ok", "a long enough output", "same " * 30 + "1", "same " * 30 + "2", "other " * 30]
        ),
        "error": st.sampled_from([None, "boom"]),
        "tick": st.integers(1, 3),
    }
)
# Short patterns repeated a few times, so loops and runs actually occur.
_calls = st.lists(
    st.tuples(st.lists(_call, min_size=1, max_size=3), st.integers(1, 4)).map(lambda t: t[0] * t[1]),
    max_size=8,
).map(lambda parts: [call for part in parts for call in part])
_detector = st.one_of(
    st.builds(
        Repeat,
        threshold=st.integers(2, 4),
        tools=st.sampled_from([{}, {"read": 2}, {"get_status": "off"}]),
        exempt=st.sampled_from([frozenset(), frozenset({"log"})]),
    ),
    st.builds(
        Loop,
        window=st.integers(4, 14),
        repeats=st.integers(2, 3),
        exempt=st.sampled_from([frozenset(), frozenset({"log"})]),
    ),
    st.builds(
        Empty,
        threshold=st.integers(1, 3),
        max_chars=st.sampled_from([0, 2, 10]),
        exempt=st.sampled_from([frozenset(), frozenset({"read"})]),
    ),
    st.builds(
        ErrorRate,
        window=st.integers(1, 6),
        threshold=st.sampled_from([0.3, 0.5, 2 / 3, 1.0]),
        exempt=st.sampled_from([frozenset(), frozenset({"log"})]),
    ),
    st.integers(2, 5).flatmap(
        lambda n: st.builds(
            NearRepeat,
            threshold=st.just(n),
            window=st.integers(n, 8),
            exempt=st.sampled_from([frozenset(), frozenset({"log"})]),
        )
    ),
    st.integers(2, 4).flatmap(
        lambda n: st.builds(
            Recurring,
            threshold=st.just(n),
            window=st.integers(n, 10),
            min_chars=st.sampled_from([0, 10]),
            exempt=st.sampled_from([frozenset(), frozenset({"log"})]),
        )
    ),
    st.integers(2, 4).flatmap(
        lambda n: st.builds(
            RecurringError,
            threshold=st.just(n),
            window=st.integers(n, 10),
            exempt=st.sampled_from([frozenset(), frozenset({"log"})]),
        )
    ),
    st.integers(2, 5).flatmap(
        lambda n: st.builds(
            Cycle,
            threshold=st.just(n),
            window=st.integers(n + 1, 12),
            exempt=st.sampled_from([frozenset(), frozenset({"log"})]),
        )
    ),
)


@settings(max_examples=600, deadline=None, print_blob=True)  # a failure prints how to replay it
@given(
    detector=_detector,
    calls=_calls,
    seed=st.integers(0, 40),
    polling=st.booleans(),
)
def test_action_trackers_agree_with_check(
    detector: Repeat | Loop | Empty | ErrorRate | NearRepeat | Recurring | RecurringError | Cycle,
    calls: list[dict[str, Any]],
    seed: int,
    polling: bool,
) -> None:
    """Seeded from any prefix, a tracker answers every push exactly as check on the whole history."""
    records = actions(calls, polling=["get_status"] if polling else [])
    split = min(seed, len(records))
    tracker = detector.tracker(History(records[:split]))
    for i in range(split, len(records)):
        expected = detector.check(History(records[: i + 1], tick=records[i].tick), records[i].at)
        got = tracker.push(records[i])
        assert (got and got.model_dump()) == (expected and expected.model_dump())


@settings(max_examples=200, deadline=None, print_blob=True)  # a failure prints how to replay it
@given(
    values=st.lists(st.sampled_from([None, 0.0, 0.004, 0.01, 1.0]), max_size=25),
    n=st.integers(2, 6),
    delta=st.sampled_from([0.0, 0.005, 0.01, 0.5]),
    seed=st.integers(0, 25),
)
def test_progress_tracker_agrees_with_check(
    values: list[float | None], n: int, delta: float, seed: int
) -> None:
    """The no_progress tracker answers every sample exactly as check does."""
    detector = NoProgress(samples=n, min_delta=delta)
    progress = samples(values)
    split = min(seed, len(progress))
    tracker = detector.tracker(History(progress=progress[:split]))
    for i in range(split, len(progress)):
        expected = detector.check(History(progress=progress[: i + 1], tick=i + 1), progress[i].at)
        got = tracker.push(progress[i])
        assert (got and got.model_dump()) == (expected and expected.model_dump())


def test_polling_tools_short_status_is_not_empty() -> None:
    """A tool listed in `polling` answering "running" each heartbeat trips neither empty nor repeat."""
    from heartbeat.config import DetectorsConfig
    from heartbeat.monitor import Monitor

    monitor = Monitor(DetectorsConfig(polling=["get_status"]))
    now = datetime(2026, 1, 1, tzinfo=UTC)
    hits = []
    for tick, status in enumerate(["queued", "running", "running 40%", "running 80%", "done"], start=1):
        monitor.start_tick(tick)
        hits.append(monitor.record("get_status", {"job": 7}, output=status, now=now))
    assert hits == [None] * 5


def test_config_and_detectors_share_one_copy_of_the_bounds() -> None:
    """Every whole-number bound the config enforces is the one the detector enforces."""
    from pydantic import ValidationError

    from heartbeat.config import DETECTOR_BOUNDS

    makers: dict[str, Any] = {
        "repeat.threshold": lambda v: Repeat(threshold=v),
        "loop.window": lambda v: Loop(window=v),
        "loop.repeats": lambda v: Loop(repeats=v, window=max(4, 2 * v)),
        "empty.threshold": lambda v: Empty(threshold=v),
        "error_rate.window": lambda v: ErrorRate(window=v),
        "near_repeat.threshold": lambda v: NearRepeat(threshold=v, window=max(v, 2)),
        "recurring.window": lambda v: Recurring(threshold=2, window=v),
        "recurring_error.threshold": lambda v: RecurringError(threshold=v, window=max(v, 2)),
        "cycle.window": lambda v: Cycle(threshold=2, window=v),
        "no_progress.samples": lambda v: NoProgress(samples=v),
    }
    for key, make in makers.items():
        low, high = DETECTOR_BOUNDS[key]
        section, name = key.split(".")
        make(low)
        with pytest.raises(
            ConfigError, match=f"{section}: {name} must be an integer between {low} and {high}"
        ):
            make(low - 1)
        with pytest.raises(ValidationError):
            DetectorsConfig.model_validate({section: {name: low - 1}})
        DetectorsConfig.model_validate({section: {name: low}})
