"""Field types for stage outputs that accept the spellings real models use for one meaning.

- `ToolArgs`: a tool call's arguments as an object, or as a JSON string holding one (models mirror
  the OpenAI tool-call format, where arguments are a string), or null/"" for none.
- `LooseWord`: a closed set of words ("pass", "positive") or a boolean ("Yes.", "**true**") matched
  case-insensitively, with markdown emphasis, quotes and a final period removed (`**Pass**`, `'Fail'`,
  `WARNING`); the reference's parser rejected those although each has one reading.
- `Score10`: a 1-10 score also written "8/10" or "8 out of 10".
Anything else still fails validation with pydantic's precise message.
"""

from __future__ import annotations

import re
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


_OUT_OF_TEN = re.compile(r"^\s*(\d+)\s*(?:/|out of)\s*10\s*$", re.IGNORECASE)


def _score(value: Any) -> Any:
    if isinstance(value, str) and (match := _OUT_OF_TEN.match(value)):
        return int(match.group(1))
    return value


ToolArgs = Annotated[dict[str, Any], BeforeValidator(_args)]
Score10 = Annotated[int, BeforeValidator(_score)]
LooseWord = BeforeValidator(_word)
"""Use as `Annotated[Literal["pass", "fail"], LooseWord]`."""
