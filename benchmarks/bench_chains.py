"""How many parallel validation chains: wall, tokens and verdicts of Stage 3 for k = 1, 2, 3, 5, 6.

Every library domain of the mock (healthy and planted-defect variants) is validated in `both` mode
with 30 LLM rounds, all candidates at once, against the mock LLM at 300 ms latency in its own process,
through the real sandbox. Per k: wall seconds, the LLM-bound ideal (the chain depth 1 + 30 / k + 1 at
300 ms, test state given so 30 / k + 1), LLM requests and prompt tokens (prefix-cached share) per
candidate, and the verdicts, which must be the same for every k (healthy accepted, defects rejected).
The default `validate.chains` is the k after which the wall stops improving by much while the cache
share holds (each chain's first calls arrive together and miss the prefix cache).

`.venv/bin/python -m benchmarks bench_chains`
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

LATENCY_MS = 300
ROUNDS = 30
CHAINS = tuple(int(k) for k in os.environ.get("BENCH_CHAINS", "1,2,3,5,6").split(","))


def _stats(base: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{base}/mock/stats", timeout=5) as r:  # noqa: S310 (loopback)
        return json.load(r)


def _reset(base: str) -> None:
    req = urllib.request.Request(f"{base}/mock/reset", data=b"{}", method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5):  # noqa: S310 (loopback)
        pass


def main() -> None:
    from envscaler.prefect_server import free_port
    from envscaler_core.config import SandboxSettings, Settings
    from envscaler_core.llm import LLMGateway
    from envscaler_core.models import EnvCandidate
    from envscaler_core.synth import extract_tools
    from envscaler_core.validation import validate_candidate
    from envscaler_core.validation.llm_pass import chain_depth
    from mock_llm import library
    from sandbox import SandboxPool

    port = free_port()
    exe = Path(sys.executable).with_name("envscaler")
    mock = subprocess.Popen([str(exe), "mock-llm", "--port", str(port), "--latency-ms", str(LATENCY_MS)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            _stats(base)
            break
        except OSError:
            time.sleep(0.1)
    domains = library.domains()
    jobs = [(d, EnvCandidate(topic_fp="b", class_name=d.class_name, class_code=d.class_source,
                             tools=extract_tools(d.class_source, d.class_name), tool_kinds=dict(d.tool_kinds)))
            for d in domains]
    print(f"{len(jobs)} candidates ({sum(d.defect is not None for d in domains)} with planted defects), {ROUNDS} rounds, "
          f"{LATENCY_MS} ms; load {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    print(f"{'k':>2} {'depth':>5} {'ideal s':>7} {'wall s':>7} {'ideal/wall':>10} {'req/cand':>8} {'prompt/cand':>11} "
          f"{'cached':>6}  verdicts")
    try:
        with SandboxPool(SandboxSettings()) as pool:
            for k in CHAINS:
                _reset(base)
                settings = Settings.model_validate({"validate": {"mode": "both", "rounds": ROUNDS, "chains": k},
                                                    "llm": {"base_url": f"{base}/v1", "api_key": "mock", "cache": False}})
                gateway = LLMGateway(settings.llm)

                async def all_candidates() -> list[Any]:
                    try:
                        return await asyncio.gather(*(validate_candidate(c, pool, gateway, settings, test_state=d.initial_states[0])
                                                      for d, c in jobs))
                    finally:
                        await gateway.aclose()

                t0 = time.perf_counter()
                outs = asyncio.run(all_candidates())
                wall = time.perf_counter() - t0
                stats = _stats(base)
                depth = chain_depth(ROUNDS, k)
                ideal = depth * LATENCY_MS / 1000
                verdicts = "".join("A" if o.report.accepted else "r" for o in outs)
                right = all(o.report.accepted == (d.defect is None) for (d, _), o in zip(jobs, outs))
                print(f"{k:>2} {depth:>5} {ideal:>7.1f} {wall:>7.1f} {ideal / wall:>10.2f} "
                      f"{stats['requests_total'] / len(jobs):>8.1f} {stats['prompt_tokens'] / len(jobs):>11.0f} "
                      f"{stats['cached_tokens'] / max(stats['prompt_tokens'], 1):>6.0%}  {verdicts} "
                      f"({'all right' if right else 'WRONG'}); load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        mock.terminate()
        mock.wait(timeout=30)


if __name__ == "__main__":
    main()
