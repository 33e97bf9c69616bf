"""Spec: every reader of an env's rewards opens its episodes under the env's own episode rules
(`runtime.open_env_episode`). Before, verification played an imported env's reference solution, and
serve-mcp served it, under the factory's rules while the gym and rollouts paid it under EnvScaler's: a plan
whose tool returns a result JSON cannot carry (EnvScaler observes its text and goes on) was paid 1.0 by the
gym yet failed verification, and an MCP client was refused the call EnvScaler runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from envscaler_core.gym import ScenarioEnv
from envscaler_core.models import ToolCall
from envscaler_core.scenarios.verify import verify_scenario
from tests.rollout import library_envscaler as lib


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    settings, env, scenario = lib.import_library(tmp_path_factory.mktemp("library"), sandbox_pool)
    opaque = scenario.model_copy(update={"reference_solution": [
        ToolCall(tool=lib.OPAQUE["name"], args=lib.OPAQUE["arguments"])]})
    return {"settings": settings, "env": env, "scenario": opaque, "pool": sandbox_pool}


def test_verification_accepts_the_plan_the_gym_pays(imported: dict[str, Any]) -> None:
    env, scenario, pool = imported["env"], imported["scenario"], imported["pool"]
    report = verify_scenario(scenario, env, pool, check_timeout_s=10.0)
    assert report.ok and report.failure is None, report.reason
    assert report.solution[0].ok and report.final_state["books"]["b1"]["status"] == "lent"
    gym = ScenarioEnv(env, [scenario], pool)
    gym.reset(options={"scenario_index": 0})
    gym.step({"tool": "lend_book", "args": lib.OPAQUE["arguments"]})
    _, reward, terminated, _, _ = gym.step({"tool": "chat_with_user", "args": {"content": "Task Completed"}})
    assert terminated and reward == 1.0


def test_the_same_plan_under_factory_rules_still_fails_verification(imported: dict[str, Any]) -> None:
    env = imported["env"].model_copy(update={"episode_rules": "factory"})
    report = verify_scenario(imported["scenario"], env, imported["pool"], check_timeout_s=10.0)
    assert not report.ok and not report.solution[0].ok
    assert "not JSON-serialisable" in (report.solution[0].error or ""), report.solution[0].error


def test_serve_mcp_observes_the_text_as_envscaler_does(imported: dict[str, Any]) -> None:
    settings, env = imported["settings"], imported["env"]
    params = StdioServerParameters(command=sys.executable, cwd=str(Path(__file__).parents[2]), args=[
        "-m", "envscaler.cli", "serve-mcp", env.env_id, "--run", "library", "--db", settings.store.url])

    async def main() -> Any:
        async with Client(params, read_timeout_seconds=60) as client:
            return await client.call_tool("lend_book", lib.OPAQUE["arguments"])

    result = anyio.run(main)
    (content,) = result.content
    assert not result.is_error, content.text
    assert "<envcode.Opaque object at " in json.loads(content.text)
