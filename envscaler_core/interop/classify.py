"""From raw check outcomes to audit classes: per check, then the scenario's worst.

A check's class (see docs/interop.md):
* `check_error`: the source does not compile, defines no `check_func`, names something that does not
  exist (`NameError`), times out or was killed, on either state; also every check of a scenario whose initial state
  does not load. A `NameError` or missing module on the initial state alone is judged again after a
  reference solution (`rejudged`): EnvScaler runs checks on the final state only. An error that could be the state's doing (`KeyError`, `TypeError` on a missing
  record) after a reference solution leaves the check `unproven` with that error: a wrong solution
  causes it as surely as a wrong check, exactly as a check left False does (round-trip check 4, F3). An
  import of a module a check may not have is refused before it runs, `nondeterministic` (rt14-A F3);
* `not_bool`: it returned something other than a real `bool` after a reference solution (EnvScaler's
  `run_check_function` only keeps an `isinstance(result, bool)` result, so that check scores 0 on the
  solved state). On the initial state a non-bool (`None`, `[]`, `''`, `0` from `return loan and ...`) is
  "not True there", exactly like a raise: EnvScaler scores it 0 there too, and the check is judged after
  the reference solution;
* `nondeterministic`: its code breaks the rule of `scenarios/determinism.py` (imports beyond the
  computing modules, a clock such as `D.now()`, reflection, `id()`...), or evaluations of one state in fresh units disagree, on either
  state (`scenarios/determinism.py`): its verdict is not a function of the state, so it pays at random or
  after a date. EnvScaler runs it once and keeps it;
* `vacuous`: True on the initial state: it rewards doing nothing;
* `unproven`: False on the initial state, and no reference solution has made it True yet. A check
  that raises there (`final_state['reservations']['R001']` before the reservation exists) is False
  there too: EnvScaler only runs checks on the final state and scores an exception 0, so such a check
  is judged by what it says after a reference solution, not by its error on the initial state;
* `verified`: False on the initial state and True after a reference solution replayed in the sandbox.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from envscaler_core.models.interop import CheckAudit, worst

NO_SOLUTION = "no reference solution yet"
SFT_NO_CHECKS = "SFT record: no check functions"
VACUOUS = "check already True on the initial state (rewards doing nothing)"
EMPTY_CHECKLIST = "checklist_with_func is empty (EnvScaler's reward divides by zero)"
RAISES_INITIALLY = "raises on the initial state (False there, as EnvScaler's reward counts it)"
NOT_BOOL_INITIALLY = "not a bool on the initial state (0 there, as EnvScaler's reward counts it)"
_NOT_THE_STATE = ("timeout", "crash", "oversize", "unserializable", "check source must be",
                  "Function 'check_func' not found", "not run", "no result")
_CODE_ERRORS = ("SyntaxError", "IndentationError", "TabError", "NameError", "ModuleNotFoundError", "ImportError",
                "SystemExit", "KeyboardInterrupt", "GeneratorExit")
_IMPORT_ERRORS = ("ModuleNotFoundError", "ImportError")
_BASE_ONLY = ("SystemExit", "KeyboardInterrupt", "GeneratorExit")
_RUNTIME_CODE = ("NameError", "ModuleNotFoundError", "ImportError", *_BASE_ONLY)
CRASHES_ENVSCALER = ("not an Exception: EnvScaler's run_check_function catches Exception only, so its runtime "
                     "crashes on it")
SITE_EXIT = ("EnvScaler's runtime runs with site's exit()/quit(), which raise SystemExit there and crash it: "
             "its run_check_function catches Exception only")
STDLIB_ONLY = "the sandbox gives env classes and checks the Python standard library only: docs/interop.md"
AFTER = "after the reference solution: "


def short(error: str | None, limit: int = 200) -> str:
    """The last meaningful line of an error (tracebacks end with `Type: message`), cut to `limit`."""
    lines = [line.strip() for line in (error or "").splitlines() if line.strip()]
    text = lines[-1] if lines else "no detail"
    text = text if len(text) <= limit else text[:limit] + "..."
    kind = text.split(":", 1)[0].strip()
    if kind in _IMPORT_ERRORS and not _stdlib_import(text):  # why a module EnvScaler's venv has is missing here
        text += f" ({STDLIB_ONLY})"
    elif kind in _BASE_ONLY:  # a check that exits: check_error here, a crash there (interop re-check, F5)
        text += f" ({CRASHES_ENVSCALER})"
    elif kind == "NameError" and any(f"name '{n}' is not defined" in text for n in ("exit", "quit")):
        text += f" ({SITE_EXIT})"
    return text


def _stdlib_import(text: str) -> bool:
    """Does the import error name a standard-library module (`cannot import name 'x' from 'json'`)? Then
    the jail's stdlib-only rule is not why it failed, and saying so pointed the wrong way (re-check F6b)."""
    found = re.search(r"(?:No module named|from) '([^']+)'", text)
    return found is not None and found.group(1).split(".")[0] in sys.stdlib_module_names


def outcome_of(raw: Any) -> tuple[str, bool | None, str | None]:
    """(kind, value, error) of one check result (`sandboxed.raw_result`); anything odd is an error, never a pass."""
    if not isinstance(raw, dict):
        return "error", None, "no result"
    kind, value = raw.get("kind"), raw.get("v")
    if kind == "ok" and type(value) is bool:
        return "ok", value, None
    if kind == "not_bool":
        return "not_bool", None, str(raw.get("error") or "check_func did not return a bool")
    if kind == "nondeterministic":
        return "nondeterministic", None, str(raw.get("error"))
    return "error", None, str(raw.get("error") or "check failed")


def about_the_state(error: str | None) -> bool:
    """Could this error on the initial state be the state's doing (a record the task creates is not
    there yet)? Not when the check never ran (no `check_func`, a syntax error), was killed or timed out,
    or names something that exists in no state (`NameError`, but not its subclass UnboundLocalError)."""
    text = (error or "").strip()
    if not text or text.startswith(_NOT_THE_STATE):
        return False
    return _kind(text) not in _CODE_ERRORS


def false_on_initial(error: str | None) -> bool:
    """Does a raise on the initial state count as False there? Whatever the state may cause
    (`about_the_state`), and a `NameError` or missing module too: EnvScaler only runs checks on the final
    state, so a name or import reached only on the initial state's branch costs nothing there (interop
    re-check, F4: such a check was `check_error`, and EnvScaler's runtime scores the scenario 1.0)."""
    return about_the_state(error) or _runtime_code_error(error)


def _runtime_code_error(error: str | None) -> bool:
    text = (error or "").strip()
    return bool(text) and not text.startswith(_NOT_THE_STATE) and _kind(text) in _RUNTIME_CODE


def _kind(error: str) -> str:
    """The exception's type name on the error's last line (`KeyboardInterrupt` has no message, so no colon)."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    return (lines[-1] if lines else "").split(":", 1)[0].strip()


def rejudged(audit: CheckAudit) -> bool:
    """A check classed `check_error` for a `NameError` or missing module on the initial state alone: without
    a reference solution nothing says its branch for the final state is any better, so it stays
    `check_error`; a reference solution judges it again (`apply_solution`)."""
    return (audit.outcome == "check_error" and audit.on_initial is None and audit.on_solved is None
            and not (audit.error or "").startswith(AFTER) and _runtime_code_error(audit.error))


def initial_audits(items: list[str], raw: Any) -> list[CheckAudit]:
    """Checks judged on the initial state only. `raw` is one result per check (or a dict error for all)."""
    if not isinstance(raw, list):
        error = raw.get("error") if isinstance(raw, dict) else None
        raw = [{"kind": "error", "error": error or "not run"}] * len(items)
    audits = []
    for index, (item, one) in enumerate(zip(items, raw)):
        kind, value, error = outcome_of(one)
        if kind == "nondeterministic":
            cls = "nondeterministic"
        elif kind == "error" and about_the_state(error):
            cls, error = "unproven", f"{RAISES_INITIALLY}: {short(error)}"
        elif kind == "error":
            cls = "check_error"
        elif kind == "not_bool":
            cls, error = "unproven", f"{NOT_BOOL_INITIALLY}: {short(error)}"
        else:
            cls = "vacuous" if value else "unproven"
        audits.append(CheckAudit(index=index, item=item, outcome=cls, on_initial=value, error=error))
    return audits


def apply_solution(audits: list[CheckAudit], raw: Any) -> list[CheckAudit]:
    """Checks that were `unproven`, judged again on the state after the reference solution. A raise
    the state may cause keeps the check `unproven` (with the error); one no state causes is `check_error`."""
    if not isinstance(raw, list):
        error = raw.get("error") if isinstance(raw, dict) else None
        raw = [{"kind": "error", "error": error or "not run"}] * len(audits)
    out = []
    for audit, one in zip(audits, raw):
        if audit.outcome != "unproven" and not rejudged(audit):
            out.append(audit)
            continue
        kind, value, error = outcome_of(one)
        update: dict[str, Any] = {"on_solved": value, "outcome": "unproven"}
        if kind == "nondeterministic":
            update.update(outcome="nondeterministic", error=AFTER + str(error))
        elif kind == "error" and about_the_state(error):
            update.update(error=AFTER + str(error))  # still unproven: the solution may be what is wrong
        elif kind == "error":
            update.update(outcome="check_error", error=AFTER + str(error))
        elif kind == "not_bool":
            update.update(outcome="not_bool", error=f"after the reference solution: {error}")
        elif value:
            update.update(outcome="verified", error=None)
        elif audit.outcome != "unproven":  # a NameError on the initial state only, False after the solution
            update.update(error=f"{RAISES_INITIALLY}: {short(audit.error)}")
        out.append(audit.model_copy(update=update))
    return out


def scenario_class(audits: list[CheckAudit]) -> tuple[str, list[str]]:
    """The worst check's class and the distinct reasons behind it (generic text, for counting)."""
    if not audits:
        return "check_error", [EMPTY_CHECKLIST]
    cls = worst([a.outcome for a in audits])
    reasons: list[str] = []
    for a in audits:
        if a.outcome != cls:
            continue
        if cls in ("check_error", "not_bool", "nondeterministic"):
            reason = short(a.error)
        elif cls == "vacuous":
            reason = VACUOUS
        elif cls == "unproven":
            reason = NO_SOLUTION
        else:
            continue
        if reason not in reasons:
            reasons.append(reason)
    return cls, reasons
