"""EnvScaler's runtime contract, as trusted driver code that runs *inside* the sandbox.

This module is standard-library only: its source text is loaded into a sandbox episode as an env
class (`EnvScalerInteropHarness`), and each tool call of that episode drives a whole batch of work,
so one sandbox process serves hundreds of scenarios instead of one process per check. The host also
imports it for the type-marker helpers, so both sides share one implementation.

What it reproduces, from EnvScaler's `interact_with_env` (docs in ../shared/reference):
* loading: `exec` the env code into a fresh module *per scenario*; `cls(deepcopy(config))` (or
  `cls({})` when the config is empty); on TypeError `cls()`; then `setattr` every top-level key;
* state: `vars(instance)` minus `__dunder__` names, deep-copied (`_private` attributes included);
* checks: `exec(check_func source)` with globals `__builtins__` and `initial_state`, then
  `check_func(final_state)`; only a real `bool` counts;
* type markers (`{"__type__": "set", "items": [...]}` ...) restored before use, as its `read_file` does.

Deliberate differences, all for isolation: each check gets its own copy of the final state and of the
builtins (EnvScaler shares both, so one mutating check changes the next one's verdict), and every
scenario or check runs under a per-item timer.
"""

from __future__ import annotations

import builtins
import copy
import datetime
import decimal
import json
import signal
import time
import types

_BUILTINS = dict(vars(builtins))  # snapshot taken before any untrusted code runs in this process
_deepcopy = copy.deepcopy
_dumps, _loads = json.dumps, json.loads
_monotonic = time.monotonic
ERROR_CHARS = 500


class UnsupportedValue(TypeError):
    """A value EnvScaler's type markers cannot carry (its own save would fall back to jsonpickle)."""


class _ItemTimeout(BaseException):
    """Raised by SIGALRM inside one scenario or check; BaseException so ordinary handlers miss it."""


# ---- EnvScaler type markers ---------------------------------------------------------------------

def restore_markers(obj):
    """EnvScaler's `restore_after_load`: marker dicts back to set/tuple/datetime/Decimal/dict."""
    if isinstance(obj, dict):
        kind = obj.get("__type__")
        if kind is None:
            return {k: restore_markers(v) for k, v in obj.items()}
        items = obj.get("items")
        if kind == "set" and isinstance(items, list):
            return {restore_markers(i) for i in items}
        if kind == "tuple" and isinstance(items, list):
            return tuple(restore_markers(i) for i in items)
        if kind == "datetime" and isinstance(obj.get("value"), str):
            return datetime.datetime.fromisoformat(obj["value"])
        if kind == "decimal" and isinstance(obj.get("value"), str):
            return decimal.Decimal(obj["value"])
        if kind == "key" and "value" in obj:
            return restore_markers(obj["value"])
        if kind == "dict" and isinstance(items, list):
            out = {}
            for pair in items:
                key, value = pair
                if isinstance(key, dict) and key.get("__type__") == "key":
                    key = restore_markers(key["value"])
                out[key] = restore_markers(value)
            return out
        return {k: restore_markers(v) for k, v in obj.items()}  # unknown marker: left as a dict
    if isinstance(obj, list):
        return [restore_markers(i) for i in obj]
    return obj


def _ordered(items):
    """Set members in a stable order when they are comparable (marker output must not depend on hashing)."""
    try:
        return sorted(items)
    except TypeError:
        return sorted(items, key=repr)


def save_markers(obj):
    """Inverse of `restore_markers`, lossless: non-string keys (and a real `__type__` key) use the
    dict marker, so an int key stays an int (EnvScaler's own save turned it into a string)."""
    if obj is None or isinstance(obj, (str, bool, int, float)):
        return obj
    if isinstance(obj, list):
        return [save_markers(i) for i in obj]
    if isinstance(obj, dict):
        if all(isinstance(k, str) for k in obj) and "__type__" not in obj:
            return {k: save_markers(v) for k, v in obj.items()}
        pairs = [[k if isinstance(k, str) else {"__type__": "key", "value": save_markers(k)}, save_markers(v)]
                 for k, v in obj.items()]
        return {"__type__": "dict", "items": pairs}
    if isinstance(obj, set):
        return {"__type__": "set", "items": [save_markers(i) for i in _ordered(obj)]}
    if isinstance(obj, tuple):
        return {"__type__": "tuple", "items": [save_markers(i) for i in obj]}
    if isinstance(obj, datetime.datetime):
        return {"__type__": "datetime", "value": obj.isoformat()}
    if isinstance(obj, decimal.Decimal):
        return {"__type__": "decimal", "value": str(obj)}
    raise UnsupportedValue(f"{type(obj).__name__} value")


def fresh(text: str):
    """A private copy of a state from its marker JSON: parsing is a deep copy at C speed, and the
    marker walk only runs when the text holds a marker."""
    value = _loads(text)
    return restore_markers(value) if '"__type__"' in text else value


def _clean(text: str) -> str:
    """Valid UTF-8 (a lone surrogate from untrusted data would make the whole reply unsendable)."""
    return text if text.isascii() else text.encode("utf-8", "replace").decode("utf-8")


def state_text(state) -> str:
    return _clean(_dumps(save_markers(state), ensure_ascii=False, separators=(",", ":")))


# ---- EnvScaler's loader --------------------------------------------------------------------------

def describe(exc: BaseException) -> str:
    try:
        text = _clean(f"{type(exc).__name__}: {exc}".strip())
    except BaseException:  # noqa: BLE001 - a hostile __str__
        text = type(exc).__name__
    return text if len(text) <= ERROR_CHARS else text[:ERROR_CHARS] + "..."


def load_instance(compiled, class_name: str, config):
    """`init_env_class` + `init_env_instance`: fresh module, construct, setattr every key."""
    module = types.ModuleType("dynamic_env")
    exec(compiled, module.__dict__)
    if not hasattr(module, class_name):
        raise LookupError(f"Class '{class_name}' not found in provided env_class_code.")
    env_class = getattr(module, class_name)
    config = _deepcopy(config)
    try:
        instance = env_class(config) if config and isinstance(config, dict) else env_class({})
    except TypeError:
        instance = env_class()
    if config:
        for key, value in config.items():
            setattr(instance, key, value)
    return instance


def public_vars(instance) -> dict:
    """`get_state_info` without its deep copy: every instance attribute except dunders. Callers turn
    it into text at once, which copies it just as well."""
    return {k: v for k, v in vars(instance).items() if not (k.startswith("__") and k.endswith("__"))}


def _on_alarm(signum, frame):
    raise _ItemTimeout()


class _Timer:
    """A per-item wall-clock alarm (SIGALRM); the sandbox's own limits catch code that swallows it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = max(0.001, float(seconds))
        signal.signal(signal.SIGALRM, _on_alarm)

    def __enter__(self):
        signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    def __exit__(self, *exc) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)


class _Batch:
    """Budget bookkeeping for one call: stop after `budget_s` or `max_chars` of results (at least one)."""

    def __init__(self, budget_s: float, max_chars: int) -> None:
        self.start, self.budget_s, self.max_chars, self.chars = _monotonic(), float(budget_s), int(max_chars), 0
        self.results: list = []

    def add(self, result, size: int) -> bool:
        """Keep `result` unless it would overflow the reply; False means stop here."""
        if self.results and self.chars + size > self.max_chars:
            return False
        self.results.append(result)
        self.chars += size
        return _monotonic() - self.start < self.budget_s

    def reply(self) -> dict:
        return {"done": len(self.results), "results": self.results}


def _capped(result: dict, max_chars: int) -> dict:
    """A state too large for one reply is an error of that item, not a reply the sandbox must kill."""
    state = result.get("state")
    if state is not None and len(state) > max_chars:
        return {"error": f"the state is {len(state)} characters as JSON, over the {max_chars} a reply may carry",
                "calls": result.get("calls", [])}
    return result


class EnvScalerInteropHarness:
    """Driver of batched work; holds no state (its public state is `{}`)."""

    def __init__(self, init_config=None) -> None:
        pass

    def _compile(self, code: str):
        return compile(code, "<env_class_code>", "exec", dont_inherit=True)

    def load_states(self, code: str, items: list, budget_s: float, item_timeout_s: float, max_chars: int) -> dict:
        """Per item `{"class_name", "config"}`: the initial state as marker JSON text, or the error."""
        batch = _Batch(budget_s, max_chars)
        try:
            compiled = self._compile(code)
        except BaseException as exc:  # noqa: BLE001 - untrusted code
            error = f"the env code does not compile: {describe(exc)}"
            return {"done": len(items), "results": [{"error": error} for _ in items]}
        timer = _Timer(item_timeout_s)
        for item in items:
            result = _capped(self._load_one(compiled, item, timer), batch.max_chars)
            if not batch.add(result, len(result.get("state") or "") + 200):
                break
        return batch.reply()

    def _load_one(self, compiled, item: dict, timer: _Timer) -> dict:
        try:
            with timer:
                instance = load_instance(compiled, item["class_name"], restore_markers(item.get("config")))
                return {"state": state_text(public_vars(instance))}
        except _ItemTimeout:
            return {"error": f"loading timed out after {timer.seconds:g} s"}
        except UnsupportedValue as exc:
            return {"error": f"the state holds a {exc} that JSON with EnvScaler's type markers cannot carry"}
        except BaseException as exc:  # noqa: BLE001
            return {"error": describe(exc)}

    def replay(self, code: str, items: list, budget_s: float, item_timeout_s: float, max_chars: int) -> dict:
        """Per item `{"class_name", "config", "calls": [[name, args], ...]}`: each call as EnvScaler's
        `step` would run it (`ok`, `invalid` = no such attribute, `raised` = the episode would end
        there with reward 0) and the final state."""
        batch = _Batch(budget_s, max_chars)
        try:
            compiled = self._compile(code)
        except BaseException as exc:  # noqa: BLE001
            error = f"the env code does not compile: {describe(exc)}"
            return {"done": len(items), "results": [{"error": error} for _ in items]}
        timer = _Timer(item_timeout_s)
        for item in items:
            result = _capped(self._replay_one(compiled, item, timer), batch.max_chars)
            if not batch.add(result, len(result.get("state") or "") + 100 * len(item.get("calls") or []) + 200):
                break
        return batch.reply()

    def _replay_one(self, compiled, item: dict, timer: _Timer) -> dict:
        calls = []
        try:
            with timer:
                instance = load_instance(compiled, item["class_name"], restore_markers(item.get("config")))
                for name, args in item.get("calls") or []:
                    if not hasattr(instance, name) or not isinstance(args, dict):
                        calls.append({"status": "invalid"})
                        continue
                    try:
                        getattr(instance, name)(**args)
                        calls.append({"status": "ok"})
                    except _ItemTimeout:
                        raise
                    except Exception as exc:  # noqa: BLE001 - EnvScaler's step catches Exception
                        calls.append({"status": "raised", "error": describe(exc)})
                return {"state": state_text(public_vars(instance)), "calls": calls}
        except _ItemTimeout:
            return {"error": f"replay timed out after {timer.seconds:g} s", "calls": calls}
        except UnsupportedValue as exc:
            return {"error": f"the state holds a {exc} that JSON with EnvScaler's type markers cannot carry"}
        except BaseException as exc:  # noqa: BLE001
            return {"error": describe(exc), "calls": calls}

    def run_checks(self, items: list, budget_s: float, check_timeout_s: float, max_chars: int) -> dict:
        """Per item `{"initial", "final", "checks": [source, ...]}` (states as marker JSON text): one
        `{"v": bool|None, "kind": "ok"|"not_bool"|"error", "error"?}` per check."""
        batch = _Batch(budget_s, max_chars)
        timer = _Timer(check_timeout_s)
        compiled: dict = {}
        for item in items:
            try:
                fresh(item["initial"])
                fresh(item["final"])
            except BaseException as exc:  # noqa: BLE001
                result = [{"v": None, "kind": "error", "error": f"unreadable state: {describe(exc)}"}
                          for _ in item["checks"]]
            else:
                result = [self._check_one(src, item["initial"], item["final"], timer, compiled) for src in item["checks"]]
            if not batch.add(result, 60 * len(result) + sum(len(r.get("error") or "") for r in result)):
                break
        return batch.reply()

    def _check_one(self, source, initial: str, final: str, timer: _Timer, compiled: dict) -> dict:
        if not isinstance(source, str):
            return {"v": None, "kind": "error", "error": f"check_func is a {type(source).__name__}, not source text"}
        namespace = {"__builtins__": dict(_BUILTINS), "initial_state": fresh(initial)}
        try:
            with timer:
                code = compiled.get(source)
                if code is None:
                    code = compiled[source] = compile(source, "<check_func>", "exec", dont_inherit=True)
                exec(code, namespace)
                if "check_func" not in namespace:
                    return {"v": None, "kind": "error", "error": "Function 'check_func' not found."}
                value = namespace["check_func"](fresh(final))
        except _ItemTimeout:
            return {"v": None, "kind": "error", "error": f"check_func timed out after {timer.seconds:g} s"}
        except BaseException as exc:  # noqa: BLE001 - untrusted code may raise anything
            return {"v": None, "kind": "error", "error": describe(exc)}
        if type(value) is not bool:
            return {"v": None, "kind": "not_bool", "error": f"check_func returned {type(value).__name__}, not bool"}
        return {"v": value, "kind": "ok"}
