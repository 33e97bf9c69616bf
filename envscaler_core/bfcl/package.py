"""Where the official BFCL package is, and which of its parts we use (without importing it).

`bfcl-eval==2026.3.23` is installed with `pip install --no-deps` (Makefile target `bfcl`): its
declared dependencies (torch via sentence-transformers, faiss, provider SDKs, numpy 1.26.4) are not
needed by the parts we use, and must not touch our environment. What we use, and why it is safe:

* data (`bfcl_eval/data/`): the v4 multi-turn tasks, possible answers and function docs, read as
  JSON files; we never import `bfcl_eval.utils` or `bfcl_eval.constants.eval_config`, whose import
  creates `result/`, `score/` and `.file_locks/` directories next to site-packages.
* `bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker` and `...multi_turn_utils`: their import
  chain is the empty package `__init__`s plus `bfcl_eval.constants.executable_backend_config`
  (stdlib only); they run only inside the sandbox (see `jail_env.py`).
* the eight API classes in `.../func_source_code/` (stdlib, plus `mpmath` for MathAPI): sandbox only.
* `bfcl_eval.model_handler.utils` (tool schema conversion, FC decoding) does NOT import without the
  heavy dependencies (tree_sitter, tenacity, ...), so `schemas.py` re-implements the two functions
  we need and the tests check them against the package's source.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Any

PACKAGE = "bfcl-eval"
VERSION = "2026.3.23"
INSTALL_HINT = "pip install --no-deps bfcl-eval==2026.3.23 mpmath==1.3.0 (or `make bfcl`)"
BACKEND = "bfcl_eval.eval_checker.multi_turn_eval"
CLASS_MODULES = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
"""The multi-turn API classes and their module (= function-doc file) names."""


class BFCLUnavailable(RuntimeError):
    """The package is missing or is another version; the message says how to install it."""


def _origin(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise BFCLUnavailable(f"{module} is not installed: {INSTALL_HINT}")
    return Path(spec.origin).parent


@lru_cache(maxsize=1)
def package_dir() -> Path:
    """The installed `bfcl_eval` directory, after checking its version (not imported)."""
    try:
        found = importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise BFCLUnavailable(f"{PACKAGE} is not installed: {INSTALL_HINT}") from None
    if found != VERSION:
        raise BFCLUnavailable(f"{PACKAGE} {found} is installed, but this harness is pinned to {VERSION}: {INSTALL_HINT}")
    return _origin("bfcl_eval")


def data_dir() -> Path:
    return package_dir() / "data"


def source_dir() -> Path:
    """The API classes' sources (read by `calls.py` for method signatures, never executed here)."""
    return package_dir() / "eval_checker" / "multi_turn_eval" / "func_source_code"


JAIL_MODULE = "jail_env"
"""Our in-jail env classes (`jail_env.py`), importable in the jail under this name and preloaded."""


def jail_imports() -> dict[str, Any]:
    """What a sandbox pool must make importable for BFCL episodes (fields of `sandbox.JailImports`):
    the package minus its data and model handlers, mpmath, and our `jail_env.py` (with `jail_details.py`
    and `jail_render.py`);
    the executor, the checker, every API class and `jail_env` are preloaded by the zygote, so each episode
    forks with them imported and its code is a one-line import (`episode_code`) instead of a module compiled
    per episode;
    the zygote then plays and scores a few gold tasks (`warm.py`) so that units fork warm."""
    from envscaler_core.bfcl.warm import warm_up_episodes  # imports the data loader, which imports us

    mpmath = _origin("mpmath")
    preload = [f"{BACKEND}.multi_turn_utils", f"{BACKEND}.multi_turn_checker",
               *(f"{BACKEND}.func_source_code.{m}" for m in CLASS_MODULES.values()), JAIL_MODULE]
    return {
        "packages": [package_dir(), mpmath, Path(__file__).with_name(f"{JAIL_MODULE}.py"),
                     Path(__file__).with_name("jail_details.py"), Path(__file__).with_name("jail_render.py")],
        "skip": ["__pycache__", "bfcl_eval/data", "bfcl_eval/model_handler", "bfcl_eval/scripts",
                 "mpmath/tests"],
        "preload": preload,
        "warm_up": warm_up_episodes(),
    }


def jail_code() -> str:
    """Source of the in-jail env classes (`BFCLEnvironment`, `BFCLScorer`)."""
    return Path(__file__).with_name(f"{JAIL_MODULE}.py").read_text(encoding="utf-8")


def episode_code() -> str:
    """The env code of a BFCL episode in a pool made with `jail_imports()`: the classes the zygote
    preloaded from `jail_env.py` (trusted code of this repository, like the package itself)."""
    return f"from {JAIL_MODULE} import BFCLEnvironment, BFCLScorer\n"
