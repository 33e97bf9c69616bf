"""Spec: an annotation that names a module-level type alias (`SKU = str`, `Quantity = int`, `Opt = Optional`
or `from typing import Optional as Opt`, `UserId = NewType("UserId", str)`, a `str` Enum), alone, nested
(`List[SKU]`, `Optional[SKU]`) or quoted (`"Qty"` where `Qty = str`), gets the schema of the type it stands
for; so does a quoted annotation nested in another type (`Optional["int"]`, `List["Item"]`). EnvScaler's
step6 writes a name it cannot map as `{"type": "object"}` and a nested string as `{"type": "string"}`, and its
runtime never checks arguments; kept, those schemas refused the strings and integers the methods take (the
probes sent objects, the env was rejected, or the reference call refused: outside check 11, C-F4, B-F5, C-F2).
Aliases are read from the source through the one AST parser, never evaluated; each reading is noted.

The tools below are EnvScaler's step6 output for CODE, unmodified (`extract_class_methods_from_source`,
`get_tool_info`, `convert_tool_schema` run on it). Expected values are EnvScaler's own: its runtime
(`EnvScalerNonConvRLEnv`) was run on these files, SOLUTION followed by "Task Completed": 1.0."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from tests.interop.conftest import import_one_env

CODE = '''import typing
from enum import Enum
from typing import Dict, List, NewType, Optional, TypedDict
from typing import Optional as Opt

SKU = str
Quantity = int
Qty = str
MaybeInt = Optional
UserId = NewType("UserId", str)


class Color(str, Enum):
    RED = "red"


class Item(TypedDict):
    sku: str
    qty: int


class Shop:
    def __init__(self, init_config: dict):
        self.items = {}
        self.log = []

    def set_qty(self, sku: SKU, qty: Quantity, until: Opt[int], note: MaybeInt[int]) -> dict:
        """Set an item's quantity."""
        if sku not in self.items or not isinstance(qty, int):
            return {"success": False, "error": "bad sku or qty"}
        self.items[sku] = qty
        return {"success": True}

    def tag(self, skus: List[SKU], owner: Optional[SKU], code: "Qty", user: UserId, color: Color) -> dict:
        """Tag items."""
        if not all(isinstance(s, str) for s in skus) or not isinstance(code, str):
            return {"success": False, "error": "bad skus"}
        self.log.append([skus, owner, code, user, color])
        return {"success": True}

    def add(self, items: List["Item"], amount: Optional["int"], more: Optional[List["Item"]]) -> dict:
        """Add items."""
        if not isinstance(amount, int) or not all(isinstance(i, dict) for i in items):
            return {"success": False, "error": "bad items"}
        for it in items:
            self.items[it["sku"]] = amount
        return {"success": True}
'''
O, S, I = {"type": "object"}, {"type": "string"}, {"type": "integer"}


def _tool(name: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": name, "parameters": {
        "type": "object", "properties": props, "required": required}}}


STEP6 = [  # EnvScaler's step6 on CODE, verbatim
    _tool("set_qty", {"sku": O, "qty": O, "until": O, "note": O}, ["sku", "qty", "until", "note"]),
    _tool("tag", {"skus": {"type": "array", "items": O}, "owner": {"type": ["object", "null"]}, "code": S,
                  "user": O, "color": O}, ["skus", "code", "user", "color"]),
    _tool("add", {"items": {"type": "array", "items": S}, "amount": {"type": ["string", "null"]},
                  "more": {"type": ["array", "null"], "items": S}}, ["items"]),
]
ENV = {"env_id": "env_shop", "environment_introduction": "A shop.", "constraints_rules": [],
       "env_class_name": "Shop", "env_class_code": CODE, "tools": STEP6,
       "operation_list": [{"operation_name": n, "operation_type": "state_change"} for n in ("set_qty", "tag", "add")]}
SCENARIO = {"env_id": "env_shop", "env_class_name": "Shop", "task_id": "t1", "init_config": {"items": {"a": 1}, "log": []},
            "task": "Set a to 4, tag a, add b.", "checklist": ["done"], "checklist_with_func": [{
                "check_item": "done", "check_func": ("def check_func(final_state):\n    return final_state['items'] == "
                                                     "{'a': 4, 'b': 3} and len(final_state['log']) == 1")}]}
SOLUTION = [{"name": "set_qty", "arguments": {"sku": "a", "qty": 4, "until": 1, "note": 2}},
            {"name": "tag", "arguments": {"skus": ["a"], "owner": "a", "code": "x", "user": "u1", "color": "red"}},
            {"name": "add", "arguments": {"items": [{"sku": "b", "qty": 1}], "amount": 3, "more": None}}]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    return import_one_env(tmp_path_factory.mktemp("aliases"), ENV, [SCENARIO], {"t1": SOLUTION}, sandbox_pool, "al")


def _params(imported: dict[str, Any], tool: str) -> dict[str, Any]:
    (env,) = imported["accepted"]
    return next(t.function.parameters for t in env.tools if t.function.name == tool)


def test_the_env_is_accepted_and_the_solution_verifies_its_scenario(imported: dict[str, Any]) -> None:
    assert [(e.status, e.reasons) for e in imported["envs"]] == [("accepted", [])]
    assert [s.audit for s in imported["scenarios"]] == ["verified"]


def test_an_alias_of_a_type_gets_that_types_schema(imported: dict[str, Any]) -> None:
    assert _params(imported, "set_qty")["properties"] == {
        "sku": S, "qty": I, "until": {"type": ["integer", "null"]}, "note": {"type": ["integer", "null"]}}


def test_an_alias_nested_quoted_a_newtype_or_a_str_enum_gets_the_schema_of_its_type(imported: dict[str, Any]) -> None:
    assert _params(imported, "tag")["properties"] == {
        "skus": {"type": "array", "items": S}, "owner": {"type": ["string", "null"]}, "code": S, "user": S, "color": S}


def test_a_quoted_annotation_nested_in_another_type_is_read_as_a_type(imported: dict[str, Any]) -> None:
    assert _params(imported, "add")["properties"] == {
        "items": {"type": "array", "items": O}, "amount": {"type": ["integer", "null"]},
        "more": {"type": ["array", "null"], "items": O}}


def test_required_stays_as_step6_wrote_it(imported: dict[str, Any]) -> None:
    assert [_params(imported, t)["required"] for t in ("set_qty", "tag", "add")] == [
        ["sku", "qty", "until", "note"], ["skus", "code", "user", "color"], ["items"]]


def test_a_note_names_each_annotation_read_through_an_alias(imported: dict[str, Any]) -> None:
    notes = imported["report"].notes
    assert any(n.startswith("env_metadata.json[env_shop]: 8 annotation(s) read through module-level type aliases "
                            "(set_qty.sku: SKU as str, set_qty.qty: Quantity as int, set_qty.until: Opt[int] as "
                            "Optional[int], set_qty.note: MaybeInt[int] as Optional[int], tag.skus: List[SKU] as "
                            "List[str], tag.owner: Optional[SKU] as Optional[str], tag.user: UserId as str, "
                            "tag.color: Color as str)") for n in notes), notes


def test_a_note_names_each_nested_quoted_annotation(imported: dict[str, Any]) -> None:
    notes = imported["report"].notes
    assert any(n.startswith("env_metadata.json[env_shop]: 3 quoted annotation(s) read as the type they name "
                            "(add.items: List['Item'], add.amount: Optional['int'], add.more: Optional[List['Item']])")
               for n in notes), notes


def test_aliases_of_wide_tuples_of_aliases_expand_within_a_budget() -> None:
    """`A0 = Tuple[A1 x 8]`, `A1 = Tuple[A2 x 8]`, ...: every level multiplies the nodes by eight, 8**12 of
    them within the depth bound; the reading stops expanding at a fixed budget instead."""
    from envscaler_core import pyast
    from envscaler_core.interop.type_aliases import read_annotation, type_aliases

    module = ["from typing import Tuple", *(f"A{i} = Tuple[{', '.join([f'A{i + 1}'] * 8)}]" for i in range(12)), "A12 = int"]
    reading = read_annotation(pyast.parse("A0", mode="eval").body, type_aliases(pyast.parse("\n".join(module))))
    assert reading.aliased and sum(1 for _ in ast.walk(reading.expr)) < 100_000


def test_a_quoted_type_wider_than_the_budget_is_not_read() -> None:
    """rt14-B F4: `A: TypeAlias = "Tuple[str, str, ...]"` with 45,000 members was parsed and expanded in full
    for every parameter annotated `A` (200 of them: 11 s of host CPU at import); a quoted part longer than
    the nodes left stays a string, which reads as no constraint."""
    from envscaler_core import pyast
    from envscaler_core.interop.type_aliases import read_annotation, type_aliases

    wide = "Tuple[" + ", ".join(["str"] * 45_000) + "]"
    module = f"from typing import Tuple, TypeAlias\nA: TypeAlias = {wide!r}\n"
    reading = read_annotation(pyast.parse("A", mode="eval").body, type_aliases(pyast.parse(module)))
    assert sum(1 for _ in ast.walk(reading.expr)) < 10_000


def _read(module: str, annotation: str) -> str:
    from envscaler_core import pyast
    from envscaler_core.interop.type_aliases import read_annotation, type_aliases

    return ast.unparse(read_annotation(pyast.parse(annotation, mode="eval").body,
                                       type_aliases(pyast.parse(module))).expr)


@pytest.mark.parametrize("rebinding", ["if True:\n    SKU = str\n", "globals()['SKU'] = str\n",
                                       "for SKU in [str]:\n    pass\n", "(SKU := str)\n",
                                       "import contextlib\nwith contextlib.nullcontext(str) as SKU:\n    pass\n"])
def test_an_alias_rebound_in_a_block_or_through_globals_is_no_alias(rebinding: str) -> None:
    """rt12-B F5: `SKU = int` then rebound to `str` was read as int; the probes and the reference call, a
    string id, were refused and the env rejected where the class lends with the string."""
    assert _read("SKU = int\n" + rebinding, "SKU") == "SKU"


@pytest.mark.parametrize(("module", "annotation", "read"), [
    ("from typing import Annotated\n", "Annotated[int, 'n']", "int"),
    ("from typing import Annotated\nQty = Annotated[int, 'count']\n", "Optional[List[Qty]]", "Optional[List[int]]"),
    ("from typing import TypeAlias\nCode: TypeAlias = 'str'\n", "Code", "str"),
])
def test_annotated_types_and_quoted_type_aliases_read_as_their_type(module: str, annotation: str, read: str) -> None:
    """rt12-C F3: `Annotated[int, ...]` and `Code: TypeAlias = "str"` kept step6's object placeholder, and
    the reference calls EnvScaler plays at 1.0 were refused."""
    assert _read(module, annotation) == read
