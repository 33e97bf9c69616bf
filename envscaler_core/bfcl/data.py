"""BFCL multi-turn tasks: the four v4 subsets of the installed package, as validated models.

A task is what BFCL's FC inference loop (`BaseHandler.inference_multi_turn_FC`) consumes: the user
turns, the initial configuration of each involved API class, the ground-truth call strings per turn,
and for miss_func the functions held out until a given turn. Turn semantics follow that loop:

* the offered functions are the involved classes' docs in class order, minus every held-out one;
* at a held-out turn (its question is empty) the held-out docs are appended to the list and the user
  message is the package's fixed "I have updated some more functions ..." prompt;
* `excluded_function` is dataset metadata that the package's own pipeline does not use; it is kept
  here (`excluded_functions`) and, like BFCL, not applied.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator

from envscaler_core.bfcl.package import CLASS_MODULES, data_dir
from envscaler_core.models.base import Model
from envscaler_core.text_files import jsonl_objects

Subset = Literal["base", "miss_func", "miss_param", "long_context"]
SUBSETS: tuple[Subset, ...] = ("base", "miss_func", "miss_param", "long_context")
SUBSET_SIZE = 200
"""Tasks in each v4 multi-turn subset of bfcl-eval 2026.3.23 (tests/bfcl/test_data_and_schemas.py)."""
HELD_OUT_PROMPT = "I have updated some more functions you can choose from. What about now?"
"""`DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC` of the package."""
MAX_STEPS_PER_TURN = 20
"""`MAXIMUM_STEP_LIMIT`: a turn with more tool-calling steps than this force-quits the task."""
DEFAULT_TEMPERATURE = 0.001
"""The temperature BFCL's generation sends by default (`bfcl_eval/__main__.py`, `--temperature`)."""


class BFCLDataError(ValueError):
    """A data file is missing or a row does not have the shape BFCL's loop needs (names file and row)."""


class BFCLTask(Model):
    id: str = Field(pattern=r"^multi_turn_[a-z_]+_\d+$")
    subset: Subset
    turns: list[list[dict[str, str]]] = Field(min_length=1, description="User messages per turn ('question').")
    initial_config: dict[str, Any]
    involved_classes: list[str] = Field(min_length=1)
    path: list[str] = Field(default_factory=list)
    held_out: dict[int, list[str]] = Field(default_factory=dict, description="Turn -> functions added back then.")
    excluded_functions: list[str] = Field(default_factory=list, description="Metadata; not applied (as in BFCL).")
    ground_truth: list[list[str]]

    @field_validator("involved_classes")
    @classmethod
    def _known_classes(cls, names: list[str]) -> list[str]:
        unknown = [n for n in names if n not in CLASS_MODULES]
        if unknown:
            raise ValueError(f"unknown API class(es) {unknown}; known: {sorted(CLASS_MODULES)}")
        return names

    @property
    def long_context(self) -> bool:
        """BFCL loads the classes with `long_context=True` when the category names it."""
        return "long_context" in self.id

    def user_messages(self, turn: int) -> list[dict[str, str]]:
        if turn in self.held_out:
            return [{"role": "user", "content": HELD_OUT_PROMPT}]
        return [dict(m) for m in self.turns[turn]]

    def function_names(self, turn: int) -> list[str]:
        """Names offered at `turn`, in BFCL's order."""
        held = {name for names in self.held_out.values() for name in names}
        names = [name for name in _doc_names(tuple(self.involved_classes), str(data_dir())) if name not in held]
        for released in sorted(t for t in self.held_out if t <= turn):
            names.extend(self.held_out[released])
        return names

    def sandbox_spec(self, model_name: str | None = None) -> dict[str, Any]:
        """What the in-jail `BFCLEnvironment`/`BFCLScorer` need (under a private config key). `model_name`
        is the model's name as BFCL's handler knows it: part of the executor's instance names, which
        its rewrite of method names writes into string arguments (`jail_env.instance_model_name`);
        without one (the gym, MCP), a fixed name."""
        spec = {"id": self.id, "initial_config": self.initial_config,
                "involved_classes": self.involved_classes, "long_context": self.long_context}
        if model_name is not None:
            spec["model_name"] = model_name
        return {"_bfcl": spec}


@lru_cache(maxsize=None)
def _class_docs(class_name: str, root: str) -> tuple[str, ...]:
    path = Path(root) / "multi_turn_func_doc" / f"{CLASS_MODULES[class_name]}.json"
    return tuple(json.dumps(row) for row in _read_jsonl(path))


@lru_cache(maxsize=None)
def _doc_names(classes: tuple[str, ...], root: str) -> tuple[str, ...]:
    return tuple(json.loads(text)["name"] for name in classes for text in _class_docs(name, root))


def function_docs_for(classes: list[str], root: Path | None = None) -> list[dict[str, Any]]:
    """The BFCL function docs (name, description, parameters) of `classes`, in that order."""
    base = str(root or data_dir())
    return [json.loads(text) for name in classes for text in _class_docs(name, base)]


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise BFCLDataError(f"BFCL data file not found: {path}")
    return [row for _, row in jsonl_objects(path, BFCLDataError)]


def _task(row: dict[str, Any], answer: dict[str, Any] | None, subset: Subset, where: str) -> BFCLTask:
    if answer is None:
        raise BFCLDataError(f"{where}: task {row.get('id')!r} has no possible answer")
    try:
        held = {int(turn): list(names) for turn, names in (row.get("missed_function") or {}).items()}
        task = BFCLTask(
            id=row.get("id"), subset=subset, turns=row.get("question"), initial_config=row.get("initial_config") or {},
            involved_classes=row.get("involved_classes"), path=row.get("path") or [], held_out=held,
            excluded_functions=row.get("excluded_function") or [], ground_truth=answer.get("ground_truth"),
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise BFCLDataError(f"{where}: task {row.get('id')!r} is malformed: {field}: {first['msg']}") from None
    except (ValueError, TypeError, AttributeError) as exc:
        raise BFCLDataError(f"{where}: task {row.get('id')!r} is malformed: {exc}") from None
    if len(task.ground_truth) != len(task.turns):
        raise BFCLDataError(f"{where}: task {task.id} has {len(task.turns)} turns but {len(task.ground_truth)} "
                            "ground-truth turns")
    for turn in task.held_out:
        if not 0 <= turn < len(task.turns) or task.turns[turn]:
            raise BFCLDataError(f"{where}: task {task.id} holds functions out until turn {turn}, which is not an "
                                "empty turn of the task")
    return task


def load_file(questions: Path, answers: Path, subset: Subset) -> list[BFCLTask]:
    """Tasks from a question file and its possible-answer file (JSON lines, BFCL v3 or v4 format)."""
    truth = {row.get("id"): row for row in _read_jsonl(answers)}
    return [_task(row, truth.get(row.get("id")), subset, f"{questions}:{index + 1}")
            for index, row in enumerate(_read_jsonl(questions))]


@lru_cache(maxsize=None)
def _subset(subset: Subset, root: str) -> tuple[BFCLTask, ...]:
    name = f"BFCL_v4_multi_turn_{subset}.json"
    return tuple(load_file(Path(root) / name, Path(root) / "possible_answer" / name, subset))


def load_tasks(subset: Subset, limit: int | None = None, root: Path | None = None) -> list[BFCLTask]:
    """The first `limit` tasks of a subset, in file order."""
    if subset not in SUBSETS:
        raise BFCLDataError(f"unknown BFCL multi-turn subset {subset!r}; choose from {', '.join(SUBSETS)}")
    tasks = list(_subset(subset, str(root or data_dir())))
    return tasks if limit is None else tasks[:limit]


def find_task(task_id: str) -> BFCLTask:
    """A task by its id (`multi_turn_base_0`), from whichever subset it names."""
    for subset in SUBSETS:
        if task_id.startswith(f"multi_turn_{subset}_"):
            for task in load_tasks(subset):
                if task.id == task_id:
                    return task
    raise BFCLDataError(f"no BFCL multi-turn task {task_id!r} (ids look like multi_turn_base_0)")
