"""The house rules that a reader of the code relies on, checked on the code itself.

See docs/architecture.md: only ``store/`` reaches the runtime's SQLite file and
frame files, only ``store/deletion/`` deletes from it, no module imports another
module's ``_underscore`` names, and functions stay short enough to hold. In
``tests/``, shared fixtures live in ``conftest.py`` and shared helpers in
modules not named ``test_*``: no module there imports a test module.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
PACKAGE = TESTS.parent / "sessions_admin"
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


def test_only_the_store_and_our_own_data_import_sqlite3():
    found = [
        name
        for name, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Import) and any(a.name == "sqlite3" for a in node.names)
    ]
    outside = [
        name
        for name in found
        if not name.startswith(("sessions_admin/store/", "sessions_admin/ourdata/"))
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
    assert writers == {"sessions_admin/store/deletion/cascade.py"}


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
