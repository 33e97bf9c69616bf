"""A check runs under run-time guards where the static purity rule cannot see what a name will hold
(sandbox/jail_check_guards.py): `dataclasses` writes field names into code it executes, and a check can
annotate any string through `type(...)`."""

from __future__ import annotations

from sandbox import SandboxPool
from sandbox.checks import run_checks

STATE = {"credits": 5}



# dataclasses writes field names into code it executes; a check can annotate any string through `type(...)`.
# A name with a tab compiled, and names with line breaks came close to running statements (review of rt14-A F1).
ODD_FIELD = ("import dataclasses\n"
             "def check_func(final_state):\n"
             "    C = dataclasses.dataclass(type('C', (), {'__annotations__': {'a\\t': int}}))\n"
             "    return final_state['credits'] == 5\n")


def test_a_dataclass_whose_field_name_is_no_identifier_is_refused_in_a_check(jail: SandboxPool) -> None:
    [outcome] = run_checks(jail, [ODD_FIELD], STATE, STATE, 5.0)
    assert outcome.passed is None and "field names must be identifiers" in (outcome.error or ""), outcome


def test_an_honest_dataclass_in_a_check_still_runs(jail: SandboxPool) -> None:
    honest = ("from dataclasses import dataclass\n"
              "def check_func(final_state):\n"
              "    @dataclass\n    class Want:\n        credits: int\n"
              "    return Want(final_state['credits']) == Want(5)\n")
    [outcome] = run_checks(jail, [honest], STATE, STATE, 5.0)
    assert outcome.passed is True, outcome
