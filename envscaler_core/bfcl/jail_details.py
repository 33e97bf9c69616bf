"""A BFCL verdict's details cut to fit the wire while staying readable JSON: strings and lists cut inside
their values, keys and structure kept, the checker's `differences` cut last, and a count of what was left
out. Standard library only: it runs in the jail beside `jail_env.py` (both copied there by the pool), and
the specs that exec `jail_env`'s source on the host import it from the package."""

import json

DETAILS_CAP = 20000
"""Characters of JSON a verdict's details may take."""


CUT_MARK = "__cut__"


def _shorten(node, limit, counts, whole=()):
    """`node` with every string over `limit` characters cut to `limit` plus a note of how many were left
    out, and every list or object over `limit` items cut likewise (a note as its last item or key);
    the values of keys named in `whole` are left whole."""
    if isinstance(node, str):
        if len(node) <= limit:
            return node
        counts["characters"] += len(node) - limit
        return f"{node[:limit]}...[{len(node) - limit} more characters]"
    if isinstance(node, list):
        kept = [_shorten(child, limit, counts, whole) for child in node[:max(limit, 1)]]
        if len(node) > len(kept):
            counts["items"] += len(node) - len(kept)
            kept.append(f"...[{len(node) - len(kept)} more items]")
        return kept
    if isinstance(node, dict):
        items = list(node.items())
        kept = {k: v if k in whole else _shorten(v, limit, counts, whole) for k, v in items[:max(limit, 1)]}
        if len(items) > len(kept):
            counts["items"] += len(items) - len(kept)
            kept["..."] = f"[{len(items) - len(kept)} more keys]"
        return kept
    return node


def _fit(rendered, whole):
    """The largest cut of `rendered` (`_shorten`, keeping `whole`) whose JSON fits `DETAILS_CAP`, or None."""
    best = None
    low, high = 0, max(len(json.dumps(rendered, ensure_ascii=False)), 1)
    while low <= high:
        limit = (low + high) // 2
        counts = {"characters": 0, "items": 0}
        cut = _shorten(rendered, limit, counts, whole)
        if isinstance(cut, dict):
            cut[CUT_MARK] = counts
        if len(json.dumps(cut, ensure_ascii=False)) <= DETAILS_CAP:
            best, low = cut, limit + 1
        else:
            high = limit - 1
    return best


def cut_to_fit(rendered):
    """Details over `DETAILS_CAP`, cut to fit (`jail_env._json_safe`): everything but the checker's
    `differences` first; if that cannot fit, everything."""
    if not isinstance(rendered, dict):
        rendered = {"value": rendered}
    found = _fit(rendered, ("differences",)) or _fit(rendered, ())
    if found is None:  # not even the keys fit: name them
        return {CUT_MARK: {"keys": [str(k)[:100] for k in list(rendered)[:50]]}}
    return found
