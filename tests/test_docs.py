"""The docs stay true: every command, config key and exit code documented; quick start == CI."""

from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil
import re
import textwrap
import types
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

import heartbeat
from heartbeat.cli import build_parser
from heartbeat.config import HeartbeatConfig

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
    for info in pkgutil.iter_modules(heartbeat.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"heartbeat.{info.name}")
        found.append((module.__name__, module))
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if isinstance(obj, type | types.FunctionType):
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
