"""Spec: a `Literal` member is read as a constant when it is one (`-1`, `+1`, `-2.5`, `-0` are signed numbers,
alone, in `Optional` or a `List`), and a `Literal` with a member that is no JSON constant (`b"x"`, a tuple, an
expression) takes no constraint at all, never a narrower `enum`; a `Flag` enum takes any integer (a call may
combine its members: `R | W` is 3), and a functional Enum (`Enum("Func", "OPEN CLOSED")`, a list of names, of
pairs) takes its members' values as a `class` Enum does. EnvScaler's step6 writes each of these as an object
and its runtime passes the agent's JSON value to the method unchecked. Before, `Literal[-1, 1]` was served as
`{"enum": [1]}` (the member `-1` dropped: "-1 is not one of [1]"), `Literal[-5, -10]` rejected its env on
coverage, and a Flag or functional Enum kept step6's object: verified scenarios were never promoted (outside
check rt18-R2 F4). A `List[Optional[int]]` is kept as step6 wrote it, but without its internal `_optional`
marker, which was served and exported (rt18-R2 F5).

Each row's step6 schema is EnvScaler's own output for it (`extract_class_methods_from_source`,
`get_tool_info`, `convert_tool_schema`, unmodified); its value is what EnvScaler's runtime passes
(`tests/interop/annotation_table.py`)."""

from __future__ import annotations

from typing import Any

from tests.interop.annotation_table import AnnotationTable, Row, pytest_generate_tests  # noqa: F401 - the rows

HEAD = '''from enum import Enum, Flag, IntEnum, auto
from typing import Dict, List, Literal, Optional


class Perm(Flag):
    R = auto()
    W = auto()
    X = auto()


class Mode(Flag):
    R = 4
    W = 2
    X = 1


class Level(Enum):
    LOW = -1
    HIGH = 1


def some_names() -> list:
    return ["P", "Q"]


Func = Enum("Func", "OPEN CLOSED")
Pairs = Enum("Pairs", [("LOW", -5), ("HIGH", "high")])
Listed = Enum("Listed", ["A", "B", "C"])
Shade = IntEnum("Shade", "DARK LIGHT")
Bits = Flag("Bits", "A B C")
Odd = Enum("Odd", some_names())


class Board:
    def __init__(self, init_config: dict):
        self.items: Dict[str, dict] = {}
'''
O = {"type": "object"}
INT = {"type": "integer"}
ROWS: list[Row] = [  # annotation, the value EnvScaler's runtime passes, step6's schema, the schema served
    ('Literal[-1, 1]', -1, O, {"type": "integer", "enum": [-1, 1]}),
    ('Literal[-2.5, 2.5]', -2.5, O, {"type": "number", "enum": [-2.5, 2.5]}),
    ('Literal[+1, 2]', 1, O, {"type": "integer", "enum": [1, 2]}),
    ('Literal[-0, 1]', 0, O, {"type": "integer", "enum": [0, 1]}),
    ('Literal[-5, -10]', -10, O, {"type": "integer", "enum": [-5, -10]}),
    ('Optional[Literal[-1, 0]] = None', -1, {"type": ["object", "null"]},
     {"type": ["integer", "null"], "enum": [-1, 0, None]}),
    ('List[Literal[-1, 1]]', [-1, 1], {"type": "array", "items": O},
     {"type": "array", "items": {"type": "integer", "enum": [-1, 1]}}),
    ('Literal[b"x", 1]', 1, O, {}),
    ('Literal[(1, 2), 3]', 3, O, {}),
    ('Literal[1 + 2, 4]', 4, O, {}),
    ('Optional[Literal[b"x", -1]] = None', -1, {"type": ["object", "null"]}, {}),
    ('Perm', 3, O, INT),
    ('Mode', 6, O, INT),
    ('Optional[Perm] = None', 1, {"type": ["object", "null"]}, {"type": ["integer", "null"]}),
    ('List[Perm]', [1, 4], {"type": "array", "items": O}, {"type": "array", "items": INT}),
    ('Level', -1, O, {"type": "integer", "enum": [-1, 1]}),
    ('Func', 2, O, {"type": "integer", "enum": [1, 2]}),
    ('Pairs', -5, O, {"type": ["integer", "string"], "enum": [-5, "high"]}),
    ('Listed', 3, O, {"type": "integer", "enum": [1, 2, 3]}),
    ('Shade', 2, O, INT),
    ('Bits', 5, O, INT),
    ('Odd', "x", O, {}),
    ('List[Optional[int]]', [1, None], {"type": "array", "items": {"type": ["integer", "null"], "_optional": True}},
     {"type": "array", "items": {"type": ["integer", "null"]}}),
    ('List[Optional[str]]', ["a", None], {"type": "array", "items": {"type": ["string", "null"], "_optional": True}},
     {"type": "array", "items": {"type": ["string", "null"]}}),
]


class TestSignedLiteralsFlagsAndFunctionalEnums(AnnotationTable):
    """Each row served as the table gives, and the value EnvScaler's runtime passes verifies and pays; no
    exported schema holds `_optional`: see `AnnotationTable`."""

    HEAD, ROWS = HEAD, ROWS

    def test_a_note_names_each_functional_enum_read_as_its_values(self, imported: dict[str, Any]) -> None:
        notes = imported["report"].notes
        assert any("set_v16.value: Func as Literal[1, 2]" in n and "set_v11.value: Perm as int" in n
                   for n in notes), notes
