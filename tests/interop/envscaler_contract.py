"""A consumer of EnvScaler's files written to its documented runtime contract, not to our code.

Source: ../shared/reference/envscaler_scen_generator_and_interaction.md §2 and §3.2. It reads the
files with plain `json.load` (as `interact_with_env` does), builds the env exactly as §3.2 step 3
describes, runs tool calls the way `step` does (an exception ends the episode with reward 0), and
scores with §2.1/§2.3: `exec` each check source with `initial_state` as a global, call
`check_func(final_state)`, count only real bools, reward = round(passed / len(checks), 4).

Test-only: it execs the exported code in this process, which is fine for the factory's own mock
library envs and is precisely what EnvScaler itself does.
"""

from __future__ import annotations

import copy
import json
import types
from pathlib import Path
from typing import Any


class EpisodeEnded(Exception):
    """A tool call raised: EnvScaler's `step` terminates the episode with reward 0."""


class ContractEnv:
    def __init__(self, env_items_path: Path, task_items_path: Path) -> None:
        self.env_items: dict[str, Any] = json.loads(Path(env_items_path).read_text(encoding="utf-8"))
        self.task_items: list[dict[str, Any]] = json.loads(Path(task_items_path).read_text(encoding="utf-8"))

    def reset(self, task_index: int) -> None:
        task = self.task_items[task_index]
        self.checklist = task.get("checklist_with_func", [])
        env_item = self.env_items[task["env_id"]]
        module = types.ModuleType("dynamic_env")
        exec(env_item["env_class_code"], module.__dict__)
        env_class = getattr(module, task["env_class_name"])
        config = copy.deepcopy(task["init_config"])
        try:
            self.instance = env_class(config) if config and isinstance(config, dict) else env_class({})
        except TypeError:
            self.instance = env_class()
        if config:
            for key, value in config.items():
                setattr(self.instance, key, value)
        self.initial_state = self.state()
        self.tools = env_item["tools"]
        self.introduction = env_item["environment_introduction"] + "".join(
            "\n- " + rule for rule in env_item.get("constraints_rules", []))

    def state(self) -> dict[str, Any]:
        return copy.deepcopy({k: v for k, v in vars(self.instance).items() if not (k.startswith("__") and k.endswith("__"))})

    def step(self, name: str, arguments: dict[str, Any]) -> str:
        if not hasattr(self.instance, name) or not isinstance(arguments, dict):
            return "Error: Invalid action"
        try:
            return f"{getattr(self.instance, name)(**arguments)}"
        except Exception as exc:  # noqa: BLE001 - the contract: any exception ends the episode
            raise EpisodeEnded(repr(exc)) from exc

    def reward(self) -> float:
        final_state = self.state()
        results = []
        for item in self.checklist:
            scope = {"__builtins__": __builtins__, "initial_state": copy.deepcopy(self.initial_state)}
            try:
                exec(item["check_func"], scope)
                result = scope["check_func"](final_state) if "check_func" in scope else None
            except Exception:  # noqa: BLE001
                result = None
            results.append(result if isinstance(result, bool) else None)
        return round(sum(r for r in results if r is not None) / len(results), 4)
