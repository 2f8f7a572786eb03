"""Credential-named arguments: which containers hold one, and their masked copies."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from heartbeat.base.credentials import (
    MASK,
    holds_credentials,
    mask_credentials,
)
from heartbeat.detect.detectors import summarize

_NAMES = st.sampled_from(
    ["q", "password", "session_id", "sessionid", "apiKey", "max_tokens", "co_okie", 1, "é", "name", "value"]
)
_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=6)
    | st.sampled_from(["X-Api-Key", "Accept"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(_NAMES | st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=400, deadline=None, print_blob=True)
@given(value=_VALUES)
def test_holds_credentials_says_whether_masking_masks_anything(value: Any) -> None:
    """The quick test before masking is exact: True where a copy would differ, False where not."""
    masked = mask_credentials(value)
    assert holds_credentials(value) is (repr(masked) != repr(_as_lists(value)))


def _as_lists(value: Any) -> Any:
    """``value`` as mask_credentials copies it when nothing is masked (tuples become lists)."""
    if isinstance(value, dict):
        return {k: _as_lists(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_as_lists(v) for v in value]
    return value


def test_every_credential_named_key_is_masked_in_the_summary() -> None:
    """Names the words make a credential, whatever the text of the call around them, are masked."""
    for args in (
        {"session_id": "S3CRET"},
        {"sessionid": "S3CRET"},
        {'pass"word': "S3CRET"},
        {"nested": [{"Cookie": "S3CRET"}]},
    ):
        assert holds_credentials(args)
        assert "S3CRET" not in summarize("call", args)
        assert MASK in summarize("call", args)
    assert summarize("login", {"user": "ann", "max_tokens": 5}) == 'login({"max_tokens":5,"user":"ann"})'


def test_a_value_whose_name_beside_it_is_a_credentials_is_masked() -> None:
    """A header as HAR and many HTTP tools give it (``{"name": ..., "value": ...}``), a Kubernetes
    env entry, ``header_name``/``header_value``: the value is masked when the name is a
    credential's (live round 53 found it kept in every file); an ``Accept`` header's is kept."""
    for args in (
        {"headers": [{"name": "X-Api-Key", "value": "S3CRET"}, {"name": "Accept", "value": "json"}]},
        {"env": [{"name": "DB_PASSWORD", "value": "S3CRET"}]},
        {"header_name": "Authorization", "header_value": "S3CRET"},
    ):
        assert holds_credentials(args)
        assert "S3CRET" not in summarize("call", args) and MASK in summarize("call", args)
    kept = {"headers": [{"name": "Accept", "value": "json"}], "key": "page", "value": 3}
    assert not holds_credentials(kept) and "json" in summarize("call", kept)


def test_a_container_passed_twice_or_holding_itself_is_masked_every_time() -> None:
    """The same headers passed twice, or a cycle, never show the original's secret."""
    headers = {"Authorization": "Bearer S3CRET"}
    shared = {"a": headers, "b": [headers, headers]}
    assert "S3CRET" not in repr(mask_credentials(shared))
    assert "S3CRET" not in summarize("fetch", shared)
    cyclic: dict[str, Any] = {"password": "S3CRET"}
    cyclic["self"] = cyclic
    assert holds_credentials(cyclic)
    masked = mask_credentials(cyclic)
    assert masked["self"] is masked and masked["password"] == MASK
    assert "S3CRET" not in summarize("loop", cyclic)
