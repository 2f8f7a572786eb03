"""bench/real_runs: real runs of agents the corpus does not hold, replayed as they were judged."""

from __future__ import annotations

import pytest
from _labelled_runs import BENCH, replayed

from heartbeat.replay.folder import read_labels

REAL = BENCH / "real_runs"
LABELS = read_labels(REAL / "labels.csv")

# bench/real_runs/README.md: near-duplicates, lookups or edits that differ a little each time; a
# file bolted with placeholders whose error names another name each time; a run escalated for its
# invalid actions before its labelled onset; one snippet of probes rerun under new file names
# among varied lookups (three runs of one task), and a finished
# fix re-checked by test runs of other subsets (three runs); short customer-service runs re-reading
# orders or a product already read, four to six actions before the customer leaves (three runs);
# GPT-4o runs rebuilding a file they destroyed, or working on the wrong copy, each error new (two);
# Haiku telling a customer its tools fail while it calls none, asking again for what they lack (two);
# a HotpotQA agent looking up three words on a one-sentence page, each "No Results" (the fourteenth).
MISSED = {
    "minib-g5m4k__django-11119",
    "liventc-gem3flash__django-17084",
    "minib-g5m4k__django-10999",
    "live4o-taskrefl__xarray-3677",
    "hspyyc-alfworld-react__look_at_obj_in_light-AlarmClock-308-ep0",
    "g31nr__sympy-13031",
    "haiku__django-11276",
    "g31__sympy-13031",
    "g31ro__sympy-13031",
    "h45__requests-5414",
    "h45__django-15629",
    "tau2-hagv-gpt41nano__retail-21-t0",
    "tau2-hagv-gpt41nano__retail-62-t0",
    "tau2-hagv-gpt41nano__retail-70-t0",
    "g4o__django-15252",
    "g4o__django-16502",
    "tau2loop-haiku__retail-task28",
    "tau2loop-haiku__retail-task73",
    "reflexion-hotpot-5t__arundate",
}


@pytest.mark.parametrize("per_heartbeat", [1, 5, 10])
def test_no_healthy_real_run_has_an_anomaly_and_stuck_ones_are_flagged(per_heartbeat: int) -> None:
    """Healthy real runs stay silent, however grouped, but for a model whose turns are rejected 11
    times in a row before it recovers (a repeat, escalated), two customer-service agents retrying
    a change that failed (borderline: one had read it could not work, the other sent the same
    return three times) and a CTF agent submitting one wrong flag four times before it quotes it
    (escalated at 1 action a heartbeat); stuck ones are flagged after their onset."""
    runs = replayed(REAL, per_heartbeat)
    assert len(runs) == len(LABELS) == 182
    healthy = {name: s for name, s in runs.items() if LABELS[name].label == "healthy"}
    assert {name: s.kinds for name, s in healthy.items() if s.anomalies} == {
        "live-s46__django-15629": ["repeat"],
        "tau2-g41nano-t3__retail-task3": ["recurring_error"],
        "tau2-hagv-gpt41nano__retail-16-t0": ["recurring_error"],
        "swea-ctf-demo__eps": ["recurring_error", "repeat", "error_rate"],
    }
    stuck = {name for name in runs if LABELS[name].label == "stuck"}
    assert len(stuck) == 74
    # At 1 action a heartbeat the empty flight searches are escalated at action 10, two before the
    # labelled onset (its labeller's stricter reading puts it at 7): caught, but not after the onset.
    early = {"tau2loop-haiku__airline-task25"} if per_heartbeat == 1 else set()
    assert {name for name in stuck if not runs[name].flagged_after_onset()} == MISSED | early
