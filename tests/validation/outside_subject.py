"""What an outside class is for the specs: its code, its state, its tool kinds and its planted defects.

A defect is a source replacement plus the words its rejection must contain (the *right* reason)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Defect:
    old: str
    new: str
    expect: str  # a substring of one critical/blocking line


@dataclass(frozen=True)
class Subject:
    name: str
    style: str  # "envscaler" | "user"
    class_name: str
    code: str
    state: dict[str, Any]
    kinds: dict[str, str]
    defects: dict[str, Defect] = field(default_factory=dict)

    def with_defect(self, defect: str) -> str:
        d = self.defects[defect]
        assert self.code.count(d.old) == 1, f"{self.name}/{defect}: the replaced text must occur once"
        return self.code.replace(d.old, d.new)
