"""The layout's import rules (ARCHITECTURE.md, "Layout"), checked on the source so a stray import fails
here rather than in a deployment: the core is orchestration-free and does not know the mock exists."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def imported_modules(package: str) -> set[tuple[str, str]]:
    """(file, top-level module) for every import statement under `package`."""
    found: set[tuple[str, str]] = set()
    for path in (ROOT / package).rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update((str(path.relative_to(ROOT)), a.name.split(".")[0]) for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add((str(path.relative_to(ROOT)), node.module.split(".")[0]))
    return found


@pytest.mark.parametrize(("package", "forbidden"), [
    ("envscaler_core", {"prefect", "mock_llm", "sandbox", "tasks", "flows", "envscaler"}),
    ("sandbox", {"prefect", "mock_llm", "tasks", "flows", "envscaler"}),
    ("mock_llm", {"prefect", "sandbox", "tasks", "flows", "envscaler"}),
])
def test_package_does_not_import(package: str, forbidden: set[str]) -> None:
    offending = sorted(f"{file} imports {module}" for file, module in imported_modules(package) if module in forbidden)
    assert offending == []


@pytest.mark.parametrize("package", ["envscaler_core", "mock_llm", "flows", "tasks"])
def test_code_that_runs_in_threads_parses_under_the_one_ast_lock(package: str) -> None:
    """CPython 3.11's AST constructor keeps its recursion depth in interpreter-wide state: parses in two
    threads at once can fail with "AST constructor recursion depth mismatch" (python/cpython#106905; it
    failed a realistic-endpoints factory run). Every parse goes through `envscaler_core.pyast`."""
    offending = []
    for path in (ROOT / package).rglob("*.py"):
        rel = str(path.relative_to(ROOT))
        # env classes and the BFCL jail module only run in the sandbox (one thread; no envscaler_core there)
        if rel in ("envscaler_core/pyast.py", "envscaler_core/bfcl/jail_env.py") or "/library/envs/" in rel:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "parse"
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "ast"):
                offending.append(f"{rel}:{node.lineno}")
    assert offending == []
