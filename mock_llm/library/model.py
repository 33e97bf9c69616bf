"""What a library domain is: a real env class file plus everything the mock needs to talk about it.

Domains are trusted, hand-written fixtures. The brain copies what it hands out (`copy.deepcopy`), so a
caller mutating an answer can never change the library.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace
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
    site: int | None = None
    """Set on a copy of a domain at another site (`at_site`): same env, its own names."""
    source_class: str | None = None
    """The class name in `env_file` when it differs from `class_name` (a site copy)."""

    @property
    def class_source(self) -> str:
        return class_file(self.env_file, self.source_class, self.class_name)

    def at_site(self, site: int) -> "Domain":
        """This domain as it would be at another site: the same env class under a new class name, with
        summaries and introduction that say which site. Lets the mock's funnel grow for scale
        benchmarks (distinct topics, candidates and envs) without new hand-written domains."""
        tag = f" (site {site})"
        return replace(
            self, name=f"{self.name}-site{site}", class_name=f"{self.class_name}Site{site}",
            summary=self.summary + tag, summary_variants=tuple(v + tag for v in self.summary_variants),
            introduction=self.introduction + tag, site=site, source_class=self.class_name)

    @property
    def state_space(self) -> dict[str, Any]:
        """Entities and rules, shaped like `synth.state_space`'s answer."""
        return {"entities": self.entities, "rules": self.rules}

    def tool_names(self) -> list[str]:
        from mock_llm.safe_ast import parse

        cls = next(n for n in parse(self.class_source).body
                   if isinstance(n, ast.ClassDef) and n.name == self.class_name)
        return [n.name for n in cls.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]


def class_file(env_file: str, source_class: str | None = None, class_name: str | None = None) -> str:
    """The text of a library env file, its class renamed from `source_class` to `class_name` if given."""
    text = (ENVS_DIR / env_file).read_text(encoding="utf-8")
    if source_class and class_name and source_class != class_name:
        text = re.sub(rf"\b{re.escape(source_class)}\b", class_name, text)
    return text
