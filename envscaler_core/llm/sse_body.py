"""A non-streaming request answered with a stream: `data:` chunks in the 200 body.

Some proxies and gateways (and servers that ignore `stream: false`) send the chunks of a streamed
reply (`chat.completion.chunk` objects, one per `data:` line, `data: [DONE]` last) as the body of a
request that did not ask to stream. Each chunk has one reading, so the reply is put back together the
way a streaming client does, into the message the same endpoint would have sent unstreamed, which is
then read like any other reply (`replies.normalise_assistant`: one reading for both):

- lines are split as the SSE spec says, on CR, LF and CRLF only (a U+2028, U+2029, U+0085 or a
  control character sent raw inside a JSON string is part of its line), a UTF-8 byte-order mark before
  the first line is ignored, `:` lines are comments, `data:` with or without its space;
- text deltas joined (`content`, `reasoning_content`, `reasoning`, `thinking`, `refusal`); a `content`
  streamed as lists of parts (Mistral, Magistral's `thinking` parts) stays a list of parts, adjacent
  parts of one kind joined;
- tool-call deltas merged by their `index` (the id, type, name and `extra_content` from the fragment
  that has them, argument strings joined); a fragment without an `index` continues the call before it
  unless it starts another (its own id or name, the earlier call's arguments already complete: the
  same test the non-streamed reader applies to entries sharing an index, `tool_calls.continues_call`);
- the legacy `function_call` deltas (name, then argument pieces) merged into one `function_call`;
- OpenRouter's `reasoning_details` deltas merged by their `index` (every string field joined: `text`,
  `summary`, `data`, `signature`, ...; the labels `type`, `format` and `id` kept once), kept whole;
- the last `finish_reason` of each choice, and the `usage` every chunk reported, merged (`merged_usage`:
  a field a later chunk leaves out keeps its value, a count repeated as a running total is not summed).

A stream that stops before its end (no `finish_reason` and no `[DONE]`) or holds a chunk that is not
JSON cannot be read as a whole reply: `StreamUnreadable` (a ValueError, carrying the `usage` any chunk
reported, since the provider billed it), which the gateway retries like any transient bad answer
(`retry.BadAnswer`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from envscaler_core.llm.replies.tool_calls import continues_call

_JOINED = ("reasoning_content", "reasoning", "thinking", "refusal")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # the SSE spec's line ends, and only those (not str.splitlines)
_BOM = "\ufeff"
_DETAIL_LABELS = ("type", "format", "id")
"""Fields of a `reasoning_details` entry that each fragment of it may repeat: kept once, never joined."""
_TEXT_PARTS = {"text": "text", "output_text": "text", "reasoning": "text", "thinking": "thinking"}
"""Kinds of `content` parts a stream sends in pieces, and the field that holds each one's text."""


class _Pieces(list):
    """The pieces of one streamed string field of a `reasoning_details` entry, joined at the end (a list
    the provider sent as a value stays a list)."""


class StreamUnreadable(ValueError):
    """An event stream that is no whole reply; `usage` is what its chunks reported (billed anyway)."""

    def __init__(self, message: str, usage: Any = None) -> None:
        super().__init__(message)
        self.usage = usage


def looks_like_sse(raw: bytes) -> bool:
    """Whether the body is an event stream rather than one JSON document (a byte-order mark before it
    does not hide it)."""
    head = raw.lstrip().removeprefix(_BOM.encode()).lstrip()[:16]
    return head.startswith((b"data:", b"event:", b"id:", b":"))


def _events(text: str) -> list[str]:
    """The `data` of each event (multi-line data joined by newlines), read as the SSE spec says: lines
    end at CR, LF or CRLF; a blank line ends an event; `:` starts a comment; a field's value follows
    its first colon, less one leading space; a field without a colon has an empty value."""
    events, data = [], []
    for line in _LINE_BREAK.split(text.removeprefix(_BOM)):
        if not line.strip(" \t"):
            if data:
                events.append("\n".join(data))
                data = []
            continue
        if line.startswith(":"):
            continue
        name, colon, value = line.partition(":")
        if name == "data":
            data.append(value[1:] if colon and value.startswith(" ") else value)
    if data:
        events.append("\n".join(data))
    return events


class _Turn:
    """One choice's deltas, collected as lists and joined once at the end (joining as they come copies
    the text so far for every chunk)."""

    def __init__(self) -> None:
        self.texts: dict[str, list[str]] = {}
        self.content: list[Any] = []
        self.calls: list[dict[str, Any]] = []
        self.by_index: dict[int, dict[str, Any]] = {}
        self.function_call: dict[str, Any] | None = None
        self.details: list[dict[str, Any]] = []
        self.details_by_index: dict[int, dict[str, Any]] = {}
        self.other: dict[str, Any] = {}

    def add(self, delta: dict[str, Any]) -> None:
        for key, value in delta.items():
            if value is None:
                continue
            if key == "content":
                if isinstance(value, str | list) and value:
                    self.content.append(value)
            elif key in _JOINED and isinstance(value, str):
                if value:
                    self.texts.setdefault(key, []).append(value)
            elif key == "tool_calls":
                for fragment in [value] if isinstance(value, dict) else value if isinstance(value, list) else []:
                    if isinstance(fragment, dict):
                        self._call(fragment)
            elif key == "function_call" and isinstance(value, dict):
                self._function_call(value)
            elif key == "reasoning_details" and isinstance(value, list):
                for detail in value:
                    if isinstance(detail, dict):
                        self._detail(detail)
            elif key != "role":
                self.other.setdefault(key, value)

    def _call(self, fragment: dict[str, Any]) -> None:
        index = fragment.get("index")
        if isinstance(index, int) and not isinstance(index, bool):
            slot = self.by_index.get(index)
        else:
            index, slot = None, (self.calls[-1] if self.calls else None)
        if slot is None or not _continues(slot, fragment):
            slot = {"id": None, "type": "function", "function": {"name": "", "arguments": []}}
            self.calls.append(slot)
            if index is not None:
                self.by_index[index] = slot
        if fragment.get("id") and not slot["id"]:
            slot["id"] = fragment["id"]
        if isinstance(fragment.get("type"), str) and fragment["type"]:
            slot["type"] = fragment["type"]
        if isinstance(fragment.get("extra_content"), dict):  # Gemini's thought signature
            slot.setdefault("extra_content", fragment["extra_content"])
        fn = fragment.get("function") if isinstance(fragment.get("function"), dict) else {}
        if fn.get("name") and not slot["function"]["name"]:
            slot["function"]["name"] = fn["name"]
        _add_arguments(slot["function"], fn.get("arguments"))

    def _function_call(self, piece: dict[str, Any]) -> None:
        if self.function_call is None:
            self.function_call = {"name": "", "arguments": []}
        if piece.get("name") and not self.function_call["name"]:
            self.function_call["name"] = piece["name"]
        _add_arguments(self.function_call, piece.get("arguments"))

    def _detail(self, detail: dict[str, Any]) -> None:
        """A `reasoning_details` fragment: a new `index` starts a detail; one already seen continues it,
        every string field joined (`text`, `summary`, `data`, `signature`, ...: a provider may split any
        of them), except the labels a fragment repeats (`type`, `format`, `id`), kept from the first."""
        index = detail.get("index")
        index = index if isinstance(index, int) and not isinstance(index, bool) else None
        known = self.details_by_index.get(index) if index is not None else None
        if known is None:
            known = {k: (_Pieces([v]) if isinstance(v, str) and k not in _DETAIL_LABELS else v)
                     for k, v in detail.items()}
            self.details.append(known)
            if index is not None:
                self.details_by_index[index] = known
            return
        for key, value in detail.items():
            pieces = known.get(key)
            if isinstance(value, str) and key not in _DETAIL_LABELS and isinstance(pieces, _Pieces):
                pieces.append(value)
            elif isinstance(value, str) and key not in _DETAIL_LABELS and pieces is None:
                known[key] = _Pieces([value])
            elif value is not None and pieces in (None, ""):
                known[key] = value

    def message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": _content(self.content)}
        message.update({key: "".join(parts) for key, parts in self.texts.items()})
        for key, value in self.other.items():
            message.setdefault(key, value)
        if self.calls:
            message["tool_calls"] = [{**call, "function": _joined(call["function"])} for call in self.calls]
        if self.function_call is not None:
            message["function_call"] = _joined(self.function_call)
        if self.details:
            message["reasoning_details"] = [
                {k: "".join(v) if isinstance(v, _Pieces) else v for k, v in d.items()}
                for d in self.details]
        return message


def _continues(slot: dict[str, Any], fragment: dict[str, Any]) -> bool:
    """Whether `fragment` is more of the call in `slot`: a fragment that names the same id (servers that
    repeat it on every piece), or one that adds to a call whose arguments have not begun, does; else the
    non-streamed reader's test for entries sharing an index (another id or tool, or the call before
    already complete, starts a new call)."""
    fn = fragment.get("function") if isinstance(fragment.get("function"), dict) else {}
    name, known = fn.get("name"), slot["function"]["name"]
    if name and known and name != known:
        return False
    if fragment.get("id") and slot["id"]:
        return fragment["id"] == slot["id"]
    args = slot["function"]["arguments"]
    joined = "".join(args) if isinstance(args, list) else args
    if isinstance(joined, str) and not joined.strip():
        return True
    return continues_call({"id": slot["id"], "function": {"name": known, "arguments": joined}}, fragment)


def _add_arguments(fn: dict[str, Any], args: Any) -> None:
    if isinstance(args, str):
        if isinstance(fn["arguments"], list):
            fn["arguments"].append(args)
    elif isinstance(args, dict):
        fn["arguments"] = args


def _joined(fn: dict[str, Any]) -> dict[str, Any]:
    args = fn["arguments"]
    return {**fn, "arguments": "".join(args) if isinstance(args, list) else args}


def _content(pieces: list[Any]) -> Any:
    """The streamed `content`: one string, or (when any piece came as a list of parts) one list of parts,
    adjacent text or thinking parts of one kind joined into one part."""
    if not pieces:
        return None
    if all(isinstance(p, str) for p in pieces):
        return "".join(pieces)
    parts: list[Any] = []
    for piece in pieces:
        for part in [{"type": "text", "text": piece}] if isinstance(piece, str) else piece:
            field = _TEXT_PARTS.get(part.get("type")) if isinstance(part, dict) else None
            last = parts[-1] if parts else None
            if field is not None and isinstance(last, dict) and last.get("type") == part.get("type") \
                    and isinstance(last.get(field), list):
                last[field].append(_text_of(part.get(field, part.get("text"))))
                last.update({k: v for k, v in part.items() if k not in (field, "text") and v is not None})
            elif field is not None:
                parts.append({**part, field: [_text_of(part.get(field, part.get("text")))]})
            else:
                parts.append(part)
    return [{**p, _TEXT_PARTS[p["type"]]: "".join(p[_TEXT_PARTS[p["type"]]])}
            if isinstance(p, dict) and p.get("type") in _TEXT_PARTS and isinstance(p.get(_TEXT_PARTS[p["type"]]), list)
            else p for p in parts]


def _text_of(value: Any) -> str:
    """A part's text: a string, a `{"text"}` object or a list of either (Magistral's thinking parts)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return _text_of(value.get("text"))
    if isinstance(value, list):
        return "".join(_text_of(v) for v in value)
    return ""


def merged_usage(before: Any, later: Any) -> Any:
    """The usage of a stream whose chunks each report part of it (Anthropic's shape: the prompt in the
    first chunk, the output only in the last; others repeat running totals): a field a later chunk
    leaves out keeps its earlier value, a count reported twice is the larger (a running total is not
    summed), nested objects (`prompt_tokens_details`) merged the same way, any other value the later."""
    if not isinstance(before, dict) or not isinstance(later, dict):
        return later
    out = dict(before)
    for key, value in later.items():
        known = out.get(key)
        if value is None:
            continue
        if isinstance(known, dict) and isinstance(value, dict):
            out[key] = merged_usage(known, value)
        elif _is_count(known) and _is_count(value):
            out[key] = max(known, value)
        else:
            out[key] = value
    return out


def _is_count(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def completion_from_sse(raw: bytes) -> dict[str, Any]:
    """One chat completion put together from the chunks in `raw`; StreamUnreadable when it cannot be."""
    text = raw.decode("utf-8")  # UnicodeDecodeError is a ValueError
    chunks: list[dict[str, Any]] = []
    done = False
    problem: str | None = None
    usage: Any = None
    for n, data in enumerate(_events(text.lstrip(" \t\r\n")), start=1):
        if data.strip() == "[DONE]":
            done = True
            break
        try:
            chunk = json.loads(data)
        except RecursionError:
            problem = problem or "an event-stream chunk nests JSON too deeply to read"
            continue
        except json.JSONDecodeError as exc:
            problem = problem or f"event-stream chunk {n} is not JSON ({exc.msg})"
            continue
        if not isinstance(chunk, dict):
            problem = problem or f"event-stream chunk {n} is a JSON {type(chunk).__name__}, not an object"
            continue
        if chunk.get("usage"):
            usage = merged_usage(usage, chunk["usage"])
        if problem is not None:
            continue  # read on only for the usage the provider billed
        if chunk.get("error") not in (None, "", {}, []):
            # a failure relayed mid-stream: read as the error it is, with the usage reported before it
            # (the provider billed it); OpenRouter's error chunk also carries a choice whose
            # `finish_reason` is "error", which says no more than the error does
            return {"error": chunk["error"]} if usage is None else {"error": chunk["error"], "usage": usage}
        chunks.append(chunk)
    if problem is not None:
        raise StreamUnreadable(problem, usage)
    if not chunks:
        raise StreamUnreadable("an event stream without a chunk")
    turns: dict[int, _Turn] = {}
    finish: dict[int, Any] = {}
    for chunk in chunks:
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            index = choice.get("index", 0) if isinstance(choice.get("index", 0), int) else 0
            turn = turns.setdefault(index, _Turn())
            delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else choice.get("message")
            if not isinstance(delta, dict) and isinstance(choice.get("text"), str):
                delta = {"content": choice["text"]}  # the legacy completions API's stream
            if isinstance(delta, dict):
                turn.add(delta)
            if choice.get("finish_reason"):
                finish[index] = choice["finish_reason"]
    if not done and not finish:
        raise StreamUnreadable(f"an event stream that stops before its end ({len(chunks)} chunk(s), "
                               "no finish_reason and no [DONE])", usage)
    choices = [{"index": index, "message": turns[index].message(), "finish_reason": finish.get(index)}
               for index in sorted(turns)]
    first = chunks[0]
    body: dict[str, Any] = {"id": first.get("id"), "object": "chat.completion", "created": first.get("created"),
                            "model": first.get("model"), "choices": choices}
    if usage is not None:
        body["usage"] = usage
    return body
