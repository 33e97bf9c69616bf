"""Every prompt the factory sends, as typed and versioned `PromptSpec`/`ChatPrompt` values."""

from envscaler_core.prompts import agent, mine, scen, synth, validate
from envscaler_core.prompts.base import (
    INPUT_HEADING, PROMPT_HEADER, ChatPrompt, PromptSpec, extract_input, parse_tag,
)

STRUCTURED_PROMPTS: dict[str, PromptSpec] = {
    p.id: p
    for p in (
        mine.JUDGE_STATEFUL, mine.INFER_TOPIC, mine.JUDGE_STATEFUL_BATCH, mine.INFER_TOPIC_BATCH,
        synth.STATE_SPACE, synth.CLASS_SKELETON, synth.OPERATIONS, synth.METHOD,
        validate.TEST_STATE, validate.PROPOSE_CALL, validate.JUDGE_CALL, validate.TOOL_KINDS,
        scen.INITIAL_STATE, scen.TASK, scen.CHECKLIST, scen.CHECK_FUNCTION, scen.CHECK_FUNCTIONS, scen.REFERENCE_SOLUTION,
    )
}
CHAT_PROMPTS: dict[str, ChatPrompt] = {
    p.id: p for p in (agent.AGENT_NON_CONVERSATIONAL, agent.AGENT_CONVERSATIONAL, agent.USER_SIMULATOR,
                      agent.AGENT_BFCL)
}

__all__ = [
    "CHAT_PROMPTS", "INPUT_HEADING", "PROMPT_HEADER", "STRUCTURED_PROMPTS", "ChatPrompt", "PromptSpec",
    "extract_input", "parse_tag",
]
