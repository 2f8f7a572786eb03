"""What the model reads in place of a tool's answer once heartbeat redirects it, true to the call.

A redirected call either ran (the tool acted; its result is withheld and the
instructions stand in its place), ran and failed (there was no result to
withhold: its error is said), or was refused before running (the same stuck
call asked again: the tool was not called). The model is told which, so it
never takes a withheld result for a call that did nothing or failed, or a
refused call for one that acted. Every adapter's text (:class:`~heartbeat.integrations.Guard`)
and the MCP proxy's (:mod:`heartbeat.integrations.mcp_texts`) say it in these words.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core.models import Anomaly

__all__ = ["FAILED", "NOT_RUN", "WITHHELD", "call_key", "redirect_text"]

WITHHELD = "The result of this call is withheld"
"""A call that ran: the tool acted, and its result is not shown."""
NOT_RUN = "This call did not run: it was refused before the tool was called"
"""A call refused before it ran: the tool did nothing."""
FAILED = "This call ran and failed, so there is no result"
"""A call that ran and failed: its error, not a result, is what the instructions stand in for."""
_ERROR_LIMIT = 300


def call_key(tool: str, args: Mapping[str, Any] | None) -> tuple[str, str]:
    """A call as a hashable key (tool, canonical JSON of the arguments): the one a model was told
    not to make again is refused when it asks for it again."""
    if not args:
        return tool, "{}"
    try:
        return tool, json.dumps(args, sort_keys=True, separators=(",", ":"), default=str)
    except (TypeError, ValueError, RecursionError):  # keys of mixed types, cycles: still a stable key
        return tool, repr(sorted(map(repr, args.items())))


def redirect_text(anomaly: Anomaly, tool: str, *, ran: bool, failed: str | None = None) -> str:
    """What the model reads instead of the tool's answer once it looks stuck; ``ran``: whether the
    call ran (its result withheld) or was refused before running; ``failed``: the error a call that
    ran ended with instead of a result."""
    hint = anomaly.evidence.get("avoid") if isinstance(anomaly.evidence, dict) else None
    avoid = hint if isinstance(hint, str) and hint else tool
    if not ran:
        outcome = NOT_RUN
    elif failed:
        from ..base.credential_text import mask_credential_text  # only here: a redirect is rare

        said = " ".join(failed.split())
        said = said if len(said) <= _ERROR_LIMIT else said[: _ERROR_LIMIT - 3] + "..."
        outcome = f"{FAILED} (its error: {mask_credential_text(said)})"
    else:
        outcome = WITHHELD
    # A detector's hint names a call (``search({"q":"x"})``, a cycle of them) or says what to
    # stop in words ("kb_search calls that keep failing"): "do not call" fits only the first.
    named = avoid.partition("(")[0]
    call = avoid == tool or (bool(named) and named != avoid and " " not in named)
    what = f"do not call {avoid} again" if call else f"avoid {avoid}"
    return (
        f"heartbeat: you look stuck ({anomaly.kind}: {anomaly.message}). {outcome}.\n"
        f"Try an alternative: {what}. Use another tool, other arguments "
        "or another source; if a tool keeps failing, stop calling it and work around it."
    )
