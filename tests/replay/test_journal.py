"""``heartbeat replay state/journal.jsonl`` gives back the live run: its heartbeats, findings and decisions.

The live run is a real agent driven by real ``heartbeat tick`` processes
(healthy work, a tick of more actions than the kept history, failures with
volatile numbers, a stuck stretch, an escalation, a human's resume, a second
stuck stretch); its journal is replayed by ``heartbeat replay --json`` and
compared heartbeat by heartbeat with what the journal says the live ticks did.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from heartbeat.config.file import HeartbeatConfig
from heartbeat.replay.play import replay
from heartbeat.replay.trace import KeyedAction, ResumedLine, load_any

SECRET_ARG = "sk-live-9f8e7d6c5b4a39281706"
OUTPUT_TEXT = "CONFIDENTIAL-PAGE-BODY"

AGENT = textwrap.dedent(
    f'''
    """A scripted agent: what it does at each of its steps, whatever heartbeat says."""

    def _healthy(ctx, n):
        for i in range(3):
            ctx.record("search", {{"q": f"topic {{n}}-{{i}}", "api_key": "{SECRET_ARG}"}},
                       output=f"{OUTPUT_TEXT} results about topic {{n}}-{{i}}: " + "x" * (20 + i))
        ctx.data["progress"] = ctx.data.get("progress", 0) + 1

    def _long_read(ctx, n):
        # More actions than the history keeps (30): the journal must hold every one.
        for page in range(40):
            ctx.record("read_page", {{"doc": "manual", "page": page}},
                       output=f"page {{page}} of the manual: " + "word " * (page % 7 + 3))
        ctx.data["progress"] = ctx.data.get("progress", 0) + 1

    def _failing(ctx, n):
        for attempt in range(4):
            ctx.record("fetch", {{"url": f"https://api.example/items/{{attempt}}"}},
                       error=f"ConnectionError: timed out after 3.{{attempt}}s (request 8f3a{{attempt}}c)")

    def _stuck(ctx, n):
        for _ in range(5):
            ctx.record("search", {{"q": "the same question"}}, output="the same long answer, again")

    def _idle(ctx, n):
        ctx.record("think", {{"about": "what next"}}, output="ok")

    PLAN = [_healthy, _long_read, _failing, _stuck, _stuck, _stuck, _healthy, _healthy,
            _idle, _idle, _idle, _idle, _idle, _idle, _stuck, _stuck, _stuck, _stuck]

    def step(ctx):
        n = ctx.data.get("n", 0)
        ctx.data["n"] = n + 1
        PLAN[n % len(PLAN)](ctx, n)

    def progress(ctx):
        return float(ctx.data.get("progress", 0))
    '''
)


def heartbeat(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """A real ``python -m heartbeat`` process in the agent's folder."""
    return subprocess.run(
        [sys.executable, "-m", "heartbeat", *argv],
        cwd=root,
        text=True,
        capture_output=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])},
    )


def live_run(root: Path, webhook: str) -> list[dict[str, Any]]:
    """Tick the scripted agent until it has escalated twice (resumed by a human once); its journal."""
    root.mkdir(exist_ok=True)
    (root / "parity_agent.py").write_text(AGENT, encoding="utf-8")
    (root / "heartbeat.toml").write_text(
        textwrap.dedent(
            f"""
            [agent]
            step = "parity_agent:step"
            progress = "parity_agent:progress"

            [[notify]]
            type = "webhook"
            url = "{webhook}"
            """
        ),
        encoding="utf-8",
    )
    escalations = 0
    for _ in range(40):
        done = heartbeat(root, "tick")
        assert done.returncode in (0, 4), done.stderr
        if done.returncode == 4:
            escalations += 1
            if escalations == 2:
                break
            again = heartbeat(root, "tick")  # waiting for a human: no step, no heartbeat
            assert again.returncode == 4, again.stderr
            resumed = heartbeat(root, "resume", "--note", "ask the user instead")
            assert resumed.returncode == 0, resumed.stderr
    assert escalations == 2
    lines = (root / "state" / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def live_heartbeats(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What each live heartbeat did, from its journal: findings (kind, action), decision, streak."""
    found: list[tuple[str, int]] = []
    beats = []
    for event in events:
        if event["event"] == "anomaly":
            found.append((event["kind"], event["action"]))
        elif event["event"] == "decision":
            beats.append(
                {"anomalies": sorted(found), "decision": event["decision"], "streak": event["stuck_streak"]}
            )
            found = []
    return beats


def replayed_heartbeats(root: Path, *argv: str) -> list[dict[str, Any]]:
    """The same, from ``heartbeat replay state/journal.jsonl --json`` (a real process)."""
    done = heartbeat(root, "replay", "state/journal.jsonl", "--json", *argv)
    assert done.returncode == 0, done.stderr
    return [
        {
            "anomalies": sorted((a["kind"], a["action"]) for a in tick["anomalies"]),
            "decision": tick["decision"],
            "streak": tick["stuck_streak"],
        }
        for tick in map(json.loads, done.stdout.splitlines())
    ]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """One live run, shared by the tests below (a few dozen real ticks)."""
    root = tmp_path_factory.mktemp("parity")
    # The webhook is never reached (port 9, nothing listens): its URL is a configured secret.
    webhook = "http://127.0.0.1:9/hooks/T0SECRET1/B0SECRET2/Zq8x7Y6w5V4u3T2s1R0p"
    return root, live_run(root, webhook)


def test_replaying_the_journal_gives_back_the_live_heartbeats_and_decisions(
    run: tuple[Path, list[dict[str, Any]]],
) -> None:
    """Heartbeat by heartbeat: the same findings at the same actions, the same decisions and streaks."""
    root, events = run
    live = live_heartbeats(events)
    replayed = replayed_heartbeats(root)
    assert replayed == live
    # The run is the one described: two escalations, a resume between them, several kinds of finding.
    assert [b["decision"] for b in live].count("escalate") == 2
    assert sum(e["event"] == "resume" for e in events) == 1
    assert len({kind for b in live for kind, _ in b["anomalies"]}) >= 2
    # A heartbeat is a tick: 3, 40, 4, 5 ... actions, as the agent did them, not 5 at a time.
    assert [e["actions"] for e in events if e["event"] == "tick" and e["actions"]][:4] == [3, 40, 4, 5]


def test_the_escalations_happen_at_the_same_heartbeats_in_the_table(
    run: tuple[Path, list[dict[str, Any]]],
) -> None:
    """The readable table agrees: its progress column is the live metric, its escalations the live ones."""
    root, events = run
    done = heartbeat(root, "replay", "state/journal.jsonl")
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()[1:] if line[:4].strip().isdigit()]
    live_progress = [e["progress"] for e in events if e["event"] == "tick" and e["actions"]]
    assert [float(r[2]) for r in rows] == live_progress
    escalated = [int(r[0]) for r in rows if r[3] == "*escalate"]
    live = [i for i, b in enumerate(live_heartbeats(events), 1) if b["decision"] == "escalate"]
    assert escalated == live


def test_no_secret_argument_or_output_enters_the_journal_or_the_state(
    run: tuple[Path, list[dict[str, Any]]],
) -> None:
    """Configured secrets, credential-named argument values and outputs stay out; digests stand for them."""
    root, events = run
    for name in ("journal.jsonl", "state.json"):
        text = (root / "state" / name).read_text(encoding="utf-8")
        assert SECRET_ARG not in text and OUTPUT_TEXT not in text and "Zq8x7Y6w5V4u3T2s1R0p" not in text
    actions = [e for e in events if e["event"] == "action"]
    assert all(len(a["fingerprint"]) == 16 and len(a["shape"]) == 8 for a in actions)
    assert all(a["result"] is None or len(a["result"]) == 8 for a in actions)
    assert any('"api_key":"***"' in a["summary"] for a in actions)


def test_a_journal_split_by_rotation_replays_as_a_whole(
    run: tuple[Path, list[dict[str, Any]]], tmp_path: Path
) -> None:
    """journal.jsonl.1 (older) and journal.jsonl (newer) replay as the one journal they were."""
    root, _ = run
    lines = (root / "state" / "journal.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    folder = tmp_path / "state"
    folder.mkdir()
    (folder / "journal.jsonl.1").write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    (folder / "journal.jsonl").write_text("".join(lines[len(lines) // 2 :]), encoding="utf-8")
    whole = [
        (t.decision.action, [a.kind for a in t.anomalies])
        for t in replay(root / "state" / "journal.jsonl", HeartbeatConfig())
    ]
    split = [
        (t.decision.action, [a.kind for a in t.anomalies])
        for t in replay(folder / "journal.jsonl", HeartbeatConfig())
    ]
    assert split == whole


def test_per_heartbeat_regroups_a_journal_with_its_keys(run: tuple[Path, list[dict[str, Any]]]) -> None:
    """--per-heartbeat N still regroups; the actions keep the keys the live run computed.

    A heartbeat may hold fewer only where the run ends or a human resumed it after it.
    """
    root, events = run
    _, lines = load_any(root / "state" / "journal.jsonl", per_heartbeat=5)
    actions = [a for _, line in lines for a in line.actions]
    short = [n for n, (_, line) in enumerate(lines) if len(line.actions) < 5]
    assert all(n + 1 == len(lines) or isinstance(lines[n + 1][1], ResumedLine) for n in short)
    assert len(actions) == sum(e["event"] == "action" for e in events)
    assert all(isinstance(a, KeyedAction) and a.keys["fingerprint"] for a in actions)


def test_an_older_journal_replays_by_its_ticks_and_never_takes_an_unknown_output_for_the_same(
    tmp_path: Path,
) -> None:
    """Without keys (before detection v3): grouped by tick, progress kept, arguments read from the summary.

    Three calls with one summary and one output length, whose outputs are not kept, are no repeat:
    the replay cannot know they gave the same result (the old reader said they did).
    """
    rows = []
    for tick, progress in ((1, 1.0), (2, 1.0)):
        for i in range(3):
            rows.append(
                {
                    "event": "action", "tick": tick, "index": (tick - 1) * 3 + i + 1, "tool": "search",
                    "summary": 'search({"q":"x"})', "output_len": 12, "error": None, "cost": 0.0,
                    "at": f"2025-01-0{tick}T00:00:0{i}+00:00",
                }
            )  # fmt: skip
        rows.append({"event": "decision", "tick": tick, "decision": "continue", "stuck_streak": 0})
        rows.append({"event": "tick", "tick": tick, "outcome": "ran", "actions": 3, "progress": progress})
    path = tmp_path / "journal.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    _, lines = load_any(path)
    assert [len(line.actions) for _, line in lines] == [3, 3]
    assert [line.progress for _, line in lines] == [1.0, 1.0]
    ticks = list(replay(path, HeartbeatConfig()))
    assert [t.anomalies for t in ticks] == [(), ()]
    # The same call failing the same way is known from the journal, and still a repeat.
    for row in rows:
        if row["event"] == "action":
            row["error"] = "ValueError: no such item"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    kinds = [a.kind for t in replay(path, HeartbeatConfig()) for a in t.anomalies]
    assert "repeat" in kinds


def test_a_resume_in_the_journal_starts_a_fresh_stretch(tmp_path: Path) -> None:
    """After an escalation the replay stops, unless a resume follows: then it goes on from streak 0."""
    rows: list[dict[str, Any]] = []
    index = 0
    for tick in range(1, 5):
        for _ in range(4):
            index += 1
            rows.append(
                {
                    "event": "action", "tick": tick, "index": index, "tool": "search", "summary": "search()",
                    "output_len": 30, "error": None, "cost": 0.0, "fingerprint": "f" * 16, "shape": "s" * 8,
                    "result": "r" * 8, "at": f"2025-01-0{tick}T00:00:00+00:00",
                }
            )  # fmt: skip
        rows.append({"event": "decision", "tick": tick, "decision": "x", "stuck_streak": 0})
        rows.append({"event": "tick", "tick": tick, "outcome": "ran", "actions": 4, "progress": None})
        if tick == 2:
            rows.append({"event": "resume", "tick": tick, "from": "needs_human", "note": "go on"})
    path = tmp_path / "journal.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ticks = list(replay(path, HeartbeatConfig()))
    assert [t.decision.action for t in ticks] == [
        "try_alternative",
        "escalate",
        "try_alternative",
        "escalate",
    ]
    # Regrouped, no heartbeat spans the resume: the replay still goes on past the first escalation.
    _, lines = load_any(path, per_heartbeat=3)
    assert [len(line.actions) for _, line in lines] == [3, 3, 2, 3, 3, 2]
    assert [isinstance(line, ResumedLine) for _, line in lines] == [False, False, False, True, False, False]
    decisions = [t.decision.action for t in replay(path, HeartbeatConfig(), per_heartbeat=4)]
    assert decisions == ["try_alternative", "escalate", "try_alternative", "escalate"]
    rows = [r for r in rows if r["event"] != "resume"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert [t.decision.action for t in replay(path, HeartbeatConfig())] == ["try_alternative", "escalate"]


PROBING = '''
"""Probes reworded one after another, all failing "returncode 1": the label is one, how they end is not."""

ENDS = {
    "debugging": ["ImportError: no module named m", "AttributeError: 'M' has no attribute 'load'",
                  "TypeError: load() takes 2 positional arguments but 3 were given"],
    "stuck": [f"ValueError: bad header at byte {n}" for n in (17, 23, 31)],
}

def step(ctx):
    n = ctx.data["n"] = ctx.data.get("n", 0) + 1
    code = [f"m.load_{n}()", f"m.load_{n}(path)", f"m.load_{n}(path, 3)"]  # another function a tick
    for code, end in zip(code, ENDS["debugging" if n < 3 else "stuck"]):
        ctx.record("python", {"cmd": f"python -c 'import m; {code}'"},
                   output=f"Traceback (most recent call last):\\n  File <string>, line 1\\n{end}",
                   error="returncode 1")
'''


def test_failures_told_apart_by_their_output_replay_as_they_were_judged_live(tmp_path: Path) -> None:
    """The error label is the same; what each failure says is in its output, which the journal never
    holds: its failure key (word digests) does, so the replay tells debugging from a stuck retry as
    the live run did."""
    (tmp_path / "probing.py").write_text(PROBING, encoding="utf-8")
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "probing:step"\n', encoding="utf-8")
    codes = [heartbeat(tmp_path, "tick").returncode for _ in range(4)]
    assert codes == [0, 0, 0, 4]  # the stuck retry comes back: escalated (exit 4)
    lines = (tmp_path / "state" / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    live = live_heartbeats(events)
    # Tick 2 probed as tick 1 did, tick 4 as tick 3: six re-checks with nothing changed (cycle).
    assert [b["anomalies"] for b in live] == [
        [],
        [],
        [("recurring_error", 9)],
        [("cycle", 12), ("recurring_error", 12)],
    ]
    assert replayed_heartbeats(tmp_path) == live
    failed = [e for e in events if e["event"] == "action"]
    assert all(len(word) == 4 for e in failed for word in e["failure"].split())


TALKING = '''
"""A support agent asking for the order id again and again; the customer never has it."""

ASKS = ["Could you share the order id?", "Could you please share the order id?",
        "Please share the order id with me.", "Could you share the order id now?",
        "I still need the order id: could you share it?", "Please, could you share your order id?",
        "Could you share the order id, please?", "The order id, please: could you share it?",
        "Please share your order id.", "Could you still share the order id?",
        "I need the order id: please share it.", "Could you share that order id?"]
ANSWERS = ["I don't have the order number.", "Like I said, I don't have it.", "I deleted that email.",
           "This is going in circles.", "I can't find it.", "Unbelievable.",
           "Are you a bot?", "No.", "Look at my orders!", "Still no.", "I give up.", "Why?"]

def step(ctx):
    n = ctx.data["n"] = ctx.data.get("n", 0) + 1
    if n == 1:
        ctx.record("find_user_id_by_email", {"email": "aarav.santos@example.com"}, output="aarav_santos_2259")
    for i in range(3 * n - 3, 3 * n):
        ctx.record("respond", {"content": ASKS[i]}, output=ANSWERS[i])
'''


def test_a_conversation_going_round_replays_as_it_was_judged_live(tmp_path: Path) -> None:
    """What a message and its answer gave (the data in them, as digests) is in the journal: the
    replay finds the same conversation going round as the live run did, and no text of it."""
    (tmp_path / "talking.py").write_text(TALKING, encoding="utf-8")
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "talking:step"\n', encoding="utf-8")
    codes = [heartbeat(tmp_path, "tick").returncode for _ in range(3)]
    assert codes == [0, 0, 4]  # the requests go on after the redirection: escalated (exit 4)
    journal = (tmp_path / "state" / "journal.jsonl").read_text(encoding="utf-8")
    events = [json.loads(line) for line in journal.splitlines()]
    live = live_heartbeats(events)
    # The request asked a fifth time after the first (action 7) trips, and again in the next.
    assert [b["anomalies"] for b in live] == [[], [("cycle", 7)], [("cycle", 8)]]
    assert replayed_heartbeats(tmp_path) == live
    assert "aarav_santos_2259" not in journal and "going in circles" not in journal
    facts = [e["facts"] for e in events if e["event"] == "action"]
    # Digests only, and the marks: each request asks ("?"), one answer says it was said before ("=").
    words = [word for f in facts[1:] for word in f.split()]
    assert facts[0] is None and all(len(word) == 4 or word in "?=" for word in words)
    assert words.count("?") == 7 and words.count("=") == 1  # two requests ask with no question mark


TURNS = '''
"""A fact checker asking one article for "vegan" turn after turn, a heartbeat a model turn."""

def step(ctx):
    n = ctx.data["n"] = ctx.data.get("n", 0) + 1
    if n == 1:
        ctx.record("search", {"entity": "Tilda Swinton"}, output="Katherine Matilda Swinton is an actress.")
    else:
        ctx.turn = True  # as a Session says of a stretch begun soon after its last
        ctx.record("lookup", {"keyword": "vegan"}, output="No more results.")
'''


def test_model_turns_replay_as_turns_not_as_idle_wake_ups(tmp_path: Path) -> None:
    """A heartbeat the live run took for a model turn (its tick event says so) is replayed as one:
    the lookup asked again for nothing is found stuck at the same heartbeats and escalated there;
    the same journal without the marks replays as idle wake-ups (nothing found)."""
    (tmp_path / "turns.py").write_text(TURNS, encoding="utf-8")
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "turns:step"\n', encoding="utf-8")
    codes = [heartbeat(tmp_path, "tick").returncode for _ in range(8)]
    assert 4 in codes, codes  # escalated: the turns are judged, not excused as wake-ups
    journal = tmp_path / "state" / "journal.jsonl"
    events = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    assert [e.get("turn", False) for e in events if e["event"] == "tick"][:3] == [False, True, True]
    live = live_heartbeats(events)
    assert any(b["anomalies"] for b in live)
    assert replayed_heartbeats(tmp_path) == live
    for event in events:
        event.pop("turn", None)
    journal.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    assert not any(b["anomalies"] for b in replayed_heartbeats(tmp_path))


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("failure", 5, "failure must be text or null, not 5"),
        ("facts", 5, "facts must be text or null, not 5"),
        ("result", ["x"], "result must be text or null, not ['x']"),
        ("shape", {"a": 1}, "shape must be text or null"),
        ("fingerprint", 7, "fingerprint must be non-empty text, not 7"),
        ("output_len", -3, "output_len must be a whole number >= 0 or null, not -3"),
    ],
)
def test_a_journal_with_a_key_heartbeat_never_writes_is_a_clear_error(
    tmp_path: Path, field: str, value: Any, says: str
) -> None:
    """An edited or corrupt key: one line naming the heartbeat, the action and the key, exit 2 (was an
    internal error: a list as a result, a number as a failure key)."""
    row = {
        "event": "action", "tick": 1, "index": 1, "tool": "python", "summary": "python(a)",
        "output_len": 30, "error": "returncode 1", "cost": 0.0, "fingerprint": "f" * 16, "shape": "s" * 8,
        "result": "r" * 8, "failure": "ab12 cd34", "at": "2025-01-01T00:00:00+00:00",
    }  # fmt: skip
    rows = [
        row,
        {**row, "index": 2, field: value},
        {"event": "decision", "tick": 1, "decision": "x", "stuck_streak": 0},
    ]
    rows.append({"event": "tick", "tick": 1, "outcome": "ran", "actions": 2, "progress": None})
    (tmp_path / "journal.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = heartbeat(tmp_path, "replay", "journal.jsonl")
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "heartbeat 1: action 2: " + says in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
