"""Tests of heartbeat.state.store: the lock, loading (corrupt, newer, migrated files) and atomic saves."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import random
import signal
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import _crashers
import pytest
from conftest import mode
from hypothesis import example, given, settings
from hypothesis import strategies as st

from heartbeat.base.errors import (
    StateCorrupt,
    StateLocked,
    StateUnsavable,
    StateVersionError,
    StateWriteError,
)
from heartbeat.base.fsutil import temp_pattern
from heartbeat.base.kept_data import mask_data
from heartbeat.core.models import (
    ANOMALY_LIMIT,
    HISTORY_LIMIT,
    PROGRESS_LIMIT,
    SCHEMA_VERSION,
    TEXT_LIMIT,
    ActionRecord,
    AgentState,
    Anomaly,
    BudgetCounters,
    Escalation,
    ProgressSample,
    Recovery,
    RecoveryMode,
    Status,
    append_bounded,
    clip,
)
from heartbeat.state.store import (
    MIGRATIONS,
    Migration,
    MigrationError,
    StateStore,
    check_migrations,
    migrate,
    state_schema,
)

NOW = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
STAMP = "20240506T070809123456Z"


def fixed_clock() -> datetime:
    """The clock of these tests: always NOW."""
    return NOW


@pytest.fixture
def store(tmp_path: Path) -> StateStore:
    """A store on a fresh state folder, with a fixed clock for predictable copy names."""
    return StateStore(tmp_path / "state", clock=fixed_clock)


def names(folder: Path) -> list[str]:
    """The sorted names in ``folder``."""
    return sorted(p.name for p in folder.iterdir())


def write_state_file(store: StateStore, content: bytes) -> None:
    """Put ``content`` in place as state.json, as a crash or a human might have left it."""
    store.state_dir.mkdir(parents=True, exist_ok=True)
    store.state_path.write_bytes(content)


def action(index: int, *, error: str | None = None) -> ActionRecord:
    """A realistic recorded action: long arguments, a hash fingerprint, a clipped summary."""
    args = {"q": f"query number {index} about a long research topic " * 4, "page": index % 7}
    summary = clip(f"search({json.dumps(args, sort_keys=True)})", TEXT_LIMIT)
    return ActionRecord(
        index=index,
        tick=index // 5,
        at=NOW + timedelta(seconds=index),
        tool="search",
        fingerprint=hashlib.sha256(json.dumps(args, sort_keys=True).encode()).hexdigest(),
        summary=summary or "",
        output_len=index % 300,
        error=clip(error, TEXT_LIMIT),
        cost=0.0025,
    )


# ---------------------------------------------------------------- paths and the lock


def test_paths_are_the_documented_files(tmp_path: Path) -> None:
    """Every file of the state folder has the name the README's "The state folder" gives it."""
    store = StateStore(tmp_path)
    assert store.state_dir == tmp_path
    assert store.state_path == tmp_path / "state.json"
    assert store.lock_path == tmp_path / ".lock"
    assert store.journal_path == tmp_path / "journal.jsonl"
    assert store.outbox_dir == tmp_path / "outbox"
    assert store.escalation_path == tmp_path / "ESCALATION.md"


def test_lock_creates_a_private_folder_and_lock_file(store: StateStore, open_umask: None) -> None:
    """Taking the lock creates the state folder 0700 and the lock file 0600, even under umask 0."""
    with store.lock() as held:
        assert held is store
        assert store.locked
        assert mode(store.state_dir) == 0o700
        assert mode(store.lock_path) == 0o600
    assert not store.locked


def test_lock_leaves_an_existing_folder_mode_alone(store: StateStore) -> None:
    """A state folder the user created with another mode keeps it."""
    store.state_dir.mkdir()
    store.state_dir.chmod(0o750)
    with store.lock():
        pass
    assert mode(store.state_dir) == 0o750


def test_lock_is_not_reentrant_in_one_process(store: StateStore) -> None:
    """A second lock while the first is held fails at once, even through the same store."""
    with store.lock():
        with pytest.raises(StateLocked) as caught, store.lock():
            pass
        with pytest.raises(StateLocked), StateStore(store.state_dir).lock():
            pass
        assert store.locked
    err = caught.value
    assert isinstance(caught.value, TimeoutError)
    assert err.exit_code == 5
    assert err.lock_path == store.lock_path
    assert "another heartbeat holds the lock" in str(err)


def test_lock_is_free_again_after_the_block(store: StateStore) -> None:
    """Leaving the with block releases the lock, also when the block raised."""
    with pytest.raises(RuntimeError), store.lock():
        raise RuntimeError("step failed")
    with StateStore(store.state_dir).lock():
        pass


def test_lock_never_touches_state_json(store: StateStore) -> None:
    """The lock is a sidecar file; state.json is not created or opened by locking."""
    with store.lock():
        assert names(store.state_dir) == [".lock"]


def test_two_processes_racing_for_the_lock_one_wins_one_is_refused_at_once(tmp_path: Path) -> None:
    """Two processes released together: exactly one holds the lock, the other gets StateLocked at once."""
    ctx = _crashers.forkserver_context()
    start = ctx.Barrier(2)
    release = ctx.Event()
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_crashers.take_lock_and_wait, args=(str(tmp_path), start, results, release))
        for _ in range(2)
    ]
    for proc in procs:
        proc.start()
    try:
        outcomes = sorted(results.get(timeout=30) for _ in procs)
    finally:
        release.set()
        for proc in procs:
            proc.join(30)
    assert [kind for kind, _ in outcomes] == ["locked", "won"]
    refused_after = outcomes[0][1]
    assert refused_after < 0.5
    assert [proc.exitcode for proc in procs] == [0, 0]


def test_a_sigkilled_holder_frees_the_lock_at_once(tmp_path: Path) -> None:
    """The kernel drops a SIGKILLed holder's lock: the next taker succeeds without waiting."""
    ctx = _crashers.forkserver_context()
    holding = ctx.Event()
    holder = ctx.Process(target=_crashers.hold_lock_until_killed, args=(str(tmp_path), holding))
    holder.start()
    try:
        assert holding.wait(30)
        with pytest.raises(StateLocked), StateStore(tmp_path).lock():
            pass
    finally:
        os.kill(holder.pid, signal.SIGKILL)  # type: ignore[arg-type]
        holder.join(30)
    assert holder.exitcode == -signal.SIGKILL
    with StateStore(tmp_path).lock(timeout=0):
        assert (tmp_path / ".lock").exists()


# ---------------------------------------------------------------- load and save


def test_load_of_a_missing_file_is_a_fresh_state_and_writes_nothing(store: StateStore) -> None:
    """No state.json yet means a fresh default state; loading does not create any file."""
    assert store.load() == AgentState()
    assert not store.state_dir.exists()


def test_save_writes_indented_private_json(store: StateStore, open_umask: None) -> None:
    """The saved file is 0600, indented by two spaces, ends in a newline and holds the state."""
    state = AgentState(ticks=3, data={"sources": ["a", "b"]}, status=Status.PAUSED)
    with store.lock():
        store.save(state)
    text = store.state_path.read_text(encoding="utf-8")
    assert text.startswith(f'{{\n  "schema_version": {SCHEMA_VERSION},\n')
    assert text.endswith("}\n")
    assert json.loads(text) == state.model_dump(mode="json")
    assert mode(store.state_path) == 0o600
    assert store.load() == state


def test_save_without_a_folder_creates_it_private(store: StateStore, open_umask: None) -> None:
    """Saving into a missing state folder creates it 0700."""
    store.save(AgentState())
    assert mode(store.state_dir) == 0o700
    assert mode(store.state_path) == 0o600


def test_save_under_the_lock_removes_a_crashed_writers_temp(store: StateStore) -> None:
    """A temp file left by a killed writer is removed by the next save under the lock."""
    write_state_file(store, b"")
    stale = store.state_dir / ".state.json.k1ll3d.tmp"
    stale.write_bytes(b'{"schema_version": 1, "ti')
    with store.lock():
        store.save(AgentState())
    assert not stale.exists()


def test_taking_the_lock_removes_what_killed_writers_left(store: StateStore) -> None:
    """lock() clears temps of any atomic_write and .exec-* scratch folders; .lock and KILL temps stay."""
    folder = store.state_dir
    folder.mkdir()
    left = [".state.json.k1ll3d01.tmp", ".ESCALATION.md.k1ll3d02.tmp", ".state.json.corrupt-x.abc.tmp"]
    for name in left:
        (folder / name).write_bytes(b"half a file")
    scratch = folder / ".exec-abc123"
    (scratch / "deep").mkdir(parents=True)
    (scratch / "deep" / "actions.jsonl").write_text("{}")
    kept = [".KILL.l1v3.tmp", ".gitkeep", "notes.tmp", ".tmp", "journal.jsonl"]
    for name in kept:
        (folder / name).write_bytes(b"keep me")
    with store.lock():
        assert names(folder) == sorted([".lock", *kept])
    assert store.clean_stale() == 0  # without the lock it never removes anything


def test_clean_stale_under_the_lock_counts_what_it_removed(store: StateStore) -> None:
    """clean_stale() is one pass; a second one finds nothing left."""
    with store.lock():
        (store.state_dir / ".state.json.abcd.tmp").write_bytes(b"")
        (store.state_dir / ".exec-1").mkdir()
        assert store.clean_stale() == 2
        assert store.clean_stale() == 0


def test_a_temp_left_after_a_save_is_removed_at_the_next_lock(store: StateStore) -> None:
    """The lock skips its scan only while the folder is as the store's last save left it."""
    for _ in range(3):  # the first lock makes the folder; from the second on it is known clean
        with store.lock():
            store.save(AgentState())
    temp = store.state_dir / ".state.json.k1ll3d.tmp"
    temp.write_bytes(b"half a file")  # a writer killed after this store's save
    with store.lock():
        assert not temp.exists()


def test_a_temp_the_clock_cannot_show_is_removed_within_the_full_scan_interval(store: StateStore) -> None:
    """A temp created in the same clock tick as the save (mtime restored) waits at most 15 locks."""
    for _ in range(3):
        with store.lock():
            store.save(AgentState())
    before = os.stat(store.state_dir)
    temp = store.state_dir / ".state.json.c0ar5e.tmp"
    temp.write_bytes(b"half a file")
    os.utime(store.state_dir, ns=(before.st_atime_ns, before.st_mtime_ns))  # a coarse clock
    locks = 0
    while temp.exists():
        assert locks < 16, "never scanned"
        with store.lock():
            locks += 1
    assert locks > 1  # the first lock did skip its scan: the interval is what bounds it


def test_an_outbox_made_under_the_lock_is_scanned_at_the_next_lock(store: StateStore) -> None:
    """A new subfolder changes the folder's link count: the next lock scans it (and outbox/)."""
    for _ in range(2):
        with store.lock():
            store.save(AgentState())
    with store.lock():
        store.outbox_dir.mkdir()
        temp = store.outbox_dir / ".x.json.k1ll3d.tmp"
        temp.write_bytes(b"half an entry")
        store.save(AgentState())
    with store.lock():
        assert not temp.exists()
        store.save(AgentState())
    with store.lock():  # scanned (the last one removed something): clean now, outbox/ seen
        store.save(AgentState())
        temp.write_bytes(b"half an entry")  # killed mid-write, after the save
    with store.lock():  # the folder is unchanged: its scan is skipped, but outbox/ is looked at
        assert not temp.exists()


def test_the_fast_load_gives_what_the_dict_path_gives(store: StateStore) -> None:
    """A saved state loads (one pydantic pass over the bytes) equal to validating the parsed dict."""
    state = AgentState(
        ticks=4,
        history=[action(i, error="x" if i % 2 else None) for i in range(1, 6)],
        data={"n": [1, 2.5, None, "é"], "big": 10**30},
    )
    store.save(state)
    loaded = store.load()
    assert loaded == state
    by_dict = AgentState.model_validate(json.loads(store.state_path.read_bytes()))
    assert loaded == by_dict and loaded.model_fields_set == by_dict.model_fields_set


def test_save_without_the_lock_leaves_temps_alone(store: StateStore) -> None:
    """Without the lock a temp may be a live writer's, so an unlocked save keeps it."""
    write_state_file(store, b"")
    live = store.state_dir / ".state.json.l1v3.tmp"
    live.write_bytes(b"in progress")
    store.save(AgentState())
    assert live.read_bytes() == b"in progress"


def test_state_of_unserialisable_data_is_a_write_error(store: StateStore) -> None:
    """An object JSON cannot hold in ctx.data is a StateWriteError and the old file stays."""
    store.save(AgentState(ticks=1))
    before = store.state_path.read_bytes()
    with pytest.raises(StateWriteError, match="not JSON-serialisable") as caught:
        store.save(AgentState(data={"when": object()}))
    assert "\n" not in str(caught.value)
    assert store.state_path.read_bytes() == before


@pytest.mark.parametrize(
    ("function", "error"),
    [("write", errno.ENOSPC), ("fsync", errno.EIO), ("replace", errno.EACCES)],
)
def test_a_failed_save_keeps_the_previous_state(
    store: StateStore, monkeypatch: pytest.MonkeyPatch, function: str, error: int
) -> None:
    """ENOSPC, EIO or EACCES during a save: StateWriteError with the reason, old bytes, no temp."""
    with store.lock():
        store.save(AgentState(ticks=7, data={"kept": True}))
        before = store.state_path.read_bytes()
        with monkeypatch.context() as patch:

            def fail(*args: Any, **kwargs: Any) -> Any:
                raise OSError(error, os.strerror(error))

            patch.setattr(os, function, fail)
            with pytest.raises(StateWriteError) as caught:
                store.save(AgentState(ticks=8, data={"blob": "x" * 20_000}))
    err = caught.value
    assert os.strerror(error) in str(err)
    assert "previous state kept" in str(err)
    assert "\n" not in str(err)
    assert err.exit_code == 2
    assert store.state_path.read_bytes() == before
    assert list(store.state_dir.glob(temp_pattern("state.json"))) == []
    assert store.load().ticks == 7


def test_a_new_folder_that_cannot_be_created_is_a_write_error(tmp_path: Path) -> None:
    """A state folder under a file cannot be created: one clear StateWriteError."""
    (tmp_path / "file").write_text("x")
    store = StateStore(tmp_path / "file" / "state")
    with pytest.raises(StateWriteError, match="cannot create the state folder"), store.lock():
        pass


def test_schema_is_the_agent_state_json_schema() -> None:
    """`heartbeat schema` prints a JSON Schema naming every field of state.json."""
    schema = state_schema()
    assert set(schema["properties"]) == set(AgentState.model_fields)
    assert schema["properties"]["schema_version"]["default"] == SCHEMA_VERSION
    json.dumps(schema)


# ---------------------------------------------------------------- round trip and size

aware_datetimes = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
short_text = st.text(max_size=30)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | short_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(short_text, inner, max_size=4),
    max_leaves=15,
)
json_objects = st.dictionaries(short_text, json_values, max_size=5)
counts = st.integers(min_value=0, max_value=10**6)
finite = st.floats(min_value=0, max_value=1e6, allow_nan=False)

action_records = st.builds(
    ActionRecord,
    index=st.integers(min_value=1, max_value=10**6),
    tick=counts,
    at=aware_datetimes,
    tool=short_text,
    fingerprint=st.text(alphabet="0123456789abcdef", min_size=16, max_size=16),
    summary=short_text,
    output_len=st.none() | counts,
    error=st.none() | short_text,
    cost=finite,
)
agent_states = st.builds(
    AgentState,
    status=st.sampled_from(Status),
    status_reason=st.none() | short_text,
    ticks=counts,
    last_tick_at=st.none() | aware_datetimes,
    data=json_objects,
    instructions=st.none() | st.text(max_size=200),
    recovery=st.none()
    | st.builds(
        Recovery,
        mode=st.sampled_from(RecoveryMode),
        attempts=st.integers(min_value=1, max_value=100),
        since_tick=counts,
        kinds=st.lists(short_text, max_size=3),
        avoid=st.lists(short_text, max_size=3),
    ),
    stuck_streak=counts,
    actions_total=counts,
    history=st.lists(action_records, max_size=6),
    progress=st.lists(
        st.builds(
            ProgressSample,
            tick=counts,
            at=aware_datetimes,
            value=st.none() | st.floats(allow_nan=False, allow_infinity=False),
            error=st.none() | short_text,
        ),
        max_size=4,
    ),
    anomalies=st.lists(
        st.builds(
            Anomaly,
            kind=short_text,
            message=short_text,
            tick=counts,
            action=st.none() | counts,
            at=aware_datetimes,
            tool=st.none() | short_text,
            evidence=json_objects,
        ),
        max_size=3,
    ),
    budget=st.builds(
        BudgetCounters, day=st.none() | st.dates(min_value=date(2000, 1, 1)), actions=counts, cost=finite
    ),
    escalation=st.none()
    | st.builds(
        Escalation,
        at=aware_datetimes,
        tick=counts,
        reason=short_text,
        key=short_text,
        kinds=st.lists(short_text, max_size=3),
        last_reminder_at=st.none() | aware_datetimes,
    ),
)


@settings(max_examples=150, deadline=None, print_blob=True)  # a failure prints how to replay it
@given(state=agent_states)
@example(state=AgentState(data={"PRIVATEKEY": None}))  # a key not set yet: kept (hypothesis found it)
@example(state=AgentState(data={"api_key": "hunter2", "pages": 3}))  # a secret: masked, said not exact
def test_save_then_load_gives_back_an_equal_state(
    tmp_path_factory: pytest.TempPathFactory, state: AgentState
) -> None:
    """Any valid state survives a save and a load unchanged, but for a credential its data holds,
    masked in the file (``state.json`` is read by people): the save says so (not ``exact``)."""
    store = StateStore(tmp_path_factory.mktemp("roundtrip"))
    saved = store.save(state)
    kept = mask_data(state.data)
    assert saved.exact is (kept is state.data)
    assert store.load() == (state if saved.exact else state.model_copy(update={"data": kept}))


def test_state_file_stays_small_after_100_000_actions(store: StateStore) -> None:
    """Recording 100,000 actions (and every bounded list full) never takes state.json past 64 KB."""
    state = AgentState()
    largest = 0
    for index in range(1, 100_001):
        error = f"HTTP 503 from the search backend while fetching page {index}: " * 5 if index % 3 else None
        append_bounded(state.history, action(index, error=error), HISTORY_LIMIT)
        state.actions_total = index
        if index % 50 == 0:
            sample = ProgressSample(tick=index // 5, at=NOW, value=index / 1000)
            append_bounded(state.progress, sample, PROGRESS_LIMIT)
            anomaly = Anomaly(
                kind="repeat",
                message=clip("search was called 3 times with the same arguments " * 5) or "",
                tick=index // 5,
                action=index,
                at=NOW,
                tool="search",
                evidence={"fingerprint": "f" * 64, "count": 3, "window": 20},
            )
            append_bounded(state.anomalies, anomaly, ANOMALY_LIMIT)
        if index % 10_000 == 0:
            state.data = {"sources": [f"https://example.org/{i}" for i in range(20)]}
            store.save(state)
            largest = max(largest, store.state_path.stat().st_size)
    assert len(state.history) == HISTORY_LIMIT
    assert len(state.anomalies) == ANOMALY_LIMIT
    assert store.load().history[-1].index == 100_000
    assert largest <= 64 * 1024


# ---------------------------------------------------------------- unreadable files

VALID = AgentState(ticks=2, history=[action(i) for i in range(1, 5)]).model_dump(mode="json")


def bad_history_tick() -> bytes:
    """A valid state whose history[3].tick is text and whose budget.actions is negative."""
    raw = json.loads(json.dumps(VALID))
    raw["history"][3]["tick"] = "soon"
    raw["budget"]["actions"] = -1
    return json.dumps(raw, indent=2).encode()


CORRUPT_CASES = [
    pytest.param(b"", "is empty", id="empty"),
    pytest.param(b"  \n\t\n", "is empty", id="blank"),
    pytest.param(b"not json at all", "is not valid JSON: Expecting value at line 1 column 1", id="garbage"),
    pytest.param(json.dumps(VALID, indent=2).encode()[:300], "is not valid JSON", id="truncated"),
    pytest.param(b"[]", "is not a JSON object but an array", id="array"),
    pytest.param(b'"state"', "is not a JSON object but a string", id="string"),
    pytest.param(b"42", "is not a JSON object but a number", id="number"),
    pytest.param(b'{"ticks": "x"}', "schema_version is missing", id="no-version"),
    pytest.param(b'{"schema_version": "1"}', 'schema_version must be an integer, not "1"', id="text-version"),
    pytest.param(
        b'{"schema_version": true}', "schema_version must be an integer, not true", id="bool-version"
    ),
    pytest.param(b'{"schema_version": null}', "must be an integer, not null", id="null-version"),
    pytest.param(
        b'{"schema_version": {"major": 1, "minor": 2, "patch": 3, "label": "x"}}',
        'must be an integer, not {"major": 1, "minor": 2, "patch": 3, "l… (left as is',
        id="long-version",
    ),
    pytest.param(
        b'{"schema_version": 1, "ticks": "x"}',
        "ticks: expected a whole number, got text",
        id="wrong-type",
    ),
    pytest.param(
        bad_history_tick(),
        "history[3].tick: expected a whole number, got text",
        id="history-item",
    ),
    pytest.param(b'{"schema_version": 1, "tiks": 3}', "unknown key 'tiks'", id="unknown-key"),
    pytest.param(b'{"schema_version": 1, "data": {"a": "\xff\xfe"}}', "is not UTF-8 text", id="not-utf8"),
    pytest.param(b"[" * 100_000, "is not valid JSON: nested too deeply", id="too-deep"),
]


@pytest.mark.parametrize(("content", "expected"), CORRUPT_CASES)
def test_an_unreadable_state_is_corrupt_kept_and_copied_aside(
    store: StateStore, open_umask: None, content: bytes, expected: str
) -> None:
    """One clear line naming the file and the problem; original untouched; a 0600 copy beside it."""
    write_state_file(store, content)
    with pytest.raises(StateCorrupt) as caught:
        store.load()
    err = caught.value
    message = str(err)
    assert type(err) is StateCorrupt
    assert "\n" not in message
    assert message.startswith(f"{store.state_path}: ")
    assert expected in message
    assert err.exit_code == 2
    assert store.state_path.read_bytes() == content
    copy = store.state_dir / f"state.json.corrupt-{STAMP}"
    assert err.copy == copy
    assert copy.read_bytes() == content
    assert mode(copy) == 0o600
    assert f"copied to {copy.name}" in message


def test_a_validation_error_counts_the_other_problems(store: StateStore) -> None:
    """The first problem is named and the rest counted, so the line stays short."""
    write_state_file(store, bad_history_tick())
    with pytest.raises(StateCorrupt, match=r"history\[3\]\.tick: .* \(and 1 more problem\)"):
        store.load()


def test_the_same_corrupt_file_is_copied_aside_only_once(store: StateStore) -> None:
    """Every cron tick re-reads a corrupt file; identical bytes reuse the copy, new bytes get one more."""
    write_state_file(store, b"{broken")
    for _ in range(3):
        with pytest.raises(StateCorrupt):
            store.load()
    assert names(store.state_dir) == ["state.json", f"state.json.corrupt-{STAMP}"]
    write_state_file(store, b"{broken differently")
    with pytest.raises(StateCorrupt) as caught:
        store.load()
    assert caught.value.copy == store.state_dir / f"state.json.corrupt-{STAMP}-1"
    assert (store.state_dir / f"state.json.corrupt-{STAMP}").read_bytes() == b"{broken"
    assert (store.state_dir / f"state.json.corrupt-{STAMP}-1").read_bytes() == b"{broken differently"


def test_copy_names_use_a_utc_stamp(tmp_path: Path) -> None:
    """The copy's stamp is UTC with microseconds, whatever zone the clock answers in."""
    plus_two = datetime(2024, 1, 2, 5, 4, 5, 6, tzinfo=UTC).astimezone(timezone(timedelta(hours=2)))
    store = StateStore(tmp_path, clock=lambda: plus_two)
    write_state_file(store, b"nope")
    with pytest.raises(StateCorrupt) as caught:
        store.load()
    assert caught.value.copy is not None
    assert caught.value.copy.name == "state.json.corrupt-20240102T050405000006Z"


def test_a_folder_in_place_of_state_json_is_corrupt_and_left_alone(store: StateStore) -> None:
    """A folder named state.json: a one-line error that says it could not be copied; nothing changes."""
    store.state_path.mkdir(parents=True)
    (store.state_path / "inside").write_text("keep me")
    with pytest.raises(StateCorrupt) as caught:
        store.load()
    message = str(caught.value)
    assert "\n" not in message
    assert "is a folder, not a file; not copied aside" in message
    assert caught.value.copy is None
    assert names(store.state_dir) == ["state.json"]
    assert (store.state_path / "inside").read_text() == "keep me"


def test_a_failed_copy_aside_is_said_in_the_message(
    store: StateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the copy cannot be written, the error still names the problem and says the copy failed."""
    write_state_file(store, b"{")

    def no_space(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space")

    monkeypatch.setattr(os, "link", no_space)
    with pytest.raises(StateCorrupt) as caught:
        store.load()
    assert "is not valid JSON" in str(caught.value)
    assert "could not copy it aside: No space" in str(caught.value)
    assert caught.value.copy is None
    assert names(store.state_dir) == ["state.json"]
    assert store.state_path.read_bytes() == b"{"


def test_a_utf8_bom_is_accepted(store: StateStore) -> None:
    """A state.json saved by an editor that adds a UTF-8 BOM still loads."""
    write_state_file(store, b"\xef\xbb\xbf" + json.dumps({"schema_version": 1, "ticks": 4}).encode())
    assert store.load().ticks == 4


def test_a_newer_schema_version_is_refused_and_left_as_is(store: StateStore) -> None:
    """A file from a newer release: StateVersionError saying so; the file is neither changed nor copied."""
    content = json.dumps({"schema_version": SCHEMA_VERSION + 1, "future": True}).encode()
    write_state_file(store, content)
    with pytest.raises(StateVersionError) as caught:
        store.load()
    err = caught.value
    assert isinstance(err, StateCorrupt)
    assert err.exit_code == 2
    assert err.version == SCHEMA_VERSION + 1
    assert "\n" not in str(err)
    assert f"schema_version {SCHEMA_VERSION + 1} is newer" in str(err)
    assert names(store.state_dir) == ["state.json"]
    assert store.state_path.read_bytes() == content


# ---------------------------------------------------------------- migrations


def trail(name: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A migration step that records its name in data.trail."""

    def apply(raw: dict[str, Any]) -> dict[str, Any]:
        raw.setdefault("data", {}).setdefault("trail", []).append(name)
        return raw

    return apply


def notes_into_data(raw: dict[str, Any]) -> dict[str, Any]:
    """Version 1 -> 2 of the test schema: the top-level notes move into data."""
    notes = raw.pop("notes")
    raw.setdefault("data", {})["notes"] = notes
    return trail("notes-into-data")(raw)


TWO_STEPS = (
    Migration(2, "add-trail-end", trail("add-trail-end")),
    Migration(1, "notes-into-data", notes_into_data),
)
OLD_FILE = json.dumps({"schema_version": 1, "ticks": 5, "notes": ["a", "b"]}, indent=2).encode()


def test_migrate_runs_named_steps_in_order_and_stamps_versions() -> None:
    """An old dict goes through each step once, oldest first, ends at the current version, input unchanged."""
    raw = json.loads(OLD_FILE)
    result = migrate(raw, TWO_STEPS, 3)
    assert result["schema_version"] == 3
    assert result["data"] == {"notes": ["a", "b"], "trail": ["notes-into-data", "add-trail-end"]}
    assert raw == json.loads(OLD_FILE)


def test_migrate_of_a_current_dict_is_an_equal_copy() -> None:
    """Nothing to do gives back an equal dict that is not the caller's object."""
    raw: dict[str, Any] = {"schema_version": 3, "data": {"x": [1]}}
    result = migrate(raw, TWO_STEPS, 3)
    assert result == raw
    result["data"]["x"].append(2)
    assert raw["data"]["x"] == [1]


def test_store_loads_an_old_file_migrated_and_saves_it_back_with_a_backup(
    tmp_path: Path, open_umask: None
) -> None:
    """Load migrates in memory only; the next save first copies the old file aside as v1, once."""
    store = StateStore(tmp_path, migrations=TWO_STEPS, current_version=3, clock=fixed_clock)
    write_state_file(store, OLD_FILE)
    state = store.load()
    assert state.schema_version == 3
    assert state.ticks == 5
    assert state.data["trail"] == ["notes-into-data", "add-trail-end"]
    assert store.state_path.read_bytes() == OLD_FILE
    with store.lock():
        store.save(state)
        store.save(state)
    backup = tmp_path / f"state.json.v1-{STAMP}"
    assert names(tmp_path) == [".lock", "state.json", backup.name]
    assert backup.read_bytes() == OLD_FILE
    assert mode(backup) == 0o600
    assert json.loads(store.state_path.read_bytes())["schema_version"] == 3
    assert store.load() == state


# What the first release wrote: schema_version 1, records without shape or result, a recovery
# without quiet, no anomaly_totals and no notices.
FIRST_RELEASE_FILE = json.dumps(
    {
        "schema_version": 1,
        "status": "active",
        "ticks": 2,
        "history": [
            {
                "index": 1,
                "tick": 2,
                "at": "2024-05-06T07:00:00Z",
                "tool": "search",
                "fingerprint": "0123456789abcdef",
                "summary": 'search({"q":"x"})',
                "output_len": 3,
                "error": None,
                "cost": 0.0,
            }
        ],
        "stuck_streak": 1,
        "recovery": {"mode": "try_alternative", "since_tick": 2, "kinds": ["repeat"], "avoid": ["search"]},
    },
    indent=2,
).encode()


def test_a_first_release_file_is_migrated_to_the_current_version_and_kept_aside(tmp_path: Path) -> None:
    """The shipped registry: a version 1 file loads with defaults, saves as current, kept aside as v1."""
    store = StateStore(tmp_path, clock=fixed_clock)
    write_state_file(store, FIRST_RELEASE_FILE)
    state = store.load()
    assert (state.schema_version, state.ticks, state.anomaly_totals, state.notices) == (
        SCHEMA_VERSION,
        2,
        {},
        [],
    )
    assert (state.budget.tokens, state.budget.models, state.spend_totals) == (0, {}, {})  # version 3: spend
    assert (state.history[0].shape, state.history[0].result) == (None, None)
    assert state.recovery is not None and state.recovery.quiet == 0
    with store.lock():
        store.save(state)
    assert (tmp_path / f"state.json.v1-{STAMP}").read_bytes() == FIRST_RELEASE_FILE
    assert json.loads(store.state_path.read_bytes())["schema_version"] == SCHEMA_VERSION


def test_a_release_that_knows_only_version_1_refuses_this_one_as_newer(tmp_path: Path) -> None:
    """Rolling back: what this release saves is refused as newer (not called corrupt) and left as is."""
    store = StateStore(tmp_path, clock=fixed_clock)
    with store.lock():
        store.save(AgentState(ticks=1))
    saved = store.state_path.read_bytes()
    older = StateStore(tmp_path, migrations=(), current_version=1, clock=fixed_clock)
    with pytest.raises(StateVersionError, match=f"schema_version {SCHEMA_VERSION} is newer"):
        older.load()
    assert store.state_path.read_bytes() == saved


def test_a_missing_migration_step_is_a_clear_error_and_the_file_is_left_alone(tmp_path: Path) -> None:
    """Without a 1 -> 2 step a version 1 file cannot be read: one line naming the gap, no copy."""
    store = StateStore(tmp_path, migrations=TWO_STEPS[:1], current_version=3, clock=fixed_clock)
    write_state_file(store, OLD_FILE)
    with pytest.raises(StateCorrupt) as caught:
        store.load()
    message = str(caught.value)
    assert "\n" not in message
    assert "schema_version 1 cannot be migrated to 3: no migration from 1 to 2" in message
    assert caught.value.copy is None
    assert names(tmp_path) == ["state.json"]
    assert store.state_path.read_bytes() == OLD_FILE


def test_a_failing_migration_step_names_the_step(tmp_path: Path) -> None:
    """A step that raises makes the file corrupt: the message names the step, the file is copied aside."""

    def broken(raw: dict[str, Any]) -> dict[str, Any]:
        return {"missing": raw["nope"]}

    steps = (Migration(1, "needs-nope", broken),)
    store = StateStore(tmp_path, migrations=steps, current_version=2, clock=fixed_clock)
    write_state_file(store, OLD_FILE)
    with pytest.raises(StateCorrupt, match="migration 'needs-nope' \\(1 -> 2\\) failed: KeyError") as caught:
        store.load()
    assert caught.value.copy is not None
    assert caught.value.copy.read_bytes() == OLD_FILE


def test_a_migration_returning_no_dict_is_an_error() -> None:
    """A step must return the migrated dict; anything else is a MigrationError naming it."""
    steps = (Migration(1, "forgot-return", lambda raw: None),)  # type: ignore[arg-type, return-value]
    with pytest.raises(MigrationError, match="'forgot-return' returned NoneType"):
        migrate({"schema_version": 1}, steps, 2)


@pytest.mark.parametrize(
    ("migrations", "error"),
    [
        (
            (Migration(1, "a", trail("a")), Migration(1, "b", trail("b"))),
            "two migrations from schema_version 1",
        ),
        ((Migration(3, "late", trail("late")),), "does not lead up to schema_version 3"),
        ((Migration(-1, "early", trail("early")),), "does not lead up to schema_version 3"),
    ],
)
def test_a_bad_migration_registry_is_refused_at_construction(
    tmp_path: Path, migrations: tuple[Migration, ...], error: str
) -> None:
    """Duplicate or out-of-range steps are a programming error found when the store is made."""
    with pytest.raises(ValueError, match=error):
        StateStore(tmp_path, migrations=migrations, current_version=3)


def test_the_shipped_migrations_lead_without_gaps_to_this_schema_version() -> None:
    """The registry is valid and contiguous up to SCHEMA_VERSION (empty in the first release)."""
    check_migrations(MIGRATIONS, SCHEMA_VERSION)
    versions = sorted(step.from_version for step in MIGRATIONS)
    assert versions == list(range(SCHEMA_VERSION - len(MIGRATIONS), SCHEMA_VERSION))


# ---------------------------------------------------------------- SIGKILL during saves

TEMP_GLOB = temp_pattern("state.json")


def kill_savers(state_dir: Path, kills: int, rng: random.Random) -> dict[str, int]:
    """SIGKILL `kills` children that save in a loop, checking the state after each death.

    More, up to five times as many, until one has died inside a save: on a loaded
    machine the first `kills` random kill points may all miss the short save.
    """
    ctx = _crashers.forkserver_context()
    store = StateStore(state_dir)
    stats = {"killed_mid_save": 0, "unacknowledged_saves": 0, "most_temps": 0}
    for n in range(5 * kills):
        if n >= kills and stats["killed_mid_save"]:
            break
        # The child is between 0 and ~2 saves further on when it dies.
        acks = _crashers.kill_mid_work(ctx, _crashers.save_forever, (str(state_dir),), rng, 0.003)
        temps = list(state_dir.glob(TEMP_GLOB))
        stats["killed_mid_save"] += bool(temps)
        stats["most_temps"] = max(stats["most_temps"], len(temps))
        # The dead holder's lock must be free at once (timeout 0).
        with store.lock():
            state = store.load()
        counter = state.data["counter"]
        assert counter in (acks[-1], acks[-1] + 1), f"saved {counter}, last acknowledged {acks[-1]}"
        assert state.data["blob"] == _crashers.blob_for(counter)
        stats["unacknowledged_saves"] += counter != acks[-1]
    return stats


@pytest.mark.parametrize("kills", [200, pytest.param(1000, marks=pytest.mark.slow)])
def test_sigkill_during_saves_never_leaves_a_broken_state(
    tmp_path: Path, kills: int, rng: random.Random
) -> None:
    """Killed at random points, a saver leaves the state before or after its save, and temps never pile up."""
    stats = kill_savers(tmp_path, kills, rng)
    store = StateStore(tmp_path)
    with store.lock():
        state = store.load()
        store.save(state)
    assert state.data["counter"] >= kills
    # The kills really landed inside saves, and each next save cleaned up after them.
    assert stats["killed_mid_save"] > 0
    assert stats["most_temps"] <= 1
    assert list(tmp_path.glob(TEMP_GLOB)) == []
    assert mode(store.state_path) == 0o600
    assert 18_000 < store.state_path.stat().st_size < 20_000


def test_lock_sweeps_temps_left_in_the_outbox(tmp_path: Path) -> None:
    """A killed outbox writer's temp file is removed when the lock is next taken; real entries stay."""
    store = StateStore(tmp_path / "state")
    outbox = tmp_path / "state" / "outbox"
    outbox.mkdir(parents=True)
    (outbox / ".webhook--k--abc.json.x1y2.tmp").write_text("{half")
    (outbox / "webhook--k--abc.json").write_text("{}")
    with store.lock():
        pass
    assert sorted(p.name for p in outbox.iterdir()) == ["webhook--k--abc.json"]


@pytest.mark.parametrize("pad", [0, 1, 37, 4299, 4300, 4301, 8000])
@pytest.mark.parametrize("digits", [4300, 4301, 9000])
def test_a_number_too_long_to_read_back_is_refused_wherever_it_sits(
    tmp_path: Path, pad: int, digits: int
) -> None:
    """Over 4,300 digits (Python's limit) is refused before writing, at any offset; 4,300 round-trips."""
    store = StateStore(tmp_path)
    number = 10 ** (digits - 1)
    state = AgentState(data={"pad": "x" * pad, "n": number, "text": "7" * 5000})  # digits in a text: fine
    if digits > 4300:
        with pytest.raises(StateUnsavable, match="would not read back"):
            store.save(state)
        assert not store.state_path.exists()
    else:
        store.save(state)
        assert store.load().data["n"] == number


def test_reload_reuses_a_state_only_while_the_file_holds_what_was_saved(tmp_path: Path) -> None:
    """Byte for byte the last save: the given state back, unparsed; any other bytes: parsed afresh."""
    store = StateStore(tmp_path)
    state = AgentState(ticks=3, data={"k": [1, "two"]})
    saved = store.save(state)
    assert saved == store.last_save and saved.exact and store.state_path.read_bytes() == saved.data
    again, unchanged = store.reload(saved, state)
    assert again is state and unchanged
    # The same content written by someone else in other bytes: a fresh parse, equal values.
    store.state_path.write_text(json.dumps(json.loads(saved.data)), encoding="utf-8")
    other, unchanged = store.reload(saved, state)
    assert other is not state and not unchanged and other == state
    # Without a state to hand back, the answer still says whether the bytes are the saved ones.
    store.save(state)
    assert store.last_save is not None
    fresh, unchanged = store.reload(store.last_save, None)
    assert unchanged and fresh == state and fresh is not state


def test_a_masked_save_is_never_taken_for_the_state_in_memory(tmp_path: Path) -> None:
    """state.json holds *** where memory holds the secret: not exact, so reload parses the file."""
    store = StateStore(tmp_path, secrets=["hunter2-secret"])
    state = AgentState(data={"note": "the key is hunter2-secret"})
    saved = store.save(state)
    assert not saved.exact and b"hunter2-secret" not in saved.data
    loaded, unchanged = store.reload(saved, state)
    assert not unchanged and loaded is not state and loaded.data == {"note": "the key is ***"}


@pytest.mark.parametrize(
    ("lock", "command"),
    [
        (".lock", ["tick"]),
        (".run.lock", ["run", "--every", "1h", "--ticks", "1"]),
        (".outbox.lock", ["outbox", "drop", "--all"]),
    ],
)
def test_a_symlink_planted_where_a_lock_file_goes_is_refused_and_its_target_kept(
    tmp_path: Path, lock: str, command: list[str]
) -> None:
    """The agent's process can write its state folder: a symlink planted where a lock file goes fails
    the command closed (exit 2, one line naming the lock) and the file it points at keeps its text.
    filelock before 3.20.1 followed it and truncated the file (O_TRUNC): pyproject.toml's floor."""
    from _cli import run_cli

    (tmp_path / "agent.py").write_text("def step(ctx):\n    ctx.record('a', {})\n")
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step"\n')
    assert run_cli(tmp_path, "tick").returncode == 0  # the state folder, as a first tick leaves it
    precious = tmp_path / "precious.txt"
    precious.write_text("the user's own file\n")
    link = tmp_path / "state" / lock
    link.unlink(missing_ok=True)
    link.symlink_to(precious)
    done = run_cli(tmp_path, *command)
    assert precious.read_text() == "the user's own file\n"
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and lock in done.stderr, done.stderr
