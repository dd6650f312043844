"""The house rules that a reader of the code relies on, checked on the code itself.

See docs/architecture.md: only ``store/`` reaches the runtime's SQLite file and
frame files, only ``deletion/`` deletes from it, no module imports another
module's ``_underscore`` names, and functions stay short enough to hold.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "sessions_admin"
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
