"""Check-function sources for common checklist shapes.

Each helper returns the text of `def check_func(final_state) -> bool` (the contract the sandbox runs,
with `initial_state` as a global). They are written defensively (`.get`, isinstance) so a check on a
state where the entity is missing returns False instead of raising.
"""

from __future__ import annotations

from typing import Any


def _entity(container: str, entity_id: str) -> str:
    return (f"    entity = final_state.get({container!r}, {{}}).get({entity_id!r})\n"
            f"    if not isinstance(entity, dict):\n"
            f"        return False\n")


def field_is(container: str, entity_id: str, field: str, value: Any) -> str:
    """`final_state[container][entity_id][field] == value`."""
    return ("def check_func(final_state):\n" + _entity(container, entity_id)
            + f"    return entity.get({field!r}) == {value!r}\n")


def list_has(container: str, entity_id: str, field: str, value: Any) -> str:
    """`value in final_state[container][entity_id][field]`."""
    return ("def check_func(final_state):\n" + _entity(container, entity_id)
            + f"    return {value!r} in (entity.get({field!r}) or [])\n")


def list_lacks(container: str, entity_id: str, field: str, value: Any) -> str:
    """`value` was in the list initially and is gone from it now."""
    return ("def check_func(final_state):\n" + _entity(container, entity_id)
            + f"    before = initial_state.get({container!r}, {{}}).get({entity_id!r}) or {{}}\n"
            + f"    return {value!r} in (before.get({field!r}) or []) and {value!r} not in (entity.get({field!r}) or [])\n")


def new_entity(container: str, **fields: Any) -> str:
    """Some entity whose key is absent from initial_state has all `fields` (generated ids are not
    named, only their existence is required)."""
    return ("def check_func(final_state):\n"
            f"    before = initial_state.get({container!r}, {{}})\n"
            f"    wanted = {fields!r}\n"
            f"    for key, entity in final_state.get({container!r}, {{}}).items():\n"
            "        if key not in before and isinstance(entity, dict) and all(entity.get(k) == v for k, v in wanted.items()):\n"
            "            return True\n"
            "    return False\n")


def new_entity_list_has(container: str, field: str, value: Any, **fields: Any) -> str:
    """A new entity with `fields` whose list `field` contains `value`."""
    return ("def check_func(final_state):\n"
            f"    before = initial_state.get({container!r}, {{}})\n"
            f"    wanted = {fields!r}\n"
            f"    for key, entity in final_state.get({container!r}, {{}}).items():\n"
            "        if key in before or not isinstance(entity, dict):\n"
            "            continue\n"
            f"        if all(entity.get(k) == v for k, v in wanted.items()) and {value!r} in (entity.get({field!r}) or []):\n"
            "            return True\n"
            "    return False\n")


def appended(list_name: str, **fields: Any) -> str:
    """The top-level list `list_name` gained an item with all `fields`."""
    return ("def check_func(final_state):\n"
            f"    wanted = {fields!r}\n"
            f"    old = initial_state.get({list_name!r}, [])\n"
            f"    new = [x for x in final_state.get({list_name!r}, []) if x not in old]\n"
            "    return any(isinstance(x, dict) and all(x.get(k) == v for k, v in wanted.items()) for x in new)\n")
