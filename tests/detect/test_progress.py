"""Progress metrics: the built-ins on real files, a real pytest run, and measure()'s guard rails."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import wait_until

from heartbeat.base.errors import ConfigError, MetricError
from heartbeat.config.file import AgentConfig, HeartbeatConfig, ProgressConfig
from heartbeat.detect.progress import (
    GlobMetric,
    JsonPathMetric,
    ListLengthMetric,
    LoadedMetric,
    PytestMetric,
    WordsMetric,
    build_metric,
    measure,
    metric_from_config,
    metric_name,
    parse_pytest_summary,
)


@dataclass
class Ctx:
    """The part of the runner's step context that metrics read."""

    base_dir: Path
    data: dict[str, Any] = field(default_factory=dict)
    state_dir: Path = Path("state")


@pytest.fixture
def ctx(tmp_path: Path) -> Ctx:
    """A context whose base_dir is a fresh temp folder."""
    return Ctx(base_dir=tmp_path, state_dir=tmp_path / "state")


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """An event a hanging metric waits on; set at teardown so no thread outlives the test."""
    event = threading.Event()
    yield event
    event.set()


# -- built-ins


def test_list_length_counts_items_at_a_dotted_key(ctx: Ctx) -> None:
    """list_length follows a dotted key into nested dicts."""
    ctx.data = {"report": {"sources": ["a", "b", "c"]}}
    assert ListLengthMetric("report.sources")(ctx) == 3.0


def test_list_length_missing_key_counts_zero(ctx: Ctx) -> None:
    """An agent that has not started its list has made no progress: 0, not an error."""
    assert ListLengthMetric("sources")(ctx) == 0.0


def test_list_length_of_a_non_list_is_an_error(ctx: Ctx) -> None:
    """A string where a list should be is a metric error naming the key."""
    ctx.data = {"sources": "abc"}
    with pytest.raises(MetricError, match=r"'sources'.*str, not a list"):
        ListLengthMetric("sources")(ctx)


def test_words_counts_words_in_a_file_relative_to_base_dir(ctx: Ctx) -> None:
    """words reads the file beside the config and counts whitespace-separated words."""
    (ctx.base_dir / "report.md").write_text("# Title\n\none two  three\nfour\n")
    assert WordsMetric(Path("report.md"))(ctx) == 6.0


def test_words_of_a_file_not_written_yet_is_zero(ctx: Ctx) -> None:
    """A report that does not exist yet has 0 words."""
    assert WordsMetric(Path("report.md"))(ctx) == 0.0


def test_words_of_a_folder_is_an_error(ctx: Ctx) -> None:
    """A path that is a folder cannot be read: an error, not 0."""
    (ctx.base_dir / "notes").mkdir()
    with pytest.raises(MetricError, match="cannot read"):
        WordsMetric(Path("notes"))(ctx)


def test_glob_counts_matching_files_only(ctx: Ctx) -> None:
    """glob counts files (recursively with **), never folders."""
    notes = ctx.base_dir / "notes"
    (notes / "deep").mkdir(parents=True)
    for name in ("a.md", "b.md", "deep/c.md", "d.txt"):
        (notes / name).write_text("x")
    (notes / "folder.md").mkdir()
    assert GlobMetric("notes/**/*.md")(ctx) == 3.0
    assert GlobMetric("notes/*.md")(ctx) == 2.0
    assert GlobMetric(str(notes / "*.txt"))(ctx) == 1.0


def test_json_path_reads_a_number_through_objects_and_lists(ctx: Ctx) -> None:
    """json_path follows "a.b.0" through a real JSON file."""
    (ctx.base_dir / "status.json").write_text(json.dumps({"a": {"b": [0.75, 2]}}))
    assert JsonPathMetric(Path("status.json"), "a.b.0")(ctx) == 0.75
    assert JsonPathMetric(Path("status.json"), "a.b.-1")(ctx) == 2.0


@pytest.mark.parametrize(
    ("content", "pointer", "message"),
    [
        (None, "a", "no such file"),
        ("{not json", "a", "not valid JSON"),
        ('{"a": {"b": 1}}', "a.c", "no key 'c' at a"),
        ('{"a": [1]}', "a.3", "index 3 is out of range"),
        ('{"a": "high"}', "a", "'high', not a number"),
        ('{"a": true}', "a", "True, not a number"),
    ],
)
def test_json_path_problems_are_clear_errors(
    ctx: Ctx, content: str | None, pointer: str, message: str
) -> None:
    """Each way a json_path can miss says what is wrong."""
    if content is not None:
        (ctx.base_dir / "status.json").write_text(content)
    with pytest.raises(MetricError, match=message):
        JsonPathMetric(Path("status.json"), pointer)(ctx)


def test_pytest_summary_parsing() -> None:
    """pytest's last line gives the counts, errors and warnings singular or plural."""
    output = "F..\nFAILED t.py::x\n1 failed, 2 passed, 1 error, 3 warnings in 0.12s\n"
    assert parse_pytest_summary(output) == {"failed": 1, "passed": 2, "errors": 1, "warnings": 3}
    assert parse_pytest_summary("==== 5 passed in 61.00s (0:01:01) ====") == {"passed": 5}
    assert parse_pytest_summary("nothing here") == {}


def write_sample_project(root: Path) -> Path:
    """A tiny project whose tests pass 2 of 3."""
    tests = root / "sample_tests"
    tests.mkdir()
    (tests / "test_sample.py").write_text(
        textwrap.dedent(
            """
            def test_one():
                assert 1 + 1 == 2

            def test_two():
                assert "a".upper() == "A"

            def test_three():
                assert [] == [1]
            """
        )
    )
    return tests


def test_pytest_metric_runs_a_real_pytest_and_returns_the_pass_rate(ctx: Ctx) -> None:
    """Two passing tests of three give 2/3."""
    write_sample_project(ctx.base_dir)
    value = PytestMetric(Path("sample_tests"), timeout=60)(ctx)
    assert math.isclose(value, 2 / 3)


def test_pytest_metric_without_tests_is_an_error(ctx: Ctx) -> None:
    """A folder with no tests means a wrong path, not a pass rate of 0."""
    (ctx.base_dir / "empty").mkdir()
    (ctx.base_dir / "empty" / "helper.py").write_text("X = 1\n")
    with pytest.raises(MetricError, match="no tests collected"):
        PytestMetric(Path("empty"))(ctx)


def test_pytest_metric_missing_folder_is_an_error(ctx: Ctx) -> None:
    """A folder that does not exist is named in the error."""
    with pytest.raises(MetricError, match="no such folder"):
        PytestMetric(Path("nope"))(ctx)


def test_pytest_metric_counts_collection_errors_as_failures(ctx: Ctx) -> None:
    """A test file that cannot even be imported gives a pass rate of 0, not an error."""
    tests = ctx.base_dir / "broken"
    tests.mkdir()
    (tests / "test_broken.py").write_text("import no_such_module_hb\n")
    assert PytestMetric(Path("broken"))(ctx) == 0.0


# -- measure()


def test_measure_returns_the_value_as_float(ctx: Ctx) -> None:
    """An int result is a sample, as a float, with no error."""
    assert measure(lambda c: 3, ctx, timeout=5) == (3.0, None)


def test_measure_none_means_no_sample_and_no_error(ctx: Ctx) -> None:
    """None is "nothing to say this tick": neither value nor error."""
    assert measure(lambda c: None, ctx, timeout=5) == (None, None)


def named(name: str, func: Any) -> LoadedMetric:
    """A metric named as if loaded from ``name``."""
    return LoadedMetric(name, func)


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ("abc", "progress metric examples.x:progress returned 'abc', not a number"),
        (True, "progress metric examples.x:progress returned True, not a number (a bool)"),
        (float("nan"), "progress metric examples.x:progress returned nan, not a finite number"),
        (float("inf"), "progress metric examples.x:progress returned inf, not a finite number"),
        ([1, 2], "progress metric examples.x:progress returned [1, 2], not a number"),
        (
            10**400,
            "progress metric examples.x:progress returned "
            "100000000000000000...0000000000000000000, not a float",
        ),
    ],
)
def test_measure_rejects_what_is_not_a_finite_number(ctx: Ctx, result: object, message: str) -> None:
    """A string, bool, NaN, inf or list is an error with a one-line message."""
    value, error = measure(named("examples.x:progress", lambda c: result), ctx, timeout=5)
    assert value is None
    assert error == message


def test_measure_reports_a_metric_that_raises(ctx: Ctx) -> None:
    """An exception becomes the sample's error: its type and first line."""

    def broken(c: Ctx) -> float:
        raise KeyError("sources")

    value, error = measure(named("examples.x:progress", broken), ctx, timeout=5)
    assert value is None
    assert error == "progress metric examples.x:progress raised KeyError: 'sources'"


def test_measure_reports_sys_exit_in_a_metric(ctx: Ctx) -> None:
    """Even sys.exit() inside a metric is an error, not a hang or a crash."""
    value, error = measure(named("m:x", lambda c: sys.exit(3)), ctx, timeout=5)
    assert value is None and error == "progress metric m:x raised SystemExit: 3"


def test_measure_metric_error_from_a_builtin_is_passed_on(ctx: Ctx) -> None:
    """A built-in's MetricError keeps its own words."""
    ctx.data = {"sources": 7}
    value, error = measure(ListLengthMetric("sources"), ctx, timeout=5)
    assert value is None
    assert error is not None and error.startswith("progress metric list_length(sources): ")


def test_measure_times_out_a_metric_that_hangs(ctx: Ctx, release: threading.Event) -> None:
    """A metric that never returns is abandoned after the timeout with a clear error."""
    started = time.monotonic()
    value, error = measure(named("m:hang", lambda c: release.wait(60)), ctx, timeout=0.2)
    assert time.monotonic() - started < 2
    assert value is None
    assert error == "progress metric m:hang did not return within 0.2s"


# A process whose metric hangs until released; Ctrl-C cuts the first measure(), which it survives
# (a notebook's interrupted cell), then measures again while the first call still runs, and once more
# after releasing it. Prints how many calls the metric had at each point and what measure() said.
_CUT_BY_CTRL_C = """
import json, pathlib, threading, time, types
from heartbeat.detect.progress import measure
release, calls = threading.Event(), []
def metric(ctx):
    calls.append(1)
    pathlib.Path('MEASURING').touch()
    release.wait(60)
    return 1.0
ctx = types.SimpleNamespace(data={}, state_dir=pathlib.Path('.'), base_dir=pathlib.Path('.'))
try:
    measure(metric, ctx, timeout=60)
except KeyboardInterrupt:
    pass
again = measure(metric, ctx, timeout=0.5)
seen = len(calls)
release.set()
deadline = time.monotonic() + 30
while "still running" in str(last := measure(metric, ctx, timeout=30)) and time.monotonic() < deadline:
    time.sleep(0.01)  # until the first call has returned
print(json.dumps([seen, again, len(calls), last]))
"""


def test_a_metric_cut_by_ctrl_c_is_not_called_again_while_it_runs(tmp_path: Path) -> None:
    """Ctrl-C during measure() leaves the metric running: the next measure() does not call it beside
    itself, and calls it again once it returned. Until 2026-12-07 it was called again: the
    KeyboardInterrupt left measure() before the running call was noted, and on Python 3.11 it cut
    Thread.join(), which marks the running thread stopped (CPython gh-90882)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _CUT_BY_CTRL_C], cwd=tmp_path, stdout=subprocess.PIPE, text=True
    )
    try:
        wait_until(lambda: (tmp_path / "MEASURING").exists(), what="the metric to run", proc=proc)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    seen, again, calls, last = json.loads(out)
    assert again == [
        None,
        "progress metric __main__:metric is still running from an earlier tick; not called again",
    ]
    assert (seen, calls, last) == (1, 2, [1.0, None])


def test_measure_gives_a_self_timed_metric_its_own_timeout(ctx: Ctx) -> None:
    """The pytest metric's own timeout wins over a shorter measure() timeout."""
    write_sample_project(ctx.base_dir)
    value, error = measure(PytestMetric(Path("sample_tests")), ctx, timeout=0.01)
    assert error is None and value is not None and math.isclose(value, 2 / 3)


def test_metric_name_of_a_plain_function() -> None:
    """A function without a name attribute is shown as module:qualname."""

    def progress(c: Ctx) -> float:
        return 1.0

    assert metric_name(progress).endswith(":test_metric_name_of_a_plain_function.<locals>.progress")
    assert metric_name(GlobMetric("*.md")) == "glob(*.md)"


# -- build_metric


@pytest.fixture
def module_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config folder whose additions to sys.path are undone after the test."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def write_module(folder: Path, source: str) -> str:
    """A uniquely named module in ``folder`` (so no test sees another's import)."""
    name = f"hb_metric_{uuid.uuid4().hex[:8]}"
    (folder / f"{name}.py").write_text(textwrap.dedent(source))
    return name


def test_build_metric_loads_the_agents_module_attr(module_dir: Path) -> None:
    """agent.progress "module:attr" is loaded from the config's folder and named by its spec."""
    name = write_module(module_dir, "def progress(ctx):\n    return len(ctx.data['x'])\n")
    config = HeartbeatConfig(base_dir=module_dir, progress=ProgressConfig(type="glob", pattern="*"))
    agent = AgentConfig(progress=f"{name}:progress")
    metric = build_metric(config, agent)
    assert metric is not None and metric_name(metric) == f"{name}:progress"
    ctx = Ctx(base_dir=module_dir, data={"x": [1, 2]})
    assert measure(metric, ctx, timeout=5) == (2.0, None)


def test_build_metric_uses_the_progress_table_without_module_attr(tmp_path: Path) -> None:
    """With no agent.progress, [progress] picks the built-in."""
    config = HeartbeatConfig(base_dir=tmp_path, progress=ProgressConfig(type="words", path=Path("r.md")))
    assert build_metric(config, AgentConfig()) == WordsMetric(Path("r.md"))


def test_build_metric_without_any_metric_is_none(tmp_path: Path) -> None:
    """Neither agent.progress nor [progress]'s type: no metric."""
    assert build_metric(HeartbeatConfig(base_dir=tmp_path), AgentConfig()) is None
    timed = HeartbeatConfig(base_dir=tmp_path, progress=ProgressConfig(timeout=timedelta(seconds=5)))
    assert build_metric(timed, AgentConfig()) is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon", "not of the form"),
        ("hb_no_such_module_zz:progress", "no module named"),
        ("{module}:missing", "has no attribute"),
        ("{module}:NOT_CALLABLE", "is int, not a callable"),
    ],
)
def test_build_metric_bad_spec_is_a_config_error(module_dir: Path, spec: str, message: str) -> None:
    """A spec that cannot be loaded, or is not callable, is a ConfigError."""
    name = write_module(module_dir, "NOT_CALLABLE = 3\n")
    config = HeartbeatConfig(base_dir=module_dir)
    with pytest.raises(ConfigError, match=message):
        build_metric(config, AgentConfig(progress=spec.format(module=name)))


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ({"type": "list_length", "key": "a.b"}, ListLengthMetric("a.b")),
        ({"type": "words", "path": "r.md"}, WordsMetric(Path("r.md"))),
        ({"type": "glob", "pattern": "*.md"}, GlobMetric("*.md")),
        (
            {"type": "json_path", "path": "s.json", "pointer": "a.0"},
            JsonPathMetric(Path("s.json"), "a.0"),
        ),
        ({"type": "pytest", "path": "tests", "timeout": "90s"}, PytestMetric(Path("tests"), 90.0)),
    ],
)
def test_metric_from_config_builds_each_builtin(table: dict[str, Any], expected: object) -> None:
    """Every [progress] type maps to its built-in with the table's settings."""
    assert metric_from_config(ProgressConfig.model_validate(table)) == expected
