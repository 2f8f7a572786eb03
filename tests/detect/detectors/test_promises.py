"""What a message to a person promises: an act under way, or about to be done (``promises``)."""

from __future__ import annotations

import pytest

from heartbeat.detect.detectors.promises import asks, promises


@pytest.mark.parametrize(
    "message",
    [
        "I'm processing your return now.",
        "I'll cancel it right away!",
        "Your cancellation is being processed.",
        "Let me go ahead and submit that for you.",
        "I\u2019m on it.",
        "Processing now! You'll see the status change shortly.",
        "We are now initiating the refund.",
        "The exchange is in progress.",
        # any verb, said to be done at once
        "Thank you. I'll activate roaming on the account side now.",
        "Yes, I'm enabling roaming on your line right now, it can take a moment to apply.",
        "That should resolve once roaming is active, which I'm doing now.",
        "Roaming will be enabled shortly, please restart your device.",
    ],
)
def test_a_message_saying_an_act_is_under_way_promises_it(message: str) -> None:
    assert promises(message)


@pytest.mark.parametrize(
    "message",
    [
        "I'll cancel order #W1 and refund $20 to your card. Shall I proceed?",  # asking leave
        "Please open Settings and tap Mobile Network.",  # a step the person takes
        "Dear Professor Alvarez, I'm writing to ask for a short extension.",  # a draft
        "I'm sorry to hear that, and I'm happy to help.",
        "Her speed is being reduced until the cycle resets.",
        "I can add data at $2 per GB if you'd like.",
        "Please restart your phone and let me know whether you have service now.",
        "Here is what I'll submit: return order #W1, refund $20 to PayPal. Please confirm.",
        "I'm processing the return now. Is there anything else I can help with?",  # asks
    ],
)
def test_asking_leave_instructions_and_drafts_promise_nothing(message: str) -> None:
    assert not promises(message)


def test_a_message_asks_with_a_question_or_a_request_to_confirm() -> None:
    assert asks("Could you confirm the order number once more?")
    assert asks("Please confirm the refund to your Visa")
    assert not asks("Returns are refunded to the original card.")
