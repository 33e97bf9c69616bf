"""Spec: the programmatic pass opens its probes through `envscaler_core.runtime.episode_batch`; on the real
sandbox that means serial units (sandbox/episode_batch.py), and every round — tool, arguments, check,
verdict, reason, observation, error, states and diff — is what fresh episodes give, for every library
domain and two of its configs. A runtime without `episode_batch` is used as it is."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import envscaler_core.validation.programmatic as programmatic
from envscaler_core.config import Settings
from envscaler_core.models import EnvCandidate
from envscaler_core.synth import extract_tools
from envscaler_core.validation import validate_candidate
from mock_llm import library

SETTINGS = Settings.model_validate({"validate": {"mode": "programmatic", "rounds": 30}})
DOMAINS = library.domains()


class FreshEpisodes:
    """The pool seen as a runtime without `episode_batch`: every probe in a unit of its own (the old path)."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool

    def open_episode(self, *args: Any, **kwargs: Any) -> Any:
        return self.pool.open_episode(*args, **kwargs)

    def run_checks(self, *args: Any, **kwargs: Any) -> Any:
        return self.pool.run_checks(*args, **kwargs)


class CountingPool:
    """The pool, counting the serial units its probe batches made (so the spec cannot pass on a fallback)."""

    def __init__(self, pool: Any) -> None:
        self.pool, self.units, self.batches = pool, 0, 0

    def open_episode(self, *args: Any, **kwargs: Any) -> Any:
        return self.pool.open_episode(*args, **kwargs)

    def run_checks(self, *args: Any, **kwargs: Any) -> Any:
        return self.pool.run_checks(*args, **kwargs)

    def episode_batch(self, *args: Any) -> Any:
        batch = self.pool.episode_batch(*args)
        close = batch.close

        def counted_close() -> None:
            self.units += batch.units_made
            self.batches += 1
            close()

        batch.close = counted_close
        return batch


def rounds(runtime: Any, domain: Any, state: dict[str, Any]) -> list[dict[str, Any]]:
    candidate = EnvCandidate(topic_fp="t", class_name=domain.class_name, class_code=domain.class_source,
                             tools=extract_tools(domain.class_source, domain.class_name),
                             tool_kinds=dict(domain.tool_kinds))
    out = asyncio.run(validate_candidate(candidate, runtime, None, SETTINGS, test_state=state))
    return [r.model_dump(exclude={"elapsed_ms"}) for r in out.rounds]


@pytest.mark.parametrize("domain", DOMAINS, ids=[d.class_name for d in DOMAINS])
def test_rounds_equal_fresh_episodes(runtime: Any, domain: Any) -> None:
    for state in domain.initial_states[:2]:
        counting = CountingPool(runtime)
        batched = rounds(counting, domain, state)
        assert counting.batches >= 1 and counting.units >= 1  # the probes really ran in serial units
        assert batched == rounds(FreshEpisodes(runtime), domain, state)


@pytest.mark.parametrize("threads", [1, 4])
def test_rounds_do_not_depend_on_probe_threads(runtime: Any, threads: int, monkeypatch: pytest.MonkeyPatch) -> None:
    domain = DOMAINS[0]
    expected = rounds(FreshEpisodes(runtime), domain, domain.initial_states[0])
    monkeypatch.setattr(programmatic, "PROBE_THREADS", threads)
    assert rounds(runtime, domain, domain.initial_states[0]) == expected
