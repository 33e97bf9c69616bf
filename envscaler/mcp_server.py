"""One accepted env's tools as an MCP server (official `mcp` SDK, low-level `Server`).

The server holds ONE sandbox episode for its whole life, started from a scenario's initial state:
every `tools/call` runs in it, so calls see each other's state changes, as an agent's calls would in
a rollout. The env's tool schemas are advertised as-is (they are already JSON Schema objects). A
tool's return value goes back as JSON text; a call the sandbox rejects or that raises comes back
with `isError` and `{"error", "error_kind"}`, the same observation rollouts give a model.
`envscaler-get-state` is an extra, clearly-named helper (not an env tool) returning the current state,
for debugging and for clients that verify outcomes. Its hyphen is what no env tool can hold (a tool is a
Python method), so no env can shadow it: under the old name `envscaler_get_state` an env's own tool of that
name replaced the helper and answered a forged state (red team rt17-B, F5); once the episode's process was caught forging
replies it returns an error (`crash`, naming the breach) instead, as every later call does. With the HTTP transport all clients share the
one episode; how many sessions they may hold, and for how long, is `envscaler/mcp_sessions.py`.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from envscaler.mcp_sessions import NamedSessionErrors, SessionBounds
from envscaler_core.models import AcceptedEnv, Scenario
from envscaler_core.runtime import Episode, EpisodeBreach

STATE_TOOL = "envscaler-get-state"
"""The state helper's name: valid for MCP and for OpenAI's and Anthropic's tool names, and never a Python
identifier, so never the name of an env tool (or of a BFCL function)."""
FORMER_STATE_TOOL = "envscaler_get_state"
"""Its name until rt17-B F5 (an env tool could take it): a client still calling it is told the new one."""


def moved_helper(name: str, tool_names: set[str]) -> types.CallToolResult | None:
    """The error for a call of the helper's former name on an env without such a tool, naming the new one."""
    if name != FORMER_STATE_TOOL or name in tool_names:
        return None
    return _text({"error": f"unknown tool {name!r}: the state helper is {STATE_TOOL!r} (renamed, so that no env "
                           "tool can take its name)", "error_kind": "schema"}, is_error=True)


def _text(payload: Any, is_error: bool = False) -> types.CallToolResult:
    text = json.dumps(payload, ensure_ascii=False, default=str)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)


def build_server(env: AcceptedEnv, scenario: Scenario, episode: Episode) -> Server[Any]:
    """An MCP server exposing `env`'s tools, executing every call in `episode` (already open on
    `scenario.initial_state`; the caller owns and closes it)."""
    tools = [  # a listed tool named as the helper is no method (the name is no identifier): never offered
        types.Tool(name=t.function.name, description=t.function.description, input_schema=t.function.parameters)
        for t in env.tools if t.function.name != STATE_TOOL
    ]
    tools.append(types.Tool(
        name=STATE_TOOL,
        description=f"Helper (not part of {env.class_name}): the environment's current state as JSON.",
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    ))
    lock = anyio.Lock()  # one episode: calls run one at a time, in arrival order

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        args = dict(params.arguments or {})
        if (moved := moved_helper(params.name, {t.name for t in tools})) is not None:
            return moved
        async with lock:
            if params.name == STATE_TOOL:
                try:
                    return _text(await anyio.to_thread.run_sync(lambda: episode.state))
                except EpisodeBreach as exc:  # its replies may be forged: no state to show, a crashed episode
                    return _text({"error": str(exc), "error_kind": "crash"}, is_error=True)
            out = await anyio.to_thread.run_sync(episode.call, params.name, args)
        if out.ok:
            return _text(out.result)
        return _text({"error": out.error, "error_kind": out.error_kind}, is_error=True)

    return Server(
        f"envscaler-{env.env_id}",
        version="1",
        instructions=(
            f"{env.summary}\n\n{env.introduction}\n\nScenario {scenario.fingerprint[:12]}: {scenario.task}\n"
            "All tool calls share one environment instance."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(server: Server[Any]) -> None:
    """The SDK's stdio transport, fed by `mcp_stdio.CheckedStdin` so that a line it cannot read gets a
    JSON-RPC error instead of silence (see that module)."""
    from mcp.server.stdio import stdio_server

    from envscaler.mcp_stdio import CheckedStdin, claim_stdin

    fd, release = claim_stdin()
    stdin = CheckedStdin(fd)
    try:
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):  # type: ignore[arg-type]
            stdin.reply = write_stream.send
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        release()


class PortUnavailable(OSError):
    """The HTTP address cannot be listened on; the message is one line a user can act on."""


def listen_http(host: str, port: int) -> socket.socket:
    """A socket bound and listening on host:port, taken BEFORE the command says it serves: uvicorn binds
    only once it runs, so a busy port came out as "serving ... over http://..." then uvicorn's own
    "ERROR: [Errno 98] ..." and exit 3. PortUnavailable (one line) when the address cannot be had."""
    import errno

    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
        return socket.create_server((host, port), family=family, backlog=2048)
    except socket.gaierror as exc:
        raise PortUnavailable(f"cannot listen on {host}:{port}: --host {host!r} is not an address here "
                              f"({exc.strerror})") from None
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise PortUnavailable(f"cannot serve over http://{host}:{port}/mcp: port {port} is already in use by "
                                  "another process; pick a free one with --port") from None
        raise PortUnavailable(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def serve_http(server: Server[Any], host: str, sock: socket.socket, bounds: SessionBounds) -> None:
    """Streamable HTTP at http://host:port/mcp on `sock` (from `listen_http`; blocks), each POST body
    checked as stdio's lines are, and sessions kept within `bounds` (`envscaler/mcp_sessions.py`)."""
    import uvicorn

    from envscaler.mcp_stdio import CheckedPosts

    inner = server.streamable_http_app(host=host, max_sessions=bounds.max_sessions, session_idle_timeout=bounds.idle_s)
    app = CheckedPosts(NamedSessionErrors(inner, bounds))
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
