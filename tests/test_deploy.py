"""The deployment files work as written: the crontab line, the CronJob's script, the resume Job,
the systemd stop command, and alert rules and dashboard that use only metrics heartbeat exports."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import textwrap
import tomllib
from pathlib import Path

import pytest
import yaml

from heartbeat.cli.main import main
from heartbeat.state.store import StateStore

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "examples" / "deploy"

STUCK = textwrap.dedent("""
    def step(ctx):
        for _ in range(3):
            if ctx.record("search", {"q": "same"}, output="the same page"):
                return
""")


def dead_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/hook"


def shim(folder: Path) -> Path:
    """An executable `heartbeat` that runs this checkout's code (the console script of a venv)."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "heartbeat"
    script.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m heartbeat "$@"\n')
    script.chmod(0o755)
    return script


def agent_folder(folder: Path, *, webhook: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "deploy_agent.py").write_text(STUCK)
    (folder / "heartbeat.toml").write_text(
        '[agent]\nstep = "deploy_agent:step"\n'
        '[[notify]]\ntype = "webhook"\nurl = "${HOOK_URL}"\nretries = 0\n'
    )
    (folder / "agent.env").write_text(f"HOOK_URL={webhook}\n")
    return folder


def test_crontab_line_is_silent_until_a_person_must_look(tmp_path: Path) -> None:
    """The shipped line, paths swapped: two stuck ticks print nothing; the undelivered escalation prints."""
    line = next(ln for ln in (DEPLOY / "crontab").read_text().splitlines() if ln.startswith("*/30"))
    command = line.split(None, 5)[5].replace("/srv/research-agent", str(tmp_path / "agent"))
    agent_folder(tmp_path / "agent", webhook=dead_url())
    shim(tmp_path / "agent" / ".venv" / "bin")
    outputs = []
    for _ in range(5):  # until the agent escalates (the webhook is down: nobody is told)
        done = subprocess.run(
            ["/bin/sh", "-c", command],
            capture_output=True,
            text=True,
            timeout=120,
            env={"PATH": "/usr/bin:/bin"},
        )
        outputs.append(done.stdout + done.stderr)
        if outputs[-1]:
            break
    assert len(outputs) >= 2 and set(outputs[:-1]) == {""}  # stuck-and-recovering ticks say nothing
    assert "not delivered" in outputs[-1]
    assert StateStore(tmp_path / "agent" / "state").load().status.value == "needs_human"


def cronjob_docs() -> list[dict[str, object]]:
    return [doc for doc in yaml.safe_load_all((DEPLOY / "cronjob.yaml").read_text()) if doc]


def test_cronjob_forbids_overlap_and_its_script_fails_on_undelivered(tmp_path: Path) -> None:
    """concurrencyPolicy Forbid; the container's script exits 0 for 3/4/5 but 1 when nobody was told."""
    cronjob = next(d for d in cronjob_docs() if d["kind"] == "CronJob")
    spec = cronjob["spec"]
    assert isinstance(spec, dict) and spec["concurrencyPolicy"] == "Forbid"
    container = spec["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    script = container["args"][0]
    app, volume = tmp_path / "app", tmp_path / "volume"
    agent_folder(app, webhook=dead_url())
    (volume / "state").mkdir(parents=True)
    script = script.replace("/app", str(app)).replace("/var/lib/heartbeat", str(volume))
    script = script.replace("/tmp/heartbeat.err", str(tmp_path / "err"))
    bindir = shim(tmp_path / "bin")
    env = {"PATH": f"{bindir.parent}:/usr/bin:/bin", "HOOK_URL": dead_url()}
    codes = []
    for _ in range(5):  # until the agent escalates
        done = subprocess.run(["/bin/sh", "-c", script], cwd=app, env=env, capture_output=True, timeout=120)
        codes.append(done.returncode)
        if StateStore(volume / "state").load().status.value == "needs_human":
            break
    # Stuck ticks exit 0; the one that escalated with the webhook down fails the Job.
    assert len(codes) >= 2 and set(codes[:-1]) == {0} and codes[-1] == 1
    assert StateStore(volume / "state").load().status.value == "needs_human"


def test_dockerfile_installs_heartbeat_from_the_checkout(tmp_path: Path) -> None:
    """heartbeat is not on PyPI: the image copies the checkout's source in and that copy builds
    (a wheel of the distribution pyproject.toml names, with the `heartbeat` command's module)."""
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "heartbeat-watchdog" not in dockerfile and "pip install heartbeat" not in dockerfile
    installs = re.findall(r"^RUN pip install --no-cache-dir (/\S+)", dockerfile, re.M)
    assert len(installs) == 1
    source = installs[0]
    # What the build context (the checkout's root) puts under the installed folder, copied the same way.
    copied = 0
    for line in re.findall(r"^COPY (.+)$", dockerfile, re.M):
        *sources, dest = line.split()
        if not dest.startswith(source):
            continue
        target = tmp_path / dest.lstrip("/")
        for name in sources:
            path = ROOT / name
            if path.is_dir():
                shutil.copytree(path, target, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, target)
            copied += 1
    assert copied >= 3
    # An sdist is what setuptools makes of that folder without network or the wheel package.
    build = "import sys, setuptools.build_meta as b; print(b.build_sdist(sys.argv[1]))"
    built = subprocess.run(
        [sys.executable, "-c", build, str(tmp_path / "dist")],
        cwd=tmp_path / source.lstrip("/"), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    name = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"]
    sdist = tmp_path / "dist" / built.stdout.split()[-1]
    top = sdist.name.removesuffix(".tar.gz")
    with tarfile.open(sdist) as archive:
        assert f"{top}/heartbeat/cli/main.py" in archive.getnames()
        info = archive.extractfile(f"{top}/PKG-INFO")
        assert info is not None and f"\nName: {name}\n" in info.read().decode()
    assert "pip install heartbeat" not in (DEPLOY / "cronjob.yaml").read_text()


def test_resume_job_resumes_the_agent_on_the_volume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The resume Job's command, paths swapped, clears needs_human and leaves the note."""
    app, volume = tmp_path / "app", tmp_path / "volume"
    agent_folder(app, webhook=dead_url())
    monkeypatch.setenv("HOOK_URL", dead_url())
    monkeypatch.chdir(app)
    for _ in range(3):
        main(["tick", "--state-dir", str(volume / "state"), "--quiet"], io.StringIO())
    assert StateStore(volume / "state").load().status.value == "needs_human"
    job = yaml.safe_load((DEPLOY / "resume-job.yaml").read_text())
    container = job["spec"]["template"]["spec"]["containers"][0]
    args = [a.replace("/app", str(app)).replace("/var/lib/heartbeat", str(volume)) for a in container["args"]]
    assert container["command"] == ["heartbeat"]
    assert main(args, io.StringIO()) == 0
    state = StateStore(volume / "state").load()
    assert state.status.value == "active" and "v2" in (state.instructions or "")


def test_systemd_stop_command_needs_no_secrets(tmp_path: Path) -> None:
    """The unit's documented `heartbeat kill --config ...` works in a shell without the unit's secrets."""
    text = (DEPLOY / "heartbeat-agent.service").read_text()
    assert "sudo -u agent touch /srv/research-agent/KILL" in text
    agent_folder(tmp_path, webhook=dead_url())
    env = {k: v for k, v in os.environ.items() if k != "HOOK_URL"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "heartbeat",
            "kill",
            "--config",
            str(tmp_path / "heartbeat.toml"),
            "--reason",
            "x",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0 and (tmp_path / "KILL").exists()


def exported_metrics() -> set[str]:
    """The metric names heartbeat exports (from the collector's own output)."""
    from prometheus_client.parser import text_string_to_metric_families

    from heartbeat.cli.metrics import render
    from heartbeat.config.file import HeartbeatConfig
    from heartbeat.tick.runner import Heartbeat, utc_now

    families = list(text_string_to_metric_families(render([Heartbeat(HeartbeatConfig())], utc_now)))
    # A family with no sample yet (no progress, no anomaly) is still declared by HELP/TYPE;
    # a counter family is named without the _total its samples carry.
    counters = {f"{f.name}_total" for f in families if f.type == "counter"}
    return {f.name for f in families} | counters | {s.name for f in families for s in f.samples}


def test_alert_rules_and_dashboard_use_exported_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every heartbeat_* name in the alert rules and the Grafana dashboard is one heartbeat exports."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "state.json").write_text(json.dumps({"schema_version": 1, "ticks": 1}))
    names = exported_metrics()
    rules = yaml.safe_load((DEPLOY / "prometheus-alerts.yaml").read_text())
    exprs = [rule["expr"] for group in rules["groups"] for rule in group["rules"]]
    dashboard = json.loads((DEPLOY / "grafana-dashboard.json").read_text())
    exprs += [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    used = {name for expr in exprs for name in re.findall(r"heartbeat_[a-z_]+", expr)}
    assert used and used <= names, used - names
    assert {"heartbeat_overdue", "heartbeat_undelivered_notifications"} <= used
