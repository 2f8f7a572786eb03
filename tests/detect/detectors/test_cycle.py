"""``cycle``: long, noisy cycles and wandering back to calls and results already seen."""

from __future__ import annotations

from typing import Any

import pytest

from heartbeat.base.errors import ConfigError
from heartbeat.detect.detectors import Cycle
from heartbeat.detect.detectors.cycle import PROMISES, REDONE, RETOLD, TALK

from .helpers import REJECTED_TURN, Call, actions, first, trips


def test_a_long_cycle_is_a_cycle() -> None:
    """Twelve different steps, a note saved every fourth, done twice: no strict loop fits, the
    revisits do (the saves keep the re-checks since the last change below their count)."""
    hit = first(Cycle(), actions(_working_round(12) * 2))
    assert hit is not None and hit[0] == 22
    assert "went back to a call and result already seen" in hit[1].message


def test_reading_the_same_things_again_with_nothing_changed_is_a_cycle_sooner() -> None:
    """The same twelve reads twice, with nothing written between: the sixth re-check trips."""
    hit = first(Cycle(), actions(_round(12) * 2))
    assert hit is not None and hit[0] == 18
    assert hit[1].message.startswith(
        "6 of the last 18 actions since the last write, act or wait went back to a call and result"
    )


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: Cycle(threshold=1), "cycle: threshold must be an integer between 2"),
        (lambda: Cycle(threshold=10, window=10), "cycle: window must be an integer between 11"),
        (lambda: Cycle(threshold=2, window=2), "window"),
        (lambda: Cycle(window=30.0), "window"),  # type: ignore[arg-type]
    ],
)
def test_bad_parameters_are_config_errors(make: Any, words: str) -> None:
    """A detector refuses parameters that could never work, naming the parameter."""
    with pytest.raises(ConfigError, match=words):
        make()


def _round(n: int) -> list[Call]:
    """``n`` different steps, each a call with an answer of its own."""
    return [
        {"tool": f"t{k % 4}", "args": {"arg": f"value-{chr(97 + k)}"}, "output": f"answer {chr(97 + k)} " * 3}
        for k in range(n)
    ]


def _working_round(n: int) -> list[Call]:
    """:func:`_round`, with every fourth step a save (a change: the re-checks count again after it)."""
    return [{**call, "tool": "save"} if k % 4 == 3 else call for k, call in enumerate(_round(n))]


def test_the_message_counts_the_revisits_and_the_calls_revisited() -> None:
    """How many actions went back, to how many different calls, within how many actions."""
    hit = first(Cycle(), actions(_working_round(12) * 2))
    assert hit is not None
    anomaly = hit[1]
    assert anomaly.message.startswith(
        "10 of the last 22 actions went back to a call and result already seen "
        "(10 different ones, not back to back): going round in circles; last: t1("
    )
    assert anomaly.evidence["revisits"] == 10 and anomaly.evidence["distinct"] == 10
    assert anomaly.evidence["window"] == 30 and anomaly.evidence["threshold"] == 10


def _spread(n: int) -> list[Call]:
    """``n`` steps, then each of them again with a new step after each: revisits half the time."""
    first_pass = _round(n)
    fresh: list[Call] = [
        {"tool": "new", "args": {"k": k}, "output": f"a new page {k} " * 3} for k in range(n)
    ]
    return first_pass + [call for pair in zip(first_pass, fresh, strict=True) for call in pair]


def test_revisits_spread_out_trip_at_n_in_the_window() -> None:
    """Never 6 of the last 10, but N of the last W: the revisits counted over the window."""
    found = trips(Cycle(threshold=5, window=30), actions(_spread(8)))
    assert [i + 1 for i, a in enumerate(found) if a is not None] == [17, 19, 21, 23]
    first_hit = found[16]
    assert first_hit is not None and first_hit.message.startswith("5 of the last 17 actions went back")
    assert trips(Cycle(threshold=6, window=30), actions(_spread(5))) == [None] * 15


def test_a_growing_share_of_revisits_trips_before_n() -> None:
    """Idling through look / inventory / examine: 6 of the last 10 actions seen among those 10."""
    idle: list[Call] = [
        {"tool": tool, "args": {"cmd": tool}, "output": f"what {tool} shows, the same each time"}
        for tool in ("look", "inventory", "examine")
    ]
    calls: list[Call] = [*_round(6), *(idle * 4)]
    found = trips(Cycle(), actions(calls))
    hit = next(i for i, a in enumerate(found) if a is not None)
    assert hit + 1 == 6 + 9  # the sixth revisit among the last ten: the ninth idle step
    anomaly = found[hit]
    assert anomaly is not None and anomaly.message.startswith("6 of the last 10 actions went back")


def test_a_growing_share_of_revisits_needs_two_calls_or_more() -> None:
    """Six revisits among the last ten actions, but all of one call: that is recurring's."""
    again: Call = {"tool": "t1", "args": {"arg": "value-b"}, "output": "answer b " * 3}
    calls: list[Call] = [*_round(4), *([again] * 7)]
    assert trips(Cycle(), actions(calls)) == [None] * 11


def test_one_call_again_and_again_is_not_a_cycle() -> None:
    """Revisits of a single call are repeat's or recurring's; new calls all the way are work."""
    same: list[Call] = [{"tool": "get", "args": {"id": 1}, "output": "the same answer"}] * 30
    assert trips(Cycle(), actions(same)) == [None] * 30
    assert trips(Cycle(), actions(_round(26))) == [None] * 26


def test_a_new_action_does_not_fire_even_in_a_window_full_of_revisits() -> None:
    """Only an action that is itself a revisit can report: the one that moves on to something new cannot."""
    calls = [
        *(_round(12) * 2)[:22],
        {"tool": "fresh", "args": {"arg": "new"}, "output": "something new here"},
    ]
    found = trips(Cycle(), actions(calls))
    assert found[21] is not None and found[22] is None


def test_exempt_tools_are_invisible_to_cycle() -> None:
    """An exempt tool's revisits are not counted (nine of the twelve steps left out: three revisits)."""
    records = actions(_round(12) * 2)
    assert first(Cycle(), records) is not None
    assert trips(Cycle(exempt={"t0", "t1", "t2"}), records) == [None] * 24


def _idle_with_notes(rounds: int) -> list[Call]:
    """look / inventory / examine, seeing the same each time, with a note worded anew between rounds."""
    idle: list[Call] = [
        {"tool": tool, "args": {"cmd": tool}, "output": f"what {tool} shows, the same each time"}
        for tool in ("look", "inventory", "examine")
    ]
    calls: list[Call] = []
    for n in range(rounds):
        note = f"maybe it is somewhere else ({n})"
        calls += [{"tool": "think", "args": {"thought": note}, "output": "OK."}]
        calls += idle[: 2 + n % 2]
    return calls


def test_notes_worded_anew_do_not_hide_idling() -> None:
    """A new note between the looks is no revisit, no observation and no change: the looks since the
    last change are re-checks all the same."""
    calls = [*_round(6), *_idle_with_notes(6)]
    hit = first(Cycle(), actions(calls))
    assert hit is not None
    at, anomaly = hit
    # The ninth idle step: its sixth revisit since the run began (nothing was written or done).
    assert at == 6 + 13
    assert anomaly.message.startswith("6 of the last 19 actions since the last write, act or wait went back")
    assert anomaly.tool == "inventory"


def test_notes_aside_the_share_trips_where_an_act_restarted_the_re_checks() -> None:
    """A drawer opened between the looks is a change (the re-checks since it are two), yet, notes
    worded anew aside, the looks around it went back to what they saw: the share trips."""
    calls: list[Call] = []
    for n, tool in enumerate(
        ["look", "inventory", "look", "inventory", "open", "look", "inventory", "look", "inventory"]
    ):
        calls.append(
            {"tool": "think", "args": {"thought": f"maybe it is somewhere else ({n})"}, "output": "OK."}
        )
        calls.append(
            {
                "tool": "open",
                "args": {"cmd": "open drawer 1"},
                "output": "You open the drawer 1. It is empty.",
            }
            if tool == "open"
            else {"tool": tool, "args": {"cmd": tool}, "output": f"what {tool} shows, the same each time"}
        )
    found = trips(Cycle(), actions(calls))
    assert [i + 1 for i, a in enumerate(found) if a is not None] == [18]
    anomaly = found[17]
    assert anomaly is not None and anomaly.message.startswith(
        "6 of the last 9 actions other than notes went back"
    )


def test_notes_between_new_observations_are_work() -> None:
    """Notes between steps that each see something new: nothing revisited, notes aside or not."""
    calls: list[Call] = []
    for n in range(15):
        calls += [
            {"tool": "think", "args": {"thought": "next place"}, "output": "OK."},
            {"tool": "go", "args": {"cmd": f"go to drawer {n}"}, "output": f"drawer {n} holds a pen {n}"},
        ]
    assert trips(Cycle(), actions(calls)) == [None] * 30


def test_the_share_without_notes_looks_no_further_back_than_the_window() -> None:
    """Revisits older than W actions do not count, however many notes came after them."""
    idle: list[Call] = [
        {"tool": tool, "args": {"cmd": tool}, "output": f"what {tool} shows, the same each time"}
        for tool in ("look", "inventory", "look", "inventory", "look", "examine", "examine", "inventory")
    ]  # five revisits: the look below is the sixth
    notes: list[Call] = [
        {"tool": "think", "args": {"thought": f"plan step {n}"}, "output": "OK."} for n in range(9)
    ]
    look: Call = {"tool": "look", "args": {"cmd": "look"}, "output": "what look shows, the same each time"}
    records = actions([*idle, *notes, look])
    assert trips(Cycle(window=12), records)[-1] is None
    assert trips(Cycle(window=30), records)[-1] is not None


def test_complaints_about_malformed_turns_are_no_revisits() -> None:
    """The harness's same complaint between good turns is no revisit; idling between complaints is."""
    complaint = REJECTED_TURN
    status: Call = {"tool": "git", "args": {"cmd": "git status"}, "output": "On branch main, 2 files changed"}
    steps = [*_round(5), status, *_round(9)[5:], status, *_round(13)[9:], status]
    work = [c for call in steps for c in (call, complaint)]
    assert trips(Cycle(), actions(work)) == [None] * 32
    idle: list[Call] = [
        {"tool": tool, "args": {"cmd": tool}, "output": f"what {tool} shows, the same each time"}
        for tool in ("look", "inventory", "examine")
    ]
    stuck = [c for call in idle * 4 for c in (call, complaint)]
    assert first(Cycle(), actions(stuck)) is not None


def test_a_poller_s_sleeps_are_no_revisits() -> None:
    """Checks of a CI run between sleeps of one length: the same pause each time is no revisit, and
    the checks, each answering how far the run got, are news."""
    calls: list[Call] = []
    for n in range(14):
        calls.append(
            {"tool": "gh_run_view", "args": {"run": 42}, "output": f"in progress: {n} of 14 jobs done"}
        )
        calls.append({"tool": "sleep", "args": {"seconds": 60}, "output": ""})
    assert trips(Cycle(), actions(calls)) == [None] * 28


def _sensor_rounds(readings: Any) -> list[Call]:
    """Six rounds of an IoT monitor: the sensor list, then each sensor's readings ``readings(round,
    sensor)`` stored with the same ``INSERT 0 3``."""
    calls: list[Call] = []
    for n in range(6):
        calls.append(
            {"tool": "gateway.list_sensors", "args": {"site": "denver"}, "output": '["t1", "t2", "h1"]'}
        )
        for sensor in ("t1", "t2", "h1"):
            calls.append(
                {"tool": "gateway.get_readings", "args": {"sensor": sensor}, "output": readings(n, sensor)}
            )
            calls.append(
                {"tool": "tsdb.insert", "args": {"sensor": sensor, "rows": 3}, "output": "INSERT 0 3"}
            )
    return calls


def test_a_write_confirmed_alike_after_a_new_reading_carries_the_news() -> None:
    """An IoT monitor stores each round's new readings: the same insert, the same ``INSERT 0 3``,
    each after a reading never seen before, is no revisit (it was a cycle at heartbeat 4 of a
    newcomer's live run). The same insert after the same reading again is one."""
    moving = _sensor_rounds(lambda n, sensor: f'{{"{sensor}": [{3.1 + n / 10}, {3.4 + n / 7}]}}')
    assert first(Cycle(), actions(moving)) is None
    frozen = _sensor_rounds(lambda n, sensor: f'{{"{sensor}": [3.1, 3.4]}}')
    found = first(Cycle(), actions(frozen))
    assert found is not None and found[1].evidence["distinct"] >= 2


def test_an_answer_of_nothing_is_no_revisit() -> None:
    """A poller asking ``since`` its cursor finds nothing new on most polls, and writes its cursor
    after each batch: nothing seen again is nothing revisited, so 30 actions make no cycle. The
    same poll answering the same events again (a cursor that stopped) does."""
    calls: list[Call] = []
    for batch in range(10):
        since = 1796036100 + 100 * batch
        events = f'{{"object": "list", "data": [{{"id": "evt_{batch}", "type": "invoice.paid"}}]}}'
        calls.append({"tool": "http.request", "args": {"created[gt]": since}, "output": events})
        calls.append(
            {"tool": "state.write", "args": {"created_gt": since + 100}, "output": "written 24 bytes"}
        )
        nothing = '{"object": "list", "data": [], "has_more": false, "url": "/v1/events"}'
        calls.append({"tool": "http.request", "args": {"created[gt]": since + 100}, "output": nothing})
    assert first(Cycle(), actions(calls)) is None
    same = '{"object": "list", "data": [{"id": "evt_0", "type": "invoice.paid"}]}'
    stuck = [{**call, "output": same} if call["tool"] == "http.request" else call for call in calls]
    assert first(Cycle(), actions(stuck)) is not None


def _talk(answers: list[str], asks: list[str] | None = None) -> list[Call]:
    """A conversation: the agent's messages (``asks``, else one request worded anew each time) and
    the person's ``answers``."""
    asks = asks or [f"Could you share the order id, please ({'.' * n})?" for n in range(len(answers))]
    return [
        {"tool": "respond", "args": {"content": a}, "output": o} for a, o in zip(asks, answers, strict=True)
    ]


_NOTHING_NEW = [
    "I don't have the order number.",
    "Like I said, I don't have it. Can't you look it up?",
    "I deleted that email.",
    "This is going in circles.",
    "No. I can't find it anywhere.",
    "Unbelievable.",
    "Are you a bot? Look at my orders.",
    "I really don't have it!",
    "No.",
]


def test_messages_that_tell_and_hear_nothing_new_are_a_cycle() -> None:
    """The same request asked in other words while the person's every answer is worded anew and
    gives nothing: the TALK-th request asked again trips, the next is the same finding."""
    assert TALK == 5
    records = actions(
        [
            {"tool": "find_user_id_by_email", "args": {"email": "a@x.org"}, "output": "aarav_2259"},
            *_talk(_NOTHING_NEW),
        ]
    )
    found = trips(Cycle(), records)
    # The first request says its words for the first time; the TALK asked again after it trip.
    assert found[: TALK + 1] == [None] * (TALK + 1)
    hit = found[TALK + 1]
    assert hit is not None and found[TALK + 2] is not None
    assert hit.message.startswith("5 messages to a person in a row told and heard nothing")
    assert hit.evidence["messages"] == TALK


def test_a_conversation_that_gathers_data_is_no_cycle() -> None:
    """A person giving what was asked for gives data (an id, a zip code, an order, an amount): each
    answer moves the conversation, however many messages come in a row."""
    answers = [
        "Hi, I want to return a lamp.",
        "My user id is mei_kim_4152.",
        "Sure.",
        "The zip code is 98187.",
        "It is order #W2378156, the floor lamp.",
        "Okay.",
        "Refund it to the card ending 1065, please.",
        "Yes, return item 6017636844.",
        "Thanks! That's all.",
    ]
    assert trips(Cycle(), actions(_talk(answers))) == [None] * len(answers)


def test_a_walkthrough_answered_ok_is_no_cycle() -> None:
    """Each step of a walkthrough says something new, however briefly the person answers: the
    same "ok" a dozen times is no conversation going round, the same request a dozen times is."""
    steps = [
        "Please open Settings on your phone.",
        "Now tap Mobile Network.",
        "Turn on Data Roaming and wait a moment.",
        "Go back and choose Access Point Names.",
        "Reset the access points to their defaults.",
        "Restart the phone by holding the power button.",
        "When it is back, look at the status bar and tell me what you see.",
        "Open the browser and load any page.",
        "Great, clear the browser cache under Privacy.",
    ]
    assert first(Cycle(), actions(_talk(["ok"] * len(steps), steps))) is None
    again = ["Please open Settings on your phone and tap Mobile Network."] * len(steps)
    assert first(Cycle(), actions(_talk(["ok"] * len(steps), again))) is not None


def test_a_new_call_between_messages_moves_the_conversation() -> None:
    """Looking something up for the person (a call not made before) starts the count again: the
    agent acted on what it heard."""
    calls: list[Call] = []
    for n, answer in enumerate(_NOTHING_NEW * 2):
        calls.append(_talk([answer])[0])
        if n % 4 == 3:
            calls.append(
                {"tool": "get_order_details", "args": {"order_id": f"#W{n}"}, "output": f"order {n}"}
            )
    assert first(Cycle(), actions(calls)) is None
    # The same lookup again, answered as before, is no move: the requests go on.
    again = [
        {**c, "args": {"order_id": "#W3"}, "output": "order 3"} if c["tool"] != "respond" else c
        for c in calls
    ]
    assert first(Cycle(), actions(again)) is not None


def test_data_seen_before_is_no_new_datum_and_volatile_values_are_none() -> None:
    """An answer repeating an id already given, or a message stamped with the time, tells nothing
    new; notes between the messages change nothing."""
    answers = ["My id is noah_ito_3850."] + ["It is noah_ito_3850."] * TALK
    hit = first(Cycle(), actions(_talk(answers)))
    assert hit is not None and hit[0] == TALK + 1
    stamped = [f"Still waiting, sent at 2024-05-0{n}T10:00:00Z." for n in range(1, TALK + 2)]
    noted: list[Call] = []
    for call in _talk(["ok"] * len(stamped), stamped):
        noted += [call, {"tool": "think", "args": {"thought": call["args"]["content"]}, "output": ""}]
    assert first(Cycle(), actions(noted)) is not None


def test_messages_kept_before_their_facts_were_never_count_as_telling_nothing() -> None:
    """A record saved by an older version has no facts: it cannot say it told nothing new, so a
    history of such messages is no conversation going round (an upgrade pages nobody)."""
    records = [r.model_copy(update={"facts": None}) for r in actions(_talk(_NOTHING_NEW))]
    assert first(Cycle(), records) is None


_ANSWERS = ["ok", "Thanks.", "Is it done?", "You said that already.", "Still not cancelled.", "Hello?"]
_PROMISES = [
    "Absolutely, I'll take care of that cancellation right away!",
    "I'm processing the cancellation of #W4817420 now.",
    "Your cancellation is being processed, one moment.",
    "I'm on it and will make sure the order is cancelled.",
    "Thanks for your patience, I'm finalizing it now.",
    "I'll cancel #W4817420 right away.",
]


def test_promises_never_kept_are_a_cycle() -> None:
    """The agent says it is cancelling, again and again in other words, and never calls the tool:
    the PROMISES-th promise trips, each told something new (an order id, an amount) or not, and
    the same lookup answered as before between them moves nothing; the next is the same finding."""
    assert PROMISES == 3
    lookup: Call = {"tool": "get_order_details", "args": {"order_id": "#W4817420"}, "output": "pending"}
    calls: list[Call] = [lookup]
    for n, (ask, answer) in enumerate(zip(_PROMISES, _ANSWERS, strict=True)):
        calls += [_talk([answer], [ask])[0]] + ([lookup] if n % 2 else [])
    found = trips(Cycle(), actions(calls))
    hit = first(Cycle(), actions(calls))
    assert hit is not None and hit[0] == 5  # the lookup, two promises, the lookup again, the third
    assert hit[1].message.startswith("3 messages to a person said an act was under way")
    assert hit[1].evidence["promises"] == PROMISES
    last = [hit for hit, call in zip(found, calls, strict=True) if call["tool"] == "respond"][-1]
    assert last is not None and last.evidence["promises"] == len(_PROMISES)


def test_a_promise_kept_starts_the_count_again() -> None:
    """Each promise followed by the act (a call not made before) is an agent doing what it says:
    however many promises, no cycle; and a conversation that does not promise is no promise loop."""
    calls: list[Call] = []
    for n, (ask, answer) in enumerate(zip(_PROMISES, _ANSWERS, strict=True)):
        calls += [
            _talk([answer], [ask])[0],
            {"tool": "cancel_pending_order", "args": {"order_id": f"#W{n}"}, "output": f"#W{n} cancelled"},
        ]
    assert first(Cycle(), actions(calls)) is None
    asks = [
        f"Here is step {n}: tap the {word} button." for n, word in enumerate(["blue", "red", "next", "back"])
    ]
    assert first(Cycle(), actions(_talk(["ok"] * len(asks), asks))) is None


def test_a_message_kept_before_promises_were_told_promises_nothing() -> None:
    """Facts saved before the promise mark existed hold no ``!``: an upgrade pages nobody."""
    records = actions(_talk(_ANSWERS, _PROMISES))
    old = [r.model_copy(update={"facts": (r.facts or "").replace("!", "").strip()}) for r in records]
    assert first(Cycle(), records) is not None
    assert first(Cycle(), old) is None


_RETOLD_ANSWERS = [
    "Order #W4817420. I want to return the hiking boots.",
    "I just told you, it's #W4817420.",
    "The hiking boots. I said that too.",
    "#W4817420. Again.",
    "Are you even reading what I write?",
]
_REASKS = [
    "Which order would you like to return items from?",
    "Thank you. Could you please provide the order ID?",
    "And which item would you like to return?",
    "Could you confirm the order number once more?",
    "To process the return, may I have the order ID?",
]


def test_a_person_told_to_repeat_themselves_is_a_cycle() -> None:
    """The agent asks again, in other words, for what the person gave: the RETOLD-th answer saying
    they had said it already trips, the same lookup answered as before between them moves nothing,
    and each request after it is the same finding."""
    assert RETOLD == 2
    lookup: Call = {"tool": "get_order_details", "args": {"order_id": "#W4817420"}, "output": "delivered"}
    talk = _talk(_RETOLD_ANSWERS, _REASKS)
    calls = [talk[0], lookup, talk[1], lookup, *talk[2:]]
    found = trips(Cycle(), actions(calls))
    assert found[:4] == [None] * 4  # the first complaint is a slip
    hit = found[4]
    assert hit is not None and hit.message.startswith("2 answers from the person said they had already")
    assert hit.evidence["retold"] == RETOLD
    assert [f is not None for f in found[5:]] == [True, True]
    assert found[-1] is not None and found[-1].evidence["retold"] == 4


def test_a_person_retold_is_heard_when_the_agent_acts() -> None:
    """A complaint answered by a lookup not made before, or an act, is an agent that heard it: the
    count starts again. A message that asks nothing after the complaints (the agent explaining a
    policy) is no request asked again, and a person who says "as I mentioned" in passing
    complains of nothing."""
    calls: list[Call] = []
    for n, (ask, answer) in enumerate(zip(_REASKS, _RETOLD_ANSWERS, strict=True)):
        calls += [
            _talk([answer], [ask])[0],
            {"tool": "get_order_details", "args": {"order_id": f"#W{n}"}, "output": f"order {n}"},
        ]
    assert first(Cycle(), actions(calls)) is None
    told = _talk(_RETOLD_ANSWERS[:3], _REASKS[:3])
    policy = ["Returns are refunded to the original card.", "Refunds take 5-7 business days."]
    assert first(Cycle(), actions(told[:2] + _talk(["ok", "ok"], policy))) is None
    assert first(Cycle(), actions(told)) is not None
    passing = [f"As I mentioned, the LAX flight, seat {n}A." for n in range(8)]
    assert first(Cycle(), actions(_talk(passing, _REASKS[:1] * len(passing)))) is None


def test_a_message_kept_before_complaints_were_marked_complains_of_nothing() -> None:
    """Facts saved before the mark existed hold no ``=``: an upgrade pages nobody."""
    records = actions(_talk(_RETOLD_ANSWERS, _REASKS))
    old = [r.model_copy(update={"facts": (r.facts or "").replace("=", "").strip()}) for r in records]
    assert first(Cycle(), records) is not None
    assert first(Cycle(), old) is None


_STEPS = [
    ("toggle_airplane_mode({})", "Airplane Mode is now OFF.\nStatus Bar: No Service | {n}%"),
    ("reboot_device({})", "Device restarted.\nStatus Bar: No Service | {n}%"),
    ("check_network_status({})", "Cellular Connection: no_service"),
]


def _steps(rounds: list[tuple[str, str]]) -> list[Call]:
    """The agent asks for a step, the person reports doing it ("[user] act -> what it showed")."""
    return [
        {
            "tool": "respond",
            "args": {"content": f"Please try this now ({n})."},
            "output": f"[user] {act} -> {shown.format(n=90 - n)}\nStill nothing.",
        }
        for n, (act, shown) in enumerate(rounds)
    ]


def test_a_person_sent_through_the_same_steps_again_is_a_cycle() -> None:
    """The person redoes the same three steps, each showing the same (the battery's level aside):
    the REDONE-th redone of the last 10 trips, and each round after it is the same finding."""
    assert REDONE == 5
    found = trips(Cycle(), actions(_steps(_STEPS * 4)))
    assert found[: 3 + REDONE - 1] == [None] * (3 + REDONE - 1)
    hit = found[3 + REDONE - 1]
    assert hit is not None and hit.evidence["redone"] == REDONE
    assert "acts the person reported doing redid one" in hit.message
    assert all(f is not None for f in found[3 + REDONE :])


def test_a_new_check_showing_what_the_person_saw_before_moves_nothing() -> None:
    """Between rounds of the same steps the agent asks for checks new to the conversation: one
    shows the status bar every step already showed (its battery level aside) and moves nothing, so
    the redone steps around it trip; one that shows something not seen (the SIM's own state) moves
    the conversation, and the steps after it start the count again. Facts kept before the answers'
    lines were (no ``%``, no ``:``) count every new check as a move, as they did."""
    bar = ("check_status_bar({})", "Status Bar: No Service | {n}%")
    sim = ("check_sim_status({})", "Your SIM card is missing.")
    seen_before = _steps([*_STEPS[:2], *_STEPS[:2], bar, *_STEPS[:2], _STEPS[0]])
    found = trips(Cycle(), actions(seen_before))
    assert found[-1] is not None and found[-1].evidence["redone"] == REDONE
    news = _steps([*_STEPS[:2], *_STEPS[:2], sim, *_STEPS[:2], _STEPS[0]])
    assert trips(Cycle(), actions(news)) == [None] * len(news)

    def kept_before(facts: str | None) -> str:
        return " ".join(f.partition(":")[0] for f in (facts or "").split() if f[0] != "%")

    old = [r.model_copy(update={"facts": kept_before(r.facts)}) for r in actions(seen_before)]
    assert trips(Cycle(), old)[-1] is None


def test_a_walkthrough_fixing_one_problem_after_another_rechecking_alike_is_no_cycle() -> None:
    """The same status check and speed test after each fix, each showing the good state as after
    the fix before: each fix (mobile data turned on, data added to the line) moved the conversation,
    so the checks after it redo nothing since. The same checks with no fix between still trip."""
    status = ("check_network_status({})", "Cellular Connection: connected | Mobile Data Enabled: Yes")
    speed = ("run_speed_test({})", "Speed Test Result: {n} Mbps (Excellent)")
    data_off = ("check_network_status({})", "Cellular Connection: connected | Mobile Data Enabled: No")
    fixed = _steps([status, speed, data_off, ("toggle_data({})", "Mobile Data is now ON."), status, speed])
    refuel: Call = {
        "tool": "refuel_data",
        "args": {"customer_id": "C3498", "gb_amount": 1.0},
        "output": '{"message": "Successfully added 1.0 GB of data for line L3093"}',
    }
    walk = [*fixed, refuel, *_steps([status, speed, status, speed])]
    assert trips(Cycle(), actions(walk)) == [None] * len(walk)
    stuck = fixed + _steps([status, speed, status, speed])
    assert trips(Cycle(), actions(stuck))[-1] is not None


def test_a_walkthrough_whose_steps_change_something_is_no_cycle() -> None:
    """Each step shows something new (a setting set, another check): however many rounds, and a
    step checked again after a change (the speed test now fast) is no redo either."""
    walk = [
        ("check_status_bar({})", "No Service"),
        ("toggle_airplane_mode({})", "Airplane Mode is now OFF."),
        ("set_network_mode_preference({'mode': '4g_5g_preferred'})", "Preferred mode set"),
        ("run_speed_test({})", "No connection"),
        ("toggle_roaming({})", "Roaming is now ON."),
        ("run_speed_test({})", "Speed Test Result: 275 Mbps (Excellent)"),
        ("check_status_bar({})", "5G | Data Enabled"),
    ]
    assert trips(Cycle(), actions(_steps(walk))) == [None] * len(walk)


def _support_turns(tickets: Any) -> list[Call]:
    """A support bot's turns: list the open tickets, reply a canned answer to each and close it."""
    canned = ["To reset your password, open Settings > Security > Reset password.", "Refunds take 5 days."]
    calls: list[Call] = []
    for turn in range(8):
        ids = tickets(turn)
        calls.append(
            {"tool": "get_open_tickets", "args": {}, "output": f'{{"tickets": {ids}}}', "tick": turn}
        )
        for t in ids:
            reply = {"ticket": t, "text": canned[t % 2]}
            calls.append({"tool": "reply", "args": reply, "output": '{"ok": true}', "tick": turn})
            calls.append(
                {"tool": "close_ticket", "args": {"ticket": t}, "output": "Ticket closed.", "tick": turn}
            )
    return calls


def test_acts_confirmed_in_a_line_on_new_objects_are_no_revisits() -> None:
    """A support bot replying a canned answer to each new ticket and closing it ("Ticket closed.")
    was a cycle at its second live turn, through a Session, the MCP proxy and OpenTelemetry alike
    (live round 47): an act's confirmation in a line says nothing of what it acted on, its numbers
    do. The same two tickets answered and closed again and again are a cycle."""
    working = _support_turns(lambda turn: [9000 + turn * 4 + i for i in range(4)])
    assert first(Cycle(), actions(working)) is None
    stuck = _support_turns(lambda turn: [9001, 9002])
    found = first(Cycle(), actions(stuck))
    assert found is not None and found[1].evidence["distinct"] >= 2


def test_the_same_line_appended_at_another_time_is_a_revisit() -> None:
    """An act keyed by its call keeps its times masked: the same log line appended each round with
    only its timestamp moved (a disk check that never prunes) still revisits."""
    calls: list[Call] = []
    for n in range(8):
        calls.append(
            {"tool": "df", "args": {"cmd": "df -h /var/lib/docker"}, "output": "/dev/sdb 200G 173G 27G 87% /"}
        )
        line = f"2024-12-02T1{n}:00:00Z /var/lib/docker 87% ok\n"
        calls.append(
            {
                "tool": "append_file",
                "args": {"path": "/var/log/h.log", "content": line},
                "output": "appended 1 line",
            }
        )
    found = first(Cycle(), actions(calls))
    assert found is not None


def test_an_all_clear_from_each_of_many_calls_is_no_revisit() -> None:
    """Files verified one by one each "OK: checksum matches" went back to a "call and result seen"
    by shape (live round 47's backup verifier, a cycle at its fifth turn); the same two files
    verified over and over do."""
    calls: list[Call] = [
        {
            "tool": "verify",
            "args": {"path": f"/backups/day{d}/db-{i:02d}.tar.gz"},
            "output": "OK: checksum matches",
        }
        for d in range(4)
        for i in range(8)
    ]
    assert first(Cycle(), actions(calls)) is None
    again = [calls[0], calls[1]] * 8
    assert first(Cycle(), actions(again)) is not None


def _bisect(verdicts: list[str], skipped: bool = False) -> list[Call]:
    """A kernel selftest run at each commit of a bisect, then the commit marked; ``skipped``: each
    step is a ``skip`` that git answers the same way (no commit left to test but skipped ones)."""
    test = {"cmd": "make -C tools/testing/selftests TARGETS=mm run_tests"}
    calls: list[Call] = []
    for step, verdict in enumerate(verdicts, 1):
        if verdict == "good":
            calls.append(
                {"tool": "run_selftest", "args": test, "output": "ok 1 mm: hugepage-mmap\n# pass:12 fail:0"}
            )
        else:
            calls.append(
                {"tool": "run_selftest", "args": test, "error": "not ok 1 mm: hugepage-mmap # exit=1"}
            )
        answer = (
            "There are only 'skip'ped commits left to test.\nThe first bad commit could be any of: 9c1f0e2"
            if skipped
            else f"Bisecting: {2 ** (13 - step)} revisions left\n[c0ffee{step:02d}] mm: change {step}"
        )
        calls.append(
            {"tool": "git_bisect", "args": {"cmd": "skip" if skipped else verdict}, "output": answer}
        )
    return calls


def test_a_bisects_test_at_each_commit_is_no_revisit() -> None:
    """A 13-step bisect through a Session (live round 53) was a cycle at its eighth test: the same
    test, passing at one commit and failing at the next, went back to its two results. A call right
    after a bisect's step is that commit's answer. A bisect whose every step is answered the same
    (git has only skipped commits left) tests the same commit again: that goes round."""
    verdicts = [
        "good",
        "bad",
        "bad",
        "good",
        "good",
        "bad",
        "good",
        "bad",
        "good",
        "bad",
        "good",
        "good",
        "bad",
    ]
    assert first(Cycle(), actions(_bisect(verdicts))) is None
    found = first(Cycle(), actions(_bisect(verdicts, skipped=True)))
    assert found is not None and found[0] <= 14


def _daily_checks(days: list[str]) -> list[Call]:
    """A payroll checker's mornings and evenings: each day's scan found nothing to flag, and no pay
    item changed after it: the same answers, day after day, about the day each call names."""
    calls: list[Call] = []
    for day in days:
        evening = f"select count(*) from pay_items where run_date = '{day}' and updated_at > '{day} 07:00'"
        calls += [
            {
                "tool": "anomaly.scan",
                "args": {"run_date": day, "rules": ["gross_jump"]},
                "output": '{"flagged": 0}',
            },
            {
                "tool": "slack.post_message",
                "args": {"text": f"Scan {day}: 0 flags."},
                "output": '{"ok": true}',
            },
            {"tool": "sql.query", "args": {"sql": evening}, "output": " count\n-------\n     0\n(1 row)"},
        ]
    return calls


def test_a_daily_check_asks_about_another_day_each_time() -> None:
    """The same answers about each new day are no revisits (a payroll checker was escalated for a
    cycle on its ninth day: the shape drops every digit, the days its calls name with them). The
    same day asked about again and again is going round."""
    days = [f"2026-03-{day:02}" for day in range(1, 15)]
    assert first(Cycle(), actions(_daily_checks(days))) is None
    assert first(Cycle(), actions(_daily_checks(["2026-03-05"] * 14))) is not None
