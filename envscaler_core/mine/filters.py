"""Stage 1 task filters, reproducing the reference step0 rules by default.

Each filter returns a reason string (or None) so a dropped task says *why* it was dropped. The
reference's naive substring keyword filters stay the default (so API-Bank lv3 still yields 321
tasks); `strict_words=True` opts into whole-word, case-insensitive matching that no longer rejects
"eclipse" or "soundness" (documented in docs/stage1_stage2.md).
"""

from __future__ import annotations

import re

# ASCII letters/digits, whitespace and common ASCII punctuation; anything else rejects the task.
_ENGLISH_ALLOWED = re.compile(r"^[A-Za-z0-9\s.,?!;:'\"()\[\]{}\-_*/\\@#$%^&+=<>|~`]*$")
MULTIMODAL_KEYWORDS: tuple[str, ...] = ("image", "photo", "picture", "video", "audio", "sound", "speech", "clip")
SPECIAL_CONTENT: tuple[str, ...] = (
    "Role definition:", "USD", "ETH", "Bitcoin", "Ethereum", "@", ".com", "http:", "https:",
)


def non_english_reason(text: str) -> str | None:
    """Reference allow-list: any character outside ASCII letters/digits/punctuation rejects."""
    if _ENGLISH_ALLOWED.match(text):
        return None
    bad = next(ch for ch in text if not _ENGLISH_ALLOWED.match(ch))
    return f"non-english: character {bad!r}"


def multimodal_reason(text: str, *, strict_words: bool = False) -> str | None:
    """Reference: case-insensitive substring match (so 'eclipse' hits 'clip'); strict: whole words."""
    lowered = text.lower()
    for word in MULTIMODAL_KEYWORDS:
        hit = re.search(rf"\b{word}s?\b", lowered) if strict_words else (word in lowered)
        if hit:
            return f"multimodal: keyword {word!r}"
    return None


def special_content_reason(text: str, *, strict_words: bool = False) -> str | None:
    """Reference: case-sensitive substrings; strict: currency/crypto tokens must be whole words."""
    for marker in SPECIAL_CONTENT:
        if strict_words and marker.isalpha():
            hit = re.search(rf"\b{re.escape(marker)}\b", text) is not None
        else:
            hit = marker in text
        if hit:
            return f"special-content: {marker!r}"
    return None


def filter_reason(text: str, *, strict_words: bool = False) -> str | None:
    """First filter that rejects `text`, in reference order, or None if it is kept."""
    return (
        non_english_reason(text)
        or multimodal_reason(text, strict_words=strict_words)
        or special_content_reason(text, strict_words=strict_words)
    )
