"""Spec (red team sandbox-4 F7): a candidate whose process forges its own replies to the sandbox is
rejected for that, whatever the forged replies said: no round judged on them is believed."""

from __future__ import annotations

import asyncio

from envscaler_core.config import Settings
from envscaler_core.models import EnvCandidate
from envscaler_core.synth import extract_tools
from envscaler_core.validation import validate_candidate
from tests.scenarios.helpers import FORGING_CODE, STATE

PROGRAMMATIC = Settings.model_validate({"validate": {"mode": "programmatic"}})


def test_a_candidate_that_forges_its_replies_is_rejected_for_it(runtime) -> None:  # type: ignore[no-untyped-def]
    cand = EnvCandidate(topic_fp="t", class_name="Library", class_code=FORGING_CODE,
                        tools=extract_tools(FORGING_CODE, "Library"))
    out = asyncio.run(validate_candidate(cand, runtime, None, PROGRAMMATIC, test_state=STATE))
    assert not out.report.accepted and out.env is None
    assert "forged replies" in out.report.critical[0] and "did not ask for" in out.report.critical[0], out.report.critical
