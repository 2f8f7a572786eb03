"""The long-running paths fail closed: Session, ``heartbeat mcp-proxy`` and the adapters honour every stop.

Reliability III: the fleet stop, KILL and a human's pause are honoured within
about a second under a steady stream of calls, every call that ran is
journaled, and the model is never told something untrue.
"""

from __future__ import annotations

from pathlib import Path

import live_streams
import pytest

# "Within about a second": the fleet stop is read at most once a second; the rest is slack for a
# loaded test machine (the stress script prints the real figures).
BOUND = 2.0


@pytest.mark.parametrize("stop", ["fleet", "kill"])
def test_a_session_under_a_steady_stream_honours_the_fleet_stop_and_journals_every_call(
    tmp_path: Path, stop: live_streams.StopKind
) -> None:
    report = live_streams.session_stream(tmp_path, stop, before=0.6, after=1.6)
    assert report.check(BOUND).problems == [], report.summary()
    assert report.ran > 10 and report.saved == report.ran


def test_the_mcp_proxy_under_a_steady_stream_honours_the_fleet_stop_and_journals_every_call(
    tmp_path: Path,
) -> None:
    report = live_streams.proxy_stream(tmp_path, "fleet", before=1.0, after=1.6)
    assert report.check(BOUND).problems == [], report.summary()
    assert report.ran > 5


def test_an_adapter_bound_to_a_state_folder_honours_the_fleet_stop_and_journals_every_call(
    tmp_path: Path,
) -> None:
    report = live_streams.adapter_stream(tmp_path, "fleet", before=0.6, after=1.6)
    assert report.check(BOUND).problems == [], report.summary()
    assert report.ran > 3
