"""Issue 27, the first hour: what a newcomer meets, run as a newcomer runs it (a real process)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def hb(cwd: Path, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m heartbeat ARGV`` in ``cwd``, output captured."""
    return subprocess.run(
        [sys.executable, "-m", "heartbeat", *argv],
        cwd=cwd,
        text=True,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=60,
    )


def write(path: Path, text: str) -> Path:
    """``text`` dedented into ``path``."""
    path.write_text(textwrap.dedent(text))
    return path


# 2. Every install hint names the distribution.


def test_no_install_hint_names_the_unrelated_heartbeat_package() -> None:
    """README, package docstrings and errors, and examples never name PyPI's unrelated `heartbeat[extra]`."""
    files = [ROOT / "README.md", *ROOT.glob("heartbeat/**/*.py"), *ROOT.glob("examples/**/*.py")]
    assert len(files) > 50
    wrong = [
        f"{path.relative_to(ROOT)}: {line.strip()}"
        for path in files
        for line in path.read_text(encoding="utf-8").splitlines()
        if re.search(r"(?<![\w-])heartbeat\[", line)
    ]
    assert not wrong


def test_mcp_proxy_without_mcp_names_the_distribution(tmp_path: Path) -> None:
    """mcp-proxy with no `mcp` installed: exit 2, one line that says pip install 'heartbeat-watchdog[mcp]'."""
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "mcp.py").write_text("raise ImportError('No module named mcp')\n")
    env = {"PYTHONPATH": os.pathsep.join([str(fake), str(ROOT)])}
    done = hb(tmp_path, "mcp-proxy", "--", "true", env=env)
    assert done.returncode == 2, done.stderr
    assert "pip install -e '.[mcp]' in the heartbeat checkout" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


# 3. The Frameworks table: kill_file belongs to the adapter.


def _readme_section(title: str) -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return readme.split(f"\n## {title}", 1)[1].split("\n## ", 1)[0]


def test_the_frameworks_table_monitor_row_runs_as_written() -> None:
    """The Monitor row's code runs; `Monitor(kill_file=...)` itself is refused, so the row must not say it."""
    from heartbeat import Monitor

    row = next(line for line in _readme_section("Frameworks").splitlines() if "heartbeat.Monitor" in line)
    code = re.findall(r"`([^`]*kill_file=[^`]*\))`", row)
    assert code, row
    from heartbeat.integrations.langchain import HeartbeatCallbackHandler

    eval(code[0], {"Monitor": Monitor, "HeartbeatCallbackHandler": HeartbeatCallbackHandler})
    with pytest.raises(TypeError):
        Monitor(kill_file="KILL")  # type: ignore[call-arg]


# 6. The MCP section: a client passes its environment only when given env=.


def test_the_mcp_section_names_what_the_python_client_passes() -> None:
    """The README lists the variables the Python mcp client passes without env= (the SDK's own list)."""
    from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

    section = _readme_section("MCP servers: `heartbeat mcp-proxy`")
    assert "`env=`" in section
    for name in DEFAULT_INHERITED_ENV_VARS:
        assert f"`{name}`" in section, name


# 4. --exec and the command notifier are not run by a shell.


def test_exec_with_a_shell_variable_is_refused_and_writes_no_such_file(tmp_path: Path) -> None:
    """`--exec 'python a.py $HEARTBEAT_ACTIONS'`: exit 2, one line saying no shell runs it; no `$...` file."""
    done = hb(tmp_path, "tick", "--exec", "python agent.py --out $HEARTBEAT_ACTIONS")
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1
    assert "$HEARTBEAT_ACTIONS" in done.stderr and "not run by a shell" in done.stderr
    assert "sh -c" in done.stderr
    assert not list(tmp_path.rglob("$*"))


def test_exec_with_a_redirection_is_refused(tmp_path: Path) -> None:
    """`>>` in --exec would reach the program as an argument: exit 2."""
    done = hb(tmp_path, "tick", "--exec", "echo {} >> actions.txt")
    assert done.returncode == 2
    assert "'>>' would reach echo as an argument" in done.stderr


@pytest.mark.parametrize(
    "tail", [">> out.txt", "| cat", "> out.txt", "&& true", "2>&1", "$HEARTBEAT_ACTIONS"]
)
def test_exec_of_a_shell_script_with_shell_syntax_is_refused(tmp_path: Path, tail: str) -> None:
    """`--exec 'sh b.sh >> out.txt'`: sh runs b.sh with `>>` and `out.txt` as its arguments, so it is
    refused like any program's (exit 2, one line) and b.sh never runs."""
    (tmp_path / "b.sh").write_text('echo "$@" > ran.txt\n')
    done = hb(tmp_path, "tick", "--exec", f"sh b.sh {tail}")
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "not run by a shell" in done.stderr
    assert not (tmp_path / "ran.txt").exists() and not (tmp_path / "out.txt").exists()


def test_exec_through_a_shell_reads_the_variable(tmp_path: Path) -> None:
    """A shell as the program expands $HEARTBEAT_ACTIONS itself: the action is recorded."""
    line = '{"tool": "grep", "args": {}, "output": "3 matches"}'
    script = f'echo {shlex.quote(line)} >> "$HEARTBEAT_ACTIONS"'
    done = hb(tmp_path, "tick", "--exec", f"sh -c {shlex.quote(script)}")
    assert done.returncode == 0, done.stderr
    assert "1 action(s)" in done.stdout


def test_a_command_notifier_written_for_a_shell_is_a_config_error_for_every_command(tmp_path: Path) -> None:
    """`command = "cat >> notes.txt"`: tick, status and validate all refuse it, exit 2, before any step."""
    (tmp_path / "agent.py").write_text("def step(ctx):\n    open('ran', 'w').close()\n")
    write(
        tmp_path / "heartbeat.toml",
        """
        [agent]
        step = "agent:step"
        [[notify]]
        type = "command"
        command = "cat >> notes.txt"
        """,
    )
    for command in ("tick", "validate", "status"):
        done = hb(tmp_path, command)
        assert done.returncode == 2, (command, done.stderr)
        assert "not run by a shell" in done.stderr and "sh -c 'cat >> notes.txt'" in done.stderr
    assert not (tmp_path / "ran").exists()


# 18. The command notifier masks configured secrets, not every word.


def test_a_failing_command_notifier_shows_its_words_and_masks_its_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cat: /…/no-such-notes.txt: No such file`, readable; a `${ENV}` secret in the command still `***`."""
    from datetime import UTC, datetime

    from heartbeat.base.errors import NotifyError
    from heartbeat.config.file import load_config
    from heartbeat.core.models import Notification
    from heartbeat.notify.notifiers import build_notifiers

    monkeypatch.setenv("NOTES_TOKEN", "s3cr3t-t0ken-value")
    write(
        tmp_path / "heartbeat.toml",
        """
        [[notify]]
        type = "command"
        name = "words"
        command = "cat ${NOTES_TOKEN} no-such-notes.txt"
        [[notify]]
        name = "secret"
        type = "command"
        command = "cat no-such-notes.txt ${NOTES_TOKEN}"
        """,
    )
    config = load_config(tmp_path / "heartbeat.toml")
    words, secret = build_notifiers(config.notify, base_dir=tmp_path)
    message = Notification(
        key="k", kind="escalation", agent="agent", reason="r", text="t", created_at=datetime.now(UTC)
    )
    with pytest.raises(NotifyError, match=r"cat: no-such-notes\.txt: No such file"):
        words.send(message)
    with pytest.raises(NotifyError) as caught:
        secret.send(message)
    assert "s3cr3t-t0ken-value" not in str(caught.value) and "cat: ***: No such file" in str(caught.value)


# 12. Error texts: no "at at", no "heartbeat: heartbeat:", a "did you mean" for a typo.


def test_a_corrupt_state_message_says_at_once(tmp_path: Path) -> None:
    """A control character in state.json: "... character at line 4 column 4", never "at at"."""
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "state.json").write_text('{"schema_version": 1,\n"x":\n"a\n\tb"}')
    done = hb(tmp_path, "status", "--state-dir", "state")
    assert done.returncode == 2
    assert "at line" in done.stderr and "at at" not in done.stderr


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["stauts"], "invalid choice: 'stauts'"),
        (["tick", "--kil-file", "KILL"], "unrecognized arguments: --kil-file KILL"),
        (["--jsno"], "unrecognized arguments: --jsno"),
        (["outbox", "lsit"], "outbox: argument action: invalid choice: 'lsit'"),
    ],
)
def test_usage_errors_are_said_once_with_a_suggestion(tmp_path: Path, argv: list[str], said: str) -> None:
    """One line, "heartbeat: error:" once, what was wrong, and the closest command or flag."""
    done = hb(tmp_path, *argv)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("heartbeat: error: ") and done.stderr.count("heartbeat") == 1
    assert said in done.stderr
    assert re.search(r"\(did you mean (status|--kill-file|--json|list)\?\)$", done.stderr.strip())


def test_several_mistyped_flags_each_get_their_suggestion(tmp_path: Path) -> None:
    """`status --jsno --agnt x`: both flags named with their closest."""
    done = hb(tmp_path, "status", "--jsno", "--agnt", "x")
    assert "(did you mean --json for --jsno, --agent for --agnt?)" in done.stderr


# 13. Each command's --help lists the exit codes it can return.


@pytest.mark.parametrize(
    ("command", "codes"),
    [
        ("tick", [0, 1, 2, 3, 4, 5]),
        ("status", [0, 2, 3, 4, 6]),
        ("kill", [0, 2]),
        ("pause", [0, 2, 5]),
        ("schema", [0]),
        ("notify", [0, 1, 2]),
    ],
)
def test_each_command_help_lists_only_its_exit_codes(tmp_path: Path, command: str, codes: list[int]) -> None:
    """`heartbeat COMMAND --help`: the exit codes that command returns, no others."""
    done = hb(tmp_path, command, "--help")
    table = done.stdout.split("exit codes:\n", 1)[1]
    assert [int(c) for c in re.findall(r"^  (\d)  ", table, re.M)] == codes


def test_the_top_help_still_lists_every_exit_code(tmp_path: Path) -> None:
    """`heartbeat --help`: 0 to 6 and the precedence."""
    done = hb(tmp_path, "--help")
    table = done.stdout.split("exit codes:\n", 1)[1]
    assert [int(c) for c in re.findall(r"^  (\d)  ", table, re.M)] == list(range(7))
    assert "the first of 3, 5, 2, 4, 6, 1 wins" in table


# 14. The common flags are accepted by every command that reads an agent.

READS_AN_AGENT = [
    "run", "tick", "status", "kill", "pause", "resume", "log", "outbox",
    "validate", "notify", "metrics", "mcp-proxy", "report",
]  # fmt: skip


@pytest.mark.parametrize("command", READS_AN_AGENT)
def test_every_command_that_reads_an_agent_takes_the_common_flags(command: str) -> None:
    """--config, --state-dir, --agent, --kill-file, --step, --exec, --progress, --webhook parse for each."""
    from heartbeat.cli.parser import build_parser

    common = ["--config", "c.toml", "--state-dir", "s", "--agent", "a", "--kill-file", "K"]
    common += ["--step", "m:s", "--exec", "x", "--progress", "m:p", "--webhook", "env:HOOK"]
    extra = {"notify": ["--test"], "mcp-proxy": ["--", "true"]}.get(command, [])
    args = build_parser([command]).parse_args([command, *common, *extra])
    assert args.kill_file == "K" and args.state_dir == "s"


def test_log_and_metrics_take_kill_file_in_a_real_process(tmp_path: Path) -> None:
    """`heartbeat log --kill-file K` and `metrics --kill-file K` run (exit 0), as status does."""
    (tmp_path / "agent.py").write_text("def step(ctx):\n    pass\n")
    write(tmp_path / "heartbeat.toml", '[agent]\nstep = "agent:step"\n')
    assert hb(tmp_path, "tick").returncode == 0
    for command in ("log", "metrics", "status", "pause", "resume"):
        done = hb(tmp_path, command, "--kill-file", str(tmp_path / "KILL"))
        assert done.returncode == 0, (command, done.stderr)


# 20. A second pause says it replaced the reason; resume on an active agent says it was not paused.


def test_pause_twice_and_resume_when_active_say_what_happened(tmp_path: Path) -> None:
    """pause, pause again (the earlier reason named), resume, resume again ("was not paused")."""
    (tmp_path / "agent.py").write_text("def step(ctx):\n    pass\n")
    write(tmp_path / "heartbeat.toml", '[agent]\nstep = "agent:step"\n')
    assert hb(tmp_path, "tick").returncode == 0
    assert "replacing" not in hb(tmp_path, "pause", "--reason", "deploy").stdout
    again = hb(tmp_path, "pause", "--reason", "migration").stdout
    assert "paused (migration), replacing the earlier reason (deploy)" in again
    assert hb(tmp_path, "resume").stdout == "agent: resumed\n"
    assert hb(tmp_path, "resume").stdout == "agent: was not paused or waiting for a human\n"


# 19. init with an agent.py of one's own; the project page, not README.md; tick with no config.


def test_init_beside_an_agent_py_without_step_says_what_to_add(tmp_path: Path) -> None:
    """An agent.py of ones own with no step is kept; `init` says to add step and progress, not "tick"."""
    (tmp_path / "agent.py").write_text("print('mine')\n")
    done = hb(tmp_path, "init")
    assert done.returncode == 0
    last = done.stdout.strip().splitlines()[-1]
    assert "has no step or progress" in last and "def step(ctx)" in last
    assert (tmp_path / "agent.py").read_text() == "print('mine')\n"


def test_init_beside_an_agent_py_with_step_says_tick(tmp_path: Path) -> None:
    """An agent.py that defines step and progress: the usual "next: heartbeat tick"."""
    (tmp_path / "agent.py").write_text("def step(ctx):\n    pass\n\n\ndef progress(ctx):\n    return 0\n")
    done = hb(tmp_path, "init")
    assert done.stdout.strip().splitlines()[-1].startswith("next: heartbeat tick")


def test_init_files_name_the_reference(tmp_path: Path) -> None:
    """The generated config and agent send a reader to the checkout's README (heartbeat is not on
    the package index: there is no project page to link), and the README is there."""
    from heartbeat.cli.scaffold import REFERENCE

    assert hb(tmp_path, "init").returncode == 0
    for name in ("heartbeat.toml", "agent.py"):
        text = (tmp_path / name).read_text()
        assert REFERENCE in text and "pypi.org" not in text
    assert (ROOT / "README.md").is_file()
    assert hb(tmp_path, "tick").returncode == 0


def test_tick_with_no_config_says_there_is_no_heartbeat_toml(tmp_path: Path) -> None:
    """`heartbeat tick` in an empty folder: "no heartbeat.toml here", exit 2."""
    done = hb(tmp_path, "tick")
    assert done.returncode == 2
    assert "no heartbeat.toml here" in done.stderr and "heartbeat init" in done.stderr


# 16. A bad schedule.cron: one rule (refused, exit 2, one message) for every command.


def test_a_bad_cron_is_refused_alike_by_tick_status_validate_and_run(tmp_path: Path) -> None:
    """`cron = "61 * * * *"`: tick, status, validate and run exit 2 with one same line; no step runs."""
    (tmp_path / "agent.py").write_text("def step(ctx):\n    open('ran', 'w').close()\n")
    write(tmp_path / "heartbeat.toml", '[agent]\nstep = "agent:step"\n[schedule]\ncron = "61 * * * *"\n')
    said = set()
    for command in ("tick", "status", "validate", "run"):
        done = hb(tmp_path, command)
        assert done.returncode == 2, (command, done.stderr)
        said.add(done.stderr)
    assert len(said) == 1
    assert "schedule.cron" in said.pop() and not (tmp_path / "ran").exists()


def test_the_cron_check_agrees_with_the_scheduler() -> None:
    """heartbeat.cronexpr accepts exactly what APScheduler's from_crontab accepts, with its message,
    but an expression it takes that never fires (``0 0 31 2 *``: live round 57), which is refused."""
    import random
    from datetime import UTC, datetime

    from apscheduler.triggers.cron import CronTrigger

    from heartbeat.config.cronexpr import cron_problem

    def theirs(expr: str) -> str | None:
        try:
            trigger = CronTrigger.from_crontab(expr, timezone="UTC")
        except ValueError as exc:
            return str(exc)
        fires = trigger.get_next_fire_time(None, datetime(2026, 1, 1, tzinfo=UTC)) is not None
        return None if fires else f"{expr!r} never fires"

    def agree(expr: str) -> bool:
        said, ours = theirs(expr), cron_problem(expr)
        return ours is None if said is None else (ours or "").startswith(said)

    parts = "* */0 */5 */59 */60 */23 0 59 60 24 23 1-5 5-1 0-0 1-5/2 1-5/9 5/10 5/70 mon MON-fri sun-mon "
    parts += "monday jan jan-dec dec-jan last lastx foo 1,2 7 0-6 1-7 13 12 31 32 0/1 1- x-y mon-fri/2 L ?"
    pieces = parts.split()
    rng = random.Random(27)
    for _ in range(3000):
        expr = " ".join(rng.choice(pieces) for _ in range(rng.choice((4, 5, 5, 5, 6))))
        assert agree(expr), expr
    # Days, months and weekdays that no date may have together, and some that one has.
    days, months = ["29", "31", "last", "30,31"], ["feb", "apr,jun", "2,4", "9-11/2"]
    weekdays = ["*", "sat-sun"]
    never = 0
    for day in days:
        for month in months:
            for weekday in weekdays:
                expr = f"0 0 {day} {month} {weekday}"
                assert agree(expr), expr
                never += theirs(expr) is not None
    assert never >= 8


# 10. `log` rows for anomalies name the detector.

REPEATER = """
def step(ctx):
    for _ in range(3):
        if ctx.record("search", {"q": "x"}, output="the same page again"):
            return
"""


def test_log_rows_for_anomalies_name_the_detector(tmp_path: Path) -> None:
    """`heartbeat log --event anomaly`: "anomaly     repeat: search(...) was called 3 times ..."."""
    (tmp_path / "agent.py").write_text(REPEATER)
    write(tmp_path / "heartbeat.toml", '[agent]\nstep = "agent:step"\n')
    assert hb(tmp_path, "tick").returncode == 0
    rows = hb(tmp_path, "log", "--event", "anomaly").stdout.splitlines()
    assert len(rows) == 1
    assert re.search(r"anomaly +repeat: search\(", rows[0])


# 11. A SyntaxError in the agent, and config errors, in plain words.


def test_a_syntax_error_in_the_agent_is_file_line_and_what(tmp_path: Path) -> None:
    """`def step(ctx)` without the colon: "agent.py line 1: expected ':'", not the exception's tuple."""
    (tmp_path / "agent.py").write_text("def step(ctx)\n    pass\n")
    write(tmp_path / "heartbeat.toml", '[agent]\nstep = "agent:step"\n')
    done = hb(tmp_path, "tick")
    assert done.returncode == 2
    assert f"agent does not compile: {tmp_path / 'agent.py'} line 1: expected ':'" in done.stderr
    assert "SyntaxError(" not in done.stderr and "(" not in done.stderr.split("compile:")[1]


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        ("[policy]\nescalate_after = 'x'\n", "policy.escalate_after: expected a whole number, got text"),
        (
            "[[notify]]\ntype = 'webhook'\nurl = 'http://h.example/x'\nretries = 'x'\n",
            "notify[0].retries: expected a whole number, got text",
        ),
        ("[[notify]]\ntype = 'webhok'\n", "notify[0].type: unknown notifier type 'webhok'"),
        (
            "[detectors.repeat]\nthreshold = 1\n",
            "detectors.repeat.threshold: expected a number of at least 2",
        ),
        ("[detectors]\nrepeat = 3\n", "detectors.repeat: expected a table"),
        ("[[notify]]\ntype = 'webhook'\n", "notify[0].url: required, but missing"),
        ("[[notify]]\ntype = 'file'\nname = ' '\n", "notify[0].name: expected text that is not blank"),
    ],
)
def test_config_errors_name_the_toml_key_and_what_it_should_be(tmp_path: Path, toml: str, said: str) -> None:
    """No pydantic path (notify.0.plugin.type) and no "Input should be": the key, the expected value."""
    (tmp_path / "heartbeat.toml").write_text(toml)
    done = hb(tmp_path, "validate")
    assert done.returncode == 2
    assert said in done.stderr, done.stderr
    assert "Input should" not in done.stderr and ".0." not in done.stderr and "plugin" not in done.stderr


def test_a_bad_value_is_never_echoed(tmp_path: Path) -> None:
    """A header given as text instead of a table: its kind is said, its (secret) text is not."""
    toml = "[[notify]]\ntype = 'webhook'\nurl = 'http://h.example/x'\nheaders = 'Bearer s3cr3t-t0ken'\n"
    (tmp_path / "heartbeat.toml").write_text(toml)
    done = hb(tmp_path, "validate")
    assert "notify[0].headers: expected a table" in done.stderr and "got text" in done.stderr
    assert "s3cr3t" not in done.stderr


# 15. replay --format NAME on a file NAME cannot read: exit 2, and what it looks like.


def test_replay_with_the_wrong_format_says_what_the_file_looks_like(tmp_path: Path) -> None:
    """`replay openai.json --format anthropic`: exit 2, one line naming openai, not "an empty trace"."""
    import json

    sys.path.insert(0, str(ROOT / "tests"))
    from _formats import openai_messages

    dump = tmp_path / "openai.json"
    dump.write_text(json.dumps(openai_messages()))
    done = hb(tmp_path, "replay", str(dump), "--format", "anthropic")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "--format anthropic does not read this file: it looks like openai" in done.stderr
    assert hb(tmp_path, "replay", str(dump), "--format", "openai").returncode == 0


def test_replay_of_a_trace_with_an_import_format_says_it_is_a_trace(tmp_path: Path) -> None:
    """A heartbeat trace given `--format openai`: exit 2, "it looks like a heartbeat trace"."""
    trace = ROOT / "tests" / "traces" / "stuck_repeat.jsonl"
    done = hb(tmp_path, "replay", str(trace), "--format", "openai")
    assert done.returncode == 2 and "it looks like a heartbeat trace" in done.stderr


def test_replay_of_a_file_no_format_reads_is_exit_2(tmp_path: Path) -> None:
    """`[]` with --format openai: no tool call and no other format: exit 2, not "an empty trace"."""
    (tmp_path / "empty.json").write_text("[]")
    done = hb(tmp_path, "replay", "empty.json", "--format", "openai")
    assert done.returncode == 2 and "finds no tool call in this file" in done.stderr


# 17. A read-only state folder: report's error names the report, once; validate says a tick would stop.


def test_a_read_only_state_folder_report_and_validate(tmp_path: Path) -> None:
    """`report`: one line naming the report (no "previous state kept" twice); `validate`: exit 2, as tick."""
    (tmp_path / "agent.py").write_text("def step(ctx):\n    pass\n")
    write(tmp_path / "heartbeat.toml", '[agent]\nstep = "agent:step"\n')
    state = tmp_path / "state"
    state.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(state)], check=False)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        assert hb(tmp_path, "tick").returncode == 0
        assert hb(tmp_path, "validate").returncode == 0
        subprocess.run(["mount", "-o", "remount,ro", str(state)], check=True)
        report = hb(tmp_path, "report")
        assert report.returncode == 2 and report.stderr.count("\n") == 1
        assert f"{state / 'report.html'}: could not write the report: " in report.stderr
        assert "Read-only file system" in report.stderr and "previous state kept" not in report.stderr
        validate = hb(tmp_path, "validate")
        assert validate.returncode == 2 and "state ok" not in validate.stdout
        assert "read-only" in validate.stderr.lower()
        assert "a tick would stop before its step" in validate.stderr
        assert hb(tmp_path, "tick").returncode == 2
        assert hb(tmp_path, "report", "--out", str(tmp_path / "r.html")).returncode == 0
    finally:
        subprocess.run(["umount", "-l", str(state)], check=False)


# 7. Observe mode shows in status, with what enforce mode would have done.


def test_status_in_observe_mode_says_so_and_what_enforce_would_have_done(tmp_path: Path) -> None:
    """Five stuck ticks in observe mode: status (text, --json) names the mode and the escalation enforce
    mode would have made; never "stuck streak 5 of 3" nor a recovery attempt as if one were running."""
    import json

    (tmp_path / "agent.py").write_text(REPEATER)
    write(tmp_path / "heartbeat.toml", '[agent]\nstep = "agent:step"\n[policy]\nmode = "observe"\n')
    for _ in range(5):
        assert hb(tmp_path, "tick").returncode == 0
    text = hb(tmp_path, "status").stdout
    assert "active (observe): detects and journals, never instructs nor escalates" in text
    assert "stuck streak 5 (enforce mode escalates at 3)" in text
    assert re.search(r"recovery +enforce mode would have escalated at tick \d; nothing injected", text)
    assert "5 of 3" not in text and "(attempt" not in text
    report = json.loads(hb(tmp_path, "status", "--json").stdout)
    assert report["mode"] == "observe" and report["observed"] == "escalate"
    assert isinstance(report["observed_since"], int) and report["status"] == "active"


def test_status_in_enforce_mode_is_as_before(tmp_path: Path) -> None:
    """Enforce mode: "stuck streak 1 of 3", the recovery and its attempt; --json says mode enforce."""
    import json

    (tmp_path / "agent.py").write_text(REPEATER)
    write(tmp_path / "heartbeat.toml", '[agent]\nstep = "agent:step"\n')
    assert hb(tmp_path, "tick").returncode == 0
    text = hb(tmp_path, "status").stdout
    assert "stuck streak 1 of 3" in text and "observe" not in text
    report = json.loads(hb(tmp_path, "status", "--json").stdout)
    assert report["mode"] == "enforce" and report["observed"] is None


# 8. Recovery instructions name the pattern; a crashing step is not told to avoid step().

STAMPED = """
import time

def step(ctx):
    for _ in range(2):
        if ctx.record("run_build", {"stamp": str(time.time_ns())}, output="build ok: 3 warnings"):
            return
"""


def _instructions(tmp_path: Path, ticks: int) -> tuple[str, str]:
    """The ticks' output, and the instructions in state.json after them."""
    import json

    out = "".join(hb(tmp_path, "tick").stdout for _ in range(ticks))
    state = json.loads((tmp_path / "state" / "state.json").read_text())
    return out, state.get("instructions") or ""


def test_instructions_name_the_pattern_not_a_call_with_a_timestamp(tmp_path: Path) -> None:
    """run_build with a new stamp each time: "Do not repeat: run_build({"stamp":"#"}) with any stamp"."""
    (tmp_path / "agent.py").write_text(STAMPED)
    write(tmp_path / "heartbeat.toml", '[agent]\nstep = "agent:step"\n')
    _, text = _instructions(tmp_path, 3)
    avoid = next(line for line in text.splitlines() if line.startswith("Do not repeat:"))
    assert avoid == 'Do not repeat: run_build({"stamp":"#"}) with any stamp.'
    assert not re.search(r"\d{6}", text)  # no timestamp anywhere the model reads


def test_a_crashing_step_is_not_told_to_avoid_step(tmp_path: Path) -> None:
    """A step that raises every tick: escalation as before, but no "Do not repeat: step()"."""
    (tmp_path / "agent.py").write_text("def step(ctx):\n    raise RuntimeError('db down')\n")
    write(tmp_path / "heartbeat.toml", '[agent]\nstep = "agent:step"\n')
    _, text = _instructions(tmp_path, 3)
    avoid = next(line for line in text.splitlines() if line.startswith("Do not repeat:"))
    assert "step()" not in avoid and "no action of yours" in avoid
    assert "The step itself raised an error" in text
    assert "The same call will give the same answer" not in text  # advice about calls is not for it


def test_the_pattern_of_a_call() -> None:
    """pattern(): the exact call when it has no number; else the masked shape and the varying keys."""
    from heartbeat.detect.detectors.fingerprints import pattern

    assert pattern('search({"q":"cats"})') == 'search({"q":"cats"})'
    assert pattern('read({"path":"a.txt","line":120})') == 'read({"path":"a.txt","line":#}) with any line'
    assert pattern('run({"a":"x1","b":"y2"})') == 'run({"a":"#","b":"#"}) with any a, b'
    assert pattern('run({"a":"x1","b":"y2') == 'run({"a":"#","b":"#' + " (# is any number)"
    # A tool's own name is kept: a newcomer read `#({"db":"app.db",...})` for sqlite3 (live round 36).
    assert (
        pattern('sqlite3({"sql":"SELECT 1 LIMIT 5"})') == 'sqlite3({"sql":"SELECT # LIMIT #"}) with any sql'
    )
    assert pattern('s3.list({"prefix":"a"})') == 's3.list({"prefix":"a"})'


# 9. The recovery attempt in status is the one the instructions named.


def test_the_attempt_in_status_is_the_attempt_the_agent_was_told(tmp_path: Path) -> None:
    """Stuck, told "attempt 1", then escalated: status says attempt 1 (not 2), so does ESCALATION.md."""
    (tmp_path / "agent.py").write_text(STAMPED)
    write(tmp_path / "heartbeat.toml", '[agent]\nstep = "agent:step"\n')
    out = "".join(hb(tmp_path, "tick").stdout for _ in range(4))
    told = re.findall(r"recovery attempt (\d+)", out)
    assert told and "escalated to a human" in out
    status = hb(tmp_path, "status").stdout
    assert re.search(rf"recovery +try_alternative \(attempt {told[-1]}\)", status), status
    assert f"{told[-1]} recovery attempt(s)" in (tmp_path / "state" / "ESCALATION.md").read_text()


def test_status_before_the_first_tick_says_no_heartbeat_yet(tmp_path: Path) -> None:
    """Right after `init` (its `every = "30m"` in heartbeat.toml), `status` says no heartbeat came
    yet, not "no schedule" (live round 43)."""
    assert hb(tmp_path, "init", ".").returncode == 0
    shown = hb(tmp_path, "status")
    assert "not checked (no heartbeat yet)" in shown.stdout and "no schedule" not in shown.stdout


def test_a_state_folder_that_cannot_be_made_is_said_by_validate_and_run_makes_none(tmp_path: Path) -> None:
    """Agent b's state folder lies under a file: `validate` says so (exit 2; it said "config ok"),
    and `run` stops before it makes or locks any agent's folder, without claiming a previous state
    was kept (live round 43: it left state/a/.run.lock behind)."""
    (tmp_path / "agent.py").write_text('def step(ctx):\n    ctx.record("ping", {}, output="pong")\n')
    (tmp_path / "blocker").write_text("not a folder")
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstep = "agent:step"\n[schedule]\nevery = "45s"\n'
        '[[agents]]\nname = "a"\nstate_dir = "state/a"\n'
        '[[agents]]\nname = "b"\nstate_dir = "blocker/state"\n'
    )
    checked = hb(tmp_path, "validate")
    assert checked.returncode == 2 and "b: " in checked.stderr and "is not a folder" in checked.stderr
    ran = hb(tmp_path, "run", "--ticks", "1")
    assert ran.returncode == 2 and ran.stderr.count("\n") == 1, ran.stderr
    assert "blocker is not a folder" in ran.stderr and "previous state kept" not in ran.stderr
    assert not (tmp_path / "state").exists()
