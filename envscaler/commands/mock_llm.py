"""`envscaler mock-llm`: run the bundled MOCK OpenAI-compatible server in the foreground.

It answers the factory's own prompts from the hand-written library so the whole pipeline can run
without an API key; it is not a model, and the banner says so.
"""

from __future__ import annotations

import typer

from envscaler.commands._common import fail


def register(app: typer.Typer, verb: str, help_text: str) -> None:
    @app.command(verb, help=help_text)
    def mock_llm(
        port: int = typer.Option(8000, "--port", min=0, max=65535, help="TCP port (0 = any free port)."),
        host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind (keep it on loopback)."),
        latency_ms: float = typer.Option(0.0, "--latency-ms", min=0, help="Added latency per model request."),
        latency_jitter_ms: float = typer.Option(0.0, "--latency-jitter-ms", min=0, help="Uniform extra latency."),
        fault_429: float = typer.Option(0.0, "--fault-429", min=0, max=1, help="Probability of a 429 with Retry-After."),
        fault_500: float = typer.Option(0.0, "--fault-500", min=0, max=1, help="Probability of a 500."),
        fault_timeout: float = typer.Option(0.0, "--fault-timeout", min=0, max=1,
                                            help="Probability of stalling past the client timeout."),
        fault_malformed: float = typer.Option(0.0, "--fault-malformed", min=0, max=1,
                                              help="Probability of truncated JSON content."),
        retry_after_s: float = typer.Option(1.0, "--retry-after", min=0, help="Retry-After seconds advertised on 429s."),
        seed: int | None = typer.Option(None, "--seed", help="Seed for fault and latency draws (reproducible faults)."),
        realism: str = typer.Option(
            "off", "--realism", envvar="ENVSCALER_MOCK_REALISM",
            help="Answer in the forms real endpoints send: off | on (forms drawn per request, env class styles per "
                 "class) | all | a comma-separated list of forms/styles (see docs/mock_llm.md)."),
    ) -> None:
        import uvicorn

        from mock_llm.http_state import FaultConfig
        from mock_llm.realism import RealismConfig
        from mock_llm.server import create_app, listening_socket, uvicorn_config

        try:
            realism_config = RealismConfig.parse(realism)
        except ValueError as exc:
            fail(f"bad --realism / ENVSCALER_MOCK_REALISM value {realism!r}: {exc}")

        faults = FaultConfig(
            p_429=fault_429, p_500=fault_500, p_timeout=fault_timeout, p_malformed=fault_malformed,
            latency_ms=latency_ms, latency_jitter_ms=latency_jitter_ms, retry_after_s=retry_after_s, seed=seed,
        )
        if fault_429 + fault_500 + fault_timeout + fault_malformed > 1:
            fail("fault probabilities add up to more than 1")
        try:
            sock = listening_socket(host, port)
        except OSError as exc:
            fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}; pick another --port")
        bound = sock.getsockname()[1]
        base = f"http://{host if ':' not in host else f'[{host}]'}:{bound}/v1"
        typer.echo(f"envscaler MOCK LLM server (scripted answers from the bundled library, not a model) on {base}")
        typer.echo(f"  use it with: OPENAI_BASE_URL={base} OPENAI_API_KEY=mock")
        typer.echo(f"  faults: 429={fault_429} 500={fault_500} timeout={fault_timeout} malformed={fault_malformed} "
                   f"latency={latency_ms}ms(+{latency_jitter_ms}) seed={seed}; counters at {base[:-3]}/mock/stats")
        shown = realism_config.mode if realism_config.mode != "exact" else ",".join(realism_config.names)
        typer.echo(f"  realism: {shown} (answer forms real endpoints send; change with POST {base[:-3]}/mock/realism)")
        app = create_app(faults=faults, realism=realism_config)
        server = uvicorn.Server(uvicorn_config(app, host, bound, log_level="info"))
        server.run(sockets=[sock])
