"""heartbeat report: the page's structure for a known night (html.parser), the CLI, the escalation hook.

The known night is a real run through the runner with a fake clock: a
repeat, a loop and a burst of errors escalate at tick 4 (the runner writes
report.html then), a human resumes, pauses, resumes, drops a KILL file, and
the agent goes on. The browser tests (tests/report/test_browser.py) render
the same night in Chromium.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from heartbeat.config.types import parse_since
from heartbeat.report.data import collect
from heartbeat.report.page import AgentPage, render_agent
from heartbeat.report.rows import mark_repeats
from heartbeat.report.tuning import render_tuning, verdict
from heartbeat.report.write import parse_stretch, write_overview, write_report, write_tuning
from heartbeat.state.journal import Journal
from heartbeat.testing import EPOCH, FakeClock, make_heartbeat
from heartbeat.tick.runner import Heartbeat

SECRET = "SECRETTOKEN0123456789"


_FAILURES = ("ConnectError: upstream refused", "ReadTimeout after 5s", "HTTP 500 from the proxy")


def night_step(ctx: Any) -> None:
    """The scripted agent: healthy, repeating, looping, failing, then healthy again."""
    tick = ctx.tick
    if tick == 1:
        ctx.record("search", {"q": "watchdogs"}, output="5 hits for watchdogs", cost=0.25)
        ctx.record("read", {"url": "doc:1"}, output="a long text about watchdogs", cost=0.5)
        ctx.report_progress(1)
    elif tick == 2:
        for _ in range(3):
            ctx.record("search", {"q": "same query"}, output="3 hits for the query", cost=0.25)
        ctx.report_progress(1)
    elif tick == 3:
        for name in ("a", "b", "a", "b"):
            ctx.record("fetch", {"page": name}, output=f"page {name} text", cost=0.1)
        ctx.report_progress(1)
    elif tick == 4:
        for n in range(6):
            # Three failures, each twice: many, and repeating (an error rate, no recurring_error;
            # one error six times over, whatever was asked, would be a tool gone dark).
            ctx.record("api", {"call": n}, error=_FAILURES[n % 3], cost=0.0)
        ctx.report_progress(1)
    else:
        ctx.record("write_note", {"n": tick}, output="a note with some words", cost=0.05)
        ctx.report_progress(tick - 3)


@dataclass
class Night:
    """The folder, heartbeat and clock of a known night, and the page the escalation wrote."""

    folder: Path
    hb: Heartbeat
    clock: FakeClock
    escalation_page: str
    results: list[Any] = field(default_factory=list)

    @property
    def state_dir(self) -> Path:
        return self.hb.state_dir


def make_night(folder: Path, webhook_url: str | None = None) -> Night:
    """Run the known night in ``folder``; notifications go to a file (and ``webhook_url`` if given)."""
    clock = FakeClock(EPOCH, step=timedelta(seconds=1))
    notify: list[dict[str, Any]] = [{"type": "file", "name": "file", "path": str(folder / "notes.jsonl")}]
    if webhook_url:
        notify.append({"type": "webhook", "name": "hook", "url": webhook_url})
    hb = make_heartbeat(
        night_step,
        folder,
        clock=clock,
        notify=notify,
        budget={"cost_per_day": 10.0, "actions_per_tick": 8},
    )
    results = []
    for _ in range(4):
        clock.advance(timedelta(minutes=30))
        results.append(hb.tick())
    assert results[-1].outcome == "needs_human", [r.message for r in results]
    escalation_page = (hb.state_dir / "report.html").read_text()
    clock.advance(timedelta(minutes=30))
    hb.resume("try the archive")
    clock.advance(timedelta(minutes=30))
    results.append(hb.tick())
    hb.pause("lunch")
    clock.advance(timedelta(minutes=30))
    results.append(hb.tick())
    hb.resume()
    hb.kill.engage("stop for the test")
    clock.advance(timedelta(minutes=30))
    results.append(hb.tick())
    hb.kill.release()
    clock.advance(timedelta(minutes=30))
    results.append(hb.tick())
    assert [r.outcome for r in results] == [
        "ran", "ran", "ran", "needs_human", "ran", "paused", "killed", "ran"
    ]  # fmt: skip
    return Night(folder, hb, clock, escalation_page, results)


@pytest.fixture
def night(tmp_path: Path) -> Night:
    return make_night(tmp_path)


# -- a small DOM from html.parser


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node] = field(default_factory=list)
    text: str = ""

    def all(self, tag: str | None = None, **attrs: str) -> Iterator[Node]:
        for child in self.children:
            if (tag is None or child.tag == tag) and all(
                (
                    v in child.attrs.get(k.rstrip("_"), "").split()
                    if k == "class_"
                    else child.attrs.get(k) == v
                )
                for k, v in attrs.items()
            ):
                yield child
            yield from child.all(tag, **attrs)

    def one(self, tag: str | None = None, **attrs: str) -> Node:
        found = list(self.all(tag, **attrs))
        assert len(found) == 1, (tag, attrs, len(found))
        return found[0]

    def texts(self) -> str:
        return self.text + "".join(c.texts() for c in self.children)


VOID = {"meta", "br", "input", "link", "img", "hr", "col", "wbr", "source"}


class Tree(HTMLParser):
    """Parse a page into nodes, checking that every element is closed in order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(Node("#text", {}, text=data))


def parse(html: str) -> Node:
    tree = Tree()
    tree.feed(html)
    tree.close()
    assert tree.stack == [tree.root], [n.tag for n in tree.stack]
    return tree.root


def external_refs(html: str) -> list[str]:
    """Every src/href/url() that would make a network request (anything but #fragments and data:)."""
    refs = re.findall(r"""(?<![\w-])(?:src|href|action|poster|srcset)\s*=\s*["']?([^"'\s>]+)""", html, re.I)
    refs += re.findall(r"url\(\s*['\"]?([^'\")]+)", html, re.I)
    refs += re.findall(r"@import", html)
    return [r for r in refs if not r.startswith(("#", "data:")) and not r.endswith(".html")]


# -- the agent page


def test_the_escalating_tick_writes_report_html_beside_escalation_md(night: Night) -> None:
    """At escalation the runner writes report.html (0600) with that tick's own events, and names it."""
    page = night.escalation_page
    assert (night.state_dir / "ESCALATION.md").exists() or night.results[4].outcome == "ran"
    root = parse(page)
    # The escalating tick's events were not journaled yet when the page was made: they came as pending.
    marks = {(m.attrs["data-kind"], m.attrs["data-tick"]) for m in root.all("use", class_="mk")}
    assert ("error_rate", "4") in marks and ("escalation", "4") in marks
    # Its own heartbeat's sample and outcome came from state.json: the tick event was still to come.
    last = list(root.one("svg", id="timeline").all("circle", class_="pt"))[-1]
    assert last.attrs["class"] == "pt" and last.attrs["data-first"] == "4"
    assert "progress 1" in last.texts() and "outcome needs_human" in last.texts()
    assert "needs a human" in root.one("h1").texts()
    note = json.loads((night.folder / "notes.jsonl").read_text().splitlines()[0])
    assert f"Report: {night.state_dir / 'report.html'}" in note["text"]
    assert "as a page: " in night.results[3].message
    mode = stat.S_IMODE(os.stat(night.state_dir / "report.html").st_mode)
    assert mode == 0o600


def test_the_page_holds_the_timeline_points_markers_and_rows_of_the_night(night: Night) -> None:
    """One point per heartbeat, markers by kind at their ticks, and the escalation stretch's rows."""
    path = write_report(night.hb, now=night.clock())
    root = parse(path.read_text())
    points = list(root.one("svg", id="timeline").all("circle", class_="pt"))
    # 8 heartbeats with a tick event (the KILLed one has none: its kill shows at the next heartbeat).
    assert [(p.attrs["data-first"], p.attrs["data-last"]) for p in points] == [
        ("1", "1"), ("2", "2"), ("3", "3"), ("4", "4"), ("5", "5"), ("5", "5"), ("6", "6")
    ]  # fmt: skip
    assert "none" not in points[0].attrs["class"]
    marks = sorted((m.attrs["data-kind"], int(m.attrs["data-tick"])) for m in root.all("use", class_="mk"))
    assert marks == sorted(
        [
            ("repeat", 2), ("loop", 3), ("error_rate", 4), ("no_progress", 4),
            ("recovery", 2), ("recovery", 3), ("escalation", 4),
            ("resume", 5), ("pause", 5), ("resume", 6), ("kill", 6),
        ]
    )  # fmt: skip
    # Each marker points at its shape; every kind has its own symbol.
    symbols = {s.attrs["id"] for s in root.all("symbol")}
    assert {m.attrs["href"] for m in root.all("use", class_="mk")} <= {f"#{s}" for s in symbols}
    # The default stretch: the stuck streak (ticks 2-4) and one tick before it.
    table = root.one("table", id="actions")
    shown = [r for r in table.one("tbody").all("tr") if "hidden" not in r.attrs]
    assert sorted({int(r.attrs["data-tick"]) for r in shown}) == [1, 2, 3, 4]
    assert len(shown) == 2 + 3 + 4 + 6
    headers = [th.texts() for th in table.one("thead").all("th")]
    assert headers == ["#", "tick", "tool", "arguments", "output", "error", "cost", "flags"]
    assert all(th.attrs.get("scope") == "col" for th in table.one("thead").all("th"))


def test_repeated_and_cycling_calls_are_marked_in_words_not_colour_alone(night: Night) -> None:
    """The three same searches are 'repeated ×3', the a/b fetches a 'cycle of 2', the trips named."""
    root = parse(write_report(night.hb, now=night.clock()).read_text())
    rows = {int(next(r.all("td")).texts()): r for r in root.one("table", id="actions").one("tbody").all("tr")}
    for index in (3, 4, 5):
        assert "rep" in rows[index].attrs["class"].split()
        assert "repeated ×3" in rows[index].texts()
    for index in (6, 7, 8, 9):
        assert "cycle of 2" in rows[index].texts()
    assert "tripped repeat" in rows[5].texts() and "tripped loop" in rows[9].texts()
    assert "ConnectError: upstream refused" in rows[10].texts()
    assert "class" not in rows[1].attrs and "flag" not in "".join(n.tag for n in rows[1].all())


def test_the_page_says_status_how_to_resume_what_happened_and_budgets(night: Night) -> None:
    """Status, commands, the events table and the budget rows are in the page as text."""
    root = parse(write_report(night.hb, now=night.clock()).read_text())
    assert [h.texts() for h in root.all("h2")] == [
        "Status now", "Timeline", "What happened", "Actions of a stretch", "Budgets spent"
    ]  # fmt: skip
    assert "active" in root.one("h1").texts()
    status = root.one("section", **{"aria-labelledby": "h-status"}).texts()
    # The page sits in the state folder: its commands name that folder, to work from anywhere.
    where = f"--state-dir {night.hb.state_dir.absolute()}"
    assert (
        f"heartbeat pause {where}" in status
        and "touch " in status
        and f"heartbeat log {where} -n 0" in status
    )
    events = root.one("table", id="events").texts()
    for text in (
        "try_alternative, streak 1",
        "resumed from needs_human; note: try the archive",
        "paused: lunch",
    ):
        assert text in events
    assert "KILL: stop for the test" in events
    budget = root.one("section", **{"aria-labelledby": "h-budget"}).texts()
    # 0.25 + 0.5 + 3 * 0.25 + 4 * 0.1 + 2 * 0.05 = 2.0 of the 10.0 a day; 6 actions of 8 in tick 4.
    assert re.search(r"cost on 2026-01-01\s*2\s*10\s*20%", budget), budget
    assert re.search(r"most actions in one heartbeat\s*6\s*8\s*75%", budget), budget
    assert "17 actions (6 errors), cost 2." in budget


def test_the_page_is_self_contained_and_accessible(night: Night) -> None:
    """No external reference, a policy forbidding loads, a labelled SVG, lang, viewport, dark, print."""
    html = write_report(night.hb, now=night.clock()).read_text()
    assert external_refs(html) == []
    root = parse(html)
    policy = root.one("meta", **{"http-equiv": "Content-Security-Policy"}).attrs["content"]
    assert "default-src 'none'" in policy and "script-src 'sha256-" in policy
    assert root.one("html").attrs["lang"] == "en"
    assert "width=device-width" in root.one("meta", name="viewport").attrs["content"]
    svg = root.one("svg", id="timeline")
    assert svg.attrs["role"] == "img"
    title, desc = (root.one(id=i).texts() for i in svg.attrs["aria-labelledby"].split())
    assert title == "Timeline of 7 heartbeats"
    assert "Repeat at tick 2." in desc and "Escalation at tick 4." in desc
    css = root.one("style").texts()
    assert "prefers-color-scheme:dark" in css and "@media print" in css and "max-width:40rem" in css
    # The stretch picker is hidden until the script shows it: the page reads the same without it.
    assert "hidden" in root.one("form", id="pick").attrs


def test_secrets_are_redacted_from_the_page(tmp_path: Path, webhook_server: Any) -> None:
    """A webhook token that reached the journal before it was configured is cut out of the page."""
    url = webhook_server.url(f"/hooks/{SECRET}")
    night = make_night(tmp_path, webhook_url=url)
    Journal(night.hb.store.journal_path).append(
        [{"at": EPOCH.isoformat(), "tick": 6, "event": "pause", "reason": f"old hook {url} said {SECRET}"}]
    )
    with night.hb.store.journal_path.open("ab") as journal:
        journal.write(b'{"torn": \n')  # a hand edit or a torn line: skipped and counted
    html = write_report(night.hb, now=night.clock()).read_text()
    assert "1 unreadable journal line skipped." in html
    assert SECRET not in html and "/hooks/" not in html
    assert "old hook http://127.0.0.1:" in html
    assert SECRET not in night.escalation_page


def test_since_and_stretch_choose_what_the_page_shows(night: Night) -> None:
    """--since drops older heartbeats; --stretch picks the actions table's ticks."""
    now = night.clock()
    since = EPOCH + timedelta(minutes=30 * 4, seconds=30)
    root = parse(write_report(night.hb, now=now, since=since, stretch=(5, 6)).read_text())
    firsts = [p.attrs["data-first"] for p in root.all("circle", class_="pt")]
    assert firsts == ["5", "5", "6"]
    shown = [r for r in root.one("table", id="actions").one("tbody").all("tr") if "hidden" not in r.attrs]
    assert {r.attrs["data-tick"] for r in shown} == {"5", "6"}
    assert "Actions of ticks 5 to 6: 2 actions" in root.one("caption", id="stretch-caption").texts()


def test_a_corrupt_state_still_gives_a_page_from_the_journal(night: Night) -> None:
    """An unreadable state.json is named on the page; the timeline is still drawn."""
    night.hb.store.state_path.write_text("{not json")
    root = parse(write_report(night.hb, now=night.clock()).read_text())
    assert "state unreadable" in root.one("h1").texts()
    assert "is not valid JSON" in root.texts()
    assert len(list(root.all("circle", class_="pt"))) == 7


@pytest.mark.parametrize("saved", ["[1,2", '{"ticks": "many"}'])
def test_the_report_command_refuses_a_corrupt_state_with_exit_2(tmp_path: Path, saved: str) -> None:
    """Regression: ``heartbeat report`` on a corrupt or wrongly typed state.json exited 0 and wrote the
    page, where ``--help`` and the README say exit 2; now one line, exit 2, no page (the file is only
    copied aside, as every reader of a corrupt state does)."""
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "state.json").write_text(saved)
    for out in ([], ["--out", "-"]):
        done = run_cli(tmp_path, "report", "--state-dir", "state", *out)
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stdout == "" and done.stderr.count("\n") == 1 and "state.json" in done.stderr
        assert "Traceback" not in done.stderr
    assert not (tmp_path / "state" / "report.html").exists()
    assert (tmp_path / "state" / "state.json").read_text() == saved


def test_an_empty_state_folder_gives_a_page_that_says_so(tmp_path: Path) -> None:
    """An empty state folder: a page with no points, no rows and a sentence instead."""
    hb = make_heartbeat(night_step, tmp_path)
    hb.state_dir.mkdir()
    root = parse(write_report(hb, tmp_path / "out.html", now=EPOCH).read_text())
    assert list(root.all("circle", class_="pt")) == []
    assert "No action recorded in this journal" in root.texts()
    assert root.all("script") is not None and not list(root.all("script"))


# -- the pure parts


def test_mark_repeats_finds_runs_and_back_to_back_cycles() -> None:
    """Runs get their length; a cycle is marked only where it went round twice with two different calls."""
    repeat, cycle = mark_repeats(list("xaaabababcdecdez"))
    assert repeat == [0, 3, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    assert cycle == [0, 0, 0, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 0]
    assert mark_repeats(list("aaaa"))[1] == [0, 0, 0, 0]


def test_a_long_journal_is_bucketed_and_the_markers_still_count(tmp_path: Path) -> None:
    """Past MAX_SLOTS heartbeats, points are buckets; anomaly counts and the last values survive."""
    events: list[dict[str, Any]] = []
    for tick in range(1, 2001):
        at = (EPOCH + timedelta(minutes=tick)).isoformat()
        events.append(
            {"at": at, "tick": tick, "event": "action", "index": tick, "tool": "t", "summary": "t()"}
        )
        if tick % 100 == 0:
            events.append({"at": at, "tick": tick, "event": "anomaly", "kind": "repeat", "message": "m"})
        events.append({"at": at, "tick": tick, "event": "tick", "outcome": "ran", "progress": tick})
    timeline = collect(events)
    assert len(timeline.slots) <= 600 and timeline.bucket == 4
    assert timeline.heartbeats == 2000 and timeline.anomaly_counts == {"repeat": 20}
    assert timeline.slots[-1].progress == 2000 and timeline.slots[-1].last_tick == 2000
    assert sum(len(s.anomalies.get("repeat", [])) for s in timeline.slots) == 20


def test_parse_since_and_stretch() -> None:
    """Durations back from now, ISO dates, FROM:TO; bad ones are one clear usage error."""
    assert parse_since("6h", EPOCH) == EPOCH - timedelta(hours=6)
    assert parse_since("2026-01-01", EPOCH) == EPOCH
    assert parse_stretch("4:9") == (4, 9) and parse_stretch("7") == (7, 7) and parse_stretch(":3") == (1, 3)
    from heartbeat.base.errors import UsageError

    for bad in ("yesterday", "5:2", "a:b"):
        with pytest.raises(UsageError):
            parse_since(bad, EPOCH) if bad == "yesterday" else parse_stretch(bad)


# -- the tuning view

TRACES: list[dict[str, Any]] = [
    {
        "trace": "swe-17", "label": "stuck", "onset": 15, "actions": 40, "ticks": 12,
        "first_anomaly": {"tick": 6, "action": 21, "kind": "loop"},
        "escalated": {"tick": 9, "action": 33}, "kinds": ["loop", "no_progress"],
        "anomalies": [
            {"tick": 6, "action": 21, "kind": "loop", "message": "cycle a b"},
            {"tick": 8, "action": None, "kind": "no_progress", "message": "flat"},
            {"tick": 9, "action": 33, "kind": "loop", "message": "cycle a b"},
        ],
    },
    {
        "trace": "shop-3", "label": "healthy", "onset": None, "actions": 10, "ticks": 6,
        "first_anomaly": {"tick": 2, "action": 4, "kind": "empty"}, "escalated": None,
        "kinds": ["empty"], "anomalies": [{"tick": 2, "action": 4, "kind": "empty", "message": "short"}],
    },
    {
        "trace": "qa-<9>", "label": "stuck", "onset": 3, "actions": 8, "ticks": 4,
        "first_anomaly": None, "escalated": None, "kinds": [], "anomalies": [],
    },
    {
        "trace": "broken", "label": "unclear", "onset": None, "actions": 0, "ticks": 0,
        "first_anomaly": None, "escalated": None, "kinds": [], "anomalies": [], "error": "line 3: not JSON",
    },
]  # fmt: skip
CONFUSION = {
    "stuck": 2, "stuck_escalated": 1, "stuck_missed": 1, "stuck_flagged": 1, "healthy": 1,
    "healthy_escalated": 0, "healthy_with_anomaly": 1, "unclear": 1, "unlabelled": 0, "median_delay": 18,
}  # fmt: skip


def test_the_tuning_view_shows_each_detector_against_the_onset_and_the_confusion() -> None:
    """A strip per trace along its actions with onset, markers and escalation; detector rows; confusion."""
    html = render_tuning(TRACES, CONFUSION)
    assert external_refs(html) == []
    root = parse(html)
    rows = list(root.one("table", id="traces").one("tbody").all("tr"))
    assert [r.one("th").texts() for r in rows] == ["swe-17", "shop-3", "qa-<9>", "broken"]
    assert [r.attrs["class"] for r in rows] == ["v-caught", "v-quiet", "v-missed", "v-error"]
    first = rows[0]
    assert "caught, 18 action(s) after the onset" in first.texts()
    assert "loop at action 21 (tick 6)" in first.texts() and "action 33 (tick 9)" in first.texts()
    marks = sorted((m.attrs["data-kind"], int(m.attrs["data-action"])) for m in first.all("use", class_="mk"))
    # no_progress names no action: it sits at tick 8's place, 8 of 12 ticks along 40 actions.
    assert marks == [("loop", 21), ("loop", 33), ("no_progress", 27)]
    strip = first.one("svg", class_="strip")
    label = strip.attrs["aria-label"]
    assert (
        "onset at action 15" in label
        and "escalated at action 33" in label
        and "loop at action 21, 33" in label
    )
    assert first.one("line", class_="onset") is not None
    assert "error: line 3: not JSON" in rows[3].texts()
    detectors = {
        r.one("th").texts().strip(): [td.texts() for td in r.all("td")]
        for r in root.one("table", id="detectors").one("tbody").all("tr")
    }
    assert detectors["loop"] == ["1 of 2", "0", "6", "0 of 1"]
    assert detectors["no_progress"] == ["1 of 2", "0", "12", "0 of 1"]
    assert detectors["empty"] == ["0 of 2", "0", "–", "1 of 1"]
    grid = root.one("table", id="confusion").one("tbody")
    cells = {r.one("th").texts(): r.one("td").texts() for r in grid.all("tr")}
    assert cells["stuck_missed"] == "1" and cells["median_delay"] == "18"


def test_tuning_confusion_grid_when_the_counts_are_nested() -> None:
    """A mapping of mappings is drawn as a grid; a missing count is a dash."""
    root = parse(render_tuning(TRACES[:1], {"stuck": {"escalated": 1, "quiet": 1}, "healthy": {"quiet": 1}}))
    grid = root.one("table", id="confusion")
    assert [th.texts() for th in grid.one("thead").all("th")] == ["escalated", "quiet"]
    cells = [[td.texts() for td in r.all("td")] for r in grid.one("tbody").all("tr")]
    assert cells == [["1", "1"], ["–", "1"]]


def test_tuning_verdicts_and_flat_confusion() -> None:
    """Early, false alarm, unlabelled; a flat confusion mapping is one row per key."""
    assert verdict({"label": "stuck", "onset": 8, "escalated": {"tick": 2, "action": 5}})[0] == "early"
    assert verdict({"label": "healthy", "escalated": {"tick": 2, "action": 5}})[0] == "false"
    assert verdict({"label": None, "escalated": None}) == ("unlabelled", "unlabelled, not escalated")
    assert verdict({"label": "unclear", "escalated": {"tick": 1}}) == ("unclear", "unclear, escalated")
    root = parse(render_tuning([], {"tp": 3, "fp": 1, "rate": 0.75, "median_delay": None}))
    grid = root.one("table", id="confusion").one("tbody")
    cells = [[c.texts() for c in r.all() if c.tag in ("th", "td")] for r in grid.all("tr")]
    assert cells == [["tp", "3"], ["fp", "1"], ["rate", "0.75"], ["median_delay", "–"]]


# -- the command


def test_cli_report_writes_the_page_and_prints_its_path(night: Night) -> None:
    """`heartbeat report` writes <state>/report.html; --out elsewhere; --out - prints; bad input exits 2."""
    state = str(night.state_dir)
    done = run_cli(night.folder, "report", "--state-dir", state)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(night.state_dir / "report.html")
    out = night.folder / "night.html"
    done = run_cli(night.folder, "report", "--state-dir", state, "--out", str(out), "--stretch", "2:3")
    assert done.returncode == 0 and out.exists(), done.stderr
    printed = run_cli(night.folder, "report", "--state-dir", state, "--out", "-")
    assert printed.stdout.startswith("<!DOCTYPE html>") and printed.stdout.rstrip().endswith("</html>")
    bad = run_cli(night.folder, "report", "--state-dir", state, "--since", "last tuesday")
    assert bad.returncode == 2 and "--since" in bad.stderr and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_cli_report_waits_for_the_lock_of_a_busy_state_folder(night: Night) -> None:
    """Writing into a state folder another heartbeat holds: exit 5 after a short wait, nothing written."""
    (night.state_dir / "report.html").unlink()
    with night.hb.store.lock():
        done = run_cli(night.folder, "report", "--state-dir", str(night.state_dir))
    assert done.returncode == 5, done.stderr
    assert not (night.state_dir / "report.html").exists()


def test_cli_report_over_several_agents_writes_an_overview_linking_each_page(tmp_path: Path) -> None:
    """A multi-agent config: each agent's page in its state folder and one overview linking them."""
    (tmp_path / "agents.py").write_text(
        "def good(ctx):\n    ctx.record('work', {'n': ctx.tick}, output=f'step {ctx.tick} is done')\n"
        "    ctx.report_progress(ctx.tick)\n"
        "def stuck(ctx):\n    ctx.record('search', {'q': 'same'}, output='no results here')\n"
        "    ctx.report_progress(0)\n"
    )
    (tmp_path / "heartbeat.toml").write_text(
        '[schedule]\nevery = "30m"\n[[agents]]\nname = "good"\nstep = "agents:good"\nstate_dir = "s-good"\n'
        '[[agents]]\nname = "stuck"\nstep = "agents:stuck"\nstate_dir = "s-stuck"\n'
    )
    for _ in range(5):
        run_cli(tmp_path, "tick")
    done = run_cli(tmp_path, "report")
    assert done.returncode == 0, done.stderr
    overview = tmp_path / "report.html"
    assert done.stdout.split() == [
        str(overview), str(tmp_path / "s-good" / "report.html"), str(tmp_path / "s-stuck" / "report.html")
    ]  # fmt: skip
    html = overview.read_text()
    assert external_refs(html) == []
    root = parse(html)
    rows = list(root.one("table", id="agents").one("tbody").all("tr"))
    links = [r.one("a").attrs["href"] for r in rows]
    assert links == ["s-good/report.html", "s-stuck/report.html"]
    good, stuck = (r.texts() for r in rows)
    assert "active" in good and "0 of 3" in good
    # Escalated (how many stuck heartbeats that takes is the policy's business, not the report's).
    assert "needs a human" in stuck and re.search(r"[1-3] of 3", stuck)
    assert "no " in good  # not overdue: ticked just now, every 30m
    spark = rows[0].one("svg", class_="spark")
    assert spark.attrs["aria-label"] == "progress of good: 1, 2, 3, 4, 5"
    agent_page = parse((tmp_path / "s-stuck" / "report.html").read_text())
    assert agent_page.one("a").attrs["href"] == "../report.html"
    assert run_cli(tmp_path, "report", "--stretch", "1:2").returncode == 2


def _stretch_night(resume_at: int | None) -> list[dict[str, Any]]:
    """A repeat at tick 2 (recovered), then no_progress from tick 7 to an escalation at tick 9."""
    events: list[dict[str, Any]] = []
    for tick in range(1, 10):
        at = (EPOCH + timedelta(minutes=tick)).isoformat()
        events.append(
            {"at": at, "tick": tick, "event": "action", "index": tick, "tool": "t", "summary": "t()"}
        )
        streak = {2: 1, 7: 1, 8: 2, 9: 3}.get(tick, 0)
        if streak:
            kind = "repeat" if tick == 2 else "no_progress"
            events.append({"at": at, "tick": tick, "event": "anomaly", "kind": kind, "message": "m"})
        decision = "escalate" if tick == 9 else "try_alternative" if streak else "continue"
        events.append(
            {"at": at, "tick": tick, "event": "decision", "decision": decision, "stuck_streak": streak}
        )
        if tick == 9:
            events.append({"at": at, "tick": tick, "event": "escalation", "reason": "stuck"})
        events.append({"at": at, "tick": tick, "event": "tick", "outcome": "ran", "progress": 1})
        if tick == resume_at:
            events.append({"at": at, "tick": tick, "event": "resume", "from": "paused"})
    return events


def test_the_default_stretch_reaches_back_to_an_earlier_stall_of_the_same_night() -> None:
    """The stretch before an escalation starts before an earlier recovered anomaly, not before a resume."""
    night = collect(_stretch_night(None))
    assert night.stretch == (1, 9)
    # The repeat at tick 2 was followed by a clean tick: the instructions worked.
    assert [(m.kind, m.tick) for m in night.notable if m.kind == "recovered"] == [("recovered", 3)]
    assert collect(_stretch_night(5)).stretch == (6, 9)
    assert collect(_stretch_night(None), stretch=(3, 4)).stretch == (3, 4)


def test_cli_report_on_a_state_folder_that_does_not_exist_exits_2_and_creates_nothing(tmp_path: Path) -> None:
    """No state folder: one line, exit 2, and no folder made; in an overview, a row without a page."""
    missing = tmp_path / "nowhere"
    done = run_cli(tmp_path, "report", "--state-dir", str(missing))
    assert done.returncode == 2 and "no state folder" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not missing.exists()
    (tmp_path / "heartbeat.toml").write_text(
        '[[agents]]\nname = "a"\nstep = "x:y"\nstate_dir = "sa"\n'
        '[[agents]]\nname = "b"\nstep = "x:y"\nstate_dir = "sb"\n'
    )
    (tmp_path / "sa").mkdir()
    done = run_cli(tmp_path, "report")
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "sb").exists()
    rows = list(parse((tmp_path / "report.html").read_text()).one("tbody").all("tr"))
    assert [len(list(r.all("a"))) for r in rows] == [1, 0]
    assert "no state yet" in rows[1].texts() and "no state folder at" in rows[1].texts()


def test_a_report_that_cannot_be_written_costs_the_page_not_the_escalation(tmp_path: Path) -> None:
    """report.html blocked by a folder of that name: the tick still escalates and journals why."""
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "report.html").mkdir()
    night_clock = FakeClock(EPOCH, step=timedelta(seconds=1))
    hb = make_heartbeat(night_step, tmp_path, clock=night_clock)
    results = [hb.tick() for _ in range(4)]
    assert results[-1].outcome == "needs_human" and results[-1].exit_code == 4
    assert (tmp_path / "state" / "ESCALATION.md").exists()
    events = list(Journal(hb.store.journal_path).read())
    errors = [e for e in events if e["event"] == "report_error"]
    assert len(errors) == 1 and "report.html" in errors[0]["error"]


HOSTILE = '<img src="https://example.invalid/x.png"><script>fetch("https://example.invalid")</script>'


def hostile_folder(folder: Path) -> Heartbeat:
    """A state folder whose journal holds markup and URLs in every text an agent controls."""
    hb = make_heartbeat(night_step, folder)
    at = EPOCH.isoformat()
    Journal(hb.store.journal_path).append(
        [
            {"at": at, "tick": 1, "event": "action", "index": 1, "tool": HOSTILE,
             "summary": f"{HOSTILE}({HOSTILE})", "error": HOSTILE, "cost": 0.1},
            {"at": at, "tick": 1, "event": "anomaly", "kind": HOSTILE, "message": HOSTILE, "action": 1},
            {"at": at, "tick": 1, "event": "decision", "decision": "try_alternative", "stuck_streak": 1,
             "instructions": HOSTILE},
            {"at": at, "tick": 1, "event": "tick", "outcome": HOSTILE, "progress": 1},
            {"at": at, "tick": 1, "event": "pause", "reason": HOSTILE},
        ]
    )  # fmt: skip
    return hb


def test_markup_in_the_journal_is_text_not_markup(tmp_path: Path) -> None:
    """Tool names, arguments, errors, kinds and reasons full of tags stay text: no img, one script (ours)."""
    html = write_report(hostile_folder(tmp_path), now=EPOCH).read_text()
    root = parse(html)
    assert list(root.all("img")) == []
    assert len(list(root.all("script"))) == 1 and "fetch" not in next(root.all("script")).texts()
    assert HOSTILE in root.texts()


# An escape sequence, a bell and a right-to-left override (it shows the rest of its line reversed).
CONTROLS = "search\x1b]0;owned\x07\x1b[2J \u202egnp.exe"


def test_control_and_bidi_characters_in_agent_text_are_shown_escaped(tmp_path: Path) -> None:
    """A tool name, arguments, error, instructions and a metric's error holding an escape sequence or a
    right-to-left override are shown escaped, as status and log show them (they reached the page raw:
    an override turned the rest of its table cell round)."""
    hb = make_heartbeat(night_step, tmp_path)
    at = EPOCH.isoformat()
    Journal(hb.store.journal_path).append(
        [
            {"at": at, "tick": 1, "event": "action", "index": 1, "tool": CONTROLS,
             "summary": f"{CONTROLS}({CONTROLS})", "error": CONTROLS, "cost": 0.1},
            {"at": at, "tick": 1, "event": "decision", "decision": "try_alternative", "stuck_streak": 1,
             "instructions": CONTROLS},
            {"at": at, "tick": 1, "event": "metric_error", "error": CONTROLS},
            {"at": at, "tick": 1, "event": "tick", "outcome": "ran", "progress": 1},
        ]
    )  # fmt: skip
    html = write_report(hb, now=EPOCH).read_text()
    for raw in ("\x1b", "\x07", "\u202e"):
        assert raw not in html, repr(raw)
    assert "search\\x1b]0;owned\\x07\\x1b[2J \\u202egnp.exe" in parse(html).texts()


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
EVENT_KEYS = ("event", "tick", "at", "kind", "action", "index", "tool", "summary", "progress", "error",
              "cost", "decision", "stuck_streak", "instructions", "reason", "note", "outcome", "actions",
              "undelivered", "output_len", "from", "during_step", "message")  # fmt: skip
EVENT_NAMES = ("action", "anomaly", "decision", "tick", "escalation", "kill", "pause", "resume",
               "budget", "step_error", "metric_error", "delivery", "notify", "other")  # fmt: skip
EVENTS = st.lists(
    st.dictionaries(st.sampled_from(EVENT_KEYS), JSON_VALUES, max_size=8).flatmap(
        lambda d: st.sampled_from(EVENT_NAMES).map(lambda name: {**d, "event": name})
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True)
@given(events=EVENTS, stretch=st.none() | st.tuples(st.integers(0, 5), st.integers(5, 9)))
# A flat progress line this large once divided by zero (1e20 - 1 == 1e20 in floating point).
@example(events=[{"event": "tick", "tick": 1, "progress": 1e20}], stretch=None)
def test_any_journal_events_give_a_well_formed_page(events: list[dict[str, Any]], stretch: Any) -> None:
    """Events of any shape (hand-edited, old, garbled) never break the page: it renders and parses whole."""
    timeline = collect(events, stretch=stretch)
    page = AgentPage(agent="fuzz", generated_at=EPOCH.isoformat(), state_dir="/s", timeline=timeline,
                     status="active")  # fmt: skip
    root = parse(render_agent(page))
    assert len(list(root.all("circle", class_="pt"))) == len(timeline.slots)
    assert external_refs(render_agent(page)) == []


@pytest.mark.parametrize(
    ("schedule", "late_after"),
    [({"every": "30m"}, timedelta(hours=1)), ({"cron": "*/30 * * * *"}, timedelta(minutes=30))],
)
def test_the_overview_calls_an_agent_overdue_after_two_missed_periods(
    tmp_path: Path, schedule: dict[str, str], late_after: timedelta
) -> None:
    """No heartbeat for two periods (every: 2 x 30 min; cron: 2 fire times): overdue; paused: never."""
    clock = FakeClock(EPOCH + timedelta(minutes=7))
    hb = make_heartbeat(night_step, tmp_path, clock=clock, schedule=schedule)
    hb.tick()
    last = EPOCH + timedelta(minutes=7)
    out = tmp_path / "overview.html"

    def row(now_delta: timedelta) -> str:
        write_overview([hb], out, now=last + now_delta)
        return parse(out.read_text()).one("table", id="agents").one("tbody").texts()

    assert "overdue" not in row(late_after - timedelta(minutes=1))
    assert "overdue" in row(late_after + timedelta(minutes=30))
    hb.pause("holiday")
    assert "paused" in row(timedelta(days=3)) and "late" not in row(timedelta(days=3))


def test_the_default_stretch_moves_on_after_a_resumed_escalation() -> None:
    """Resumed at tick 9, a new stall at tick 12: the table shows that one, not the old escalation."""
    events = _stretch_night(9)
    at = (EPOCH + timedelta(minutes=12)).isoformat()
    events += [
        {"at": at, "tick": 12, "event": "action", "index": 12, "tool": "t", "summary": "t()"},
        {"at": at, "tick": 12, "event": "anomaly", "kind": "repeat", "message": "m"},
        {"at": at, "tick": 12, "event": "decision", "decision": "try_alternative", "stuck_streak": 1},
        {"at": at, "tick": 12, "event": "tick", "outcome": "ran", "progress": 1},
    ]
    assert collect(events).stretch == (11, 12)
    assert collect(events[:-4]).stretch == (1, 9)


def test_every_marker_kind_has_its_own_shape_and_unknown_kinds_get_a_spare_one() -> None:
    """Shapes tell kinds apart without colour: no two known kinds share one; a new kind gets a hollow one."""
    from heartbeat.report.html import _SPARE, KINDS, shape_for

    paths = [shape.path for shape in KINDS.values()]
    assert len(set(paths)) == len(paths)
    assert not {s.path for s in _SPARE} & set(paths)
    assert shape_for("my_detector") in _SPARE and shape_for("my_detector") == shape_for("my_detector")
    from heartbeat.config.file import DetectorsConfig
    from heartbeat.detect.detectors import build_detectors

    built = {d.kind for d in build_detectors(DetectorsConfig())}
    assert built <= set(KINDS), built - set(KINDS)


def test_the_tuning_view_draws_what_replay_of_a_labelled_folder_prints(tmp_path: Path) -> None:
    """Real `heartbeat replay DIR --labels FILE --json` output in, a row and a strip per trace out."""
    from replay.test_trace import labels_folder

    runs, labels = labels_folder(tmp_path)
    done = run_cli(tmp_path, "replay", str(runs), "--labels", str(labels), "--json")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    traces = lines[:-1]
    page = write_tuning(lines, tmp_path / "tuning.html")
    assert stat.S_IMODE(page.stat().st_mode) == 0o600
    root = parse(page.read_text())
    rows = list(root.one("table", id="traces").one("tbody").all("tr"))
    assert [r.one("th").texts() for r in rows] == [t["trace"] for t in traces]
    for row, trace in zip(rows, traces, strict=True):
        expected = verdict(trace)[0]
        assert row.attrs["class"] == f"v-{expected}"
        assert expected in ("caught", "early", "missed") if trace["label"] == "stuck" else expected == "quiet"
        drawn = {(m.attrs["data-kind"], m.attrs["data-action"]) for m in row.all("use", class_="mk")}
        assert {k for k, _ in drawn} == set(trace["kinds"])
        assert len(list(row.all("line", class_="onset"))) == (trace["onset"] is not None)
    grid = {r.one("th").texts(): r.one("td").texts() for r in root.one("table", id="confusion").all("tr")
            if list(r.all("td"))}  # fmt: skip
    assert grid["stuck"] == "2" and grid["healthy"] == "1"
