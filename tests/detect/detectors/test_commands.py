"""What a command a call carries does: a bisect's step."""

from __future__ import annotations

import pytest

from heartbeat.detect.detectors import summarize
from heartbeat.detect.detectors.commands import copies_sql, steps_bisect


@pytest.mark.parametrize(
    ("tool", "args", "steps"),
    [
        ("bash", {"command": "git bisect good"}, True),
        ("bash", {"command": "cd /src/linux && git bisect bad 4f2a9c1"}, True),
        ("execute_bash", {"command": "git bisect skip"}, True),
        ("git", {"cmd": "git bisect new"}, True),
        ("git_bisect", {"cmd": "good"}, True),  # the program and the tool's name: git bisect good
        ("run_git", {"args": "bisect bad"}, True),
        ("git_bisect", {"cmd": "start v2.1.0 v2.0.0"}, True),  # between two: the middle checked out
        ("bash", {"command": "git bisect start"}, False),  # nothing checked out yet
        # What only reads the bisect, or no bisect at all.
        ("bash", {"command": "git bisect log"}, False),
        ("bash", {"command": "git bisect visualize --oneline"}, False),
        ("git_bisect", {"cmd": "log"}, False),
        ("python", {"cmd": "python -c 'import bisect; print(bisect.bisect_left([1, 2], 2))'"}, False),
        ("search", {"q": "git bisect good bad"}, False),
    ],
)
def test_a_bisect_step_is_read_where_a_call_carries_it(
    tool: str, args: dict[str, object], steps: bool
) -> None:
    """``steps_bisect`` reads ``git bisect good|bad|skip`` in a command, a shell's call or a tool
    named for git: each checks out the next commit. Its log, or a search's words, check out none."""
    assert steps_bisect(tool, summarize(tool, args)) is steps


@pytest.mark.parametrize(
    ("sql", "copies"),
    [
        ("INSERT INTO dw.orders SELECT * FROM src.orders WHERE updated_at > now() - interval '1 hour'", True),
        ("insert into archive (id, body) select id, body from inbox where done", True),
        ("MERGE INTO dim_customer USING staging ON dim_customer.id = staging.id", True),
        ("INSERT INTO orders (id, status) VALUES (7, 'new')", False),  # a row of its own: no copy
        ("UPDATE orders SET status = 'refunded' WHERE order_number = '10293'", False),
        ("DELETE FROM sessions WHERE expires < now()", False),
        ("SELECT * FROM orders", False),
    ],
)
def test_a_sql_write_that_copies_a_querys_rows_is_a_sync(sql: str, copies: bool) -> None:
    """``INSERT INTO ... SELECT`` and ``MERGE`` copy what a query finds: a sync, whose "no row" is
    nothing new; an insert of its own values, an update and a delete are not."""
    assert copies_sql(summarize("run_sql", {"sql": sql})) is copies
    assert not copies_sql(summarize("run_sql", {"note": sql}))  # no argument named for SQL
