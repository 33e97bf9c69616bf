"""Field types for stage outputs that accept the spellings real models use for one meaning.

- `ToolArgs`: a tool call's arguments as an object, or as a JSON string holding one (models mirror
  the OpenAI tool-call format, where arguments are a string), or null/"" for none.
- `choice(...)`: a closed set of words ("pass", "positive") matched case-insensitively, with markdown
  emphasis and quotes around the word removed (`**Pass**`, `'Fail'`, `WARNING`); the reference's
  parser rejected those although each has one reading.
Anything else still fails validation with pydantic's precise message.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator

from envscaler_core.llm.replies.json_text import NotJSON, load_value


def _args(value: Any) -> Any:
    if value is None:
        return {}
    if isinstance(value, str):
        text = value.strip()
        if not text or text == "null":
            return {}
        try:
            loaded = load_value(text)
        except NotJSON:
            return value  # pydantic then reports "Input should be a valid dictionary", found the string
        return loaded
    return value


def _word(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip().strip("*_`'\" .").lower()
    return value


ToolArgs = Annotated[dict[str, Any], BeforeValidator(_args)]
LooseWord = BeforeValidator(_word)
"""Use as `Annotated[Literal["pass", "fail"], LooseWord]`."""
