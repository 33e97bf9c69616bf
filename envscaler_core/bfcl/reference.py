"""The package's own in-process executor and checker: the REFERENCE the sandbox is measured against.

This runs BFCL's API classes in *this* process with `eval` of call strings, exactly as BFCL does.
Use it only with trusted call strings (the dataset's ground truth) in fidelity tests and benchmarks;
`envscaler eval` never uses it, and model output never reaches it.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from envscaler_core.bfcl.data import BFCLTask
from envscaler_core.bfcl.executor import Verdict

_serial = itertools.count()


def _utils() -> Any:
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    return multi_turn_utils


class InProcessTask:
    """One task's instances in this process, through `execute_multi_turn_func_call`."""

    def __init__(self, task: BFCLTask) -> None:
        self.task = task
        # a fresh model name per object: the package caches instances in its module globals by name
        self.model_name = f"reference{next(_serial)}"
        self.instances = self._run([])[1]

    def _run(self, calls: list[str]) -> tuple[list[str], dict[str, Any]]:
        return _utils().execute_multi_turn_func_call(
            calls, self.task.initial_config, self.task.involved_classes, self.model_name, self.task.id,
            long_context=self.task.long_context, is_evaL_run=False)

    def execute(self, call: str) -> str:
        results, self.instances = self._run([call])
        return results[0]

    def execute_step(self, calls: list[str]) -> list[str]:
        """A step's calls in one run of the executor, as BFCL's loop passes them."""
        results, self.instances = self._run(list(calls))
        return results

    def __enter__(self) -> "InProcessTask":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        names = vars(_utils())
        for class_name in self.task.involved_classes:
            names.pop(re.sub(r"[-./:]", "_", f"{self.model_name}_{self.task.id}_{class_name}_instance"), None)


def score_in_process(task: BFCLTask, decoded: list[list[list[str]]]) -> Verdict:
    """`multi_turn_checker` in this process (its instances are left in the package's globals, as in BFCL;
    a fresh model name keeps runs apart)."""
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    entry = {"id": task.id, "initial_config": task.initial_config, "involved_classes": task.involved_classes}
    name = f"reference{next(_serial)}"
    verdict = multi_turn_checker(decoded, task.ground_truth, entry, task.id.rsplit("_", 1)[0], name)
    names = vars(_utils())
    for key in [k for k in list(names) if k.startswith(f"{name}_")]:
        names.pop(key, None)
    return Verdict(valid=bool(verdict["valid"]), error_type=verdict.get("error_type"),
                   error_message=verdict.get("error_message"))
