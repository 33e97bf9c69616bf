"""A BFCL multi-turn task's functions as an MCP server, all calls in one sandbox episode.

`envscaler serve-mcp bfcl:multi_turn_base_0` advertises every function of the task's API classes
(BFCL's docs as JSON Schema) and runs each `tools/call` exactly as BFCL's executor would, in the
sandbox, from the task's initial configuration; the result is BFCL's observation text (`isError` when
it is an execution error or the call cannot be decoded). `envscaler-get-state` (`mcp_server.STATE_TOOL`) returns the state.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from envscaler.mcp_server import STATE_TOOL, _text, moved_helper
from envscaler_core.bfcl.calls import UndecodableCalls, decode_tool_calls
from envscaler_core.bfcl.data import BFCLTask
from envscaler_core.bfcl.executor import SandboxedTask
from envscaler_core.bfcl.schemas import all_tools, function_names
from envscaler_core.runtime import EpisodeBreach

ERROR_PREFIXES = ("Error during execution", "Error during decoding")


def build_bfcl_server(task: BFCLTask, live: SandboxedTask) -> Server[Any]:
    tools = [types.Tool(name=t["function"]["name"], description=t["function"]["description"],
                        input_schema=t["function"]["parameters"]) for t in all_tools(task)]
    tools.append(types.Tool(name=STATE_TOOL, description="Helper (not a BFCL function): the API classes' state as JSON.",
                            input_schema={"type": "object", "properties": {}, "additionalProperties": False}))
    lock = anyio.Lock()
    names = function_names(task)

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        if (moved := moved_helper(params.name, set(names))) is not None:
            return moved
        async with lock:
            if params.name == STATE_TOOL:
                try:
                    return _text(await anyio.to_thread.run_sync(lambda: live.state))
                except EpisodeBreach as exc:  # its replies may be forged: no state to show
                    return _text({"error": str(exc), "error_kind": "crash"}, is_error=True)
            try:
                [call] = decode_tool_calls([{"function": {"name": params.name, "arguments": json.dumps(
                    params.arguments or {})}}], only=names)
            except UndecodableCalls as exc:
                observation = f"Error during decoding: {exc}"
            else:
                observation = await anyio.to_thread.run_sync(live.execute, call)
        return types.CallToolResult(content=[types.TextContent(type="text", text=observation)],
                                    is_error=observation.startswith(ERROR_PREFIXES))

    turns = "\n".join(f"- {m['content']}" for t in range(len(task.turns)) for m in task.user_messages(t))
    return Server(f"envscaler-{task.id}", version="1", instructions=(
        f"BFCL multi-turn task {task.id} ({', '.join(task.involved_classes)}). User turns:\n{turns}\n"
        "All tool calls share one environment instance."), on_list_tools=list_tools, on_call_tool=call_tool)
