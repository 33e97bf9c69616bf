"""The one rule every value entering the sandbox meets on the host, before anything is built from it.

The wire carries 64-bit integers (`jail_json` refuses wider ones in replies); the same bound applies to
what the host takes in: tool schemas (enum, const, bounds, any keyword), call arguments on every path, and
states and EnvScaler marker configs at import and validate. Besides keeping the doc's promise, the bound
is what keeps sets and dicts of integers cheap: Python hashes an int as its value modulo 2^61-1, so
unbounded integers let anyone choose thousands that share one hash, and every set built from them costs
time quadratic in its size (red team 7, F1/F2: a 10,000-member enum made every call cost the host seconds).
Within 64 bits at most nine integers share a hash.

The walk is iterative (no recursion, no generator per node), counts nodes, and names where the first
problem sits as a JSON Pointer under the caller's `where`. `count_values` counts the values of JSON
*text* before anything parses it: the sandbox's wire (`sandbox.jail_json`, on both ends), serve-mcp's
messages and every tool call's arguments text an agent sends the host (`llm.replies.parse_arguments`,
BFCL's `decode_tool_calls`) use this one counter.

Standard library only: the sandbox copies this file into the jail beside `jail_json` (sandbox.pool.JAIL_FILES).
"""

from __future__ import annotations

import re
from typing import Any

MIN_INT, MAX_INT = -(1 << 63), (1 << 63) - 1

MAX_STATE_VALUES = 50_000
"""Most values (containers and scalars; keys not counted) in one state or result the host holds, and in a
config it restores EnvScaler's markers from: the host's memory grows with values, not characters (red team
7, F5: a 1 MB state of 250,000 empty lists made validation peak at 1 GB of host RSS)."""


MAX_MESSAGE_VALUES = 200_000
"""Most JSON values in one piece of text an agent sends the host: a serve-mcp message, a tool call's
arguments (gym, rollouts, BFCL), refused from `count_values` before it is parsed: as many as one call's
arguments can be checked against a schema in (sandbox.schema.MAX_CHECK_STEPS). Parsing costs the host
per value, not per character: 4 MB of `[],[],...` (1.4 million values) cost serve-mcp 33 s and 501 MB
(red team 7, F3) and one gym step 4-9 s and up to 600 MB (red team 8, F2); a 4 MB string costs 0.1 s."""

STRING_LITERAL = re.compile(rb'"[^"]*+(?:"|\Z)')
"""A JSON string literal in bytes whose escaped quotes are gone, or an unterminated tail (possessive: linear)."""


def count_values(raw: bytes) -> int:
    """The values (containers and scalars) in JSON text, counted with C-speed bytes operations only:
    every value but the first opens a container or follows a comma outside strings, and an empty
    container holds none. Exact for valid JSON (the parser refuses the rest)."""
    if raw.count(b",") + raw.count(b"[") + raw.count(b"{") == 0:
        return 1
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    if b'"' in raw:  # commas and brackets inside string literals are not values: each literal becomes `s`
        raw = STRING_LITERAL.sub(b"s", raw)
    raw = raw.translate(None, b" \t\r\n")
    return raw.count(b",") + raw.count(b"[") + raw.count(b"{") - raw.count(b"[]") - raw.count(b"{}") + 1


def too_many_values(text: str) -> str | None:
    """"hold N JSON values, over the ..." when agent-sent JSON text holds more than MAX_MESSAGE_VALUES, else
    None: the caller names what it read ("arguments ...") and refuses before parsing (red team 8, F2)."""
    count = count_values(text.encode("utf-8", "surrogatepass"))
    if count <= MAX_MESSAGE_VALUES:
        return None
    return (f"hold {count:,} JSON values, over the {MAX_MESSAGE_VALUES:,} the host parses "
            "(envscaler_core.wire_values.MAX_MESSAGE_VALUES)")


MAX_LENIENT_CHARS = 64 * 1024
"""The longest text read as anything but strict JSON (repaired JSON, Python literals, one object in a fence
or in prose): those readings are for what a model writes by hand, and they walk the text in Python, ~1-2 us a
character against the strict parser's nanoseconds (rt14-B F3: 4 MB without a comma or bracket, `{'a': 'x'
'x' ...}`, a run of quotes, minus signs or fence openers, cost 3-7 s of host CPU per step, sent again at
every step; 64 KiB of the worst of them costs ~0.1 s). Longer text must be strict JSON."""


def too_many_literal_values(text: str) -> str | None:
    """Like `too_many_values`, for text about to be read as something other than JSON (Python literals,
    repaired JSON): there a `"` inside a single-quoted string is no string boundary, so `count_values`
    would skip every value up to the next `"` (red team 9, F1: 4 MB counted as 2 values, parsed into 1.4
    million lists). Every comma and opener counts here, inside strings too: an upper bound for any literal
    syntax (tuples included), which only text with 200,000 commas in its strings can be wrong about."""
    raw = text.encode("utf-8", "surrogatepass")
    count = raw.count(b",") + raw.count(b"[") + raw.count(b"{") + raw.count(b"(") + 1
    if count <= MAX_MESSAGE_VALUES:
        return None
    return (f"may hold up to {count:,} values (commas and brackets counted, strings included: it is not JSON), "
            f"over the {MAX_MESSAGE_VALUES:,} the host parses (envscaler_core.wire_values.MAX_MESSAGE_VALUES)")


def not_read_leniently(text: str) -> str | None:
    """Why text that is no strict JSON is not read leniently (repaired, as a literal, or searched for one
    wrapped object): longer than MAX_LENIENT_CHARS, or more values than the literal bound; None when it may be."""
    if len(text) > MAX_LENIENT_CHARS:
        return (f"is {len(text):,} characters, over the {MAX_LENIENT_CHARS:,} read as anything but strict JSON "
                "(envscaler_core.wire_values.MAX_LENIENT_CHARS)")
    return too_many_literal_values(text)


def _pointer(parents: dict[int, tuple[int, str]], at: int, where: str) -> str:
    """The JSON Pointer of stack entry `at`, rebuilt from its parents only when a problem is reported."""
    parts: list[str] = []
    while at in parents:
        at, token = parents[at]
        parts.append(token.replace("~", "~0").replace("/", "~1"))
    return where + ("/" + "/".join(reversed(parts)) if parts else "")


def value_problem(value: Any, where: str, *, max_depth: int | None = None, max_nodes: int | None = None) -> str | None:
    """Why `value` may not enter the sandbox (naming where, e.g. `file_claim/amount`), or None.

    Refuses integers outside the signed 64-bit range, nesting deeper than `max_depth` and more than
    `max_nodes` values (containers and scalars; keys are not counted). Its own cost is one step per node:
    a container reached again through another path (a Python-built schema sharing one sub-schema between
    branches) is walked again only if reached deeper than before, so sharing costs no more than the tree of
    distinct objects (a 24-level union of two branches sharing one schema took 2^24 steps: 117 s)."""
    seen: dict[int, int] = {}  # id of a container walked -> the shallowest depth it was walked at
    nodes = 0
    work: list[tuple[Any, int, int]] = [(value, 1, 0)]  # (value, depth, its id in `parents`)
    parents: dict[int, tuple[int, str]] = {}
    next_id = 1
    while work:
        item, depth, me = work.pop()
        nodes += 1
        if max_nodes is not None and nodes > max_nodes:
            return f"{where}: more than {max_nodes:,} values (the most the host holds of one value)"
        kind = type(item)
        if kind is int or (isinstance(item, int) and not isinstance(item, bool)):
            if not MIN_INT <= item <= MAX_INT:
                return (f"{_pointer(parents, me, where)}: integer of {int.bit_length(item):,} bits is outside the "
                        "64-bit range (the wire carries 64-bit integers)")
            continue
        if kind is dict or isinstance(item, dict):
            children: Any = dict.items(item)
        elif kind is list or isinstance(item, (list, tuple)):
            children = enumerate(item)
        else:
            continue
        if max_depth is not None and depth > max_depth:
            return f"{_pointer(parents, me, where)}: nested more than {max_depth} levels deep"
        if seen.get(id(item), depth + 1) <= depth:
            continue
        seen[id(item)] = depth
        for key, child in reversed(list(children)):  # reversed: the first problem in document order is named
            if type(child) in (str, float, bool) or child is None:  # leaves: counted, nothing to check
                nodes += 1
                if max_nodes is not None and nodes > max_nodes:
                    break
                continue
            parents[next_id] = (me, str(key))
            work.append((child, depth + 1, next_id))
            next_id += 1
    if max_nodes is not None and nodes > max_nodes:
        return f"{where}: more than {max_nodes:,} values (the most the host holds of one value)"
    return None
