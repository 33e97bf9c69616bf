"""Tool calls a serving stack left as text in `content`, because no tool parser ran or the wrong one did.

Each model family writes its calls in its own dialect; one reader per dialect below, each naming the
serving stack and parser it comes from. The rules every reader follows:
- a call counts only when it names a tool that was offered; one call that names anything else, or
  whose arguments cannot be read, leaves the whole text as text (nothing is invented);
- the first dialect whose markers are in the text decides (its special tokens cannot be prose); the
  marker-less forms (a JSON call object, a pythonic list) must make up the end of the text;
- prose beside the calls stays the turn's content.
Arguments come back as objects; the caller (`tool_calls`) canonicalises them as for native calls.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from envscaler_core import pyast
from envscaler_core.llm.replies.call_text import (
    Found, Offered, Unread, after_prefix, json_items, json_run, make_call, offered_tools, prose_of,
)
from envscaler_core.llm.replies.json_text import Brackets, NotJSON, balanced_end, fences, jsonable, load_value
from envscaler_core.llm.replies.reasoning import content_text, harmony_messages
from envscaler_core.llm.replies.xml_calls import function_tags, minimax, tool_call_tags
from envscaler_core.wire_values import too_many_literal_values

__all__ = ["Found", "harmony_calls", "notify_error_text", "offered_tools", "read_calls"]

_MISTRAL = re.compile(r"\s*(?:\[TOOL_CALLS\])?\s*([\w.\-]+)\s*(?:\[CALL_ID\]\s*([\w\-]+)\s*)?\[ARGS\]\s*")


def mistral(text: str, offered: Offered) -> Found:
    """Mistral tokenizers (vLLM/SGLang `mistral` parser off or failed): v11+ (Mistral Small 3.2,
    Devstral, Magistral) `[TOOL_CALLS]name[ARGS]{…}` per call, v13 `[TOOL_CALLS]name[CALL_ID]id[ARGS]{…}`,
    older `[TOOL_CALLS][{"name", "arguments"}, …]`."""
    at = text.find("[TOOL_CALLS]")
    if text[at + len("[TOOL_CALLS]"):].lstrip()[:1] in ("[", "{"):
        return after_prefix(text, r"\[TOOL_CALLS\]", offered)
    calls, i = [], at
    while (m := _MISTRAL.match(text, i)) is not None and (calls or text.startswith("[TOOL_CALLS]", m.start())):
        end = balanced_end(text, m.end()) if text[m.end():m.end() + 1] == "{" else None
        if end is None:
            raise Unread("[ARGS] without a JSON object")
        calls.append(make_call(m.group(1), text[m.end():end], offered, m.group(2)))
        i = end
    if not calls:
        raise Unread("no call after [TOOL_CALLS]")
    return Found(calls, prose_of(text[:at], text[i:]), bool(text[i:].strip()))


def _tok(*words: str) -> str:
    return r"<[｜|]" + "▁".join(words) + r"[｜|]>"


_DS_BEGIN, _DS_END, _DS_SEP = _tok("tool", "call", "begin"), _tok("tool", "call", "end"), _tok("tool", "sep")
_DS_CALL = re.compile(rf"{_DS_BEGIN}(.*?)(?:{_DS_END}|(?={_DS_BEGIN})|{_tok('tool', 'calls', 'end')}|\Z)", re.DOTALL)
_DS_SECTION = re.compile(rf"{_tok('tool', 'calls', 'begin')}|{_tok('tool', 'calls', 'end')}")


def deepseek(text: str, offered: Offered) -> Found:
    """DeepSeek V3 / R1 / V3.1 special tokens (vLLM `deepseek_v3`/`deepseek_v31` parser off): V3
    `<｜tool▁call▁begin｜>function<｜tool▁sep｜>name` + a ```json fence, V3.1 `name<｜tool▁sep｜>{…}`,
    inside `<｜tool▁calls▁begin｜>…<｜tool▁calls▁end｜>` (fullwidth bars and U+2581; ASCII bars too)."""
    units = list(_DS_CALL.finditer(text))
    if not units:
        raise Unread("no DeepSeek call")
    calls = []
    for unit in units:
        parts = re.split(f"({_DS_SEP})", unit.group(1), maxsplit=1)
        if len(parts) != 3:
            raise Unread("a DeepSeek call without <｜tool▁sep｜>")
        left, _, right = parts
        if left.strip() == "function":  # V3: the type, then the name on its own line and a fenced body
            name, _, body = right.strip().partition("\n")
            blocks = fences(body.strip())
            body = blocks[0].body if len(blocks) == 1 else body
        else:
            name, body = left, right
        calls.append(make_call(name, body, offered))
    start = min((m.start() for m in re.finditer(_tok("tool", "calls", "begin"), text)), default=units[0].start())
    after = _DS_SECTION.sub("", text[units[-1].end():])
    return Found(calls, prose_of(text[:start], after), bool(after.strip()))


_KIMI_CALL = re.compile(r"<\|tool_call_begin\|>\s*([^<]+?)\s*<\|tool_call_argument_begin\|>(.*?)"
                        r"(?:<\|tool_call_end\|>|(?=<\|tool_call_begin\|>)|(?=<\|tool_calls?_section_end\|>)|\Z)", re.DOTALL)
_KIMI_SECTION = re.compile(r"<\|tool_calls?_section_(?:begin|end)\|>")


def kimi(text: str, offered: Offered) -> Found:
    """Kimi-K2 special tokens (vLLM `kimi_k2` parser off): `<|tool_calls_section_begin|>
    <|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{…}<|tool_call_end|>…`; the
    `functions.name:0` id is kept, as Kimi's parser does."""
    units = list(_KIMI_CALL.finditer(text))
    if not units:
        raise Unread("no Kimi call")
    calls = []
    for unit in units:
        call_id = unit.group(1)
        name = re.sub(r":\d+\Z", "", call_id).removeprefix("functions.")
        calls.append(make_call(name, unit.group(2), offered, call_id))
    first = text.find("<|tool_call")
    after = _KIMI_SECTION.sub("", text[units[-1].end():])
    return Found(calls, prose_of(text[:first], after), bool(after.strip()))

def python_tag(text: str, offered: Offered) -> Found:
    """Llama 3.1/3.2 (vLLM `llama3_json` off, special tokens kept): `<|python_tag|>{"name", "parameters"}`,
    several separated by `;` (the `<|eom_id|>` after it is an end token, see `reasoning`)."""
    return after_prefix(text, r"<\|python_tag\|>", offered)


def granite(text: str, offered: Offered) -> Found:
    """IBM Granite 3.x (vLLM `granite` parser off): `<|tool_call|>[{"name", "arguments"}, …]`."""
    return after_prefix(text, r"<\|tool_call\|>", offered)


def phi4(text: str, offered: Offered) -> Found:
    """Phi-4-mini (vLLM `phi4_mini_json` parser off): `functools[{"name", "arguments"}, …]`."""
    return after_prefix(text, r"\bfunctools\s*(?=\[)", offered)


_ACTION = re.compile(r"(?m)^Action:\s*")


def command_r(text: str, offered: Offered) -> Found:
    """Cohere Command-R/R+ (tool-use template, no parser): `Action: ```json [{"tool_name", "parameters"}]```
    after an optional `Plan:`/prose line."""
    at = _ACTION.search(text)
    blocks = fences(text[at.end():])
    if not blocks or blocks[0].start != 0:
        raise Unread("Action: without a fenced JSON list")
    try:
        value = load_value(blocks[0].body)
    except NotJSON as exc:
        raise Unread(str(exc)) from None
    items = value if isinstance(value, list) else [value]
    if not all(isinstance(v, dict) and set(v) <= {"tool_name", "parameters"} and "tool_name" in v for v in items):
        raise Unread("not Command-R call objects")
    calls = [make_call(str(v["tool_name"]), v.get("parameters"), offered) for v in items]
    after = text[at.end() + blocks[0].end:]
    return Found(calls, prose_of(text[:at.start()], after), bool(after.strip()))


_FUNCTIONARY = re.compile(r"(?m)^>>>\s*([\w.\-]+)[ \t]*\n")


def functionary(text: str, offered: Offered) -> Found:
    """MeetKai Functionary v3 (llama.cpp / vLLM without its parser): `>>>name\\n{…}` per call,
    `>>>all\\n` before text."""
    units = list(_FUNCTIONARY.finditer(text))
    calls, prose = [], [text[:units[0].start()]]
    for n, unit in enumerate(units):
        nxt = units[n + 1].start() if n + 1 < len(units) else len(text)
        body = text[unit.end():nxt]
        if unit.group(1) == "all":
            prose.append(body)
        else:
            calls.append(make_call(unit.group(1), body, offered))
    if not calls:
        raise Unread("no calls")
    return Found(calls, prose_of(*prose), units[-1].group(1) == "all")


def _pythonic_calls(source: str, offered: Offered) -> list[dict[str, Any]]:
    try:
        tree = pyast.parse(source.strip(), "eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise Unread("not a Python expression") from None
    nodes = tree.elts if isinstance(tree, ast.List) else [tree]
    calls = []
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args
                and all(kw.arg for kw in node.keywords)):
            raise Unread("not keyword-only calls")
        try:
            args = {kw.arg: jsonable(ast.literal_eval(kw.value)) for kw in node.keywords}
        except (ValueError, TypeError, SyntaxError, NotJSON, RecursionError):
            raise Unread("an argument is not a literal") from None
        calls.append(make_call(node.func.id, args, offered))
    return calls


_PY_LIST = re.compile(r"(?m)^[ \t]*\[\s*([A-Za-z_]\w*)\s*\(|\A\s*([A-Za-z_]\w*)\s*\(")


def pythonic(text: str, offered: Offered) -> Found:
    """Llama 3.2 / Llama 4 (vLLM `pythonic`/`llama4_pythonic` parser off): `[fn(a="x", b=2), other()]`
    (optionally in `<|python_start|>…<|python_end|>`), making up the end of the text; arguments are
    Python literals (`ast.literal_eval`, never `eval`)."""
    body = text.replace("<|python_start|>", "").replace("<|python_end|>", "")
    for m in _PY_LIST.finditer(body):
        if (m.group(1) or m.group(2)) in offered:
            return Found(_pythonic_calls(body[m.start():], offered), prose_of(body[:m.start()]))
    raise Unread("no pythonic call")


def json_calls(text: str, offered: Offered) -> Found:
    """A server without a tool parser (Llama 3.x `llama3_json`, xLAM, many fine-tunes): the text ends
    with one or more `{"name", "arguments"|"parameters"}` objects (or a list of them, or its fenced
    block), after optional prose; only objects with nothing but the call keys."""
    body = text.strip()
    blocks = fences(body)
    if blocks and not body[blocks[-1].end:].strip():
        inner = blocks[-1].body.strip()
        if inner[:1] in "{[":
            values, end = json_run(inner, 0)
            if not inner[end:].strip():
                calls = [c for v in values for c in json_items(v, offered, need_arguments=bool(body[:blocks[-1].start].strip()))]
                return Found(calls, prose_of(body[:blocks[-1].start]))
    for start in _trailing_run(body):  # the first place from which the rest is only call objects
        prose = body[:start]
        try:
            values, _ = json_run(body, start)
            return Found([c for v in values for c in json_items(v, offered, need_arguments=bool(prose.strip()))],
                         prose_of(prose))
        except Unread:
            continue
    raise Unread("no JSON call")


_OPENING = re.compile(r"[\[{]")


def _trailing_run(text: str) -> list[int]:
    """Starts of the top-level `{…}`/`[…]` values that, with only separators between them, end `text`."""
    spans, i, brackets = [], 0, Brackets(text)
    while (found := _OPENING.search(text, i)) is not None:
        end = brackets.end(found.start())
        if end is None:
            i = found.start() + 1
            continue
        spans.append((found.start(), end))
        i = end
    run: list[int] = []
    tail = len(text)
    for start, end in reversed(spans):
        if text[end:tail].strip(" \t\r\n,;"):
            break
        run.insert(0, start)
        tail = start
    return run


# (marker, reader): the first reader whose marker is in the text decides; marker-less readers are
# tried in turn. Order: distinctive special tokens first, bare JSON last.
DIALECTS: list[tuple[re.Pattern[str] | None, Callable[[str, Offered], Found]]] = [
    (re.compile(re.escape("[TOOL_CALLS]")), mistral),
    (re.compile(r"<\|tool_call_begin\|>"), kimi),
    (re.compile(_tok("tool", "call", "begin")), deepseek),
    (re.compile("<minimax:tool_call>"), minimax),
    (re.compile("<function="), function_tags),
    (re.compile("<tool_call>", re.IGNORECASE), tool_call_tags),
    (re.compile(re.escape("<|python_tag|>")), python_tag),
    (re.compile(re.escape("<|tool_call|>")), granite),
    (re.compile(r"\bfunctools\s*\["), phi4),
    (_ACTION, command_r),
    (_FUNCTIONARY, functionary),
    (None, pythonic),
    (None, json_calls),
]


def read_calls(text: str, offered: Offered, *, at_end: bool = False) -> Found | None:
    """The calls written as text in `text`, or None (the text stays text). `at_end`: only the run of
    calls that ends the text (for text whose end is all that may be the answer, see `reasoning`):
    calls written earlier and followed by prose are drafts, not the turn's calls, and `prose` is then
    everything before that final run."""
    if not offered or not text.strip():
        return None
    if too_many_literal_values(text) is not None:  # every reader walks the brackets: ~1.5 us each (red team 9, F1)
        return None
    for marker, reader in DIALECTS:
        if marker is not None and not marker.search(text):
            continue
        if at_end:
            found = _final_run(text, offered, reader, marker or _STARTS.get(reader))
        else:
            try:
                found = reader(text, offered)
            except Unread:
                found = None
        if found is not None and found.calls and not (at_end and found.trailing):
            return found
        if marker is not None:
            return None
    return None


_STARTS: dict[Callable[[str, Offered], Found], re.Pattern[str]] = {pythonic: _PY_LIST}
"""Where a marker-less dialect's calls may start (json_calls finds its own trailing run)."""
_WORD = re.compile(r"\w", re.UNICODE)
_MARKUP = re.compile(r"<[|｜][^<>]{0,60}?[|｜]>|</?[\w:.\-]{1,40}>|\[/?[A-Z_]{2,20}\]")
_MARKUP_BEFORE = re.compile(rf"(?:\s*(?:{_MARKUP.pattern}))+\s*\Z")


def _says_words(prose: str) -> bool:
    """Whether text left beside calls says anything (wrapper tags and special tokens do not)."""
    return _WORD.search(_MARKUP.sub(" ", prose)) is not None


def _final_run(text: str, offered: Offered, reader: Callable[[str, Offered], Found],
               starts: re.Pattern[str] | None) -> Found | None:
    """The calls of the run that ends `text`, with everything before it as the prose. The text is cut
    where the dialect's calls start; each piece read alone must be calls and nothing that says a word
    (wrapper tags and special tokens say none). The run is the longest stretch of such pieces that ends
    the text: prose after a call (`No wait, ...`) makes it and every call before it a draft. Each piece
    is read once, so a reply of thousands of calls costs one reading of its length."""
    if starts is None:  # a marker-less reader that finds the trailing run itself (json_calls)
        try:
            return reader(text, offered)
        except Unread:
            return None
    cuts = [m.start() for m in starts.finditer(text)]
    calls: list[dict[str, Any]] = []
    first = None
    for i in range(len(cuts) - 1, -1, -1):
        piece = text[cuts[i]:cuts[i + 1] if i + 1 < len(cuts) else len(text)]
        try:
            found = reader(piece, offered)
        except Unread:
            break
        if not found.calls or _says_words(found.prose):
            break
        calls, first = found.calls + calls, i
    if first is None:
        return None
    before = text[:cuts[first]]
    if (wrapper := _MARKUP_BEFORE.search(before)) is not None:  # `<tool_call>` around `<function=`, a section token
        before = before[:wrapper.start()]
    return Found(calls, before.strip(), False)


def harmony_calls(raw: Any, offered: Offered) -> list[dict[str, Any]]:
    """gpt-oss (vLLM `openai` parser off): commentary messages addressed `to=functions.<tool>` in
    unparsed harmony text."""
    found = []
    for _, header, body in harmony_messages(content_text(raw)):
        target = re.search(r"to=functions\.([\w.-]+)", header)
        if target and target.group(1) in offered:
            found.append({"type": "function", "function": {"name": target.group(1), "arguments": body}})
    return found


def notify_error_text(calls: list[dict[str, Any]], offered: Offered) -> str | None:
    """TGI's way of answering with text when tools are offered: one call to its pseudo-tool
    `notify_error` (not an offered tool) with `{"error": text}`. The text, or None."""
    if len(calls) != 1 or "notify_error" in offered:
        return None
    fn = calls[0].get("function") if isinstance(calls[0].get("function"), dict) else calls[0]
    if str(fn.get("name") or "").strip() != "notify_error":
        return None
    args = fn.get("arguments")
    if isinstance(args, str):
        try:
            args = load_value(args)
        except NotJSON:
            return None
    if isinstance(args, dict) and set(args) == {"error"} and isinstance(args["error"], str):
        return args["error"].strip()
    return None
