"""The progress metric: one number per tick that only real work moves.

A metric is any callable ``metric(ctx) -> float | None`` (see
:class:`ProgressMetric`). Users plug in their own as ``"module:attr"``; the
``[progress]`` table picks a built-in instead::

    list_length   len(ctx.data[key])            key may be dotted: "report.sources"
    words         words in a file               a missing file counts 0 words
    glob          files matching a pattern      "notes/**/*.md"
    json_path     a number in a JSON file       pointer "a.b.0"
    pytest        pass rate (0..1) of a pytest run on a folder, in a subprocess

Relative paths start at ``ctx.base_dir``, the config file's folder.
:func:`measure` is the one place a metric is called: it never raises, and
turns a metric that raises, hangs or returns a non-number into a one-line
error that the runner records as the tick's sample.
"""

from __future__ import annotations

import glob as globlib
import json
import math
import numbers
import re
import reprlib
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..base.errors import ConfigError, MetricError
from ..config.plugins import load_object

if TYPE_CHECKING:
    from ..config.file import AgentConfig, HeartbeatConfig, ProgressConfig

__all__ = [
    "STOP_POLL_SECONDS",
    "GlobMetric",
    "JsonPathMetric",
    "ListLengthMetric",
    "LoadedMetric",
    "MetricContext",
    "ProgressMetric",
    "PytestMetric",
    "WordsMetric",
    "build_metric",
    "measure",
    "metric_from_config",
    "metric_name",
    "parse_pytest_summary",
]

STOP_POLL_SECONDS = 0.1
"""How often :func:`measure` looks at its ``stop`` while a metric runs."""

# A metric that measures in a subprocess enforces its own timeout; measure()
# waits this much longer so the subprocess is killed (and says why) first.
_OWN_TIMEOUT_GRACE = 5.0

_repr = reprlib.Repr()
_repr.maxstring = 40
_repr.maxother = 40


class MetricContext(Protocol):
    """What a metric may read: the agent's data and where its files are."""

    @property
    def data(self) -> dict[str, Any]:
        """The agent's own persisted data (``state.json``'s ``data``)."""
        ...

    @property
    def state_dir(self) -> Path:
        """The agent's state folder."""
        ...

    @property
    def base_dir(self) -> Path:
        """The config file's folder; relative metric paths start here."""
        ...


class ProgressMetric(Protocol):
    """A progress metric: a number that grows with real work, or None for "no sample"."""

    def __call__(self, ctx: MetricContext) -> float | None:
        """Measure progress now."""
        ...


def metric_name(metric: object) -> str:
    """The name a metric is shown by: its ``name``, else ``module:qualname``."""
    name = getattr(metric, "name", None)
    if isinstance(name, str) and name:
        return name
    module = getattr(metric, "__module__", None)
    qualname = getattr(metric, "__qualname__", None) or type(metric).__qualname__
    return f"{module}:{qualname}" if module else str(qualname)


class _NotFound(MetricError):
    """A dotted path names a key or index that is not there."""


def _walk(value: Any, pointer: str, *, where: str) -> Any:
    """Follow a dotted path ("a.b.0") through dicts and lists; MetricError if it breaks."""
    done: list[str] = []
    for part in pointer.split("."):
        here = ".".join(done) or "the top"
        if isinstance(value, dict):
            if part not in value:
                raise _NotFound(where, f"no key {part!r} at {here}")
            value = value[part]
        elif isinstance(value, list):
            try:
                index = int(part)
            except ValueError:
                raise MetricError(where, f"{here} is a list; {part!r} is not an index") from None
            if not -len(value) <= index < len(value):
                raise _NotFound(where, f"index {index} is out of range at {here} ({len(value)} items)")
            value = value[index]
        else:
            raise MetricError(where, f"{here} is {type(value).__name__}, not an object or a list")
        done.append(part)
    return value


@dataclass(frozen=True)
class LoadedMetric:
    """A user's metric loaded from ``"module:attr"``, carrying that spec as its name."""

    name: str
    func: ProgressMetric

    def __call__(self, ctx: MetricContext) -> float | None:
        """Call the user's metric."""
        return self.func(ctx)


@dataclass(frozen=True)
class ListLengthMetric:
    """The length of a list (or object) in ``ctx.data``; a missing key counts 0."""

    key: str

    @property
    def name(self) -> str:
        """How errors and instructions name this metric."""
        return f"list_length({self.key})"

    def __call__(self, ctx: MetricContext) -> float:
        """Count the items at ``key``."""
        try:
            value = _walk(ctx.data, self.key, where=self.name)
        except _NotFound:
            # An agent that has not started the list yet has made no progress,
            # which is a sample (0), not an error.
            return 0.0
        if not isinstance(value, list | dict):
            raise MetricError(self.name, f"ctx.data[{self.key!r}] is {type(value).__name__}, not a list")
        return float(len(value))


@dataclass(frozen=True)
class WordsMetric:
    """Words (whitespace-separated) in a text file; a file not written yet counts 0."""

    path: Path

    @property
    def name(self) -> str:
        """How errors and instructions name this metric."""
        return f"words({self.path})"

    def __call__(self, ctx: MetricContext) -> float:
        """Count the words in the file."""
        path = self.path if self.path.is_absolute() else ctx.base_dir / self.path
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return 0.0
        except OSError as exc:
            raise MetricError(self.name, f"cannot read {path}: {exc.strerror}") from None
        return float(len(text.split()))


@dataclass(frozen=True)
class GlobMetric:
    """The number of files (not folders) matching a glob pattern; ``**`` recurses."""

    pattern: str

    @property
    def name(self) -> str:
        """How errors and instructions name this metric."""
        return f"glob({self.pattern})"

    def __call__(self, ctx: MetricContext) -> float:
        """Count the matching files."""
        root = ctx.base_dir
        # root_dir is ignored for an absolute pattern, as os.path.join would.
        matches = globlib.glob(self.pattern, root_dir=root, recursive=True)
        return float(sum(1 for match in matches if (root / match).is_file()))


@dataclass(frozen=True)
class JsonPathMetric:
    """A number at a dotted path ("a.b.0") in a JSON file."""

    path: Path
    pointer: str

    @property
    def name(self) -> str:
        """How errors and instructions name this metric."""
        return f"json_path({self.path}:{self.pointer})"

    def __call__(self, ctx: MetricContext) -> float:
        """Read the number at ``pointer``."""
        path = self.path if self.path.is_absolute() else ctx.base_dir / self.path
        try:
            document = json.loads(path.read_bytes())
        except FileNotFoundError:
            # Unlike a word count, a number in a JSON file has no natural default.
            raise MetricError(self.name, f"no such file {path}") from None
        except OSError as exc:
            raise MetricError(self.name, f"cannot read {path}: {exc.strerror}") from None
        except ValueError as exc:
            raise MetricError(self.name, f"{path} is not valid JSON: {exc}") from None
        value = _walk(document, self.pointer, where=self.name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise MetricError(self.name, f"{self.pointer} is {_repr.repr(value)}, not a number")
        return float(value)


# "1 failed, 2 passed, 1 error in 0.12s" (pytest -q's last line), maybe framed by '='.
# Plain strings, compiled (and cached by re) at first use: importing this module is
# on the path of every tick that has a metric, the pytest metric is rare.
_SUMMARY = r"^=*\s*(?P<counts>.*?)\s+in\s+[\d.]+s(?:\s*\([^)]*\))?\s*=*$"
_COUNT = r"(\d+) (passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?)"


def parse_pytest_summary(output: str) -> dict[str, int]:
    """Counts from pytest's summary line ("3 passed, 1 failed, 2 errors in 0.1s"); {} if none."""
    summary, count = re.compile(_SUMMARY), re.compile(_COUNT)
    for line in reversed(output.strip().splitlines()):
        match = summary.match(line.strip())
        if match:
            counts: dict[str, int] = {}
            for number, word in count.findall(match.group("counts")):
                key = {"error": "errors", "warning": "warnings"}.get(word, word)
                counts[key] = counts.get(key, 0) + int(number)
            return counts
    return {}


@dataclass(frozen=True)
class PytestMetric:
    """The pass rate (0..1) of ``pytest`` on a folder, run in a subprocess with a timeout.

    passed / (passed + failed + errors); skipped and deselected tests do not
    count. No test run at all is an error, not 0: it usually means a wrong path.
    """

    path: Path
    timeout: float = 60.0

    @property
    def name(self) -> str:
        """How errors and instructions name this metric."""
        return f"pytest({self.path})"

    def __call__(self, ctx: MetricContext) -> float:
        """Run the tests and return the pass rate."""
        folder = self.path if self.path.is_absolute() else ctx.base_dir / self.path
        if not folder.exists():
            raise MetricError(self.name, f"no such folder {folder}")
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)]
        import subprocess  # here, not at the top: only this metric needs it

        try:
            done = subprocess.run(
                argv,
                cwd=ctx.base_dir,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                encoding="utf-8",
                errors="replace",
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise MetricError(self.name, f"pytest did not finish within {self.timeout:g}s") from None
        except OSError as exc:
            raise MetricError(self.name, f"cannot run {sys.executable}: {exc.strerror}") from None
        counts = parse_pytest_summary(done.stdout)
        ran = counts.get("passed", 0) + counts.get("failed", 0) + counts.get("errors", 0)
        if done.returncode == 5 or (counts and ran == 0):
            raise MetricError(self.name, f"no tests collected in {folder}")
        if not counts:
            tail = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
            raise MetricError(self.name, f"pytest exited with code {done.returncode}: {tail[:200]}")
        return counts.get("passed", 0) / ran


def metric_from_config(progress: ProgressConfig) -> ProgressMetric:
    """The built-in metric a ``[progress]`` table describes."""
    # ProgressConfig's validator guarantees the fields each type needs.
    if progress.type == "list_length" and progress.key is not None:
        return ListLengthMetric(progress.key)
    if progress.type == "words" and progress.path is not None:
        return WordsMetric(progress.path)
    if progress.type == "glob" and progress.pattern is not None:
        return GlobMetric(progress.pattern)
    if progress.type == "json_path" and progress.path is not None and progress.pointer is not None:
        return JsonPathMetric(progress.path, progress.pointer)
    if progress.type == "pytest" and progress.path is not None:
        return PytestMetric(progress.path, progress.timeout.total_seconds())
    raise ConfigError(f"[progress] type {progress.type!r} is missing a required key")


def build_metric(config: HeartbeatConfig, agent: AgentConfig) -> ProgressMetric | None:
    """The agent's metric: its ``progress = "module:attr"``, else ``[progress]``, else None."""
    if agent.progress:
        func = load_object(agent.progress, what="progress metric", search_path=config.base_dir)
        if not callable(func):
            raise ConfigError(f"progress metric {agent.progress!r} is {type(func).__name__}, not a callable")
        return LoadedMetric(agent.progress, func)
    if config.progress is not None and config.progress.type is not None:
        return metric_from_config(config.progress)
    return None  # none, or a [progress] table that only sets the timeout of an agent.progress


def _check_value(name: str, value: object) -> tuple[float | None, str | None]:
    """Accept a finite real number or None; anything else is a one-line error."""
    if value is None:
        return None, None
    if isinstance(value, bool):
        # True is an int in Python, but a metric that says True is a bug, not 1.0.
        return None, f"progress metric {name} returned {value!r}, not a number (a bool)"
    if not isinstance(value, numbers.Real):
        return None, f"progress metric {name} returned {_repr.repr(value)}, not a number"
    try:
        number = float(value)
    except (OverflowError, TypeError, ValueError):
        return None, f"progress metric {name} returned {_repr.repr(value)}, not a float"
    if not math.isfinite(number):
        return None, f"progress metric {name} returned {number!r}, not a finite number"
    return number, None


# Metrics whose call from an earlier tick has not returned yet, by id(): the metric and the event
# its thread sets as it returns. A hung metric is not called again until it returns, so `run` keeps
# one stuck thread, not one a tick. An event, not Thread.is_alive(): on Python 3.11 a signal's
# exception (Ctrl-C's KeyboardInterrupt) cutting a join marks the running thread stopped (CPython
# gh-90882), and the metric would be called again beside itself.
_HUNG: dict[int, tuple[object, threading.Event]] = {}
_HUNG_LOCK = threading.Lock()


def measure(
    metric: ProgressMetric,
    ctx: MetricContext,
    *,
    timeout: float,
    stop: Callable[[], str | None] | None = None,
) -> tuple[float | None, str | None]:
    """Call ``metric(ctx)`` within ``timeout`` seconds; (value, None) or (None, error). Never raises.

    ``(None, None)`` means the metric had nothing to say this tick. The metric
    runs in a daemon thread, so one that hangs cannot hold up the heartbeat;
    Python cannot stop a thread, so it is left to finish on its own. A metric
    with its own ``timeout`` attribute (the pytest metric) is given that long
    plus a grace period, so its subprocess is killed rather than orphaned.
    A metric still running from an earlier call is not called again until it
    returns, so a metric that hangs for good costs one thread, not one per tick.
    ``stop()`` (the KILL file's reason, say) is looked at every
    :data:`STOP_POLL_SECONDS` meanwhile: once it says why, the metric is no
    longer waited for, so KILL is not kept waiting behind a slow metric.
    """
    name = metric_name(metric)
    own = getattr(metric, "timeout", None)
    if isinstance(own, int | float) and not isinstance(own, bool):
        timeout = max(timeout, float(own) + _OWN_TIMEOUT_GRACE)
    with _HUNG_LOCK:
        hung = _HUNG.get(id(metric))
        if hung is not None and hung[0] is metric and not hung[1].is_set():
            return None, f"progress metric {name} is still running from an earlier tick; not called again"
        _HUNG.pop(id(metric), None)
    outcome: list[tuple[float | None, str | None]] = []
    returned = threading.Event()

    def run() -> None:
        try:
            value = metric(ctx)
        except MetricError as exc:
            outcome.append((None, str(exc)))
        except BaseException as exc:  # even sys.exit() in a metric is its error
            # The user's code failed: that is this tick's sample, not a crash.
            lines = str(exc).strip().splitlines()
            what = type(exc).__name__ + (f": {lines[0][:200]}" if lines else "")
            outcome.append((None, f"progress metric {name} raised {what}"))
        else:
            outcome.append(_check_value(name, value))
        finally:
            returned.set()

    thread = threading.Thread(target=run, name=f"heartbeat-metric {name}", daemon=True)
    deadline = time.monotonic() + timeout
    stopped = None
    try:
        thread.start()
        while True:
            left = max(0.0, deadline - time.monotonic())
            if returned.wait(left if stop is None else min(STOP_POLL_SECONDS, left)):
                break
            if stop is None or time.monotonic() >= deadline or (stopped := stop()) is not None:
                break
    finally:  # also when a signal's exception (Ctrl-C's) cuts the wait: the metric still runs
        if not returned.is_set() and thread.ident is not None:  # no ident: it never started
            with _HUNG_LOCK:
                _HUNG[id(metric)] = (metric, returned)
    if outcome:
        return outcome[0]
    if not returned.is_set():
        if stopped is not None:
            return None, f"progress metric {name} was not waited for: {stopped}"
        return None, f"progress metric {name} did not return within {timeout:g}s"
    return None, f"progress metric {name} ended without a result"
