"""Spec (issue 14, critical path): within a validation chain, a round's judge runs beside the next
round's proposer, so a chain of r rounds is r + 1 calls deep, not 2 x r. The proposer's statistics count
every call made and the verdicts of every round but the last; the rounds are stored in round order
whatever order the judges answer in. Real mock LLM over HTTP with latency, real sandbox; the mock's
count of requests in flight at once is the evidence (never a wall-clock time)."""

from __future__ import annotations

import asyncio
from typing import Any

from envscaler_core.config import Settings
from envscaler_core.llm import LLMGateway
from envscaler_core.models import EnvCandidate
from envscaler_core.synth import extract_tools
from envscaler_core.validation import validate_candidate
from envscaler_core.validation.llm_pass import chain_depth
from tests.validation.outside_classes import SUBJECTS

HOTEL = next(s for s in SUBJECTS if s.name == "hotel")


def one_chain(llm_settings: Settings, runtime: Any, rounds: int) -> Any:
    cand = EnvCandidate(topic_fp="t", class_name=HOTEL.class_name, class_code=HOTEL.code,
                        tools=extract_tools(HOTEL.code, HOTEL.class_name), tool_kinds=HOTEL.kinds)
    settings = Settings.model_validate({"validate": {"mode": "llm", "rounds": rounds, "chains": 1}})
    return asyncio.run(validate_candidate(cand, runtime, LLMGateway(llm_settings.llm), settings,
                                          test_state=HOTEL.state))


def test_a_rounds_judge_and_the_next_proposal_are_in_flight_together(llm_settings: Settings, runtime: Any,
                                                                      mock_stats_reset: Any) -> None:
    mock_stats_reset.set_faults(latency_ms=250)
    out = one_chain(llm_settings, runtime, rounds=4)
    stats = mock_stats_reset.stats()
    assert stats["by_prompt"]["validate.propose_call"] == 4 and stats["by_prompt"]["validate.judge_call"] == 4
    assert stats["max_in_flight"] == 2  # one chain: never more than a judge beside a proposal
    llm_rounds = [r for r in out.rounds if r.mode == "llm"]
    assert [r.index for r in llm_rounds] == list(range(len(llm_rounds)))
    assert all(r.verdict in ("pass", "warning", "fail") for r in llm_rounds)
    assert out.report.accepted, out.report.reasons


def test_the_depth_of_a_chain_is_its_proposals_and_one_last_judge() -> None:
    assert chain_depth(30, 1) == 31
    assert chain_depth(30, 3) == 11
    assert chain_depth(31, 3) == 12  # the longest chain sets the depth
