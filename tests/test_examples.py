"""The examples, each run from a clean copy in tmp_path as a user would run it.

Every run is a real ``python -m heartbeat`` subprocess in the copied folder,
so the repository stays clean and what is tested is what the README says to
type. Node, systemd-analyze and PyYAML are used when present and not required.
"""

from __future__ import annotations

import configparser
import importlib.util
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
# What running an example creates; a copy starts without any of it.
RUN_LEFTOVERS = shutil.ignore_patterns("state", "workspace", "draft", "KILL", "__pycache__")


def clean_env(**extra: str) -> dict[str, str]:
    """The test's environment without anything that would steer heartbeat or the agents."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("HEARTBEAT_", "OPENAI_", "PYTEST_", "LLM_"))
    }
    # The code agent's pytest metric needs no plugins; loading every installed
    # one (hypothesis alone takes about a second) would only slow each tick.
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env.update(extra)
    return env


def heartbeat(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m heartbeat ARGS`` in ``cwd`` and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "heartbeat", *args],
        cwd=cwd,
        env=env if env is not None else clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def copy_example(name: str, tmp_path: Path) -> Path:
    """A fresh copy of ``examples/<name>``, without anything a previous run left."""
    dest = tmp_path / name
    shutil.copytree(EXAMPLES / name, dest, ignore=RUN_LEFTOVERS)
    return dest


def tick_results(stdout: str) -> list[dict[str, Any]]:
    """The ``--json`` tick results in a run's output (the agents' own prints are skipped)."""
    results = []
    for line in stdout.splitlines():
        if line.startswith("{"):
            item = json.loads(line)
            if "outcome" in item:
                results.append(item)
    return results


def kinds(result: dict[str, Any]) -> list[str]:
    """The anomaly kinds of one tick result."""
    return [a["kind"] for a in result["anomalies"]]


def read_state(folder: Path) -> dict[str, Any]:
    """The example's state.json."""
    state: dict[str, Any] = json.loads((folder / "state" / "state.json").read_text(encoding="utf-8"))
    return state


def action_args(action: dict[str, Any]) -> dict[str, Any]:
    """The arguments of a recorded action, read back from its ``tool(args)`` summary."""
    summary: str = action["summary"]  # cut at 200 characters: use it for short arguments only
    assert summary.startswith(action["tool"] + "(") and summary.endswith(")"), summary
    inner = summary[len(action["tool"]) + 1 : -1]
    args: dict[str, Any] = json.loads(inner) if inner else {}
    return args


def test_research_demo_goes_from_repeat_to_escalation(tmp_path: Path) -> None:
    """The research demo shows repeat, instructions, recovery, no_progress and escalation; the run exits 0."""
    shutil.copy(REPO / "heartbeat.toml", tmp_path)
    (tmp_path / "examples").mkdir()
    for name in ("__init__.py", "research_agent.py"):
        shutil.copy(EXAMPLES / name, tmp_path / "examples" / name)

    done = heartbeat("run", "--every", "0.2s", "--ticks", "12", "--json", cwd=tmp_path)

    assert done.returncode == 0 and "waiting for a human: research" in done.stderr, done.stderr
    results = tick_results(done.stdout)
    assert len(results) == 12
    repeat = next(i for i, r in enumerate(results) if "repeat" in kinds(r))
    assert "search" in results[repeat]["decision"]["instructions"]
    recovered = next(i for i, r in enumerate(results) if i > repeat and not r["anomalies"])
    assert results[recovered]["progress"] > results[repeat]["progress"]
    flat = next(i for i, r in enumerate(results) if "no_progress" in kinds(r))
    escalated = next(i for i, r in enumerate(results) if r["outcome"] == "needs_human")
    assert repeat < recovered < flat <= escalated
    assert results[escalated]["decision"]["action"] == "escalate"
    assert all(r["outcome"] == "needs_human" and r["actions"] == 0 for r in results[escalated + 1 :])
    state = read_state(tmp_path)
    assert state["data"]["advice_taken"] >= 1  # the step saw them in ctx.instructions
    after = [a["tool"] for a in state["history"] if a["tick"] == results[recovered]["tick"]]
    assert "search_archive" in after  # and acted on them: another tool for the same need
    assert (tmp_path / "state" / "ESCALATION.md").is_file()


def test_code_agent_pass_rate_rises_through_a_loop(tmp_path: Path) -> None:
    """The code agent's real pytest pass rate rises from 0.25 to 1.0, via a loop it recovers from."""
    folder = copy_example("code_agent", tmp_path)
    shipped = {p.name: p.read_bytes() for p in (folder / "sample_project").iterdir()}

    done = heartbeat("run", "--every", "0.1s", "--ticks", "7", "--json", cwd=folder)

    assert done.returncode == 0, done.stderr
    results = tick_results(done.stdout)
    assert [r["progress"] for r in results] == [0.5, 0.75, 0.75, 0.75, 0.75, 1.0, 1.0]
    # The rise at tick 2 overrules the loop while the window holds work from before it.
    assert [r["anomalies"] for r in results[2:4]] == [[], []]
    assert "loop" in kinds(results[4])
    assert "write_file" in results[4]["decision"]["instructions"]
    assert results[5]["anomalies"] == [] and results[5]["decision"]["action"] == "continue"
    state = read_state(folder)
    assert state["data"]["test_runs"][0].startswith("3 failed, 1 passed")  # the shipped project's start
    tools = [a["tool"] for a in state["history"] if a["tick"] == 6]
    assert tools == ["read_file", "read_file", "write_file", "run_tests"]  # it read the tests
    assert {p.name: p.read_bytes() for p in (folder / "sample_project").iterdir()} == shipped
    fixed = (folder / "workspace" / "sample_project" / "textkit.py").read_text(encoding="utf-8")
    assert "len(text) <= width" in fixed


@pytest.mark.parametrize(
    ("pytest_module", "said"),
    [
        ("raise ModuleNotFoundError(\"No module named 'pytest'\")", "No module named 'pytest'"),
        ("raise SystemExit(4)", "exit 4"),  # a usage error: no verdict either
    ],
)
def test_code_agent_without_a_working_pytest_says_so_and_is_not_done(
    tmp_path: Path, pytest_module: str, said: str
) -> None:
    """No pytest (the base install) or pytest failing to run: the agent says the tests did not run
    and records a failed run_tests, never "all tests pass"; once pytest works, it fixes the code."""
    folder = copy_example("code_agent", tmp_path)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "pytest.py").write_text(pytest_module + "\n")
    env = clean_env(PYTHONPATH=os.pathsep.join([str(broken), str(REPO)]))

    done = heartbeat("run", "--every", "0.1s", "--ticks", "2", "--json", cwd=folder, env=env)

    assert "pytest did not run the tests" in done.stdout and "all tests pass" not in done.stdout
    assert [r["progress"] for r in tick_results(done.stdout)] == [None, None]
    state = read_state(folder)
    assert "done" not in state["data"]
    runs = [a for a in state["history"] if a["tool"] == "run_tests"]
    assert len(runs) == 2 and all(said in a["error"] for a in runs)
    # pytest works now: the next heartbeat runs the tests and fixes the first failure.
    fixed = heartbeat("tick", "--json", cwd=folder)
    assert fixed.returncode == 0, fixed.stderr
    assert [r["progress"] for r in tick_results(fixed.stdout)] == [0.5]
    assert "idle" not in fixed.stdout


def test_writing_agent_wanderer_is_caught_by_word_count(tmp_path: Path) -> None:
    """The writing agent's word count rises, stays flat while it only edits, and no_progress catches it."""
    folder = copy_example("writing_agent", tmp_path)

    done = heartbeat("run", "--every", "0.1s", "--ticks", "10", "--json", cwd=folder)

    assert done.returncode == 0 and "waiting for a human" in done.stderr, done.stderr
    results = tick_results(done.stdout)
    words = [r["progress"] for r in results]
    assert words[0] < words[1] < words[2] == words[3] == words[4]
    assert kinds(results[4]) == ["no_progress"]
    assert results[4]["decision"]["action"] == "reassess_goal"
    assert words[5] > words[4] and results[5]["anomalies"] == []  # the conclusion, after the instructions
    assert results[-1]["outcome"] == "needs_human"
    draft = (folder / "draft" / "draft.md").read_text(encoding="utf-8")
    assert len(draft.split()) == words[-1]
    edits = [a for a in read_state(folder)["history"] if a["tool"] == "edit"]
    assert len(edits) >= 4 and len({a["summary"] for a in edits}) == len(edits)  # busy, all different


def run_exec_agent(folder: Path, ticks: int, note: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Tick an exec agent ``ticks`` times, hand it a note, tick once more; the results and the state."""
    done = heartbeat("run", "--every", "0.1s", "--ticks", str(ticks), "--json", cwd=folder)
    assert done.returncode == 0, done.stderr
    resumed = heartbeat("resume", "--note", note, cwd=folder)
    assert resumed.returncode == 0, resumed.stderr
    last = heartbeat("tick", "--json", cwd=folder)
    assert last.returncode == 0, last.stderr
    return tick_results(done.stdout) + tick_results(last.stdout), read_state(folder)


def test_shell_agent_speaks_the_exec_protocol(tmp_path: Path) -> None:
    """The POSIX sh agent persists its data, reports progress and actions, and receives a note."""
    folder = copy_example("exec_agent/shell", tmp_path)
    note = 'skip "WARN" lines\nand keep C:\\logs as is'

    results, state = run_exec_agent(folder, 3, note)

    assert [r["progress"] for r in results] == [5.0, 10.0, 12.0, None]
    assert state["data"] == {"offset": 12, "tickets": 3}
    tickets = [action_args(a)["title"] for a in state["history"] if a["tool"] == "open_ticket"]
    assert tickets == [
        "payment webhook returned 502",
        "disk usage above 90% on /var",
        'export job failed: "permission denied" on /exports',
    ]
    acknowledged = [a for a in state["history"] if a["tool"] == "acknowledge"]
    assert [action_args(a) for a in acknowledged] == [{"instructions": note}]
    assert acknowledged[0]["tick"] == 4


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_agent_speaks_the_exec_protocol(tmp_path: Path) -> None:
    """The Node agent labels issues across heartbeats, reports costs and an error, and receives a note."""
    folder = copy_example("exec_agent/node", tmp_path)

    results, state = run_exec_agent(folder, 3, "label docs issues first")

    assert [r["progress"] for r in results] == [2.0, 4.0, 6.0, None]
    assert state["data"]["labels"] == {
        "101": "bug",
        "102": "docs",
        "103": "question",
        "104": "bug",
        "106": "enhancement",
    }
    failed = [a for a in state["history"] if a["error"]]
    assert [(a["tool"], a["error"]) for a in failed] == [("label_issue", "issue #105 has no description")]
    assert state["budget"]["cost"] == pytest.approx(5 * 0.0004)
    acknowledged = [a for a in state["history"] if a["tool"] == "acknowledge"]
    assert [action_args(a) for a in acknowledged] == [{"instructions": "label docs issues first"}]


def load_fake_server(folder: Path) -> ModuleType:
    """Import the copied fake_server.py by path (it is a script, not a package module)."""
    spec = importlib.util.spec_from_file_location("llm_fake_server", folder / "fake_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def test_llm_agent_against_the_fake_server(tmp_path: Path) -> None:
    """The LLM agent records tool calls, puts the instructions into its prompt and never leaks the key."""
    folder = copy_example("llm_agent", tmp_path)
    server = load_fake_server(folder).start()
    key = "sk-test-" + secrets.token_hex(12)
    try:
        env = clean_env(OPENAI_BASE_URL=server.url, OPENAI_API_KEY=key)
        done = heartbeat("run", "--every", "0.1s", "--ticks", "4", "--json", cwd=folder, env=env)
        failing = heartbeat("tick", "--json", cwd=folder, env={**env, "OPENAI_MODEL": "fail-500"})
    finally:
        server.close()

    assert done.returncode == 0, done.stderr
    results = tick_results(done.stdout)
    assert [r["progress"] for r in results] == [1.0, 2.0, 2.0, 3.0]
    assert kinds(results[2])[0] == "repeat"  # the same call and answer may also be recurring
    instructions = results[2]["decision"]["instructions"]
    assert instructions and "search" in instructions  # they name the repeated tool
    systems = [body["messages"][0]["content"] for body in server.chat_requests()]
    assert any(instructions in s for s in systems)  # the recovery text reached the model's prompt
    state = read_state(folder)
    assert state["spend_totals"]["gpt-4o-mini"]["calls"] >= 4  # every model call's tokens, as spend
    first = [a for a in state["history"] if a["tick"] == 1]
    assert [a["tool"] for a in first] == ["search", "read_file", "write_note", "answer"]
    assert [action_args(a) for a in first[:2]] == [{"query": "scheduled agents"}, {"path": "cron.md"}]
    assert [n["title"] for n in state["data"]["notes"]] == [
        "Scheduled agents",
        "Loops and repeats",
        "Progress metrics",
    ]
    sent = {v for r in server.requests for k, v in r["headers"].items() if k.lower() == "authorization"}
    assert sent == {f"Bearer {key}"}  # the key is used, as a header only

    assert failing.returncode == 0, failing.stderr  # a failing endpoint is an errored action, not a crash
    last = read_state(folder)["history"][-1]
    assert last["tool"] == "chat" and last["error"].startswith("HTTP 500 from http://127.0.0.1:")

    outputs = done.stdout + done.stderr + failing.stdout + failing.stderr
    files = [p.read_bytes() for p in (folder / "state").rglob("*") if p.is_file()]
    assert key not in outputs and all(key.encode() not in f for f in files)


def cron_job_lines(text: str) -> list[str]:
    """The job lines of a crontab (not comments, blanks or NAME=value settings)."""
    return [
        line
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#") and not re.match(r"^[A-Z_]+=", line)
    ]


def test_deploy_files_are_well_formed(tmp_path: Path) -> None:
    """The crontab, systemd units and Kubernetes CronJob each run `heartbeat tick` and parse."""
    deploy = EXAMPLES / "deploy"

    jobs = cron_job_lines((deploy / "crontab").read_text(encoding="utf-8"))
    assert len(jobs) == 1
    fields = jobs[0].split(None, 5)
    assert all(re.fullmatch(r"[\d*/,-]+", f) for f in fields[:5]), fields[:5]
    command = fields[5]
    assert "heartbeat tick" in command and "%" not in command  # % would be a newline to cron
    assert subprocess.run(["sh", "-n", "-c", command], capture_output=True).returncode == 0

    units = {}
    for name in ("heartbeat-agent.service", "heartbeat-agent.timer"):
        parser = configparser.ConfigParser(interpolation=None, strict=True)
        parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
        parser.read(deploy / name, encoding="utf-8")
        units[name] = parser
    service, timer = units["heartbeat-agent.service"], units["heartbeat-agent.timer"]
    assert service["Service"]["Type"] == "oneshot"
    assert service["Service"]["ExecStart"].endswith("heartbeat tick")
    assert service["Service"]["WorkingDirectory"] and service["Service"]["EnvironmentFile"]
    assert service["Service"]["SuccessExitStatus"].split() == ["3", "4", "5"]
    assert timer["Timer"]["OnCalendar"] and timer["Timer"]["Unit"] == "heartbeat-agent.service"
    assert timer["Install"]["WantedBy"] == "timers.target"
    if shutil.which("systemd-analyze"):
        # verify checks keys and values; ExecStart must name a real executable.
        for name in units:
            text = (deploy / name).read_text(encoding="utf-8")
            (tmp_path / name).write_text(text.replace(service["Service"]["ExecStart"], "/bin/true"))
        verify = subprocess.run(
            ["systemd-analyze", "verify", *(str(tmp_path / n) for n in units)], capture_output=True, text=True
        )
        assert verify.returncode == 0 and not re.search(
            r"Unknown|Invalid|Failed", verify.stdout + verify.stderr
        ), verify.stderr

    manifest = (deploy / "cronjob.yaml").read_text(encoding="utf-8")
    assert "\t" not in manifest
    for needed in (
        "kind: CronJob",
        "concurrencyPolicy: Forbid",
        "restartPolicy: Never",
        "claimName: research-agent-state",
        "secretKeyRef:",
        "heartbeat tick",
    ):
        assert needed in manifest, needed
    script = textwrap.dedent(manifest.split("- |\n", 1)[1].split("\n              env:", 1)[0])
    assert "case $rc in 3|4|5) exit 0" in script
    assert subprocess.run(["sh", "-n", "-c", script], capture_output=True).returncode == 0
    try:
        yaml = importlib.import_module("yaml")  # optional: used when installed, never required
    except ImportError:
        return
    docs = {d["kind"]: d for d in yaml.safe_load_all(manifest)}
    assert docs["CronJob"]["spec"]["concurrencyPolicy"] == "Forbid"
    claim = docs["CronJob"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["volumes"][0]
    assert claim["persistentVolumeClaim"]["claimName"] == docs["PersistentVolumeClaim"]["metadata"]["name"]
