"""An idle wake-up: a heartbeat that looked for work, found none and did nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from heartbeat.core.models import ProgressSample
from heartbeat.detect.detectors.contract import ActionView
from heartbeat.detect.idle import TURN_WAIT, exploring, idle_wakeup, quiet_wakeup, watching
from heartbeat.detect.monitor import Monitor

T0 = datetime(2024, 1, 1, tzinfo=UTC)
NOTHING = '{"messages": [], "resultSizeEstimate": 0}'


Call = tuple[int, str, dict[str, str], str | None, str | None]  # tick, tool, args, output, error
LOOK: Call = (1, "gmail.list_messages", {"q": "in:inbox is:unread"}, NOTHING, None)


def _kept(*calls: Call, hours: int = 0) -> list[ActionView]:
    """The actions as a Monitor keeps them (with their result keys), heartbeat by heartbeat, each
    heartbeat ``hours`` after the one before."""
    monitor = Monitor()
    for tick, tool, args, output, error in calls:
        if tick != monitor.tick:
            monitor.start_tick(tick)
        monitor.record(tool, args, output=output, error=error, now=T0 + timedelta(hours=hours * tick))
    return list(monitor.history)


def _at(tick: int, call: Call) -> Call:
    return (tick, *call[1:])


def test_a_model_turn_that_asks_again_for_nothing_is_no_idle_wake_up() -> None:
    """A fact checker looks up "vegan" in one article turn after turn, a heartbeat a turn, answered
    "No more results." each time: as a live agent's turns it is stuck, found within 5 turns; the
    very same heartbeats as scheduled wake-ups (a watcher asking its source) stay idle."""
    lookup = ("lookup", {"keyword": "vegan"}, "No more results.", None)
    rounds: list[Round] = [[("search", {"entity": "Tilda Swinton"}, "Katherine Matilda Swinton ...", None)]]
    rounds += [[lookup]] * 8
    as_turns = _kinds(rounds, None, turns=True)
    assert any(as_turns[:6]), as_turns
    assert _kinds(rounds, None) == [[]] * 9


def test_a_heartbeat_that_only_looked_and_found_nothing_again_is_idle() -> None:
    """The inbox looked at in an earlier heartbeat answers nothing again: no work came."""
    agenda: Call = (2, "calendar.agenda", {"day": "today"}, '{"busy": ["standup"]}', None)
    assert idle_wakeup(_kept(LOOK, _at(2, LOOK), agenda), 2)
    assert not idle_wakeup(_kept(LOOK), 1)  # nothing looked at before: no re-check
    assert not idle_wakeup(_kept(LOOK, _at(2, LOOK)), 3)  # no action in heartbeat 3


def test_an_empty_folder_listed_again_is_idle_and_other_silence_is_not() -> None:
    """``ls -1 incoming/`` of an empty folder prints nothing: the listing's answer of nothing, as a
    grep's silence is "no match" (a newcomer's redactor was told ``repeat`` on its quiet wake-ups,
    live round 36), and as ``aws sqs receive-message`` says its queue is empty (blind batch 42's
    order poller was escalated at its fourth wake-up). Another command's silence is a shell gone
    dark, no answer."""
    listing: Call = (1, "shell", {"cmd": "ls -1 incoming/"}, "", None)
    assert idle_wakeup(_kept(listing, _at(2, listing)), 2)
    receive: Call = (1, "aws", {"cmd": "aws sqs receive-message --queue-url https://sqs/orders"}, "", None)
    assert idle_wakeup(_kept(receive, _at(2, receive)), 2)
    dark: Call = (1, "shell", {"cmd": "cat incoming/queue.txt"}, "", None)
    assert not idle_wakeup(_kept(dark, _at(2, dark)), 2)
    # A tool named for searching answers "no match" so too: a mail server's search for unread
    # support mail, hourly (blind batch 56's support inbox was told ``repeat`` at its quiet hours).
    search: Call = (1, "search_emails", {"query": "label:support is:unread", "maxResults": "10"}, "", None)
    assert idle_wakeup(_kept(search, _at(2, search)), 2)
    fetched: Call = (1, "read_email", {"messageId": "18c3021a5b9c0d44"}, "", None)
    assert not idle_wakeup(_kept(fetched, _at(2, fetched)), 2)


def test_the_same_bookkeeping_as_the_heartbeat_before_is_no_work() -> None:
    """A sync that found nothing saves the time it last ran, as it did the heartbeat before (the
    same write, its time masked): idle. The first such save, a write of another shape (a reply
    sent) or the very same act again is work."""
    ran = [
        (tick, "state.set", {"key": "last_run", "value": f"2026-11-06T10:{tick:02d}:09Z"}, "ok", None)
        for tick in range(1, 4)
    ]
    quiet = [LOOK, ran[0], _at(2, LOOK), ran[1], _at(3, LOOK), ran[2]]
    assert idle_wakeup(_kept(*quiet), 3)
    assert not idle_wakeup(_kept(LOOK, _at(2, LOOK), ran[1]), 2)  # no such save the heartbeat before
    reply: Call = (3, "gmail.send_message", {"to": "ana", "body": "on it"}, '{"id": "m-1"}', None)
    assert not idle_wakeup(_kept(*quiet[:4], _at(3, LOOK), reply), 3)
    # The very same act again (a hand-off back to the same agent each heartbeat) is no bookkeeping.
    handoff: Call = (1, "transfer_to_billing_agent", {}, '{"assistant": "Billing Agent"}', None)
    assert not idle_wakeup(_kept(LOOK, handoff, _at(2, LOOK), _at(2, handoff)), 2)
    # The very same record of its own (the line logged, the poll time touched) is; a thought is not.
    logged: Call = (1, "log.info", {"msg": "no new entries"}, "logged", None)
    touched: Call = (1, "state.touch", {"key": "feed:last_poll"}, '{"ok": true}', None)
    assert idle_wakeup(_kept(LOOK, logged, touched, _at(2, LOOK), _at(2, logged), _at(2, touched)), 2)
    thought: Call = (1, "think", {"thought": "check the inbox again"}, "", None)
    assert not idle_wakeup(_kept(LOOK, thought, _at(2, LOOK), _at(2, thought)), 2)


def test_a_report_made_again_after_quiet_looks_is_no_work_and_a_question_asked_again_is() -> None:
    """An on-call handoff telling the channel "No open incidents this shift." after looks that found
    nothing, as the heartbeat before did, is the wake-up's report: idle. A stand-up bot asking Dana
    the same question each wake-up while her replies are ``[]`` asks again an answer it still
    awaits: it was never flagged in 14 wake-ups (live round 59). It is work, no idle wake-up."""
    report = (
        1,
        "slack.post_message",
        {"channel": "#oncall", "text": "No open incidents this shift."},
        "ok",
        None,
    )
    assert idle_wakeup(_kept(LOOK, report, _at(2, LOOK), _at(2, report)), 2)
    ask = (1, "send_dm", {"user": "U_DANA", "text": "Hi Dana, what's your update for today?"}, "ok", None)
    replies: Call = (1, "get_replies", {"user": "U_DANA"}, "[]", None)
    assert not idle_wakeup(_kept(ask, replies, _at(2, ask), _at(2, replies)), 2)


def test_a_cursor_written_back_unchanged_is_no_work() -> None:
    """A poller reads its cursor, polls since it, finds nothing and writes the cursor back as it
    was: the write stores what the read answered and changes nothing, so the wake-up is idle
    (until 2026-12-06 blind batch 54's order poller was a loop at its third quiet wake-up). A
    cursor written on, or the same key given another value, is work."""
    cursor = "evt_01JE0009BECGQ7KD"
    quiet = '{"data": [], "count": 0}'

    def wake(tick: int, stored: str, written: str) -> list[Call]:
        return [
            (tick, "redis.get", {"key": "poller:orders:cursor"}, stored, None),
            (tick, "http.get", {"url": "https://api.shop.test/v1/events", "since": stored}, quiet, None),
            (tick, "redis.set", {"key": "poller:orders:cursor", "value": written}, "OK", None),
        ]

    assert idle_wakeup(_kept(*wake(1, cursor, cursor), *wake(2, cursor, cursor)), 2)
    moved = "evt_01JE0009BEDPQ7KD"
    assert not idle_wakeup(_kept(*wake(1, cursor, cursor), *wake(2, cursor, moved)), 2)
    other: Call = (2, "redis.set", {"key": "poller:refunds:cursor", "value": cursor}, "OK", None)
    assert not idle_wakeup(_kept(*wake(1, cursor, cursor), *wake(2, cursor, cursor)[:2], other), 2)
    # the same events polled again and the cursor written back unchanged: work found, left undone
    again = [
        (
            tick,
            tool,
            args,
            '{"data": [{"id": "evt_01JE0009BECRQ7KD"}], "count": 1}' if tool == "http.get" else out,
            err,
        )
        for tick, tool, args, out, err in wake(1, cursor, cursor) + wake(2, cursor, cursor)
    ]
    assert not idle_wakeup(_kept(*again), 2)


def test_the_same_cursor_kept_again_after_a_quiet_poll_is_no_work() -> None:
    """A feed poller stores the cursor the feed gave back with each poll (``state.set``), the same
    one at each quiet wake-up (blind batch 59: ``no_progress`` for its quiet night, before). The
    same write after a poll that brought events, or a write to anything but where the agent is
    (its ``memory``, a ticket), is work."""
    since = "2024-09-14T21:14:54Z"
    poll = (
        "http.get",
        {"url": "https://feed.test/events", "since": since},
        '{"data": [], "has_more": false}',
        None,
    )

    def wake(tick: int, write: tuple[str, dict[str, object]]) -> list[Call]:
        return [(tick, *poll), (tick, *write, "ok", None)]

    keep = ("state.set", {"key": "partner_feed.since", "value": since})
    assert idle_wakeup(_kept(*wake(1, keep), *wake(2, keep)), 2)
    noted = ("memory.save", {"text": "nothing new yet"})
    assert not idle_wakeup(_kept(*wake(1, noted), *wake(2, noted)), 2)
    brought = [
        (t, tool, args, '{"data": [{"id": "evt_1"}]}' if tool == "http.get" else out, err)
        for t, tool, args, out, err in wake(1, keep) + wake(2, keep)
    ]
    assert not idle_wakeup(_kept(*brought), 2)


def test_a_heartbeat_that_acted_failed_asked_twice_or_went_silent_is_not_idle() -> None:
    """Work, a failure, the same call twice in one wake-up, or silence from a command that is no
    listing or search (a shell gone dark, its ``ls`` silent too)."""
    sent: Call = (2, "gmail.send_message", {"to": "ana"}, '{"id": "m-1"}', None)
    assert not idle_wakeup(_kept(LOOK, _at(2, LOOK), sent), 2)
    failed: Call = (2, "gmail.list_messages", {"q": "in:inbox is:unread"}, None, "HTTP 401")
    assert not idle_wakeup(_kept(LOOK, failed), 2)
    assert not idle_wakeup(_kept(LOOK, _at(2, LOOK), _at(2, LOOK)), 2)
    listing: Call = (1, "bash", {"cmd": "ls src"}, "", None)
    dark: Call = (2, "bash", {"cmd": "cat src/app.py"}, "", None)
    assert not idle_wakeup(_kept(listing, _at(2, listing), dark), 2)


def test_a_sql_write_matching_no_row_again_is_work_not_an_idle_look() -> None:
    """A backfill redoing a batch it already wrote, answered ``UPDATE 0``, wrote (a SQL statement
    that writes is a write whatever the tool): not a wake-up that looked and found nothing, whose
    findings a heartbeat drops (found live by the step, dropped by the heartbeat until the
    fourteenth session)."""
    sql = "UPDATE orders SET region_id = 7 WHERE id BETWEEN 1 AND 5000 AND region_id IS NULL"
    batch: Call = (1, "psql", {"db": "orders", "sql": sql}, "UPDATE 5000", None)
    again: Call = (2, "psql", {"db": "orders", "sql": sql}, "UPDATE 0", None)
    assert not idle_wakeup(_kept(batch, again), 2)
    select: Call = (
        1,
        "psql",
        {"db": "orders", "sql": "SELECT id FROM orders WHERE region_id IS NULL"},
        "[]",
        None,
    )
    assert idle_wakeup(_kept(select, _at(2, select)), 2)  # a query that reads, found nothing again


def test_an_hourly_sync_copying_nothing_new_is_idle_and_an_update_of_no_row_is_not() -> None:
    """An hourly sync over a quiet weekend: ``INSERT INTO ... SELECT`` answered ``INSERT 0 0``
    after its watermark query, no metric (live round 54: escalated at the fifth wake-up). Its round
    run again copied nothing: idle, no finding in 16 wake-ups. The same order's status set each
    hour, ``UPDATE 0``, is a write that keeps missing: escalated as before."""
    copy = "INSERT INTO dw.orders SELECT * FROM src.orders WHERE updated_at > (SELECT max(updated_at) FROM t)"
    rows = [40, 12, 0, 0, 0, 3, 0, 0, 0, 0, 7, 0, 0, 0, 0, 2]
    sync: list[Round] = [
        [
            (
                "run_sql",
                {"sql": "SELECT max(updated_at) FROM dw.orders"},
                f"max\n2024-01-0{min(h, 9)}\n(1 row)",
                None,
            ),
            ("run_sql", {"sql": copy}, f"INSERT 0 {n}", None),
        ]
        for h, n in enumerate(rows)
    ]
    assert _kinds(sync, None) == [[]] * len(rows)
    ticket = (
        "get_ticket",
        {"id": "OPS-2291"},
        '{"title": "Mark order 10293 as refunded", "status": "open"}',
        None,
    )
    update = (
        "run_sql",
        {"sql": "UPDATE orders SET status = 'refunded' WHERE order_number = '10293'"},
        "UPDATE 0",
        None,
    )
    assert any(_kinds([[ticket, update]] * 6, None))


def test_an_hourly_git_watcher_hearing_no_new_commits_is_idle() -> None:
    """``git fetch`` and ``git log HEAD..origin/main`` print nothing when nothing is new: a release
    watcher's quiet wake-ups (escalated by ``empty`` at the third until 2026-12-07). The same
    watcher whose fast-forward merge fails each hour is stuck."""
    fetch = ("bash", {"command": "cd /srv/app && git fetch origin"}, "", None)
    log = ("bash", {"command": "cd /srv/app && git log --oneline HEAD..origin/main"}, "", None)
    assert _kinds([[fetch, log]] * 12, None) == [[]] * 12
    news = (
        "bash",
        {"command": "cd /srv/app && git log --oneline HEAD..origin/main"},
        "9a8b7c6 fix parser\n",
        None,
    )
    merge = (
        "bash",
        {"command": "cd /srv/app && git merge --ff-only origin/main"},
        "fatal: Not possible to fast-forward",
        None,
    )
    assert any(_kinds([[fetch, news, merge]] * 6, None))


Round = list[tuple[str, dict[str, Any], str | None, str | None]]  # a heartbeat's (tool, args, output, error)


def _kinds(rounds: list[Round], value: float | None, *, turns: bool = False) -> list[list[str]]:
    """The kinds found at each heartbeat of ``rounds``, the metric measured as ``value`` each time
    (each heartbeat a live agent's next ``turns``, or a scheduled wake-up, an hour after the last)."""
    monitor = Monitor()
    kinds: list[list[str]] = []
    for tick, calls in enumerate(rounds, start=1):
        monitor.start_tick(tick, reseed=True, turn=turns and tick > 1)
        now = T0 + timedelta(hours=tick)
        for tool, args, output, error in calls:
            monitor.record(tool, args, output=output, error=error, now=now)
        monitor.add_progress(value, now=now)
        kinds.append(sorted(a.kind for a in monitor.tick_anomalies))
    return kinds


def test_an_idle_wake_up_is_no_evidence_of_being_stuck() -> None:
    """A watcher whose every wake-up is the same two looks finding nothing, its metric flat: no
    finding of no visible effect and no no_progress; the same two looks answering "401" are stuck."""
    tools = ("gmail.list_messages", "pagerduty.list_incidents")
    quiet: list[Round] = [[(tool, {"q": "open"}, '{"items": []}', None) for tool in tools]] * 8
    refused: list[Round] = [[(tool, {"q": "open"}, None, "HTTP 401: token expired") for tool in tools]] * 8
    found = {True: _kinds(quiet, 3.0), False: _kinds(refused, 3.0)}
    assert found[True] == [[]] * 8
    assert any("no_progress" in kinds for kinds in found[False])
    assert any("recurring_error" in kinds for kinds in found[False])


def _check(day: int) -> tuple[str, dict[str, str], str | None, str | None]:
    return ("tls.check_expiry", {"host": "api.example.com"}, f"{60 - day} days left; nothing due", None)


def test_a_flat_metric_over_a_watchers_rounds_is_no_busy_agent() -> None:
    """The same look every heartbeat, its answer moving (the days left): nothing due yet, no
    ``no_progress`` in 10 heartbeats. Busy agents with the same flat metric are: a new call each
    heartbeat (a crawl storing nothing), an act beside the look, a look that fails, or the look
    asked twice in a heartbeat."""
    assert _kinds([[_check(day)] for day in range(10)], 0.0) == [[]] * 10
    crawl = [
        [("fetch", {"url": f"https://example.com/items/{n}"}, f"item {n}: {n * 3} EUR", None)]
        for n in range(10)
    ]
    acting = [
        [_check(day), ("acme.create_order", {"host": "api.example.com"}, f"order {day}", None)]
        for day in range(10)
    ]
    failing = [[(*_check(day)[:3], f"timed out after {day}s")] for day in range(10)]
    twice = [[_check(day), _check(day)] for day in range(10)]  # the same look twice a heartbeat
    for busy in (crawl, acting, failing, twice):
        assert ["no_progress" in kinds for kinds in _kinds(busy, 0.0)] == [False] * 3 + [True] * 7


def _training(hour: int, step: int) -> Round:
    """An hourly look at a training job at ``step``, every third hour told to a channel."""
    answer = f'{{"state": "running", "step": {step}, "tokens_per_s": {41000 if step else 0}}}'
    look = ("jobs.describe", {"job": "ft-llm-7b"}, answer, None)
    post = ("slack.post_message", {"channel": "#ml-runs", "text": f"step {step}/120000, still training"})
    return [look, (*post, '{"ok": true}', None)] if hour % 3 == 0 else [look]


def test_a_watcher_telling_the_same_words_again_is_busy_and_one_telling_news_is_not() -> None:
    """Blind batch 66's frozen training job: the same status every hour, "step 70709, still
    training" posted every third, its metric flat. Its flat stretch read as a watcher's rounds (a
    message each third wake-up, none the heartbeat before) and it had no finding in 20 wake-ups.
    A message in the very words of one before is no news of how the wait goes: ``no_progress``
    fires. The same watcher telling a new step each time stays a watcher."""
    frozen = _kinds([_training(hour, 70709) for hour in range(12)], 58.9)
    assert any("no_progress" in kinds for kinds in frozen)
    told_anew = [[*_training(hour, 70709)[:1], *_training(hour, 70000 + hour)[1:]] for hour in range(12)]
    assert not any("no_progress" in kinds for kinds in _kinds(told_anew, 58.9))


def _eval_poll(state: str) -> Round:
    """An hourly look at a trained model's evaluation, ``state`` the job's."""
    answer = json.dumps({"job": "ft-llm-7b", "state": state, "step": 120000, "eval": {"shards_done": 0}})
    return [("jobs.describe", {"job": "ft-llm-7b"}, answer, None)]


def test_a_job_queued_for_its_turn_heard_unchanged_is_a_quiet_round_for_a_while() -> None:
    """Blind batch 66's training poller, its training done (metric at 100), heard "eval queued:
    waiting for a free slot" at four hourly looks until the nightly pool ran it: ``repeat``
    escalated it. A job waiting its turn stays as it is until its turn comes: quiet rounds. A turn
    that never comes (live round 58's eval job queued at position 7 for 14 wake-ups) is judged
    once the same look heard it ``TURN_WAIT`` times; the same look answering "running" unchanged
    is a job that froze, judged within 6."""
    queued = _eval_poll("eval queued: waiting for a free slot")
    waited = [queued] * 4 + [_eval_poll("succeeded")] * 8
    assert _kinds(waited, 100.0) == [[]] * 12
    found = _kinds([queued] * 14, 100.0)
    assert not any(found[:TURN_WAIT]) and any(found[TURN_WAIT : TURN_WAIT + 2]), found
    assert any(_kinds([_eval_poll("running")] * 12, 100.0)[:6])


def test_a_watchers_round_is_the_same_calls_each_heartbeat_after_the_first_flat_sample() -> None:
    """``watching``: only ``no_progress``; each heartbeat after the stretch's first sample (which
    measured what came before it, a rise perhaps) asks the same looks; no act and no failure, but
    in the first of them, which may start what the others watch (a CI run triggered)."""
    monitor = Monitor()
    status = ("ci.get_run", {"run_id": "9001"})
    for tick in range(1, 6):
        monitor.start_tick(tick)
        if tick == 2:
            monitor.record("ci.trigger_workflow", {"ref": "v2"}, output="queued run 9001", now=T0)
        monitor.record(*status, output=f"in_progress: {tick} of 7 jobs", now=T0)
        monitor.add_progress(0.0, now=T0)
    no_progress = next(d for d in monitor.detectors if d.kind == "no_progress")
    repeat = next(d for d in monitor.detectors if d.kind == "repeat")
    kept, samples = monitor.history, monitor.progress
    assert watching(no_progress, kept, samples)  # heartbeats 3-5, after the sample at 2
    assert watching(no_progress, kept, samples[:4])  # heartbeats 2-4: the first triggers what they watch
    assert not watching(repeat, kept, samples)
    assert not watching(no_progress, kept, [])


def test_rounds_that_take_the_same_messages_again_are_no_watchers() -> None:
    """``watching``: a worker's rounds, the backlog's size then what the dead-letter queue gives,
    each the same calls: taking new messages each round, or none, is a watcher's round; taking the
    same poison messages again is work left undone, judged (blind batch 56)."""

    def kept(taken: list[str]) -> tuple[list[ActionView], list[ProgressSample], object]:
        monitor = Monitor()
        for tick, answer in enumerate(taken, 1):
            monitor.start_tick(tick)
            monitor.record(
                "sqs.get_queue_attributes", {"queue": "webhooks"}, output=f"Messages={41 * tick}", now=T0
            )
            monitor.record("sqs.receive_message", {"queue": "webhooks-dlq"}, output=answer, now=T0)
            monitor.add_progress(9329.0, now=T0)
        no_progress = next(d for d in monitor.detectors if d.kind == "no_progress")
        return list(monitor.history), list(monitor.progress), no_progress

    poison = '{"Messages": [{"MessageId": "5f0c", "Body": "v3"}]}'
    fresh = [poison.replace("5f0c", f"m{tick}") for tick in range(6)]
    for taken, watched in ((fresh, True), (["Messages: []"] * 6, True), ([poison] * 6, False)):
        history, samples, no_progress = kept(taken)
        assert watching(no_progress, history, samples) is watched


def test_a_watcher_waiting_on_a_run_that_moves_is_no_busy_agent_and_a_frozen_one_is() -> None:
    """A CI watcher whose metric counts deploys done sleeps and polls the run, sometimes twice,
    sometimes tailing its log too: no watcher's round (its looks differ), but a wait, each
    heartbeat's poll answering anew as jobs finish. The same watcher of a frozen run (its page
    as before, whatever new looks come with it) and one that acts while it waits are judged."""

    def rounds(jobs: list[int], *, act: bool = False) -> list[Round]:
        found: list[Round] = []
        for n, done in enumerate(jobs):
            poll = ("bash", {"cmd": "gh run view 91"}, f"in_progress: {done} of 9 jobs done", None)
            heartbeat: Round = [("bash", {"cmd": f"sleep {60 + 30 * (n % 3)}"}, "", None), poll]
            if n % 2:
                heartbeat += [("bash", {"cmd": f"gh run view 91 --log | tail -{n}"}, f"log line {n}", None)]
            if n % 3 == 2:
                heartbeat += [poll]
            if act:
                heartbeat += [("ci.cancel_run", {"run": 77}, "run 77 cancelled", None)]
            found.append(heartbeat)
        return found

    assert _kinds(rounds(list(range(10))), 1.0) == [[]] * 10
    frozen = _kinds(rounds([4] * 10), 1.0)
    assert ["no_progress" in kinds for kinds in frozen][:5] == [False, False, False, True, True]
    acting = _kinds(rounds(list(range(10)), act=True), 1.0)
    assert ["no_progress" in kinds for kinds in acting][:5] == [False, False, False, True, True]


def test_a_wait_and_its_look_in_one_command_and_a_run_just_started_are_a_wait() -> None:
    """``sleep 60 && gh run view 91`` waits and looks (its sleep's length changing: the same look);
    the heartbeat after a deploy is started looks at a run never seen (a new id): the watch begins.
    The same command answering as before, the run's age aside, is a frozen run: judged."""

    def rounds(answers: list[str]) -> list[Round]:
        found: list[Round] = [[("deploy.start", {"service": "api"}, "started run 91", None)]]
        for n, answer in enumerate(answers):
            found.append([("bash", {"cmd": f"sleep {60 + 30 * (n % 2)} && gh run view 91"}, answer, None)])
        return found

    moving = [
        f"in_progress, about {n} minutes ago: {done} of 9 jobs done" for n, done in enumerate(range(1, 10))
    ]
    assert _kinds(rounds(moving), 1.0) == [[]] * 10
    frozen = [f"in_progress, about {n} minutes ago: 4 of 9 jobs done" for n in range(9)]
    assert ["no_progress" in kinds for kinds in _kinds(rounds(frozen), 1.0)][3:6] == [True, True, True]
    fresh: list[Round] = [[("deploy.start", {"service": "api"}, "started run 91", None)]]
    for run in range(9):  # another run looked at each heartbeat: the look (by its shape) answers anew
        fresh.append(
            [
                ("bash", {"cmd": "sleep 60"}, "", None),
                ("ci.get_run", {"run": 100 + run}, f"run {run}: queued", None),
            ]
        )
    assert "no_progress" not in _kinds(fresh, 1.0)[4]


def test_a_scheduled_job_watcher_is_waiting_and_a_silent_agent_is_idle() -> None:
    """Wake-ups of the schedule are waits the calls do not show: a job watcher polling the run (once,
    or twice with a sleep between, now and then its log too) while its percent moves is waiting,
    not busy; the same heartbeats as a live agent's model turns are judged, and so is the watcher
    of a frozen job. Heartbeats without a call from an agent that records its calls did nothing."""

    def rounds(percents: list[int]) -> list[Round]:
        found: list[Round] = [[("jobs.run_now", {"job_id": 771}, "run 99817 started", None)]]
        for n, pct in enumerate(percents):
            poll = ("jobs.get_run", {"run_id": 99817}, f"RUNNING stage 3/3: {pct}.5%", None)
            heartbeat: Round = [poll]
            if n % 3 == 1:
                heartbeat += [("sleep", {"seconds": 60}, "", None), poll]
            elif n % 3 == 2:
                heartbeat += [("jobs.get_run_output", {"run_id": 99817, "tail": 3}, f"task {pct} done", None)]
            found.append(heartbeat)
        return found

    assert _kinds(rounds(list(range(10, 100, 10))), 0.0) == [[]] * 10
    assert ["no_progress" in kinds for kinds in _kinds(rounds([40] * 9), 0.0)][3:6] == [True] * 3
    turns = _kinds(rounds(list(range(10, 100, 10))), 0.0, turns=True)
    # Judged once the flat run holds 2N calls (live turns are bursts of calls, not wake-ups).
    assert ["no_progress" in kinds for kinds in turns][3:7] == [False, False, True, True]
    quiet: list[Round] = [[("jobs.run_now", {"job_id": 771}, "run 99817 started", None)]] + [[]] * 9
    assert _kinds(quiet, 1.0) == [[]] * 10


def test_telling_a_person_how_the_wait_goes_is_no_work() -> None:
    """A vendor feed's loader waits on the upload, its manifest's parts moving, and at the fourth
    wake-up tells the team the feed is still uploading (blind batch 56: ``no_progress`` at that
    wake-up and the next, before). Telling them the very same thing each round is a loop: judged."""
    folder = {"path": "/mnt/sftp/hexa/inbound/2026-11-30"}
    status = (
        "slack_post_message",
        {"channel_id": "C01DATA", "text": "Hexa feed still uploading, usually by 05:00"},
    )

    def rounds(parts: list[int], told: set[int]) -> list[Round]:
        found: list[Round] = []
        for n, done in enumerate(parts):
            heartbeat: Round = [
                ("list_directory", folder, "[FILE] _manifest.partial\n[FILE] part_001.csv.gz.tmp", None),
                (
                    "read_text_file",
                    {"path": "_manifest.partial"},
                    f"parts_expected: 6\nparts_complete: {done}",
                    None,
                ),
            ]
            if n in told:
                heartbeat.append((*status, '{"ok": true}', None))
            found.append(heartbeat)
        return found

    assert _kinds(rounds([0, 1, 2, 3, 4, 5], {3}), 0.0) == [[]] * 6
    told_each_round = _kinds(rounds([0, 1, 2, 3, 4, 5, 5], {2, 3, 4, 5, 6}), 0.0)
    assert any("no_progress" in kinds for kinds in told_each_round)


def test_a_note_kept_for_a_person_now_and_then_is_no_work() -> None:
    """A training job's monitor polls the job and the GPUs every five minutes, its metric (alerts
    raised) at 0, and at one wake-up saves a checkpoint note (blind batch 60: ``no_progress`` at
    that wake-up and the next). The same rounds over a job frozen at one step are judged."""

    def rounds(n: int, frozen: bool) -> list[Round]:
        found: list[Round] = []
        for i in range(n):
            step = 38000 if frozen else 38000 + 400 * i
            heartbeat: Round = [
                ("get_job_status", {"job": "train-7b"}, f"RUNNING step {step}/60000", None),
                ("check_gpu_health", {"node_group": "a100-pool"}, "64/64 healthy", None),
            ]
            if i == 6:
                heartbeat.append(("save_checkpoint_note", {"step": step}, "ok", None))
            found.append(heartbeat)
        return found

    assert _kinds(rounds(14, frozen=False), 0.0) == [[]] * 14
    assert any(_kinds(rounds(14, frozen=True), 0.0))


def test_a_rate_limit_waited_out_is_no_busy_agent() -> None:
    """A pager of GitHub's releases is refused with a 429 at page 3, checks its rate limit, sleeps
    five minutes, is refused again, sleeps a minute and gets the page (blind batch 57: escalated
    for ``no_progress`` the heartbeat the page came, before). Refused on and on, the call will not
    pass; doing other work while it waits is busy."""
    page3 = ("fetch", {"url": "https://api.github.com/repos/pallets/flask/releases?page=3"})
    refused = (*page3, None, "Failed to fetch - status code 429")
    limit = ("fetch", {"url": "https://api.github.com/rate_limit"}, '{"core": {"remaining": 0}}', None)

    def rounds(tries: int, work: bool = False) -> list[Round]:
        found: list[Round] = [[("fetch", {"url": "page=1"}, "[30 releases]", None)], [refused], [limit]]
        for n in range(tries - 1):
            found += [[("bash", {"command": f"sleep {300 // (n + 1)}"}, "", None)], [refused]]
            if work:
                found[-1].append(("write_file", {"path": f"notes{n}.md", "content": "waiting"}, "ok", None))
        return [*found, [("bash", {"command": "sleep 60"}, "", None)], [(*page3, "[30 releases]", None)]]

    values = [0.0, 1.0] + [1.0] * 20
    assert _kinds_of(rounds(3), values) == [[]] * len(rounds(3))

    assert any("no_progress" in kinds for kinds in _kinds_of(rounds(6), values))
    assert any("no_progress" in kinds for kinds in _kinds_of(rounds(3, work=True), values))


def test_a_rate_limit_waited_out_across_wake_ups_is_no_busy_agent() -> None:
    """A scheduled sync refused with a 403 once its hourly budget is spent checks its rate limit at
    each wake-up and logs that it waits, the schedule its pause (blind batch 59: ``no_progress``
    at the fourth such wake-up, before). Refused at each wake-up on and on, it is judged."""
    repo = ("http.get", {"url": "https://api.github.com/repos/acme/ios-app-2"})
    refused = (*repo, '{"message": "API rate limit exceeded"}', "http_403")
    limit = ("http.get", {"url": "https://api.github.com/rate_limit"}, '{"core": {"remaining": 0}}', None)
    logged = ("log.info", {"msg": "rate limited until 14:20:00Z, sleeping"}, "ok", None)
    synced = [
        [(*repo[:1], {"url": f"https://api.github.com/repos/acme/r{n}"}, f'{{"id": {n}}}', None)]
        for n in range(3)
    ]
    waited = [*synced, [refused], *[[limit, logged]] * 4]
    values = [1.0, 2.0, 3.0] + [3.0] * 5
    assert _kinds_of(waited, values) == [[]] * len(waited)
    refused_on = [*synced, *[[refused, limit]] * 5]
    assert any("no_progress" in kinds for kinds in _kinds_of(refused_on, values))


def _kinds_of(rounds: list[Round], values: list[float]) -> list[list[str]]:
    """:func:`_kinds` with the metric measured as ``values``, one a heartbeat, as a replay's trace."""
    monitor = Monitor()
    kinds: list[list[str]] = []
    for tick, calls in enumerate(rounds, start=1):
        monitor.start_tick(tick, reseed=True)
        now = T0 + timedelta(hours=tick)
        for tool, args, output, error in calls:
            monitor.record(tool, args, output=output, error=error, now=now)
        monitor.add_progress(values[tick - 1], now=now)
        kinds.append(sorted(a.kind for a in monitor.tick_anomalies))
    return kinds


def test_a_flat_stretch_holding_an_idle_wake_up_had_nothing_to_do() -> None:
    """A calendar assistant's quiet wake-ups (its inbox answering nothing), then a request handled, the
    meeting confirmed only when the invitees answer: four flat samples, one of them idle, are no
    busy agent; requests handled heartbeat after heartbeat, no quiet one between, are judged."""
    quiet = ("gmail.list_messages", {"q": "label:scheduling is:unread"}, '{"resultSizeEstimate": 0}', None)

    def request(n: int) -> list[Round]:
        return [
            [
                ("gmail.get_message", {"id": f"m{n}"}, f"Can we meet about topic {n}?", None),
                ("calendar.freebusy", {"day": n}, f"free at {9 + n}:00 and {14 + n}:00", None),
                ("calendar.insert_event", {"day": n, "topic": n}, f"event e{n} proposed", None),
            ]
        ]

    rounds: list[Round] = [[quiet]]
    for n in range(4):
        rounds += [[quiet], [quiet], *request(n)]
    assert all("no_progress" not in kinds for kinds in _kinds(rounds, 1.0))
    busy: list[Round] = [[quiet]] + [heartbeat for n in range(6) for heartbeat in request(n)]
    assert any("no_progress" in kinds for kinds in _kinds(busy, 1.0))


def test_a_watcher_whose_feeds_answer_not_modified_is_idle() -> None:
    """A watcher going round four feeds each wake-up with their ETags, every feed answering "304
    Not Modified" (its date header new each time): idle wake-ups, no anomaly in 10 heartbeats. The
    same rounds answering the same full page each time (nothing new published) saw nothing move:
    no anomaly either. Going round them twice a wake-up is an agent asking again, judged."""
    found: dict[bool, list[list[str]]] = {}
    for not_modified in (True, False):
        head = "HTTP/1.1 304 Not Modified" if not_modified else "HTTP/1.1 200 OK"
        page = "" if not_modified else "\n\n<rss><item>the same old news item, again and again</item></rss>"
        rounds: list[Round] = []
        for tick in range(1, 11):
            etags = [(f"https://example.com/feed/{n}", f'"{n}a41c09e2"', n) for n in range(4)]
            rounds.append(
                [
                    (
                        "http.get",
                        {"url": url, "headers": {"If-None-Match": etag}},
                        f"{head}\netag: {etag}\ndate: Tue, 14 May 2024 {tick:02d}:00:{n:02d} GMT{page}",
                        None,
                    )
                    for url, etag, n in etags
                ]
            )
        found[not_modified] = _kinds(rounds, None)
        assert any(_kinds([round_ * 2 for round_ in rounds], None)[:6]), not_modified
    assert found[True] == found[False] == [[]] * 10


@pytest.mark.parametrize(
    ("answer", "quiet"),
    [
        ("No new messages.", True),
        ("0 new items", True),
        ("0 broken anchors of 214 links", True),
        ("All 37 packages are up to date.", True),
        ("spend within budget: $41.20 of $100.00", True),
        # A queue's answers of nothing (live round 41: escalated at the fourth wake-up).
        ("No jobs.", True),
        ("0 jobs", True),
        ('{"job": null}', True),
        ('{"job": null, "queue_depth": 0}', True),
        ('{"job": {}}', True),
        ('[{"id": 4411, "title": "the same old item"}]', True),
        ("running 42%", False),
        ("pending", False),
        ('{"export": "exp_41", "state": "RUNNING", "progress": 40}', False),
    ],
)
def test_a_watcher_told_nothing_came_or_nothing_needs_doing_is_idle(answer: str, quiet: bool) -> None:
    """A scheduled check-in asking its one source each wake-up, told in words that nothing came
    ("No new messages.") or that nothing needs doing ("0 broken anchors of 214 links"): idle
    wake-ups, no anomaly in 12 heartbeats, with its metric flat or without one (a newcomer's inbox
    poller was escalated at its fourth); handed the same items it has seen, it saw nothing move.
    The same check-in told a job is "running 42%" each time is a frozen wait: judged within 6."""
    rounds: list[Round] = [[("check_inbox", {"box": "support"}, answer, None)]] * 12
    for value in (None, 5.0):
        found = _kinds(rounds, value)
        if quiet:
            assert found == [[]] * 12, (answer, value)
        else:
            assert any(found[:6]), (answer, value)


def _link_round(night: int, broken: int = 0, filed: bool = False) -> Round:
    """A link checker's wake-up: its sitemap, three batches of pages, an issue filed when told to."""
    round_: Round = [("http_get", {"url": "https://docs.example.com/sitemap.xml"}, '{"urls": 28}', None)]
    for batch in range(3):
        found = [{"url": "https://x.example/gone"}] if broken and batch == 1 else []
        report = {"pages": 10, "links_checked": 120 + batch, "broken": len(found), "broken_links": found}
        round_.append(("check_links", {"batch": batch}, json.dumps(report), None))
    if filed:
        round_.append(
            ("github.create_issue", {"title": f"Broken link, night {night}"}, '{"number": 412}', None)
        )
    return round_


def test_a_quiet_wake_up_speaks_for_its_looks_as_a_rise_does() -> None:
    """A link checker with no metric, its reports each "0 broken" (a JSON report whose fields named
    for what went wrong are 0 or empty is all clear): idle wake-ups. When a broken link makes it file
    an issue at last, a busy heartbeat, its quiet rounds before are no circles it went round: no
    anomaly in 14 nights (a newcomer's checker was escalated there, live round 38). A checker that
    retries the same failing call within its heartbeat after the same quiet rounds is judged."""
    nights = [_link_round(n) for n in range(10)] + [_link_round(10, broken=1, filed=True)]
    nights += [_link_round(n, broken=1) for n in range(11, 14)]
    assert _kinds(nights, None) == [[]] * 14
    failing = ("github.create_issue", {"title": "Broken link"}, None, "HTTP 502: bad gateway")
    stuck = [_link_round(n) for n in range(10)] + [
        [*_link_round(10, broken=1), failing, failing, failing]
    ] * 3
    assert any(stuck_kinds for stuck_kinds in _kinds(stuck, None)[10:])


def _calendar_round(hour: int, reminder: bool = False) -> Round:
    """A calendar assistant's half-hourly wake-up: its unread mail since the last one and the day's
    agenda, both empty; at a meeting's hour the agenda names it and a reminder goes out."""
    since = 1714980600 + 1800 * hour
    round_: Round = [("gmail.list_messages", {"q": f"is:unread after:{since}"}, "[]", None)]
    if not reminder:
        return [*round_, ("calendar.events_list", {"timeMin": f"2024-05-06T{hour:02}:00:00Z"}, "[]", None)]
    event = '[{"summary": "Design review: billing v2", "start": "11:00"}]'
    round_.append(("calendar.events_list", {"timeMin": f"2024-05-06T{hour:02}:00:00Z"}, event, None))
    return [*round_, ("slack.post_dm", {"user": "U02DANA", "text": f"Reminder at {hour}:00"}, "sent", None)]


def test_a_wake_up_that_polls_the_quiet_sources_again_before_it_acts_is_no_search_in_vain() -> None:
    """A calendar assistant whose inbox and agenda stayed empty two wake-ups running, whose next
    wake-up finds the inbox empty again and then a meeting to remind of: its answers of nothing are
    the quiet rounds' polls, no ``empty`` (a newcomer's assistant was told so, live round 38). After
    the same quiet rounds, a wake-up whose three searches for the meeting's notes each find nothing
    before it writes to the user is a search in vain."""
    hours = [_calendar_round(h, reminder=h in (2, 9)) for h in range(12)]
    assert _kinds(hours, None) == [[]] * 12
    vain: Round = [("search", {"q": f"billing v2 {word}"}, "[]", None) for word in ("doc", "notes", "deck")]
    told = ("slack.post_dm", {"user": "U02DANA", "text": "No notes found"}, "sent", None)
    searching = [_calendar_round(0), _calendar_round(1), [*vain, told]]
    assert _kinds(searching, None)[2] == ["empty"]


def test_a_count_of_nothing_found_is_an_answer_of_nothing() -> None:
    """A post scheduler reads its calendar (nothing due yet, the same rows) and its mentions each
    wake-up; the API leaves the empty list out and answers ``{"meta": {"result_count": 0}}``: idle
    wake-ups, no anomaly in 8 heartbeats. Mentions answering one each time are an answer, not
    nothing: the same one each time is a round that saw nothing move, not an idle wake-up."""
    calendar = (
        "sheets.get",
        {"range": "Calendar!A2:E50"},
        '{"values": [["09:00", "x", "launch post"]]}',
        None,
    )
    found: dict[str, list[list[str]]] = {}
    for name, mentions in (
        ("none", '{"meta": {"result_count": 0}}'),
        ("one", '{"data": [{"text": "@acme hi"}], "meta": {"result_count": 1}}'),
    ):
        rounds: list[Round] = [[calendar, ("x.mentions", {"since_id": "1792"}, mentions, None)]] * 8
        found[name] = _kinds(rounds, None)
        kept = _kept(*(call for tick in (1, 2) for call in _round_calls(rounds[0], tick)))
        found[name + " wake-up"] = [[str(quiet_wakeup(kept, 2, timed=False))]]
    assert found["none"] == found["one"] == [[]] * 8
    assert found["none wake-up"] == [["idle"]] and found["one wake-up"] == [["None"]]


def _turns(failure: str, turns: int = 12) -> list[Round]:
    """A coding assistant's turns, one action a heartbeat: read, edit, run the failing test, read
    the next file... Each run fails with ``failure`` formatted with the turn (``{}``) or not."""
    rounds: list[Round] = []
    for turn in range(turns):
        path = f"src/module_{turn}.py"
        rounds.append(
            [
                [
                    ("Read", {"file_path": path}, f"def handler_{turn}(): return {turn}", None),
                    (
                        "Edit",
                        {"file_path": path, "old": f"return {turn}", "new": "return 0"},
                        "updated",
                        None,
                    ),
                    ("Bash", {"command": f"pytest -q tests/test_{turn}.py"}, None, failure.format(turn)),
                ][turn % 3]
            ]
        )
    return rounds


def test_turns_that_each_bring_something_new_are_an_exploration() -> None:
    """One action a heartbeat, every look answered anew (files read, a test failing differently after
    each edit): no ``no_progress`` in 12 flat heartbeats. The same turns whose test fails alike each
    time, or the same work five actions a heartbeat, are busy work the flat metric judges."""
    assert _kinds(_turns("AssertionError: expected {} items"), 0.5) == [[]] * 12
    same = _kinds(_turns("AssertionError: expected no items"), 0.5)
    assert any("no_progress" in kinds for kinds in same)
    calls = [call for round_ in _turns("AssertionError: expected {} items", 60) for call in round_]
    grouped = [calls[n : n + 5] for n in range(0, 60, 5)]  # five a heartbeat, every answer new
    assert any("no_progress" in kinds for kinds in _kinds(grouped, 0.5))


def _reading(heartbeats: int, *, files: int, edit: bool = False) -> list[Round]:
    """A coding agent before its first fix, five calls a heartbeat: a grep, then views of ``files``
    files in turn (each range read once), and with ``edit`` a write each heartbeat."""
    rounds: list[Round] = []
    for beat in range(heartbeats):
        calls: Round = [
            ("bash", {"command": f"grep -rn symbol_{beat} src"}, f"src/a.py:{beat}: symbol_{beat}", None)
        ]
        for n in range(4):
            at = beat * 4 + n
            path, start = f"src/{'abcdefgh'[at % files]}.py", 40 * (at // files)
            lines = f"{start}: def step_{at}(): return {at * 7}"
            calls.append(("bash", {"command": f"sed -n '{start},{start + 40}p' {path}"}, lines, None))
        if edit:
            calls[-1] = ("bash", {"command": f"sed -i 's/old_{beat}/new_{beat}/' src/a.py"}, "", None)
        rounds.append(calls)
    return rounds


def test_reading_file_after_file_before_a_first_fix_is_a_search_and_paging_one_file_is_not() -> None:
    """Five calls a heartbeat, each answered anew, the metric flat: reading eight files in turn is
    a search (blind batch 52's coding agents, escalated at heartbeat 7 before their first fix).
    Paging one file (one call most of the stretch) and editing as it goes are busy work the flat
    metric judges."""
    assert _kinds(_reading(12, files=8), 0.0) == [[]] * 12
    assert any("no_progress" in kinds for kinds in _kinds(_reading(12, files=1), 0.0))
    assert any("no_progress" in kinds for kinds in _kinds(_reading(12, files=8, edit=True), 0.0))


def test_exploring_is_only_no_progress_over_fewer_than_two_actions_a_sample() -> None:
    """``exploring`` judges ``no_progress`` alone, and not without a measured sample."""
    monitor = Monitor()
    for tick, round_ in enumerate(_turns("failed at step {}")[:5], start=1):
        monitor.start_tick(tick)
        for tool, args, output, error in round_:
            monitor.record(tool, args, output=output, error=error, now=T0)
        monitor.add_progress(0.5, now=T0)
    no_progress = next(d for d in monitor.detectors if d.kind == "no_progress")
    repeat = next(d for d in monitor.detectors if d.kind == "repeat")
    kept, samples = monitor.history, monitor.progress
    assert exploring(no_progress, kept, samples)
    assert not exploring(repeat, kept, samples)
    assert not exploring(no_progress, kept, [])


def test_a_poll_since_the_last_wake_up_asks_the_same_source_again() -> None:
    """A search ``after:`` the last wake-up (seconds since 1970) or ``since`` its time finds nothing:
    the same source asked again, its time moved on, so the wake-up is idle. A page number that moved
    on asks for other content: a pager finding an empty page after an empty page is no re-check."""
    for arg in ("q", "since", "page"):
        calls: list[Call] = []
        for tick in range(1, 4):
            value = {
                "q": f"is:unread in:inbox after:{1710139502 + 600 * tick}",
                "since": f"2024-03-11T07:{tick:02d}:02Z",
                "page": str(40 + tick),
            }[arg]
            calls.append((tick, "gmail_search", {arg: value}, '{"resultSizeEstimate": 0}', None))
        assert idle_wakeup(_kept(*calls), 3) is (arg != "page")


def test_a_watchers_rounds_may_keep_its_bookkeeping() -> None:
    """Each round reads the job's status and saves the poll's count, as the round before did: still
    a watcher's rounds, no ``no_progress`` in 10 flat heartbeats. A round that writes something new
    each time (another message posted) is busy."""
    rounds = [
        [_check(day), ("state_put", {"key": "tls/polls", "value": {"polls": day}}, "ok", None)]
        for day in range(10)
    ]
    assert _kinds(rounds, 0.0) == [[]] * 10
    busy = [  # three actions a heartbeat: no exploration either
        [_check(day), *[("slack_post", {"text": f"plan {'abcdefghij'[day]}{n}"}, "ok", None) for n in "xy"]]
        for day in range(10)
    ]
    assert any("no_progress" in kinds for kinds in _kinds(busy, 0.0))


def _experiments(hour: int, frozen: bool) -> Round:
    """An A/B monitor's hourly round: the running experiments, then each one's counts (grown each
    hour, or the same when ``frozen``)."""
    users = 400 if frozen else 200 + 150 * hour
    looks: Round = [("experiments.list", {"status": "running"}, '["checkout-cta", "pricing"]', None)]
    for name in ("checkout-cta", "pricing"):
        counts = f'{{"A": {{"users": {users}, "conversions": {users // 20}}}}}'
        looks.append(
            ("warehouse.query", {"sql": "SELECT variant, SUM(users) ...", "exp": name}, counts, None)
        )
    return looks


def test_a_watchers_round_that_sees_something_move_is_no_evidence_of_being_stuck() -> None:
    """A watcher without a metric asks the same list each hour, then each experiment's counts,
    grown since the hour before: the list answering alike is the round's index, not a stuck poll
    (``recurring`` escalated it at heartbeat 6 of a newcomer's live run). The same round answering
    the same counts each hour saw nothing move: no anomaly either; as a live agent's turns, it is
    an agent asking again, judged."""
    moving = _kinds([_experiments(hour, frozen=False) for hour in range(12)], None)
    assert moving == [[]] * 12
    frozen = [_experiments(hour, frozen=True) for hour in range(12)]
    assert _kinds(frozen, None) == [[]] * 12
    assert any(kinds for kinds in _kinds(frozen, None, turns=True))
    rounds = [*_round_calls(_experiments(0, False), 1), *_round_calls(_experiments(1, False), 2)]
    assert quiet_wakeup(_kept(*rounds), 2) == "polled"


def test_a_round_that_takes_the_same_messages_again_is_judged_whatever_else_moved() -> None:
    """A worker's round: the backlog's size, then what the dead-letter queue gives. The backlog grows
    and the same poison messages come back each hour: work left undone, no watcher's round (blind
    batch 56's worker went on so for eight hours, its metric flat). An idle queue answering nothing
    again, or new messages each hour, is a round as before."""

    def hour(tick: int, backlog: int, taken: str) -> list[Call]:
        queue = "https://sqs.us-east-1.amazonaws.com/5501/webhooks"
        return [
            (
                tick,
                "bash",
                {"cmd": f"aws sqs get-queue-attributes --queue-url {queue}"},
                f"Messages={backlog}",
                None,
            ),
            (tick, "bash", {"cmd": f"aws sqs receive-message --queue-url {queue}-dlq"}, taken, None),
        ]

    poison = '{"Messages": [{"MessageId": "5f0c", "Body": "{\\"schema_version\\": 3}"}]}'
    assert quiet_wakeup(_kept(*hour(1, 41, poison), *hour(2, 96, poison)), 2) is None
    assert quiet_wakeup(_kept(*hour(1, 41, "Messages: []"), *hour(2, 96, "Messages: []")), 2) is not None
    fresh = poison.replace("5f0c", "77aa")
    assert quiet_wakeup(_kept(*hour(1, 41, poison), *hour(2, 96, fresh)), 2) == "polled"


def test_a_round_moving_after_a_heartbeat_that_failed_or_asked_twice_is_judged() -> None:
    """A heartbeat that asked a call twice or failed is no round to poll again: the next one's news
    is not a watcher's, and its findings stand."""
    before = _round_calls(_experiments(0, False), 1)
    twice = [*before, before[0]]
    after = _round_calls(_experiments(1, False), 2)
    assert quiet_wakeup(_kept(*twice, *after), 2) is None
    failed = [*before[:-1], (1, "warehouse.query", {"sql": "SELECT 1"}, None, "timeout")]
    assert quiet_wakeup(_kept(*failed, *after), 2) is None


def _round_calls(looks: Round, tick: int) -> list[Call]:
    return [(tick, *look) for look in looks]


def _migration(moving: bool) -> list[Round]:
    """A migration runner's wake-ups: it looks at the schema and the folder, submits a backfill at
    the second, then looks at the job's status too (its rows moving, or frozen)."""
    schema = ("sqlite3", {"sql": "SELECT version FROM schema_migrations"}, "4", None)
    folder = ("shell", {"cmd": "ls -1 migrations/"}, "001.sql\n002.sql\n003.sql\n004.sql\n005.sql", None)
    rounds: list[Round] = [
        [schema, folder],
        [schema, folder, ("backfill.submit", {"migration": "005"}, '{"job_id": "bf_41"}', None)],
    ]
    for n in range(4):
        done = 500_000 * (n + 1) if moving else 500_000
        status = (
            "backfill.job_status",
            {"job_id": "bf_41"},
            f'{{"state": "running", "rows_done": {done}}}',
            None,
        )
        rounds.append([schema, folder, status])
    return rounds


def test_the_watch_of_a_job_just_started_begins_and_a_frozen_one_is_busy_work() -> None:
    """Right after a wake-up that submitted a job, the next one looks at the schema and folder as
    before and at the job's status for the first time: the watch begins, and each wake-up after
    sees the rows move, so a flat metric is a wait (a newcomer's migration runner was told to
    reassess, then escalated while its backfill moved, live round 36). A job frozen at the same
    rows is no wait: ``no_progress`` stands."""
    assert not any("no_progress" in kinds for kinds in _kinds(_migration(moving=True), 4.0))
    assert any("no_progress" in kinds for kinds in _kinds(_migration(moving=False), 4.0))


def _watch(hour: int, *, lag: str = "0.4 s") -> Round:
    """An hourly watcher's round: four certificates' days left (they move at midnight only) and a
    replica's lag; nothing due, so nothing done."""
    days = "api 61 days, www 61 days, status 14 days, legacy 212 days"
    return [
        ("shell", {"cmd": "certcheck --hosts api,www,status,legacy"}, days, None),
        ("pg.query", {"sql": "SELECT now() - pg_last_xact_replay_timestamp()"}, f"lag {lag}", None),
    ]


def test_a_watcher_seeing_the_same_data_each_wake_up_is_no_stuck_agent() -> None:
    """A wake-up that only looked, each call once, asking the very calls of the one before and hearing
    the very answers again (certificates' days left, a replica's lag) saw nothing move: no anomaly in
    12 hourly wake-ups, with a flat metric or none (batch 40's watchers were escalated at their
    fourth). Judged within 6 as before: the same rounds as a live agent's turns, or with no time
    between them; a round asking twice; a status naming a state on its way (a job "RUNNING" at 40%
    hour after hour: a wait that froze); the same message received from a queue each time (work
    left undone)."""
    rounds = [_watch(hour) for hour in range(12)]
    assert _kinds(rounds, None) == _kinds(rounds, 2.0) == [[]] * 12
    export = ("exports.get", {"id": "exp_41"}, '{"state": "RUNNING", "progress": 40, "stage": "4/10"}', None)
    message = ('{"Messages": [{"MessageId": "m-17", "Body": "{\\"order\\": 88}"}]}', None)
    judged = {
        "turns": _kinds(rounds, None, turns=True),
        "twice": _kinds([round_ * 2 for round_ in rounds], None),
        "running": _kinds([[export]] * 12, None),
        "received": _kinds([[("sqs.receive_message", {"queue": "orders"}, *message)]] * 12, None),
    }
    for name, found in judged.items():
        assert any(found[:6]), name
    calls = [call for tick in (1, 2) for call in _round_calls(rounds[0], tick)]
    assert quiet_wakeup(_kept(*calls, hours=1), 2) == "unchanged"
    assert quiet_wakeup(_kept(*calls, hours=1), 2, timed=False) is None  # when it came is not known
    assert quiet_wakeup(_kept(*calls), 2) is None  # no time passed: the same calls asked again


def test_a_watcher_that_acts_on_a_spike_is_not_told_it_saw_nothing_new() -> None:
    """A replica-lag watcher (one check and a log line each wake-up) pages on-call when the lag spikes
    and checks on: "lag=14.2s" is not "lag=0.4s" (a live newcomer's watcher was told to stop
    repeating the check the wake-up after it paged, and escalated when it paged again)."""
    paged = ("pagerduty.trigger", {"summary": "replica-1 lag high"}, '{"status": "success"}', None)

    def wake(hour: int) -> Round:
        lag = "14.2s" if hour in (6, 8) else "0.4s"
        check = (
            "query_replica_status",
            {"replica": "replica-1"},
            f"replica-1 lag={lag} state=streaming",
            None,
        )
        logged = ("log.info", {"msg": f"lag {lag}"}, "logged", None)
        return [check, logged, paged] if hour in (6, 8) else [check, logged]

    assert _kinds([wake(hour) for hour in range(13)], None) == [[]] * 13


def test_a_daily_audit_whose_tools_exit_1_to_report_what_they_found_is_a_watcher() -> None:
    """`npm outdated` exits 1 whenever anything is outdated, `npm audit` when an advisory applies: a
    daily audit hearing the same report each morning saw nothing move (batch 42's audit was
    escalated for "the same failure" every day). The same commands failing for real (npm ERR!)
    each morning are judged."""
    outdated = '{"@aws-sdk/client-s3": {"current": "3.637.0", "latest": "3.645.0"}}'
    advisory = '{"vulnerabilities": {"semver": {"severity": "moderate", "via": ["GHSA-c2qf-rxjj-qqgw"]}}}'

    def morning(failing: bool) -> Round:
        said = ("npm ERR! code ENOTFOUND", "npm ERR! code ENOTFOUND") if failing else (outdated, advisory)
        return [
            ("shell", {"cmd": "cd /srv/billing && npm outdated --json"}, said[0], "returncode 1"),
            ("shell", {"cmd": "cd /srv/billing && npm audit --json --omit=dev"}, said[1], "returncode 1"),
            ("shell", {"cmd": "gh issue list --label security --state open"}, "#41 semver advisory", None),
        ]

    assert _kinds([morning(False)] * 12, None) == [[]] * 12
    assert any(_kinds([morning(True)] * 12, None)[:6])


def _one_call_heartbeats(values: list[float], *, turns: bool) -> list[list[str]]:
    """Heartbeats of one call each: a Session's whose model is slower than ``idle`` (``turns``), or
    a scheduled agent's doing one thing a wake-up. A coding agent going round read, edit, test,
    note on its four modules (the same four answers each round), the metric as ``values``."""
    monitor = Monitor()
    kinds: list[list[str]] = []
    steps = ("read_file", "edit_file", "run_tests", "save_note")
    for tick, value in enumerate(values, start=1):
        monitor.start_tick(tick, reseed=True, turn=turns and tick > 1)
        now = T0 + timedelta(seconds=3 * tick) if turns else T0 + timedelta(hours=tick)
        tool, part = steps[tick % 4], tick % 4
        monitor.record(
            tool, {"path": f"src/mod{part}.py"}, output=f"{tool} of part {part}: 2 failing", now=now
        )
        monitor.add_progress(value, now=now)
        kinds.append(sorted(a.kind for a in monitor.tick_anomalies))
    return kinds


def test_a_live_agents_flat_metric_over_fewer_calls_than_a_busy_stretch_is_not_judged_yet() -> None:
    """A Session's heartbeat of one call each, the metric rising every four to seven calls: four
    flat samples are four calls, the next fix underway, not a busy agent stuck (live round 44's
    Session, its model slower than `idle`, was escalated while its fixes kept coming). Judged once
    the flat run holds twice N calls, rise or none. A scheduled agent's wake-ups, one call each,
    are judged at N flat samples as ever: the schedule is the unit its user chose."""
    rising = [1.0] * 3 + [2.0] * 7 + [3.0] * 5 + [4.0] * 6
    assert not any("no_progress" in kinds for kinds in _one_call_heartbeats(rising, turns=True))
    stalled = _one_call_heartbeats([1.0] * 3 + [2.0] * 12, turns=True)
    assert next(i for i, kinds in enumerate(stalled) if "no_progress" in kinds) == 3 + 8  # 8 calls flat
    never = _one_call_heartbeats([0.0] * 12, turns=True)
    assert next(i for i, kinds in enumerate(never) if "no_progress" in kinds) == 8
    woken = _one_call_heartbeats([1.0] * 3 + [2.0] * 12, turns=False)
    assert next(i for i, kinds in enumerate(woken) if "no_progress" in kinds) == 6


def test_a_consumer_sleeping_after_an_empty_poll_is_idle_and_one_tailing_a_frozen_job_is_not() -> None:
    """A Kafka consumer polls its topic, and when the answer is ``{"records": []}`` sleeps 30 s
    (live round 54: escalated for ``no_progress`` at its seventh wake-up; without the sleep, no
    anomaly). The pause does nothing: the wake-up is idle. A wake-up whose sleep's own silence is
    the only answer of nothing (a frozen restore's log tail between sleeps) heard no source."""
    poll = ("kafka_poll", {"topic": "signups", "group": "crm"})
    busy: list[Round] = [
        [
            (*poll, f'{{"records": [{{"offset": {n}}}]}}', None),
            ("kafka_commit", {"offset": n + 1}, "ok", None),
        ]
        for n in (5001, 5004)
    ]
    quiet: Round = [(*poll, '{"records": []}', None), ("sleep", {"seconds": 30}, "slept 30s", None)]
    assert _kinds(busy + [quiet] * 8, 6.0) == [[]] * 10
    tail = (
        "bash",
        {"cmd": "tail -n 1 /var/log/pgbackrest/main-restore.log"},
        "restore file 2619 (11%)",
        None,
    )
    frozen: list[Round] = [[tail]] + [[("bash", {"cmd": "sleep 120"}, "", None), tail]] * 9
    assert any("no_progress" in kinds for kinds in _kinds(frozen, 11.0))


def test_a_watcher_sleeping_between_polls_of_builds_that_move_is_watching() -> None:
    """A CI watcher polls a build every wake-up and sleeps a minute after each poll, builds going
    queued, running, running, passed one after another (live round 54: ``no_progress`` once per
    build). Its rounds, pauses aside, are a watcher's while what it watches moves; the same rounds
    over a build that never leaves "running" are judged."""

    def rounds(statuses: list[str]) -> list[Round]:
        return [
            [
                ("get_build", {"build_id": 88120 + n // 4}, f'{{"status": "{s}"}}', None),
                ("sleep", {"seconds": 60}, "", None),
            ]
            for n, s in enumerate(statuses)
        ]

    moving = ["queued", "running", "running", "passed"] * 3
    passed = [float((n + 1) // 4) for n in range(12)]  # the metric: builds passed
    assert _kinds_of(rounds(moving), passed) == [[]] * 12
    assert any("no_progress" in kinds for kinds in _kinds(rounds(["running"] * 6), 1.0))


def test_a_setting_toggled_back_and_forth_is_no_bookkeeping() -> None:
    """A tuner sets a pool size to 20, then 10, then 20 again, a load test after each, its metric
    flat (blind batch 60: no anomaly in 15 heartbeats, each write taken for bookkeeping moved on,
    a sync's saved time). A write back to what it was before the heartbeat before is tried again:
    ``no_progress``. Values that keep moving (a last-run time) stay bookkeeping."""

    def rounds(sizes: list[int]) -> list[Round]:
        test = ("run_load_test", {"rps": 400})
        return [
            [("set_config", {"db_pool_size": size}, "applied", None), (*test, f"p99 {800 + size}ms", None)]
            for size in sizes
        ]

    assert any("no_progress" in kinds for kinds in _kinds_of(rounds([20, 10] * 6), [0.0] * 12))
    saved = [
        [("state.set", {"key": "last_run", "value": f"2024-01-01T{h:02d}:00"}, "ok", None), LOOK[1:]]
        for h in range(10)
    ]
    assert _kinds(saved, 0.0) == [[]] * 10


def test_an_upload_retried_after_growing_sleeps_is_a_back_off_however_its_503_is_worded() -> None:
    """A release uploader's sdist is refused with "503 Service Unavailable (retry-after: 2)", then
    twice with a bare "503 Service Unavailable", sleeping 2, 4, 8 s, and goes through (blind batch
    60: ``no_progress`` before, the two wordings taken for two failures). Refused on and on, judged."""
    sdist = ("upload_artifact", {"file": "sdist.tar.gz"})

    def rounds(tries: int) -> list[Round]:
        found: list[Round] = [[("upload_artifact", {"file": "wheel.whl"}, "201 Created", None)]]
        found.append([(*sdist, "503 Service Unavailable (retry-after: 2)", "http_503")])
        for n in range(tries - 1):
            found.append(
                [
                    ("sleep", {"seconds": 2 ** (n + 1)}, "slept", None),
                    (*sdist, "503 Service Unavailable", "http_503"),
                ]
            )
        return [*found, [("sleep", {"seconds": 8}, "slept", None), (*sdist, "201 Created", None)]]

    values = [1.0] * 4 + [2.0] * 8
    assert _kinds_of(rounds(3), values) == [[]] * len(rounds(3))
    assert any("no_progress" in kinds for kinds in _kinds_of(rounds(7), [1.0] * 8 + [2.0]))


def test_a_drift_watchers_log_line_after_a_fix_is_still_its_record() -> None:
    """A drift watcher runs ``terraform plan`` each half hour and appends "no drift" to its log;
    twice a drift is applied instead (live round 54: escalated by ``loop``, then, with the log line
    read as a record, a ``cycle`` at the first quiet wake-up after each fix, whose heartbeat before
    logged nothing). The same line as earlier in the run is its record: no anomaly."""
    plan = ("bash", {"command": "terraform plan -detailed-exitcode -no-color"})
    quiet: Round = [(*plan, "No changes. Your infrastructure matches the configuration.", None)]
    quiet.append(("append_log", {"line": "no drift"}, "appended 1 line", None))
    rounds: list[Round] = []
    for h in range(16):
        if h in (5, 11):
            drift = (
                f"aws_security_group.web will be updated in-place\n  ~ ingress rule {h}\nPlan: 1 to change."
            )
            apply = (
                "bash",
                {"command": "terraform apply -auto-approve"},
                f"Apply complete! (drift {h})",
                None,
            )
            rounds.append([(*plan, drift, None), apply])
        else:
            rounds.append(quiet)
    assert _kinds(rounds, None) == [[]] * 16


def test_live_round_56s_watchers_whose_rounds_saw_nothing_wrong_or_something_new_are_left_alone() -> None:
    """Three watchers escalated by live round 56, each beside its stuck twin:

    * an hourly SLA check answered "no SLA breaches" (a breach is what goes wrong, and none came)
      then a gauge pushed; the same check answered "1 SLA breach" hour after hour is not quiet;
    * a Terraform reviewer planning each new PR's workspace ("No changes.") then commenting on
      the PR (a comment is a message to its people, an act); the same PR planned and commented
      on again and again is stuck;
    * a feed puller resolving its partner's host (round-robin DNS: three addresses in turn) before
      each ``since`` fetch that brings new shipments; resolving a host looks it up, where resolving
      a ticket acts on it.
    """
    sla: list[Round] = [
        [
            ("sla_report", {"queue": "support", "hour": f"2026-12-06T{h:02d}:00Z"}, "no SLA breaches", None),
            (
                "pushgateway_put",
                {"metric": "sla_breaches", "value": "0", "hour": f"{h:02d}"},
                "202 Accepted",
                None,
            ),
        ]
        for h in range(16)
    ]
    assert _kinds(sla, None) == [[]] * 16
    breached = [
        [(t, a, "1 SLA breach: TCK-40210" if t == "sla_report" else o, e) for t, a, o, e in r] for r in sla
    ]
    assert any(_kinds(breached, None))
    plan = "No changes. Your infrastructure matches the configuration.\n" + "Terraform has compared ... " * 8

    def reviews(pr: Callable[[int], int]) -> list[Round]:
        rounds: list[Round] = []
        for n in range(14):
            # Every third PR adds a bucket; each comment is answered with its own URL.
            said = f"Plan: 1 to add (aws_s3_bucket.logs_{pr(n)})" if n % 3 == 1 else plan
            url = f"https://github.com/acme/infra/pull/{pr(n)}#issuecomment-{2100000 + 37 * n}"
            command = f"terraform workspace select ws-{pr(n)} && terraform plan -no-color"
            comment = {"repo": "acme/infra", "number": str(pr(n)), "body": "terraform plan: reviewed"}
            rounds.append([("bash", {"command": command}, said, None), ("gh_pr_comment", comment, url, None)])
        return rounds

    assert _kinds(reviews(lambda n: 4100 + n), None, turns=True) == [[]] * 14
    assert any(_kinds(reviews(lambda n: 4100), None, turns=True))
    feed: list[Round] = [
        [
            ("resolve", {"host": "feeds.partner.example"}, f"203.0.113.{10 + n % 3}", None),
            (
                "fetch_feed",
                {"url": f"https://feeds.partner.example/v2/shipments?since=t{n}"},
                f"[SHP-{n}a, SHP-{n}b]",
                None,
            ),
        ]
        for n in range(16)
    ]
    assert _kinds(feed, None) == [[]] * 16


def test_a_failure_the_same_call_got_past_in_its_round_is_no_failure_of_the_round() -> None:
    """A feed puller whose resolver flakes every third wake-up (``SERVFAIL`` twice, then the
    address) before each ``since`` fetch that brings new shipments, no metric: its flaky rounds
    are looks like the others (live round 56: ``cycle`` at every third wake-up). A resolver that
    never answers is judged: the failure stands."""
    host = "feeds.partner.example"
    servfail = f"SERVFAIL: {host}: temporary failure in name resolution"
    flaky: list[Round] = []
    for n in range(15):
        tries: Round = [("resolve", {"host": host}, None, servfail)] * (2 if n % 3 == 1 else 0)
        tries.append(("resolve", {"host": host}, f"{host}. 60 IN A 203.0.113.{10 + n % 3}", None))
        shipments = json.dumps({"shipments": [f"SHP{90000 + 4 * n + k}" for k in range(2 + n % 3)]})
        tries.append(("fetch_feed", {"url": f"https://{host}/v2/shipments?since=t{n}"}, shipments, None))
        flaky.append(tries)
    assert _kinds(flaky, None) == [[]] * 15
    never: list[Round] = [[("resolve", {"host": host}, None, servfail)] * 3] * 8
    assert any(_kinds(never, None))


def test_a_soak_watched_and_then_the_next_wave_begun_is_no_busy_agent() -> None:
    """A firmware rollout's canary soaks for six wake-ups (the same status and crash-rate looks, the
    soak's minutes moving), its metric (devices updated) flat; the wake-up the soak ends promotes the
    next wave, an act the run had not done: the metric measures that wave from then on, no
    ``no_progress`` (blind batch 63). The same wave promoted again over a flat metric is judged."""

    def soak(n: int) -> Round:
        return [
            ("fleet.rollout_status", {"id": "ro_912"}, f"updated=50/50 SOAKING {10 * n}m/60m", None),
            ("metrics.query", {"q": "crash_rate"}, f"0.0{n % 3}%", None),
        ]

    promote = ("fleet.rollout_promote", {"id": "ro_912", "wave": "wave-1"}, "wave-1 started", None)
    rounds = [soak(n) for n in range(1, 7)] + [[promote]]
    assert _kinds_of(rounds, [50.0] * 7) == [[]] * 7
    again = [*rounds, soak(0), soak(0), [promote]]
    assert "no_progress" in _kinds_of(again, [50.0] * 10)[-1]  # the same act again: no next work


def test_an_hourly_query_finding_no_row_and_a_shifts_same_report_are_idle_wake_ups() -> None:
    """Blind batch 64: a vacuum scheduler's hourly ``psql`` query answering ``(0 rows)`` (its ``WHERE
    n_dead_tup > 500000`` had been read as a shell's redirect, an act) and an on-call handoff
    posting "no open incidents" after each quiet look, 12 hours apart, were escalated at their
    third wake-up. Both are quiet wake-ups now; the same handoff posted after a look that found an
    incident is work, and judged."""
    query = ("psql", {"cmd": "SELECT relname FROM pg_stat_user_tables WHERE n_dead_tup > 500000"})
    empty = " relname | n_dead_tup\n---------+-----------\n(0 rows)"
    assert _kinds([[(*query, empty, None)]] * 8, None) == [[]] * 8
    look = ("pagerduty.list_incidents", {"since": "12h"}, '{"incidents": []}', None)
    post = ("slack.post", {"channel": "#oncall", "text": "Handoff: no open incidents."}, '{"ok": true}', None)
    assert _kinds([[look, post]] * 8, None) == [[]] * 8
    busy = ("pagerduty.list_incidents", {"since": "12h"}, '{"incidents": ["INC-1042 (open)"]}', None)
    assert any(_kinds([[busy, post]] * 8, None))


def test_a_page_naming_itself_as_the_next_is_no_watchers_quiet_round() -> None:
    """Blind batches 64 and 65: a GDPR export's chat pager sent ``cursor="c_1250"`` each wake-up
    and heard 250 messages and ``"nextCursor": "c_1250"``, the very answer again: read as a
    watcher's round that saw nothing move, it had no finding in 20 wake-ups. A page saying to read
    it again is no quiet look; a feed polled with nothing new (an empty page pointing back) still is,
    and a pager moving on through the pages is reading."""
    stuck = [("chat.fetch", {"cursor": "c_1250"}, '{"messages": 250, "nextCursor": "c_1250"}', None)]
    found = _kinds([stuck] * 8, 0.65)
    assert any("repeat" in kinds for kinds in found) and "no_progress" in found[-1]
    quiet = [("chat.fetch", {"cursor": "c_9"}, '{"messages": [], "nextCursor": "c_9"}', None)]
    assert _kinds([quiet] * 8, 0.65) == [[]] * 8

    def page(n: int) -> Round:
        return [("chat.fetch", {"cursor": f"c_{n}"}, f'{{"messages": 250, "nextCursor": "c_{n + 1}"}}', None)]

    assert _kinds_of([page(n) for n in range(8)], [float(n) for n in range(8)]) == [[]] * 8


def test_the_same_act_on_a_log_file_each_wake_up_is_no_record_of_its_own() -> None:
    """Live round 58: a log rotator's twin rotated the same file every night (``rotate_log(path=
    ".../big.log")`` answered "ok"), its look saying it was still over 1G and its metric flat: a
    write to a ``.log`` path was read as the agent's own record, bookkeeping, and 14 wake-ups had no
    finding. Only a write adding to a log is a record; the quiet nights of its healthy twin stay quiet."""
    look = ("check_logs", {"host": "web-1"}, "/var/log/app/big.log 3.4G (over 1G)", None)
    rotate = ("rotate_log", {"host": "web-1", "path": "/var/log/app/big.log"}, "ok", None)
    assert any(_kinds([[look, rotate]] * 8, 0.0))
    quiet = ("check_logs", {"host": "web-1"}, "no log over 1G", None)
    noted = ("append_file", {"path": "/var/log/rotator.log", "text": "checked web-1"}, "ok", None)
    assert _kinds([[quiet, noted]] * 8, 0.0) == [[]] * 8
