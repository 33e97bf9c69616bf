"""The programmatic pass's probes: fresh units per probe (the path before serial units) against
`pool.episode_batch` (sandbox/episode_batch.py), interleaved in one run, same pool.

`.venv/bin/python -m benchmarks bench_probes` (BENCH_PROBES_ROUNDS=N repeats, default 2). Per mode and
scenario: wall time per probe and the pool's OWN CPU per probe (the host process plus every zygote with
the units it reaped), which, unlike /proc/stat, other users of a shared machine do not pollute.
Scenarios: every library domain and 2 configs validated one after another with PROBE_THREADS 1 and 4,
and all 14 at once ("wave", as a pipeline run starts its candidates). Rounds must be equal in both modes.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import envscaler_core.validation.programmatic as programmatic
from envscaler_core.config import SandboxSettings, Settings
from envscaler_core.models import EnvCandidate
from envscaler_core.synth import extract_tools
from envscaler_core.validation import validate_candidate
from mock_llm import library
from sandbox import SandboxPool

TICK = os.sysconf("SC_CLK_TCK")
SETTINGS = Settings.model_validate({"validate": {"mode": "programmatic", "rounds": 30}})


class FreshEpisodes:
    """The pool as a runtime without `episode_batch`: one unit per probe, as before serial units."""

    def __init__(self, pool: SandboxPool) -> None:
        self.pool = pool

    def open_episode(self, *args: Any, **kwargs: Any) -> Any:
        return self.pool.open_episode(*args, **kwargs)

    def run_checks(self, *args: Any, **kwargs: Any) -> Any:
        return self.pool.run_checks(*args, **kwargs)


def own_cpu(pool: SandboxPool) -> float:
    """Seconds of CPU of this process and of every zygote with its reaped units, once finished units are
    killed and reaped (a zygote reaps on its next control message)."""
    pool.warm_up()
    time.sleep(0.3)
    for zygote in pool.zygotes:
        zygote.ping()
    total = time.process_time()
    for pid in pool.zygote_host_pids():
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        total += sum(int(x) for x in fields[11:15]) / TICK  # utime stime cutime cstime
    return total


def main() -> None:
    jobs = [(EnvCandidate(topic_fp="b", class_name=d.class_name, class_code=d.class_source,
                          tools=extract_tools(d.class_source, d.class_name), tool_kinds=dict(d.tool_kinds)), s)
            for d in library.domains() for s in d.initial_states[:2]]
    rounds = int(os.environ.get("BENCH_PROBES_ROUNDS", "2"))
    counted = [0]
    opened = programmatic.open_episode

    def counting(*args: Any, **kwargs: Any) -> Any:
        counted[0] += 1
        return opened(*args, **kwargs)

    async def wave(runtime: Any) -> list[Any]:
        return await asyncio.gather(*[validate_candidate(c, runtime, None, SETTINGS, test_state=s) for c, s in jobs])

    def one_by_one(runtime: Any) -> list[Any]:
        return [asyncio.run(validate_candidate(c, runtime, None, SETTINGS, test_state=s)) for c, s in jobs]

    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    seen: dict[str, list[Any]] = {}
    with SandboxPool(SandboxSettings()) as pool:
        pool.warm_up()
        one_by_one(pool)
        programmatic.open_episode = counting
        try:
            for _ in range(rounds):
                for scenario, threads in (("one by one, 1 probe thread", 1), ("one by one, 4 probe threads", 4),
                                          ("all 14 at once, 4 probe threads", 4)):
                    programmatic.PROBE_THREADS = threads
                    for mode, runtime in (("fresh units", FreshEpisodes(pool)), ("episode_batch", pool)):
                        counted[0] = 0
                        cpu0, t0 = own_cpu(pool), time.perf_counter()
                        outs = asyncio.run(wave(runtime)) if "once" in scenario else one_by_one(runtime)
                        wall = time.perf_counter() - t0
                        cpu = own_cpu(pool) - cpu0
                        results.setdefault((scenario, mode), []).append((wall / counted[0], cpu / counted[0]))
                        seen.setdefault(mode, []).append([[r.model_dump(exclude={"elapsed_ms"}) for r in o.rounds]
                                                          for o in outs])
        finally:
            programmatic.open_episode = opened
            programmatic.PROBE_THREADS = 4
    print(f"{len(jobs)} candidates, load average {os.getloadavg()[0]:.1f}; per probe: wall ms / own CPU ms")
    for (scenario, mode), runs in results.items():
        text = "  ".join(f"{w * 1000:.2f} / {c * 1000:.2f}" for w, c in runs)
        print(f"  {scenario:34s} {mode:14s} {text}")
    print("same rounds in both modes:", seen["fresh units"] == seen["episode_batch"])


if __name__ == "__main__":
    main()
