"""Spec: the proposer's prompt is byte-identical across processes, whatever the hash seed, so a
resumed run finds its earlier validation calls in the response cache."""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = """
from envscaler_core.models import EnvCandidate
from envscaler_core.prompts.validate import PROPOSE_CALL, ProposeInput
from envscaler_core.synth import extract_tools
from envscaler_core.validation.llm_pass import LLMPass as _LLMPass, _Chain
from tests.scenarios.helpers import LIBRARY_CODE, STATE
cand = EnvCandidate(topic_fp="t", class_name="Library", class_code=LIBRARY_CODE, tools=extract_tools(LIBRARY_CODE, "Library"))
p = _LLMPass(cand, None, None, "intro", [], 0)
c = _Chain(p, STATE, index=0, of=2, rounds=15)
inp = ProposeInput(introduction="intro", tool_schemas=p.tool_schemas, initial_state=STATE, focus=c.focus, stats=c.stats,
                   round=1, rounds=15)
print(PROPOSE_CALL.render(inp)[1]["content"])
"""


def render_with_hash_seed(seed: str) -> str:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    return subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True,
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__)))).stdout


def test_proposer_prompt_does_not_depend_on_the_hash_seed() -> None:
    renders = {render_with_hash_seed(seed) for seed in ("1", "2", "3", "4")}
    assert len(renders) == 1
