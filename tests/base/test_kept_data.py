"""The agent's own data: the credentials in it masked, its cursors kept."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heartbeat.base import kept_data
from heartbeat.base.credential_text import mask_credential_text
from heartbeat.base.kept_data import mask_data


def test_mask_data_masks_what_an_agent_keeps_and_copies_nothing_else() -> None:
    """An agent's data: a token told by its form, a Bearer value, a URL's password and the value
    of a key named for a secret, at any depth, are ``***`` in a copy; a page's ``next_token`` and
    a URL's ``page_token=`` are cursors the agent needs back, kept; data holding none is returned
    as it is (nothing copied on each save)."""
    token = "sk-proj-" + "a1B2" * 8
    data = {
        "openai": token,
        "n": 3,
        "deep": [{"api_key": "hunter2", "refresh_token": "r-1"}, ("ok", f"Bearer {token}")],
        "dsn": "postgres://app:pw@db/orders",
    }
    masked = mask_data(data)
    assert masked == {
        "openai": "***",
        "n": 3,
        "deep": [{"api_key": "***", "refresh_token": "***"}, ["ok", "Bearer ***"]],
        "dsn": "postgres://app:***@db/orders",
    }
    assert data["openai"] == token  # the agent's own object is left as it was
    plain = {"pages": 4, "next_token": "c2", "url": "https://api.example/items?page_token=p3"}
    assert mask_data(plain) is plain
    unset = {"api_key": None, "password": False}  # a key not set yet hides nothing: read back as it was
    assert mask_data(unset) is unset


def test_a_credential_kept_inside_a_text_is_masked_and_a_cursor_in_one_is_kept() -> None:
    """Live round 57: a secret an agent keeps in a text of its data, as a person's terminal would
    show it (an AWS credentials line, a connection string's ``AccountKey``, a JSON text's
    ``"password"``, ``mysql -p...``, an env line), is ``***`` in ``state.json``; a cursor's token in
    a text (``next_token=``, a URL's ``page_token=``) is the agent's to read back."""
    data = {
        "notes": [
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG",
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=abc123+/==;",
            '{"user": "ci", "password": "hunter2xyz"}',
            "mysql -uroot -pS3cret app",
            "HEROKU_API_KEY=0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b",
        ],
        "resume": "next_token=eyJwYWdlIjoyfQ https://api.example/items?page_token=p3&limit=50",
    }
    masked = mask_data(data)
    assert masked["notes"] == [
        "aws_secret_access_key = ***",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=***;",
        '{"user": "ci", "password": "***"}',
        "mysql -uroot -p*** app",
        "HEROKU_API_KEY=***",
    ]
    assert masked["resume"] == data["resume"]


_PIECES = st.sampled_from(
    [
        "sk-",
        "proj",
        "a1B2c3D4e5F6g7H8",
        "Bearer",
        " ",
        "\n",
        "\t",
        "://",
        "app",
        ":",
        "pw",
        "@",
        "db",
        "eyJ",
        ".",
    ]
)


@settings(max_examples=400, deadline=None, print_blob=True)
@given(texts=st.lists(st.lists(_PIECES, max_size=8).map("".join), max_size=6))
def test_mask_data_finds_a_form_in_texts_read_together_as_in_each_alone(texts: list[str]) -> None:
    """Whether the agent's data holds a credential is asked of each text alone, never more (a pair
    across two texts, ``Bearer:`` at one's end and a value at the next's start: the texts read as
    one found it once they were masked as a call's text is) nor less (a token at a text's start)."""
    data = {"notes": texts}
    any_alone = any(mask_data(text) != text for text in texts)
    assert (mask_data(data) is not data) == any_alone


def test_mask_data_reads_a_large_agents_data_and_finds_one_token_in_it() -> None:
    """5,000 records, one of them holding a token at a text's start: masked, the rest kept."""
    records = [{"id": i, "title": f"item {i}", "url": f"https://example.com/items/{i}"} for i in range(5000)]
    records[2500]["title"] = "ghp_" + "a" * 36 + " was pasted here"
    masked = mask_data({"items": records})
    assert masked["items"][2500]["title"] == "*** was pasted here"
    assert masked["items"][2499] == records[2499] and records[2500]["title"].startswith("ghp_")


def test_each_text_is_read_once_when_the_data_holds_a_credential(monkeypatch: pytest.MonkeyPatch) -> None:
    """Data holding a credential had every text read twice: once to tell whether anything is masked,
    once to mask it. The second pass takes the first one's reading."""
    read: list[str] = []

    def counted(text: str, named: Callable[[str], bool]) -> str:
        read.append(text)
        return mask_credential_text(text, named)

    monkeypatch.setattr(kept_data, "mask_credential_text", counted)
    notes = [f"page {n} read" for n in range(50)]
    last = "curl -H 'Authorization: Bearer abcdef0123456789abcdef'"
    data = {"notes": notes, "last": last, "again": notes[0]}
    masked = mask_data(data)
    assert masked["last"] == "curl -H 'Authorization: Bearer ***'"
    assert masked["notes"] == notes and masked["again"] == notes[0]
    assert sorted(read) == sorted({*notes, last})
