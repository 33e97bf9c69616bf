"""Spec: an annotation that names no concrete JSON type is served the values EnvScaler's runtime runs with it,
never step6's `{"type": "object"}`. EnvScaler's runtime passes the agent's JSON value to the method unchecked
(`getattr(env, name)(**arguments)`), so what a schema may refuse is only what the annotation itself rules out:

* `typing.Text` and `AnyStr` (str or bytes; bytes do not travel in JSON) are strings;
* a TypeVar is what it may stand for: unconstrained (and a `ParamSpec`) any value, bound its bound's schema,
  constrained any of its constraints' schemas, read from the module's `TypeVar(...)` like an alias;
* `object`, `Any` however it is spelled, a `Protocol` class (structural: whichever JSON value has its members),
  and an annotation no JSON value can meet (`Never`, `NoReturn`, `Type[X]`: the runtime still runs the call)
  take any value;
* `Hashable` takes the scalars (string, number, boolean, null); `SupportsInt`, `SupportsFloat`,
  `numbers.Number` and `numbers.Real` a number; `numbers.Integral` an integer; `Sequence[str]` an array of
  strings;

alike inside `List`, `Optional`, `Union`, `Dict` values and `X | None`, quoted and under
`from __future__ import annotations`. Before, eight such shapes kept step6's object: the scenarios EnvScaler
plays at 1.0 were verified but not promoted ("set_value.value: expected object, got string") and the gym, MCP
and rollouts refused the call (outside check rt19-R4 F3).

Each row's step6 schema is EnvScaler's own output for it (`extract_class_methods_from_source`,
`get_tool_info`, `convert_tool_schema`, unmodified); its value is what EnvScaler's runtime passes
(`tests/interop/annotation_table.py`)."""

from __future__ import annotations

from tests.interop.annotation_table import AnnotationTable, Row, pytest_generate_tests  # noqa: F401 - the rows

HEAD = '''from __future__ import annotations

import numbers
import typing
import typing as tp
from collections.abc import Hashable as AbcHashable
from typing import (Any, AnyStr, Dict, Hashable, List, Never, NoReturn, Optional, ParamSpec, Protocol, Sequence,
                    SupportsFloat, SupportsInt, Text, Type, TypeVar, Union)
from typing import Any as Anything

T = TypeVar("T")
Num = TypeVar("Num", bound=int)
Key = TypeVar("Key", str, int)
Ref = typing.TypeVar("Ref", bound="Optional[str]")
P = ParamSpec("P")


class Named(Protocol):
    name: str


class Sized2(typing.Protocol[T]):
    def __len__(self) -> int: ...


class Board:
    def __init__(self, init_config: dict):
        self.items: Dict[str, dict] = {}
'''
O = {"type": "object"}
S = {"type": "string"}
ANY: dict = {}
NUMBER = {"type": "number"}
SCALAR = {"type": ["string", "number", "boolean", "null"]}
ROWS: list[Row] = [  # annotation, the value EnvScaler's runtime passes, step6's schema, the schema served
    ('typing.Text', "t", O, S),
    ('Text', "u", O, S),
    ('AnyStr', "abc", O, S),
    ('typing.AnyStr', "b", O, S),
    ('T', "z", O, ANY),
    ('Num', 3, O, {"type": "integer"}),
    ('Key', "q", O, {"anyOf": [S, {"type": "integer"}]}),
    ('Ref = None', "r", O, {"type": ["string", "null"]}),
    ('List[T]', [1, "a"], {"type": "array", "items": O}, {"type": "array", "items": ANY}),
    ('T | None = None', 2, O, ANY),
    ('Optional[T] = None', "x", {"type": ["object", "null"]}, ANY),
    ('Union[T, int]', "u", O, ANY),
    ('Dict[str, T]', {"a": 1}, O, O),
    ('"T"', "z", S, ANY),
    ('"List[Num]"', [1], S, {"type": "array", "items": {"type": "integer"}}),
    ('object', "s", O, ANY),
    ('Optional[object] = None', 5, {"type": ["object", "null"]}, ANY),
    ('List[object]', [1, "a"], {"type": "array", "items": O}, {"type": "array", "items": ANY}),
    ('tp.Any', [1], ANY, ANY),
    ('Anything', {"k": 1}, O, ANY),
    ('"typing.Any"', 1.5, S, ANY),
    ('Hashable', "h", O, SCALAR),
    ('AbcHashable', 4, O, SCALAR),
    ('SupportsInt', 2.5, O, NUMBER),
    ('SupportsFloat', 3, O, NUMBER),
    ('numbers.Number', 1.5, O, NUMBER),
    ('numbers.Real', 2, O, NUMBER),
    ('numbers.Integral', 7, O, {"type": "integer"}),
    ('Sequence[str]', ["a", "b"], O, {"type": "array", "items": S}),
    ('typing.Sequence[int]', [1], O, {"type": "array", "items": {"type": "integer"}}),
    ('P', "p", O, ANY),
    ('Never', "n", O, ANY),
    ('NoReturn', 1, O, ANY),
    ('Named', {"name": "x"}, O, ANY),
    ('Sized2', [1, 2], O, ANY),
    ('Type[int]', "int", O, ANY),
    ('type[str]', "str", O, ANY),
]


class TestGenericAndAbstractAnnotations(AnnotationTable):
    """Each row served as the table gives, and the value EnvScaler's runtime passes verifies and pays: see
    `AnnotationTable`."""

    HEAD, ROWS = HEAD, ROWS
