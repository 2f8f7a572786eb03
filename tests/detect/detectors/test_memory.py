"""The agent's own memory: what a read reads back, what a write stores back (``memory``)."""

from __future__ import annotations

import pytest

from heartbeat.detect.detectors import summarize
from heartbeat.detect.detectors.memory import keeps_place, reads_back, written_back


def test_a_read_of_what_a_write_stored_reads_it_back() -> None:
    """A cursor read back: the tools name the same thing and the read's arguments are the write's."""
    read = ("state.get", summarize("state.get", {"key": "issues_since"}))
    wrote = ("state.set", summarize("state.set", {"key": "issues_since", "value": "2025-06-01T08:11:04Z"}))
    assert reads_back(read, [wrote])
    other_key = ("state.set", summarize("state.set", {"key": "labels_since", "value": "x"}))
    assert not reads_back(read, [other_key])
    other_store = ("queue.put", summarize("queue.put", {"key": "issues_since", "value": "x"}))
    assert not reads_back(read, [other_store])
    assert not reads_back(("state.get", "state.get()"), [wrote])  # a read of nothing named
    cut = ("state.set", summarize("state.set", {"key": "issues_since", "value": "x" * 300}))
    assert not reads_back(read, [cut])  # a summary cut short holds no arguments to compare
    assert reads_back(read, [other_store, other_key, wrote])  # any of them


def test_a_write_of_the_thing_a_read_reads_stores_its_one_argument_beyond() -> None:
    """``redis.set(key=k, value=v)`` after ``redis.get(key=k)`` stores ``v``; another key, another
    thing, or more than one value beyond the read's arguments stores nothing known."""
    read = ("redis.get", summarize("redis.get", {"key": "cursor"}))

    def write(tool: str, args: dict[str, object]) -> tuple[str, str]:
        return tool, summarize(tool, args)

    assert written_back(read, write("redis.set", {"key": "cursor", "value": "evt_9"})) == "evt_9"
    assert written_back(read, write("redis.set", {"key": "other", "value": "evt_9"})) is None
    assert written_back(read, write("state.set", {"key": "cursor", "value": "evt_9"})) is None
    assert written_back(read, write("redis.set", {"key": "cursor", "value": "evt_9", "ttl": "1h"})) is None
    assert written_back(read, write("redis.set", {"key": "cursor", "value": 9})) is None


@pytest.mark.parametrize(
    ("tool", "keeps"),
    [
        ("state.set", True),
        ("save_cursor", True),
        ("checkpoint.put", True),
        ("kafka.commit_offset", True),
        ("set_watermark", True),
        ("state.get", False),  # reads it
        ("memory.save", False),  # a note saved again is a thought had again
        ("redis.set", False),  # a store of anything: no place named
        ("jira.update_issue", False),
    ],
)
def test_a_store_named_for_where_the_agent_is_keeps_its_place(tool: str, keeps: bool) -> None:
    assert keeps_place(tool) is keeps
