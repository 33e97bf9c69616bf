"""Spec: over the real mock LLM, the demo library domains produce verified scenarios."""

from __future__ import annotations

import asyncio

from envscaler_core.config import Settings
from envscaler_core.scenarios import generate_scenarios, verify_scenario
from tests.scenarios.helpers import domain_env, library_domains


def test_library_domain_yields_verified_scenarios(runtime, gateway):
    domain = library_domains()[0]
    env = domain_env(domain)
    settings = Settings.model_validate({"scen": {"per_env": 2}})
    scenarios = asyncio.run(generate_scenarios(env, runtime, gateway, settings))
    assert len(scenarios) == 2
    assert all(s.status == "verified" for s in scenarios), [s.rejection_reason for s in scenarios]
    for s in scenarios:  # verified means re-verifiable: the stored record alone passes again
        assert verify_scenario(s, env, runtime, settings.scen.check_timeout_s).ok
