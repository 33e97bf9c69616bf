"""Spec: a parameter annotated with a plain `Enum` (`class Status(Enum)`, no `str`/`int` mixin) takes the
type of its members' values, with those values as its `enum` (strings -> a string, ints -> an integer,
`auto()` -> 1, 2, ..., mixed -> the union of their types), alone, with a member as its default, in
`Optional`/`List` or quoted. EnvScaler's step6 writes it as `{"type": "object"}` and its runtime passes the
agent's JSON value unchecked: `status="closed"`, never a member. Kept, the object refused that call: the env
was rejected on coverage (the probes sent objects), or with `= Status.CLOSED` its verified scenario was not
promoted ("expected object, got string"), where EnvScaler scores 1.0 (outside check rt17-C F1). A `(str, Enum)`
keeps the mixin's type, no `enum` (docs/interop.md)."""

from __future__ import annotations

from typing import Any

from tests.interop.annotation_table import AnnotationTable, Row, pytest_generate_tests  # noqa: F401 - the rows

HEAD = '''import enum
from enum import Enum, auto
from typing import Dict, List, Optional


class Status(Enum):
    OPEN = "open"
    CLOSED = "closed"

    def label(self) -> str:
        return self.value.title()


class Priority(enum.Enum):
    LOW = 1
    MID = 2
    HIGH = 3


class Mixed(Enum):
    A = "a"
    ONE = 1


class Step(Enum):
    FIRST = auto()
    SECOND = auto()


class Color(str, Enum):
    RED = "red"


class Board:
    def __init__(self, init_config: dict):
        self.items: Dict[str, dict] = {}
'''
O = {"type": "object"}
ROWS: list[Row] = [  # annotation, the value EnvScaler's runtime passes, step6's schema, the schema served
    ('Status', "closed", O, {"type": "string", "enum": ["open", "closed"]}),
    ('Status = Status.CLOSED', "open", O, {"type": "string", "enum": ["open", "closed"]}),
    ('Priority', 2, O, {"type": "integer", "enum": [1, 2, 3]}),
    ('Mixed', 1, O, {"type": ["string", "integer"], "enum": ["a", 1]}),
    ('Step', 2, O, {"type": "integer", "enum": [1, 2]}),
    ('Optional[Status] = None', "open", {"type": ["object", "null"]},
     {"type": ["string", "null"], "enum": ["open", "closed", None]}),
    ('List[Status]', ["open", "closed"], {"type": "array", "items": O},
     {"type": "array", "items": {"type": "string", "enum": ["open", "closed"]}}),
    ('"Status"', "closed", {"type": "string"}, {"type": "string", "enum": ["open", "closed"]}),
    ('Color', "red", O, {"type": "string"}),
]


class TestPlainEnums(AnnotationTable):
    """Each row served as the type and values of its members (the `(str, Enum)` row as its mixin's type),
    and the member value EnvScaler's runtime passes verifies and pays: see `AnnotationTable`."""

    HEAD, ROWS = HEAD, ROWS

    def test_a_note_names_each_plain_enum_read_as_its_values(self, imported: dict[str, Any]) -> None:
        notes = imported["report"].notes
        assert any("set_v0.value: Status as Literal['open', 'closed']" in n and
                   "set_v4.value: Step as Literal[1, 2]" in n for n in notes), notes
