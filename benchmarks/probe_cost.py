"""Probe cost of whatever checkout you run it from (so main and a branch can be compared back to back):
`cd <checkout> && <venv>/bin/python <this file>` with T=1|4 (PROBE_THREADS) and WAVE=1 (all 14 candidates at
once, as a pipeline run starts them). Prints wall and the pool's own CPU per probe (the host process plus
every zygote with the units it reaped: other users of a shared machine do not pollute it) and machine busy.
Not a `bench_` module: it measures the checkout in the current directory, not this package."""

import asyncio
import os
import sys
import time

sys.path.insert(0, os.getcwd())
import envscaler_core.validation.programmatic as P  # noqa: E402
from envscaler_core.config import SandboxSettings, Settings  # noqa: E402
from envscaler_core.models import EnvCandidate  # noqa: E402
from envscaler_core.synth import extract_tools  # noqa: E402
from envscaler_core.validation import validate_candidate  # noqa: E402
from mock_llm import library  # noqa: E402
from sandbox import SandboxPool  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def busy() -> float:
    v = list(map(int, open("/proc/stat").readline().split()[1:]))
    return (sum(v) - v[3] - v[4]) / TICK


def own(pool: SandboxPool) -> float:
    pool.warm_up()
    time.sleep(0.3)
    for z in pool.zygotes:
        z.ping()  # a zygote reaps finished units on its next control message
    total = time.process_time()
    for pid in pool.zygote_host_pids():
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        total += sum(int(x) for x in f[11:15]) / TICK  # utime stime cutime cstime
    return total


def main() -> None:
    settings = Settings.model_validate({"validate": {"mode": "programmatic", "rounds": 30}})
    wave = os.environ.get("WAVE") == "1"
    jobs = [(EnvCandidate(topic_fp="b", class_name=d.class_name, class_code=d.class_source,
                          tools=extract_tools(d.class_source, d.class_name), tool_kinds=dict(d.tool_kinds)), s)
            for d in library.domains() for s in (d.initial_states[:2] if wave else d.initial_states[:1])]
    P.PROBE_THREADS = int(os.environ.get("T", "4" if wave else "1"))

    async def together():
        return await asyncio.gather(*[validate_candidate(c, pool, None, settings, test_state=s) for c, s in jobs])

    def run() -> None:
        if wave:
            asyncio.run(together())
        else:
            for c, s in jobs:
                asyncio.run(validate_candidate(c, pool, None, settings, test_state=s))

    with SandboxPool(SandboxSettings()) as pool:
        pool.warm_up()
        run()
        n = [0]
        orig = P.open_episode

        def counted(*a, **k):
            n[0] += 1
            return orig(*a, **k)

        P.open_episode = counted
        o0, b0, t = own(pool), busy(), time.perf_counter()
        for _ in range(int(os.environ.get("R", "2"))):
            run()
        wall, b = time.perf_counter() - t, busy() - b0
        o = own(pool) - o0
        print(f"{'wave of ' if wave else ''}{len(jobs)} candidates, T={P.PROBE_THREADS}, {n[0]} probes: wall "
              f"{wall / n[0] * 1000:.2f} ms/probe; own CPU {o / n[0] * 1000:.2f} ms/probe; machine busy "
              f"{b / n[0] * 1000:.2f} ms/probe (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
