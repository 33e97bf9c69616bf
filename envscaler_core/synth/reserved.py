"""Tool names EnvScaler's runtime keeps for itself.

EnvScaler's `interact_with_env` (`EnvScalerBaseEnv.step`, `check_vaild_action`, and the `is_action_terminated`
of its non-conversational envs) never dispatches a call named `chat_with_user` to the env: it is the
agent's message to the user, which ends a non-conversational episode (the reward is taken there) and goes
to the user simulator in a conversational one; a plain-text reply is parsed into that same call. A method
under that name is therefore dead code there, while our sandbox would run it: one env would reward
different trajectories in the two runtimes (outside check, round 4, F2: such a tool was audited verified
and promoted, and EnvScaler's runtime scored the same solution 0). That is the only name its runtime
intercepts (checked in the mirror's `interact_with_env`, every env class and parser): it reads nothing
else by name.
"""

from __future__ import annotations

CHAT_WITH_USER = "chat_with_user"

RESERVED_TOOLS: dict[str, str] = {
    CHAT_WITH_USER: ("EnvScaler's runtime reserves the name 'chat_with_user' for the agent's message to the user: "
                     "a call to it ends a non-conversational episode there (reward taken on the state so far) and "
                     "goes to the user simulator in a conversational one, and never runs a method of that name"),
}


def reserved_why(name: str) -> str | None:
    """Why `name` cannot be a tool under EnvScaler's runtime, or None when it can."""
    return RESERVED_TOOLS.get(name)
