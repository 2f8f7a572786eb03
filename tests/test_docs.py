"""The docs stay true: every command, config key and exit code documented; quick start == CI."""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import pkgutil
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import tomllib
import types
import typing
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import BaseModel

import heartbeat
from heartbeat.cli.main import build_parser
from heartbeat.config.file import HeartbeatConfig

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def commands() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(sub.choices)


def config_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every documented key: leaves dotted, arrays of tables by name and their keys (not [[agents]]'s)."""
    keys = []
    for name, field in model.model_fields.items():
        if field.exclude:
            continue
        key = f"{prefix}{name}"
        inner = _models_in(field.annotation)
        is_array = typing.get_origin(field.annotation) is list
        if not inner or is_array:
            keys.append(key)
        if key == "agents":
            continue  # [[agents]] entries take the keys of [agent], documented there
        for nested in inner:
            keys += config_keys(nested, f"{key}.")
    return keys


def _models_in(annotation: object) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        found += _models_in(arg)
    return found


def quick_start() -> list[str]:
    block = README.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [line.strip() for line in block.strip().splitlines()]


@pytest.mark.parametrize("command", commands())
def test_every_command_is_in_the_readme(command: str) -> None:
    """Each CLI command has a row in the README's command table."""
    assert re.search(rf"^\| `{command}[ `]", README, re.M), command


@pytest.mark.parametrize("key", sorted(set(config_keys(HeartbeatConfig))))
def test_every_config_key_is_in_the_reference(key: str) -> None:
    """Each config key (nested ones dotted, notifier keys as notify.*) is in the reference table."""
    assert f"| `{key}` |" in README, key


@pytest.mark.parametrize("code", [*range(7), 130])
def test_every_exit_code_is_documented(code: int) -> None:
    """The README's exit-code table covers 0 to 6 and 130, and so does `heartbeat --help` (0 to 6)."""
    assert re.search(rf"^\| {code} \| \S", README, re.M)
    if code < 130:
        assert re.search(rf"^  {code}  \w", build_parser().format_help(), re.M)


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _cli_section() -> str:
    return README.split("## CLI", 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize(
    ("command", "option"),
    [
        (name, option)
        for name, sub in sorted(_subparsers().items())
        for action in sub._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    ],
)
def test_every_option_in_help_is_in_the_readme(command: str, option: str) -> None:
    """Each long option that `heartbeat COMMAND --help` lists appears in the README's CLI section."""
    assert re.search(rf"{option}(?![\w-])", _cli_section()), (command, option)


def _python_blocks() -> list[tuple[bool, str]]:
    """Each ```python block, and whether a `<!-- sketch ... -->` line right above marks it a sketch."""
    found = re.findall(r"^(<!-- sketch[^\n]*-->\n)?( *)```python\n(.*?)^\2```", README, re.M | re.S)
    return [(bool(sketch), textwrap.dedent(body)) for sketch, _, body in found]


def test_every_python_block_of_the_readme_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each ```python block runs, in order (a block headed `# NAME.py` becomes that module); a block
    marked as a sketch (it needs the reader's own graph, agent or model) must at least compile."""
    blocks = _python_blocks()
    assert sum(not sketch for sketch, _ in blocks) >= 4
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for sketch, block in blocks:
        if sketch:
            compile(block, "README.md", "exec")
            continue
        first = block.splitlines()[0]
        named = re.fullmatch(r"# (\w+)\.py", first.strip())
        if named:
            (tmp_path / f"{named.group(1)}.py").write_text(block)
            importlib.import_module(named.group(1))
        else:
            exec(compile(block, "README.md", "exec"), {"__name__": "readme_block"})


def test_quick_start_makes_a_venv_then_two_commands_and_ci_runs_the_last() -> None:
    """The quick start: a venv (PEP 668), the demo, the tests; .ci/run runs the test one verbatim."""
    venv, demo, tests = quick_start()
    assert venv.startswith("python3 -m venv ") and "activate" in venv
    assert "heartbeat run" in demo and "pytest" in tests
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == tests


# What would send a reader to the package index for heartbeat, where it is not (yet).
_FROM_THE_INDEX = re.compile(
    r"heartbeat-watchdog\[|pip install[^\n]*\bheartbeat-watchdog|pypi\.org/project/heartbeat"
)
# The CLI's own hints and `init`'s link change with the CLI work under way in heartbeat/cli.


def test_no_install_line_sends_a_reader_to_the_package_index() -> None:
    """heartbeat is not on PyPI: the README says so and says to install from a checkout; no README,
    example or docstring says `pip install heartbeat-watchdog`, an extra of it, or its index page."""
    assert "not on the package index" in README and "python3 -m pip install -e ." in README
    files = [ROOT / "README.md", *ROOT.glob("heartbeat/**/*.py"), *(ROOT / "examples").rglob("*")]
    texts = [p for p in files if p.is_file() and p.suffix != ".pyc"]
    assert len(texts) > 50
    wrong = [
        f"{path.relative_to(ROOT)}: {line.strip()}"
        for path in texts
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
        if _FROM_THE_INDEX.search(line)
    ]
    assert not wrong


def test_every_file_the_readmes_cite_exists() -> None:
    """Each `tests/...`, `bench/...` or `examples/...` path the README or examples/README.md names as
    evidence is there (a glob such as `bench/stress_*.py` matches at least one file)."""
    cited = {
        path.rstrip(".")
        for doc in (README, (ROOT / "examples" / "README.md").read_text(encoding="utf-8"))
        for path in re.findall(r"(?<![\w/.-])((?:tests|bench|examples)/[\w/.*-]+)", doc)
    }
    assert sum(p.startswith("tests/") for p in cited) >= 10
    missing = sorted(p for p in cited if not any(ROOT.glob(p)))
    assert not missing


def test_the_top_level_is_the_documented_layout_and_no_state_is_committed() -> None:
    """A checkout holds the layout the README describes; a state folder a run left behind (st/ was
    committed once) is not part of it, and state/ ships empty but for its placeholder."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout")
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    top = {path.split("/", 1)[0] for path in tracked}
    layout = {
        "pyproject.toml",
        "heartbeat",
        "state",
        "tests",
        "examples",
        "bench",
        "README.md",
        "KILL.example",
    }
    extras = {".ci", ".gitignore", "docs", "heartbeat.toml"}
    assert layout <= top and top <= layout | extras, sorted(top - layout - extras)
    assert [p for p in tracked if p.startswith("state/")] == ["state/.gitkeep"]
    assert not [p for p in tracked if p.endswith(("state.json", "journal.jsonl", "/.lock"))]


def test_kill_example_says_what_the_readme_says_about_a_running_step() -> None:
    """KILL.example, where the README sends newcomers, gives the README's figures for a step running
    when KILL appears: looked at every 0.05 s, abandoned 0.15 s later, exit 3 within half a second."""
    readme = " ".join(re.split(r"\n- |\n\n", README.split("- **KILL**:", 1)[1], maxsplit=1)[0].split())
    example = " ".join((ROOT / "KILL.example").read_text(encoding="utf-8").split())
    assert "See `KILL.example`" in readme
    figures = (
        "every 0.05 s",
        "0.15 s later is abandoned",
        "exit 3 within half a second",
        "process group is ended",
    )
    for figure in figures:
        assert figure in readme and figure in example, figure
    assert "finishes" not in example and "about a second" not in example


def test_every_example_has_a_readme_line() -> None:
    """examples/README.md says how to run each example folder."""
    index = (ROOT / "examples" / "README.md").read_text()
    folders = [
        p.name for p in (ROOT / "examples").iterdir() if p.is_dir() and not p.name.startswith(("_", "."))
    ]
    assert folders
    for name in folders:
        assert name in index, name


def _public_objects() -> list[tuple[str, object]]:
    found = []
    for info in pkgutil.walk_packages(heartbeat.__path__, "heartbeat."):
        if info.name.rpartition(".")[2].startswith("_"):
            continue
        module = importlib.import_module(info.name)
        found.append((module.__name__, module))
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            # A cached function is its cache's wrapper, which keeps the function's docstring.
            if isinstance(obj, type | types.FunctionType) or isinstance(
                getattr(obj, "__wrapped__", None), types.FunctionType
            ):
                found.append((f"{module.__name__}.{name}", obj))
    return found


@pytest.mark.parametrize(("name", "obj"), _public_objects(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_public_thing_has_a_docstring(name: str, obj: object) -> None:
    """Modules and the names in their __all__ carry a docstring."""
    assert inspect.getdoc(obj), name


def test_package_exports_match_the_type_checking_imports() -> None:
    """heartbeat/__init__.py: the names type checkers see are exactly the names it exports."""
    import ast

    import heartbeat

    tree = ast.parse(Path(heartbeat.__file__).read_text())
    typed = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
        for child in node.body
        if isinstance(child, ast.ImportFrom)
        for alias in child.names
    }
    assert typed == set(heartbeat.__all__) - {"__version__"}
    for name in heartbeat.__all__:
        assert getattr(heartbeat, name) is not None


# -- every README code block that claims to run, runs (issue 27); `<!-- sketch -->` ones only parse


@dataclass(frozen=True)
class Block:
    """One fenced code block of the README."""

    line: int
    lang: str
    sketch: bool
    body: str


def readme_blocks() -> list[Block]:
    """Every fenced block, in order, with whether a `<!-- sketch ... -->` line right above marks it."""
    pattern = re.compile(r"^(<!-- sketch[^\n]*-->\n)?( *)```(\w*)\n(.*?)^\2```", re.M | re.S)
    return [
        Block(README[: m.start()].count("\n") + 1 + bool(m.group(1)), m.group(3), bool(m.group(1)),
              textwrap.dedent(m.group(4)))
        for m in pattern.finditer(README)
    ]  # fmt: skip


def _sh_lines(block: Block) -> list[str]:
    """The command lines of a shell block (blank and comment-only lines left out)."""
    return [line for line in block.body.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _extras() -> set[str]:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return set(pyproject["project"]["optional-dependencies"])


def test_every_readme_block_runs_or_is_a_sketch_that_parses() -> None:
    """Each block is python, sh, toml or json (or plain text, a diagram); a sketch at least parses."""
    blocks = readme_blocks()
    assert sum(b.sketch for b in blocks) >= 4 and sum(not b.sketch for b in blocks) >= 10
    for block in blocks:
        where = f"README.md line {block.line}"
        assert block.lang in ("", "python", "sh", "toml", "json"), where
        if block.lang == "python":
            compile(block.body, where, "exec")
        elif block.lang == "toml":
            tomllib.loads(block.body)
        elif block.lang == "json":
            json.loads(block.body)
        elif block.lang == "sh":
            assert subprocess.run(["bash", "-n"], input=block.body, text=True).returncode == 0, where


def test_every_toml_block_of_the_readme_is_a_config_heartbeat_loads(tmp_path: Path) -> None:
    """Each runnable ```toml block is a heartbeat.toml (or a part of one) that loads as it is."""
    from heartbeat.config.file import load_config

    blocks = [b for b in readme_blocks() if b.lang == "toml" and not b.sketch]
    assert len(blocks) >= 3
    for block in blocks:
        path = tmp_path / "heartbeat.toml"
        path.write_text(block.body)
        load_config(path)  # a bad key or value raises, naming it


def test_every_sh_block_of_the_readme_names_real_commands_and_flags() -> None:
    """Each line of a runnable ```sh block is a heartbeat command that parses, pip installing this
    project (or an extra it has), pytest, or one of a few shell commands (venv, touch, rm)."""
    shell = {"touch", "rm", "."}
    for block in (b for b in readme_blocks() if b.lang == "sh" and not b.sketch):
        for line in _sh_lines(block):
            for part in line.split(" && "):
                argv = shlex.split(part, comments=True)
                where = f"README.md line {block.line}: {part}"
                if argv[:3] == ["python3", "-m", "heartbeat"] or argv[:1] == ["heartbeat"]:
                    command = argv[3:] if argv[0] == "python3" else argv[1:]
                    build_parser(command).parse_args(command)  # a usage error raises
                elif argv[:4] == ["python3", "-m", "pip", "install"]:
                    target = argv[-1]
                    assert argv[4] == "-e" and re.fullmatch(r"\.(\[[\w,-]+\])?", target), where
                    assert set(re.findall(r"[\w-]+", target[1:])) <= _extras(), where
                elif argv[:3] in (["python3", "-m", "pytest"], ["python3", "-m", "venv"]):
                    pass
                else:
                    assert argv[0] in shell, where


def _run_python_blocks(python: str, cwd: Path, env: dict[str, str]) -> None:
    """Run every runnable ```python block in order with ``python``, as the in-process test does."""
    cwd.mkdir()
    blocks = [b.body for b in readme_blocks() if b.lang == "python" and not b.sketch]
    driver = textwrap.dedent("""
        import importlib, json, pathlib, re, sys
        sys.path.insert(0, ".")
        for block in json.loads(pathlib.Path("blocks.json").read_text()):
            named = re.fullmatch(r"# (\\w+)\\.py", block.splitlines()[0].strip())
            if named:
                pathlib.Path(named.group(1) + ".py").write_text(block)
                importlib.import_module(named.group(1))
            else:
                exec(compile(block, "README.md", "exec"), {"__name__": "readme_block"})
    """)
    (cwd / "blocks.json").write_text(json.dumps(blocks))
    (cwd / "driver.py").write_text(driver)
    done = subprocess.run([python, "driver.py"], cwd=cwd, env=env, text=True, capture_output=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_the_readme_runs_from_a_fresh_venv(tmp_path: Path) -> None:
    """A copy of the project's files, and the README as a newcomer runs it: every runnable ```sh line
    in order (the quick start makes the venv; `status` may exit 4 or 6, as the README says), then every
    runnable ```python block with that venv's Python. The pytest line is what `.ci/run` runs (see
    test_quick_start_...), so it is not run again here."""
    clone = tmp_path / "clone"
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, text=True, capture_output=True, check=True)
    for name in tracked.stdout.splitlines():
        if (ROOT / name).is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, clone / name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    for block in (b for b in readme_blocks() if b.lang == "sh" and not b.sketch):
        for line in _sh_lines(block):
            if "pytest" in line:
                continue
            enter = ". .venv/bin/activate && " if (clone / ".venv").exists() else ""
            done = subprocess.run(
                ["bash", "-c", enter + line], cwd=clone, env=env, text=True, capture_output=True, timeout=900
            )
            allowed = (0, 4, 6) if "heartbeat status" in line else (0,)
            assert done.returncode in allowed, (block.line, line, done.stdout[-2000:], done.stderr[-2000:])
            assert "Traceback" not in done.stderr, (line, done.stderr)
    python = str(clone / ".venv" / "bin" / "python")
    # The OpenTelemetry block needs the extra its section names (pip install -e '.[otel]').
    extra = subprocess.run([python, "-m", "pip", "install", "-q", "-e", ".[otel]"], cwd=clone, env=env)
    assert extra.returncode == 0
    _run_python_blocks(python, tmp_path / "blocks", env)


def test_the_readme_python_blocks_run_in_a_process_of_their_own(tmp_path: Path) -> None:
    """The fast variant of the fresh-venv test: the same driver, this interpreter, a fresh process."""
    _run_python_blocks(sys.executable, tmp_path / "blocks", {**os.environ, "PYTHONPATH": str(ROOT)})
