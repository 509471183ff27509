"""The package's shape: no module imports one that imports it back, and nothing below the
CLI reaches up into it.

Every import counts: at module level, inside functions, and by name through
``importlib.import_module`` (a module that does so depends on every package module its source
names in a string, and on every gate module when it reads the gate registry). Imports under
``if TYPE_CHECKING:`` do not run and do not count.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tools import gate_registry

PACKAGE = Path(__file__).resolve().parents[1] / "tools"


def _modules(root: Path) -> dict[str, Path]:
    out = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _type_checking_only(tree: ast.Module) -> set[int]:
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skipped


def _imported(name: str, path: Path, node: ast.AST, mods: dict[str, Path]) -> set[str]:
    if isinstance(node, ast.Import):
        found = set()
        for alias in node.names:
            parts = alias.name.split(".")
            while parts and ".".join(parts) not in mods:
                parts.pop()
            if parts:
                found.add(".".join(parts))
        return found
    assert isinstance(node, ast.ImportFrom)
    base = node.module or ""
    if node.level:
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join(package + ([base] if base else []))
    found = set()
    for alias in node.names:
        if f"{base}.{alias.name}" in mods:
            found.add(f"{base}.{alias.name}")
        elif base in mods:
            found.add(base)
    return found


def _by_name(source: str, tree: ast.Module, mods: dict[str, Path]) -> set[str]:
    """What a module that calls importlib.import_module may import by name."""
    if "import_module(" not in source:
        return set()
    named = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in mods
    }
    if "gate_registry" in source or "all_modules" in source:
        named |= {t for t in gate_registry.all_modules().values() if t in mods}
    return named


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    mods = _modules(root)
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        skipped = _type_checking_only(tree)
        deps: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in skipped:
                deps |= _imported(name, path, node, mods)
        graph[name] = (deps | _by_name(source, tree, mods)) - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    part = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        part.append(member)
                        if member == node:
                            break
                    if len(part) > 1:
                        found.append(sorted(part))
    return found


def test_no_module_imports_one_that_imports_it_back() -> None:
    assert circles(import_graph()) == []


def test_the_check_finds_a_circle_hidden_in_a_function(tmp_path: Path) -> None:
    pkg = tmp_path / "tools"
    (pkg / "gates").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "gates" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from tools import b\n")
    (pkg / "b.py").write_text("def f():\n    from tools.a import x\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tools import a\n"
    )
    (pkg / "d.py").write_text("import importlib\nimportlib.import_module('tools.e')\n")
    (pkg / "e.py").write_text("import tools.d\n")
    assert circles(import_graph(pkg)) == [["tools.a", "tools.b"], ["tools.d", "tools.e"]]


# The entry points, the only modules outside tools/cli that may reach the CLI: ``python -m
# tools``, and the demo, which runs the CLI in a subprocess from a string of code.
CLI_ENTRIES = {("tools.__main__", "tools.cli.main"), ("tools.demo", "tools.cli.main")}
_CODE_IMPORT = re.compile(r"(?:from|import)\s+(tools\.cli(?:\.\w+)*)")


def _in_cli(name: str) -> bool:
    return name == "tools.cli" or name.startswith("tools.cli.")


def cli_reach(root: Path = PACKAGE) -> set[tuple[str, str]]:
    """``(module, CLI module)`` for each module outside ``tools.cli`` that imports the CLI: at
    module level, inside a function, only for type checking (the layering is wrong there too),
    or in a string of code it runs elsewhere."""
    mods = _modules(root)
    found: set[tuple[str, str]] = set()
    for name, path in mods.items():
        if _in_cli(name):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                targets = _imported(name, path, node, mods)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                targets = set(_CODE_IMPORT.findall(node.value))
            else:
                continue
            found |= {(name, t) for t in targets if _in_cli(t)}
    return found


def test_nothing_below_the_cli_imports_it() -> None:
    assert cli_reach() == CLI_ENTRIES


def test_the_check_finds_every_way_up_into_the_cli(tmp_path: Path) -> None:
    pkg = tmp_path / "tools"
    (pkg / "cli").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "cli" / "__init__.py").write_text("")
    (pkg / "cli" / "main.py").write_text("from tools import a\n")
    (pkg / "a.py").write_text("def f():\n    from tools.cli.main import main\n")
    (pkg / "b.py").write_text("from . import cli\n")
    (pkg / "c.py").write_text("CODE = 'import sys; from tools.cli.main import main; main()'\n")
    (pkg / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import tools.cli.main\n"
    )
    (pkg / "e.py").write_text('"""The CLI (tools/cli, tools.cli.main) renders this."""\n')
    assert cli_reach(pkg) == {
        ("tools.a", "tools.cli.main"),
        ("tools.b", "tools.cli"),
        ("tools.c", "tools.cli.main"),
        ("tools.d", "tools.cli.main"),
    }


def long_functions(pkg: Path, limit: int = 80) -> list[str]:
    """``path:line name (lines)`` of every function of ``pkg`` longer than ``limit`` lines
    (its decorators and docstring included)."""
    found = []
    for path in sorted(pkg.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = (node.end_lineno or node.lineno) - first + 1
                if length > limit:
                    found.append(f"{path.relative_to(pkg.parent)}:{first} {node.name} ({length})")
    return found


def test_no_function_is_longer_than_80_lines() -> None:
    assert long_functions(PACKAGE) == []


def test_the_length_check_finds_a_long_function(tmp_path: Path) -> None:
    pkg = tmp_path / "tools"
    pkg.mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(79))
    (pkg / "a.py").write_text(f"@staticmethod\ndef f():\n{body}\n\ndef g():\n{body}")
    assert long_functions(pkg) == ["tools/a.py:1 f (81)"]
