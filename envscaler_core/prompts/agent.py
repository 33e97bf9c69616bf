"""Chat roles for rollouts: the tool-using agent and the simulated user."""

from __future__ import annotations

from envscaler_core.prompts.base import ChatPrompt

DONE_MARKER = "Task Completed"
STOP_MARKER = "###STOP###"

# How this environment's tools behave, for both agent roles. It is also what lifts the request's
# stable prefix (the tools, then this system text) past providers' 1,024-token caching minimum for a
# typical environment, so every turn after an env's first is served from the cache.
_TOOL_CONVENTIONS = (
    "# How the tools work\n"
    "- Every tool returns a JSON object. {\"success\": true, \"data\": ...} answers a query; "
    "{\"success\": true, \"message\": ...} confirms a change; {\"success\": false, \"error\": ...} means "
    "nothing was changed.\n"
    "- A failed call leaves the environment as it was: read the error, correct the arguments (look the right "
    "id or value up with a query tool) and call again; do not repeat the same failing call.\n"
    "- Never guess ids, names or dates that the environment holds: query them. Use the exact values tools "
    "return, with their exact spelling and format.\n"
    "- A change that succeeded is done: do not call it a second time. Make one change per call, in an order "
    "the rules allow (check a precondition with a query first when in doubt).\n"
    "- Tool results are the only source of truth about the environment's state; your earlier assumptions "
    "are not.\n"
)

AGENT_NON_CONVERSATIONAL = ChatPrompt(
    id="agent.solve",
    version=2,
    system=(
        "You complete the user's task step by step with the provided tools. Fill every required parameter with "
        "valid values; query before you modify; adapt to tool results. When the task is done, reply with the "
        f"text '{DONE_MARKER}' and no tool call.\n\n" + _TOOL_CONVENTIONS.replace("{", "{{").replace("}", "}}")
        + "\n# Environment\n{introduction}\n\n# Rules\n{rules}"
    ),
)

AGENT_CONVERSATIONAL = ChatPrompt(
    id="agent.converse",
    version=2,
    system=(
        "You help a user with requests in this environment using the provided tools, until the user ends the "
        "conversation. Ask the user for information you cannot get from tools; otherwise call tools with "
        "complete, valid parameters. Never call a tool and talk to the user in the same step. When done, tell "
        "the user the result and ask whether they need anything else.\n\n"
        + _TOOL_CONVENTIONS.replace("{", "{{").replace("}", "}}") + "\n# Environment\n{introduction}\n\n# Rules\n{rules}"
    ),
)

USER_SIMULATOR = ChatPrompt(
    id="agent.user_sim",
    version=1,
    system=(
        "You play a human user who wants an assistant to accomplish this goal:\n\n{task}\n\n"
        "Do not paste the goal verbatim: reveal it naturally, piece by piece, answering the assistant's "
        "questions. Stay within the goal; never invent requirements or data; keep names and ids exact. When the "
        f"goal has been achieved, reply with only {STOP_MARKER}."
    ),
)

AGENT_BFCL = ChatPrompt(
    id="agent.bfcl",
    version=1,
    # BFCL's OpenAI FC handler sends no system prompt: the messages are the user turns, the assistant's
    # tool calls and the tool results, and the tools go in the request's `tools`. The text is unused.
    system="",
)
