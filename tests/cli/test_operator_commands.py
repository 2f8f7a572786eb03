"""Operator commands that must never fail a human (issue 24, items 18-22).

Every case runs the real CLI as a process in a real folder: ``kill`` always
writes its KILL file, a failing command creates nothing, a human's note is
not dropped by a later plain ``resume``, an escalation nobody is told of is
said on stderr, and ``kill --agent`` says which agents a shared KILL stops.
"""

from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path

from _cli import run_cli as cli

NOOP = textwrap.dedent("""
    def step(ctx):
        ctx.record("read", {"page": ctx.tick}, output="page %d says something new" % ctx.tick)
""")

STUCK = textwrap.dedent("""
    def step(ctx):
        ctx.record("search", {"q": "same"}, output="the same three results as before")
""")


def tree(folder: Path) -> list[str]:
    """Every path under ``folder``, relative, sorted."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_tick_that_fails_for_want_of_a_config_creates_nothing(tmp_path: Path) -> None:
    """`tick` with no heartbeat.toml fails with exit 2 and leaves no state/.lock behind."""
    done = cli(tmp_path, "tick")
    assert done.returncode == 2, done.stderr
    assert "no heartbeat.toml here" in done.stderr
    assert tree(tmp_path) == []
    # ... so status still says there is nothing here, and does not report "ok active".
    status = cli(tmp_path, "status")
    assert status.returncode == 2 and "no state folder" in status.stderr


def test_outbox_with_no_state_folder_says_so_as_status_does(tmp_path: Path) -> None:
    """`outbox` (list, retry, drop) where no state folder is: exit 2 and status's words, creating
    nothing (it printed "0 file(s) in .../state/outbox", a folder that is not there, exit 0)."""
    status = cli(tmp_path, "status")
    assert status.returncode == 2 and "no state folder" in status.stderr
    for argv in (["outbox"], ["outbox", "--json"], ["outbox", "retry"], ["outbox", "drop", "x"]):
        done = cli(tmp_path, *argv)
        assert (done.returncode, done.stderr, done.stdout) == (2, status.stderr, ""), argv
    assert tree(tmp_path) == []


def test_outbox_retry_of_a_key_that_matches_nothing_is_an_error_as_drop_is(tmp_path: Path) -> None:
    """`outbox retry nosuchkey` said "nothing to retry" and exited 0 (live round 53), while `outbox
    drop nosuchkey` is exit 2: a mistyped key is now the same one-line error for both, and nothing
    is printed on stdout. A plain `outbox retry` with nothing waiting is still exit 0."""
    (tmp_path / "agent.py").write_text(NOOP)
    (tmp_path / "heartbeat.toml").write_text('[agent]\nname = "a"\nstep = "agent:step"\n')
    assert cli(tmp_path, "tick").returncode == 0
    before = tree(tmp_path)
    for action in ("retry", "drop"):
        done = cli(tmp_path, "outbox", action, "nosuchkey")
        assert (done.returncode, done.stdout) == (2, ""), (action, done.stdout, done.stderr)
        assert done.stderr.strip() == f"heartbeat: error: outbox {action}: nothing matches nosuchkey"
    assert tree(tmp_path) == before  # not even the delivery lock's file
    plain = cli(tmp_path, "outbox", "retry")
    assert (plain.returncode, plain.stdout) == (0, "notifications: nothing to retry\n")


def test_run_in_a_folder_with_no_config_says_so_first(tmp_path: Path) -> None:
    """`run` with no heartbeat.toml (so no schedule either) says what `tick` says, exit 2, creating
    nothing: the wrong folder, not a missing --every."""
    tick = cli(tmp_path, "tick")
    run = cli(tmp_path, "run")
    assert run.returncode == tick.returncode == 2, run.stderr
    assert run.stderr == tick.stderr and "no heartbeat.toml here" in run.stderr
    assert tree(tmp_path) == []


def test_a_tick_whose_step_cannot_load_creates_nothing(tmp_path: Path) -> None:
    """A misspelt step module fails the tick (exit 2) and no folder it made is left, parents included."""
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstep = "no_such_module:step"\nstate_dir = "a/b/state"\n'
    )
    done = cli(tmp_path, "tick")
    assert done.returncode == 2, done.stderr
    assert tree(tmp_path) == ["heartbeat.toml"]


def test_a_tick_whose_module_has_no_step_leaves_inits_folder_as_it_was(tmp_path: Path) -> None:
    """`init`, then agent.py edited so it has no `step`: the tick fails (exit 2, one line) and leaves
    no state/.lock behind in init's empty state folder; a pause's state then stays."""
    assert cli(tmp_path, "init").returncode == 0
    agent = tmp_path / "agent.py"
    agent.write_text(agent.read_text().replace("def step(", "def not_step("))
    before = tree(tmp_path)
    done = cli(tmp_path, "tick")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "has no attribute 'step'" in done.stderr
    assert tree(tmp_path) == before
    # Once something is kept there (a pause's state), a failing tick leaves the folder alone.
    assert cli(tmp_path, "pause").returncode == 0
    assert cli(tmp_path, "resume").returncode == 0
    kept = tree(tmp_path)
    assert cli(tmp_path, "tick").returncode == 2
    assert tree(tmp_path) == kept


def test_a_plain_resume_keeps_the_note_no_step_has_read(tmp_path: Path) -> None:
    """resume --note, then a pause and a plain resume for maintenance: the note still reaches the step."""
    (tmp_path / "agent.py").write_text(
        NOOP + "\n\ndef step_seeing(ctx):\n    ctx.data['saw'] = ctx.instructions\n"
    )
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step_seeing"\n')
    assert cli(tmp_path, "tick").returncode == 0
    assert cli(tmp_path, "pause").returncode == 0
    assert cli(tmp_path, "resume", "--note", "use the v2 API").returncode == 0
    assert cli(tmp_path, "pause", "--reason", "maintenance").returncode == 0
    done = cli(tmp_path, "resume")
    assert done.returncode == 0, done.stderr
    assert "kept" in done.stdout and "use the v2 API" in done.stdout  # and it says so
    assert cli(tmp_path, "tick").returncode == 0
    import json

    state = json.loads((tmp_path / "state" / "state.json").read_text())
    assert state["data"]["saw"] == "use the v2 API"
    assert state["instructions"] is None  # read by the step: a later resume has nothing to keep
    # A new --note replaces a pending one; --note "" clears it.
    cli(tmp_path, "pause")
    cli(tmp_path, "resume", "--note", "first")
    cli(tmp_path, "pause")
    assert "second" in cli(tmp_path, "resume", "--note", "second").stdout
    cli(tmp_path, "pause")
    cleared = cli(tmp_path, "resume", "--note", "")
    assert "kept" not in cleared.stdout
    assert json.loads((tmp_path / "state" / "state.json").read_text())["instructions"] is None


def test_a_resume_note_keeps_its_lines_and_masks_a_key(tmp_path: Path) -> None:
    """`resume --note` with a key in it: masked in the output, `status`, state.json and the journal
    (as `pause --reason` is); the note's line breaks stay, and the step reads it masked."""
    (tmp_path / "agent.py").write_text("def step(ctx):\n    ctx.data['saw'] = ctx.instructions\n")
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step"\n')
    assert cli(tmp_path, "tick").returncode == 0
    assert cli(tmp_path, "pause").returncode == 0
    key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"
    done = cli(tmp_path, "resume", "--note", f"use the key {key}\nthen retry")
    assert done.returncode == 0, done.stderr
    assert "next instructions: use the key ***\n    then retry" in done.stdout, done.stdout
    status = cli(tmp_path, "status").stdout
    assert "use the key ***" in status and key not in status
    for name in ("state.json", "journal.jsonl"):
        assert key not in (tmp_path / "state" / name).read_text(), name
    assert cli(tmp_path, "tick").returncode == 0
    import json

    saw = json.loads((tmp_path / "state" / "state.json").read_text())["data"]["saw"]
    assert saw == "use the key ***\nthen retry"


def test_kill_writes_the_kill_file_while_the_config_has_errors(tmp_path: Path) -> None:
    """A run ticks on its config; the file gets an error; `kill` still writes KILL and the run stops (3)."""
    from conftest import spawn_heartbeat, wait_until

    (tmp_path / "agent.py").write_text(NOOP)
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step"\nkill_file = "ops/KILL"\n')
    (tmp_path / "ops").mkdir()
    run = spawn_heartbeat(tmp_path, "run", "--every", "1h")
    try:
        wait_until(lambda: (tmp_path / "state" / "state.json").exists(), what="the first tick", proc=run)
        # Someone edits the config and leaves an error in it (a string where a number goes).
        (tmp_path / "heartbeat.toml").write_text(
            '[agent]\nstep = "agent:step"\nkill_file = "ops/KILL"\n[policy]\nescalate_after = "three"\n'
        )
        done = cli(tmp_path, "kill", "--reason", "stop now")
        assert done.returncode == 0, done.stderr
        assert (tmp_path / "ops" / "KILL").read_text().strip() == "stop now"
        assert (
            "escalate_after" in done.stderr and "could not be read" in done.stderr
        )  # said what it could not read
        assert run.wait(timeout=30) == 3  # the run on the old config reads the same KILL file
    finally:
        if run.poll() is None:
            run.kill()
        run.communicate()


def test_kill_shows_its_reason_as_every_other_part_does(tmp_path: Path) -> None:
    """`kill --reason` with a line break, an escape code and a key: the confirmation shows it on one
    line, escaped, the key masked (as `tick` and `status` do); the KILL file keeps the text given."""
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step"\n')
    reason = "a\nb\x1b[2J sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"
    done = cli(tmp_path, "kill", "--reason", reason)
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.endswith("written (a b\\x1b[2J ***); `heartbeat kill --off` or rm it to go on"), first
    assert "\x1b" not in done.stdout and "sk-ant" not in done.stdout
    assert (tmp_path / "KILL").read_text() == reason + "\n"
    tick = cli(tmp_path, "tick")
    assert tick.returncode == 3 and tick.stdout.endswith("KILL: a b\\x1b[2J ***\n"), tick.stdout


def test_a_step_that_sees_kill_and_returns_is_said_stopped_by_the_kill_file(tmp_path: Path) -> None:
    """A cooperative step sees ctx.killed and returns: the tick says "stopped by the KILL file <path>
    during the step: why", the words ctx.stopped_by() and every other part use."""
    (tmp_path / "agent.py").write_text(
        textwrap.dedent("""
            import pathlib

            def step(ctx):
                (pathlib.Path(ctx.base_dir) / "KILL").write_text("enough")
                if ctx.killed:
                    ctx.data["said"] = ctx.stopped_by()
        """)
    )
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step"\n')
    done = cli(tmp_path, "tick")
    assert done.returncode == 3, done.stderr
    kill = tmp_path / "KILL"
    assert f"stopped by the KILL file {kill} during the step: enough" in done.stdout, done.stdout
    import json

    said = json.loads((tmp_path / "state" / "state.json").read_text())["data"]["said"]
    assert said == f"stopped by the KILL file {kill}: enough"


def test_kill_falls_back_to_the_default_path_when_the_config_is_not_toml(tmp_path: Path) -> None:
    """Not even TOML: KILL beside the config (the default), with a warning; --off removes it."""
    (tmp_path / "heartbeat.toml").write_text("[agent\nstep = 'agent:step'\n")
    done = cli(tmp_path, "kill")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "KILL").is_file()
    assert "warning" in done.stderr and "not valid TOML" in done.stderr and "default path" in done.stderr
    assert done.stderr.count("\n") == 1
    assert cli(tmp_path, "kill", "--off").returncode == 0
    assert not (tmp_path / "KILL").exists()
    # No config at all is still the wrong folder: refused, nothing written.
    (tmp_path / "heartbeat.toml").unlink()
    assert cli(tmp_path, "kill").returncode == 2
    assert not (tmp_path / "KILL").exists()


def test_kill_of_one_agent_says_which_agents_a_shared_kill_file_stops(tmp_path: Path) -> None:
    """Agents that share one KILL file: `kill --agent alpha` names every agent it stops."""
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstep = "agent:step"\n'
        '[[agents]]\nname = "alpha"\nstate_dir = "a"\n'
        '[[agents]]\nname = "beta"\nstate_dir = "b"\n'
        '[[agents]]\nname = "gamma"\nstate_dir = "c"\nkill_file = "KILL.gamma"\n'
    )
    done = cli(tmp_path, "kill", "--agent", "alpha")
    assert done.returncode == 0, done.stderr
    assert "alpha, beta" in done.stdout and "gamma" not in done.stdout
    assert "its own kill_file" in done.stdout  # and how to stop one alone
    alone = cli(tmp_path, "kill", "--agent", "gamma")
    assert "shared" not in alone.stdout and (tmp_path / "KILL.gamma").is_file()


def test_kill_of_an_agent_whose_own_kill_file_folder_is_not_made_yet_lands(tmp_path: Path) -> None:
    """An agent's own kill_file in a folder no tick made (``kill/a.KILL``): `kill --agent a` makes it
    and writes the file the agent reads (live round 43: exit 2, and the agent ran on); a path typed
    by hand into a folder that is not there is still refused, no agent reading it."""
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstep = "agent:step"\n'
        '[[agents]]\nname = "a"\nstate_dir = "state/a"\nkill_file = "kill/a.KILL"\n'
        '[[agents]]\nname = "b"\nstate_dir = "state/b"\nkill_file = "kill/b.KILL"\n'
    )
    done = cli(tmp_path, "kill", "--agent", "a", "--reason", "runaway")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "kill" / "a.KILL").read_text() == "runaway\n"
    assert not (tmp_path / "kill" / "b.KILL").exists()
    typed = cli(tmp_path, "kill", "--kill-file", "nowhere/KILL")
    assert typed.returncode == 2 and not (tmp_path / "nowhere").exists()


def test_an_escalation_nobody_is_told_of_reaches_stderr_under_quiet(tmp_path: Path) -> None:
    """No notifier: `tick --quiet` says the escalation on stderr (cron mails it); validate warns first."""
    (tmp_path / "agent.py").write_text(STUCK)
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step"\n[policy]\nescalate_after = 1\n')
    checked = cli(tmp_path, "validate")
    assert checked.returncode == 0, checked.stderr
    assert "no notifier is configured" in checked.stderr and "nobody will be told" in checked.stderr
    quiet = [cli(tmp_path, "tick", "--quiet") for _ in range(3)]
    escalated = quiet[2]
    assert escalated.returncode == 4
    assert "escalated to a human" in escalated.stderr and "nobody was told" in escalated.stderr
    # Only the tick that escalated says it; the ones that wait after it stay quiet (exit 4).
    later = cli(tmp_path, "tick", "--quiet")
    assert later.returncode == 4 and later.stderr == "" and later.stdout == ""
    # ... as tick --help says of --quiet (it said "only errors and undelivered notifications").
    helped = " ".join(cli(tmp_path, "tick", "--help").stdout.split())
    assert "an escalation when no notifier is configured" in helped, helped


def test_init_starts_with_a_file_notifier(tmp_path: Path) -> None:
    """`init`'s starter config tells someone (a file notifier), so validate has no warning."""
    assert cli(tmp_path, "init").returncode == 0
    assert '[[notify]]\ntype = "file"' in (tmp_path / "heartbeat.toml").read_text()
    checked = cli(tmp_path, "validate")
    assert checked.returncode == 0 and "warning" not in checked.stderr, checked.stderr


def test_status_shows_a_hand_written_reason_escaped(tmp_path: Path) -> None:
    """state.json is a file the agent (or anyone) can write: a status reason holding an escape
    code and a line break is shown escaped on one line, never raw to the terminal."""
    import json

    (tmp_path / "agent.py").write_text(NOOP)
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step"\n')
    assert cli(tmp_path, "tick").returncode == 0
    path = tmp_path / "state" / "state.json"
    state = json.loads(path.read_text())
    state.update(status="paused", status_reason="evil\x1b[2J\nstatus       forged")
    path.write_text(json.dumps(state))
    done = cli(tmp_path, "status")
    assert "\x1b" not in done.stdout and "\nstatus       forged" not in done.stdout
    assert "evil" in done.stdout and "\\x1b" in done.stdout


def test_status_and_resume_show_hand_written_instructions_escaped(tmp_path: Path) -> None:
    """Instructions in state.json (the journal's, a note, or anyone's edit) reach the terminal with
    escape codes escaped and their later lines indented under the field: no line passes as a
    field of its own, and the text itself is kept."""
    import json

    (tmp_path / "agent.py").write_text(NOOP)
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step"\n')
    assert cli(tmp_path, "tick").returncode == 0
    path = tmp_path / "state" / "state.json"
    state = json.loads(path.read_text())
    forged = "try the archive\x1b[2J\nticks        999\nthen the mirror"
    state.update(status="paused", status_reason="evil\x1b]0;x\x07", instructions=forged)
    path.write_text(json.dumps(state))
    shown = cli(tmp_path, "status").stdout
    assert "\x1b" not in shown and "\nticks        999\n" not in shown, shown
    assert "try the archive\\x1b[2J\n             ticks        999\n             then the mirror" in shown
    assert cli(tmp_path, "pause", "--reason", "again").stdout.count("\x1b") == 0  # the earlier reason
    resumed = cli(tmp_path, "resume").stdout
    assert "\x1b" not in resumed and "\nticks" not in resumed and "then the mirror" in resumed


def test_the_resume_command_an_escalation_names_works_from_the_state_folder(tmp_path: Path) -> None:
    """ESCALATION.md sits in the state folder and a notification is read anywhere: the resume command
    it names carries the config and state folder as absolute paths, and run as written from the
    state folder (where a bare `heartbeat resume` finds no config) it resumes the agent."""
    import re
    import shlex

    (tmp_path / "agent.py").write_text(STUCK)
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step"\n[policy]\nescalate_after = 1\n')
    codes = [cli(tmp_path, "tick").returncode for _ in range(3)]
    assert codes[-1] == 4, codes
    state = tmp_path / "state"
    (told,) = re.findall(r"`(heartbeat resume [^`]*)`", (state / "ESCALATION.md").read_text())
    assert str(state.absolute()) in told and str((tmp_path / "heartbeat.toml").absolute()) in told
    assert cli(state, "resume").returncode == 2  # bare, from there: no heartbeat.toml in the state folder
    done = cli(state, *shlex.split(told)[1:])
    assert done.returncode == 0, done.stderr
    assert cli(tmp_path, "status").returncode == 0  # active again


FLEET = (
    '[agent]\nstep = "agent:step"\n'
    '[[agents]]\nname = "a"\nstate_dir = "state/a"\nkill_file = "kill/a.KILL"\n'
    '[[agents]]\nname = "b"\nstate_dir = "state/b"\nkill_file = "kill/b.KILL"\n'
)


def test_a_fleet_that_never_ran_has_status_and_log_and_creates_nothing(tmp_path: Path) -> None:
    """Right after `validate` said "no state yet", a fleet's `status` shows each agent with no
    heartbeat yet (exit 0), and `log` says there are no events: neither makes a folder (live round
    43: every agent an "error", exit 2, "wrong folder?")."""
    (tmp_path / "heartbeat.toml").write_text(FLEET)
    (tmp_path / "agent.py").write_text(NOOP)
    before = tree(tmp_path)
    shown = cli(tmp_path, "status")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "error" not in shown.stdout and shown.stdout.count("never") == 2
    logged = cli(tmp_path, "log")
    assert logged.returncode == 0 and "no events yet" in logged.stdout
    assert tree(tmp_path) == before


def test_log_of_an_agent_with_no_events_says_so(tmp_path: Path) -> None:
    """`log` of an agent `init` made prints a line, not a blank screen; a filter that matches nothing
    says that; `--json` stays empty for scripts."""
    assert cli(tmp_path, "init", ".").returncode == 0
    assert "no events yet" in cli(tmp_path, "log").stdout
    assert "no events match" in cli(tmp_path, "log", "--event", "kill").stdout
    assert cli(tmp_path, "log", "--json").stdout == ""


def test_a_stopped_or_paused_agent_has_no_deadline_and_a_resume_is_no_heartbeat(tmp_path: Path) -> None:
    """`status` of a killed or paused agent says it is not checked, not "ok (next due by <a time
    past>)", and `--json` gives no `due_by`; a person's pause and resume move no heartbeat seen
    (live round 43: `status --max-age` said ok right after a resume, nothing having ticked)."""
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step"\n[schedule]\nevery = "30m"\n')
    (tmp_path / "agent.py").write_text(NOOP)
    assert cli(tmp_path, "tick").returncode == 0
    ticked = json.loads(cli(tmp_path, "status", "--json").stdout)
    assert ticked["due_by"] is not None
    assert cli(tmp_path, "pause", "--reason", "lunch").returncode == 0
    paused = cli(tmp_path, "status")
    assert "not checked (paused)" in paused.stdout and "next due by" not in paused.stdout
    assert json.loads(cli(tmp_path, "status", "--json").stdout)["due_by"] is None
    assert cli(tmp_path, "resume").returncode == 0
    resumed = json.loads(cli(tmp_path, "status", "--json").stdout)
    assert resumed["last_seen_at"] == ticked["last_seen_at"]
    assert cli(tmp_path, "kill", "--reason", "runaway").returncode == 0
    killed = cli(tmp_path, "status")
    assert killed.returncode == 3 and "not checked (stopped)" in killed.stdout


def test_an_agent_escalated_before_its_streaks_limit_shows_it_escalated(tmp_path: Path) -> None:
    """A stuck agent escalated (its streak may stop short of `escalate_after` when a recovery is
    ignored): the fleet's STREAK column and the detail say escalated, not "2/3" as if on its way."""
    (tmp_path / "heartbeat.toml").write_text(FLEET)
    (tmp_path / "agent.py").write_text(STUCK)
    for _ in range(6):
        cli(tmp_path, "tick", "--agent", "a")
    detail = cli(tmp_path, "status", "--agent", "a")
    assert detail.returncode == 4, detail.stdout + detail.stderr
    assert "(escalated; the limit is 3)" in detail.stdout
    fleet = cli(tmp_path, "status")
    assert re.search(r"^a .*needs_human.* \d+ \(escalated\)", fleet.stdout, re.M), fleet.stdout


def test_a_fleet_agent_without_a_name_is_refused(tmp_path: Path) -> None:
    """One unnamed `[[agents]]` entry ran as "agent", a name the file never wrote; now it is said."""
    (tmp_path / "heartbeat.toml").write_text('[[agents]]\nstate_dir = "s/a"\nstep = "agent:step"\n')
    done = cli(tmp_path, "validate")
    assert done.returncode == 2 and "agents[0] has no name" in done.stderr


BUSY_FLAT = """\
NAMES = ("parse", "round", "coerce", "format", "validate", "convert", "normalize")


def step(ctx):
    tick = ctx.data.get("tick", 0) + 1
    ctx.data["tick"] = tick
    name = NAMES[tick % len(NAMES)]
    ctx.record("read_file", {"path": f"src/{name}.py"}, output=f"def {name}(value, unit):")
    ctx.record("run_tests", {"path": "tests"}, error=f"FAILED test_x - NameError: '{name}'")
    ctx.record("grep", {"pattern": name}, output=f"src/fields.py: from .{name} import {name}")
    # An edit each heartbeat: reading alone, every look new, would be an exploration (no finding).
    ctx.record("edit_file", {"path": f"src/{name}.py", "tick": tick}, output="edited")


def progress(ctx):
    return 0
"""


def test_status_says_when_a_flat_stretch_answered_anew_calls_a_human(tmp_path: Path) -> None:
    """A flat metric alone while every look answers anew: `status` names both limits, the policy's
    and flat_grace's (a bare "2 of 3" would promise a human at the next stuck heartbeat)."""
    (tmp_path / "agent.py").write_text(BUSY_FLAT)
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step"\nprogress = "agent:progress"\n')
    for _ in range(5):
        assert cli(tmp_path, "tick").returncode == 0
    detail = cli(tmp_path, "status")
    assert "stuck streak 2 of 3 (4 while its calls bring new results)" in detail.stdout, detail.stdout
    report = json.loads(cli(tmp_path, "status", "--json").stdout)
    assert (report["escalate_after"], report["escalate_after_anew"]) == (3, 4)
    assert "2 of 3 (4 while its calls bring new results)" in cli(tmp_path, "report", "--out", "-").stdout
    assert [cli(tmp_path, "tick").returncode for _ in range(2)] == [0, 4]  # the grace, then a human


def test_status_says_an_agent_whose_next_tick_cannot_save_is_blocked(tmp_path: Path) -> None:
    """After a save found no room (``.no-room`` noted) every tick stops before its step with exit 2,
    while ``status`` said "ok active", exit 0 (live round 54). It now says BLOCKED and why, and exits
    6 as for an agent overdue; so for a journal that cannot take the tick's events. Read only."""
    (tmp_path / "agent.py").write_text(
        "def step(ctx):\n    ctx.record('read', {'n': ctx.tick}, output='new')\n"
    )
    (tmp_path / "heartbeat.toml").write_text('[agent]\nname = "a"\nstep = "agent:step"\n')
    assert cli(tmp_path, "tick").returncode == 0
    fine = cli(tmp_path, "status", "--json")
    assert fine.returncode == 0 and json.loads(fine.stdout)["blocked"] is None
    state = tmp_path / "state"
    (state / ".no-room").write_text("999999999999\n")
    before = sorted(os.listdir(state))
    done = cli(tmp_path, "status")
    assert done.returncode == 6 and "BLOCKED" in done.stdout and "no room for the state" in done.stdout
    assert sorted(os.listdir(state)) == before  # nothing reserved nor written to find it out
    assert cli(tmp_path, "tick").returncode == 2  # what status foretold
    (state / ".no-room").unlink()
    (state / "journal.jsonl").unlink()
    os.mkfifo(state / "journal.jsonl")
    done = cli(tmp_path, "status", "--json")
    assert done.returncode == 6 and json.loads(done.stdout)["blocked"].startswith("journal.jsonl is a FIFO")
