"""The modules a check may import, the names in them it may not take, and how an attribute of a module is
resolved, for the purity rule of `determinism.py`.

A check imports only the modules in `PURE_MODULES`, and a submodule of one (`collections.abc`,
`json.decoder`, `html.parser`); `urllib` only as the way to `urllib.parse`. Every other import is refused,
standard library or not, caught or not, wherever it stands (outside check rt14-A F3: an ImportError of
numpy swallowed by a `with` whose `__exit__` returns True, a helper or `__del__` was verified, then False
where numpy is installed; `try` was only one of the ways to swallow it). Audit of each module on CPython
3.11 (read from its source; 3.12-3.14 additions named), for chance, the clock, the host, I/O, stdin and
reflection (a name given as data read or written as an attribute, a string run as code, a frame reached):

* compute only: `math`, `cmath`, `bisect`, `heapq`, `itertools`, `numbers`, `fractions`, `decimal` (its
  context is the unit's own), `unicodedata`, `keyword`, `colorsys`, `graphlib` (insertion order), `textwrap`,
  `difflib`, `html` (`escape`, `unescape`, `parser`), `ipaddress` (constant tables), `binascii`, `base64`
  (`encode`/`decode` take file objects a check cannot open; `main` reads argv: refused by name), `re` (a
  `DEBUG` flag prints, it reads nothing), `json` (`cls=`, `object_hook=` call what the check gives;
  `json.tool.main` refused), `string` (`Template` looks keys up in a mapping; `Formatter`'s field lookup
  refused), `statistics` (`NormalDist.samples`, `kde_random` draw from `random`: refused), `calendar`
  (`Locale*`/`different_locale`/`main` refused), `datetime` (`now`/`today`/`utcnow` refused; local time
  is TZ=UTC in every jail), `urllib.parse`;
* `uuid`: `UUID(x)` parses (the format check EnvScaler's check prompt asks for), `uuid3`/`uuid5` hash;
  `uuid1`, `uuid4`, `getnode` (3.14: `uuid6`, `uuid7`, `uuid8`) read the clock, chance or the host's MAC:
  refused by name. `hashlib`: the guaranteed constructors (`md5`, `sha256`, `blake2b`, ...); `new`,
  `algorithms_available` and `scrypt` follow the host's OpenSSL, `file_digest` reads a file: refused.
  `zlib`: `crc32`, `adler32`, `decompress`; `compress`/`compressobj` bytes and the version strings follow the
  host's zlib build: refused. `abc`: `get_cache_token` counts every ABC registration the process made: refused;
  `update_abstractmethods` reads the check's own class by its own abstract names;
* reflection in allowed modules, refused by name in `determinism._REFLECTION`: `functools.update_wrapper`
  and `wraps` (`getattr(wrapped, name)` for every name in `assigned=`/`updated=`: a generator's frame, then
  the builtins, rt14-A F1), `singledispatch`/`singledispatchmethod` (evaluate string annotations),
  `operator.attrgetter`/`methodcaller`, `string.Formatter`, `typing.get_type_hints`/`ForwardRef` (3.14:
  `evaluate_forward_ref`), `enum.global_enum` (writes an enum's members into the globals of the module its
  `__module__` names). Judged and kept: `functools.cached_property`/`total_ordering`/`lru_cache` (fixed names,
  or the check's own attribute), `dataclasses` (`fields`/`replace`/`asdict` read the fields a check's own class
  declares; `make_dataclass` and `namedtuple` build code from names they check are identifiers), `copy` (reads
  fixed dunders; `_reconstruct` writes a check's own reduce state, which a check could write itself), `enum`'s
  functional API and `type(name, bases, dict)` (they set a new class's attributes by name, as a class body
  does; reading one back by a computed name needs a reader refused here), `typing.NamedTuple`/`TypedDict`/
  `NewType` (read a frame's module name only);
* refused as modules, after the same reading: `struct` and `array` (native sizes are host facts), `shlex`
  (`split(None)` and `shlex()` read stdin), `pprint` (sorts unorderable keys by `id()`), `types` (builds
  functions from code objects), `contextlib` (`chdir`), `traceback` (walks frames), `logging`/`warnings`
  (I/O, the clock, frames), `random`, `secrets`, `os`, `sys`, `time` (but `strptime`, `sleep`), `locale`,
  `zoneinfo` (the host's tz database), `inspect`, `importlib`, and any module not named above.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
import types

PURE_MODULES = frozenset({
    "re", "math", "cmath", "json", "datetime", "decimal", "fractions", "collections", "itertools", "functools",
    "operator", "string", "statistics", "copy", "typing", "dataclasses", "enum", "bisect", "heapq", "numbers",
    "unicodedata", "calendar", "uuid", "difflib", "urllib.parse", "hashlib", "textwrap", "base64", "binascii",
    "zlib", "html", "ipaddress", "keyword", "abc", "colorsys", "graphlib"})
"""The modules a check may import (with their submodules): they compute from their arguments and read nothing
else, but for the names `MODULE_NAMES` and `determinism` refuse."""
_PARENTS = frozenset({"urllib"})
"""Packages a check may name only on the way to an allowed submodule (`import urllib.parse`)."""
MODULE_NAMES: dict[str, dict[str, str]] = {
    "uuid": {n: "reads the clock, chance or the host's MAC" for n in ("uuid1", "uuid4", "uuid6", "uuid7", "uuid8", "getnode")},
    "hashlib": {"new": "an algorithm by name: the host's OpenSSL decides which exist; use hashlib.sha256 ...",
                "algorithms_guaranteed": "follows the interpreter's version",
                "algorithms_available": "the host's OpenSSL", "scrypt": "the host's OpenSSL", "file_digest": "reads a file"},
    "zlib": {n: "follows the host's zlib build" for n in ("compress", "compressobj", "ZLIB_VERSION", "ZLIB_RUNTIME_VERSION")},
    "abc": {"get_cache_token": "counts the ABC registrations of the whole process"},
    "unicodedata": {"unidata_version": "follows the interpreter's Unicode database (14.0.0 on 3.11, 15.x later)"},
    "keyword": {n: "follows the interpreter's version ('type' is soft from 3.12)"
                for n in ("kwlist", "softkwlist", "issoftkeyword")},
    "decimal": {n: "follows the host's word size or libmpdec build"
                for n in ("MAX_PREC", "MAX_EMAX", "MIN_EMIN", "MIN_ETINY", "HAVE_THREADS", "HAVE_CONTEXTVAR")},
}
"""Names of an allowed module a check may not take, judged where the module is known (`uuid.uuid4`, `from
uuid import uuid4`, a module-valued name's attribute), and on every attribute once a module is used as a value."""


def allowed(name: str) -> bool:
    """May a check import the module `name` (dotted)? An allowed module, a public submodule of one, or a parent of one."""
    parts = name.split(".")
    if any(part.startswith("_") for part in parts):  # a private submodule (`re._parser`), like a `_` attribute
        return False
    return name in _PARENTS or any(".".join(parts[:i]) in PURE_MODULES for i in range(1, len(parts) + 1))


@functools.lru_cache(maxsize=None)
def member(module: str, attr: str) -> tuple[str, str | None]:
    """What `module.attr` is for a check: ("module", its name) for a submodule (imported here or not) or a
    module-valued attribute; ("value", None) for anything else there; ("unknown", None) when this interpreter
    has no such attribute (it may be a module on another). Only allowed modules are imported to look."""
    if not allowed(module):
        return "unknown", None
    try:
        found = importlib.import_module(module)
    except ImportError:
        return "unknown", None
    sub = f"{module}.{attr}"
    try:
        if hasattr(found, "__path__") and importlib.util.find_spec(sub) is not None:
            return "module", sub
    except (ImportError, ValueError):
        pass
    if not hasattr(found, attr):
        return "unknown", None
    value = getattr(found, attr)
    return ("module", value.__name__) if isinstance(value, types.ModuleType) else ("value", None)


def _allowed_modules() -> list[types.ModuleType]:
    """Every allowed module, and every allowed module one of them holds as an attribute, on this interpreter."""
    seen: dict[str, types.ModuleType] = {}
    todo = [importlib.import_module(name) for name in sorted(PURE_MODULES)]
    while todo:
        module = todo.pop()
        if module.__name__ not in seen:
            seen[module.__name__] = module
            todo += [v for v in vars(module).values() if isinstance(v, types.ModuleType) and allowed(v.__name__)]
    return list(seen.values())


def _modules_reached() -> frozenset[str]:
    """Attribute names that lead from an allowed module to another module (`statistics.random`,
    `datetime.sys`), found on this interpreter, plus every standard module's name but the allowed ones and
    `time` (a datetime's `.time()` method): the names an attribute may not have once a module is a value."""
    names = set(sys.stdlib_module_names) - {m for m in PURE_MODULES if "." not in m} - {"time"}
    return frozenset(names | {attr for module in _allowed_modules() for attr, value in vars(module).items()
                              if isinstance(value, types.ModuleType) and not allowed(value.__name__)})


OTHER_MODULES = _modules_reached()


def _metaclasses() -> dict[str, dict[str, str]]:
    """Every public attribute of an allowed module (or of a public submodule) that is a metaclass, a subclass
    of `type`: found by looking, so a name a later interpreter adds is refused too. Calling one builds a class
    from a namespace with no class statement (`abc.ABCMeta('C', (datetime,), {computed '__match_args__':
    ('now',)})` made `case C(f)` read the clock: outside re-check rt18-R1 F1)."""
    found: dict[str, dict[str, str]] = {}
    for module in _allowed_modules():
        for attr, value in vars(module).items():
            if isinstance(value, type) and issubclass(value, type) and not attr.startswith("_"):
                found.setdefault(module.__name__, {})[attr] = "a metaclass: calling it builds a class from a namespace"
    return found


for _module, _names in _metaclasses().items():
    MODULE_NAMES[_module] = {**_names, **MODULE_NAMES.get(_module, {})}
