"""`envscaler serve-mcp ENV_ID`: an accepted env's tools over MCP (stdio or streamable HTTP), all
calls in one sandbox episode started from a scenario's initial state.

Exit code 2 (nothing served) for an unknown env/run/scenario, an env without a verified scenario,
a sandbox that cannot start, or (HTTP) an address that cannot be listened on: the port is taken before
the "serving" line is printed, so a busy port is one `error:` line, never "serving" then a crash.
Status lines go to stderr: in stdio mode stdout is the protocol."""

from __future__ import annotations

from pathlib import Path

import typer

from envscaler.commands._common import DB_HELP, fail
from envscaler.mcp_sessions import MAX_SESSIONS, SESSION_IDLE_S, SessionBounds


def _listen(transport: str, host: str, port: int):  # type: ignore[no-untyped-def]
    """The listening socket for --transport http (None for stdio), or a one-line exit 2."""
    if transport != "http":
        return None
    from envscaler.mcp_server import PortUnavailable, listen_http

    try:
        return listen_http(host, port)
    except PortUnavailable as exc:
        fail(str(exc))


def _find(store, env_id: str, run_id: str | None, scenario_fp: str | None):  # type: ignore[no-untyped-def]
    """(env, scenario, run_id) from the store, or a clear exit 2."""
    from envscaler_core.models import AcceptedEnv, Scenario
    from envscaler_core.store.urls import human_store

    if run_id is not None:
        if store.get_run(run_id) is None:
            fail(f"unknown run {run_id!r} in {human_store(store.url)}")
        runs = [run_id]
    else:
        runs = [r.run_id for r in reversed(store.list_runs())]  # newest first
    held = [(rid, envs[-1]) for rid in runs if (envs := store.query(AcceptedEnv, run_id=rid, where={"env_id": env_id}))]
    if not held:
        where = f"run {run_id!r}" if run_id else f"any run of {human_store(store.url)}"
        fail(f"unknown env id {env_id!r}: no accepted env with that id in {where}")
    rid, env = held[0]
    # env ids are unique per run, not per store: a later import may hold other code under this id, and
    # serving the newest would hand an older run's pasted command to it (red team 8, F4)
    other = next((r for r, e in held[1:] if (e.class_name, e.class_code) != (env.class_name, env.class_code)), None)
    if other is not None:
        fail(f"env id {env_id!r} names different code in run {rid!r} and run {other!r} (env ids are unique per run, "
             "not per store): pass --run to pick one")
    if scenario_fp:
        matches = [s for s in store.query(Scenario, run_id=rid, where={"env_id": env_id})
                   if s.fingerprint.startswith(scenario_fp)]
        if not matches:
            fail(f"no scenario {scenario_fp!r} for env {env_id} in run {rid}")
        if len(matches) > 1:
            fail(f"scenario prefix {scenario_fp!r} is ambiguous ({len(matches)} scenarios); give more characters")
        return env, matches[0], rid
    verified = store.query(Scenario, run_id=rid, where={"env_id": env_id, "status": "verified"})
    if not verified:
        fail(f"env {env_id} in run {rid} has no verified scenario to start from; pass --scenario FP to pick one")
    return env, verified[0], rid


def register(app: typer.Typer, verb: str, help_text: str) -> None:
    @app.command(verb, help=help_text)
    def serve_mcp(
        env_id: str = typer.Argument(..., help="Accepted env id, e.g. env_1a2b3c4d5e6f, or a BFCL multi-turn "
                                     "task as bfcl:multi_turn_base_0."),
        run_id: str | None = typer.Option(None, "--run", help="Run holding the env (default: the newest that has it; refused when runs hold different code under the id: env ids are unique per run, not per store)."),
        scenario_fp: str | None = typer.Option(None, "--scenario", help="Scenario fingerprint (or prefix) for the initial state."),
        db: str | None = typer.Option(None, "--db", help=DB_HELP),
        transport: str = typer.Option("stdio", "--transport", help="stdio | http (streamable HTTP at /mcp)."),
        host: str = typer.Option("127.0.0.1", "--host", help="HTTP bind address."),
        port: int = typer.Option(8765, "--port", min=1, max=65535, help="HTTP port."),
        max_sessions: int = typer.Option(MAX_SESSIONS, "--max-sessions", min=1, help="HTTP: most sessions kept at "
                                         "once; an initialize past it gets 503 naming this bound."),
        session_idle_s: int = typer.Option(SESSION_IDLE_S, "--session-idle-s", min=1, help="HTTP: seconds a session "
                                           "may go without a request before it is closed (DELETE ends one at once)."),
        config: Path | None = typer.Option(None, "--config", "-c", help="Settings file (.toml/.json/.yaml; every setting: docs/configuration.md)."),
    ) -> None:
        import anyio

        from envscaler.mcp_server import build_server, serve_http, serve_stdio
        from envscaler.runner import settings_from
        from envscaler.terminal_text import visible_line
        from envscaler_core.runtime import EnvLoadError, open_env_episode
        from envscaler_core.store import Store, StoreError
        from sandbox import SandboxPool, SandboxUnavailable

        if transport not in ("stdio", "http"):
            fail(f"--transport must be stdio or http, got {transport!r}")
        settings = settings_from(config, db)
        bounds = SessionBounds(max_sessions=max_sessions, idle_s=session_idle_s)
        if env_id.startswith("bfcl:"):  # an official BFCL multi-turn task instead of a synthesized env
            if run_id is not None or scenario_fp is not None:
                fail(f"--run and --scenario pick a synthesized env's run and initial state; {env_id} is a BFCL "
                     "task with its own state: leave them out")
            return _serve_bfcl(env_id.removeprefix("bfcl:"), settings, transport, host, port, bounds)
        try:
            # Closed before serving: a DuckDB file is held by one process at a time.
            with Store.from_url(settings.store.url, create=False) as store:
                env, scenario, rid = _find(store, env_id, run_id, scenario_fp)
        except StoreError as exc:
            fail(str(exc))
        sock = _listen(transport, host, port)
        try:
            pool = SandboxPool(settings.sandbox.model_copy(update={"workers": 1}))
        except SandboxUnavailable as exc:
            fail(f"sandbox unavailable: {exc}")
        try:
            try:
                episode = open_env_episode(pool, env, scenario.initial_state)
            except EnvLoadError as exc:
                fail(f"env {env_id} does not load from scenario {scenario.fingerprint[:12]}: {exc}")
            try:
                server = build_server(env, scenario, episode)
                where = f"http://{host}:{port}/mcp" if transport == "http" else "stdio"
                typer.echo(visible_line(f"serving {env_id} (run {rid}, scenario {scenario.fingerprint[:12]}, "
                                   f"{len(env.tools)} tools) over {where}"), err=True)
                if transport == "stdio":
                    anyio.run(serve_stdio, server)
                else:
                    serve_http(server, host, sock, bounds)
            finally:
                episode.close()
        finally:
            pool.close()
            if sock is not None:
                sock.close()


def _serve_bfcl(task_id: str, settings, transport: str, host: str, port: int,  # type: ignore[no-untyped-def]
                bounds: SessionBounds) -> None:
    import anyio

    from envscaler.bfcl_mcp import build_bfcl_server
    from envscaler.mcp_server import serve_http, serve_stdio
    from envscaler_core.bfcl.data import BFCLDataError, find_task
    from envscaler_core.bfcl.executor import SandboxedTask
    from envscaler_core.bfcl.package import BFCLUnavailable, jail_imports
    from envscaler_core.runtime import EnvLoadError
    from sandbox import JailImports, SandboxPool, SandboxUnavailable

    try:
        task = find_task(task_id)
        imports = JailImports(**jail_imports())
    except (BFCLDataError, BFCLUnavailable) as exc:
        fail(str(exc))
    sock = _listen(transport, host, port)
    try:
        pool = SandboxPool(settings.sandbox.model_copy(update={"workers": 1}), imports=imports)
    except SandboxUnavailable as exc:
        fail(f"sandbox unavailable: {exc}")
    try:
        try:
            live = SandboxedTask(pool, task)
        except EnvLoadError as exc:
            fail(f"BFCL task {task_id} does not load in the sandbox: {exc}")
        try:
            where = f"http://{host}:{port}/mcp" if transport == "http" else "stdio"
            typer.echo(f"serving BFCL task {task.id} ({', '.join(task.involved_classes)}) over {where}", err=True)
            server = build_bfcl_server(task, live)
            if transport == "stdio":
                anyio.run(serve_stdio, server)
            else:
                serve_http(server, host, sock, bounds)
        finally:
            live.close()
    finally:
        pool.close()
        if sock is not None:
            sock.close()
