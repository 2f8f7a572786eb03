"""Re-checks: ``cycle`` on calls answered as they were since the agent last changed anything."""

from __future__ import annotations

import pytest

from heartbeat.detect.detectors import Cycle
from heartbeat.detect.detectors.calls import acts_by_name, changes_something
from heartbeat.detect.detectors.cycle import _key_of
from heartbeat.detect.detectors.rechecks import RECHECKS, changes, rechecks

from .helpers import Call, actions, trips

EDIT: Call = {
    "tool": "replace_in_file",
    "args": {"path": "cli.py", "diff": "-a\n+b"},
    "output": "Saved cli.py.",
}


def _verify(n: int) -> list[Call]:
    """The ``n``-th round of checks after a fix: the suite, the CLI by hand, the diff, each as it was."""
    return [
        {"tool": "bash", "args": {"cmd": "pytest -q"}, "output": f"23 passed in {1 + n % 3}.{n}1s"},
        {"tool": "bash", "args": {"cmd": "pkgaudit list --json"}, "output": '[{"package": "urllib3"}]' * 3},
        {"tool": "bash", "args": {"cmd": "git diff"}, "output": "diff --git a/cli.py b/cli.py\n-a\n+b\n" * 2},
        {
            "tool": "bash",
            "args": {"cmd": f"git status {'--short' if n % 2 else ''}"},
            "output": " M cli.py" * 3,
        },
    ]


def _reverifying() -> list[Call]:
    return [EDIT, *(call for n in range(4) for call in _verify(n))]


def test_checking_finished_work_again_and_again_is_a_cycle() -> None:
    """After the last edit the suite, the CLI and the diff answer as they did: the sixth re-check
    trips, long before ten revisits in the window (the durations are masked: the same run)."""
    found = trips(Cycle(), actions(_reverifying()))
    first = next(i for i, anomaly in enumerate(found) if anomaly is not None)
    # Three re-checks in round two (its status is new), then the third call of round three.
    assert first == 1 + 4 + 4 + 2
    anomaly = found[first]
    assert anomaly is not None and anomaly.message.startswith(
        f"{RECHECKS} of the last 11 actions since the last write, act or wait went back"
    )


def test_the_same_checks_after_each_edit_are_debugging() -> None:
    """An edit before each round, and the checks after it answer anew: none is a re-check."""
    calls: list[Call] = []
    for n, name in enumerate(["parse", "render", "limit", "colour"]):
        calls.append({**EDIT, "args": {"path": "cli.py", "diff": f"+fix {name}"}})
        calls += [{**call, "output": f"{call['output']} (failing: test_{name})"} for call in _verify(n)]
    assert trips(Cycle(), actions(calls)) == [None] * len(calls)


def test_a_poller_looking_again_after_each_wait_is_not_re_checking() -> None:
    """A ``sleep`` between rounds gives the world time to change: the count starts again (the run's
    status the same each time, its log moving)."""
    rounds: list[Call] = []
    for stage in ["lint", "unit", "build", "e2e", "package", "deploy"]:
        rounds += [
            {"tool": "bash", "args": {"cmd": "sleep 60"}, "output": ""},
            {
                "tool": "bash",
                "args": {"cmd": "gh run view 91"},
                "output": "in_progress: lint, unit, e2e " * 2,
            },
            {
                "tool": "bash",
                "args": {"cmd": "gh run view 91 --log | tail -2"},
                "output": f"{stage} running " * 3,
            },
        ]
    assert trips(Cycle(), actions(rounds)) == [None] * len(rounds)


def test_a_note_between_the_checks_is_no_change() -> None:
    """The agent telling itself it is verifying does not restart the count."""
    calls: list[Call] = [EDIT]
    for n in range(4):
        calls += [{"tool": "think", "args": {"thought": f"double-check once more ({n})"}, "output": "OK."}]
        calls += _verify(n)
    assert any(anomaly is not None for anomaly in trips(Cycle(), actions(calls)))


def test_rechecks_reads_the_window_since_the_last_change() -> None:
    """The reference: the re-checks, the calls gone back to and the actions since the change, only
    when the newest is a re-check over two calls or more."""
    records = actions(_reverifying())
    keys = [_key_of(record) for record in records]
    assert rechecks(records[:12], keys[:12]) == (6, 3, 11)
    assert rechecks(records[:11], keys[:11]) is None  # five re-checks
    assert rechecks([*records, records[0]], [*keys, keys[0]]) is None  # the newest is an edit: a change
    one = actions([EDIT, *[_verify(0)[2]] * 8])
    assert rechecks(one, [_key_of(record) for record in one]) is None  # one call again: recurring's


@pytest.mark.parametrize(
    ("tool", "args", "change"),
    [
        ("replace_in_file", {"path": "a.py"}, True),  # Cline's edit
        ("str_replace_editor", {"command": "view", "path": "a.py"}, False),  # SWE-agent's editor, by name
        ("str_replace_editor", {"command": "str_replace", "path": "a.py"}, False),
        ("bash", {"cmd": "pkgaudit list --json > /dev/null && echo valid"}, False),  # output thrown away
        ("bash", {"cmd": "pkgaudit list --json > report.json"}, True),
        ("bash", {"cmd": "sleep 30"}, True),  # a wait
        ("think", {"thought": "verify again"}, False),  # a note
    ],
)
def test_what_counts_as_a_change(tool: str, args: dict[str, str], change: bool) -> None:
    """Writes, acts and waits change something; reading, throwing output away and notes do not."""
    (record,) = actions([{"tool": tool, "args": args, "output": "x"}])
    assert changes(record) is change


def test_str_replace_names_an_editors_command_not_its_verb() -> None:
    """``replace`` is a verb of its own (``replace_in_file``), but not after ``str``: SWE-agent's
    ``str_replace_editor`` also views files; its command in the call says which it does."""
    assert acts_by_name("replace_in_file") and not acts_by_name("str_replace_editor")
    assert changes_something("bash", 'bash({"cmd":"str_replace_editor str_replace a.py x y"})')
