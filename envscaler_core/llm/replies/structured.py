"""A structured stage's answer: the one JSON object in the reply that validates against its model.

Order (the issue's contract): reasoning set aside; fenced blocks first, then the top-level balanced
objects of the answer, each read by `json_text.load_value`; the first that validates wins. Two
candidates that validate but *differ* are ambiguous (an example and an answer both fitting the
schema): nothing is guessed, the repair turn says so. An object wrapped once under a key that is not
one of the model's fields (`{"result": {...}}`), or a one-element list around it, is unwrapped: each
has exactly one reading. When the reasoning never closed (or only a reasoning field was sent), the
answer is the *last* object that validates: a model writes its drafts first and its answer last.

Every refusal is a `ReplyProblem` whose message names what was wrong, where, what was expected and
what was found; the gateway puts it into the repair turn verbatim.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar, get_origin

from pydantic import BaseModel, ValidationError

from envscaler_core.llm.replies.json_text import (
    Candidate, NotJSON, fenced_candidates, load_value, loose_candidates, unclosed_object_line,
)
from envscaler_core.llm.replies.reasoning import SplitReply

O = TypeVar("O", bound=BaseModel)
MAX_ERRORS = 4


class ReplyProblem(ValueError):
    """The reply cannot be turned into what the stage asked for; `str(exc)` is the precise reason."""


def shown(value: Any, limit: int = 60) -> str:
    text = repr(value)
    kind = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)
    return f"{kind} {text if len(text) <= limit else text[:limit - 3] + '...'}"


def _loc(parts: tuple[Any, ...]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "<root>"


def describe_validation(exc: ValidationError) -> str:
    """'field `x`: <what was expected> (found <what was there>)', for the first few errors."""
    errors = exc.errors()
    parts = []
    for e in errors[:MAX_ERRORS]:
        where = _loc(tuple(e.get("loc", ())))
        kind = e.get("type")
        if kind == "missing":
            parts.append(f"required field `{where}` is missing")
        elif kind == "extra_forbidden":
            parts.append(f"field `{where}` is not in the schema")
        elif where == "<root>":
            parts.append(f"the JSON value must be an object with the schema's fields (found {shown(e.get('input'))})")
        else:
            parts.append(f"field `{where}`: {e['msg']} (found {shown(e.get('input'))})")
    more = f"; and {len(errors) - MAX_ERRORS} more problem(s)" if len(errors) > MAX_ERRORS else ""
    return "; ".join(parts) + more


def _list_field(model: type[BaseModel]) -> str | None:
    """The name of the model's only field when that field is a list (a batch answer: `{"judgements": [...]}`)."""
    if len(model.model_fields) != 1:
        return None
    (name, field), = model.model_fields.items()
    return name if get_origin(field.annotation) is list or field.annotation is list else None


def _readings(value: Any, model: type[BaseModel]) -> list[Any]:
    """The value itself, then its single unambiguous unwrapping (or, for a batch answer sent as a bare
    array of its items, the wrapping), if any."""
    out = [value]
    if isinstance(value, list) and len(value) == 1:
        out.append(value[0])
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value) and (name := _list_field(model)):
        out.append({name: value})
    if isinstance(value, dict) and len(value) == 1:
        (key, inner), = value.items()
        if key not in model.model_fields and isinstance(inner, dict):
            out.append(inner)
    return out


def _validated(value: Any, model: type[O]) -> tuple[O | None, ValidationError | None]:
    first_error: ValidationError | None = None
    for reading in _readings(value, model):
        try:
            return model.model_validate(reading), None
        except ValidationError as exc:
            first_error = first_error or exc
    return None, first_error


def _key(out: BaseModel) -> str:
    return out.model_dump_json()


def _pick(found: list[tuple[Candidate, BaseModel]]) -> BaseModel:
    distinct: dict[str, tuple[Candidate, BaseModel]] = {}
    for cand, out in found:
        distinct.setdefault(_key(out), (cand, out))
    if len(distinct) > 1:
        names = " and ".join(c.where for c, _ in list(distinct.values())[:3])
        raise ReplyProblem(f"the reply holds {len(distinct)} different JSON objects that each fit the schema "
                           f"({names}); it must hold exactly one, the answer, and no example objects")
    return next(iter(distinct.values()))[1]


def _opening(text: str) -> str:
    line = " ".join(text.split())
    return line[:80] + ("..." if len(line) > 80 else "")


def _valid(cands: list[Candidate], model: type[O], complaints: list[str]) -> list[tuple[Candidate, BaseModel]]:
    """The candidates that read and validate; why the others do not goes to `complaints`."""
    valid: list[tuple[Candidate, BaseModel]] = []
    for cand in cands:
        try:
            value = load_value(cand.text)
        except NotJSON as exc:
            if cand.text.lstrip().startswith(("{", "[")) or cand.fenced:
                complaints.append(f"{cand.where} is not valid JSON: {exc}")
            continue
        out, error = _validated(value, model)
        if out is not None:
            valid.append((cand, out))
        elif error is not None:
            complaints.append(f"{cand.where} does not fit the schema: {describe_validation(error)}")
    return valid


def parse_answer(split: SplitReply, model: type[O]) -> O:
    """The validated output model from a reply already split by `split_reasoning`."""
    text, in_reasoning = split.answer, False
    if not text.strip():
        if split.tail is None:
            raise ReplyProblem("the reply has no answer: its content is empty" +
                               (" and it holds only reasoning" if split.reasoning else ""))
        text, in_reasoning = split.tail, True
    elif text[:1] == "{":  # the clean form: the whole answer is the object (one reading, no scan needed)
        try:
            return model.model_validate(json.loads(text, strict=False))
        except (ValueError, ValidationError):
            pass
    complaints: list[str] = []
    fenced = fenced_candidates(text)
    valid_fenced = _valid(fenced, model, complaints)
    if valid_fenced and not in_reasoning:
        return _pick(valid_fenced)  # type: ignore[return-value]
    valid_loose = _valid(loose_candidates(text, {c.text for c in fenced}), model, complaints)
    if in_reasoning and (valid_fenced or valid_loose):
        # Reasoning that never closed: drafts come first, the answer last (what follows the reasoning).
        return max(valid_fenced + valid_loose, key=lambda found: found[0].end)[1]  # type: ignore[return-value]
    if valid_loose:
        return _pick(valid_loose)  # type: ignore[return-value]
    for body in ([] if in_reasoning else [text, *(c.text for c in fenced)]):  # JSON Lines, bare or fenced
        batch = _json_lines(body, model)
        if batch is not None:
            return batch
    if complaints and not in_reasoning:  # braces inside reasoning are not attempts at the answer
        raise ReplyProblem("; ".join(complaints[:2]) + (f" (+{len(complaints) - 2} more)" if len(complaints) > 2 else ""))
    if in_reasoning:
        raise ReplyProblem("the reply opened its reasoning (<think>) and never closed it, and no JSON object "
                           "follows the reasoning; close it with </think>, then give the JSON object")
    line = unclosed_object_line(text)
    if line is not None:
        raise ReplyProblem(f"the JSON object that starts at line {line} of the reply never closes (a '}}' is "
                           "missing: the reply is incomplete)")
    raise ReplyProblem(f"no JSON object found in the reply (it reads: {_opening(text)!r})")


def _json_lines(text: str, model: type[O]) -> O | None:
    """A batch answer written as JSON Lines (one item object per line, no wrapper), when the model is
    one list of items and every non-blank line is such an object; else None."""
    name = _list_field(model)
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if name is None or len(lines) < 2 or not all(line.startswith("{") and line.endswith("}") for line in lines):
        return None
    try:
        items = [json.loads(line) for line in lines]
        return model.model_validate({name: items})
    except (ValueError, ValidationError):
        return None

