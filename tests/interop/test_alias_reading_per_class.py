"""Spec: a class's annotations are read through its module's type aliases once per alias, within one
budget for the whole class. rt17-B F4: the 10,000-node budget was per annotation, so a quoted alias of a
2,400-member `Tuple` (9.6 K characters, inside that budget) was parsed and expanded again for every one of
5,000 parameters naming it: 16 s of host CPU to fit the tools of a 70 KB class (18 s for its import), where
a 1-member alias took 0.24 s. Now an annotation is read once, and when the class's annotations have
expanded to the class budget, the parameters left that name an alias or hold a quoted part are not read:
they take no constraint (as a quoted part longer than the nodes left does), and a note names them.

These run `fit_tools`, the step the import runs on each env, on the checker's class."""

from __future__ import annotations

import time
from typing import Any

from envscaler_core.interop.tool_fit import fit_tools
from envscaler_core.models.env import ToolSchema

TOOLS, PARAMS = 20, 250


def _class(width: int) -> tuple[list[ToolSchema], str]:
    """rt17-B F4's class: a quoted alias `A` of a `width`-member Tuple, and TOOLS methods of PARAMS
    parameters `pN: A = None`; the tools as step6 writes them (`{"type": "object"}` for a name it cannot map)."""
    members = "str," * width
    params = ",".join(f"p{j}:A=None" for j in range(PARAMS))
    lines = ["from typing import Tuple, TypeAlias", f'A: TypeAlias = "Tuple[{members}]"', "", "class Library:",
             "    def __init__(self, init_config: dict):", "        self.books = {}"]
    tools = []
    for i in range(TOOLS):
        lines += [f"    def get_x{i}(self,{params}):", "        return {'success': True, 'data': 1}"]
        tools.append(ToolSchema.model_validate({"type": "function", "function": {
            "name": f"get_x{i}", "description": "Get x.",
            "parameters": {"type": "object", "properties": {f"p{j}": {"type": "object"} for j in range(PARAMS)},
                           "required": []}}}))
    return tools, "\n".join(lines) + "\n"


def _fitted(width: int) -> tuple[dict[str, dict[str, Any]], list[str], float]:
    tools, code = _class(width)
    started = time.process_time()
    fitted, notes, problems = fit_tools(tools, code, "Library")
    spent = time.process_time() - started
    assert problems == []
    props = {f"{t.function.name}.{n}": s for t in fitted for n, s in (t.function.parameters or {})["properties"].items()}
    return props, notes, spent


def test_a_wide_alias_named_by_every_parameter_costs_about_what_a_one_member_alias_does() -> None:
    _, _, narrow = _fitted(1)
    _, _, wide = _fitted(2400)
    assert wide < 10 * narrow + 1.0, (wide, narrow)


def test_the_parameters_read_before_the_class_budget_is_spent_get_the_aliases_schema() -> None:
    props, _, _ = _fitted(2400)
    assert props["get_x0.p0"] == {"type": ["array", "null"]}


def test_the_parameters_left_when_the_class_budget_is_spent_take_no_constraint() -> None:
    props, _, _ = _fitted(2400)
    assert props["get_x19.p249"] == {}


def test_a_note_names_the_parameters_left_unread_and_why() -> None:
    props, notes, _ = _fitted(2400)
    unread = [k for k, v in props.items() if v == {}]
    note = next((n for n in notes if "not read through" in n), None)
    assert note is not None and note.startswith(f"{len(unread)} annotation(s) not read through type aliases or "
                                                f"quoted parts ({unread[0]}, "), notes


def test_a_narrow_alias_is_read_for_every_parameter() -> None:
    props, notes, _ = _fitted(1)
    assert set(map(str, props.values())) == {str({"type": ["array", "null"]})}
    assert not any("not read through" in n for n in notes)
