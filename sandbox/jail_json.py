"""JSON exactly as both ends of the sandbox wire accept it (standard library only: also runs in the jail).

Replies come from processes that run untrusted code, so the host parses them with every limit applied
*before* anything can recurse: a non-recursive pre-scan measures the nesting depth (string literals are
cut out with C-speed bytes operations, the remaining brackets are summed), then `json.loads` runs with hooks
that refuse NaN/Infinity, numbers that overflow to infinity and integers beyond 64 bits (the number
hooks only when the text holds a run of 19 digits or an exponent: called per number, they made a
720 KB state cost the host 113 ms to parse, and without either no number can break those rules); a lone
surrogate (which strict UTF-8 decoding cannot catch when it arrives as a `\\udXXX` escape) is refused
after parsing. The worker applies the same rules when it serialises, so an honest env gets a clear
`unserializable` error instead of a host-side refusal.

Needs Python >= 3.11 (a possessive quantifier keeps the literal regex linear on every input).
"""

import itertools
import json
import math
import re

MAX_INT = (1 << 63) - 1
MAX_INT_CHARS = 20  # "-9223372036854775808"
_QUOTED = re.compile(rb'"[^"]*+(?:"|\Z)')  # on brackets and quotes only: a literal, or an unterminated tail
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
    return _QUOTED.sub(b"", kept) if b'"' in kept else kept


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


def loads(raw: bytes, max_depth: int):
    """Parse untrusted UTF-8 JSON under every wire rule; raises JSONLimitError (a ValueError) naming it."""
    try:
        text = raw.decode("utf-8")  # strict: refuses encoded surrogates, overlongs, truncated sequences
    except UnicodeDecodeError as exc:
        raise JSONLimitError(f"not valid UTF-8 (byte {exc.start})") from None
    if too_deep(raw, max_depth):
        raise JSONLimitError(f"nesting deeper than {max_depth} levels")
    try:
        if _LONG_DIGITS.search(text) or _EXPONENT.search(text):
            value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite, parse_int=_bounded_int)
        else:  # no number here has 19 digits or an exponent: every int fits 64 bits, every float is finite
            value = json.loads(text, parse_constant=_refuse_constant)
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


def dumps(value, max_depth: int, max_chars: int | None = None) -> str:
    """Serialise for the wire: compact, UTF-8-clean, no NaN, bounded depth, length and integer size.

    Raises TypeError (not JSON), ValueError (NaN, a lone surrogate, JSONLimitError, JSONTooLarge) or
    RecursionError."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    if max_chars is not None and len(text) > max_chars:
        raise JSONTooLarge(len(text), max_chars)
    raw = text.encode("utf-8")  # UnicodeEncodeError (a ValueError) on a lone surrogate
    if too_deep(raw, max_depth):
        raise JSONLimitError(f"nesting deeper than {max_depth} levels")
    if _LONG_DIGITS.search(text):
        loads(raw, max_depth)  # 19+ digits in a row (maybe inside a string): the exact 64-bit check decides
    return text
