"""A code agent whose progress metric is the pass rate of a real pytest run.

It works on ``workspace/sample_project``, a copy of the shipped
``sample_project`` made on its first heartbeat (the shipped one stays pristine,
so the example can be run again after ``rm -rf workspace state``). Each
heartbeat it runs the tests, picks the first failing one and rewrites the
function under test with a patch from its small built-in repertoire: a
stand-in for the edits an LLM would propose. It needs pytest (``python3 -m pip
install pytest``, or heartbeat's ``test`` extra); without it, it says the tests
did not run and records that as a failed ``run_tests``, never as done.

Its story, run with ``heartbeat run --ticks 7``:

1. ticks 1-2: one bug fixed per heartbeat; the pass rate, 0.25 before it starts,
   is 0.5 after tick 1 and 0.75 after tick 2;
2. ticks 3-5: it is *hasty*: its first idea for ``truncate`` does not make the test
   pass, and it writes the same patch and reruns the tests again and again.
   The pass rate rose at tick 2, and a rise of the metric overrules ``loop``
   while the detector's window still holds work from before it (the metric is
   evidence), so the write_file/run_tests cycle is flagged once the window
   has moved past the rise: at tick 5, with ``no_progress`` (four flat samples);
3. tick 6: the recovery instructions say "try a different approach", so it
   does not rerun the failing tests first; it reads the *tests* and picks the
   patch that satisfies their examples: the pass rate reaches 1.0;
4. tick 7: the second quiet heartbeat after the recovery clears the instructions;
   later heartbeats find nothing left to fix (its metric at its goal: see the
   README's Troubleshooting on a metric that stops at 1.0).
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from heartbeat.tick.context import StepContext

SHIPPED = "sample_project"
WORKSPACE = Path("workspace") / "sample_project"  # relative to heartbeat.toml's folder
MODULE = "textkit.py"
TESTS = "test_textkit.py"

# The agent's repertoire: candidate rewrites per function, its first idea
# first. For truncate the first idea is wrong (it still always appends the
# ellipsis): that is what gets the hasty agent stuck.
PATCHES: dict[str, list[str]] = {
    "slugify": [
        '''def slugify(title: str) -> str:
    """'Hello, World!' -> 'hello-world': lower case, words joined by single dashes."""
    return "-".join(re.findall(r"[a-z0-9]+", title.lower()))
''',
    ],
    "word_count": [
        '''def word_count(text: str) -> int:
    """The number of words, whatever whitespace separates them."""
    return len(text.split())
''',
    ],
    "truncate": [
        '''def truncate(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` characters, ending with '…' when it was cut."""
    return text[: width - 1] + "…"
''',
        '''def truncate(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` characters, ending with '…' when it was cut."""
    return text if len(text) <= width else text[: width - 1] + "…"
''',
    ],
}

MAX_ATTEMPTS = 3  # how often the hasty agent retries a patch within one heartbeat


# -- the tools (each call is recorded with ctx.record by the step)


class PytestDidNotRun(RuntimeError):
    """pytest gave no verdict on the tests: not installed, or a usage or internal error."""


def run_tests(project: Path) -> tuple[str, list[str]]:
    """Run pytest on the project; return its summary line and the failing test names.

    Raises PytestDidNotRun when pytest did not run the tests: no verdict is no pass.
    """
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", "."],
        cwd=project,
        # The sample project needs no plugins; not loading every installed one
        # (hypothesis alone takes a second to import) keeps each run quick.
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    summary = lines[-1].strip("= ") if lines else ""
    # 0: all passed, 1: some failed, each with its summary line. Any other code (2 interrupted,
    # 3 internal error, 4 usage error, 5 no tests) or no summary at all (`python -m pytest`
    # without pytest exits 1 too, "No module named pytest") is no verdict on the code.
    if done.returncode not in (0, 1) or not re.search(r"\d+ (passed|failed|errors?)\b", summary):
        said = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise PytestDidNotRun(f"pytest did not run the tests (exit {done.returncode}): {said}")
    failing = re.findall(r"^FAILED \S*::(test_\w+)", done.stdout, flags=re.MULTILINE)
    return summary, failing


def rewrite_function(source: str, name: str, new_def: str) -> str:
    """``source`` with the top-level function ``name`` replaced by ``new_def``."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            assert node.end_lineno is not None
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            lines = source.splitlines(keepends=True)
            return "".join(lines[: start - 1]) + new_def + "".join(lines[node.end_lineno :])
    raise LookupError(f"no function {name}() in the module")


def examples_from_tests(test_source: str, name: str) -> list[tuple[tuple[Any, ...], Any]]:
    """The ``assert name(args...) == expected`` examples in the tests (literals only)."""
    found = []
    for node in ast.walk(ast.parse(test_source)):
        if not isinstance(node, ast.Assert) or not isinstance(node.test, ast.Compare):
            continue
        call, ops, rights = node.test.left, node.test.ops, node.test.comparators
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == name
            and len(ops) == 1
            and isinstance(ops[0], ast.Eq)
        ):
            try:
                args = tuple(ast.literal_eval(a) for a in call.args)
                found.append((args, ast.literal_eval(rights[0])))
            except ValueError:
                continue  # not a literal example: the agent cannot use it
    return found


def satisfies(module_source: str, name: str, examples: list[tuple[tuple[Any, ...], Any]]) -> bool:
    """Whether the patched module's ``name`` gives the expected result for every example."""
    namespace: dict[str, Any] = {}
    try:
        exec(compile(module_source, MODULE, "exec"), namespace)  # the agent's own patch, nothing else
        return all(namespace[name](*args) == expected for args, expected in examples)
    except Exception:  # a candidate that crashes on an example does not fit it
        return False


# -- the step


def step(ctx: StepContext) -> None:
    """One heartbeat: fix (at most) one failing test, or say that the tests cannot be run."""
    try:
        fix_one(ctx)
    except PytestDidNotRun as exc:
        # Said and recorded as the failed tool call it is; the work is never marked done for it.
        print(f"  [code agent] {exc}; nothing can be fixed or called done until the tests run")
        ctx.record("run_tests", {"path": str(WORKSPACE)}, error=str(exc))


def fix_one(ctx: StepContext) -> None:
    """Fix (at most) one failing test of the working copy."""
    project = ctx.base_dir / WORKSPACE
    if not project.exists():
        # Work on a copy so the shipped sample project stays as it is.
        shutil.copytree(ctx.base_dir / SHIPPED, project, ignore=shutil.ignore_patterns("__pycache__"))
    data = ctx.data
    module = project / MODULE
    source = module.read_text(encoding="utf-8")
    digest = hashlib.sha256(source.encode()).hexdigest()
    if data.get("done") == digest:
        # Finished, and nobody has touched the code since: no action at all.
        # (Rerunning the tests every heartbeat would be a `repeat`; a long
        # flat pass rate still ends in `no_progress`: pause a finished agent.)
        print("  [code agent] all tests passed and the code is unchanged; idle")
        return
    runs: list[str] = data.setdefault("test_runs", [])

    if ctx.instructions and data.get("failing"):
        # Told that rerunning the same tests went nowhere: follow the instructions
        # first, with the failures of the last run, instead of rerunning them again.
        failing = data["failing"]
    else:
        summary, failing = run_tests(project)
        runs.append(summary)
        del runs[:-10]  # the agent's data lives in state.json: keep it bounded
        data["failing"] = failing
        if ctx.record("run_tests", {"path": str(WORKSPACE)}, output=summary):
            return
    if not failing:
        data["done"] = digest
        print(f"  [code agent] all tests pass ({summary}); nothing left to fix")
        return

    data.pop("done", None)
    name = failing[0].removeprefix("test_")
    if ctx.record("read_file", {"path": str(WORKSPACE / MODULE)}, output=source):
        return
    candidates = PATCHES.get(name)
    if not candidates:
        ctx.record("plan", {"function": name}, error=f"no idea how to fix {name}()")
        return

    if ctx.instructions:
        # The heartbeat says the last approach went in circles: this time read
        # the tests first and only write a patch that satisfies their examples.
        print(f"  [code agent] following the heartbeat's instructions: {ctx.instructions.splitlines()[0]}")
        tests = (project / TESTS).read_text(encoding="utf-8")
        if ctx.record("read_file", {"path": str(WORKSPACE / TESTS)}, output=tests):
            return
        examples = examples_from_tests(tests, name)
        fitting = [c for c in candidates if satisfies(rewrite_function(source, name, c), name, examples)]
        patch = fitting[0] if fitting else candidates[-1]
        module.write_text(rewrite_function(source, name, patch), encoding="utf-8")
        if ctx.record(
            "write_file",
            {"path": str(WORKSPACE / MODULE), "function": name, "patch": candidates.index(patch)},
            output=f"rewrote {name}()",
        ):
            return
        summary, failing = run_tests(project)
        ctx.record("run_tests", {"path": str(WORKSPACE)}, output=summary)
        return

    # The hasty way: write the first idea, rerun the tests, and if they still
    # fail write it again (an LLM left alone tends to reproduce its own patch).
    for _ in range(MAX_ATTEMPTS):
        module.write_text(rewrite_function(source, name, candidates[0]), encoding="utf-8")
        if ctx.record(
            "write_file",
            {"path": str(WORKSPACE / MODULE), "function": name, "patch": 0},
            output=f"rewrote {name}()",
        ):
            return
        summary, failing = run_tests(project)
        if ctx.record("run_tests", {"path": str(WORKSPACE)}, output=summary):
            print(f"  [code agent] the heartbeat flagged my retries of {name}(); stopping this heartbeat")
            return
        if f"test_{name}" not in failing:
            return
