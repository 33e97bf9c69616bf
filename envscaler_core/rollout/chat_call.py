"""A tool call named `chat_with_user`, taken as EnvScaler's runtime takes it (`EnvScalerBaseEnv.step`).

Its `check_vaild_action` rejects the call unless the arguments are an object holding `content` ("Error:
Invalid action", the episode goes on); otherwise the non-conversational `is_action_terminated` tests
`'Task Completed' in content` (a TypeError for a number, a bool or null, raised outside its try: the
runtime crashes) and ends the episode, the reward taken on the state at that point; a conversational
episode sends the content to the user simulator. The name never reaches the env. Our gym, rollouts and
the import's replay of reference solutions follow this, so one env rewards the same trajectories in both
runtimes (interop re-check, F2 and F3: the gym answered "unknown tool" and went on, and the replay ended
at a call EnvScaler rejects as invalid).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel

from envscaler_core.llm.replies import ReplyProblem
from envscaler_core.rollout.rules import NO_ARGUMENTS, Unread, lenient_arguments
from envscaler_core.synth.reserved import CHAT_WITH_USER

INVALID = ("a chat_with_user call needs its arguments as an object with 'content' (the message to the user); "
           "EnvScaler's runtime answers 'Error: Invalid action' and the episode goes on")
CRASHES = ("chat_with_user's 'content' must be text: EnvScaler's runtime tests \"'Task Completed' in content\" "
           "outside its try, so {shown} ({kind}) crashes it (TypeError)")


class ChatCall(BaseModel):
    """`ends`: the message to the user (ends a non-conversational episode); `invalid`: rejected, the
    episode goes on; `crashes`: EnvScaler's runtime crashes on it (we reject it and say why)."""

    kind: Literal["ends", "invalid", "crashes"]
    content: Any = None
    why: str | None = None


def chat_call(name: str, args: Any) -> ChatCall | None:
    """What EnvScaler's runtime does with a call `name(args)`; None when `name` is not `chat_with_user`."""
    if name != CHAT_WITH_USER:
        return None
    if not isinstance(args, dict) or "content" not in args:
        return ChatCall(kind="invalid", why=INVALID)
    content = args["content"]
    try:
        "Task Completed" in content  # noqa: B015 - exactly its test: only whether it raises matters
    except TypeError:
        return ChatCall(kind="crashes", content=content,
                        why=CRASHES.format(shown=repr(content)[:40], kind=type(content).__name__))
    return ChatCall(kind="ends", content=content)


def chat_of(call: dict[str, Any], read: Callable[[Any], dict[str, Any]] | None = None) -> ChatCall | None:
    """`chat_call` for an OpenAI tool_call dict; arguments that are not a JSON object are `invalid` (EnvScaler's
    `_parse_action` fails on them and the episode goes on). `read`: the env's reading of arguments
    (`CallRules.read_arguments`), whose refusal is the reason given; by default the factory's lenient one."""
    fn = call.get("function") or {}
    if fn.get("name") != CHAT_WITH_USER:
        return None
    try:
        args: Any = (read or lenient_arguments)(fn.get("arguments", NO_ARGUMENTS))
    except ReplyProblem as exc:  # EnvScaler's own words when its reading refused them (rules.Unread)
        return ChatCall(kind="invalid", why=f"chat_with_user: {exc}" if isinstance(exc, Unread) else INVALID)
    return chat_call(CHAT_WITH_USER, args)
