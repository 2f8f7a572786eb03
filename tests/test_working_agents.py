"""Working agents are never escalated; the same agents stuck are (issue 25's acceptance).

Five healthy agents whose progress metric rises, each beside the same agent
stuck (a flat metric, the same result each time), run as real ``heartbeat
tick`` commands with the default detectors and policy, at 5 actions a
heartbeat and at 1:

* a pager reading a report page after page (``read_page(cursor=N)``);
* a crawler fetching numbered URLs with different bodies;
* a writer writing numbered sections, each answered ``ok``;
* a queue worker closing tickets by id (``ticket N closed``);
* a feed poller asking ``since=<timestamp>`` and getting new items;
* an idle queue worker long-polling (``wait_s``) a queue that is empty three
  times in four (``{"messages": [], "request_id": ...}``) between the
  messages it stores.

Healthy: no anomaly in 20 heartbeats, and none without a metric either while
each answer is new (one-way reading is reading). Stuck: escalated within 6.
The ``heartbeat init`` starter agent must not be escalated while its metric
rises; nor a consumer that polls an empty topic between the batches it stores,
its metric rising in the heartbeat before each round of polls; nor an on-call
watcher whose checks find nothing (idle wake-ups). One whose checks answer a
status, the same each time, is escalated unless its watch calls are exempt.

The ticks are the CLI's own ``tick`` command (``heartbeat.cli.main``), every
one loading the state from disk and saving it, run in one child process so
the 260 ticks cost one interpreter start instead of 260.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

KINDS = ("pager", "crawler", "writer", "queue", "feed", "idle")

AGENT = '''\
"""A {kind} agent, {health}, {per} action(s) a heartbeat."""

KIND = {kind!r}
HEALTHY = {healthy!r}
PER = {per!r}
WORDS = ("revenue", "margin", "churn", "forecast", "region", "supplier", "backlog", "hiring")


def _call(n):
    m = n if HEALTHY else 1  # stuck: the same content whatever the call asks for
    word = WORDS[m % len(WORDS)]
    if KIND == "pager":
        body = f"Page {{m}} of 400. {{word}} rose {{m % 7 + 1}}% in quarter {{m % 4 + 1}}; see table {{m}}."
        return "read_page", {{"cursor": n}}, body
    if KIND == "crawler":
        body = (
            f'{{{{"id": {{1000 + m}}, "name": "{{word}} kit {{m}}", '
            f'"price": {{m * 3}}.99, "stock": {{m % 13}}}}}}'
        )
        return "fetch", {{"url": f"https://shop.example.com/items/{{1041 + n}}"}}, body
    if KIND == "writer":
        text = f"Section {{n}}: what the {{word}} figures of part {{n}} say, in three paragraphs."
        return "write_section", {{"number": n, "text": text}}, "ok"
    if KIND == "queue":
        return "process_ticket", {{"ticket_id": 40016 + n}}, f"ticket {{40016 + m}} closed"
    if KIND == "idle":
        receive = ("sqs_receive", {{"queue": "orders", "wait_s": 20}})
        if not HEALTHY:  # a poison message, received again and again
            return (*receive, '{{"messages": [{{"id": "m-1", "body": "order 1"}}]}}')
        if n % 4:
            return (*receive, f'{{{{"messages": [], "request_id": "5bd21b6a-ec89-47a6-8a0a-{{n:012d}}"}}}}')
        return "store_order", {{"order_id": n}}, f"order {{n}} stored"
    since = f"2026-12-01T{{n // 60 % 24:02d}}:{{n % 60:02d}}:00Z"
    items = [{{"id": 7000 + m * 2 + i, "title": f"{{word}} post {{m}}.{{i}}", "at": since}} for i in range(2)]
    import json
    return "poll_feed", {{"since": since}}, json.dumps(items)


def step(ctx):
    done = ctx.data.get("n", 0)
    for i in range(1, PER + 1):
        tool, args, output = _call(done + i)
        ctx.record(tool, args, output=output)
    ctx.data["n"] = done + PER
    if HEALTHY:
        ctx.data["done"] = ctx.data.get("done", 0) + PER


def progress(ctx):
    return ctx.data.get("done", 0)
'''

# Runs in the child: each job is (folder, module, ticks, measured[, every]); every tick is
# `heartbeat tick --json`, with the module's progress metric when measured, back to back or, given
# ``every`` (seconds), each that long after the one before on a frozen clock: a scheduled wake-up.
DRIVER = r"""
import contextlib, datetime, io, json, os, sys
from heartbeat.cli.main import main

jobs = json.loads(sys.argv[1])
for folder, module, ticks, measured, *every in jobs:
    if every:
        # Every module imported and every model built before the clock is frozen: a pydantic model
        # first built under freezegun sees its FakeDatetime (see conftest.py).
        import importlib, pkgutil, heartbeat
        from freezegun import freeze_time
        from pydantic import BaseModel
        for found in pkgutil.walk_packages(heartbeat.__path__, "heartbeat."):
            if not found.name.endswith("__main__"):  # the CLI's entry point runs on import
                with contextlib.suppress(ImportError):  # an integration whose framework is absent
                    importlib.import_module(found.name)
        stack = list(BaseModel.__subclasses__())
        while stack:
            model = stack.pop()
            stack.extend(model.__subclasses__())
            if model.__module__.startswith("heartbeat."):
                model.model_rebuild(force=True)
    start = datetime.datetime(2026, 3, 10, 8, tzinfo=datetime.timezone.utc)
    os.chdir(folder)
    sys.path.insert(0, folder)
    flags = [] if module is None else [
        "--step", f"{module}:step",
        "--state-dir", os.path.join(folder, "state"), "--kill-file", os.path.join(folder, "KILL"),
    ]
    if module is not None and measured:
        flags += ["--progress", f"{module}:progress"]
    results = []
    for n in range(ticks):
        out = io.StringIO()
        at = start + datetime.timedelta(seconds=n * every[0]) if every else None
        with freeze_time(at, tick=True) if every else contextlib.nullcontext():
            code = main(["tick", "--json", *flags], out)
        lines = [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]
        results.append({"code": code, "json": lines})
    print(json.dumps({"folder": folder, "results": results}), flush=True)
"""


def _write_agent(root: Path, kind: str, healthy: bool, per: int, measured: bool = True) -> tuple[str, str]:
    module = f"agent_{kind}_{'ok' if healthy else 'stuck'}_{per}{'' if measured else '_unmeasured'}"
    folder = root / module
    folder.mkdir(parents=True)
    source = AGENT.format(kind=kind, healthy=healthy, per=per, health="healthy" if healthy else "stuck")
    (folder / f"{module}.py").write_text(source, encoding="utf-8")
    return str(folder), module


def _run(jobs: Sequence[tuple[Any, ...]]) -> dict[str, list[dict[str, Any]]]:
    """Run the jobs' ticks in one child process; each folder's tick results, in order."""
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps(jobs)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    runs: dict[str, list[dict[str, Any]]] = {}
    for line in done.stdout.splitlines():
        if line.startswith('{"folder"'):
            item = json.loads(line)
            runs[item["folder"]] = item["results"]
    assert len(runs) == len(jobs), done.stdout[-2000:] + done.stderr[-2000:]
    return runs


def _twins(tmp_path: Path, source: str, name: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """An agent from ``source`` (a template taking ``healthy``) ticked 20 times, and its stuck twin
    6: each one's tick results."""
    jobs: list[tuple[str, str | None, int, bool]] = []
    for healthy in (True, False):
        module = f"{name}_{'ok' if healthy else 'stuck'}"  # one child process imports both
        folder = tmp_path / module
        folder.mkdir()
        (folder / f"{module}.py").write_text(source.format(healthy=healthy), encoding="utf-8")
        jobs.append((str(folder), module, 20 if healthy else 6, True))
    runs = _run(jobs)
    return runs[jobs[0][0]], runs[jobs[1][0]]


def _ticks(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The JSON result of each tick that ran the step."""
    found = []
    for result in results:
        assert len(result["json"]) == 1, result
        found.append(result["json"][0])
    return found


@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, bool, int], list[dict[str, Any]]]:
    """Every agent, healthy (20 heartbeats) and stuck (6), at 5 and at 1 action a heartbeat; and
    each healthy one at 5 with no progress metric (``per`` 0 in the key)."""
    root = tmp_path_factory.mktemp("agents")
    jobs: list[tuple[str, str | None, int, bool]] = []
    where: dict[tuple[str, bool, int], str] = {}
    for kind in KINDS:
        for per in (5, 1):
            for healthy in (True, False):
                folder, module = _write_agent(root, kind, healthy, per)
                where[kind, healthy, per] = folder
                jobs.append((folder, module, 20 if healthy else 6, True))
        folder, module = _write_agent(root, kind, True, 5, measured=False)
        where[kind, True, 0] = folder
        jobs.append((folder, module, 20, False))
    runs = _run(jobs)
    return {key: runs[folder] for key, folder in where.items()}


@pytest.mark.parametrize("per", [5, 1])
@pytest.mark.parametrize("kind", KINDS)
def test_a_working_agent_whose_metric_rises_has_no_anomaly_in_20_heartbeats(
    agents: dict[tuple[str, bool, int], list[dict[str, Any]]], kind: str, per: int
) -> None:
    """Different calls of one shape, new content each time, the metric rising: never stuck."""
    ticks = _ticks(agents[kind, True, per])
    assert len(ticks) == 20
    assert [t["exit_code"] for t in ticks] == [0] * 20
    assert [t["progress"] for t in ticks] == [float(per * (i + 1)) for i in range(20)]
    flagged = [(t["tick"], a["kind"], a["message"]) for t in ticks for a in t["anomalies"]]
    assert flagged == []
    assert {t["decision"]["action"] for t in ticks} == {"continue"}


@pytest.mark.parametrize("kind", KINDS)
def test_a_working_agent_with_no_metric_has_no_anomaly_while_each_answer_is_new(
    agents: dict[tuple[str, bool, int], list[dict[str, Any]]], kind: str
) -> None:
    """No metric to say it works: one-way reading (new content each time) is still not stuck."""
    ticks = _ticks(agents[kind, True, 0])
    assert len(ticks) == 20 and [t["exit_code"] for t in ticks] == [0] * 20
    assert {t["progress"] for t in ticks} == {None}
    assert [(t["tick"], a["kind"], a["message"]) for t in ticks for a in t["anomalies"]] == []


@pytest.mark.parametrize("per", [5, 1])
@pytest.mark.parametrize("kind", KINDS)
def test_the_same_agent_stuck_with_a_flat_metric_is_escalated_within_6_heartbeats(
    agents: dict[tuple[str, bool, int], list[dict[str, Any]]], kind: str, per: int
) -> None:
    """The same calls with the same result each time and a flat metric: a human is called by tick 6."""
    results = agents[kind, False, per]
    codes = [r["code"] for r in results]
    assert 4 in codes, [r["json"][0]["message"] for r in results]
    escalated_at = codes.index(4) + 1  # the heartbeat that escalated exits 4, and so does every later one
    assert escalated_at <= 6
    assert "escalated to a human" in results[escalated_at - 1]["json"][0]["message"]
    assert codes[escalated_at:] == [4] * (len(codes) - escalated_at)
    assert set(codes[: escalated_at - 1]) == {0}


BURSTY = '''\
"""A consumer draining a topic in bursts: a batch stored every other heartbeat, and between
batches five polls of the empty topic in a tight loop (no wait argument: a repeat)."""

HEALTHY = {healthy!r}


def step(ctx):
    tick = ctx.data.get("tick", 0) + 1
    ctx.data["tick"] = tick
    if HEALTHY and tick % 2:
        batch = [tick * 10 + i for i in range(3)]
        ctx.record("consume", {{"topic": "orders", "max": 50}}, output=f"{{len(batch)}} records: {{batch}}")
        ctx.record("store_batch", {{"offsets": batch}}, output="stored")
        ctx.data["done"] = ctx.data.get("done", 0) + len(batch)
        return
    for _ in range(5):
        ctx.record("consume", {{"topic": "orders", "max": 50}}, output="0 records: []")


def progress(ctx):
    return ctx.data.get("done", 0)
'''


def test_a_consumer_polling_into_nothing_between_batches_is_not_escalated_while_its_metric_rises(
    tmp_path: Path,
) -> None:
    """Five identical polls of an empty topic are a repeat, and they come back every other
    heartbeat (the same kind after a recovery escalates at 2), but the metric rose in the
    heartbeat before each: instructions, never a human in 20 heartbeats. The same consumer
    whose topic never brings a batch, its metric flat, is escalated at its second heartbeat."""
    healthy_run, stuck_run = _twins(tmp_path, BURSTY, "bursty")
    healthy = _ticks(healthy_run)
    assert [t["exit_code"] for t in healthy] == [0] * 20
    assert [t["tick"] for t in healthy if t["anomalies"]] == list(range(2, 21, 2))  # the polls: repeat
    assert {t["decision"]["action"] for t in healthy} == {"continue", "try_alternative"}
    assert [r["code"] for r in stuck_run] == [0, 4, 4, 4, 4, 4]


WATCHER = '''\
"""An overnight on-call watcher: every wake-up the same checks; an incident once, at wake-up 7."""

import json

CHECKS = {checks!r}  # when all is well its checks answer nothing, an all-clear or the same data


def step(ctx):
    tick = ctx.data.get("tick", 0) + 1
    ctx.data["tick"] = tick
    incidents = [{{"id": "Q1T7", "title": "disk 91% on db-replica-2"}}] if tick == 7 else []
    if CHECKS == "nothing":
        found = json.dumps({{"incidents": incidents}})
        ctx.record("pagerduty.list_incidents", {{"statuses": ["triggered"]}}, output=found)
        alerts = {{"query": "ALERTS{{alertstate='firing'}}"}}
        ctx.record("prometheus.query", alerts, output='{{"result": []}}')
    elif CHECKS == "all clear":
        summary = "1 open incident: disk 91% on db-replica-2" if incidents else "All Systems Operational"
        ctx.record("statuspage.get_summary", {{}}, output=summary)
        ctx.record("grafana.get_alerts", {{"state": "firing"}}, output="0 firing alerts")
    elif CHECKS == "data":
        summary = "1 open incident: disk 91% on db-replica-2" if incidents else "api 99.98%, web 99.95%"
        ctx.record("statuspage.get_summary", {{}}, output=summary)
        ctx.record("grafana.get_panel", {{"panel": "error-rate"}}, output="error rate 0.2% (SLO 1%)")
    else:  # a failover it started long ago, polled: the same state on its way each wake-up
        status = "failover in progress (step 2 of 4)"
        ctx.record("rds.describe_failover", {{"cluster": "orders"}}, output=status)
    if incidents:
        ctx.record("pagerduty.acknowledge", {{"incident_id": "Q1T7"}}, output='{{"status": "acknowledged"}}')
'''

WATCHER_CONFIG = """\
[agent]
step = "{module}:step"
state_dir = "state"
kill_file = "KILL"
[detectors]
exempt = {exempt}
"""


def test_a_quiet_watcher_is_idle_and_one_whose_checks_answer_the_same_data_saw_nothing_move(
    tmp_path: Path,
) -> None:
    """A watcher whose wake-ups are the same checks finding nothing (``{"incidents": []}``), or
    reporting that nothing needs doing ("All Systems Operational", "0 firing alerts"), did its job:
    idle wake-ups, no anomaly in 20 heartbeats. So did one whose checks answer the same data each
    time ("api 99.98%, web 99.95%"): it saw nothing move (until 2026-12-06 it was escalated, and
    the README told its user to exempt its checks; exempted, it runs clean all the same). One
    polling a failover "in progress (step 2 of 4)" each wake-up waits on something that froze: with
    no metric it is escalated by its fourth wake-up."""
    jobs: list[tuple[str, str | None, int, bool, int]] = []
    cases = (
        ("quiet", "nothing", "[]"),
        ("clear", "all clear", "[]"),
        ("status", "data", "[]"),
        ("status_exempt", "data", '["statuspage.get_summary", "grafana.get_panel"]'),
        ("frozen", "frozen", "[]"),
    )
    for name, checks, exempt in cases:
        folder = tmp_path / name
        folder.mkdir()
        module = f"watcher_{name}"  # one child process imports them all: one name each
        (folder / f"{module}.py").write_text(WATCHER.format(checks=checks), encoding="utf-8")
        config = WATCHER_CONFIG.format(module=module, exempt=exempt)
        (folder / "heartbeat.toml").write_text(config, encoding="utf-8")
        jobs.append((str(folder), None, 20, True, 3600))  # hourly wake-ups
    runs = _run(jobs)
    for clean in (job[0] for job in jobs[:4]):
        ticks = _ticks(runs[clean])
        assert [t["exit_code"] for t in ticks] == [0] * 20, clean
        assert [(t["tick"], a["kind"]) for t in ticks for a in t["anomalies"]] == [], clean
    status = [r["code"] for r in runs[jobs[4][0]]]
    assert 4 in status[:4]  # escalated by its fourth wake-up


CHECKER = '''\
"""A daily certificate check: one look a wake-up, the days left counting down, nothing due until
the certificate enters the 30-day window (wake-up 15) and is renewed; its metric counts renewals."""

HEALTHY = {healthy!r}


def step(ctx):
    tick = ctx.data.get("tick", 0) + 1
    ctx.data["tick"] = tick
    left = 45 - tick
    due = "renewal due" if left <= 30 else "nothing due"
    ctx.record("tls.check_expiry", {{"host": "api.example.com"}}, output=f"{{left}} days left; {{due}}")
    if not HEALTHY:  # renews every wake-up; the server goes on serving the old certificate
        ctx.record("acme.create_order", {{"host": "api.example.com"}}, output=f"order {{7000 + tick}} valid")
    elif left == 30:
        ctx.record("acme.create_order", {{"host": "api.example.com"}}, output="order 7015 valid")
        ctx.data["renewed"] = 1


def progress(ctx):
    return ctx.data.get("renewed", 0)
'''


def test_a_daily_check_waiting_for_its_day_is_no_busy_agent_and_one_acting_in_vain_is(tmp_path: Path) -> None:
    """The same look every wake-up, its answer moving (the days left), the metric flat for 14
    heartbeats because nothing is due yet: a watcher's rounds, no ``no_progress``, no anomaly in 20
    heartbeats. The same check beside a renewal every wake-up that changes nothing (an act each
    time, the metric flat): busy in vain, escalated within 6."""
    healthy_run, stuck_run = _twins(tmp_path, CHECKER, "checker")
    healthy = _ticks(healthy_run)
    assert [t["progress"] for t in healthy] == [0.0] * 14 + [1.0] * 6
    assert [(t["tick"], a["kind"]) for t in healthy for a in t["anomalies"]] == []
    assert 4 in [r["code"] for r in stuck_run], [r["json"][0]["message"] for r in stuck_run]
    assert {a["kind"] for r in stuck_run for a in r["json"][0]["anomalies"]} == {"no_progress"}


FIXER = '''\
"""A coding agent whose metric counts passing tests: two fixes land, then a hard middle of five
wake-ups (each reads a file it had not read, edits it, reruns the tests, which fail differently
each time, and greps for what it learned) before the fixes land again, one a wake-up. Stuck: an
edit and the same failure every wake-up."""

HEALTHY = {healthy!r}
NAMES = ("parse", "serialize", "round_half", "convert", "validate", "normalize", "coerce", "format")
FAILURES = (
    "NameError: name 'precision' is not defined",
    "AttributeError: 'int' object has no attribute 'total_seconds'",
    "TypeError: list indices must be integers or slices, not str",
    "AssertionError: assert 344 == 345",
    "ValueError: invalid literal for int() with base 10: 'ms'",
)


def step(ctx):
    tick = ctx.data.get("tick", 0) + 1
    ctx.data["tick"] = tick
    if not HEALTHY:
        ctx.record("edit_file", {{"path": "src/fields.py", "line": 40 + tick}}, output="ok")
        ctx.record("run_tests", {{"path": "tests/test_fields.py"}}, error=f"FAILED test_x - {{FAILURES[3]}}")
        return
    name = NAMES[tick % len(NAMES)]
    ctx.record("read_file", {{"path": f"src/{{name}}.py"}}, output=f"def {{name}}(value, unit):")
    ctx.record("edit_file", {{"path": f"src/{{name}}.py", "line": 2}}, output="ok")
    if 3 <= tick <= 7:
        failure = FAILURES[tick - 3]
        ctx.record("run_tests", {{"path": "tests/test_fields.py"}}, error=f"FAILED test_x - {{failure}}")
        ctx.record("grep", {{"pattern": name}}, output=f"src/fields.py: from .{{name}} import {{name}}")
    else:
        ctx.data["passing"] = ctx.data.get("passing", 0) + 1
        ctx.record("run_tests", {{"path": "tests/test_fields.py"}}, output=f"{{ctx.data['passing']}} passed")


def progress(ctx):
    return ctx.data.get("passing", 0)
'''


def test_a_coding_agent_through_a_hard_middle_is_not_escalated_and_one_failing_alike_is(
    tmp_path: Path,
) -> None:
    """Its count of passing tests flat for six heartbeats while every look answers anew (a new file,
    a new failure, a new match): told to reassess from the fourth flat sample, but no human is called
    (``flat_grace``), and the count rises at the seventh. Until 2026-12-06 it was escalated there.
    The same agent editing and failing the same way each time is escalated within 6."""
    healthy_run, stuck_run = _twins(tmp_path, FIXER, "fixer")
    healthy = _ticks(healthy_run)
    assert [t["progress"] for t in healthy][:9] == [1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 3.0, 4.0]
    assert [(t["tick"], a["kind"]) for t in healthy for a in t["anomalies"]] == [
        (5, "no_progress"),
        (6, "no_progress"),
        (7, "no_progress"),
    ]
    assert [r["code"] for r in healthy_run] == [0] * 20
    assert 4 in [r["code"] for r in stuck_run], [r["json"][0]["message"] for r in stuck_run]


def test_the_init_starter_agent_is_not_escalated_while_its_metric_rises(tmp_path: Path) -> None:
    """`heartbeat init`'s own agent, as created, ticked 20 times: no anomaly, the metric 1..20."""
    init = subprocess.run(
        [sys.executable, "-m", "heartbeat", "init", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert init.returncode == 0, init.stderr
    ticks = _ticks(_run([(str(tmp_path), None, 19, True)])[str(tmp_path)])
    # and one more as cron runs it: its own process
    last = subprocess.run(
        [sys.executable, "-m", "heartbeat", "tick", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert last.returncode == 0, last.stderr
    ticks.append(json.loads(last.stdout))
    assert [t["progress"] for t in ticks] == [float(i) for i in range(1, 21)]
    assert [(t["tick"], a["kind"]) for t in ticks for a in t["anomalies"]] == []
    assert {t["decision"]["action"] for t in ticks} == {"continue"}


@pytest.mark.parametrize("kind", KINDS)
def test_the_fixtures_are_what_they_say(kind: str) -> None:
    """Healthy: 29 calls of one shape with 29 results; stuck: one result (the feed's echoed
    timestamp is volatile), except the writer, whose `ok` is the same either way, and the idle
    queue worker, whose receives of nothing are one result between its orders."""
    from heartbeat.detect.detectors import prints

    def results(healthy: bool) -> tuple[set[str], set[str | None]]:
        namespace: dict[str, Any] = {}
        exec(AGENT.format(kind=kind, healthy=healthy, per=1, health="-"), namespace)
        calls = [namespace["_call"](n) for n in range(1, 30)]
        keys = [prints(tool, args, output) for tool, args, output in calls]
        return {k.shape for k in keys}, {k.result for k in keys}

    shapes, healthy = results(True)
    if kind == "idle":  # 22 receives of nothing (one result, the request id volatile), 7 orders stored
        assert len(shapes) == 2 and len(healthy) == 1 + 7
    else:
        assert len(shapes) == (8 if kind == "writer" else 1)  # a writer's sections say different things
        assert len(healthy) == (1 if kind == "writer" else 29)
    assert len(results(False)[1]) == 1


RESTOCKER = '''\
"""A morning restocker written as the README's step is: it stops when ``ctx.record`` answers.
Each morning it looks at the open purchase orders and the stock; most mornings both answer
nothing, and on three a SKU runs low and it orders it (healthy). Its twin's supplier refuses
every order with the same error."""

HEALTHY = {healthy!r}


def step(ctx):
    day = ctx.data.get("day", 0) + 1
    ctx.data["day"] = day
    if ctx.record("sql.query", {{"sql": "SELECT * FROM purchase_orders WHERE open"}}, output="[]"):
        return
    low = '[{{"sku": "TEA-' + str(day) + '", "on_hand": 2}}]' if day % 6 == 5 else "[]"
    if ctx.record("sql.query", {{"sql": "SELECT sku FROM stock WHERE on_hand < 5"}}, output=low):
        return
    if low != "[]":
        if HEALTHY:
            if ctx.record("supplier.place_order", {{"sku": f"TEA-{{day}}"}}, output=f"PO-{{day}} created"):
                return
            ctx.data["ordered"] = ctx.data.get("ordered", 0) + 1
        else:
            error = "supplier rejected the order: account on credit hold"
            if ctx.record("supplier.place_order", {{"sku": f"TEA-{{day}}"}}, error=error):
                return
    ctx.record("append_file", {{"path": "restock.log", "text": f"day {{day}} checked"}}, output="ok")


def progress(ctx):
    return ctx.data.get("ordered", 0)
'''


def test_a_restocker_that_stops_when_told_is_not_stopped_before_its_quiet_round_finds_work(
    tmp_path: Path,
) -> None:
    """A scheduled wake-up that has only looked, each call once, is not answered a finding made of
    the wake-ups before it (its round again): a newcomer's restocker that returns at any answer
    was stopped at its first look every morning from the third on, never reached the stock
    query and ordered nothing while every SKU sold out, each finding dropped unseen as an idle
    wake-up's. Now it orders on each of its three low mornings in 20, never escalated."""
    jobs: list[tuple[str, str | None, int, bool]] = []
    for healthy in (True,):
        module = "restocker_ok"
        folder = tmp_path / module
        folder.mkdir()
        (folder / f"{module}.py").write_text(RESTOCKER.format(healthy=healthy), encoding="utf-8")
        jobs.append((str(folder), module, 20, True))
    healthy = _ticks(_run(jobs)[jobs[0][0]])
    assert [t["exit_code"] for t in healthy] == [0] * 20
    state = json.loads((tmp_path / "restocker_ok" / "state" / "state.json").read_text())
    assert state["data"].get("ordered", 0) == 3  # days 5, 11 and 17


DBCHECK = '''\
"""A nightly database check written as the README's step is: it stops when ``ctx.record`` answers.
Each night it asks the page count and the free pages (they move: the app writes all day), the
integrity check ("ok") and the hot query's plan (the same each night), then appends a line to
its log. No progress metric. Its twin's database answers the same every night (nobody wrote)."""

MOVING = {moving!r}


def step(ctx):
    night = ctx.data.get("night", 0) + 1
    ctx.data["night"] = night
    day = night if MOVING else 1
    looks = [
        ("sql.query", {{"sql": "PRAGMA page_count"}}, str(1000 + 37 * day)),
        ("sql.query", {{"sql": "PRAGMA freelist_count"}}, str(day * 13 % 97)),
        # (not ``PRAGMA integrity_check``: its "ok" is an all-clear, and a quiet round is idle)
        ("sql.query", {{"sql": "SELECT count(*) FROM sessions"}}, str(400 + 3 * day)),
        ("sql.query", {{"sql": "EXPLAIN QUERY PLAN SELECT * FROM events WHERE session_id = ?"}},
         "SEARCH events USING INDEX events_session_ts (session_id=?)"),
    ]
    for tool, args, output in looks:
        if ctx.record(tool, args, output=output):
            return
    if ctx.record("append_file", {{"path": "maintenance.log"}}, output="appended 1 line"):
        return
    ctx.data["checked"] = ctx.data.get("checked", 0) + 1
'''


def test_a_nightly_check_that_logs_its_round_is_not_stopped_mid_round_and_a_frozen_one_is_judged(
    tmp_path: Path,
) -> None:
    """A scheduled wake-up that only looked, each call once, and appended its line to its log as the
    night before did (bookkeeping, no more than a look), is not stopped mid-round, and a round
    whose page count moved is no evidence of being stuck: a newcomer's nightly DB check (live
    round 34) was stopped at its log line every night and told of a cycle the heartbeat then
    dropped. Now it checks all 20 nights, no finding. The same check on a database that answers
    the same every night saw nothing move: all 20 nights too (until 2026-12-06 it was escalated)."""
    jobs: list[tuple[str, str | None, int, bool, int]] = []
    for moving in (True, False):
        module = f"dbcheck_{'moving' if moving else 'frozen'}"
        folder = tmp_path / module
        folder.mkdir()
        (folder / f"{module}.py").write_text(DBCHECK.format(moving=moving), encoding="utf-8")
        jobs.append((str(folder), module, 20, False, 86400))  # nightly wake-ups
    runs = _run(jobs)
    for job in jobs:
        ticks = _ticks(runs[job[0]])
        assert [(t["tick"], a["kind"]) for t in ticks for a in t["anomalies"]] == [], job[1]
        assert {t["decision"]["action"] for t in ticks} == {"continue"}
        state = json.loads((Path(job[0]) / "state" / "state.json").read_text())
        assert state["data"]["checked"] == 20


def _wake_ups(step: Any, folder: Path, n: int) -> list[list[str]]:
    """``n`` wake-ups of ``step`` 30 minutes apart, no metric: the anomaly kinds of each."""
    from datetime import UTC, datetime, timedelta

    from heartbeat.testing import FakeClock, make_heartbeat

    clock = FakeClock(datetime(2026, 12, 4, 6, 0, tzinfo=UTC))
    hb = make_heartbeat(step, folder, clock=clock)
    kinds = []
    for _ in range(n):
        kinds.append([a.kind for a in hb.tick().anomalies])
        clock.advance(timedelta(minutes=30))
    return kinds


def _hex(*parts: object, length: int = 16) -> str:
    import hashlib

    return hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()[:length]


def test_workers_whose_things_have_hex_or_uuid_ids_are_not_stuck_for_their_listings(tmp_path: Path) -> None:
    """Live round 48, without a metric (as behind the MCP proxy): an inbox bot archiving three new
    Gmail messages a wake-up (ids of 16 hex digits) and a render worker claiming two new jobs by
    UUID were escalated (``cycle``, ``recurring``): each listing of new ids read as the last one,
    the ids masked like digests. A thing's own id is content."""

    def inbox(ctx: Any) -> None:
        ids = [_hex("gm", ctx.tick, i) for i in range(3)]
        listing = {"messages": [{"id": x, "threadId": x} for x in ids], "resultSizeEstimate": 3}
        ctx.record("gmail.users.messages.list", {"userId": "me", "q": "in:inbox"}, output=json.dumps(listing))
        for x in ids:
            ctx.record("gmail.users.messages.get", {"userId": "me", "id": x}, output=json.dumps({"id": x}))
            modified = json.dumps({"id": x, "labelIds": ["CATEGORY_UPDATES"]})
            ctx.record("gmail.users.messages.modify", {"id": x, "removeLabelIds": ["INBOX"]}, output=modified)

    def renders(ctx: Any) -> None:
        jobs = [_hex("job", ctx.tick, i, length=32) for i in range(2)]
        jobs = [f"{j[:8]}-{j[8:12]}-4{j[13:16]}-a{j[17:20]}-{j[20:32]}" for j in jobs]
        ctx.record("list_jobs", {"status": "queued"}, output=json.dumps({"jobs": [{"id": j} for j in jobs]}))
        for k, job in enumerate(jobs):
            ctx.record("claim_job", {"job_id": job}, output='{"ok": true}')
            ctx.record(
                "render_job", {"job_id": job}, output=f"rendered {120 + 24 * ((ctx.tick + k) % 5)} frames"
            )
            ctx.record("complete_job", {"job_id": job}, output='{"ok": true}')

    assert _wake_ups(inbox, tmp_path / "inbox", 12) == [[]] * 12
    assert _wake_ups(renders, tmp_path / "renders", 12) == [[]] * 12


def test_a_rollout_watcher_whose_status_fails_while_its_replicas_come_up_is_no_repeat(tmp_path: Path) -> None:
    """Live round 48: ``kubectl rollout status --timeout`` fails each wake-up while it reports 1, 2,
    3... of 8 replicas ready, all of it in its error: a repeat at the fourth wake-up. Frozen at 3 of
    8, it is stuck, escalated within five wake-ups."""
    status = 'Waiting for deployment "web" rollout to finish: {} of 8 updated replicas are available...\n'

    def watcher(frozen: bool) -> Any:
        def step(ctx: Any) -> None:
            ready = min(ctx.tick, 3) if frozen else ctx.tick
            error = status.format(ready) + "error: timed out waiting for the condition"
            ctx.record("kubectl", {"args": "rollout status deployment/web --timeout=20s"}, error=error)

        return step

    assert _wake_ups(watcher(False), tmp_path / "moving", 7) == [[]] * 7
    assert any("repeat" in kinds for kinds in _wake_ups(watcher(True), tmp_path / "frozen", 7))


def test_a_digest_over_quiet_channels_and_a_restocker_listing_open_orders_are_left_alone(
    tmp_path: Path,
) -> None:
    """Live round 50: a digest bot reading its 8 channels once a wake-up, every one quiet, was told
    `empty` at its first wake-up ("a tool that used to answer now returns nothing"); a restocker
    whose `open_orders` answered "No open orders." each hour was a repeat, its tool taken for the
    act "open". Both stay quiet through real ticks; a digest reading one channel over and over in a
    wake-up is still asked in vain."""
    from datetime import timedelta

    from heartbeat.testing import FakeClock, run_ticks

    channels = ["#general", "#random", "#eng", "#ops", "#sales", "#design", "#support", "#hiring"]

    def digest(ctx: Any) -> None:
        for name in channels:
            ctx.record("read_channel", {"channel": name}, output='{"messages": []}')

    def numbered(ctx: Any) -> None:  # channels #c0 to #c7: an answer of nothing is keyed by its call
        for n in range(8):
            ctx.record("read_channel", {"channel": f"#c{n}"}, output='{"messages": []}')

    def restock(ctx: Any) -> None:
        ctx.record("get_stock", {"sku": "A1"}, output='{"sku": "A1", "on_hand": 40, "reorder_at": 10}')
        ctx.record("open_orders", {"vendor": "acme"}, output="No open orders.")

    def stuck(ctx: Any) -> None:
        for _ in range(4):
            ctx.record("read_channel", {"channel": "#eng"}, output='{"messages": []}')

    hourly = timedelta(hours=1)
    for step, folder in ((digest, "digest"), (numbered, "numbered"), (restock, "restock")):
        results = run_ticks(step, tmp_path / folder, ticks=6, clock=FakeClock(step=hourly))
        assert [(r.anomalies, r.exit_code) for r in results] == [([], 0)] * 6, folder
    (first,) = run_ticks(stuck, tmp_path / "stuck", ticks=1, clock=FakeClock(step=hourly))
    assert "empty" in [a.kind for a in first.anomalies]
