"""The house rules that a reader of the code relies on, checked on the code itself.

See docs/architecture.md: its layer table is the contract (a module imports only
its own layer and those below), only ``store/`` reaches the runtime's SQLite file
and frame files, only ``deletion/`` deletes from it, no module imports another
module's ``_underscore`` names, and functions stay short enough to hold. In
``tests/``, shared fixtures live in ``conftest.py`` and shared helpers in
modules not named ``test_*``: no module there imports a test module.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
PACKAGE = TESTS.parent / "sessions_admin"
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
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


# --- The layers ---------------------------------------------------------------------


def layer_table(text: str) -> list[tuple[str, list[str]]]:
    """(layer, paths under the package) per row of the doc's layer table, bottom first."""
    section = text.split("## The layers", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("layer", "") or set(cells[0]) <= set("- "):
            continue
        rows.append((cells[0], re.findall(r"`([^`]+)`", cells[1])))
    return rows


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def placements(table: list[tuple[str, list[str]]]) -> dict[str, list[tuple[int, str]]]:
    """Every module file (relative to the package) with the layers whose paths hold it."""
    found: dict[str, list[tuple[int, str]]] = {
        str(path.relative_to(PACKAGE)): [] for path in PACKAGE.rglob("*.py")
    }
    for rank, (layer, paths) in enumerate(table):
        for entry in paths:
            for name, places in found.items():
                if name == entry or (entry.endswith("/") and name.startswith(entry)):
                    places.append((rank, layer))
    return found


def imported_modules(path: Path, known: set[str]) -> list[tuple[int, str]]:
    """(line, module) of every import of the package's own modules in ``path``: at the
    top or inside a function, ``import x`` or ``from x import y``, relative ones
    resolved; ``from package import name`` counts the submodule when ``name`` is one."""
    this = module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            # The longest module the dotted name starts with (``import a.b.c`` loads a.b.c).
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target:
                found.append((node.lineno, target))
    return found


def layer_violations(table: list[tuple[str, list[str]]]) -> list[str]:
    places = placements(table)
    files = {module_name(PACKAGE / name): name for name in places}
    rank = {name: min(p)[0] for name, p in places.items() if p}
    layer = {name: min(p)[1] for name, p in places.items() if p}
    found = []
    for name in sorted(rank):
        for line, target in imported_modules(PACKAGE / name, set(files)):
            other = files[target]
            if other in rank and rank[other] > rank[name]:
                found.append(
                    f"{name}:{line} ({layer[name]}) imports {target} ({layer[other]}), above it"
                )
    return found


def test_no_module_imports_a_layer_above_its_own():
    table = layer_table(ARCHITECTURE.read_text())
    assert [layer for layer, _ in table][:2] == ["helpers", "store"]  # the table was read
    assert layer_violations(table) == []


def test_every_module_is_placed_in_exactly_one_layer_of_the_doc():
    table = layer_table(ARCHITECTURE.read_text())
    places = placements(table)
    assert {name: p for name, p in places.items() if len(p) != 1} == {}
    # And every path the table names exists, so the doc cannot name a module gone.
    named = [entry for _, paths in table for entry in paths]
    assert [entry for entry in named if not (PACKAGE / entry).exists()] == []


def test_a_module_importing_a_layer_above_is_caught():
    """The check itself can fail: swap two layers and it names what now points up."""
    table = layer_table(ARCHITECTURE.read_text())
    names = [layer for layer, _ in table]
    store, ourdata = names.index("store"), names.index("our data")
    table[store], table[ourdata] = table[ourdata], table[store]
    found = layer_violations(table)
    assert any(v.startswith("ourdata/sync/") and "store.feed (store)" in v for v in found)


def _importers_of(prefix: str) -> set[str]:
    known = {module_name(path) for path in PACKAGE.rglob("*.py")}
    return {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        for _, target in imported_modules(path, known)
        if target == prefix or target.startswith(prefix + ".")
    }


def test_our_data_reads_the_store_only_through_the_feed():
    known = {module_name(path) for path in PACKAGE.rglob("*.py")}
    reached = {
        target
        for path in (PACKAGE / "ourdata").rglob("*.py")
        for _, target in imported_modules(path, known)
        if target.startswith("sessions_admin.store")
    }
    # toolcalls is the rule of what a tool call is; it reads nothing from the store.
    assert reached == {"sessions_admin.store.feed", "sessions_admin.store.toolcalls"}


def test_only_the_deletion_package_calls_the_stores_cascade():
    importers = _importers_of("sessions_admin.store.cascade")
    assert {name.split("/")[0] for name in importers} == {"store", "deletion"}
    # Within the store, only readers of its counts: orphans, and a principal's footprint.
    store_side = {name for name in importers if name.startswith("store/")}
    assert store_side == {"store/orphans.py", "store/principals.py"}


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
