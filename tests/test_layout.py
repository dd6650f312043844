"""The house rules that a reader of the code relies on, checked on the code itself.

See docs/architecture.md. The import rules (a module imports only its own layer
and those below, our data reads the store only through the feed's package, only
the deletion package and the store's orphans and principals import the store's
cascade) are import-linter contracts in pyproject.toml, run here and by ``make
lint``; this module checks that they hold, that every module sits in one layer
and that each contract can fail, and what import-linter cannot express: only
``store/``, ``ourdata/`` and ``demo/`` import ``sqlite3``, the cascade's deletes
are written in one module, no module imports another module's ``_underscore``
names, and functions stay short enough to hold. In ``tests/``, shared fixtures
live in ``conftest.py`` and shared helpers in modules not named ``test_*``: no
module there imports a test module.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
PACKAGE = TESTS.parent / "sessions_admin"
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
PYPROJECT = PACKAGE.parent / "pyproject.toml"
MAX_FUNCTION_LINES = 80


def _modules() -> list[tuple[str, ast.Module]]:
    return [
        (str(path.relative_to(PACKAGE.parent)), ast.parse(path.read_text()))
        for path in sorted(PACKAGE.rglob("*.py"))
    ]


def test_no_module_imports_another_modules_underscore_names():
    found = [
        f"{name}:{node.lineno} {node.module}.{alias.name}"
        for name, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sessions_admin")
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]
    assert found == []


def test_no_function_is_longer_than_80_lines():
    found = [
        f"{name}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for name, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert found == []


def test_only_the_store_our_own_data_and_the_demo_writer_import_sqlite3():
    # The demo writer makes a new store file of its own; it never opens the runtime's.
    found = [
        name
        for name, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Import) and any(a.name == "sqlite3" for a in node.names)
    ]
    outside = [
        name
        for name in found
        if not name.startswith(
            ("sessions_admin/store/", "sessions_admin/ourdata/", "sessions_admin/demo/")
        )
    ]
    assert outside == [] and found  # the store does use it


def _docstrings(tree: ast.Module) -> set[int]:
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def test_the_cascades_deletes_are_written_in_one_module():
    writers = set()
    for name, tree in _modules():
        prose = _docstrings(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and id(node) not in prose
                and isinstance(node.value, str)
                and "DELETE FROM session" in node.value
            ):
                writers.add(name)
    assert writers == {"sessions_admin/store/cascade.py"}


# --- The import contracts ------------------------------------------------------------


def contracts() -> list[dict]:
    return tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]


def lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    """import-linter's ``lint-imports`` over the package in ``cwd``, as ``make lint`` runs it."""
    tool = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(tool), "--no-cache"],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "COLUMNS": "200"},  # one import per line, unwrapped
    )


def test_the_import_contracts_hold():
    done = lint_imports(PACKAGE.parent)
    assert done.returncode == 0, done.stdout[-3000:]
    assert f"{len(contracts())} kept, 0 broken" in done.stdout


def test_every_module_is_in_exactly_one_layer():
    """A module the layers contract does not name would be bound by no layer."""
    (layers,) = [c["layers"] for c in contracts() if c["type"] == "layers"]
    named = [m.strip() for layer in layers for m in layer.split(":")]
    on_disk = {
        f"sessions_admin.{p.stem}"
        for p in PACKAGE.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and any(p.rglob("*.py")))
    }
    assert sorted(named) == sorted(set(named))  # none twice
    assert set(named) == on_disk


def test_the_docs_layer_table_is_the_contracts_layers():
    """docs/architecture.md's table says what the contract is: the same layers, in order."""
    (layers,) = [c["layers"] for c in contracts() if c["type"] == "layers"]
    from_contract = [sorted(m.strip() for m in layer.split(":")) for layer in reversed(layers)]
    section = ARCHITECTURE.read_text().split("## The layers", 1)[1].split("\n## ", 1)[0]
    from_doc = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("layer", "") or set(cells[0]) <= set("- "):
            continue
        paths = re.findall(r"`([^`]+)`", cells[1])
        from_doc.append(
            sorted(
                "sessions_admin." + p.rstrip("/").removesuffix(".py").replace("/", ".")
                for p in paths
                if p != "__init__.py"
            )
        )
    assert from_doc == from_contract


BROKEN = {
    # (file under the package, the import appended, what lint-imports reports)
    "a layer above": (
        "store/__init__.py",
        "from sessions_admin import views",
        "sessions_admin.store -> sessions_admin.views",
    ),
    "the feed's wall": (
        "ourdata/__init__.py",
        "from sessions_admin.store import queries",
        "sessions_admin.ourdata -> sessions_admin.store.queries",
    ),
    "the cascade's wall": (
        "views/__init__.py",
        "from sessions_admin.store import cascade",
        "sessions_admin.views -> sessions_admin.store.cascade",
    ),
}


@pytest.mark.parametrize("case", BROKEN)
def test_an_import_against_a_contract_is_caught(tmp_path, case):
    """The check itself can fail: a copy of the package with one import that breaks
    one contract (and only that one)."""
    where, line, reported = BROKEN[case]
    copy = tmp_path / "repo"
    shutil.copytree(PACKAGE, copy / "sessions_admin", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PYPROJECT, copy / "pyproject.toml")
    module = copy / "sessions_admin" / where
    module.write_text(module.read_text() + f"\n{line}  # noqa\n")
    done = lint_imports(copy)
    assert done.returncode != 0
    assert f"{len(contracts()) - 1} kept, 1 broken" in done.stdout, done.stdout[-3000:]
    assert reported in done.stdout, done.stdout[-3000:]


# --- Tests ----------------------------------------------------------------------------


def _imported_modules(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            # ``from tests import test_x`` names a module too, not only an attribute.
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_no_module_under_tests_imports_a_test_module():
    imports = {path: _imported_modules(ast.parse(path.read_text())) for path in TESTS.rglob("*.py")}
    found = [
        f"{path.relative_to(TESTS.parent)} imports {module}"
        for path, modules in sorted(imports.items())
        for module in sorted(modules)
        if module.startswith("tests.") and module.rsplit(".", 1)[-1].startswith("test_")
    ]
    assert found == []
    # The walk saw the test modules' imports: they share code through helper modules.
    assert any("tests.conftest" in modules for modules in imports.values())
