"""Chat roles for rollouts: the tool-using agent and the simulated user."""

from __future__ import annotations

from envscaler_core.prompts.base import ChatPrompt

DONE_MARKER = "Task Completed"
STOP_MARKER = "###STOP###"

AGENT_NON_CONVERSATIONAL = ChatPrompt(
    id="agent.solve",
    version=1,
    system=(
        "You complete the user's task step by step with the provided tools. Fill every required parameter with "
        "valid values; query before you modify; adapt to tool results. When the task is done, reply with the "
        f"text '{DONE_MARKER}' and no tool call.\n\n# Environment\n{{introduction}}\n\n# Rules\n{{rules}}"
    ),
)

AGENT_CONVERSATIONAL = ChatPrompt(
    id="agent.converse",
    version=1,
    system=(
        "You help a user with requests in this environment using the provided tools, until the user ends the "
        "conversation. Ask the user for information you cannot get from tools; otherwise call tools with "
        "complete, valid parameters. Never call a tool and talk to the user in the same step. When done, tell "
        "the user the result and ask whether they need anything else.\n\n# Environment\n{introduction}\n\n"
        "# Rules\n{rules}"
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
