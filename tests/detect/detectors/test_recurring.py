"""``recurring``: the same call keeps giving the same result, or many calls the same output."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from heartbeat.base.errors import ConfigError
from heartbeat.detect.detectors import History, Recurring

from .helpers import PYTEST_FAIL, Call, actions, fired, first, trips


def test_the_same_test_failing_after_each_edit_is_recurring() -> None:
    """edit -> the same test -> the same failure, with a different edit each time."""
    hit = first(Recurring(), actions(_edit_and_test(6)))
    assert hit is not None and hit[0] == 10
    assert "pytest tests/test_x.py" in hit[1].message and "5 times" in hit[1].message


def _traceback(edit: int, error: str = "StopIteration", test: str = "test_bar_all_nan") -> str:
    """A pytest run's output as a shell gives it, no exit status: the traceback shows the line
    edit ``edit`` left, the summary what failed."""
    return (
        f"F{' ' * 70}[100%]\n=== FAILURES ===\n___ {test} ___\n\n    def _safe_first_finite(obj):\n"
        f"        # edit {edit}: {'tidied ' * edit}\n"
        ">       return next(val for val in obj if safe_isfinite(val))\n"
        f"E       {error}\n\nlib/matplotlib/cbook/__init__.py:{1740 + edit}: {error}\n"
        f"=== short test summary info ===\nFAILED lib/matplotlib/tests/test_axes.py::{test} - {error}\n"
        f"1 failed, 835 deselected in {1.9 + edit / 100:.2f}s"
    )


def _cosmetic(outputs: list[str]) -> list[Call]:
    run = {"cmd": "python -m pytest lib/matplotlib/tests/test_axes.py -k test_bar_all_nan -q"}
    calls: list[Call] = []
    for n, output in enumerate(outputs):
        calls.append(
            {
                "tool": "str_replace_editor",
                "args": {"path": "cbook.py", "new_str": f"v{n}"},
                "output": f"edited {n}",
            }
        )
        calls.append({"tool": "bash", "args": run, "output": output})
    return calls


def test_a_test_rerun_after_cosmetic_edits_failing_alike_is_recurring_though_the_traceback_moves() -> None:
    """A shell that gives no exit status: each rerun's traceback shows the line just edited (and
    its line number), the summary the same test failing the same way. The fifth run trips; a
    failure that changes, or another test failing, is debugging."""
    hit = first(Recurring(), actions(_cosmetic([_traceback(n) for n in range(6)])))
    assert hit is not None and hit[0] == 10 and "5 times" in hit[1].message
    errors = [
        "StopIteration",
        "IndexError: list index out of range",
        "TypeError: bad operand",
        "ValueError: nan",
    ]
    errors += ["AssertionError: assert 0 == 1", "KeyError: 'x'"]
    assert first(Recurring(), actions(_cosmetic([_traceback(n, e) for n, e in enumerate(errors)]))) is None
    tests = [f"test_bar_{name}" for name in ("all_nan", "nan_x", "nan_height", "empty", "inf", "none")]
    assert (
        first(Recurring(), actions(_cosmetic([_traceback(n, test=t) for n, t in enumerate(tests)]))) is None
    )


def test_the_same_output_from_varying_arguments_is_recurring() -> None:
    """Paraphrased searches landing on the same page. (Landing on the same "not found" is an
    answer of nothing, ``empty``'s to judge.)"""
    page = (
        "May Parker, commonly known as Aunt May, is a fictional character appearing in American "
        "comic books published by Marvel Comics, the aunt of Peter Parker (Spider-Man)."
    )
    calls: list[Call] = [
        {"tool": "search", "args": {"q": q}, "output": page}
        for q in ["Aunt May", "Aunt May Parker", "Aunt May Marvel", "Aunt May comics", "May Parker"]
    ]
    hit = first(Recurring(), actions(calls))
    assert hit is not None and hit[0] == 5 and "returned the same output" in hit[1].message


@pytest.mark.parametrize(
    ("tool", "args", "status"),
    [
        (
            "python",
            lambda n: {"cmd": f"python -m pytest tests/test_env.py::test_case_{'abcdef'[n]} -q"},
            ". [100%]\n1 passed in 0.03s",
        ),
        ("queue_delete", lambda n: {"receipt_handle": f"AQEB{'fedcba'[n]}aabf"}, '{"deleted": true}'),
        (
            "kubectl",
            lambda n: {"cmd": f"kubectl annotate pod web-{'abcdef'[n]} checked=yes"},
            "pod annotated",
        ),
    ],
    ids=["tests passing one after another", "messages deleted", "pods annotated"],
)
def test_the_same_status_line_from_other_calls_is_no_page_landed_on_again(
    tool: str, args: Any, status: str
) -> None:
    """One test after another passing, one message after another deleted: each call's own status,
    worded alike (a line, not a page): no recurring. The same call answering it again is."""
    others = actions([{"tool": tool, "args": args(n), "output": status} for n in range(6)])
    assert trips(Recurring(), others) == [None] * 6
    again = first(Recurring(), actions([{"tool": tool, "args": args(0), "output": status}] * 6))
    assert again is not None and again[0] == 5


def _poll(since: str, events: str) -> Call:
    """A status feed polled with ``since=<timestamp>``, answering ``events``."""
    url = f"https://status.example/api/v2/events?since={since}"
    output = f'{{"events": {events}, "next_since": "{since}"}}'
    return {"tool": "http_get", "args": {"url": url}, "output": output}


def test_nothing_new_between_new_batches_is_a_poll_that_moves() -> None:
    """A feed answering "nothing new" between the batches it brings is polled, not stuck;
    five "nothing new" with no batch between are the same result again."""
    calls: list[Call] = []
    for n in range(6):
        since = f"2024-10-02T08:{n:02}:00Z"
        calls += [_poll(since, "[]"), _poll(since, "[]"), _poll(since, f'[{{"id": "evt_{8812 + n}"}}]')]
        calls.append({"tool": "post", "args": {"text": f"incident {n}"}, "output": "posted to #status"})
    assert trips(Recurring(), actions(calls)) == [None] * 24
    idle = [_poll(f"2024-10-02T09:{n:02}:00Z", "[]") for n in range(5)]
    hit = first(Recurring(), actions(calls + idle))
    assert hit is not None and hit[0] == 29 and "5 times" in hit[1].message


def test_a_poller_going_round_its_feeds_between_sleeps_moves_when_any_feed_brings_news() -> None:
    """A call right after a wait is a poll: one feed's "no new items" counts since any feed of that
    tool brought news (a poller's rounds); the same feed asked five times with no sleep between is
    the same result again, whatever the others bring."""
    feeds = ("pip", "openssl", "node")

    def fetch(feed: str, news: bool) -> Call:
        output = f'{{"new_items": [{{"id": "GHSA-{feed}"}}]}}' if news else "no new items"
        return {"tool": "fetch_feed", "args": {"url": f"https://example.com/{feed}.atom"}, "output": output}

    sleep: Call = {"tool": "sleep", "args": {"seconds": 600}, "output": "ok"}
    rounds: list[Call] = []
    for n in range(15):  # the pip feed never brings news; another feed now and then
        rounds += [sleep, fetch(feeds[n % 3], news=n % 4 == 3 and n % 3 != 0)]
    assert trips(Recurring(), actions(rounds)) == [None] * 30
    busy = [call for call in rounds if call is not sleep]
    hit = first(Recurring(), actions(busy))
    assert hit is not None and "fetch_feed" in hit[1].message


def test_a_job_polled_after_waits_moves_while_any_call_between_brings_news() -> None:
    """A job's status polled after each wait says "queued" round after round while its events say
    the queue moves: waiting on a job that moves. With events that say nothing new, the same status
    five times is the same result again."""
    status: Call = {
        "tool": "jobs.retrieve",
        "args": {"job_id": "ftjob-9b3m"},
        "output": '{"id": "ftjob-9b3m", "status": "queued", "finished_at": null, "trained_tokens": null}',
    }
    wait: Call = {"tool": "sleep", "args": {"seconds": 300}, "output": ""}

    def rounds(positions: list[int]) -> list[Call]:
        calls: list[Call] = []
        for position in positions:
            event = f'{{"data": [{{"message": "Job enqueued. Queue position: {position}"}}]}}'
            calls += [
                wait,
                status,
                {"tool": "jobs.list_events", "args": {"job_id": "ftjob-9b3m"}, "output": event},
            ]
        return calls

    moving = rounds([40, 33, 27, 21, 14, 9, 4])
    assert [hit for hit in trips(Recurring(), actions(moving)) if hit is not None] == []
    flat = trips(Recurring(), actions(rounds([40] * 7)))
    assert {hit.evidence["call"].split("(")[0] for hit in flat if hit is not None} == {
        "jobs.retrieve",
        "jobs.list_events",
    }


def test_a_queue_listed_between_sleeps_while_each_job_s_log_moves_is_waiting_on_jobs_that_move() -> None:
    """A sweep's ``squeue`` listing, the same long answer after each sleep, while a short tail of a
    job's log moves on: the news is in the short answer's call key, and the listing's output key
    counts since it. With the logs frozen too, the same listing five times is the same result."""
    queue = "JOBID PARTITION NAME USER ST TIME NODES\n" + "\n".join(
        f"4410{n:03d} gpu sweep-lr1e-4-bs{2**n} mlops R 1-02:00:00 1" for n in range(4, 8)
    )

    def rounds(steps: list[int]) -> list[Call]:
        calls: list[Call] = []
        for step in steps:
            calls += [
                {"tool": "shell", "args": {"cmd": "sleep 300"}, "output": ""},
                {"tool": "shell", "args": {"cmd": "squeue -u mlops"}, "output": queue},
                {
                    "tool": "shell",
                    "args": {"cmd": "tail -n 1 logs/bs64.out"},
                    "output": f"step {step} loss 0.4",
                },
            ]
        return calls

    assert [hit for hit in trips(Recurring(), actions(rounds([100, 200, 300, 400, 500, 600]))) if hit] == []
    frozen = [hit for hit in trips(Recurring(), actions(rounds([100] * 6))) if hit is not None]
    assert frozen and frozen[0].evidence["call"].startswith("shell")


def test_a_look_right_after_a_wait_that_finds_nothing_is_not_counted() -> None:
    """An inbox looked at after each wait and answered nothing waits for a reply (as a long poll
    waits for work); looked at between other calls, the same answer six times is the same result."""
    look: Call = {
        "tool": "gmail.list_messages",
        "args": {"q": "in:inbox subject:review"},
        "output": '{"messages": [], "resultSizeEstimate": 0}',
    }
    wait: Call = {"tool": "wait", "args": {"minutes": 15}, "output": "waited 15m"}
    assert first(Recurring(), actions([wait, look] * 6)) is None
    busy = {
        "ben": "standup",
        "ana": "review",
        "raj": "lunch",
        "kim": "offsite",
        "lee": "retro",
        "zoe": "plan",
    }
    slots: list[Call] = [
        {"tool": "calendar.agenda", "args": {"who": who}, "output": f'{{"busy": ["{what}"]}}'}
        for who, what in busy.items()
    ]
    hit = first(Recurring(), actions([call for slot in slots for call in (slot, look)]))
    assert hit is not None and hit[0] == 10 and "gmail.list_messages" in hit[1].message


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: Recurring(threshold=1), "recurring: threshold must be an integer between 2"),
        (lambda: Recurring(threshold=5, window=4), "recurring: window must be an integer between 5"),
        (lambda: Recurring(min_chars=-1), "min_chars"),
        (lambda: Recurring(tools={"pytest": 0}), "tools.pytest"),
    ],
)
def test_bad_parameters_are_config_errors(make: Any, words: str) -> None:
    """A detector refuses parameters that could never work, naming the parameter."""
    with pytest.raises(ConfigError, match=words):
        make()


def _edit_and_test(n: int) -> list[Call]:
    """``n`` rounds of a different edit, then the same test failing the same way."""
    calls: list[Call] = []
    for i in range(n):
        calls.append(
            {"tool": "sed", "args": {"cmd": f"sed -i 's/old{i}/new{i}/' src/parse.py"}, "output": ""}
        )
        calls.append(
            {
                "tool": "pytest",
                "args": {"cmd": "pytest tests/test_x.py"},
                "output": PYTEST_FAIL.format(t=f"0.{i}1"),
            }
        )
    return calls


def test_the_message_names_the_call_the_count_and_the_window() -> None:
    """Which call gave the same result, how often, over how many actions; the evidence says so too."""
    hit = first(Recurring(), actions(_edit_and_test(5)))
    assert hit is not None
    anomaly = hit[1]
    assert anomaly.message.startswith(
        'pytest({"cmd":"pytest tests/test_x.py"}) gave the same result 5 times in the last 30 actions'
    )
    assert anomaly.evidence == {
        "count": 5,
        "call": 'pytest({"cmd":"pytest tests/test_x.py"})',
        "same": "call and result",
        "window": 30,
        "threshold": 5,
        "avoid": 'pytest({"cmd":"pytest tests/test_x.py"})',
    }


def test_short_outputs_match_only_on_the_exact_call() -> None:
    """Five different searches each answering "no results" (10 characters) say nothing about each other."""
    calls: list[Call] = [{"tool": "search", "args": {"q": q}, "output": "no results"} for q in "abcdef"]
    assert trips(Recurring(), actions(calls)) == [None] * 6
    paged: list[Call] = [
        {"tool": "search", "args": {"q": f"x p{n}"}, "output": "no results"} for n in range(6)
    ]
    assert trips(Recurring(), actions(paged)) == [None] * 6
    hit = first(Recurring(min_chars=5), actions(paged))  # now "no results" is long enough: the shape counts
    assert hit is not None and hit[0] == 5 and hit[1].evidence["same"] == "call and result"
    again: list[Call] = [{"tool": "search", "args": {"q": "a"}, "output": "no results"}] * 5
    assert trips(Recurring(), actions(again))[-1] is not None  # the exact call, the same answer


def test_files_verified_one_by_one_each_ok_is_no_recurring() -> None:
    """A backup verifier checking file after file, each answered "OK: checksum matches" (a
    verdict, an all-clear), was told at its sixth file that it recurred: the shape masks the
    numbers that name each file (live round 47). The same file verified again and again is."""
    files: list[Call] = [
        {
            "tool": "verify",
            "args": {"path": f"/backups/2026-12-07/db-{i:02d}.tar.gz"},
            "output": "OK: checksum matches",
        }
        for i in range(8)
    ]
    assert trips(Recurring(), actions(files)) == [None] * 8
    assert trips(Recurring(), actions([files[0]] * 6))[-1] is not None


def test_an_all_clear_report_matches_only_on_the_exact_call() -> None:
    """A linter passing one file after another ("All checks passed!") finds nothing wrong in each:
    no recurring; the same file linted again and again, passing each time, is."""
    sweep: list[Call] = [
        {"tool": "bash", "args": {"command": f"ruff check src/module_{n}.py"}, "output": "All checks passed!"}
        for n in range(8)
    ]
    assert trips(Recurring(), actions(sweep)) == [None] * 8
    again: list[Call] = [sweep[0]] * 6
    assert trips(Recurring(), actions(again))[-1] is not None


def test_an_all_clear_after_each_change_is_a_check_of_that_change() -> None:
    """A coding agent lints the same folder after each edit, passing every time: each run checks
    the edit before it, no recurring (until 2026-12-06 the sixth was, and the agent was escalated
    while its tests moved). Linted again with no edit between, it is, as before."""
    lint: Call = {"tool": "bash", "args": {"command": "ruff check src/"}, "output": "All checks passed!"}
    work: list[Call] = []
    for n in range(8):
        work.append({"tool": "edit_file", "args": {"path": f"src/p{n}.py", "new": f"v{n}"}, "output": "ok"})
        work.append(lint)
    assert fired(actions(work)) == {}
    again = work[:2] + [lint] * 5
    assert trips(Recurring(), actions(again))[-1] is not None
    for calls, found in ((work, False), (again, True)):  # the Monitor's tracker, pushed one by one
        tracker = Recurring().tracker(History([]))
        assert [tracker.push(a) is not None for a in actions(calls)][-1] is found


def _pytest_passed(selected: int, seconds: str) -> str:
    """pytest's whole report of a run of ``selected`` tests out of 121, all passing."""
    return (
        "============================= test session starts ==============================\n"
        "platform linux -- Python 3.11.10, pytest-8.3.3, pluggy-1.5.0\nrootdir: /testbed\n"
        f"collected 121 items / {121 - selected} deselected / {selected} selected\n\n"
        f"networkx/algorithms/tests/test_dag.py {'.' * selected}{' ' * 30}[100%]\n\n"
        f"========== {selected} passed, {121 - selected} deselected in {seconds}s =========="
    )


def test_a_test_runner_s_report_of_a_run_that_passed_is_no_page_landed_on_again() -> None:
    """A coding agent runs ten tests one ``-k`` at a time, each answered pytest's whole report,
    "1 passed, 120 deselected" (a page long, the same words each time): each run's own status, no
    recurring (a held-out-like SWE-agent run was flagged so). The same selection run again and
    again, passing each time, is; so are other selections failing alike (a report with "failed")."""
    names = ["longest_path", "topo_order", "ancestors", "descendants", "antichains", "transitive"]
    runs: list[Call] = [
        {"tool": "python", "args": {"cmd": f"python -m pytest test_dag.py -q -k test_{name}"}, "output": out}
        for name, out in zip(names, [_pytest_passed(1, f"0.1{n}") for n in range(6)], strict=True)
    ]
    assert trips(Recurring(), actions(runs)) == [None] * 6
    assert trips(Recurring(), actions([runs[0]] * 6))[-1] is not None
    failing = [{**run, "output": PYTEST_FAIL.format(t="0.42")} for run in runs]
    assert trips(Recurring(), actions(failing))[-1] is not None


def test_a_write_answering_ok_as_it_always_does_is_not_recurring() -> None:
    """A feed reader marks the feed read after each new batch: the same call answered "ok" every
    time is what a write says, not a sign nothing moved. Its twin whose feed stops bringing new
    items is recurring."""

    def cycle(batch: int) -> list[Call]:
        items = f"[{{'id': {batch * 10 + 1}, 'title': 'item {batch}a'}}, {{'id': {batch * 10 + 2}}}]"
        return [
            {"tool": "fetch_feed", "args": {"url": "https://news.example/rss"}, "output": items},
            {"tool": "summarize_item", "args": {"id": batch * 10 + 1}, "output": f"summary of {batch}a"},
            {"tool": "mark_all_read", "args": {"url": "https://news.example/rss"}, "output": "ok"},
        ]

    reading = [call for batch in range(1, 10) for call in cycle(batch)]
    assert fired(actions(reading)) == {}
    hit = first(Recurring(), actions(cycle(1) * 9))  # the same items every time
    assert hit is not None and hit[0] == 13 and hit[1].message.startswith("fetch_feed(")


def test_an_act_confirming_as_it_always_does_is_no_page_landed_on_again() -> None:
    """A question-answering worker submits one answer after another, each confirmed "Episode finished,
    reward = 1": what the act always answers, not paraphrased searches landing on one page. The same
    answer submitted again and again, confirmed the same way, is still recurring."""

    def question(n: int, answer: str) -> list[Call]:
        return [
            {
                "tool": "search",
                "args": {"cmd": f"Search[topic {n}]"},
                "output": f"Topic {n} is about {answer}.",
            },
            {
                "tool": "finish",
                "args": {"cmd": f"Finish[{answer}]"},
                "output": "Episode finished, reward = 1",
            },
        ]

    answers = ["yes", "no", "Northern Lights", "1940", "A Year in Ash", "yes", "no"]
    working = [call for n, answer in enumerate(answers) for call in question(n, answer)]
    assert trips(Recurring(), actions(working)) == [None] * len(working)
    again = [{"tool": "finish", "args": {"cmd": "Finish[yes]"}, "output": "Episode finished, reward = 0"}] * 5
    assert trips(Recurring(), actions(again))[-1] is not None


def test_acts_on_numbered_things_are_different_acts() -> None:
    """Closing ticket after ticket, each confirmed "Ticket closed successfully.", is work; closing
    one ticket again and again is not."""
    done = "Ticket closed successfully."
    tickets: list[Call] = [
        {"tool": "close_ticket", "args": {"ticket_id": 40017 + n}, "output": done} for n in range(8)
    ]
    assert trips(Recurring(), actions(tickets)) == [None] * 8
    again: list[Call] = [{"tool": "close_ticket", "args": {"ticket_id": 40017}, "output": done}] * 5
    assert fired(actions(again)).get("recurring") == 5


_GREEN = "build\tpass\t2m3s\nlint\tpass\t41s\ntest\tpass\t5m10s"


def _reviews(checked: Callable[[int], int]) -> list[Call]:
    """Ten PRs' new diffs, each followed by the checks of PR ``checked(n)``, all green."""
    found: list[Call] = []
    for n in range(10):
        found.append(
            {"tool": "gh_pr_diff", "args": {"number": 1280 + n}, "output": f"diff --git a/m{n}.ts\n+{n}"}
        )
        found.append({"tool": "gh_pr_checks", "args": {"number": checked(n)}, "output": _GREEN})
    return found


def test_the_same_answer_for_each_new_thing_after_news_is_each_things_own() -> None:
    """A PR reviewer reads each new PR's diff, then its checks, all green for every PR; a tenant
    migrator checks each new tenant's schema version, 42 for all (live round 55: ``recurring`` at
    the fifth, escalated at the sixth). Each thing is in the same state. A pager whose page number
    moves while the page does not, nothing else new between, and the same PR's checks asked again
    between new diffs, are recurring."""
    assert fired(actions(_reviews(lambda n: 1280 + n))).get("recurring") is None
    tenants: list[Call] = []
    for n in range(10):
        migrated = f"Successfully applied 3 migrations to schema tenant_{101 + n}"
        command = f"flyway -schemas=tenant_{101 + n} migrate"
        tenants.append({"tool": "bash", "args": {"command": command}, "output": migrated})
        sql = f"SELECT max(version) FROM tenant_{101 + n}.flyway_schema_history"
        tenants.append({"tool": "run_sql", "args": {"sql": sql}, "output": " max\n-----\n 42\n(1 row)"})
    assert fired(actions(tenants)).get("recurring") is None
    stale = "Page 1 of 40: Alpha Corp annual report, revenue and outlook"
    pager: list[Call] = [{"tool": "read_page", "args": {"page": n}, "output": stale} for n in range(1, 9)]
    assert fired(actions(pager)).get("recurring") == 5
    assert fired(actions(_reviews(lambda n: 1280 + n % 2))).get("recurring") is not None


def test_the_same_act_between_new_pages_is_work_and_with_nothing_new_between_is_not() -> None:
    """A scraper inserts its batch after each page it fetches, each ``inserted 100``: the same act,
    new pages between. The same answer submitted five times with the same page between is stuck."""
    scraped: list[Call] = []
    for page in range(1, 9):
        scraped.append(
            {"tool": "http.get", "args": {"page": page}, "output": f"page {page}: " + "sku " * page}
        )
        scraped.append(
            {"tool": "db.insert_many", "args": {"table": "raw", "rows": 100}, "output": "inserted 100"}
        )
    assert trips(Recurring(), actions(scraped)) == [None] * 16
    submitted: list[Call] = []
    for _ in range(5):
        submitted.append({"tool": "search", "args": {"q": "Noah Cyrus"}, "output": "Noah Cyrus is a singer."})
        submitted.append({"tool": "finish", "args": {"answer": "1999"}, "output": "Wrong answer, try again."})
    hit = trips(Recurring(), actions(submitted))[9]
    assert hit is not None and hit.tool == "finish" and "5 times" in hit.message


def test_an_mcp_servers_act_is_told_by_the_verb_after_its_namespace() -> None:
    """``gmail.modify_message`` labels mail after mail, each answered ``{"ok": true}``: acts on
    different messages, not one page landed on again."""
    labelled: list[Call] = [
        {
            "tool": "gmail.modify_message",
            "args": {"id": f"18ee{n:011x}", "addLabelIds": [f"Label_{n % 3}"]},
            "output": '{"ok": true}',
        }
        for n in range(8)
    ]
    assert trips(Recurring(), actions(labelled)) == [None] * 8


def test_failures_and_actions_without_output_are_not_counted() -> None:
    """The same call failing is recurring_error's; an action reporting no output has no result to match."""
    failing: list[Call] = [
        {
            "tool": "pytest",
            "args": {"cmd": "pytest"},
            "output": PYTEST_FAIL.format(t="0.1"),
            "error": "exit 1",
        }
    ] * 6
    assert trips(Recurring(), actions(failing)) == [None] * 6
    silent: list[Call] = [("pytest", {"cmd": "pytest"})] * 6
    assert trips(Recurring(), actions(silent)) == [None] * 6


def test_a_result_that_left_the_window_no_longer_counts() -> None:
    """Five same results spread wider than the window are not recurring; a wider window sees them."""
    calls: list[Call] = []
    for i in range(5):
        calls.append({"tool": "pytest", "args": {"cmd": "pytest"}, "output": PYTEST_FAIL.format(t="0.1")})
        calls += [
            {"tool": "read", "args": {"f": f"m{i}{k}.py"}, "output": f"module {i} {k} " * 3} for k in range(7)
        ]
    assert trips(Recurring(window=30), actions(calls)) == [None] * 40
    hit = first(Recurring(window=40), actions(calls))
    assert hit is not None and hit[0] == 33


def test_a_tool_with_its_own_repeat_threshold_gets_as_much_room_here() -> None:
    """``[detectors.repeat] tools``: a higher threshold applies and shows in the evidence; "off" silences."""
    records = actions(_edit_and_test(9))
    hit = first(Recurring(tools={"pytest": 8}), records)
    assert hit is not None and hit[0] == 16 and hit[1].evidence["threshold"] == 8
    assert trips(Recurring(tools={"pytest": "off"}), records) == [None] * 18
    lower = first(Recurring(tools={"pytest": 2}), records)
    assert lower is not None and lower[0] == 10  # never below recurring's own threshold


def test_exempt_tools_are_invisible_to_recurring() -> None:
    """An exempt tool's results never recur."""
    assert trips(Recurring(exempt={"pytest"}), actions(_edit_and_test(8))) == [None] * 16


def test_batches_written_by_id_range_are_writes_and_the_same_batch_again_is_not() -> None:
    """A backfill's ``UPDATE ... BETWEEN lo AND hi``, each answered ``UPDATE 5000``, writes another
    range each time: the exact statement keys it, as an act's number does; the very same batch
    answered alike again and again is the same result."""

    def batch(lo: int, ms: int) -> Call:
        sql = f"UPDATE orders SET region_id = 7 WHERE id BETWEEN {lo} AND {lo + 4999} AND region_id IS NULL"
        return {"tool": "run_sql", "args": {"sql": sql}, "output": f"UPDATE 5000\nTime: {ms}.512 ms"}

    ranges = [batch(1 + 5000 * n, 900 + n) for n in range(12)]
    assert trips(Recurring(), actions(ranges)) == [None] * 12
    same = [batch(1, 900 + n) for n in range(6)]
    hit = first(Recurring(), actions(same))
    assert hit is not None and hit[0] == 5


_SITEMAP = "\n".join(f"https://shop.example.com/products/{i}" for i in range(1, 60))


_READ_SITEMAP = {"tool": "fetch", "args": {"url": "https://shop.example.com/sitemap.txt"}, "output": _SITEMAP}


def _wake_ups(heartbeats: int, work: Any, read_first: bool = True) -> list[Call]:
    """Each heartbeat reads the unchanged sitemap first (if ``read_first``), then does
    ``work(heartbeat)``'s calls."""
    calls: list[Call] = []
    for tick in range(1, heartbeats + 1):
        first = [_READ_SITEMAP] if read_first else []
        calls += [{**call, "tick": tick} for call in [*first, *work(tick)]]
    return calls


def _new_products(tick: int) -> list[dict[str, Any]]:
    return [
        {"tool": "fetch", "args": {"url": f"https://shop.example.com/products/{n}"}, "output": _product(n)}
        for n in range(5 * tick, 5 * tick + 5)
    ]


def _product(n: int) -> str:
    return f"<h1>{['Kettle', 'Toaster', 'Lamp', 'Fan', 'Clock'][n % 5]} {n}</h1>" + f"<p>spec {n} </p>" * 9


def test_a_document_read_again_at_each_wake_up_before_new_work_is_no_recurrence() -> None:
    """A crawler re-reads its sitemap at each heartbeat, then fetches five pages it has not seen; a
    writer re-reads its outline, then writes two new sections: the sitemap and the outline are what
    the work goes by (live round 45, H5: escalated at the sixth heartbeat)."""
    assert first(Recurring(), actions(_wake_ups(12, _new_products))) is None

    def sections(tick: int) -> list[dict[str, Any]]:
        return [
            {"tool": "write_file", "args": {"path": f"s{2 * tick + k}.md", "text": "x"}, "output": "ok"}
            for k in range(2)
        ]

    outline = [
        {**call, "tool": "read_file", "args": {"path": "outline.md"}} if call["tool"] == "fetch" else call
        for call in _wake_ups(12, sections)
    ]
    assert first(Recurring(), actions(outline)) is None


def test_a_document_read_again_before_the_same_pages_or_mid_heartbeat_still_recurs() -> None:
    """The same wake-up routine landing on pages already seen is old ground; so is the sitemap read
    again in the middle of a heartbeat's new pages (no wake-up), or a short answer read again
    between new pages (a label, a status: no document the work goes by)."""
    same = first(Recurring(), actions(_wake_ups(8, lambda tick: _new_products(1))))
    assert same is not None and "sitemap" in same[1].message

    def sitemap_between(tick: int) -> list[dict[str, Any]]:
        products = _new_products(tick)
        return [*products[:2], _READ_SITEMAP, *products[2:]]

    assert first(Recurring(), actions(_wake_ups(8, sitemap_between, read_first=False))) is not None

    label = [
        {**call, "output": '{"label": "billing", "ok": true}'} if "sitemap" in str(call["args"]) else call
        for call in _wake_ups(8, _new_products)
    ]
    assert first(Recurring(), actions(label)) is not None


def test_a_suite_passing_after_each_change_is_no_recurrence_and_rerun_with_none_is() -> None:
    """A dependency updater bumps one pin, runs the whole suite ("212 passed"), commits: the same
    passing run after each change checks that change (live round 46: escalated at the sixth
    wake-up). The same suite rerun with nothing changed between is the same result again."""
    bumps: list[Call] = []
    for n in range(8):
        bumps += [
            {"tool": "edit_file", "args": {"path": "requirements.txt", "new": f"p{n}==2"}, "output": "ok"},
            {"tool": "shell", "args": {"cmd": "pytest -q"}, "output": f"212 passed in 4.{n}s"},
            {"tool": "git", "args": {"args": f"commit -am 'bump pkg{n}'"}, "output": f"[main a1b{n}] bump"},
        ]
    assert first(Recurring(), actions(bumps)) is None
    reruns = [call for call in bumps if call["tool"] == "shell" or call is bumps[0]]
    hit = first(Recurring(), actions(reruns))
    assert hit is not None and "pytest -q" in hit[1].message


def test_a_cursor_read_back_at_each_wake_up_is_the_agents_memory() -> None:
    """A poller reading its cursor at each wake-up (``state.get(key="issues_since")``, a timestamp,
    masked: the same line while the cursor moves) and storing it after each new batch was
    escalated (blind batches 49 and 51): it reads back what it wrote. The same status read again
    with nothing of it written is still the same result."""
    calls: list[Call] = []
    since = "2025-06-01T02:10:19Z"
    for n in range(12):
        calls.append(
            {
                "tool": "state.get",
                "args": {"key": "issues_since"},
                "output": f'{{"key": "issues_since", "value": "{since}"}}',
            }
        )
        calls.append(
            {
                "tool": "gh.list_issues",
                "args": {"since": since},
                "output": f'{{"total_count": 1, "items": [{{"number": {500 + n}}}]}}',
            }
        )
        since = f"2025-06-01T0{3 + n % 7}:1{n % 10}:04Z"
        calls.append({"tool": "state.set", "args": {"key": "issues_since", "value": since}, "output": "ok"})
    assert trips(Recurring(), actions(calls)) == [None] * len(calls)
    unwritten = [call for call in calls if call["tool"] != "state.set"]
    assert first(Recurring(), actions(unwritten)) is not None


def test_a_reference_looked_up_before_each_new_item_is_consulted_not_landed_on() -> None:
    """A writer gets its style guide before each section it writes, a labeller its guidelines before
    each item it labels (blind batch 53: escalated at the fifth section): the same answer by nature,
    something new written between each two askings. The same lookup between rewrites of one section,
    or between messages asking a customer again, did nothing new."""
    guide = (
        '{"name": "house-style", "rules": ["second person", "sentences under 25 words"], "version": 3}' * 2
    )

    def writer(section: Any, message: bool = False) -> list[Call]:
        calls: list[Call] = []
        for n in range(10):
            calls.append({"tool": "style_guide.get", "args": {"name": "house-style"}, "output": guide})
            if message:
                calls.append(
                    {
                        "tool": "send_message",
                        "args": {"text": f"Could you confirm, take {n}?"},
                        "output": "sent",
                    }
                )
            else:
                calls.append(
                    {"tool": "docs.write_section", "args": {"n": section(n), "text": "x"}, "output": "saved"}
                )
        return calls

    assert first(Recurring(), actions(writer(lambda n: n))) is None
    assert first(Recurring(), actions(writer(lambda n: 7))) is not None
    assert first(Recurring(), actions(writer(lambda n: n, message=True))) is not None


def test_a_quiet_source_in_a_round_counts_since_any_news() -> None:
    """A vendor-status digest reads six status pages each wake-up, most of them quiet: a quiet
    source counts as a poll does, since any call answered something new. While one vendor's
    incident moves on, the quiet ones recur in vain (until 2026-12-06 escalated at the sixth
    wake-up); with nothing new anywhere, the same quiet page five times is the same result."""
    vendors = ("aws", "stripe", "twilio", "github", "datadog")
    quiet = '{"incidents": []}'

    def round_(tick: int, news: str | None) -> list[Call]:
        return [
            {
                "tool": "statuspage.get_unresolved_incidents",
                "args": {"vendor": v},
                "output": news if v == "twilio" and news else quiet,
                "tick": tick,
            }
            for v in vendors
        ]

    moving = ("investigating", "identified", "monitoring", "resolved", "postmortem", "closed")
    calls = [
        call
        for tick, status in enumerate(moving, 1)
        for call in round_(tick, f'{{"incidents": [{{"id": "tw-4kq9", "status": "{status}"}}]}}')
    ]
    assert trips(Recurring(), actions(calls)) == [None] * len(calls)
    still = [call for tick in range(1, 7) for call in round_(tick, None)]
    assert any(trips(Recurring(), actions(still)))
    # the agent's own post after each round ("nothing new" said again) is no news from a source
    posted = [
        call
        for tick in range(1, 7)
        for call in [
            *round_(tick, None),
            {"tool": "slack.post", "args": {"text": f"round {tick}: all quiet"}, "output": '{"ok": true}'},
        ]
    ]
    assert any(trips(Recurring(), actions(posted)))


def test_a_test_run_after_each_bisect_step_is_that_commits_answer() -> None:
    """A bisect's test passes at some commits and fails at others: each pass after a step that
    checked out a new commit is news, not the same result again (live round 53's kernel bisect was
    escalated by it). After a step git answers as before (only skipped commits left), it is."""
    test = {"cmd": "pytest tests/test_render.py -q"}
    passed = {"tool": "run_tests", "args": test, "output": "12 passed in 0.41s"}

    def steps(answers: list[str]) -> list[Call]:
        return [
            call
            for answer in answers
            for call in (passed, {"tool": "git_bisect", "args": {"cmd": "good"}, "output": answer})
        ]

    moving = [
        f"Bisecting: {64 >> i} revisions left to test after this\n[{i:07x}] render: step {i}"
        for i in range(7)
    ]
    assert first(Recurring(), actions(steps(moving))) is None
    stuck = [
        "There are only 'skip'ped commits left to test.\nThe first bad commit could be any of: 9c1f0e2"
    ] * 7
    assert first(Recurring(), actions(steps(stuck))) is not None
