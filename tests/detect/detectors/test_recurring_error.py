"""``recurring_error``: the same error again and again, told apart from different errors."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from heartbeat.base.errors import ConfigError
from heartbeat.detect.detectors import RecurringError
from heartbeat.detect.monitor import Monitor

from .helpers import Call, actions, fired, first, import_probe, trips

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def test_a_different_invalid_action_each_time_is_a_recurring_error() -> None:
    """Clicking size after size, each rejected with the same message."""
    calls: list[Call] = []
    for size in ["11 women", "12 women", "12.5 women", "13.5 women"]:
        calls.append({"tool": "think", "args": {"cmd": f"think[no size {size}]"}, "output": "OK."})
        calls.append(
            {
                "tool": "click",
                "args": {"cmd": f"click[{size}]"},
                "output": "Invalid action!",
                "error": "invalid_action",
            }
        )
    hit = first(RecurringError(), actions(calls))
    assert hit is not None and hit[0] == 6
    assert "click failed with an error seen 3 times" in hit[1].message and "invalid_action" in hit[1].message


def test_one_rejection_quoting_back_each_try_is_a_recurring_error() -> None:
    """An id passed in one wrong form after another, each refused with the value quoted back
    (``invalid employee_id 'Dana Kwon'``), is one rejection, whether the failure comes as the
    error or as the answer; refusals that say different things are no recurring error."""
    tries = ["dana.kwon@corp.example", "DANA.KWON@CORP.EXAMPLE", "dana.kwon", "Dana Kwon"]
    refused = "400 Bad Request: invalid employee_id '{}': expected format E followed by 6 digits"
    monitor = Monitor()
    monitor.start_tick(1)
    hits = []
    for n, value in enumerate(tries):
        said = refused.format(value)
        reply = {"text": f"One moment, still looking ({n})."}
        hits.append(monitor.record("reply_to_user", reply, output="ok", now=T0))
        if n % 2:  # the failure as the answer, as some tools give it
            hits.append(monitor.record("lookup_employee", {"employee_id": value}, output=said, now=T0))
        else:
            hits.append(monitor.record("lookup_employee", {"employee_id": value}, error=said, now=T0))
    kinds = [hit.kind for hit in hits if hit is not None]
    assert kinds and kinds[0] == "recurring_error"
    calls: list[Call] = [
        {"tool": "lookup_employee", "args": {"employee_id": value}, "error": error}
        for value, error in [
            ("dkwon", "400 Bad Request: invalid employee_id 'dkwon': expected format E followed by 6 digits"),
            ("E12345", "400 Bad Request: invalid employee_id 'E12345': expected 6 digits, got 5"),
            ("E123456", "404 Not Found: no employee 'E123456' in directory Finance"),
            ("E654321", "403 Forbidden: employee 'E654321' is outside your support group"),
        ]
    ]
    assert first(RecurringError(), actions(calls)) is None


def test_every_message_names_its_evidence() -> None:
    """Each v2 anomaly says which call, how many times, and over how many actions."""
    calls: list[Call] = [
        {
            "tool": "lookup",
            "args": {"cmd": f"Lookup[Aunt May {i}]"},
            "output": "No more results.",
            "error": "not_found",
        }
        for i in range(3)
    ]
    hit = first(RecurringError(), actions(calls))
    assert hit is not None
    anomaly = hit[1]
    evidence: dict[str, Any] = anomaly.evidence
    assert evidence["count"] == 3 and evidence["window"] == 10 and "Lookup[Aunt May 2]" in evidence["call"]
    assert "3 times in the last 10 actions" in anomaly.message and "not_found" in anomaly.message


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: RecurringError(threshold=1), "recurring_error: threshold must be an integer between 2"),
        (
            lambda: RecurringError(threshold=4, window=3),
            "recurring_error: window must be an integer between 4",
        ),
        (lambda: RecurringError(window=10_001), "window"),
        (lambda: RecurringError(threshold="3"), "threshold"),  # type: ignore[arg-type]
    ],
)
def test_bad_parameters_are_config_errors(make: Any, words: str) -> None:
    """A detector refuses parameters that could never work, naming the parameter."""
    with pytest.raises(ConfigError, match=words):
        make()


def test_a_bare_exit_code_is_the_same_error_only_from_the_same_call() -> None:
    """grep without a match (exit 1, no output) for other patterns is searching; the same grep is stuck."""
    searching: list[Call] = [
        {"tool": "grep", "args": {"cmd": f"grep -rn {word} src"}, "output": "", "error": "returncode 1"}
        for word in ("parse", "render", "flush", "close")
    ]
    assert trips(RecurringError(), actions(searching)) == [None] * 4
    stuck: list[Call] = [
        {"tool": "grep", "args": {"cmd": "grep -rn parse src"}, "output": "", "error": "returncode 1"}
    ]
    found = trips(RecurringError(), actions(stuck * 3))
    assert found[:2] == [None, None] and found[2] is not None and found[2].evidence["count"] == 3


def test_only_errors_within_the_window_count() -> None:
    """Two failures in the last ten actions are not three; a window of twelve reaches back to the first."""

    def error(n: int) -> Call:  # other arguments each time: only the error counts, not a re-run
        return {"tool": "book", "args": {"n": n}, "output": "Error: card declined", "error": "tool_error"}

    calls: list[Call] = [error(1)]
    calls += [{"tool": "search", "args": {"q": f"q{i}"}, "output": f"result {i} " * 3} for i in range(9)]
    calls += [error(2), error(3)]
    assert trips(RecurringError(), actions(calls)) == [None] * 12
    hit = first(RecurringError(window=12), actions(calls))
    assert hit is not None and hit[0] == 12 and "3 times in the last 12 actions" in hit[1].message


def test_exempt_tools_are_invisible_to_recurring_error() -> None:
    """An exempt tool failing the same way again is not reported, and takes no place in the window."""

    def rejected(option: str) -> Call:
        return {
            "tool": "click",
            "args": {"cmd": f"click[{option}]"},
            "output": "Invalid action!",
            "error": "no",
        }

    assert trips(RecurringError(exempt={"click"}), actions([rejected("x")] * 4)) == [None] * 4
    calls: list[Call] = [rejected("x")]
    calls += [{"tool": "log", "args": {"i": i}, "output": "ok"} for i in range(9)]
    calls += [rejected("y"), rejected("z")]
    assert trips(RecurringError(), actions(calls))[-1] is None  # the first rejection left the window
    assert trips(RecurringError(exempt={"log"}), actions(calls))[-1] is not None


def test_reworded_retries_of_one_failing_search_trip_at_three() -> None:
    """The same question asked again in other words, each answer a different "not found"."""
    queries = [
        "Noah Cyrus EP",
        "Noah Cyrus EP 2020",
        "the EP by Noah Cyrus",
        "Noah Cyrus EP album",
        "Wonder Years",
    ]
    calls: list[Call] = [
        {
            "tool": "search",
            "args": {"cmd": f"Search[{q}]"},
            "output": f"Could not find [{q}].",
            "error": "not_found",
        }
        for q in queries
    ]
    found = trips(RecurringError(), actions(calls))
    assert [a is not None for a in found] == [False, False, True, True, False]  # then another question
    hit = found[2]
    assert hit is not None and hit.evidence["same"] == "reworded" and hit.evidence["count"] == 3
    assert "each call a rewording of those before" in hit.message


def test_a_query_fixed_until_it_fails_differently_is_debugging_not_a_reworded_retry() -> None:
    """A query fixed three times, failing on a missing column, then an ambiguous name, then a misused
    aggregate: each fix got further. Its twin, a booking retried with reshuffled amounts into the same
    payment error (numbers aside, a quoted call aside), is the same attempt in other words."""
    fixes = [
        (
            "SELECT c.name, SUM(o.total) FROM orders o JOIN customers c ON o.cust_id = c.id",
            "no such column: o.cust_id",
        ),
        (
            "SELECT c.name, SUM(o.total) FROM orders o JOIN customers c ON o.customer_id = c.id "
            "WHERE customer_id > 0",
            "ambiguous column name: customer_id",
        ),
        (
            "SELECT c.name, SUM(o.total) AS revenue FROM orders o JOIN customers c ON o.customer_id = c.id "
            "GROUP BY c.name HAVING revenue > AVG(revenue)",
            "misuse of aggregate: AVG()",
        ),
    ]
    debugging: list[Call] = [{"tool": "run_query", "args": {"sql": q}, "error": e} for q, e in fixes]
    assert trips(RecurringError(), actions(debugging)) == [None] * 3
    bookings: list[Call] = [
        {
            "tool": "book_reservation",
            "args": {"flight": "HAT082", "payment": [{"id": "gift_card_7", "amount": amount}]},
            "error": f"payment amount does not add up, total price is 1002, but paid {amount}",
        }
        for amount in (957, 1047, 972)
    ]
    hit = trips(RecurringError(), actions(bookings))[-1]
    assert hit is not None and hit.evidence["same"] == "reworded"
    searches: list[Call] = [
        {"tool": "search", "args": {"q": q}, "error": f"Could not find [{q}]. Try other words."}
        for q in ("noah cyrus ep", "noah cyrus ep 2020", "noah cyrus ep release")
    ]
    assert trips(RecurringError(), actions(searches))[-1] is not None  # the query quoted, aside


def _traceback(line: int, last: str) -> str:
    """A Python traceback ending in ``last``, raised at ``line`` of the probe."""
    return f'Traceback (most recent call last):\n  File "<string>", line {line}, in <module>\n{last}'


def test_probes_labelled_returncode_1_that_end_in_other_exceptions_are_debugging() -> None:
    """``python -c`` probes, each a rewording of the one before, all failing ``returncode 1``: the label
    is the same, how each ends is not (an import, then an attribute, then a type), so each probe got
    further. Their twin, the probes all ending in the same exception, is one attempt in other words."""
    probes = [
        "from astropy.io import fits; h = fits.Header(); print(h.tostring(sep='\\n'))",
        "from astropy.io import fits; h = fits.Header.fromstring('END'); print(h.tostring(sep='\\n'))",
        "from astropy.io import fits; h = fits.Header.fromstring(b'END'); print(len(h.tostring(sep='\\n')))",
    ]
    ends = [
        "ImportError: cannot import name 'fits' from partially initialized module 'astropy.io'",
        "AttributeError: 'Header' object has no attribute 'tostring'",
        "TypeError: object of type 'NoneType' has no len()",
    ]

    def runs(lasts: list[str]) -> list[Call]:
        return [
            {
                "tool": "python",
                "args": {"cmd": f'python -c "{p}"'},
                "output": _traceback(1, e),
                "error": "returncode 1",
            }
            for p, e in zip(probes, lasts, strict=True)
        ]

    assert trips(RecurringError(), actions(runs(ends))) == [None] * 3
    same = [f"TypeError: sequence item {i}: expected str instance, bytes found" for i in range(3)]
    hit = trips(RecurringError(), actions(runs(same)))[-1]
    assert hit is not None and hit.evidence["same"] == "reworded"


def _sqlalchemy(message: str, query: str) -> str:
    """A LangChain SQL tool's failure: SQLAlchemy names the error first, then the query and a link."""
    return f"Error: (sqlite3.OperationalError) {message}\n[SQL: {query}]\n(Background on this error at: https://sqlalche.me/e/20/e3q8)"


def test_a_query_fixed_behind_a_label_is_judged_by_the_line_that_names_its_error() -> None:
    """Labelled ``sql_error``, SQLAlchemy's message ends in the query and the same link each time: what
    failed is the line naming the error, before them. Fixed until it fails on something else, the
    query is debugging; its twin, reworded into the same missing column again, is not."""
    queries = [
        "SELECT name, SUM(quantity) AS units FROM order_items oi JOIN products p ON oi.product_id = p.id",
        "SELECT name, SUM(quantity) AS units FROM order_items oi JOIN products p USING (product_id)",
        "SELECT p.name, SUM(quantity) AS units FROM order_items oi JOIN products p WHERE SUM(quantity) > 9",
    ]
    messages = ["no such column: name", "ambiguous column name: id", "misuse of aggregate: SUM()"]

    def runs(said: list[str]) -> list[Call]:
        return [
            {"tool": "sql_db_query", "args": {"query": q}, "output": _sqlalchemy(m, q), "error": "sql_error"}
            for q, m in zip(queries, said, strict=True)
        ]

    assert trips(RecurringError(), actions(runs(messages))) == [None] * 3
    hit = trips(RecurringError(), actions(runs(["no such column: p.product_name"] * 3)))[-1]
    assert hit is not None


def test_one_error_from_different_calls_counts_since_the_tool_last_answered() -> None:
    """A research agent's fetches refused by one site and another, pages read between: sites that
    refuse, not one failure coming back. Its twins: the same refusals with no page read between
    (a dependency gone dark), and different options clicked, each rejected."""

    def fetch(site: str, error: str | None = None) -> Call:
        output = "HTTP Error 403: Forbidden" if error else f"# {site}: the article, at length"
        return {"tool": "fetch_url", "args": {"url": f"https://{site}/a/1"}, "output": output, "error": error}

    reading = [fetch("statista.com", "http_error"), fetch("arxiv.org"), fetch("nature.com", "http_error")]
    reading += [fetch("medium.com"), fetch("github.com", "http_error"), fetch("who.int")]
    assert trips(RecurringError(), actions(reading)) == [None] * 6
    dark = [call for call in reading if call.get("error")]
    hit = trips(RecurringError(), actions(dark))[-1]
    assert hit is not None and hit.evidence["same"] == "error" and hit.evidence["count"] == 3
    clicks: list[Call] = [{"tool": "click", "args": {"cmd": "click[B07X63DQ2K]"}, "output": "size [5.5]"}]
    clicks += [
        {
            "tool": "click",
            "args": {"cmd": f"click[{size} women]"},
            "output": "Invalid action!",
            "error": "invalid",
        }
        for size in ("11", "12", "12.5")
    ]
    assert trips(RecurringError(), actions(clicks))[-1] is not None


def test_another_tools_failure_counts_until_that_tool_answers() -> None:
    """A household agent told "Nothing happens." by a take, a clean and a put, each done right at
    the next try: every refusal overcome, no recurring error (until 2026-12-06 the put was the third
    of one error). Its twin never gets the take, the clean or the put done: the same error from
    three tools, none answering since, trips at the third."""

    def act(cmd: str, output: str | None = None) -> Call:
        failed = output is None
        said = "Nothing happens." if failed else output
        return {
            "tool": cmd.split()[0],
            "args": {"cmd": cmd},
            "output": said,
            "error": "invalid_action" if failed else None,
        }

    overcome = [
        act("take spatula 1 from countertop 2"),
        act("take spatula 2 from countertop 2", "You pick up the spatula 2 from the countertop 2."),
        act("clean spatula 2 with sinkbasin 1"),
        act("go to sinkbasin 1", "On the sinkbasin 1, you see nothing."),
        act("clean spatula 2 with sinkbasin 1", "You clean the spatula 2 using the sinkbasin 1."),
        act("go to drawer 2", "The drawer 2 is closed."),
        act("put spatula 2 in/on drawer 2"),
        act("open drawer 2", "You open the drawer 2. The drawer 2 is open. In it, you see nothing."),
        act("put spatula 2 in/on drawer 2", "You put the spatula 2 in/on the drawer 2."),
    ]
    assert trips(RecurringError(), actions(overcome)) == [None] * 9
    assert fired(actions(overcome)) == {}  # nor any default detector
    never = [
        act("take spatula 1 from countertop 2"),
        act("go to sinkbasin 1", "On the sinkbasin 1, you see nothing."),
        act("clean spatula 2 with sinkbasin 1"),
        act("go to drawer 2", "The drawer 2 is closed."),
        act("put spatula 2 in/on drawer 2"),
    ]
    hit = trips(RecurringError(), actions(never))[-1]
    assert hit is not None and hit.evidence["same"] == "error" and hit.evidence["count"] == 3
    assert fired(actions(never))["recurring_error"] == 5


def _not_found(query: str, similar: str) -> Call:
    """A ReAct search for ``query`` not found, with the ``similar`` titles it suggests."""
    output = f"Could not find [{query}]. Similar: [{similar}]."
    return {"tool": "search", "args": {"cmd": f"Search[{query}]"}, "output": output, "error": "not_found"}


def test_a_question_keeping_its_subject_and_changing_the_rest_is_reworded() -> None:
    """Real rewordings keep the subject and change the rest: 2 of 5 words shared, then 2 of 5,
    each "not found" with other suggestions. Three searches for related subjects, one word of
    three shared, are three questions."""
    rewording = [
        _not_found("Aunt May actress", "'Aunt May', 'Marisa Tomei'"),
        _not_found("Aunt May Marvel Comics", "'Aunt May', 'Marvel Comics'"),
        _not_found("Aunt May Parker", "'Aunt May', 'Peter Parker'"),
    ]
    hit = trips(RecurringError(), actions(rewording))[-1]
    assert hit is not None and hit.evidence["same"] == "reworded"
    related = [
        _not_found("Noah Cyrus", "'Noah Cyrus discography'"),
        _not_found("Miley Cyrus", "'Miley Cyrus discography'"),
        _not_found("Cyrus family", "'Billy Ray Cyrus'"),
    ]
    assert trips(RecurringError(), actions(related)) == [None] * 3


def test_a_reworded_search_with_a_long_list_of_suggestions_is_still_reworded() -> None:
    """A real HotpotQA run: "Pontotoc County, Oklahoma CBS station", "... CBS affiliate", each not
    found, one with ten suggestions (longer than the failure's end kept). The list's titles are
    no part of what failed: the three fail alike, a reworded retry."""
    many = ", ".join(
        f"'List of killings by law enforcement officers in the United States, {m} 2019'" for m in "ABCDEF"
    )
    rewording = [
        _not_found("Pontotoc County, Oklahoma CBS-affiliated station", "'Oklahoma', 'Douglas Edwards'"),
        _not_found("Pontotoc County, Oklahoma CBS station", f"'Oklahoma', {many}"),
        _not_found("Pontotoc County, Oklahoma CBS affiliate", "'Oklahoma', 'Don Owen (news anchor)'"),
    ]
    hit = trips(RecurringError(), actions(rewording))[-1]
    assert hit is not None and hit.evidence["same"] == "reworded"


def test_a_question_asked_again_comes_back_to_words_an_earlier_one_dropped() -> None:
    """Rewordings of one failing search, each not found with other suggestions: the third keeps
    two of its five words from the second only, the fourth none from the third but all from the
    first. Each rewords the searches before it: a reworded retry at the third."""
    rewording = [
        _not_found("Kate Bush home studio Kent", "'Kate Bush', 'East Wickham Farm', 'Abbey Road Studios'"),
        _not_found("Kate Bush home recording studio", "'Kate Bush discography', 'Home recording'"),
        _not_found("Hounds of Love recording studio", "'Hounds of Love', 'Hounds of Love (song)'"),
        _not_found("Kate Bush studio 1983 Kent", "'Kent', '1983 in music'"),
    ]
    found = trips(RecurringError(), actions(rewording))
    assert found[:2] == [None, None]
    assert all(f is not None and f.evidence["same"] == "reworded" for f in found[2:])
    assert found[3] is not None and found[3].evidence["count"] == 4


def test_a_test_that_passes_between_its_failures_is_no_rerun() -> None:
    """A bisect runs one test at each commit: it fails, passes, fails... the same way each time
    it fails, and what changed between the runs reached it. Failing without a pass between, it
    is a re-run after each edit."""
    test = "python -m pytest tests/test_render.py::test_table_alignment -q"

    def run(passed: bool, step: int) -> list[Call]:
        verdict = "good" if passed else "bad"
        return [
            {
                "tool": "python",
                "args": {"cmd": test},
                "output": f"1 {'passed' if passed else 'failed'} in 0.{20 + step}s",
                "error": None if passed else "returncode 1",
            },
            {
                "tool": "git",
                "args": {"cmd": f"git bisect {verdict}"},
                "output": f"Bisecting: {50 >> step} left",
            },
        ]

    outcomes = [False, True, False, True, True, False, False]
    bisect = [call for step, passed in enumerate(outcomes) for call in run(passed, step)]
    assert trips(RecurringError(), actions(bisect)) == [None] * 14
    edits = [call for step in range(3) for call in run(False, step)]
    assert trips(RecurringError(), actions(edits))[4] is not None


def test_a_success_of_the_tool_between_two_failures_ends_a_retry_chain() -> None:
    """Fail, succeed, fail, fail: two failures in a row, not three."""
    fail: list[Call] = [
        {
            "tool": "search",
            "args": {"cmd": f"Search[Noah Cyrus {w}]"},
            "output": f"Could not find {w}.",  # distinct error texts: only the chain could trip
            "error": "x",
        }
        for w in ("EP", "album", "record")
    ]
    ok: Call = {
        "tool": "search",
        "args": {"cmd": "Search[Noah Cyrus]"},
        "output": "Noah Lindsey Cyrus is a singer",
    }
    # distinct error texts, so only the chain could trip
    fail = [
        {**call, "output": f"Could not find {i}."} for i, call in enumerate(fail) if isinstance(call, dict)
    ]
    calls: list[Call] = [fail[0], ok, fail[1], fail[2]]
    assert trips(RecurringError(), actions(calls)) == [None] * 4
    assert trips(RecurringError(), actions([calls[0], calls[2], calls[3]]))[-1] is not None


def test_a_script_rerun_after_edits_is_judged_by_how_it_fails() -> None:
    """Edit, run, edit, run: failing the same way three times over twice the window is stuck;
    failing differently each time is debugging, however many runs fail."""

    def runs(endings: list[str]) -> list[Call]:
        calls: list[Call] = []
        for i, ending in enumerate(endings):
            calls.append({"tool": "sed", "args": {"cmd": f"sed -i '{i}s/a/b/' x.py"}, "output": ""})
            calls.append(
                {"tool": "cat", "args": {"cmd": f"cat -n x.py | head -{i + 5}"}, "output": "code " * 30}
            )
            calls.append(
                {"tool": "grep", "args": {"cmd": f"grep -n def{i} x.py"}, "output": f"{i}: def f{i}()"}
            )
            calls.append(
                {"tool": "ls", "args": {"cmd": f"ls -la src/{i}"}, "output": f"total {i}\nfile{i}.py"}
            )
            log = f"DEBUG: step {i} value {i * 7}\n" * 3
            calls.append(
                {
                    "tool": "python",
                    "args": {"cmd": "python repro.py"},
                    "output": log + ending,
                    "error": "exit 1",
                }
            )
        return calls

    same = "Traceback (most recent call last):\n  File \"x.py\", line 9, in f\nKeyError: 'backend'"
    found = trips(RecurringError(), actions(runs([same, same.replace("line 9", "line 12"), same])))
    hit = found[-1]
    assert hit is not None and hit.evidence["same"] == "call and error" and hit.evidence["window"] == 20
    assert "was run again and failed the same way 3 times in the last 20 actions" in hit.message
    different = [same, same.replace("'backend'", "'canvas'"), same.replace("KeyError", "TypeError")]
    assert trips(RecurringError(), actions(runs(different))) == [None] * 15


def test_a_malformed_turn_without_arguments_is_no_rerun() -> None:
    """A harness's complaint about a malformed turn, three times over 20 actions, with work between."""
    calls: list[Call] = []
    for i in range(3):
        calls.append(
            {"tool": "(no_command)", "args": {}, "output": "Please give exactly one action.", "error": "fmt"}
        )
        calls += [
            {"tool": "cat", "args": {"cmd": f"cat f{i}{k}.py"}, "output": f"code {i} {k} " * 5}
            for k in range(5)
        ]
    assert trips(RecurringError(), actions(calls)) == [None] * 18


def test_an_error_carrying_volatile_values_is_one_error_as_replay_sees_it() -> None:
    """Live error texts differ in a port, a duration and a timestamp: the same error all the same."""
    calls: list[Call] = [
        {
            "tool": "fetch",
            "args": {"url": f"http://api/items/{n}"},
            "output": None,
            "error": f"ConnectionError: localhost:{port} refused after {secs}s at 2026-12-01T21:0{n}:16Z",
        }
        for n, port, secs in ((1, 54321, "0.4"), (2, 40112, "1.2"), (3, 33007, "0.9"))
    ]
    found = trips(RecurringError(), actions(calls))
    assert found[-1] is not None and found[-1].evidence["same"] == "error"


def test_failing_runs_of_different_test_files_are_no_reworded_retry() -> None:
    """One test file after another fails, each differently: going through the tests; so is one
    test file run with other tests selected, failing alike (its summary line, the counts aside):
    the calls differ only in what they name. Its stuck twin runs one selection again."""

    def run(target: str, i: int) -> Call:
        return {
            "tool": "pytest",
            "args": {"cmd": f"pytest {target} -x"},
            "output": f"FAILED {target} - {('KeyError', 'TypeError', 'ValueError', 'OSError')[i]}: {i}",
            "error": "returncode 1",
        }

    files = ["tests/test_models.py", "tests/test_views.py", "tests/test_forms.py", "tests/test_a1.py"]
    assert trips(RecurringError(), actions(run(f, i) for i, f in enumerate(files))) == [None] * 4
    scripts = [f"python reproduce{n}.py" for n in ("", "2", "_issue", "_min")]
    calls = [{**run("x", i), "tool": "python", "args": {"cmd": s}} for i, s in enumerate(scripts)]
    assert trips(RecurringError(), actions(calls)) == [None] * 4
    selected = [
        "tests/test_collection.py::test_collect_sub_with_symlinks",
        "tests/test_collection.py",
        "tests/test_collection.py::test_collect_init_tests",
    ]
    summary = "=================== {} failed, {} passed in 0.{}s ==================="
    alike = [
        {**run(t, i), "output": summary.format(1 + i % 2, 69 - i, 14 + i)} for i, t in enumerate(selected)
    ]
    assert trips(RecurringError(), actions(alike)) == [None] * 3
    again = [{**run(selected[0], 0), "output": summary.format(1, 69, 14 + i)} for i in range(3)]
    found = trips(RecurringError(), actions(again))
    assert found[:2] == [None, None]
    assert found[2] is not None and found[2].evidence["same"] == "error"


def test_failing_tests_of_one_file_run_one_by_one_are_no_reworded_retry() -> None:
    """Each failing test of a file run on its own, each failing on its assertion: the calls differ
    only in the test they name, going through them. Its stuck twin rewords one search in words."""

    def run(test: str, expected: str) -> Call:
        return {
            "tool": "python",
            "args": {"cmd": f"python -m pytest tests/test_models.py::{test} -x -q"},
            "output": f"FAILED tests/test_models.py::{test} - AssertionError: assert {expected}\n"
            "1 failed in 0.21s",
            "error": "returncode 1",
        }

    tests = [("test_create_user", "1 == 2"), ("test_delete_user", "None"), ("test_rename_user", "'a' == 'b'")]
    assert trips(RecurringError(), actions(run(*t) for t in tests)) == [None] * 3

    def search(query: str) -> Call:
        said = f"No results for '{query}'."
        return {"tool": "search", "args": {"q": query}, "output": said, "error": "not_found"}

    queries = ["user delete permission", "delete user permission denied", "user permission delete api"]
    found = trips(RecurringError(), actions(search(q) for q in queries))
    # Each "No results for '<its query>'" is one error, the echo aside: the same error, reworded or not.
    assert found[2] is not None and found[2].evidence["same"] == "error"


def test_a_test_file_narrowed_by_one_selection_after_another_is_no_reworded_retry() -> None:
    """A test file run whole, then with ``-k compound``, then ``-k "compound or whitespace"``, each
    failing: another selection of tests each time, as a path is another place (until 2026-12-06 the
    third run was a reworded retry). Its stuck twin runs one selection with one flag after another
    (``-v``, ``-x``, ``--tb=short``), failing the same way: the same run reworded."""

    def run(selection: str, flags: str = "-q", failing: str = "compound") -> Call:
        failed = "\n".join(
            f"FAILED tests/test_parse.py::test_{name} - DurationError" for name in failing.split()
        )
        return {
            "tool": "python",
            "args": {"cmd": f"python -m pytest tests/test_parse.py {flags} {selection}".strip()},
            "output": f"FFF.F\n{failed}\n{len(failing.split())} failed, 2 passed in 0.07s",
            "error": "returncode 1",
        }

    narrowed = [
        run("", failing="compound whitespace uppercase negative iso"),
        run("-k compound"),
        run('-k "compound or whitespace or uppercase"', "--tb=short", "compound whitespace uppercase"),
    ]
    assert trips(RecurringError(), actions(narrowed)) == [None] * 3
    flags = [run("-k compound", flag) for flag in ("-v", "-x", "--tb=short")]
    hit = trips(RecurringError(), actions(flags))[-1]
    assert hit is not None and hit.evidence["same"] in {"reworded", "error"}


def test_a_malformed_turn_answered_by_good_turns_is_no_recurring_error() -> None:
    """The harness's "exactly one action" complaint three times in ten actions, the agent back
    at work after each: nothing recurs. Six complaints back to back (N + 3) are a repeat."""
    complaint: Call = {
        "tool": "(no_command)",
        "args": {},
        "output": "Please always provide EXACTLY ONE action in triple backticks, found 2 actions.",
        "error": "format_error",
    }
    calls: list[Call] = []
    for i in range(3):
        calls.append(complaint)
        calls += [
            {"tool": "grep", "args": {"cmd": f"grep -n f{i}{k} x.py"}, "output": f"{i}{k}: x"} for k in (1, 2)
        ]
    assert trips(RecurringError(), actions(calls)) == [None] * 9
    assert fired(actions(calls)) == {}
    assert fired(actions([complaint] * 5)) == {}
    assert fired(actions([complaint] * 6)) == {"repeat": 6}


def _grep(word: str, path: str = "lib/legend.py") -> Call:
    """A grep that finds nothing: exit 1, no output."""
    return {"tool": "grep", "args": {"cmd": f"grep -n {word} {path}"}, "output": "", "error": "returncode 1"}


_WORDS = ("canvas", "getstate", "reduce", "connect", "cids", "pickle", "draggable", "figure", "mpl")


def test_a_tool_gone_dark_whatever_it_asks_trips_at_n_plus_three() -> None:
    """Grep after grep in one file, each for something else, none finding anything: the tool is dark."""
    opened: Call = {"tool": "nl", "args": {"cmd": "nl -ba lib/legend.py"}, "output": "53 class Legend: ..."}
    found = trips(RecurringError(), actions([opened, *(_grep(word) for word in _WORDS[:7])]))
    assert found[:6] == [None] * 6
    hit = found[6]
    assert hit is not None and hit.evidence["same"] == "silent" and hit.evidence["count"] == 6
    assert hit.message.startswith("6 calls to grep in the last 10 actions failed with nothing to show")


def test_a_few_symbols_not_found_before_one_is_are_searching() -> None:
    """Five greps finding nothing, then one that finds: looking for a few things that are not there."""
    hit: Call = {"tool": "grep", "args": {"cmd": "grep -n mpl_connect lib/legend.py"}, "output": "88: cid ="}
    calls = [*(_grep(word) for word in _WORDS[:5]), hit, *(_grep(word) for word in _WORDS[5:9])]
    assert trips(RecurringError(), actions(calls)) == [None] * 10


def test_other_tools_between_do_not_light_a_dark_tool_but_its_answer_does() -> None:
    """Reads between the greps leave them dark; only the tool's own answer counts as one."""
    read: Call = {"tool": "nl", "args": {"cmd": "nl -ba lib/legend.py"}, "output": "53 class Legend: ..."}
    greps = [_grep(word) for word in _WORDS[:6]]
    between = [greps[0], greps[1], read, greps[2], greps[3], read, greps[4], greps[5]]
    assert trips(RecurringError(), actions(between))[-1] is not None
    answered: Call = {"tool": "grep", "args": {"cmd": "grep -n Legend lib/legend.py"}, "output": "53: Legend"}
    lit = [greps[0], greps[1], greps[2], answered, greps[3], greps[4], greps[5]]
    assert trips(RecurringError(), actions(lit)) == [None] * 7


_GONE = "OCI runtime exec failed: unable to start container process: container 7c41 is not running"
_SHELL = ["ls", "cat src/app.py", "pwd", "pytest -q", "echo hi", "git status", "python -c 'print(1)'", "id"]


def _run(cmd: str, error: str | None = _GONE, output: str = "") -> Call:
    return {"tool": cmd.split()[0], "args": {"cmd": cmd}, "output": output, "error": error}


def test_a_shell_gone_dark_fails_every_program_alike_and_trips_at_n_plus_three() -> None:
    """A sandbox gone: ``ls``, ``cat``, ``pwd``, ``pytest``... each fail with the same error and
    nothing to show, back to back: the sixth trips, naming the tools. Each program fails once or
    twice only, so no one tool has gone dark by itself."""
    read = _run("sed -n 1,40p src/app.py", None, "def main():\n    return run()")
    found = trips(RecurringError(), actions([read, *map(_run, _SHELL)]))
    assert found[:6] == [None] * 6
    hit = found[6]
    assert hit is not None and hit.evidence["same"] == "silent" and hit.evidence["count"] == 6
    assert hit.message.startswith("the last 6 calls, to 6 tools, failed alike with nothing to show")


def test_programs_failing_differently_or_answering_between_are_no_shell_gone_dark() -> None:
    """Different programs each failing with nothing to show but a different error (a missing file,
    a usage error, an exit code), or the same error with a success between every few: a working
    agent's probes, no dark shell."""
    errors = ["returncode 1", "returncode 2", "No such file or directory", "returncode 127", "usage", "x"]
    different = [_run(cmd, error) for cmd, error in zip(_SHELL, errors, strict=False)]
    assert trips(RecurringError(), actions(different)) == [None] * 6
    answered = _run("ls src", None, "app.py  cli.py  util.py")
    lit = [*map(_run, _SHELL[:4]), answered, *map(_run, _SHELL[4:8])]
    assert trips(RecurringError(), actions(lit)) == [None] * 9


def test_failures_that_say_what_failed_are_no_dark_tool() -> None:
    """Six different failures, each with an output that says what failed, and each a different
    failure: debugging, not a dark tool."""
    endings = ("ModuleNotFoundError: No module named", "ImportError: cannot import name", "KeyError:")
    endings += (
        "AttributeError: type object has no attribute",
        "TypeError: bad operand",
        "OSError: [Errno 2]",
    )
    probes = [import_probe(name, ending) for name, ending in zip(_WORDS, endings, strict=False)]
    assert trips(RecurringError(), actions(probes)) == [None] * 6


def test_probes_each_told_that_what_they_asked_for_is_missing_are_no_rewording() -> None:
    """``python -c "import scipy"``, then ``cftime``, then ``bottleneck``, each "No module named
    '<it>'": one word changed each time and each failure names back its own, so each asks about
    another thing (which optional modules are installed). The same failure that does not name
    the changed word back, three times in a row, is one error recurring."""
    probes = [import_probe(name, tool="bash") for name in ("scipy", "cftime", "bottleneck")]
    assert trips(RecurringError(), actions(probes)) == [None] * 3
    unnamed = [
        {**probe, "output": "Traceback (most recent call last):\nImportError: DLL load failed"}
        for probe in probes
    ]
    assert trips(RecurringError(), actions(unnamed))[-1] is not None


def _lookup(title: str) -> Call:
    similar = ", ".join(f"'{title} ({i})'" for i in range(len(title) % 4 + 1))
    error = f"Could not find [{title}]. Similar: [{similar}]"
    return {"tool": "search", "args": {"query": title}, "output": None, "error": error}


_TITLES = ("Is Google Making Us Stupid?", "The Shallows (book)", "The Shallows", "Nicholas G. Carr")
_TITLES += ("Nicholas Carr", "The Big Switch", "The Glass Cage")


def test_a_tool_failing_alike_whatever_it_is_asked_has_gone_dark_at_n_plus_three() -> None:
    """A search answering "Could not find [X]. Similar: [...]" to every title asked of it, each
    failure saying the same thing but for the title it echoes and the suggestions: the sixth in a
    row trips as a tool gone dark, though no two calls reword each other; so do six probes each
    failing with "No module named" whatever module they ask for."""
    found = trips(RecurringError(), actions([_lookup(title) for title in _TITLES[:6]]))
    assert found[:5] == [None] * 5
    hit = found[5]
    assert hit is not None and hit.evidence["same"] == "alike" and hit.evidence["count"] == 6
    assert hit.message.startswith("6 calls to search in a row failed alike (Could not find [The Big Switch]")
    probes = [import_probe(name) for name in _WORDS[:6]]
    assert trips(RecurringError(), actions(probes))[5] is not None


def test_a_tool_that_answers_or_is_asked_one_thing_again_is_no_dark_tool_by_failing_alike() -> None:
    """Five titles not found and then one found, before the next misses: searching. One call
    retried through a rate limit with waits between, failing alike six times: two things asked,
    the re-run rules' to judge, no dark tool."""
    found: Call = {"tool": "search", "args": {"query": "Nicholas Carr"}, "output": "Nicholas G. Carr is..."}
    searching = [_lookup(t) for t in _TITLES[:5]] + [found] + [_lookup(t) for t in _TITLES[:5]]
    assert trips(RecurringError(), actions(searching)) == [None] * 11
    limited: Call = {
        "tool": "fetch",
        "args": {"url": "https://api.example.org/v1/stats"},
        "error": "HTTP 403: rate limit",
    }
    wait: Call = {"tool": "sleep", "args": {"seconds": 60}, "output": "slept 60s"}
    other: Call = {
        "tool": "fetch",
        "args": {"url": "https://api.example.org/v1/users"},
        "error": "HTTP 403: rate limit",
    }
    backing_off = [limited, wait, limited, wait, other, wait, limited, wait, other, wait, limited]
    assert all(
        hit is None or hit.evidence["same"] != "alike"
        for hit in trips(RecurringError(), actions(backing_off))
    )


def test_a_search_relaxed_as_it_moves_from_folder_to_folder_is_no_reworded_retry() -> None:
    """``grep`` for a warning's words in one folder after another, dropping a word now and then,
    finds nothing four times and then finds it: exploring. The same words reworded in one folder,
    each finding nothing, is the same search asked again."""
    places = [
        ('"did not parse as fits unit"', "astropy/"),
        ('"did not parse as"', "astropy/io/fits/"),
        ('"did not parse"', "astropy/table/"),
        ('"did not parse"', "astropy/io/votable/ astropy/io/ascii/"),
    ]
    calls: list[Call] = [
        {"tool": "grep", "args": {"cmd": f"grep -rn {q} {p}"}, "output": "", "error": "returncode 1"}
        for q, p in places
    ]
    assert trips(RecurringError(), actions(calls)) == [None] * 4
    one_folder = [
        {**c, "args": {"cmd": f"grep -rn {q} astropy/io/fits/"}}
        for c, (q, _) in zip(calls, places, strict=True)
    ]
    found = trips(RecurringError(), actions(one_folder))
    assert found[:2] == [None, None] and found[2] is not None and found[2].evidence["same"] == "reworded"


def test_a_failing_test_rerun_with_only_reads_between_counts_over_three_windows() -> None:
    """An agent re-reading the code it never edits and re-running the failing test every eleventh
    action: never three runs within twice the window, but nothing changed between them, so the
    third, 22 actions after the first, is a re-run. An edit, an install or a wait between the runs
    is a change: the same runs are then judged over twice the window only."""
    test = "python -m pytest tests/test_routines.py -k diff_prepend"

    def runs(between: Call | None) -> list[Call]:
        calls: list[Call] = []
        for i in range(3):
            calls.append(
                {"tool": "python", "args": {"cmd": test}, "output": "FFF\n3 failed", "error": "exit 1"}
            )
            if i < 2:
                for n in range(10 if between is None else 9):
                    calls.append(
                        {"tool": "nl", "args": {"cmd": f"nl -ba src/r{n}.py"}, "output": f"{n} code " * 30}
                    )
                if between is not None:
                    calls.append(between)
        return calls

    found = trips(RecurringError(), actions(runs(None)))
    assert found[:-1] == [None] * 22
    hit = found[-1]
    assert hit is not None and hit.evidence["window"] == 30 and hit.evidence["count"] == 3
    assert "with nothing written, done or waited for between the runs" in hit.message
    edit: Call = {"tool": "sed", "args": {"cmd": "sed -i 's/a/b/' src/r.py"}, "output": ""}
    install: Call = {
        "tool": "pip",
        "args": {"cmd": "pip install numpy==1.26"},
        "output": "Successfully installed",
    }
    wait: Call = {"tool": "sleep", "args": {"seconds": 30}, "output": ""}
    for change in (edit, install, wait):
        assert trips(RecurringError(), actions(runs(change))) == [None] * 23
    # A Monitor steps this tracker on the failures alone, told of the changes by the successes.
    for change, expected in ((None, True), (edit, False), (wait, False)):
        monitor = Monitor()
        monitor.start_tick(1)
        kinds = [
            monitor.record(c["tool"], c["args"], output=c.get("output"), error=c.get("error"), now=T0)
            for c in runs(change)
        ]
        assert (kinds[-1] is not None and kinds[-1].kind == "recurring_error") is expected


def _rate_limited(tries: int, waits: bool) -> list[Call]:
    """A record fetched through a rate limit: ``tries`` refusals (each followed by a sleep twice as
    long as the one before, if ``waits``), then the record, and the next ones fetched at once."""
    refused = "429 Too Many Requests: rate limit exceeded, retry after 2s"
    calls: list[Call] = []
    for n in range(3):
        rid = {"resource": f"cust_{n:04d}"}
        for k in range(tries if n == 1 else 0):
            calls.append({"tool": "crm.get", "args": rid, "error": refused})
            if waits:
                calls.append({"tool": "sleep", "args": {"seconds": 2**k}, "output": ""})
        calls.append({"tool": "crm.get", "args": rid, "output": '{"tier": "gold"}'})
        calls.append({"tool": "warehouse.upsert", "args": {"id": rid["resource"]}, "output": "ok"})
    return calls


def test_a_call_retried_after_waits_through_a_rate_limit_is_backing_off() -> None:
    """Refused three times, each retry after a longer sleep, then answered: backing off, as a rate
    limit asks (live round 46: a worker storing every record was escalated). Retried at once, the
    same refusals are the same error again; backing off for ever is a tool gone dark."""
    assert fired(actions(_rate_limited(3, waits=True))) == {}
    assert "recurring_error" in fired(actions(_rate_limited(3, waits=False)))
    forever = [call for call in _rate_limited(8, waits=True) if call["tool"] != "warehouse.upsert"][:16]
    assert "recurring_error" in fired(actions(forever))


def test_the_same_call_its_time_moved_on_failing_the_same_way_is_a_rerun() -> None:
    """A digest reads its busy channel since its last wake-up each hour and is rate-limited each
    time, other channels answering between: the same call failing again, its cursor moved on
    (until 2026-12-06 a new call each hour, never flagged). Calls naming other things fail anew."""

    def hour(h: int, channel: str = "C00INC") -> list[Call]:
        since = f"{1796464800 + 3600 * h}.000000"
        return [
            {"tool": "slack.history", "args": {"channel": "C01", "oldest": since}, "output": "[]"},
            {
                "tool": "slack.history",
                "args": {"channel": channel, "oldest": since},
                "output": "",
                "error": f"SlackApiError: ratelimited (HTTP 429, x-slack-req-id: {h:032x})",
            },
            {"tool": "slack.post", "args": {"text": f"digest {h}"}, "output": '{"ok": true}'},
        ]

    same = [call for h in range(4) for call in hour(h)]
    found = trips(RecurringError(), actions(same))
    assert [i for i, a in enumerate(found, 1) if a is not None][:1] == [8]
    others = [call for h in range(4) for call in hour(h, f"C0{h}X")]
    assert trips(RecurringError(), actions(others)) == [None] * len(others)


def test_a_function_probed_with_other_values_is_no_reworded_retry() -> None:
    """``python -c`` probes of one function, each fed another value and failing with the same
    exception (blind batch 63: webcolors's ``hex_to_rgb`` fed ``'09c'``, ``'#09c '``, ``'#0g9'``),
    ask the program other things: no finding. The same probe run again and again still is one, as
    are probes whose code is reworded (see the test above)."""
    values = ["'09c'", "'#09c '", "'#0g9'", "'#12'"]
    probes: list[Call] = [
        {
            "tool": "python",
            "args": {"cmd": f'python -c "import webcolors; print(webcolors.hex_to_rgb({v}))"'},
            "output": f"Traceback (most recent call last):\n  ...\nValueError: {v} is not a valid hex color",
            "error": "returncode 1",
        }
        for v in values
    ]
    assert trips(RecurringError(), actions(probes)) == [None] * 4
    node = [
        {**c, "args": {"cmd": f"node -e \"require('./hex').toRgb({v})\""}}
        for c, v in zip(probes, values, strict=True)
    ]
    assert trips(RecurringError(), actions(node)) == [None] * 4
    rerun = [probes[0]] * 3
    assert trips(RecurringError(), actions(rerun))[-1] is not None
    # A value added is other code: load(), load(path), load(path, 3), failing alike, are judged
    grown = [
        {**c, "args": {"cmd": f"python -c 'import m; m.load({a})'"}, "output": "ValueError: bad header"}
        for c, a in zip(probes, ["", "path", "path, 3"], strict=False)
    ]
    assert trips(RecurringError(), actions(grown))[-1] is not None
