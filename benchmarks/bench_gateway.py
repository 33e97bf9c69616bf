"""LLM gateway throughput and per-call overhead, against the mock server in a separate process.

Both numbers are ratios to a baseline from the same run on the same machine:
- throughput at 200 ms mock latency, 256 requests at concurrency 64, vs the ideal 64 / 0.2 s = 320 req/s
  (target >= 0.9): shows the cap, pacer and retry loop do not serialise requests. The bare SDK client
  under the same cap is printed next to it: on a small machine the SDK's own per-request CPU (~2 ms,
  much of it in its connection pool) bounds both, and gateway/bare isolates what the gateway adds;
- ms per sequential call at 0 ms latency through `LLMGateway.chat` (cache off) vs the bare `openai`
  `AsyncOpenAI` client on the same requests (target <= 1.2x): the price of retries, limits, accounting.

The mock runs in a child process so its event loop does not share our GIL. On a busy 2-core machine the
numbers are noisy; the overhead rounds are interleaved and the median ratio is reported.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time

import httpx
import openai

from envscaler_core.config import LLMSettings
from envscaler_core.llm import LLMGateway

LATENCY_MS = 200
REQUESTS = 256
CONCURRENCY = 64
OVERHEAD_CALLS = 200
OVERHEAD_ROUNDS = 5
THROUGHPUT_ROUNDS = 3


def serve() -> None:
    """Child process: a mock with a constant answer (the brain is not what is measured)."""
    from mock_llm.protocol import MockReply
    from mock_llm.server import MockServer

    with MockServer(lambda req: MockReply(content='{"ok": true}')) as mock:
        print(mock.root_url, flush=True)
        sys.stdin.read()  # until the parent closes our stdin


def _messages(tag: str, i: int) -> list[dict[str, str]]:
    return [{"role": "system", "content": "You are a benchmark."}, {"role": "user", "content": f"{tag} request {i}"}]


async def _gateway_rps(gw: LLMGateway, round_no: int) -> float:
    started = time.perf_counter()
    await asyncio.gather(*(gw.chat(_messages(f"tp{round_no}", i)) for i in range(REQUESTS)))
    return REQUESTS / (time.perf_counter() - started)


async def _bare_rps(client: openai.AsyncOpenAI, model: str, round_no: int) -> float:
    cap = asyncio.Semaphore(CONCURRENCY)

    async def one(i: int) -> None:
        async with cap:
            await client.chat.completions.create(model=model, messages=_messages(f"btp{round_no}", i))

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(REQUESTS)))
    return REQUESTS / (time.perf_counter() - started)


def throughput(base_url: str, root: str) -> tuple[float, float]:
    """Median req/s of the gateway and of the bare SDK client (same cap), interleaved rounds."""
    settings = LLMSettings(base_url=base_url, api_key="mock", max_concurrency=CONCURRENCY, cache=False)
    gw = LLMGateway(settings)

    async def run() -> tuple[float, float]:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="mock", max_retries=0, timeout=settings.timeout_s)
        model = settings.models.agent
        httpx.post(f"{root}/mock/faults", json={"latency_ms": 20}).raise_for_status()
        # warm both connection pools to CONCURRENCY keep-alive connections, so no round pays TCP setup
        await asyncio.gather(*(gw.chat(_messages("warm", i)) for i in range(CONCURRENCY)))
        await asyncio.gather(*(client.chat.completions.create(model=model, messages=_messages("bwarm", i))
                               for i in range(CONCURRENCY)))
        httpx.post(f"{root}/mock/faults", json={"latency_ms": LATENCY_MS}).raise_for_status()
        gws, bares = [], []
        for r in range(THROUGHPUT_ROUNDS):
            gws.append(await _gateway_rps(gw, r))
            bares.append(await _bare_rps(client, model, r))
        await client.close()
        await gw.aclose()
        return statistics.median(gws), statistics.median(bares)

    return asyncio.run(run())


async def _gateway_ms(gw: LLMGateway, round_no: int) -> float:
    started = time.perf_counter()
    for i in range(OVERHEAD_CALLS):
        await gw.chat(_messages(f"gw{round_no}", i), stage="agent")
    return (time.perf_counter() - started) * 1000 / OVERHEAD_CALLS


async def _bare_ms(client: openai.AsyncOpenAI, model: str, round_no: int) -> float:
    started = time.perf_counter()
    for i in range(OVERHEAD_CALLS):
        resp = await client.chat.completions.create(model=model, messages=_messages(f"bare{round_no}", i))
        resp.choices[0].message.model_dump(exclude_none=True)
    return (time.perf_counter() - started) * 1000 / OVERHEAD_CALLS


def overhead(base_url: str, root: str) -> tuple[float, float, float]:
    httpx.post(f"{root}/mock/faults", json={"latency_ms": 0}).raise_for_status()
    settings = LLMSettings(base_url=base_url, api_key="mock", cache=False)
    gw = LLMGateway(settings)

    async def run() -> tuple[float, float, float]:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="mock", max_retries=0, timeout=settings.timeout_s)
        model = settings.models.agent
        await _gateway_ms(gw, -1)
        await _bare_ms(client, model, -1)
        ratios, gws, bares = [], [], []
        for r in range(OVERHEAD_ROUNDS):
            g = await _gateway_ms(gw, r)
            b = await _bare_ms(client, model, r)
            gws.append(g)
            bares.append(b)
            ratios.append(g / b)
        await client.close()
        await gw.aclose()
        return statistics.median(gws), statistics.median(bares), statistics.median(ratios)

    return asyncio.run(run())


def main() -> None:
    child = subprocess.Popen([sys.executable, "-c", "from benchmarks.bench_gateway import serve; serve()"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        root = child.stdout.readline().strip()
        if not root.startswith("http://"):
            raise RuntimeError("mock server child did not start")
        base_url = f"{root}/v1"
        rps, bare_rps = throughput(base_url, root)
        ideal = CONCURRENCY / (LATENCY_MS / 1000)
        print(f"throughput: gateway {rps:.1f} req/s at {LATENCY_MS} ms latency, concurrency {CONCURRENCY}, "
              f"{REQUESTS} requests (median of {THROUGHPUT_ROUNDS}); ideal {ideal:.0f} req/s; "
              f"ratio {rps / ideal:.3f} (target >= 0.9)")
        print(f"throughput baseline: bare AsyncOpenAI with the same cap {bare_rps:.1f} req/s "
              f"(ratio to ideal {bare_rps / ideal:.3f}); gateway/bare {rps / bare_rps:.3f}")
        gw_ms, bare_ms, ratio = overhead(base_url, root)
        print(f"overhead: gateway {gw_ms:.3f} ms/call vs bare AsyncOpenAI {bare_ms:.3f} ms/call at 0 ms latency "
              f"(cache off, median of {OVERHEAD_ROUNDS} interleaved rounds of {OVERHEAD_CALLS}); "
              f"ratio {ratio:.3f} (target <= 1.2)")
    finally:
        child.stdin.close()
        child.wait(timeout=15)


if __name__ == "__main__":
    main()
