"""What reading one reply costs the orchestrator, for ordinary replies and for degenerate ones a model
really sends when it loops until its output limit (`{{{{…`, `[[[[…`, whitespace, unclosed call objects,
GLM argument pairs, fences that never close). Every reply is read on the event loop, so a reply that costs seconds stalls every
other call in flight: the degenerate ones must stay within a small multiple of an ordinary long reply.

Printed per form: ms to read it as a chat turn (`normalise_assistant`, tools offered) and as a
structured answer (`parse_answer`), and the ratio to an ordinary reply of the same length (a prose
answer with one JSON object). `.venv/bin/python -m benchmarks bench_replies` (BENCH_REPLY_CHARS sets the
length, default 20,000 characters, about 5,000 tokens).
"""

from __future__ import annotations

import json
import os
import time

from pydantic import BaseModel

from envscaler_core.llm.replies import normalise_assistant, parse_answer
from envscaler_core.llm.replies.reasoning import split_reasoning

TOOLS = [{"type": "function", "function": {"name": "get_x", "parameters": {
    "type": "object", "properties": {"a": {"type": "string"}}}}}]


class Answer(BaseModel):
    a: int


def forms(n: int) -> dict[str, str]:
    answer = json.dumps({"a": 1})
    return {
        "ordinary (prose + one object)": ("Some reasoning about the task. " * (n // 31))[:n - len(answer)] + answer,
        "braces {{{{": "{" * n,
        "brackets [[[[": "[" * n,
        "whitespace after [TOOL_CALLS]": "[TOOL_CALLS]" + " " * n + "!",
        "unclosed call objects": "x\n" + '{"name": "get_x", "arguments": ' * (n // 31),
        "GLM argument pairs": "<tool_call>get_x" + "<arg_key>a</arg_key>" * (n // 20),
        "opening fences, none closed": "```json\n{\n" * (n // 10),
    }


def _ms(fn, text: str) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    try:
        fn(text)
    except Exception:  # noqa: BLE001 - an unreadable reply is an answer too (a repair turn)
        pass
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    n = int(os.environ.get("BENCH_REPLY_CHARS", "20000"))
    chat = lambda text: normalise_assistant({"role": "assistant", "content": text}, TOOLS)  # noqa: E731
    structured = lambda text: parse_answer(split_reasoning(text, None), Answer)  # noqa: E731
    table = {name: (_ms(chat, text), _ms(structured, text)) for name, text in forms(n).items()}
    base_chat, base_structured = table["ordinary (prose + one object)"]
    print(f"{n} characters per reply       chat ms  (x ordinary)   structured ms  (x ordinary)")
    for name, (c, s) in table.items():
        print(f"  {name:30s} {c:8.1f}  ({c / max(base_chat, 1e-3):6.1f}x)   {s:8.1f}  ({s / max(base_structured, 1e-3):6.1f}x)")


if __name__ == "__main__":
    main()
