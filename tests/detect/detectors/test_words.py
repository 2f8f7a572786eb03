"""Words: what a call or a failure says, and the failure key that keeps it as digests."""

from __future__ import annotations

from heartbeat.detect.detectors import prints
from heartbeat.detect.detectors.words import failure_words, unbracketed, word_print, words


def test_a_path_a_file_name_and_a_snake_case_name_are_one_word_each() -> None:
    """words keeps what names one thing whole, and still drops argument names, flags and numbers."""
    assert words("pytest", 'pytest({"cmd": "pytest -x tests/test_a1.py::test_parse_ok"})') == {
        "tests/test_a1.py",
        "test_parse_ok",
    }
    assert words("search", 'search({"query": "the EP by Noah Cyrus 2020"})') == {
        "the",
        "ep",
        "by",
        "noah",
        "cyrus",
    }


def _failed(end: str, *, line: int = 3) -> str | None:
    output = f'Traceback (most recent call last):\n  File "probe.py", line {line}, in <module>\n{end}'
    return prints("python", {"cmd": "python probe.py"}, output, "returncode 1").failure


def test_a_failure_key_is_the_digests_of_what_the_failure_says() -> None:
    """The label and the line naming the exception, as 4-hex-digit digests of their words: the
    same failure at another line is one key, another exception another key, no failure none."""
    key = _failed("KeyError: 'customer_id'")
    assert key == failure_words("returncode 1\nKeyError: 'customer_id'")
    assert key is not None and set(key.split()) == {
        word_print(w) for w in ("returncode", "keyerror", "customer", "id")
    }
    assert _failed("KeyError: 'customer_id'", line=41) == key
    assert _failed("TypeError: 'NoneType' object is not subscriptable") != key
    assert prints("python", {"cmd": "python probe.py"}, "3 passed").failure is None


def test_the_line_naming_the_error_is_read_wherever_it_is() -> None:
    """SQLAlchemy names the error first, then the query and a link every failure shares."""
    output = (
        "Error: (sqlite3.OperationalError) no such column: o.cancelled\n"
        "[SQL: SELECT AVG(o.cancelled) FROM orders o]\n"
        "(Background on this error at: https://sqlalche.me/e/20/e3q8)"
    )
    key = prints(
        "sql_db_query", {"query": "SELECT AVG(o.cancelled) FROM orders o"}, output, "sql_error"
    ).failure
    assert key == failure_words("sql_error\nError: (sqlite3.OperationalError) no such column: o.cancelled")


def test_a_later_line_merely_holding_an_ending_does_not_name_the_error() -> None:
    """ "Errors" and "Exits" name no exception: the line before, which does, is what failed."""
    output = "Traceback (most recent call last):\nValueError: bad header\n3 Errors, 2 Exits in the log"
    key = prints("python", {"cmd": "python probe.py"}, output, "returncode 1").failure
    assert key == failure_words("returncode 1\nValueError: bad header")


def test_only_the_end_of_a_long_output_is_searched_for_the_line_naming_the_error() -> None:
    """A failure names itself near its end: a name 6,000 characters up is not read (the work stays
    bounded, whatever the output), and how the output ends says what failed."""
    tail = "\n".join(f"step {i} done" for i in range(500))
    far = prints("sh", {"cmd": "./build.sh"}, f"ValueError: far away\n{tail}", "returncode 2").failure
    none = prints("sh", {"cmd": "./build.sh"}, f"starting\n{tail}", "returncode 2").failure
    near = prints("sh", {"cmd": "./build.sh"}, f"{tail}\nValueError: near", "returncode 2").failure
    assert far == none != near


def test_what_stands_in_brackets_is_no_word_of_a_failure() -> None:
    """Suggestions, a test's parameters and a log line's tags say which data, not what failed:
    two searches not found with other suggestions say the same failure; another failure does not."""
    first = failure_words("not_found\nCould not find [Kate Bush studio]. Similar: ['Kate Bush', 'Kent'].")
    again = failure_words(
        "not_found\nCould not find [studio Kent]. Similar: ['Hounds of Love', '1983 in music']."
    )
    assert first == again == failure_words("not_found\nCould not find . Similar: .")
    assert failure_words("FAILED tests/a.py::test_x[case-1] - [Errno 2] No such file") == failure_words(
        "FAILED tests/a.py::test_x[case-2] - [Errno 2] No such file"
    )
    assert failure_words("not_found\nNo more results.") != first


def test_a_list_longer_than_the_end_kept_still_leaves_what_failed() -> None:
    """A failure's end is its last 200 characters: a list of suggestions longer than that used to
    push "Could not find" out of it and count the list's titles as what failed. Its brackets are
    taken out before the cut, and one cut open or left open on a line is a span all the same."""
    titles = ", ".join(f"'List of communities served by provider {n} in the United States'" for n in range(6))
    long = prints("search", {"cmd": "Search[X]"}, f"Could not find [X]. Similar: [{titles}]", "not_found")
    short = prints("search", {"cmd": "Search[Y]"}, "Could not find [Y]. Similar: ['Y (film)']", "not_found")
    assert long.failure == short.failure == failure_words("not_found\nCould not find . Similar: .")
    assert unbracketed("ed States', 'Oklahoma']. Done") == ". Done"
    assert unbracketed("Similar: ['Oklahoma', 'Asher") == "Similar: "
    assert unbracketed("a [b [c] d] e") == "a   e"
    # One pass over the brackets, not one per level of nesting.
    assert unbracketed("[" * 20_000 + "deep" + "]" * 20_000 + " after") == "  after"


def test_a_test_runners_selection_by_name_is_one_place() -> None:
    """``-k EXPR`` of pytest or unittest, quoted or not, names the tests asked about: one word with
    a ``/`` (a place, see ``reworded``); another command's ``-k`` is a flag like any other."""
    assert words("python", 'python({"cmd":"python -m pytest t.py -k \\"a or b_c\\" -q"})') == {
        "pytest",
        "t.py",
        "-k/a or b_c",
    }
    assert "-k/iso_year" in words("pytest", 'pytest({"cmd":"pytest -q -k=iso_year"})')
    assert not any(w.startswith("-k/") for w in words("sort", 'sort({"cmd":"sort -k 2 data.txt"})'))
