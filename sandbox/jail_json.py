"""JSON exactly as both ends of the sandbox wire accept it (standard library only: also runs in the jail).

Replies come from processes that run untrusted code, so the host parses them with every limit applied
*before* anything can recurse: a non-recursive pre-scan measures the nesting depth (string literals are
cut out with C-speed bytes operations, the remaining brackets are summed), then `json.loads` runs with hooks
that refuse NaN/Infinity, numbers that overflow to infinity and integers beyond 64 bits (the number
hooks only when the text holds a run of 19 digits or an exponent: called per number, they made a
720 KB state cost the host 113 ms to parse, and without either no number can break those rules); a lone
surrogate (which strict UTF-8 decoding cannot catch when it arrives as a `\\udXXX` escape) is refused
after parsing, and an object that names one key twice is refused (JSON allows it, and `json.loads` keeps
the last one silently, so two different values would reach the host as one). The worker applies the same
rules when it serialises, so an honest env gets a clear `unserializable` error instead of a host-side
refusal: before `json.dumps` runs, `plain` rebuilds the value from the base types' own methods (a
subclass's `items()`, `__iter__`, `__str__` or `__repr__` cannot choose what is written) and refuses keys
that become the same JSON string (`101` and `"101"`, `True` and `"true"`, `None` and `"null"`).

Needs Python >= 3.11 (a possessive quantifier keeps the literal regex linear on every input).
"""

import itertools
import json
import math
import re

if __package__:  # on the host, as sandbox.jail_json
    from envscaler_core.wire_values import STRING_LITERAL, count_values
else:  # in the jail, wire_values.py sits next to this file (sandbox.pool.JAIL_FILES)
    from wire_values import STRING_LITERAL, count_values

MAX_INT = (1 << 63) - 1
MAX_INT_CHARS = 20  # "-9223372036854775808"
_NOT_STRUCTURAL = bytes(b for b in range(256) if b not in b'[]{}"')
_STEPS = bytes.maketrans(b"[]{}", b"\x01\xff\x01\xff")
_LONG_DIGITS = re.compile(r"[0-9]{19,}")
_EXPONENT = re.compile(r"[0-9.][eE]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class JSONLimitError(ValueError):
    """The document breaks a wire rule; the message names which."""


class JSONTooLarge(JSONLimitError):
    """The serialised text is longer than the caller's cap (checked before the slower rules)."""

    def __init__(self, size: int, cap: int) -> None:
        super().__init__(f"{size} characters, over the cap of {cap}")
        self.size, self.cap = size, cap


def _brackets_outside_strings(raw: bytes) -> bytes:
    """The `[]{}` of `raw` that a JSON parser would nest on, in order, using only C-speed bytes operations.

    Escapes go first: escaped backslashes pair up left to right exactly as the lexer reads them, then
    escaped quotes (only strings may hold escapes; outside one the parser stops at the backslash), so
    quotes then strictly alternate. Keeping only brackets and quotes, an adjacent quote pair never
    encloses a bracket, so dropping pairs keeps the parity; the few literals left hold brackets."""
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    kept = raw.translate(None, _NOT_STRUCTURAL)
    while b'""' in kept:
        kept = kept.replace(b'""', b"")
    return STRING_LITERAL.sub(b"", kept) if b'"' in kept else kept


def too_deep(raw: bytes, max_depth: int) -> bool:
    """True when the JSON text `raw` nests arrays/objects more than `max_depth` deep. Never recurses."""
    if raw.count(b"[") + raw.count(b"{") <= max_depth:  # brackets inside strings only make this conservative
        return False
    steps = _brackets_outside_strings(raw).translate(_STEPS)
    if b"\x01" * (max_depth + 1) in steps:  # the usual bomb: a run of openers
        return True
    return max(itertools.accumulate(memoryview(steps).cast("b")), default=0) > max_depth


def _refuse_constant(name: str) -> float:
    raise JSONLimitError(f"{name} is not JSON")


def _finite(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise JSONLimitError(f"number {literal[:30]} overflows to infinity")
    return value


def _bounded_int(literal: str) -> int:
    if len(literal) > MAX_INT_CHARS:
        raise JSONLimitError(f"integer of {len(literal)} digits (the wire carries 64-bit integers)")
    value = int(literal)
    if not -MAX_INT - 1 <= value <= MAX_INT:
        raise JSONLimitError(f"integer {literal} is outside the 64-bit range")
    return value


def _unique_keys(pairs: list) -> dict:
    """`object_pairs_hook`: an object naming a key twice is refused, never collapsed to its last value."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise JSONLimitError(f"an object names the key {key[:60]!r} twice")
    return obj


class JSONTooManyValues(JSONTooLarge):
    """The text holds more values than the caller's cap (the host's memory grows with values, not characters)."""

    def __init__(self, count: int, cap: int) -> None:
        JSONLimitError.__init__(self, f"{count} values, over the cap of {cap}")
        self.size, self.cap = count, cap


class _At(ValueError):
    """A value `plain` refuses, with the JSON Pointer of where it sits (filled in on the way out)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message, self.path = message, []

    def __str__(self) -> str:
        where = "/" + "/".join(reversed(self.path)) if self.path else "the top level"
        return self.message.replace("{at}", where)


def _pointer(token) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def _json_key(key) -> str:
    """The JSON string `json.dumps` writes for a dict key, computed from the base types only."""
    kind = type(key)  # type(), never isinstance(): that asks the object's own __class__, which it may fake
    if kind is str:
        return key
    if issubclass(kind, str):
        return str.__str__(key)
    if key is True or key is False:
        return "true" if key else "false"
    if key is None:
        return "null"
    if issubclass(kind, int):
        return int.__repr__(key)
    if issubclass(kind, float):
        if not math.isfinite(key):
            raise _At(f"key {float.__repr__(key)} of {{at}} is not JSON")
        return float.__repr__(key)
    raise _At(f"keys must be str, int, float, bool or None, not {type(key).__name__} (at {{at}})")


def plain(value, max_depth: int):
    """`value` rebuilt from exact `dict`, `list`, `str`, `int`, `float`, `bool` and `None`, read through the
    base types' own methods (`dict.items`, `list.copy`, `str.__str__`, ...), so what `json.dumps` then
    writes is what the containers hold whatever their subclasses override. Raises ValueError naming the
    JSON Pointer of two keys that become the same JSON string, or of a value nested deeper than
    `max_depth`; TypeError for a value JSON has no type for."""
    return _plain(value, max_depth)


_LEAVES = frozenset((str, int, float, bool, type(None)))  # exact types json.dumps writes as they are


def _plain(value, room: int):
    kind = type(value)
    if kind in _LEAVES:
        return value
    if issubclass(kind, dict):  # issubclass(type(...)): isinstance would ask the value's own __class__
        if room <= 0:
            raise _At("nesting deeper than the limit at {at}")
        out = {}
        for key, item in dict.items(value):
            name = key if type(key) is str else _json_key(key)
            if name in out:
                first = next(k for k in dict.keys(value) if _json_key(k) == name)
                raise _At(f"keys {first!r} and {key!r} of {{at}} both become the JSON key {name!r} (one would "
                          "hide the other)")
            if type(item) in _LEAVES:  # inline: most values are leaves, and a call per leaf was most of the cost
                out[name] = item
                continue
            try:
                out[name] = _plain(item, room - 1)
            except _At as exc:
                exc.path.append(_pointer(name))
                raise
        return out
    if issubclass(kind, (list, tuple)):
        if room <= 0:
            raise _At("nesting deeper than the limit at {at}")
        items = list.copy(value) if issubclass(kind, list) else tuple.__getitem__(value, slice(None))
        out_list = []
        for index, item in enumerate(items):
            if type(item) in _LEAVES:
                out_list.append(item)
                continue
            try:
                out_list.append(_plain(item, room - 1))
            except _At as exc:
                exc.path.append(str(index))
                raise
        return out_list
    if issubclass(kind, str):
        return str.__str__(value)
    if issubclass(kind, int):
        return int.__int__(value)
    if issubclass(kind, float):
        return float.__float__(value)
    raise TypeError(f"Object of type {kind.__name__} is not JSON serializable")


def loads(raw: bytes, max_depth: int, max_values: int | None = None):
    """Parse untrusted UTF-8 JSON under every wire rule; raises JSONLimitError (a ValueError) naming it.
    With `max_values`, text holding more values is refused before any object is built."""
    try:
        text = raw.decode("utf-8")  # strict: refuses encoded surrogates, overlongs, truncated sequences
    except UnicodeDecodeError as exc:
        raise JSONLimitError(f"not valid UTF-8 (byte {exc.start})") from None
    if too_deep(raw, max_depth):
        raise JSONLimitError(f"nesting deeper than {max_depth} levels")
    if max_values is not None and (count := count_values(raw)) > max_values:
        raise JSONTooManyValues(count, max_values)
    try:
        if _LONG_DIGITS.search(text) or _EXPONENT.search(text):
            value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite, parse_int=_bounded_int,
                               object_pairs_hook=_unique_keys)
        else:  # no number here has 19 digits or an exponent: every int fits 64 bits, every float is finite
            value = json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_unique_keys)
    except JSONLimitError:
        raise
    except (ValueError, RecursionError) as exc:
        raise JSONLimitError(f"not JSON ({str(exc)[:120]})") from None
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise JSONLimitError("a string holds a lone surrogate (not valid Unicode)") from None
    return value


def dumps(value, max_depth: int, max_chars: int | None = None, max_values: int | None = None) -> str:
    """Serialise for the wire: compact, UTF-8-clean, no NaN, bounded depth, length and integer size.

    Raises TypeError (not JSON), ValueError (NaN, a lone surrogate, keys that collide as JSON strings,
    JSONLimitError, JSONTooLarge) or RecursionError."""
    try:
        value = _plain(value, max_depth)
    except _At as exc:
        raise ValueError(str(exc).replace("the limit", f"{max_depth} levels")) from None
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    if max_chars is not None and len(text) > max_chars:
        raise JSONTooLarge(len(text), max_chars)
    raw = text.encode("utf-8")  # UnicodeEncodeError (a ValueError) on a lone surrogate
    if too_deep(raw, max_depth):
        raise JSONLimitError(f"nesting deeper than {max_depth} levels")
    if max_values is not None and (count := count_values(raw)) > max_values:
        raise JSONTooManyValues(count, max_values)
    if _LONG_DIGITS.search(text):
        loads(raw, max_depth)  # 19+ digits in a row (maybe inside a string): the exact 64-bit check decides
    return text
