"""A monitor's round: a wake-up probing again what the one before probed, while something it watches fails."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from heartbeat.detect.monitor import Monitor
from heartbeat.detect.probes import alerts, probe_round, said_again, words_told

T0 = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
Call = tuple[str, dict[str, Any], str | None, str | None]  # tool, args, output, error
ENDPOINTS = ("api", "app", "auth", "files")


def _probe(host: str, down: bool = False, uptime: int = 0) -> Call:
    """The fetch server's answer for one endpoint, up (its health JSON, its uptime moving) or down."""
    args = {"url": f"https://{host}.fieldnote.app/healthz", "raw": True}
    if down:
        return ("fetch", args, "", f"Failed to fetch https://{host}.fieldnote.app/healthz - status code 503")
    if host == "app":  # a static page: the very same answer every round
        return ("fetch", {"url": "https://app.fieldnote.app/"}, "# Fieldnote\nSign in to continue", None)
    return ("fetch", args, f'{{"status": "ok", "version": "2026.11.28", "uptime_s": {uptime}}}', None)


def _round(wake: int, down: frozenset[str] | set[str] = frozenset(), *told: Call) -> list[Call]:
    """One wake-up's four probes, those of ``down`` failing, then what it ``told`` a person."""
    return [_probe(host, host in down, 532800 + 300 * wake) for host in ENDPOINTS] + list(told)


def _post(text: str) -> Call:
    return ("slack_post_message", {"channel_id": "C06STATUS", "text": text}, '{"ok": true}', None)


INCIDENT: Call = (
    "create_incident",
    {"service_id": "P9FILES", "title": "files 503"},
    '{"status": "triggered"}',
    None,
)


def _kinds(rounds: list[list[Call]], *, minutes: int = 5, turns: bool = False) -> list[list[str]]:
    """The kinds found at each heartbeat of ``rounds``, each a wake-up ``minutes`` after the last
    (or a live agent's next model ``turns``)."""
    monitor = Monitor()
    kinds: list[list[str]] = []
    for tick, calls in enumerate(rounds, start=1):
        monitor.start_tick(tick, reseed=True, turn=turns and tick > 1)
        now = T0 + timedelta(minutes=minutes * tick)
        for tool, args, output, error in calls:
            monitor.record(tool, args, output=output, error=error, now=now)
        monitor.add_progress(None, now=now)
        kinds.append(sorted(a.kind for a in monitor.tick_anomalies))
    return kinds


def _outage() -> list[list[Call]]:
    """Blind batch 56's uptime probe: four quiet rounds, then files/healthz answers 503 for three
    wake-ups (a warning posted, an incident opened, a round of looks alone), then it recovers
    (the all-clear posted) and the rounds go quiet again."""
    down = {"files"}
    return [
        *(_round(wake) for wake in range(1, 5)),
        _round(5, down, _post(":warning: files.fieldnote.app/healthz returning 503")),
        _round(6, down, INCIDENT),
        _round(7, down),
        _round(8, set(), _post(":white_check_mark: files.fieldnote.app healthy again")),
        *(_round(wake) for wake in range(9, 14)),
    ]


def test_a_monitor_alerting_on_an_outage_it_watches_is_no_stuck_agent() -> None:
    """Before, the probe was escalated at the outage's third round: the 503 three wake-ups running
    was a ``recurring_error``, and the static homepage answering as before, with the alerts between,
    a ``recurring`` and a ``cycle``."""
    assert _kinds(_outage()) == [[]] * 13


def test_the_same_rounds_as_a_live_agents_turns_are_judged() -> None:
    """A live agent's model turns are no wake-ups of a schedule: the same calls asked turn after
    turn, one failing the same way each time, are a retry."""
    assert any(_kinds(_outage(), turns=True))


def test_a_monitor_whose_own_calls_fail_is_stuck() -> None:
    """Most of the round failing (its token revoked: every call refused) is the agent's own
    trouble, not the thing it watches."""
    rounds = [_round(1)] + [_round(wake, {"api", "auth", "files"}) for wake in range(2, 9)]
    assert "recurring_error" in {kind for kinds in _kinds(rounds) for kind in kinds}


def test_a_call_that_never_answered_failing_again_is_stuck() -> None:
    """A call that failed at every wake-up never reached what it watches: the agent's own call is
    wrong (a bad URL), and the same failure again is its finding."""
    rounds = [_round(wake, {"files"}) for wake in range(1, 9)]
    assert "recurring_error" in {kind for kinds in _kinds(rounds) for kind in kinds}


def _canary(wake: int, error: str | None, *told: Call) -> list[Call]:
    """Blind batch 67's uptime canary: one probe a wake-up, failing with ``error`` or answering."""
    args = {"url": "https://api.fernpay.io/healthz", "timeout_s": 10}
    answer = f'HTTP/2 200\n\n{{"status":"ok","latency_ms":{60 + wake}}}'
    return [("http.check", args, None, error) if error else ("http.check", args, answer, None), *told]


@pytest.mark.parametrize(("error", "quiet"), [("http_503", True), ("HTTP 401 Unauthorized", False)])
def test_a_canarys_one_probe_failing_as_a_server_that_is_down_fails_is_its_reading(
    error: str, quiet: bool
) -> None:
    """A canary's round is one probe: "most of the round failed" said it was the agent's own
    trouble, and its 503s three wake-ups running (an incident opened at the first) were a
    ``recurring_error``. A lone probe failing as a server that is down fails (a 5xx, a timeout, a
    refused connection), after answering at earlier wake-ups, is what it watches; refused for its
    own token (a 401), it is the agent's own, and judged."""
    incident = ("statuspage.create_incident", {"title": "API degraded"}, '{"id": "INC-1835"}', None)
    rounds = [_canary(wake, None) for wake in range(1, 5)]
    rounds += [_canary(5, error, incident), _canary(6, error), _canary(7, error), _canary(8, error)]
    found = {kind for kinds in _kinds(rounds) for kind in kinds}
    assert (found == set()) is quiet, found


def test_the_same_alert_again_each_round_is_no_monitors_round() -> None:
    """Telling a person the very same thing round after round is a loop, not news."""
    alert = _post(":warning: files.fieldnote.app/healthz returning 503")
    rounds = [_round(wake) for wake in range(1, 4)] + [
        _round(wake, {"files"}, alert) for wake in range(4, 10)
    ]
    assert any(_kinds(rounds)[4:])


def test_words_told_in_an_earlier_round_are_no_news() -> None:
    """A round that looks and tells a person the very words of an earlier round (a frozen job's
    "still training" every third wake-up) had its findings dropped as a monitor's round: the post
    was news only against the round just before. It is judged now; a new message is still news."""
    told = _post("ft-llm-7b: step 70709/120000 (58.9%), still training")
    rounds = [_round(1, set(), told), _round(2), _round(3), _round(4, set(), told)]
    assert not probe_round(_history(rounds), 4, timedelta(seconds=30))
    rounds[-1] = _round(4, set(), _post("ft-llm-7b: step 80112/120000 (66.8%)"))
    assert probe_round(_history(rounds), 4, timedelta(seconds=30))


def test_words_said_again_are_counted_among_all_messages_kept() -> None:
    """``said_again``: the same words twice among the messages kept, the newest's among them (two
    posts in one stretch too); one post alone, or two in other words, is news."""
    same = _post("ft-llm-7b: step 70709/120000, still training")
    kept = _history([[same], [_probe("api")], [same]])
    assert said_again(kept[-1:], kept)
    assert said_again(kept, kept)  # both in the stretch judged
    assert not said_again(kept[-1:], kept[-1:])
    other = _history([[_post("ft-llm-7b: step 80112/120000")], [same]])
    assert not said_again(other[-1:], other)


def test_words_a_server_writes_are_not_told_again_by_the_same_call() -> None:
    """A post whose words the server writes (``post_update(channel)`` answered "posted: 41% of the
    sample", then 43%) is the same call each time, not the same words: an A/B monitor's updates
    are news (blind batch 62's, spared as a watcher; judging them by the call alone flagged it)."""
    update: Call = ("post_update", {"channel": "#exp"}, "posted: 41% of the sample", None)
    assert words_told(_history([[update]])[0]) is None
    told = _post("exp_8c21: 41% of the sample")
    assert words_told(_history([[told]])[0]) == _history([[told]])[0].fingerprint


def _history(rounds: list[list[Call]], minutes: int = 5) -> list[Any]:
    monitor = Monitor()
    for tick, calls in enumerate(rounds, start=1):
        monitor.start_tick(tick)
        for tool, args, output, error in calls:
            monitor.record(tool, args, output=output, error=error, now=T0 + timedelta(minutes=minutes * tick))
    return list(monitor.history)


@pytest.mark.parametrize(
    ("newest", "expected"),
    [
        (_round(3, {"files"}), True),  # a look that answered before fails: the thing watched broke
        (_round(3, {"files"}, INCIDENT), True),
        (_round(3, set(), _post("recovered")), True),  # the all-clear told, nothing failing
        (_round(3), False),  # looks alone, nothing failed: quiet_wakeup's to judge
        (_round(3, {"files"}, ("restart_service", {"name": "files"}, "ok", None)), False),  # work done
        ([*_round(3, {"files"}), _probe("files", down=True)], False),  # asked twice: a retry
        (_round(3, {"files"})[:3], False),  # other calls than the round before
        (_round(3, {"api", "files"}), False),  # half the round failed
        (_round(3, {"files"}, ("slack_post_message", {"text": "503"}, None, "channel_not_found")), False),
    ],
)
def test_what_a_monitors_round_is(newest: list[Call], expected: bool) -> None:
    """The round after two quiet ones, told apart by what it asked, did and failed."""
    assert probe_round(_history([_round(1), _round(2), newest]), 3, timedelta(seconds=30)) is expected


def test_a_reply_resent_or_a_post_each_round_is_no_monitors_round() -> None:
    """Blind batch 49's mail agent replies to one supplier's mail again each wake-up, reworded, its
    Sent folder empty: an answer to a person's mail is work, no alert (it was escalated three
    wake-ups later with the reply taken for one). A monitor posting each round, however it words
    the post, goes round telling the same."""
    sent: Call = ("mail_list", {"folder": "Sent Items"}, "Sent Items: 0 messages", None)
    replies = [
        [sent, ("mail_reply", {"id": "m530118", "body": f"Confirming PO 7731, take {n}"}, "sent", None)]
        for n in "abc"
    ]
    assert not probe_round(_history(replies), 3, timedelta(seconds=30))
    posts = [
        _round(1),
        *(_round(wake, {"files"}, _post(f"files down, take {'abc'[wake - 2]}")) for wake in (2, 3)),
    ]
    assert not probe_round(_history(posts), 3, timedelta(seconds=30))
    assert probe_round(_history(posts[:2]), 2, timedelta(seconds=30))  # the first post: news


def test_a_round_just_after_the_one_before_is_no_wake_up() -> None:
    """Heartbeats back to back (a loop calling ``tick``) had no time for the world to move."""
    history = _history([_round(1), _round(2), _round(3, {"files"})], minutes=0)
    assert not probe_round(history, 3, timedelta(seconds=30))
    assert not probe_round(_history([_round(1, {"files"})]), 1, timedelta(seconds=30))  # no round before


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("slack_post_message", True),
        ("chat.postMessage", True),
        ("send_email", True),
        ("create_incident", True),
        ("pagerduty.trigger_alert", True),
        ("mail_reply", False),  # an answer to a person's own message is work
        ("respond", False),
        ("restart_service", False),
        ("write_file", False),
    ],
)
def test_alerts_by_name(tool: str, expected: bool) -> None:
    """A tool telling a person: a message or an alert."""
    assert alerts(tool) is expected
