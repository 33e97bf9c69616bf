"""A BFCL class's Python state as JSON, at any depth: `render` (faithful to `==`), `fold` (nesting at most
so many levels, deeper parts as their canonical JSON text) and `canonical` (that text).

None of the three recurses. A class's state nests as deep as its calls make it: a model step of 300 x
[`mkdir('d')`, `cd('d')`] makes a directory 300 levels down, about 1,200 Python frames for a recursive
renderer (object, attributes, contents, child), past the interpreter's limit; the snapshot then raised
RecursionError, the step was run again one call at a time, each failed call rolled back by replaying
every earlier one, and a rebuild from the last good state (more frames on the stack there) could raise
it too, so the episode stayed broken (outside check rt22-R12 F4: 66-81 s for that step, then "could not
rebuild the episode"). Here every pass keeps its own stack and visits each node once, so a step's
snapshot costs time in proportion to the state's size, at any depth.

Standard library only: it runs in the jail beside `jail_env.py` (both copied there by the pool), and the
specs that exec `jail_env`'s source on the host import it from the package."""

import json
import math

TAG = "__py__"


def _canonical_scalar(value):
    return json.dumps(value, ensure_ascii=False)


def canonical(value):
    """`json.dumps(value, sort_keys=True, ensure_ascii=False)` for a rendered value, written with a
    stack of its own (the C encoder recurses, and stops near the interpreter's recursion limit)."""
    out, work = [], [(False, value)]
    while work:
        literal, item = work.pop()
        if literal:
            out.append(item)
        elif isinstance(item, dict):
            if not item:
                out.append("{}")
                continue
            work.append((True, "}"))
            pairs = sorted(item.items())
            for i in range(len(pairs) - 1, -1, -1):
                key, child = pairs[i]
                work.append((False, child))
                work.append((True, ("{" if i == 0 else ", ") + _canonical_scalar(key) + ": "))
        elif isinstance(item, list):
            if not item:
                out.append("[]")
                continue
            work.append((True, "]"))
            for i in range(len(item) - 1, -1, -1):
                work.append((False, item[i]))
                work.append((True, "[" if i == 0 else ", "))
        else:
            out.append(_canonical_scalar(item))
    return "".join(out)


def _steps(value, path):
    """A generator rendering `value`: it yields each child it needs rendered and is sent that child's
    rendering back (`render` runs these generators on its own stack; `yield` cannot stand in a
    comprehension, hence the loops). `path` maps the objects enclosing `value` (by id) to their place
    on the way down, for back-references."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {TAG: "float", "repr": repr(value)}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = []
        for child in value:
            items.append((yield child))
        if isinstance(value, list):
            return items
        if isinstance(value, tuple):
            return {TAG: "tuple", "items": items}
        return {TAG: type(value).__name__, "items": sorted(items, key=canonical)}
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and TAG not in value:
            rendered = {}
            for key, child in value.items():
                rendered[key] = yield child
            return rendered
        pairs = []
        for key, child in value.items():
            pairs.append([(yield key), (yield child)])
        return {TAG: "dict", "items": pairs}
    if id(value) in path:
        return {TAG: "ref", "class": type(value).__name__, "up": len(path) - path[id(value)]}
    if hasattr(value, "isoformat"):
        return {TAG: type(value).__name__, "iso": value.isoformat()}
    if hasattr(value, "__dict__"):
        path[id(value)] = len(path)
        attrs = {}
        for key, child in vars(value).items():
            if not key.startswith("_"):
                attrs[key] = yield child
        del path[id(value)]
        return {TAG: "object", "class": type(value).__name__, "attrs": attrs}
    return {TAG: type(value).__name__, "repr": repr(value)}


def render(value):
    """JSON for a Python value, faithful to `==`: containers keep their kind (a tuple is not a list),
    sets are sorted, objects show their class and public attributes, and a reference back to an
    enclosing object (a directory's parent) is a marker (`"up"`: how many objects up) instead of a cycle."""
    path = {}
    work, sent = [_steps(value, path)], None
    while True:
        try:
            child = work[-1].send(sent)
        except StopIteration as done:
            work.pop()
            if not work:
                return done.value
            sent = done.value
            continue
        work.append(_steps(child, path))
        sent = None


def _heights(value):
    """{id: how deeply lists and dicts nest in it} for every list and dict in a rendered value (a scalar
    nests 0 levels, `[1]` 1), in one pass: children are finished before their parent."""
    heights, work = {}, [(value, False)]
    while work:
        node, children_done = work.pop()
        children = node.values() if isinstance(node, dict) else node
        if children_done:
            heights[id(node)] = 1 + max((heights.get(id(c), 0) for c in children), default=0)
            continue
        work.append((node, True))
        work.extend((c, False) for c in children if isinstance(c, (dict, list)))
    return heights


def fold(value, room):
    """A rendered value that nests at most `room` levels: whatever part would nest deeper becomes
    `{TAG: "json", "text": <its canonical JSON>}` at the deepest level left, so the sandbox's wire
    (64 levels) carries any state BFCL can hold. Equal values fold to equal renderings; a deep part
    that changes changes its text."""
    if not isinstance(value, (dict, list)):
        return value
    heights = _heights(value)
    if heights[id(value)] <= room:
        return value
    if room <= 1:
        return {TAG: "json", "text": canonical(value)}
    top = {} if isinstance(value, dict) else []
    work = [(value, top, room - 1)]
    while work:
        source, target, left = work.pop()
        for key, child in (source.items() if isinstance(source, dict) else enumerate(source)):
            if isinstance(child, (dict, list)) and heights[id(child)] > left:
                if left <= 1:
                    child = {TAG: "json", "text": canonical(child)}
                else:
                    folded = {} if isinstance(child, dict) else []
                    work.append((child, folded, left - 1))
                    child = folded
            if isinstance(target, dict):
                target[key] = child
            else:
                target.append(child)
    return top
