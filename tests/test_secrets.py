"""Secrets: every one heartbeat knows is masked everywhere it writes or prints; `init` is private.

Real `python -m heartbeat` processes, a real HTTP server on 127.0.0.1, real files.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _cli import run_cli
from conftest import WebhookServer, mode

from heartbeat.base.redact import mask, redact, url_secrets, webhook_secrets

HOOK_PATH = "/services/T0123ABCD/B0456EFGH/XXXXXXXXXXXXXXXXXXXXXXXX"
TOKEN = "tok-8f3a9c2e1b7d"
SECRET_PARTS = ("T0123ABCD", "B0456EFGH", "XXXXXXXXXXXXXXXXXXXXXXXX", TOKEN)

LEAKY_AGENT = textwrap.dedent("""
    import os

    def step(ctx):
        hook = os.environ["HOOK_URL"]
        token = os.environ["HOOK_TOKEN"]
        ctx.data["note"] = "our services are fine"
        for _ in range(3):
            hit = ctx.record(
                "post",
                {"url": hook, "headers": {"Authorization": "Bearer " + token}, "nested": [token]},
                output="posted to " + hook + " with " + token,
                error="rejected " + token,
            )
            if hit:
                return
""")


def leaks(
    root: Path, outputs: list[str], skip: tuple[str, ...] = ("heartbeat.toml", "agent.py")
) -> list[str]:
    """Every file under ``root`` and every output holding a secret part."""
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.name not in skip:
            data = path.read_bytes()
            found += [f"{path.relative_to(root)}: {s}" for s in SECRET_PARTS if s.encode() in data]
    found += [f"output {i}: {s}" for i, text in enumerate(outputs) for s in SECRET_PARTS if s in text]
    return found


def test_every_known_secret_is_masked_in_every_file_and_output(
    tmp_path: Path, webhook_server: WebhookServer
) -> None:
    """The agent records the URL and the bearer token; the webhook's error echoes them: no leak."""
    (tmp_path / "agent.py").write_text(LEAKY_AGENT)
    (tmp_path / "heartbeat.toml").write_text(
        textwrap.dedent("""
        [agent]
        step = "agent:step"
        [policy]
        escalate_after = 1
        [[notify]]
        type = "webhook"
        url = "${HOOK_URL}"
        headers = { Authorization = "Bearer ${HOOK_TOKEN}" }
        timeout = "2s"
        retries = 0
        [[notify]]
        type = "file"
        path = "notes.jsonl"
        """)
    )
    env = {"HOOK_URL": webhook_server.url(HOOK_PATH), "HOOK_TOKEN": TOKEN}
    webhook_server.status = 500
    webhook_server.body = f"invalid token {TOKEN} for {HOOK_PATH}, token {TOKEN[:10]}".encode()
    outputs = []
    for argv in (
        ["tick"],
        ["tick", "--json"],
        ["status"],
        ["status", "--json"],
        ["log"],
        ["log", "--json"],
        ["outbox"],
        ["outbox", "--json"],
    ):
        done = run_cli(tmp_path, *argv, **env)
        outputs += [done.stdout, done.stderr]
    assert "answered 500" in outputs[1]  # the webhook failed, and its error was reported (stderr)...
    webhook_server.status = 200
    done = run_cli(tmp_path, "outbox", "retry", **env)
    outputs += [done.stdout, done.stderr]
    assert "1 delivered" in done.stdout
    assert leaks(tmp_path, outputs) == []  # ...without a secret anywhere
    # Headers go to the webhook; the bodies it received hold no secret of their own either.
    assert not [s for r in webhook_server.requests for s in SECRET_PARTS if s.encode() in r.body]
    state = (tmp_path / "state" / "state.json").read_text()
    assert "our services are fine" in state  # an ordinary word of the URL is not garbled
    assert (tmp_path / "state" / "ESCALATION.md").exists() and (tmp_path / "notes.jsonl").exists()


def test_replay_masks_every_known_secret_the_trace_holds(tmp_path: Path) -> None:
    """A recorded run holding the webhook URL and the token: no replay output or page shows them."""
    import json

    hook = "https://hooks.example.com" + HOOK_PATH
    (tmp_path / "heartbeat.toml").write_text(
        textwrap.dedent("""
        [[notify]]
        type = "webhook"
        url = "${HOOK_URL}"
        headers = { Authorization = "Bearer ${HOOK_TOKEN}" }
        """)
    )
    action = {
        "tool": "post",
        "args": {"url": hook, "headers": {"Authorization": "Bearer " + TOKEN}, "nested": [TOKEN]},
        "output": f"posted to {hook} with {TOKEN}",
        "error": f"rejected {TOKEN}",
    }
    runs = tmp_path / "runs"
    runs.mkdir()
    lines = [json.dumps({"actions": [action, action]}) for _ in range(3)]
    (runs / "leaky.jsonl").write_text("\n".join(lines) + "\n")
    env = {"HOOK_URL": hook, "HOOK_TOKEN": TOKEN}
    outputs = []
    for argv in (
        ["replay", "runs/leaky.jsonl"],
        ["replay", "runs/leaky.jsonl", "--json"],
        ["replay", "runs", "--html", "tuning.html"],
        ["replay", "runs", "--json"],
    ):
        done = run_cli(tmp_path, *argv, **env)
        assert done.returncode == 0, done.stderr
        outputs += [done.stdout, done.stderr]
    assert "recurring_error" in outputs[0] and 'post({"headers":{"Authorization":"***"}' in outputs[0]
    assert leaks(tmp_path, outputs, skip=("heartbeat.toml", "leaky.jsonl")) == []
    assert (tmp_path / "tuning.html").exists()


def test_masking_keeps_url_words_and_catches_tokens_in_every_form() -> None:
    """`services` and `webhooks` stay; a token alone, JSON-escaped or percent-encoded does not."""
    url = "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/XXXXXXXXXXXXXXXXXXXXXXXX"
    secrets = webhook_secrets(url, {"Authorization": f"Bearer {TOKEN}"})
    assert "services" not in secrets and "Bearer" not in secrets
    text = "our services and webhooks: T0123ABCD, %2Fservices%2FT0123ABCD%2FB0456EFGH, Bearer " + TOKEN
    masked = mask(text + ' {"u": "https:\\/\\/hooks.slack.com\\/services\\/T0123ABCD"}', secrets)
    assert "our services and webhooks" in masked
    assert not [s for s in SECRET_PARTS if s in masked]
    assert "T0" not in redact(f"see {url}.", secrets) and redact(f"see {url}.", secrets).endswith("/….")
    assert url_secrets("http://127.0.0.1:80/hook") == ["http://127.0.0.1:80/hook"]


def test_webhook_url_from_an_environment_variable_or_a_file(
    tmp_path: Path, webhook_server: WebhookServer
) -> None:
    """`--webhook env:NAME` and `--webhook file:PATH` keep the URL out of `ps`; `--help` says so."""
    (tmp_path / "agent.py").write_text(LEAKY_AGENT)
    (tmp_path / "heartbeat.toml").write_text("[policy]\nescalate_after = 1\n")
    url = webhook_server.url(HOOK_PATH)
    secret_file = tmp_path / "hook.url"
    secret_file.write_text(url + "\n")
    env = {"HOOK_URL": url, "HOOK_TOKEN": TOKEN, "MY_HOOK": url}
    common = ["tick", "--step", "agent:step", "--state-dir"]
    by_env = run_cli(tmp_path, *common, "s1", "--webhook", "env:MY_HOOK", **env)
    by_file = run_cli(tmp_path, *common, "s2", "--webhook", f"file:{secret_file}", **env)
    assert by_env.returncode == 4 and by_file.returncode == 4, by_env.stderr + by_file.stderr
    assert [r.path for r in webhook_server.requests] == [HOOK_PATH, HOOK_PATH]  # both escalations sent
    url_parts = SECRET_PARTS[:3]  # the token is no secret of this config (no header names it)
    assert not [s for s in url_parts for out in (by_env, by_file) if s in out.stdout + out.stderr]
    assert not [
        s for s in url_parts for p in (tmp_path / "s1").rglob("*") if p.is_file() and s in p.read_text()
    ]
    missing = run_cli(tmp_path, *common, "s3", "--webhook", "env:NO_SUCH_HOOK", **env)
    assert missing.returncode == 2 and "NO_SUCH_HOOK is not set" in missing.stderr
    assert missing.stderr.count("\n") == 1
    help_text = " ".join(run_cli(tmp_path, "tick", "--help").stdout.split())
    assert "visible to every local user in `ps`" in help_text and "env:NAME" in help_text


def test_init_under_umask_000_writes_private_files_and_folders(tmp_path: Path) -> None:
    """`umask 000; heartbeat init a/b/project`: config 0600, code 0644, every new folder 0700."""
    tmp_path.chmod(0o755)
    done = subprocess.run(
        ["sh", "-c", f"umask 000; exec {sys.executable} -m heartbeat init a/b/project"],
        cwd=tmp_path,
        text=True,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    project = tmp_path / "a" / "b" / "project"
    assert mode(project / "heartbeat.toml") == 0o600
    assert mode(project / "agent.py") == 0o644
    for folder in (tmp_path / "a", tmp_path / "a" / "b", project, project / "state"):
        assert mode(folder) == 0o700, folder
    again = run_cli(tmp_path, "init", "a/b/project")
    assert again.returncode == 0 and again.stdout.count("exists, left as it is") == 2


@pytest.mark.parametrize("value", ["https://hooks.example/T0/XXXXXXXX", "Bearer abcdefgh12345"])
def test_mask_leaves_json_valid(value: str) -> None:
    """Masking a secret inside a JSON document leaves a document that parses."""
    doc = json.dumps({"a": value, "b": [value, {"c": f"x {value} y"}]})
    secrets = [*url_secrets(value), value] if value.startswith("http") else [value, "abcdefgh12345"]
    assert json.loads(mask(doc, secrets)) == {"a": "***", "b": ["***", {"c": "x *** y"}]}


def _escalate_and_read_everything(
    root: Path, agent: str, webhook_server: WebhookServer, *, file_notifier: bool = False
) -> list[str]:
    """Run ``agent`` until a human is called (webhook, maybe a file notifier), then every command
    that shows it and the report: the text of every file, output and webhook body."""
    (root / "agent.py").write_text(agent)
    notes = '[[notify]]\ntype = "file"\npath = "notes.jsonl"\n' if file_notifier else ""
    (root / "heartbeat.toml").write_text(
        '[agent]\nstep = "agent:step"\n[policy]\nescalate_after = 1\n'
        f'[[notify]]\ntype = "webhook"\nurl = "{webhook_server.url("/hook")}"\n{notes}'
    )
    outputs = []
    for argv in (["tick"], ["tick", "--json"], ["status"], ["status", "--json"], ["log"], ["log", "--json"]):
        done = run_cli(root, *argv)
        outputs += [done.stdout, done.stderr]
    assert run_cli(root, "report").returncode == 0
    assert webhook_server.wait_for(1)
    state = root / "state"
    assert (state / "ESCALATION.md").exists() and (state / "report.html").exists()
    files = [p for p in root.rglob("*") if p.is_file() and p.name not in ("agent.py", "heartbeat.toml")]
    return (
        [p.read_text(errors="replace") for p in files]
        + outputs
        + [r.body.decode() for r in webhook_server.requests]
    )


CREDENTIALS = ("hunter2-pass-value", "sk-live-51HxYz0987", "ghp_tokenvalue1234", "Bearer-cookie-val")

CREDENTIAL_AGENT = textwrap.dedent("""
    def step(ctx):
        for _ in range(3):
            hit = ctx.record(
                "login",
                {
                    "user": "ann",
                    "password": "hunter2-pass-value",
                    "client": {"apiKey": "sk-live-51HxYz0987", "max_tokens": 512},
                    "headers": [{"X-Access-Token": "ghp_tokenvalue1234", "Cookie": "Bearer-cookie-val"}],
                },
                output="logged in, session ready",
            )
            if hit:
                return
""")


def test_credentials_an_agent_passes_as_arguments_are_masked_everywhere(
    tmp_path: Path, webhook_server: WebhookServer
) -> None:
    """No secret configured: values of credential-named arguments reach no file, output or message."""
    texts = _escalate_and_read_everything(tmp_path, CREDENTIAL_AGENT, webhook_server, file_notifier=True)
    assert not [c for c in CREDENTIALS for text in texts if c in text]
    state = tmp_path / "state"
    # The call is still shown, with what is not a credential, and was still seen as a repeat.
    saved = json.loads((state / "state.json").read_text())
    assert saved["status"] == "needs_human"
    summary = saved["history"][-1]["summary"]
    assert '"password":"***"' in summary and '"apiKey":"***"' in summary and '"max_tokens":512' in summary
    assert '"user":"ann"' in summary and "repeat" in (state / "ESCALATION.md").read_text()


@pytest.mark.parametrize(
    ("name", "credential"),
    [
        ("password", True),
        ("api_key", True),
        ("apiKey", True),
        ("x-api-key", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("client_secret", True),
        ("access_token", True),
        ("token", True),
        ("Authorization", True),
        ("auth", True),
        ("Cookie", True),
        ("db_passwd", True),
        ("max_tokens", False),
        ("key", False),
        ("cache_key", False),
        ("public_key", False),
        ("author", False),
        ("query", False),
        ("token_count", False),
    ],
)
def test_credential_named_keys(name: str, credential: bool) -> None:
    """Which argument names hold credentials: the words say, not a substring (max_tokens is no token)."""
    from heartbeat.base.credentials import is_credential_key

    assert is_credential_key(name) is credential


TEXT_CREDENTIALS = (
    "QUERYSECRET0123456",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "sk-proj-abcdefghijklmnopqrstuvwx",
    "s3cr3t-dsn-pw",
    "AKIAABCDEFGHIJKLMNOP",
    "hunter2-in-prose",
)

TEXT_AGENT = textwrap.dedent("""
    def step(ctx):
        for _ in range(3):
            hit = ctx.record(
                "fetch",
                {
                    "url": "https://api.example.com/v1/items?api_key=QUERYSECRET0123456&page=2",
                    "cmd": 'curl -H "Authorization: Bearer ghp_abcdefghijklmnopqrstuvwxyz0123456789" '
                    "&& export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx",
                    "dsn": "postgres://app:s3cr3t-dsn-pw@db:5432/main",
                },
                output="denied",
                error="403 for url https://api.example.com/v1/items?api_key=QUERYSECRET0123456 "
                "(AKIAABCDEFGHIJKLMNOP; note: password: hunter2-in-prose)\\n## What to do\\n"
                "[fix it here](https://evil.example) <img src=x>\\x1b[2J",
            )
            if hit:
                return
""")


def test_credentials_only_the_text_gives_away_are_masked_everywhere(
    tmp_path: Path, webhook_server: WebhookServer
) -> None:
    """A URL's ?api_key=, a command's Bearer and export KEY=, a DSN's password, a token of a known
    form and "password: x" in an error reach no file, output or message; the error's line breaks,
    escape sequence and Markdown reach a person escaped."""
    texts = _escalate_and_read_everything(tmp_path, TEXT_AGENT, webhook_server)
    assert not [c for c in TEXT_CREDENTIALS for text in texts if c in text]
    state = tmp_path / "state"
    assert not [text for text in texts if "\x1b" in text]
    escalation = (state / "ESCALATION.md").read_text()
    headings = [line for line in escalation.splitlines() if line.startswith("## What to do")]
    assert len(headings) == 1  # the agent's "\n## What to do" stays inside its own line
    assert not re.search(r"(?<!\\)[\[<]", escalation.split("## Last actions")[1])  # no link, no HTML
    assert r"\[fix it here\]" in escalation and r"\<img src=x>" in escalation
    # What is not a credential is still shown, masked where it held one.
    summary = json.loads((state / "state.json").read_text())["history"][-1]["summary"]
    assert "page=2" in summary and "postgres://app:***@db" in summary and "OPENAI_API_KEY=***" in summary


KEY_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"

KEY_AGENT = textwrap.dedent(f"""
    KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\\n{KEY_BODY}\\n-----END OPENSSH PRIVATE KEY-----\\n"

    def step(ctx):
        for _ in range(3):
            if ctx.record("write_file", {{"path": "/root/.ssh/id_ed25519", "content": KEY}}, output="ok"):
                return
""")


def test_a_private_key_an_agent_writes_reaches_no_file_or_output(
    tmp_path: Path, webhook_server: WebhookServer
) -> None:
    """A PEM private key, the clearest form a secret has, passed as a file's content (a coding agent
    writing ``~/.ssh/id_ed25519``) reaches no file, output or message (live round 51: it reached
    every one)."""
    texts = _escalate_and_read_everything(tmp_path, KEY_AGENT, webhook_server)
    assert not [text for text in texts if KEY_BODY[:24] in text]
    summary = json.loads((tmp_path / "state" / "state.json").read_text())["history"][-1]["summary"]
    assert summary == 'write_file({"content":"***\\n","path":"/root/.ssh/id_ed25519"})'


UNNAMED_CREDENTIALS = (
    "0a1b2c3d4e5f60718293a4b5c6d7e8f9",  # a Slack app token's end
    "Xq9sLkW3vTz8RmN2pQ4yHd7c",  # an incoming webhook's secret path
    "lQOYBF0KxYkBCADNm3hQ8Xz1",  # a PGP private key's body
    "rt-Qw3Er4Ty5Ui6Op7As8",  # a refresh token in a JSON body inside a command
    "RawSplitValue-77aa88bb",  # a header's value beside its name
)

UNNAMED_AGENT = textwrap.dedent("""
    PGP = (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\\nlQOYBF0KxYkBCADNm3hQ8Xz1cA9vYbJ2kLpQ7sRt\\n"
        "-----END PGP PRIVATE KEY BLOCK-----"
    )

    def step(ctx):
        for _ in range(3):
            hit = ctx.record(
                "http",
                {
                    "token": None,
                    "app": "xapp-1-A0123BCDE-1234567890123-0a1b2c3d4e5f60718293a4b5c6d7e8f9",
                    "hook": "https://hooks.slack.com/services/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",
                    "cmd": 'curl -d "{\\"refresh_token\\": \\"rt-Qw3Er4Ty5Ui6Op7As8\\"}" https://auth.example/t',
                    "headers": [{"header_name": "X-Api-Key", "header_value": "RawSplitValue-77aa88bb"}],
                    "key": PGP,
                },
                output="denied",
                error="401 posting to https://hooks.slack.com/services/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",
            )
            if hit:
                return
""")


def test_credentials_of_shapes_live_round_53_found_kept_are_masked_everywhere(
    tmp_path: Path, webhook_server: WebhookServer
) -> None:
    """A Slack app token, an incoming webhook's URL, a PGP private key block, a refresh token in a
    JSON body inside a command, and a header's value beside its credential name: each was kept in
    clear in state.json, the journal, ``log`` and the report (live round 53); now in none."""
    texts = _escalate_and_read_everything(tmp_path, UNNAMED_AGENT, webhook_server)
    assert not [c for c in UNNAMED_CREDENTIALS for text in texts if c in text]
    summary = json.loads((tmp_path / "state" / "state.json").read_text())["history"][-1]["summary"]
    assert "https://hooks.slack.com/services/***" in summary and "https://auth.example/t" in summary


NAME_CREDENTIALS = ("sk-proj-toolnameABCDEFGHIJKLMN", "MODELURLPASSWORD", "sk-modelnameABCDEFGHIJKLMN")

NAME_AGENT = textwrap.dedent("""
    def step(ctx):
        ctx.record_usage("https://app:MODELURLPASSWORD@llm.example/v1", 100, 20)
        ctx.record_usage("gpt-4o?api_key=sk-modelnameABCDEFGHIJKLMN", 100, 20)
        for _ in range(3):
            if ctx.record("search sk-proj-toolnameABCDEFGHIJKLMN", {"q": "x"}, error="no such tool"):
                return
""")


def test_credentials_in_a_tool_or_model_name_are_masked_everywhere(
    tmp_path: Path, webhook_server: WebhookServer
) -> None:
    """A tool name is the model's (a call to a tool that does not exist), a model name the framework's:
    each is kept and shown on its own (state.json's tool, the journal, anomaly messages, spend by
    model), and a key or a URL's password in it reaches no file, output or message."""
    texts = _escalate_and_read_everything(tmp_path, NAME_AGENT, webhook_server, file_notifier=True)
    assert not [(c, text[:200]) for c in NAME_CREDENTIALS for text in texts if c in text]
    saved = json.loads((tmp_path / "state" / "state.json").read_text())
    assert saved["history"][-1]["tool"] == "search ***"  # what is not a credential is still shown
    assert "https://app:***@llm.example/v1" in saved["spend_totals"]


def test_a_model_call_in_flight_is_named_as_its_spend_would_be(tmp_path: Path) -> None:
    """A model call an adapter let go and that never answered is journaled by its model's name
    (``model_in_flight``): masked and escaped as ``record_usage`` keeps a model's name, since it is
    the framework's and may carry a key or a URL's password."""
    from conftest import heartbeat_over

    from heartbeat.tick.context import StepContext

    taken: list[list[str]] = []

    def step(ctx: StepContext) -> None:
        ctx.model_began("call-1", "https://app:MODELURLPASSWORD@llm.example/v1\x1b[2J")
        ctx.model_began("call-2", "gpt-4o-mini")
        ctx.model_ended("call-2")
        taken.append(ctx.take_models_in_flight())

    heartbeat_over(tmp_path, step).tick()
    assert taken == [["https://app:***@llm.example/v1\\x1b[2J"]]


DATA_CREDENTIALS = (
    "sk-proj-agentdataABCDEFGHIJKLMN",
    "ghp_agentdataABCDEFGHIJKLMNOPQRSTUVWXYZ01",
    "hunter2-kept",
)

DATA_AGENT = textwrap.dedent("""
    def step(ctx):
        ctx.data["openai"] = "sk-proj-agentdataABCDEFGHIJKLMN"  # a key kept where no config names it
        token = "ghp_agentdataABCDEFGHIJKLMNOPQRSTUVWXYZ01"
        ctx.data["github"] = {"api_key": "hunter2-kept", "seen": ["ok", token]}
        ctx.data["pages"] = ctx.data.get("pages", 0) + 1
        for _ in range(3):
            if ctx.record("search", {"q": "x"}, output="the same page"):
                return
""")


def test_credentials_an_agent_keeps_in_its_data_reach_no_file(
    tmp_path: Path, webhook_server: WebhookServer
) -> None:
    """An agent that keeps a key in ``ctx.data`` (a token told by its form under any name, or the
    value of a key named for a secret, at any depth) finds it masked in ``state.json``, a plain
    file a person reads, and it reaches no other file or output (live round 42 found an ``sk-``
    key kept verbatim); the rest of its data is kept."""
    texts = _escalate_and_read_everything(tmp_path, DATA_AGENT, webhook_server)
    assert not [(c, text[:200]) for c in DATA_CREDENTIALS for text in texts if c in text]
    data = json.loads((tmp_path / "state" / "state.json").read_text())["data"]
    assert data["openai"] == "***" and data["github"] == {"api_key": "***", "seen": ["ok", "***"]}
    assert data["pages"] >= 1
