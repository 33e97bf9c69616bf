"""Spec: every annotation shape the tool fitting understands alone is understood inside `Optional[...]`,
`Union[..., None]`, `X | None` and `List`/`Sequence`/`Set`/`FrozenSet`/`Tuple`/`Dict[...]` (and their
lowercase builtins), nested, through module aliases (`typing.X`, `tp.X`, `Opt`) and quoted; `Any`, alone or
in `Optional`, is no constraint. EnvScaler's step6 writes `Optional[X]` for an X outside its small type map
as `{"type": ["object", "null"]}`, `Optional[Any]` as `{"type": ["null"]}` and `List[Literal[...]]` as an
array of objects; its runtime passes the agent's JSON arguments to the method unchecked. Kept, those schemas
refused the call EnvScaler runs: 9 of 13 verified scenarios were never promoted, and the gym, MCP and
rollouts refused the call (outside check rt17-C F4).

Each row's step6 schema is EnvScaler's own output for it (`extract_class_methods_from_source`,
`get_tool_info`, `convert_tool_schema`, unmodified; its `_optional` marker stays in nested items); its value
is what EnvScaler's runtime passes (`tests/interop/annotation_table.py`)."""

from __future__ import annotations

from typing import Any

from tests.interop.annotation_table import AnnotationTable, Row, pytest_generate_tests  # noqa: F401 - the rows

ROWS: list[Row] = [
    ('Optional[Literal["fast", "slow"]] = None', 'fast',
     {'type': ['object', 'null']},
     {'type': ['string', 'null'], 'enum': ['fast', 'slow', None]}),
    ('Optional[Literal["fast", "slow"]]', None,
     {'type': ['object', 'null']},
     {'type': ['string', 'null'], 'enum': ['fast', 'slow', None]}),
    ('Optional[Literal[1, 2, 3]] = None', 2,
     {'type': ['object', 'null']},
     {'type': ['integer', 'null'], 'enum': [1, 2, 3, None]}),
    ('Optional[Union[int, str]] = None', 'fast',
     {'type': ['object', 'null']},
     {'anyOf': [{'type': 'integer'}, {'type': 'string'}, {'type': 'null'}]}),
    ('Optional[Union[int, str]]', 3,
     {'type': ['object', 'null']},
     {'anyOf': [{'type': 'integer'}, {'type': 'string'}, {'type': 'null'}]}),
    ('Union[int, str, None]', None,
     {'type': 'object'},
     {'anyOf': [{'type': 'integer'}, {'type': 'string'}, {'type': 'null'}]}),
    ('Union[None, Literal["a", "b"]]', 'b',
     {'type': 'object'},
     {'type': ['string', 'null'], 'enum': ['a', 'b', None]}),
    ('Optional[Tuple[str, str]] = None', ['a', 'b'],
     {'type': ['object', 'null']},
     {'type': ['array', 'null']}),
    ('Optional[Set[str]] = None', ['a'],
     {'type': ['object', 'null']},
     {'type': ['array', 'null'], 'items': {'type': 'string'}}),
    ('Optional[FrozenSet[int]]', [1, 2],
     {'type': ['object', 'null']},
     {'type': ['array', 'null'], 'items': {'type': 'integer'}}),
    ('Optional[List[Literal["a", "b"]]] = None', ['a'],
     {'type': ['array', 'null'], 'items': {'type': 'object'}},
     {'type': ['array', 'null'], 'items': {'type': 'string', 'enum': ['a', 'b']}}),
    ('List[Literal["a", "b"]]', ['b', 'a'],
     {'type': 'array', 'items': {'type': 'object'}},
     {'type': 'array', 'items': {'type': 'string', 'enum': ['a', 'b']}}),
    ('Optional[Any] = None', 'fast',
     {'type': ['null']},
     {}),
    ('Optional[Any]', {'k': [1]},
     {'type': ['null']},
     {}),
    ('Any', 7,
     {},
     {}),
    ('List[Any]', [1, 'a'],
     {'type': 'array', 'items': {}},
     {'type': 'array', 'items': {}}),
    ('Literal["fast", "slow"] | None = None', 'slow',
     {'type': 'object'},
     {'type': ['string', 'null'], 'enum': ['fast', 'slow', None]}),
    ('int | str | None', 'x',
     {'type': 'object'},
     {'anyOf': [{'type': 'integer'}, {'type': 'string'}, {'type': 'null'}]}),
    ('None | Set[str]', ['s'],
     {'type': 'object'},
     {'type': ['array', 'null'], 'items': {'type': 'string'}}),
    ('list[Literal["a", "b"]]', ['a'],
     {'type': 'object'},
     {'type': 'array', 'items': {'type': 'string', 'enum': ['a', 'b']}}),
    ('set[str]', ['a'],
     {'type': 'object'},
     {'type': 'array', 'items': {'type': 'string'}}),
    ('tuple[int, ...]', [1, 2],
     {'type': 'object'},
     {'type': 'array'}),
    ('frozenset', [1],
     {'type': 'object'},
     {'type': 'array', 'items': {}}),
    ('Optional[dict[str, int]]', {'k': 1},
     {'type': ['object', 'null']},
     {'type': ['object', 'null']}),
    ('Dict[str, Optional[Literal["x"]]]', {'k': None},
     {'type': 'object'},
     {'type': 'object'}),
    ('Sequence[Optional[Literal["x", "y"]]]', ['x', None],
     {'type': 'object'},
     {'type': 'array', 'items': {'type': ['string', 'null'], 'enum': ['x', 'y', None]}}),
    ('List[Optional[Union[int, str]]]', [1, 'a', None],
     {'type': 'array', 'items': {'type': ['object', 'null'], '_optional': True}},
     {'type': 'array', 'items': {'anyOf': [{'type': 'integer'}, {'type': 'string'}, {'type': 'null'}]}}),
    ('Optional[List[Optional[Set[str]]]]', [['a'], None],
     {'type': ['array', 'null'], 'items': {'type': ['object', 'null'], '_optional': True}},
     {'type': ['array', 'null'], 'items': {'type': ['array', 'null'], 'items': {'type': 'string'}}}),
    ('List[List[Literal[1, 2]]]', [[1], [2, 1]],
     {'type': 'array', 'items': {'type': 'array', 'items': {'type': 'object'}}},
     {'type': 'array', 'items': {'type': 'array', 'items': {'type': 'integer', 'enum': [1, 2]}}}),
    ('Tuple[Literal["a"], int]', ['a', 1],
     {'type': 'object'},
     {'type': 'array'}),
    ('Literal["a", 1]', 1,
     {'type': 'object'},
     {'type': ['string', 'integer'], 'enum': ['a', 1]}),
    ('Optional[Literal["a", 1]]', 'a',
     {'type': ['object', 'null']},
     {'type': ['string', 'integer', 'null'], 'enum': ['a', 1, None]}),
    ('typing.Optional[typing.Literal["a", "b"]]', 'a',
     {'type': ['object', 'null']},
     {'type': ['string', 'null'], 'enum': ['a', 'b', None]}),
    ('tp.Optional[tp.Set[str]]', ['a'],
     {'type': ['object', 'null']},
     {'type': ['array', 'null'], 'items': {'type': 'string'}}),
    ('tp.List[tp.Optional[tp.Any]]', ['a', None],
     {'type': 'array', 'items': {'type': ['null'], '_optional': True}},
     {'type': 'array', 'items': {}}),
    ('"Optional[Literal[\'a\', \'b\']]"', 'b',
     {'type': 'string'},
     {'type': ['string', 'null'], 'enum': ['a', 'b', None]}),
    ('Optional["Literal[\'a\', \'b\']"]', 'a',
     {'type': ['string', 'null']},
     {'type': ['string', 'null'], 'enum': ['a', 'b', None]}),
    ('Opt[Literal["a"]]', 'a',
     {'type': 'object'},
     {'type': ['string', 'null'], 'enum': ['a', None]}),
    ('Optional[Code]', 'c1',
     {'type': ['object', 'null']},
     {'type': ['string', 'null']}),
    ('Optional[float] = None', 2.5,
     {'type': ['number', 'null']},
     {'type': ['number', 'null']}),
    ('Optional[Dict] = None', {'k': 'v'},
     {'type': ['object', 'null']},
     {'type': ['object', 'null']}),
    ('Literal[1, 2, 3]', 3,
     {'type': 'object'},
     {'type': 'integer', 'enum': [1, 2, 3]}),
]
HEAD = '''import typing
import typing as tp
from typing import Any, Dict, FrozenSet, List, Literal, Optional, Sequence, Set, Tuple, Union
from typing import Optional as Opt

Code = str


class Board:
    def __init__(self, init_config: dict):
        self.items: Dict[str, dict] = {}
'''


class TestEveryShape(AnnotationTable):
    """42 shapes (at least 30), each fitted alike alone and nested: see `AnnotationTable`."""

    HEAD, ROWS = HEAD, ROWS

    def test_the_table_holds_at_least_thirty_distinct_shapes(self) -> None:
        assert len(ROWS) >= 30 and len({row[0] for row in ROWS}) == len(ROWS)

    def test_a_note_names_each_step6_schema_taken_from_the_annotation(self, imported: dict[str, Any]) -> None:
        notes = [n for n in imported["report"].notes if "taken from the annotation" in n]
        assert len(notes) == 1 and notes[0].startswith(
            "env_metadata.json[env_board]: 32 schema(s) EnvScaler's step6 wrote for types it cannot express "
            "taken from the annotation (set_v0.value, set_v1.value,"), notes
