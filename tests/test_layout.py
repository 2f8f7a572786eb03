"""The package's layout as issues 11 and 23 left it: layers, small modules, no private import, no circle.

Read with ``ast`` from the source, not by importing, resolved to heartbeat
modules: the module-level imports (what runs when a module is imported; a
function's lazy import and an ``if TYPE_CHECKING:`` block do not), and every
import wherever it is written (a lazy import breaks a circle at load time,
not in the design). The layers themselves are import-linter's contracts in
``pyproject.toml``, run here.
Importing ``heartbeat.a.b`` runs ``heartbeat/a/__init__.py`` first, so it
counts as an edge to that package too, unless the importer is inside it (then
the package's ``__init__`` is already running); a package's ``__init__``
importing its submodules gives package -> submodule edges.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "heartbeat"

ROOT = PACKAGE.parent

RUNNER_MAX_LINES = 330
MODULE_MAX_LINES = 500


@dataclass
class Module:
    """One module of the package as its source says."""

    name: str
    path: Path
    lines: int
    imports: set[str] = field(default_factory=set)
    """The package's modules this one imports at module level."""
    everywhere: set[str] = field(default_factory=set)
    """The package's modules this one imports anywhere: in functions and under TYPE_CHECKING too."""
    private: list[str] = field(default_factory=list)
    """``from <other module> import _name`` found here at module level, as ``"<module>._name"``."""
    private_anywhere: list[str] = field(default_factory=list)
    """The same, wherever the import is written."""


def module_name(root: Path, path: Path) -> str:
    """``heartbeat/a/b.py`` -> ``heartbeat.a.b``; ``heartbeat/a/__init__.py`` -> ``heartbeat.a``."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_type_checking(test: ast.expr) -> bool:
    """``if TYPE_CHECKING:`` or ``if typing.TYPE_CHECKING:``."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def module_level(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """The import statements run when the module is imported (not in functions, not TYPE_CHECKING)."""
    found: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If):
            if not is_type_checking(node.test):
                found += module_level(node.body)
            found += module_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                found += module_level(block)
        elif isinstance(node, ast.With | ast.ClassDef):  # a class body runs at import time too
            found += module_level(node.body)
    return found


def every_import(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of a module, wherever it is written."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]


def with_parents(name: str, known: set[str], importer: str) -> set[str]:
    """``name`` and the packages above it whose ``__init__`` importing it runs first.

    Not the packages ``importer`` is inside: those are being imported already.
    """
    parts, here = name.split("."), importer.split(".")
    running = {".".join(here[:n]) for n in range(1, len(here) + 1)}
    return ({".".join(parts[:n]) for n in range(1, len(parts) + 1)} - running) & known


def read_package(root: Path) -> dict[str, Module]:
    """Every module under ``root`` with its module-level imports of the package and its private imports."""
    paths = sorted(root.rglob("*.py"))
    modules = {module_name(root, p): Module(module_name(root, p), p, 0) for p in paths}
    known = set(modules)
    for module in modules.values():
        text = module.path.read_text(encoding="utf-8")
        module.lines = len(text.splitlines())
        is_package = module.path.name == "__init__.py"
        # What a relative import of level 1 starts from: the package itself, or the module's package.
        here = module.name if is_package else module.name.rpartition(".")[0]
        tree = ast.parse(text, str(module.path))
        loaded = set(map(id, module_level(tree.body)))
        for node in every_import(tree):
            at_load = id(node) in loaded
            found: set[str] = set()
            if isinstance(node, ast.Import):
                for alias in node.names:
                    found |= with_parents(alias.name, known, module.name)
            else:
                if node.level:
                    base_parts = here.split(".")
                    base = ".".join(base_parts[: len(base_parts) - node.level + 1])
                    source = f"{base}.{node.module}" if node.module else base
                else:
                    source = node.module or ""
                if source.split(".")[0] != root.name:
                    continue  # another package's: not ours to check
                found |= with_parents(source, known, module.name)
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    if sub in known:  # `from . import x`: the submodule x
                        found.add(sub)
                    private = alias.name.startswith("_") and not alias.name.startswith("__")
                    if private and source != module.name:
                        module.private_anywhere.append(f"{source}.{alias.name}")
                        if at_load:
                            module.private.append(f"{source}.{alias.name}")
            module.everywhere |= found
            if at_load:
                module.imports |= found
        module.imports.discard(module.name)
        module.everywhere.discard(module.name)
    return modules


def find_cycle(modules: dict[str, Module], *, everywhere: bool = False) -> list[str] | None:
    """One import circle as a path (first == last), or None; ``everywhere``: lazy imports count too."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        path.append(name)
        edges = modules[name].everywhere if everywhere else modules[name].imports
        for target in sorted(edges):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[name] = 2
        return None

    for name in sorted(modules):
        if name not in state:
            found = visit(name)
            if found:
                return found
    return None


def oversized(modules: dict[str, Module]) -> list[str]:
    """The modules over their line limit (the runner has its own, lower one)."""
    too_big = []
    for module in modules.values():
        limit = RUNNER_MAX_LINES if module.name.endswith(".runner") else MODULE_MAX_LINES
        if module.lines > limit:
            where = "/".join(module.name.split(".")) + (
                "/__init__.py" if module.path.name == "__init__.py" else ".py"
            )
            too_big.append(f"{where}: {module.lines} > {limit} lines")
    return too_big


@pytest.fixture(scope="module")
def package() -> dict[str, Module]:
    return read_package(PACKAGE)


# -- the package


def test_the_reader_sees_the_whole_package(package: dict[str, Module]) -> None:
    """The checks below look at every module, the runner's imports among them."""
    assert {
        "heartbeat",
        "heartbeat.tick.runner",
        "heartbeat.state.store",
        "heartbeat.detect.detectors",
    } <= set(package)
    assert {"heartbeat.state.store", "heartbeat.core.settle"} <= package["heartbeat.tick.runner"].imports
    assert "heartbeat.tick.pinground" in package["heartbeat.tick.runner"].everywhere  # a lazy import


def test_no_module_imports_another_modules_private_names(package: dict[str, Module]) -> None:
    """A name with a leading underscore is its module's own: another module asks for a public one."""
    found = {m.name: m.private_anywhere for m in package.values() if m.private_anywhere}
    assert found == {}


def test_no_import_circle(package: dict[str, Module]) -> None:
    """The module-level imports form no circle (lazy and TYPE_CHECKING imports aside)."""
    cycle = find_cycle(package)
    assert cycle is None, " -> ".join(cycle or [])


def test_no_import_circle_even_inside_functions(package: dict[str, Module]) -> None:
    """Counting lazy and TYPE_CHECKING imports too, no circle: a lower module never asks a higher one."""
    cycle = find_cycle(package, everywhere=True)
    assert cycle is None, " -> ".join(cycle or [])


def test_modules_stay_small(package: dict[str, Module]) -> None:
    """The runner stays under 330 lines and every module under 500: one job per module."""
    assert oversized(package) == []


def test_the_top_of_the_package_shows_the_layers() -> None:
    """``ls heartbeat/``: about twelve entries; each package's docstring says what it owns and may import."""
    entries = sorted(p.name for p in PACKAGE.iterdir() if p.name != "__pycache__")
    packages = [p for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()]
    assert len(entries) <= 16, entries  # the packages, testing.py, __init__.py, __main__.py, py.typed
    for folder in packages:
        doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8")))
        assert doc and "import" in doc.lower(), (
            f"{folder.name}/__init__.py: say what it owns and what it may import"
        )


def test_package_inits_import_nothing_but_a_facade(package: dict[str, Module]) -> None:
    """A subpackage's ``__init__`` is its docstring: importing ``heartbeat.x.y`` pays only for y.

    The exceptions are deliberate public facades: the integrations' guard, the
    import formats' registry and the detectors' set.
    """
    facades = {"heartbeat.integrations", "heartbeat.formats", "heartbeat.detect.detectors"}
    found = {
        m.name: sorted(m.imports)
        for m in package.values()
        if m.path.name == "__init__.py" and m.name not in facades | {"heartbeat"} and m.imports
    }
    assert found == {}


def test_the_import_linter_contracts_are_kept() -> None:
    """The layers of ``[tool.importlinter]`` in pyproject.toml hold: no package imports one above it."""
    code = (
        "import sys\n"
        "from importlinter.cli import lint_imports\n"
        "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


# -- the checks themselves, on a small package made for them


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_checks_find_a_circle_private_imports_and_big_modules(tmp_path: Path) -> None:
    """A circle through a package's __init__, a private import and a long runner are all reported."""
    pkg = write(
        tmp_path / "heartbeat",
        {
            "__init__.py": "from .a import thing\n",
            # a -> sub (its __init__ runs first) -> sub.c -> a: a circle only through the package
            "a.py": "from .sub.b import _helper\nthing = 1\n",
            "sub/__init__.py": "from . import c\n",
            "sub/b.py": "def _helper():\n    pass\n",
            "sub/c.py": "from ..a import thing\n",
            "runner.py": "x = 1\n" * (RUNNER_MAX_LINES + 1),
        },
    )
    modules = read_package(pkg)
    assert modules["heartbeat.a"].private == ["heartbeat.sub.b._helper"]
    assert modules["heartbeat.a"].imports == {"heartbeat.sub", "heartbeat.sub.b"}
    assert modules["heartbeat.sub"].imports == {"heartbeat.sub.c"}
    assert modules["heartbeat.sub.c"].imports == {"heartbeat.a"}  # not its own packages: running already
    cycle = find_cycle(modules)
    assert cycle is not None and cycle[0] == cycle[-1]
    assert set(cycle) == {"heartbeat.a", "heartbeat.sub", "heartbeat.sub.c"}
    assert oversized(modules) == [f"heartbeat/runner.py: {RUNNER_MAX_LINES + 1} > {RUNNER_MAX_LINES} lines"]


def test_lazy_and_type_checking_imports_are_not_edges(tmp_path: Path) -> None:
    """Imports inside functions or under TYPE_CHECKING never run at import time: no circle."""
    pkg = write(
        tmp_path / "heartbeat",
        {
            "__init__.py": "",
            "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\nthing = 1\n",
            "b.py": "from .a import thing as _thing_alias\n\ndef f():\n    from .a import _late\n",
        },
    )
    modules = read_package(pkg)
    assert modules["heartbeat.a"].imports == set()
    assert modules["heartbeat.b"].imports == {"heartbeat.a"}
    assert modules["heartbeat.b"].private == []  # only the alias is private; the lazy import is not read
    assert find_cycle(modules) is None


def test_counted_everywhere_lazy_and_type_checking_imports_are_edges(tmp_path: Path) -> None:
    """The same package read with every import: the lazy and TYPE_CHECKING ones close a circle."""
    pkg = write(
        tmp_path / "heartbeat",
        {
            "__init__.py": "",
            "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\nthing = 1\n",
            "b.py": "from .a import thing as _thing_alias\n\ndef f():\n    from .a import _late\n",
        },
    )
    modules = read_package(pkg)
    assert modules["heartbeat.a"].everywhere == {"heartbeat.b"}
    assert modules["heartbeat.b"].private_anywhere == ["heartbeat.a._late"]
    cycle = find_cycle(modules, everywhere=True)
    assert cycle is not None and set(cycle) == {"heartbeat.a", "heartbeat.b"}
