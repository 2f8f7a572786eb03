"""What makes two failures one, and the runs of failures ``recurring_error`` counts."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from heartbeat.detect.detectors.failures import (
    Failure,
    answered_failure,
    as_failure,
    chain_length,
    dark_run,
    edit_refused,
    failure_key,
    recorded_failure,
    reports_by_exit,
    rerun_key,
)
from heartbeat.detect.monitor import Monitor

from .helpers import Call, actions, import_probe


def _failures(calls: list[Call]) -> list[Failure]:
    """The failures of ``calls`` as the tracker keeps them, each tool answered only when it did."""
    found: list[Failure] = []
    answered: dict[str, bool] = {}
    for position, action in enumerate(actions(calls)):
        if action.error is None:
            answered[action.tool] = True
            continue
        key = failure_key(action)
        found.append(
            as_failure(
                position,
                action,
                action.tool,
                action.fingerprint,
                action.error,
                answered.pop(action.tool, False),
                key,
            )
        )
    return found


def _search(title: str, answer: str | None = None) -> Call:
    error = None if answer else f"Could not find [{title}]. Similar: ['{title} (film)']"
    return {"tool": "search", "args": {"query": title}, "output": answer, "error": error}


def test_a_failure_is_its_masked_error_and_result_and_a_silent_one_its_call_as_well() -> None:
    """Two calls failing with the same error and output are one failure; with nothing to show,
    only the same call is the same failure; a success has no key; a call without arguments
    re-runs nothing."""
    one, two = actions(
        [
            {"tool": "fetch", "args": {"url": "/a"}, "output": "", "error": "503 after 1.2s"},
            {"tool": "fetch", "args": {"url": "/b"}, "output": "", "error": "503 after 0.4s"},
        ]
    )
    assert failure_key(one) != failure_key(two)  # silent: told apart by their calls
    loud = actions(
        [
            {
                "tool": "fetch",
                "args": {"url": "/a"},
                "output": "upstream refused the request",
                "error": "503 after 1.2s",
            },
            {
                "tool": "fetch",
                "args": {"url": "/b"},
                "output": "upstream refused the request",
                "error": "503 after 0.4s",
            },
            {"tool": "fetch", "args": {"url": "/b"}, "output": "ok"},
            {"tool": "(no_command)", "args": {}, "output": "found 0 actions", "error": "format_error"},
        ]
    )
    assert failure_key(loud[0]) == failure_key(loud[1]) is not None
    assert failure_key(loud[2]) is None
    assert rerun_key(loud[3], failure_key(loud[3])) is None
    assert rerun_key(loud[1], failure_key(loud[1])) != rerun_key(loud[0], failure_key(loud[0]))


def test_failing_alike_whatever_was_asked_is_a_dark_run_only_over_three_asks() -> None:
    """Searches for six titles, each "Could not find", make a run of six failing alike (0 tools:
    not silent); the same two titles asked in turn make none; a title found ends the run."""
    titles = [
        "Is Google Making Us Stupid?",
        "The Shallows",
        "Nicholas Carr",
        "The Big Switch",
        "Glass Cage",
        "Utopia",
    ]
    assert dark_run(_failures([_search(t) for t in titles]), "search", -1) == (6, 0)
    assert dark_run(_failures([_search(t) for t in titles[:2] * 3]), "search", -1) == (0, 0)
    found = _failures(
        [
            *(_search(t) for t in titles[:3]),
            _search("Nicholas G. Carr", "an American writer"),
            *(_search(t) for t in titles[3:]),
        ]
    )
    assert dark_run(found, "search", -1) == (3, 0)  # only the three since it answered


def test_a_chain_is_of_rewordings_failing_alike() -> None:
    """A search asked again in other words, failing alike, is a chain of three; other subjects
    failing alike are not."""
    reworded = ["Aunt May actress", "Aunt May Marvel Comics", "Aunt May Parker"]
    assert chain_length(_failures([_search(t) for t in reworded])) == 3
    assert chain_length(_failures([_search(t) for t in ["Noah Cyrus", "Miley Cyrus", "Cyrus family"]])) == 1


def test_probes_each_told_their_own_word_is_missing_are_no_chain() -> None:
    """One word changed each time, and each failure names back its own ("No module named
    'scipy'", then "'cftime'"): another thing asked, no rewording."""
    probes = [import_probe(name) for name in ("scipy", "cftime", "bottleneck")]
    assert chain_length(_failures(probes)) == 1


@pytest.mark.parametrize(
    ("tool", "output"),
    [
        ("str_replace_editor", "No replacement was performed, old_str `x` did not appear verbatim in /a.py."),
        ("apply_edit", "No changes made: the SEARCH block was not found in upload.go.\nThe SEARCH..."),
        ("replace_in_file", "SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines"),
        ("Edit", "String to replace not found in file.\nString: foo"),
    ],
)
def test_an_edit_saying_it_changed_nothing_is_refused(tool: str, output: str) -> None:
    """An editing tool's answer that leads with "nothing was replaced" is a failed edit: its line,
    the text it quotes back in backticks masked."""
    assert edit_refused(tool, output) == output.split("\n")[0].replace("`x`", "`…`")


def test_an_edit_refused_is_one_refusal_whatever_it_quotes_back_over_however_many_lines() -> None:
    """SWE-agent quotes the old_str it could not find back in backticks, over as many lines as it
    has: the refusal reads the same for a one-line and a three-line old_str, and the same refusal
    again is one failure key, live and in replay."""
    one = "No replacement was performed, old_str `    b.last = now` did not appear verbatim in /r/b.go."
    three = (
        "No replacement was performed, old_str `    if r == '\\n' {\n        l.line++\n    }` "
        "did not appear verbatim in /r/b.go."
    )
    said = "No replacement was performed, old_str `…` did not appear verbatim in /r/b.go."
    assert edit_refused("str_replace_editor", one) == edit_refused("str_replace_editor", three) == said
    monitor = Monitor()
    monitor.start_tick(1)
    for old, output in (("    b.last = now", one), ("    if r == '\\n' {", three)):
        args = {"command": "str_replace", "path": "/r/b.go", "old_str": old, "new_str": "x"}
        monitor.record("str_replace_editor", args, output=output, now=datetime(2026, 1, 1, tzinfo=UTC))
    first, second = monitor.history[-2:]
    assert first.error == second.error == said
    assert failure_key(first) == failure_key(second)


def test_an_edit_done_a_read_or_a_refusal_deep_in_a_file_is_not() -> None:
    """An edit that changed the file, another tool's text saying the same words (a file read, a
    grep), and words far into an edit's answer (the file's text it shows) are no refusal."""
    assert edit_refused("str_replace_editor", "The file /a.py has been edited. Here's the result...") is None
    assert edit_refused("read_file", "No changes made: the SEARCH block was not found") is None
    late = "The file was edited.\n" + "x\n" * 120 + "no changes made"
    assert edit_refused("str_replace_editor", late) is None


def test_an_answer_opening_with_error_reports_a_failure() -> None:
    """A tool that returns its failure as text (tau-bench's ``Error: non-pending order cannot be
    cancelled``) failed: its first line; an answer that mentions an error later, or none, did not."""
    assert answered_failure("cancel_pending_order", "Error: non-pending order cannot be cancelled") == (
        "Error: non-pending order cannot be cancelled"
    )
    assert answered_failure("python", "\nERROR: module not found\nTraceback...") == "ERROR: module not found"
    said = 'pg_restore: error: could not execute query: ERROR:  role "app_reporting" does not exist'
    assert answered_failure("bash", said + "\nCommand was: ALTER TABLE ...") == said
    assert answered_failure("git", "fatal: not a git repository") == "fatal: not a git repository"
    assert answered_failure("grep", "app.py:12: error: Incompatible types") is None  # a hit's line
    assert answered_failure("grep", "src/a.py:3: raise ValueError('Error: bad')") is None
    assert answered_failure("get_order_details", '{"status": "error_reported"}') is None
    refused = "No replacement was performed."
    assert answered_failure("str_replace_editor", refused) == refused


def test_a_text_worlds_answer_that_the_act_did_nothing_reports_a_failure() -> None:
    """ALFWorld's "Nothing happens." and WebShop's "Invalid action!" are how those worlds refuse an
    act, marked failed or not by whoever recorded them; a longer answer that says so in passing is
    content."""
    assert answered_failure("cool", "Nothing happens.") == "Nothing happens."
    assert answered_failure("click", " Invalid action! ") == "Invalid action!"
    assert answered_failure("go", "nothing happened") == "nothing happened"
    assert answered_failure("look", "You are in the kitchen. Nothing happens here.") is None
    assert answered_failure("read", "Nothing happens until the timer fires, then the job starts.") is None


def test_acts_that_do_nothing_again_and_again_are_a_recurring_error_though_none_is_marked_failed() -> None:
    """A household agent rewording an act its world keeps refusing ("cool mug 1 with fridge",
    "use fridge 1 to cool mug 1", each answered "Nothing happens." with no error marked: blind
    batch 50) was never flagged; one refused once that then does it right is not."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    stuck = Monitor(tick=1)
    tries = ["cool mug 1 with fridge 1", "cool mug 1 with fridge", "cool mug with fridge 1", "use fridge 1"]
    found = [
        stuck.record(cmd.split()[0], {"cmd": cmd}, output="Nothing happens.", now=now) for cmd in tries * 2
    ]
    assert "recurring_error" in {a.kind for a in found if a is not None}
    healthy = Monitor(tick=1)
    steps = [
        ("go", "go to fridge 1", "You arrive at fridge 1. The fridge 1 is closed."),
        ("cool", "cool mug 1 with fridge", "Nothing happens."),
        ("cool", "cool mug 1 with fridge 1", "You cool the mug 1 using the fridge 1."),
        ("go", "go to cabinet 1", "You arrive at cabinet 1. The cabinet 1 is open. In it, you see nothing."),
        ("put", "put mug 1 in/on cabinet 1", "You put the mug 1 in/on the cabinet 1."),
    ]
    assert [healthy.record(tool, {"cmd": cmd}, output=out, now=now) for tool, cmd, out in steps] == [None] * 5


def test_an_answer_opening_with_an_http_error_and_its_reason_reports_a_failure() -> None:
    """``400 Bad Request: invalid employee_id`` is a failure said in the answer; a page that is a
    404 (``404 Not Found`` and no complaint after a colon), or a count of 404s, is content."""
    said = "400 Bad Request: invalid employee_id 'dkwon': expected format E followed by 6 digits"
    assert answered_failure("lookup_employee", said) == said
    assert answered_failure("api", "503 Service Unavailable: upstream timed out\nretry later") == (
        "503 Service Unavailable: upstream timed out"
    )
    assert answered_failure("fetch", "404 Not Found\n<html>the page is gone</html>") is None
    assert answered_failure("report", "404 pages: 12 crawled, 3 missing") is None
    assert answered_failure("fetch", "200 OK: 33 items") is None


def test_an_mcp_result_flagged_is_error_reports_a_failure() -> None:
    """An MCP tool's result with ``"isError": true`` failed, its text blocks the error (as the MCP
    proxy records it); the same shape without the flag, or not JSON, did not."""
    said = "Error: Access denied - path outside allowed directories: /home/ana/reports not in /srv"
    flagged = json.dumps({"content": [{"type": "text", "text": said}], "isError": True})
    assert answered_failure("write_file", flagged) == said
    bare = json.dumps({"content": [{"type": "image", "data": "..."}], "isError": True})
    assert answered_failure("screenshot", bare) == "the tool reported an error"
    assert answered_failure("read_file", json.dumps({"content": [{"type": "text", "text": said}]})) is None
    assert answered_failure("read_file", json.dumps({"content": [], "isError": False})) is None
    assert answered_failure("read_file", '{"isError": true, "content": [') is None  # cut: not a result


def test_an_api_answer_flagged_not_ok_reports_its_error() -> None:
    """Slack's ``{"ok": false, "error": "not_in_channel"}`` and Cloudflare's ``{"success": false,
    "errors": [...]}`` failed, their error the failure; ``"ok": true``, a bare ``"ok": false`` with
    nothing said and a nested item's flag are no failure of the call."""
    slack = json.dumps({"ok": False, "error": "not_in_channel", "response_metadata": {"warnings": ["x"]}})
    assert answered_failure("slack.post_message", slack) == "not_in_channel"
    cloudflare = json.dumps(
        {"success": False, "errors": [{"code": 10000, "message": "Authentication error"}]}
    )
    assert answered_failure("dns.update", cloudflare) == "Authentication error"
    assert answered_failure("slack.post_message", json.dumps({"ok": True, "channel": "C1"})) is None
    assert answered_failure("slack.post_message", json.dumps({"ok": False})) is None
    assert answered_failure("batch", json.dumps({"items": [{"ok": False, "error": "x"}]})) is None


def test_an_answer_checked_and_refused_is_a_failure_and_the_same_answer_again_recurs() -> None:
    """A QA harness's "Answer 'New Delhi' is incorrect." (Reflexion's "Answer is INCORRECT") refuses
    the answer given: a failure, and the same answer given a third time between new searches is a
    recurring error. An answer that says something is correct, or a page about wrong answers, is
    no such verdict."""
    assert answered_failure("finish", "Answer is INCORRECT") == "Answer is INCORRECT"
    refused = "Answer 'New Delhi' is incorrect. You may continue searching or answer again."
    assert answered_failure("finish", refused) == refused
    assert answered_failure("finish", "Answer is CORRECT") is None
    assert answered_failure("search", "The wrong answer to a quiz is counted as 0 points.") is None
    monitor = Monitor()
    monitor.start_tick(1)
    found = []
    now = datetime(2026, 1, 1, tzinfo=UTC)
    for query in ["The Oberoi Group", "EIH Limited", "The Oberoi, New Delhi"]:
        monitor.record("search", {"query": query}, output=f"{query} is a hotel company.", now=now)
        found.append(monitor.record("finish", {"answer": "New Delhi"}, output=refused, now=now))
    assert found[:2] == [None, None]
    assert found[2] is not None and found[2].kind == "recurring_error"


def test_a_post_refused_in_other_words_again_and_again_is_a_recurring_error() -> None:
    """A report posted to a channel the bot is not in, its text changed each time, is refused
    alike: recorded, each is the same failure, and the third is a recurring error."""
    refused = json.dumps({"ok": False, "error": "not_in_channel", "response_metadata": {"warnings": ["w"]}})
    monitor = Monitor()
    monitor.start_tick(1)
    found = []
    for text in [
        "*Weekly metrics*",
        "Weekly metrics",
        "Weekly metrics are ready.",
        "*Weekly metrics* (again)",
    ]:
        args = {"channel_id": "C04QF2ZK7LM", "text": text}
        found.append(
            monitor.record("slack.post_message", args, output=refused, now=datetime(2026, 1, 1, tzinfo=UTC))
        )
    assert {a.error for a in monitor.history} == {"not_in_channel"}
    assert found[:2] == [None, None]
    assert found[2] is not None and found[2].kind == "recurring_error"


def test_a_refusal_carrying_a_new_request_id_each_time_is_the_same_failure() -> None:
    """Regression (a newcomer's frozen payout): ``{"ok": false, ...}`` with a fresh ``request_id`` in
    each answer was a new failure each time, so the third identical refusal tripped nothing; the
    request's own id is masked in a failed answer as in a good one."""
    monitor = Monitor()
    monitor.start_tick(1)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    found = []
    for n in range(3):
        refused = json.dumps({"ok": False, "error": "account_frozen", "request_id": f"req_{n}Xa9b8C7d6E5f"})
        found.append(
            monitor.record("payouts.create", {"account": "acc_1", "amount": 100}, output=refused, now=now)
        )
    assert found[:2] == [None, None] and found[2] is not None and found[2].kind == "repeat"


def test_an_error_quoting_a_body_with_a_new_request_id_each_time_is_the_same_failure() -> None:
    """Regression (a newcomer's travel agent, live round 36): a card declined as ``402 Payment
    Required: {..., "request_id": <new each attempt>}`` in the error's text was a new failure each
    time, while the README says a request's own id in a field named for one is no content. The
    same decline, re-held after other work, recurs."""
    monitor = Monitor()
    monitor.start_tick(1)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    found = []
    for n in range(3):
        body = json.dumps(
            {"error": "card_declined", "decline_code": "do_not_honor", "request_id": f"PAY-{95253 + n}"}
        )
        found.append(
            monitor.record(
                "payments.charge",
                {"fare": "F-1", "card": "visa"},
                error=f"402 Payment Required: {body}",
                now=now,
            )
        )
        monitor.record("flights.search", {"from": "SFO", "to": f"JFK{n}"}, output=f"{n + 3} fares", now=now)
    assert [a is not None for a in found] == [False, False, True]
    assert found[2] is not None and found[2].kind == "recurring_error"


@pytest.mark.parametrize(
    ("command", "output", "error", "finding"),
    [
        ("npm outdated --json", '{"left-pad": {}}', "returncode 1", True),
        ("cd /srv/app && npm outdated", "Package  Current  Wanted", "exit code 1", True),
        ("npm audit --omit=dev", "found 1 moderate severity vulnerability", "returncode 1", True),
        ("diff -u a.py b.py", "--- a.py\n+++ b.py", "returncode 1", True),
        ("git diff --exit-code", "diff --git a/x b/x", "returncode 1", True),
        ("terraform plan -detailed-exitcode -no-color", "Plan: 1 to add", "exit status 2", True),
        ("cmp a.bin b.bin", "a.bin b.bin differ: byte 3", "returncode 1", True),
        ("npm outdated", "", "returncode 1", False),  # nothing reported: a failure
        ("npm outdated", "npm ERR! code ENOTFOUND", "returncode 1", False),  # it says it failed
        ("diff -u a.py b.py", "diff: b.py: No such file or directory", "returncode 2", False),
        ("git diff", "diff --git a/x b/x", "returncode 1", False),  # exits 0 with changes
        ("terraform plan -detailed-exitcode", "Plan: 1 to add", "exit status 1", False),
        ("npm outdated | tee out.txt", "Package", "returncode 1", False),  # tee's status
        ("npm install && npm test", "1 failing", "returncode 1", False),
        ("python diff.py", "x", "returncode 1", False),
        ("npm outdated", "Package", "ECONNRESET", False),  # no bare exit status
    ],
)
def test_a_program_that_exits_1_to_report_what_it_found_has_not_failed(
    command: str, output: str, error: str, finding: bool
) -> None:
    """`npm outdated` (1 when anything is outdated), `diff`, `git diff --exit-code`, `terraform plan
    -detailed-exitcode` (2 when it changes something): their exit status says what they found;
    recorded, such an action is a look with its report, not a failure."""
    assert reports_by_exit({"cmd": command}, output, error) is finding
    monitor = Monitor()
    monitor.record("shell", {"cmd": command}, output=output, error=error, now=datetime.now(UTC))
    assert (monitor.history[-1].error is None) is finding


def test_a_test_run_whose_summary_says_it_failed_failed_whatever_exit_status_the_shell_gave() -> None:
    """``sed -i ... && pytest ... | tail`` exits 0 with pytest's failure summary last (blind batch
    62's humanize run, 13 failed after each of eight edits): the command failed, and the same
    failure after each edit is a recurring error; a run that passes, or says "failed" only in
    passing, did not fail, nor did a test tool that answers with its findings."""
    summary = "13 failed, 63 passed in 1.31s"
    run = {"cmd": "python -m pytest -q tests 2>&1 | tail -3"}
    output = "FAILED tests/a.py::test_x - AssertionError\n" + summary
    assert recorded_failure("bash", run, output, None) == summary
    assert recorded_failure("bash", run, "76 passed in 1.2s", None) is None
    assert recorded_failure("bash", run, "the job failed twice before, then passed", None) is None
    # A test tool of the agent's own reports what it found as its answer: no command hid its exit.
    assert recorded_failure("run_tests", {"k": "agents"}, output, None) is None
    monitor = Monitor()
    found = []
    for i in range(4):
        output = f"FAILED tests/test_fs.py::test_size - AssertionError\n13 failed, 63 passed in 1.{i}s"
        cmd = f"sed -i 's/a{i}/b{i}/' filesize.py && python -m pytest -q tests 2>&1 | tail -3"
        monitor.record("bash", {"cmd": cmd}, output=output, now=datetime(2026, 1, 1, tzinfo=UTC))
        found.append(monitor.tick_anomalies[-1].kind if monitor.tick_anomalies else None)
    assert monitor.history[0].error is not None and "recurring_error" in found
