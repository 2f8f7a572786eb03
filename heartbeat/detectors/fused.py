"""The eight built-in action trackers stepped as one: what a default Monitor runs per action.

Each tracker's ``step`` is cheap, and by default the Monitor calls eight of
them for every recorded action: the calls, and each tracker reading the
same fields of the action again, cost as much as the tracking. :func:`fuse`
returns one function doing what those eight steps do, in their order, on
the same tracker objects (their state stays in them, so a tracker carried
over a tick, or rebuilt by a reseed, is what the next fused step works
on). Each section below is the matching tracker's ``step``, inlined; a
change to one must be made to both (the tests compare the two paths).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Sequence
from itertools import islice
from typing import Any

from ..models import Anomaly
from .contract import ActionView
from .cycle import _SHORT as _CYCLE_SHORT
from .cycle import CycleTracker
from .empty import EmptyTracker
from .error_rate import ErrorRateTracker
from .loop import _NO_RUNS, LoopTracker, _seed_runs
from .near_repeat import NearRepeatTracker
from .recurring import _NO_KEYS, RecurringTracker
from .recurring_error import _SHORT as _ERROR_SHORT
from .recurring_error import RecurringErrorTracker
from .repeat import RepeatTracker

__all__ = ["FUSED", "FusedStep", "fuse"]

FUSED: tuple[type, ...] = (
    RepeatTracker,
    LoopTracker,
    EmptyTracker,
    ErrorRateTracker,
    NearRepeatTracker,
    RecurringTracker,
    RecurringErrorTracker,
    CycleTracker,
)
"""The trackers :func:`fuse` takes, in this order: the default detectors' (see build_detectors)."""

FusedStep = Callable[
    [ActionView, str, str, "int | None", "str | None", Collection[str]],
    "list[tuple[int, Anomaly]] | None",
]
"""``step(action, tool, fingerprint, output_len, error, reported)``: the anomalies the action
trips, as (position of the tracker, anomaly), None when none; a tracker whose kind is in
``reported`` moves on but builds no anomaly."""


def fuse(trackers: Sequence[object]) -> FusedStep | None:
    """One step for exactly the trackers of :data:`FUSED`, in that order; None for any other set."""
    if len(trackers) != len(FUSED) or any(t.__class__ is not c for t, c in zip(trackers, FUSED, strict=True)):
        return None
    # Any: the trackers' slots are read and written as their own step does.
    rep: Any
    loop: Any
    emp: Any
    er: Any
    nr: Any
    rc: Any
    rer: Any
    cy: Any
    rep, loop, emp, er, nr, rc, rer, cy = trackers
    # What never changes (settings, and the containers the trackers only mutate) as locals.
    rep_det, rep_skip, rep_limits, rep_threshold, rep_floor = (
        rep._det,
        rep._skip,
        rep._limits,
        rep._threshold,
        rep._floor,
    )
    loop_det, loop_exempt, loop_need, loop_window, loop_max = (
        loop._det,
        loop._exempt,
        loop._need,
        loop._window,
        loop._max_period,
    )
    loop_where, loop_recent = loop._where, loop._recent
    emp_det, emp_state = emp._det, emp._run
    emp_exempt, emp_max, emp_answering = emp_state.exempt, emp_state.max_chars, emp_state.answering
    er_det, er_exempt, er_window, er_errors, er_failing = (
        er._det,
        er._exempt,
        er._window,
        er._errors,
        er._failing,
    )
    nr_det, nr_exempt, nr_window, nr_recent, nr_counts, nr_min = (
        nr._det,
        nr._exempt,
        nr._window,
        nr._recent,
        nr._counts,
        nr._min,
    )
    rc_det, rc_exempt, rc_window, rc_recent, rc_counts, rc_min, rc_min_chars = (
        rc._det,
        rc._exempt,
        rc._window,
        rc._recent,
        rc._counts,
        rc._min,
        rc._min_chars,
    )
    rer_det, rer_exempt, rer_window, rer_errors, rer_counts = (
        rer._det,
        rer._exempt,
        rer._window,
        rer._errors,
        rer._counts,
    )
    cy_det, cy_exempt, cy_keys = cy._det, cy._exempt, cy._keys
    cy_held, cy_counts, cy_size = cy_keys._keys, cy_keys._counts, cy_keys._size
    kinds = [t._det.kind for t in (rep, loop, emp, er, nr, rc, rer, cy)]
    rep_kind, loop_kind, emp_kind, er_kind, nr_kind, rc_kind, rer_kind, cy_kind = kinds

    def step(
        action: ActionView,
        tool: str,
        fp: str,
        length: int | None,
        error: str | None,
        reported: Collection[str],
    ) -> list[tuple[int, Anomaly]] | None:
        found: list[tuple[int, Anomaly]] | None = None
        result = action.result
        shape = action.shape

        # repeat (RepeatTracker.step)
        if tool not in rep_skip:
            key = fp + "\x00!" if error is not None else fp if result is None else fp + "\x00" + result
            if key == rep._fp:
                run = rep._run = rep._run + 1
            else:
                rep._fp = key
                run = rep._run = 1
            if run >= rep_floor and run >= rep_limits.get(tool, rep_threshold) and rep_kind not in reported:
                found = [(0, rep_det._report(action, run, action.tick, action.at))]

        # loop (LoopTracker.step)
        if tool not in loop_exempt:
            i = loop._n
            loop._n = i + 1
            if fp == loop._fp:
                run = loop._run = loop._run + 1
            else:
                loop._fp = fp
                run = loop._run = 1
            best = 0
            where = loop_where.get(fp)
            if where is None:
                loop_where[fp] = [i]
                loop._runs = _NO_RUNS
                loop._seed = None
            else:
                runs = loop._runs
                seed = loop._seed
                if seed is not None:
                    runs = _seed_runs(seed, [i - j for j in where])
                    loop._seed = None
                new: dict[int, int] = {}
                for j in where if run == 1 else where[: max(0, len(where) - run + 1)]:
                    p = i - j
                    m = new[p] = runs.get(p, 0) + 1
                    extra = p == 2 and (error is not None or loop_recent[-1].error is not None)
                    if m >= p * (loop_need + extra) and p * (loop_need + 1 + extra) <= loop_window:
                        best = p
                where.append(i)
                loop._runs = new
            loop_recent.append(action)
            if len(loop_recent) > loop_max:
                old_fp = loop_recent.popleft().fingerprint
                positions = loop_where[old_fp]
                if len(positions) == 1:
                    del loop_where[old_fp]
                else:
                    del positions[0]
            if best and loop_kind not in reported:
                tail = list(islice(loop_recent, len(loop_recent) - best, None))
                anomaly = loop_det._report(tail, loop._runs[best], action.tick, action.at)
                found = [(1, anomaly)] if found is None else [*found, (1, anomaly)]

        # empty (EmptyTracker.step)
        if length is not None and error is None and tool not in emp_exempt:
            empty_key = shape if shape is not None else tool
            if length > emp_max:
                emp_answering.add(empty_key)
                emp_state.run = 0
            elif empty_key in emp_answering:
                run = emp_state.run = emp_state.run + 1
                if run >= emp_det.threshold and emp_kind not in reported:
                    anomaly = emp_det._report(action, run, action.tick, action.at)
                    found = [(2, anomaly)] if found is None else [*found, (2, anomaly)]

        # error_rate (ErrorRateTracker.step)
        if tool not in er_exempt:
            n = er._n = er._n + 1
            if er_errors and er_errors[0][0] <= n - er_window:
                gone = er_errors.popleft()[1]
                left = er_failing[gone] - 1
                if left:
                    er_failing[gone] = left
                else:
                    del er_failing[gone]
            if error is not None:
                er_errors.append((n, tool))
                er_failing[tool] = er_failing.get(tool, 0) + 1
                if n >= er_window and er_det._trips(len(er_errors)) and er_kind not in reported:
                    anomaly = er_det._report(action, er_failing, action.tick, action.at)
                    found = [(3, anomaly)] if found is None else [*found, (3, anomaly)]

        # near_repeat (NearRepeatTracker.step)
        if tool not in nr_exempt:
            call = fp if result is None else fp + "\x00" + result
            if len(nr_recent) == nr_window:
                old_shape = nr_recent.popleft()[0]
                left = nr_counts[old_shape] - 1
                if left:
                    nr_counts[old_shape] = left
                else:
                    del nr_counts[old_shape]
            nr_recent.append((shape, call))
            count = nr_counts[shape] = nr_counts.get(shape, 0) + 1
            if (
                count >= nr_min
                and nr_det.trips(tool, count)
                and nr_kind not in reported
                and not all(f == call for s, f in nr_recent if s == shape)
            ):
                anomaly = nr_det._report(action, count, action.tick, action.at)
                found = [(4, anomaly)] if found is None else [*found, (4, anomaly)]

        # recurring (RecurringTracker.step)
        if tool not in rc_exempt:
            if len(rc_recent) == rc_window:
                old_call, old_output = rc_recent.popleft()
                if old_call is not None:
                    left = rc_counts[old_call] - 1
                    if left:
                        rc_counts[old_call] = left
                    else:
                        del rc_counts[old_call]
                if old_output is not None:
                    left = rc_counts[old_output] - 1
                    if left:
                        rc_counts[old_output] = left
                    else:
                        del rc_counts[old_output]
            if result is None or error is not None or length is None:
                rc_recent.append(_NO_KEYS)
            else:
                if length > rc_min_chars:
                    rc_call: Hashable = f"{shape}{result}"
                    rc_output: Hashable = f"\x00{tool}\x00{result}"
                    calls = rc_counts[rc_call] = rc_counts.get(rc_call, 0) + 1
                    outputs = rc_counts[rc_output] = rc_counts.get(rc_output, 0) + 1
                else:
                    rc_call = fp + result
                    rc_output = None
                    calls = rc_counts[rc_call] = rc_counts.get(rc_call, 0) + 1
                    outputs = 0
                rc_recent.append((rc_call, rc_output))
                if (calls >= rc_min or outputs >= rc_min) and rc_kind not in reported:
                    maybe = rc_det._report(action, calls, outputs, action.tick, action.at)
                    if maybe is not None:
                        found = [(5, maybe)] if found is None else [*found, (5, maybe)]

        # recurring_error (RecurringErrorTracker.step)
        if tool not in rer_exempt:
            n = rer._n = rer._n + 1
            if rer_errors and rer_errors[0][0] <= n - rer_window:
                gone_key = rer_errors.popleft()[1]
                left = rer_counts[gone_key] - 1
                if left:
                    rer_counts[gone_key] = left
                else:
                    del rer_counts[gone_key]
            if error is not None:
                # recurring_error's _key, with the fields at hand.
                short = length is not None and length <= _ERROR_SHORT
                error_key: Hashable = (tool, error, fp) if short else (tool, error, result)
                rer_errors.append((n, error_key))
                count = rer_counts[error_key] = rer_counts.get(error_key, 0) + 1
                if count >= rer_det.threshold and rer_kind not in reported:
                    anomaly = rer_det._report(action, count, action.tick, action.at)
                    found = [(6, anomaly)] if found is None else [*found, (6, anomaly)]

        # cycle (CycleTracker.step)
        if tool not in cy_exempt:
            cycle_key = (shape, result) if length is not None and length > _CYCLE_SHORT else (fp, result)
            if len(cy_held) == cy_size:
                old_key = cy_held.popleft()
                if old_key is not None:
                    left = cy_counts[old_key] - 1
                    if left:
                        cy_counts[old_key] = left
                        cy_keys.revisits -= 1
                        if left == 1:
                            cy_keys.repeated -= 1
                    else:
                        del cy_counts[old_key]
            cy_held.append(cycle_key)
            count = cy_counts[cycle_key] = cy_counts.get(cycle_key, 0) + 1
            if count > 1:
                cy_keys.revisits += 1
                if count == 2:
                    cy_keys.repeated += 1
                if cy_keys.revisits >= cy_det.threshold and cy_keys.repeated >= 2 and cy_kind not in reported:
                    anomaly = cy_det._report(
                        action, cy_keys.revisits, cy_keys.repeated, len(cy_held), action.tick, action.at
                    )
                    found = [(7, anomaly)] if found is None else [*found, (7, anomaly)]
        return found

    return step
