"""What a person's answer says of being asked again: that they had already said it (``retold``)."""

from __future__ import annotations

import pytest

from heartbeat.detect.detectors.retold import retold


@pytest.mark.parametrize(
    "answer",
    [
        "I just told you, it's #W4817420.",
        "Like I said, I don't have it. Can't you look it up?",
        "I already gave you my email.",
        "I\u2019ve already said yes.",
        "I have told you four times, I do not have it.",
        "YES. I said yes already",
        "The hiking boots. I said that too.",
        "#W4817420. Again.",
        "OBUT9V. For the third time.",
        "yes. for the 6th time, yes.",
        "Are you even reading my messages?",
        "That's three times now.",
        "No. How many times do I have to say it.",
        "As I said, the Visa card.",
        "no longer needed. I also said that in my first message",
        "#W2890441. no longer needed. why do you keep asking me the same thing??",
        "NO LONGER NEEDED. this is the fourth time",
        "That's the second time you ask.",
        "You already asked me that.",
        "OK, for the last time: W123.",
        "The original payment method is fine. And it's omar.haddad5521@example.com, again.",
        "I'm not going to repeat it again. It's in your system.",
        "Do I have to repeat myself? W9021374.",
        # blind batch 61: a roaming customer asked again and again whether she is abroad
        "Yes, I said I'm in Lisbon. Portugal.",
        "How many times... yes.",
        "How many more times?!",
    ],
)
def test_an_answer_saying_it_was_said_before_is_retold(answer: str) -> None:
    assert retold(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "As I mentioned, the LAX to MIA flight.",  # said in passing
        "Once I have that, I'd like to talk about those pending orders I mentioned.",
        "Sorry, what was the total difference again?",
        "sent it. nothing. and the queue says Error again",
        "oh it had Whitfield in it lol. trying again",
        "I have bars again!",
        "My user id is mei_kim_4152.",
        "Yes, please go ahead.",
        "That is the last time I buy here.",  # no time it was said before
        "noah.ito@example.com, same as before",  # may confirm what is asked, not complain
        "I keep asking for a refund and nobody helps",  # the person asks, no one asked them
        "Is this the first time you ordered from us?",
        "The connection dropped, again.",  # a thing that happened again, nothing said before
        "Could you repeat that, please?",
        "I'll repeat the test and tell you.",
        "How many times can I change my flight?",  # a question of their own
        "I said I would call back tomorrow.",  # what they said they would do, not answered twice
    ],
)
def test_an_answer_giving_or_asking_is_not_retold(answer: str) -> None:
    assert not retold(answer)
