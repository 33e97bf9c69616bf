"""synthesize_env step logic: feedback retries, per-method salvage, recorded failures.

The LLM boundary is a scripted gateway (replies queued per prompt id), so each test states exactly
what the model said; the end-to-end test over the real mock server lives in tests/synth/test_e2e.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

from envscaler_core.config import Settings
from envscaler_core.models.topic import EnvTopic
from envscaler_core.synth import static_problems, synthesize_env

SKELETON = ("from typing import Dict\n\n\nclass Shop:\n    def __init__(self, init_config: dict | None = None):\n"
            "        self.stock: Dict[str, int] = dict((init_config or {}).get('stock', {}))\n")
GOOD_GET = ('def get_stock(self, item: str) -> dict:\n    """Stock of an item.\n\n    Args:\n        item: Item id.\n'
            '    """\n    return {"success": True, "data": self.stock.get(item, 0)}\n')
UNDOCUMENTED_SET = "def set_stock(self, item: str, n: int) -> dict:\n    self.stock[item] = n\n    return {'success': True}\n"


class ScriptedGateway:
    """Answers each prompt id from a queue (the last answer repeats) and records the inputs."""

    def __init__(self, script: dict[str, list[dict[str, Any]]]) -> None:
        self.script = script
        self.inputs: list[tuple[str, Any]] = []

    async def structured(self, prompt: Any, inp: Any, *, stage: str, **kw: Any) -> Any:
        self.inputs.append((prompt.id, inp))
        key = prompt.id + (f":{inp.target.name}" if prompt.id == "synth.method" else "")
        queue = self.script[key]
        reply = queue.pop(0) if len(queue) > 1 else queue[0]
        return prompt.output_model.model_validate(reply)


def script(**overrides: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    base = {
        "synth.state_space": [{"analysis": "", "entities": [{"name": "Item", "attributes": ["item_id", "count"]}],
                               "rules": ["count >= 0"]}],
        "synth.class_skeleton": [{"analysis": "", "class_name": "Shop", "code": SKELETON}],
        "synth.operations": [{"analysis": "", "operations": [
            {"name": "get_stock", "description": "Read stock.", "kind": "query"},
            {"name": "set_stock", "description": "Set stock.", "kind": "state_change"}]}],
        "synth.method:get_stock": [{"analysis": "", "code": GOOD_GET}],
        "synth.method:set_stock": [{"analysis": "", "code": UNDOCUMENTED_SET}],
    }
    return {**base, **overrides}


TOPIC = EnvTopic(summary="Shop", introduction="A shop.", usefulness=8, modelability=8, example_task="Set stock",
                 source_task_fp="fp")


def run(gateway: ScriptedGateway) -> Any:
    return asyncio.run(synthesize_env(TOPIC, gateway, Settings()))


def test_a_rejected_skeleton_is_retried_with_the_problem_as_feedback() -> None:
    with_base = {"analysis": "", "class_name": "Shop", "code": SKELETON.replace("class Shop:", "class Shop(object):")}
    gateway = ScriptedGateway(script(**{"synth.class_skeleton": [with_base, script()["synth.class_skeleton"][0]]}))
    result = run(gateway)
    skeleton_inputs = [inp for pid, inp in gateway.inputs if pid == "synth.class_skeleton"]
    assert skeleton_inputs[0].feedback is None and "class-has-base" in skeleton_inputs[1].feedback
    assert next(s for s in result.steps if s.step == "class_skeleton").attempts == 2


def test_a_method_that_keeps_failing_is_dropped_and_recorded_while_the_env_is_kept() -> None:
    result = run(ScriptedGateway(script()))
    failed = next(s for s in result.steps if s.target == "set_stock")
    assert (failed.attempts, "undocumented-method" in failed.error) == (3, True)
    assert result.dropped_operations == ["set_stock"]
    candidate = result.candidate
    assert candidate.status == "generated" and [t.function.name for t in candidate.tools] == ["get_stock"]
    assert candidate.tool_kinds == {"get_stock": "query"}
    assert "set_stock" in candidate.failure_reason
    assert static_problems(candidate.class_code, "Shop") == []


def test_a_method_fixed_after_feedback_is_assembled() -> None:
    fixed = UNDOCUMENTED_SET.replace(":\n", ':\n    """Set stock.\n\n    Args:\n        item: Id.\n        n: Count.\n    """\n', 1)
    gateway = ScriptedGateway(script(**{"synth.method:set_stock": [{"analysis": "", "code": UNDOCUMENTED_SET},
                                                                  {"analysis": "", "code": fixed}]}))
    result = run(gateway)
    assert result.dropped_operations == [] and result.candidate.failure_reason is None
    assert result.candidate.tool_kinds == {"get_stock": "query", "set_stock": "state_change"}
    assert result.spec is not None and result.candidate.spec_fp == result.spec.fingerprint


def test_when_no_method_survives_the_skeleton_is_recorded_as_static_failed() -> None:
    result = run(ScriptedGateway(script(**{"synth.method:get_stock": [{"analysis": "", "code": "def get_stock(self):"}]})))
    assert result.candidate.status == "static_failed"
    assert "no-tools" in result.candidate.failure_reason


def test_duplicate_operation_names_exhaust_the_step_and_record_the_failure() -> None:
    dup = {"analysis": "", "operations": [{"name": "a", "description": "x", "kind": "query"}] * 2}
    result = run(ScriptedGateway(script(**{"synth.operations": [dup]})))
    assert result.candidate is None and result.spec is None
    assert "duplicate operation names: a" in result.failure
    assert result.steps[-1].step == "operations" and result.steps[-1].attempts == 3


def test_a_skeleton_whose_init_needs_extra_arguments_is_rejected_with_feedback() -> None:
    bad = {"analysis": "", "class_name": "Shop",
           "code": SKELETON.replace("init_config: dict | None = None", "init_config: dict, owner: str")}
    gateway = ScriptedGateway(script(**{"synth.class_skeleton": [bad, script()["synth.class_skeleton"][0]]}))
    result = run(gateway)
    feedback = [inp.feedback for pid, inp in gateway.inputs if pid == "synth.class_skeleton"][1]
    assert "bad-init-signature" in feedback and result.candidate.status == "generated"
