"""A monitor's round: a wake-up probing again what the one before probed, while something it watches fails.

An uptime probe wakes every five minutes and fetches the same four endpoints. When one of them
starts answering 503, the probe's rounds fail and it tells a person (a Slack message, an
incident), and its static homepage answers as before round after round. Seen call by call, that is
a call failing the same way three wake-ups running and a page whose same answer the acts between
did not change. Seen as a round, it is the watcher doing its job: the failure is the state of the
thing watched, not of the agent. What tells it from a stuck agent is the round as a whole: it asked
the very calls of the wake-up before, each once; most of them answered; every call that failed had
answered at an earlier wake-up (the thing watched broke; a call that never worked is the agent's
own), and a round of one look, where "most" says nothing, failed as a server that is down fails (a
5xx, a timeout, a refused connection: an uptime canary's one probe; a 401 is the agent's own); and
what it did besides looking was to tell a person something it had not told them the
round before, nor the way it told them then, nor in the words of an earlier round. A stuck agent
retries within its wake-up, fails on most of its calls, does work, or tells a person again each
round (a reply to one mail resent, reworded, wake-up after wake-up).
Pure: a live Monitor and a replay agree.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import timedelta
from functools import lru_cache

from .detectors.calls import silent_by_design
from .detectors.contract import ActionView, heartbeat_bounds

__all__ = ["alerts", "keeps_note", "probe_round", "probed", "said_again", "words_told"]

# Words of a tool that tells a person of something (``slack_post_message``, ``chat.postMessage``,
# ``create_incident``). An answer to a person's own message (``mail_reply``, ``respond``) is work.
_ALERT_WORDS = frozenset(["post", "send", "notify", "incident", "alert", "alarm"])
_WORD = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")


@lru_cache(maxsize=1024)
def alerts(tool: str) -> bool:
    """Whether ``tool``'s name says it tells a person of something: a message posted or sent
    (``slack_post_message``, ``chat.postMessage``), an alert raised (``create_incident``)."""
    return not _ALERT_WORDS.isdisjoint(word.lower() for word in _WORD.split(tool))


# A failure that says the server is down, not that the call was wrong: an HTTP status of 5xx
# ("http_503", "HTTP/1.1 502 Bad Gateway", "status code 504"), a timeout, a refused connection.
_DOWN = re.compile(
    r"(?:\b(?:https?|status|code|error)|^)[\s_:=/.1]*5\d\d(?!\d)|unavailable|bad gateway|time-?out|timed out"
    r"|connection (?:refused|reset)|econnrefused|econnreset|etimedout|unreachable",
    re.IGNORECASE,
)


# Words of a tool that keeps a note for a person to read later (``save_checkpoint_note``).
_NOTE_WORDS = frozenset(["note", "notes", "memo"])


@lru_cache(maxsize=1024)
def keeps_note(tool: str) -> bool:
    """Whether ``tool``'s name says it keeps a note for a person (``save_checkpoint_note``)."""
    return not _NOTE_WORDS.isdisjoint(word.lower() for word in _WORD.split(tool))


def probe_round(kept: Iterable[ActionView], tick: int, woke_after: timedelta) -> bool:
    """Whether heartbeat ``tick``, the newest of ``kept``, is a wake-up of the schedule come
    ``woke_after`` or more after the heartbeat before and a monitor's round (see :func:`probed`)."""
    actions = kept if isinstance(kept, list) else list(kept)
    start, first = heartbeat_bounds(actions, tick)
    if start == first or first == len(actions) or actions[first].at - actions[first - 1].at < woke_after:
        return False  # no heartbeat before, or one just before it: no wake-up where the world moved
    return probed(actions[:first], actions[start:first], actions[first:])


def probed(earlier: Sequence[ActionView], last: Sequence[ActionView], newest: Sequence[ActionView]) -> bool:
    """Whether the wake-up ``newest``, after ``last`` (the wake-up before it, the newest of
    ``earlier``), is a monitor's round that failed or told a person (see the module's docstring);
    a round of looks alone that failed nothing is :func:`.idle.quiet_wakeup`'s to judge."""
    looks, told = _round(newest)
    before, told_before = _round(last)
    if looks is None or before is None or not (told or any(a.error is not None for a in newest)):
        return False
    if looks.keys() != before.keys() or not told.isdisjoint(told_before):
        return False  # other calls than the round before, or told as the round before told
    if told and said_again(newest, [*earlier, *newest]):
        return False  # words a person was told before: no news of what it watches
    failed = [a for a in looks.values() if a.error is not None]
    if 2 * len(failed) >= len(looks) and not (len(looks) == 1 and _DOWN.search(failed[0].error or "")):
        return False  # most of the round failed: the agent's own calls, not the thing it watches
    answered = {a.fingerprint for a in earlier if a.error is None}
    return all(a.fingerprint in answered for a in failed)


def said_again(
    told: Iterable[ActionView], kept: Iterable[ActionView], tells: Callable[[str], bool] = alerts
) -> bool:
    """Whether a message of ``told`` (tools ``tells`` names) tells a person the very words of
    another of ``kept`` (which holds ``told``; see :func:`words_told`): "step 70709/120000 (58.9%),
    still training" every third wake-up is no news."""
    said = {words for a in told if tells(a.tool) and (words := words_told(a)) is not None}
    if not said:
        return False
    times = Counter(words for a in kept if tells(a.tool) and (words := words_told(a)) in said)
    return any(count > 1 for count in times.values())


def words_told(action: ActionView) -> str | None:
    """The words of a message whose call holds them (a post's ``text`` of a few words), as its
    fingerprint; None for one that failed or whose words its answer holds (``post_update(channel)``
    answered "posted: 41% of the sample"), where the call alone cannot say they were the same."""
    return action.fingerprint if action.error is None and action.summary.count(" ") >= 2 else None


def _round(actions: Iterable[ActionView]) -> tuple[dict[str, ActionView] | None, set[str]]:
    """The looks of one wake-up by call, and the tools it told a person with; no looks (None) when it
    asked a call twice, acted other than by telling a person, or failed to tell one."""
    looks: dict[str, ActionView] = {}
    told: set[str] = set()
    for action in actions:
        if silent_by_design(action.tool, action.summary):
            if action.error is not None or not alerts(action.tool):
                return None, told  # work done, or a message that did not go
            told.add(action.tool)  # a message each round, however worded, is a loop
        elif action.fingerprint in looks:
            return None, told  # a call asked twice in one wake-up: a retry, no round
        else:
            looks[action.fingerprint] = action
    return looks, told
