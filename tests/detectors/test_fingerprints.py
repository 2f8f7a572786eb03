"""Fingerprints, shapes, result keys and summaries: what makes two actions the same."""

from __future__ import annotations

from typing import Any

from heartbeat.detectors import canonical_args, fingerprint, mask, prints, summarize

from .helpers import PYTEST_FAIL, T0


def test_absent_and_none_args_fingerprint_as_empty_object() -> None:
    """No arguments, None and {} are one fingerprint."""
    assert fingerprint("get_status", None) == fingerprint("get_status", {})
    assert canonical_args(None) == canonical_args({}) == "{}"


def test_fingerprint_ignores_key_order_but_not_values() -> None:
    """Key order is canonicalised away; a changed value is a different call."""
    assert fingerprint("s", {"a": 1, "b": [1, {"y": 2, "x": 1}]}) == fingerprint(
        "s", {"b": [1, {"x": 1, "y": 2}], "a": 1}
    )
    assert fingerprint("s", {"a": 1}) != fingerprint("s", {"a": 2})
    assert fingerprint("s", {"a": 1}) != fingerprint("t", {"a": 1})


def test_canonical_args_is_compact_sorted_json() -> None:
    """Canonical JSON has sorted keys, no spaces and keeps non-ASCII text."""
    assert canonical_args({"q": "café", "a": [1, 2]}) == '{"a":[1,2],"q":"café"}'


def test_volatile_args_are_left_out_of_fingerprint_and_summary() -> None:
    """A volatile argument changing does not make a new call."""
    one = fingerprint("search", {"q": "x", "request_id": 1}, volatile=["request_id"])
    two = fingerprint("search", {"q": "x", "request_id": 2}, volatile=["request_id"])
    assert one == two
    assert summarize("search", {"q": "x", "request_id": 2}, ["request_id"]) == 'search({"q":"x"})'


def test_output_is_part_of_fingerprint_only_when_given() -> None:
    """A polling tool's result changes its fingerprint."""
    assert fingerprint("get_status", {}, output="busy") != fingerprint("get_status", {}, output="done")
    assert fingerprint("get_status", {}, output="busy") != fingerprint("get_status", {})


def test_fingerprint_survives_values_json_cannot_hold() -> None:
    """Dates, mixed key types and self-references still fingerprint, deterministically."""
    loop: dict[str, Any] = {}
    loop["self"] = loop
    assert fingerprint("t", {"when": T0}) == fingerprint("t", {"when": T0})
    assert fingerprint("t", {1: "a", "b": 2}) == fingerprint("t", {"b": 2, 1: "a"})
    assert len(fingerprint("t", loop)) == 16


def test_summary_reads_like_a_call_and_is_cut() -> None:
    """A summary is tool(args), tool() without args, at most 200 characters."""
    assert summarize("search", {"q": "x"}) == 'search({"q":"x"})'
    assert summarize("get_status", None) == "get_status()"
    long = summarize("write", {"text": "x" * 500})
    assert len(long) == 200 and long.endswith("…")


def test_shape_leaves_out_numbers_dates_and_ids() -> None:
    """Calls that differ only in line ranges, timestamps or numbered ids share one shape."""
    one = prints("sed", {"cmd": "sed -n '1,20p' src/app.py"})
    two = prints("sed", {"cmd": "sed -n '559,650p' src/app.py"})
    other = prints("sed", {"cmd": "sed -n '1,20p' src/cli.py"})
    assert one.shape == two.shape != other.shape
    assert one.fingerprint != two.fingerprint
    poll = [prints("get_job", {"id": "job-7", "since": f"2024-05-0{d}T10:00:0{d}Z"}) for d in range(1, 4)]
    assert len({p.shape for p in poll}) == 1
    assert prints("flight", {"n": "HAT052"}).shape == prints("flight", {"n": "HAT030"}).shape


def test_result_masks_digits_of_long_outputs_only() -> None:
    """A test log's timings do not make a new result; a short answer's number does."""
    assert (
        prints("pytest", {}, PYTEST_FAIL.format(t="0.31")).result
        == prints("pytest", {}, PYTEST_FAIL.format(t="0.57")).result
    )
    assert (
        prints("status", {}, "running, 45% done").result != prints("status", {}, "running, 46% done").result
    )
    assert prints("think", {}, "").result is not None
    assert prints("write", {}, None).result is None
    assert prints("run", {}, None, "boom").result == prints("run", {"x": 1}, None, "boom").result


def test_mask_is_what_a_person_reads() -> None:
    """The masked shape shown in messages replaces each word holding a digit with #."""
    assert mask("sed -n '559,650p' src/app.py") == "sed -n '#,#' src/app.py"
    assert mask('{"since":"2024-05-01T10:00:00Z"}') == '{"since":"#"}'
