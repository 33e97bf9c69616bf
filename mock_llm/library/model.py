"""What a library domain is: a real env class file plus everything the mock needs to talk about it.

Domains are trusted, hand-written fixtures. The brain copies what it hands out (`copy.deepcopy`), so a
caller mutating an answer can never change the library.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

ENVS_DIR = Path(__file__).parent / "envs"


@dataclass(frozen=True)
class LibraryScenario:
    """A task in one initial state, with its checklist, check sources and a reference plan.

    `checks[i]` decides `checklist[i]`; each defines `check_func(final_state) -> bool` and may read
    the global `initial_state`. `reference_solution` is a list of `{"tool": ..., "args": {...}}`.
    """

    initial_state: dict[str, Any]
    task: str
    checklist: list[str]
    checks: list[str]
    reference_solution: list[dict[str, Any]]

    def __post_init__(self) -> None:
        if len(self.checklist) != len(self.checks) or not self.checks:
            raise ValueError(f"scenario {self.task[:40]!r}: {len(self.checklist)} items vs {len(self.checks)} checks")


@dataclass(frozen=True)
class Domain:
    """One environment topic of the library (healthy or deliberately defective)."""

    name: str
    class_name: str
    env_file: str
    summary: str
    summary_variants: tuple[str, ...]
    introduction: str
    intro_variants: tuple[str, ...]
    rules: list[str]
    tool_kinds: dict[str, Literal["query", "state_change"]]
    keywords: dict[str, float]
    entities: list[dict[str, Any]]
    initial_states: list[dict[str, Any]]
    scenarios: list[LibraryScenario]
    usefulness: int = 8
    modelability: int = 8
    defect: str | None = None
    defect_description: str | None = None
    example_values: dict[str, Any] = field(default_factory=dict)

    @property
    def class_source(self) -> str:
        return (ENVS_DIR / self.env_file).read_text(encoding="utf-8")

    @property
    def state_space(self) -> dict[str, Any]:
        """Entities and rules, shaped like `synth.state_space`'s answer."""
        return {"entities": self.entities, "rules": self.rules}

    def tool_names(self) -> list[str]:
        from mock_llm.safe_ast import parse

        cls = next(n for n in parse(self.class_source).body
                   if isinstance(n, ast.ClassDef) and n.name == self.class_name)
        return [n.name for n in cls.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]
