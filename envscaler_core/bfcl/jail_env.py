"""BFCL multi-turn inside the sandbox: the env classes of a BFCL episode.

It runs only in the jail: the pool copies it next to the `bfcl_eval` package (read-only) and the zygote
preloads it as `jail_env`, so an episode's code is one import line (`package.episode_code`); the host
never imports it. Two classes:

* `BFCLEnvironment`: the involved API classes of one task, driven by the package's own executor
  (`execute_multi_turn_func_call`, the function BFCL's inference loop calls), one call string at a
  time, so every observation is byte-for-byte what BFCL itself returns. Its state is Python objects
  (a directory tree, sets, random generators), so it implements the sandbox's snapshot hooks: the
  snapshot renders every public attribute (the ones `multi_turn_checker` compares) to JSON such
  that two renderings are equal exactly when the checker's `!=` says the attributes are, plus the
  log of executed calls; restoring replays that log on freshly loaded instances (which also rebuilds
  private state: the file system's working directory, each class's random generator) and refuses a
  replay that does not reproduce the snapshot.
* `BFCLScorer`: `multi_turn_checker` on the decoded calls of a finished episode, in a fresh child, so
  nothing the agent's calls did in the episode's process can influence its own score.

The package `eval`s each call string in its executor's module, where any global (the executor itself,
`importlib`, the builtins) is callable by name: a call named `execute_multi_turn_func_call` whose
argument is a list of code strings runs that code, and because the checker re-executes the model's
calls in its own process, such a call could rewrite the checker and score itself valid (found by a red
team). So, on import, the executor is replaced, in its module and in the checker's, by `guarded_execute`:
only a plain call of a public method of an involved class, with literal arguments, reaches the package.
Every other call changes nothing and gets BFCL's own text wherever BFCL, too, fails it without running
anything (a name it refuses, a string that does not compile, which is only compiled here, a call of a
constant such as `None(...)`, a name it cannot find, a NaN argument); only a call BFCL would run as
code (a builtin, a module, an attribute, a non-literal argument) gets a refusal or "not defined".
"""

import ast
import inspect
import json
import re

import bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker as _checker
import bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils as _utils
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker
try:  # in the jail: the modules copied beside this one
    from jail_details import DETAILS_CAP, cut_to_fit
    from jail_render import TAG, fold, render
except ImportError:  # this source exec'd on the host by specs (`package.jail_code`): the package's copies
    from envscaler_core.bfcl.jail_details import DETAILS_CAP, cut_to_fit
    from envscaler_core.bfcl.jail_render import TAG, fold, render

MODEL_NAME = "envscaler"
"""The model name in the package's instance names where no model is named (the gym, MCP, warm-up)."""
STATE_DEPTH = 48
"""Levels a class's rendered state may nest in the episode's state (the wire allows 64, and the frame
around a state takes a few): deeper parts travel as canonical JSON text (`fold`)."""
DETAILS_DEPTH = 24
"""Levels the checker's details may nest: a verdict is also stored inside a result record, whose JSON
rules (64 levels) the details must leave room for; deeper parts are kept as their JSON text."""

_package_execute = _utils.execute_multi_turn_func_call
_methods_of_class = {}
_last_member_of_class = {}


def _methods(instances):
    """The names BFCL's executor maps to an instance (`inspect.getmembers(..., ismethod)`, public),
    per class name, remembered: a class's methods are fixed once it is imported."""
    for class_name, instance in instances.items():
        if class_name not in _methods_of_class:
            members = [n for n, _ in inspect.getmembers(instance, predicate=inspect.ismethod)]
            _methods_of_class[class_name] = frozenset(n for n in members if not n.startswith("_"))
            _last_member_of_class[class_name] = members[-1]


NOT_ALLOWED = ("kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run")
"""Names the package's executor refuses before its `eval` ("Function call X is not allowed.")."""


EXECUTOR_LOCALS = {
    "func_call_list": "list", "initial_config": "dict", "involved_classes": "list", "model_name": "str",
    "test_entry_id": "str", "long_context": "bool", "is_evaL_run": "bool", "class_method_name_mapping": "dict",
    "involved_instances": "dict", "class_name": "str", "module_name": "str", "instance_name": "str",
    "method_name": "str", "execution_results": "list", "func_call": "str", "func_call_copy": "str",
}
# `func_call_result` exists once a call of the same step has run (see `refusal`'s `result_defined`).
"""The local variables of the package's executor at its `eval` (which sees them) that hold data: a call
of one gets Python's "'<type>' object is not callable", as in BFCL. `class_instance` (the last involved
class's instance) reads the same with that class's name; `method` is a bound method (see `_alias`).
`module`, `class_` and `class_initial_config` exist only in the call that built the instances (never in
BFCL's play, which builds them first with no calls; the checker's first step): read as not defined."""


def _bfcl_syntax_error(processed):
    """The text BFCL's `eval(processed)` gives when the string does not compile, else None. Compiling
    runs nothing; `eval` strips leading spaces and tabs before it compiles, so this does too."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "'NoneType' object is not callable; perhaps you missed a comma?"
            compile(processed.lstrip(" \t"), "<string>", "eval")
    except Exception as exc:  # what eval raises while compiling, caught as the package's loop catches it
        return f"Error during execution: {exc}"
    return None


def refusal(call, methods, processed=None, last_class=None, result_defined=False):
    """None when `call` is `method(literal, ..., key=literal, ...)` for one of `methods`; else the
    observation it gets instead of running: BFCL's own text where running it would be an error in BFCL
    too (a name it refuses, a string that does not compile, a call of a constant or of a data-holding
    local of its executor, a name it cannot find), and a refusal for anything else (code). With
    `result_defined` (a call earlier in the same step ran), the executor's `func_call_result` holds that
    call's text, so calling it is "'str' object is not callable", as in BFCL; before, it is not defined."""
    executor_locals = {**EXECUTOR_LOCALS, "func_call_result": "str"} if result_defined else EXECUTOR_LOCALS
    if not isinstance(call, str):
        return "Error during execution: refused: not a plain function call"
    processed = call if processed is None else processed
    name = processed.split("(")[0] if "(" in processed else processed
    if "." in name:
        name = name.split(".")[1]
    if name in NOT_ALLOWED:
        return f"Error during execution: Function call {name} is not allowed."
    syntax = _bfcl_syntax_error(processed)
    if syntax is not None:
        return syntax
    try:
        node = ast.parse(_as_evaluated(call).strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        node = None
    if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Name, ast.Constant)):
        return "Error during execution: refused: not a plain function call"
    values = (*node.args, *(kw.value for kw in node.keywords))
    try:
        for value in values:
            ast.literal_eval(_without_undefined(value))
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return "Error during execution: refused: the arguments are not literals"
    if any(kw.arg is None for kw in node.keywords):
        return "Error during execution: refused: the arguments are not literals"
    if isinstance(node.func, ast.Name) and node.func.id not in methods and node.func.id not in executor_locals \
            and node.func.id != "class_instance":
        return f"Error during execution: name '{node.func.id}' is not defined"
    for value in values:  # Python evaluates the arguments, in order, before it calls
        undefined = _first_undefined(value)
        if undefined is not None:
            return f"Error during execution: name '{undefined}' is not defined"
    if isinstance(node.func, ast.Constant):  # a tool named None, True, 1: Python's TypeError, as in BFCL
        return f"Error during execution: '{type(node.func.value).__name__}' object is not callable"
    callee = node.func.id
    if callee in methods:
        return None
    if callee in executor_locals:
        return f"Error during execution: '{executor_locals[callee]}' object is not callable"
    if callee == "class_instance" and last_class is not None:
        return f"Error during execution: '{last_class}' object is not callable"
    return f"Error during execution: name '{callee}' is not defined"


UNDEFINED_NAMES = ("nan", "inf")
"""The names `repr` writes for a JSON NaN or Infinity argument; BFCL's `eval` finds neither."""


def _without_undefined(node):
    """`node` with NaN/Infinity names as constants, so a literal with them reads as a literal."""
    class Swap(ast.NodeTransformer):
        def visit_Name(self, name):
            return ast.copy_location(ast.Constant(0.0), name) if name.id in UNDEFINED_NAMES else name
    return Swap().visit(ast.parse(ast.unparse(node), mode="eval").body) if _first_undefined(node) else node


def _first_undefined(node):
    """The first NaN/Infinity name Python meets evaluating the literal `node`, or None."""
    if isinstance(node, ast.Name):
        return node.id if node.id in UNDEFINED_NAMES else None
    if isinstance(node, ast.Dict):
        children = [child for pair in zip(node.keys, node.values) for child in pair if child is not None]
    else:
        children = list(ast.iter_child_nodes(node))
    for child in children:
        found = _first_undefined(child)
        if found is not None:
            return found
    return None


def _alias(call, last_method):
    """`method(...)` as BFCL runs it: its executor's loop variable `method`, which its `eval` sees, is
    left bound to the last method `inspect.getmembers` lists for the last involved class, so the call
    runs that method (a real state change) under that method's own name."""
    evaluated = _as_evaluated(call)
    try:
        node = ast.parse(evaluated.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return call
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "method":
        stripped = evaluated.strip()
        return last_method + stripped[len("method"):]
    return call


_NAME_BEFORE_PAREN = re.compile(r"\b([a-zA-Z_]\w*)\s*(?=\()")
"""The pattern of the package's `_process_method_calls`: it rewrites every name before a `(` (with the
whitespace in between, newlines included) as the name alone, prefixed with its instance when mapped."""


def _as_evaluated(call):
    """`call` as BFCL's `eval` reads it, without the instance prefixes: the whitespace between each name
    and its `(` dropped, so `"mkdir\\n(dir_name='a')"`, which does not compile as sent, is the call
    `mkdir(dir_name='a')` that BFCL runs."""
    return _NAME_BEFORE_PAREN.sub(r"\1", call)


def _instance_names(involved_classes, model_name, test_entry_id, is_eval_run):
    """{public method: instance name} as the package's executor maps them (the later class wins)."""
    if is_eval_run:
        model_name += "_eval"
    mapping = {}
    for class_name in involved_classes:
        instance_name = re.sub(r"[-./:]", "_", f"{model_name}_{test_entry_id}_{class_name}_instance")
        for method_name in sorted(_methods_of_class.get(class_name, ())):
            mapping[method_name] = instance_name
    return mapping


def guarded_execute(func_call_list, initial_config, involved_classes, model_name, test_entry_id,
                    long_context=False, is_evaL_run=False):
    """The package's executor, same signature and results, for the calls `refusal` lets through."""
    args = (initial_config, involved_classes, model_name, test_entry_id, long_context, is_evaL_run)
    instances = None
    if not all(name in _methods_of_class for name in involved_classes):
        _, instances = _package_execute([], *args)
        _methods(instances)
    methods = frozenset().union(*(_methods_of_class[name] for name in involved_classes))
    mapping = _instance_names(involved_classes, model_name, test_entry_id, is_evaL_run)
    last_class = involved_classes[-1]
    last_method = _last_member_of_class[last_class]
    calls = [_alias(call, last_method) if isinstance(call, str) else call for call in func_call_list]
    results, result_defined = [], False
    for call in calls:  # in order: whether `func_call_result` exists depends on the calls before
        processed = _utils._process_method_calls(call, mapping) if isinstance(call, str) else None
        why = refusal(call, methods, processed, last_class, result_defined)
        if why is None:
            ran, instances = _package_execute([call], *args)
            why = ran[0]
            # the package's loop assigns `func_call_result` when its `eval` returns (not when it raises)
            result_defined = result_defined or not why.startswith("Error during execution: ")
        results.append(why)
    if instances is None:
        _, instances = _package_execute([], *args)
    return results, instances


def _forget_instances():
    """Drop every instance the package cached in its module globals: the checker builds its instances
    only when none is cached under the task's name, so one left by an earlier run in this process (the
    zygote's warm-up, sandbox/jail_zygote.py) would be scored or played instead."""
    cached = vars(_utils)
    for name in [n for n in cached if n.endswith("_instance")]:
        del cached[name]


def instance_model_name(model):
    """The model name BFCL puts in its executor's instance names, for the model named `model` (None:
    `MODEL_NAME`): its handler and checker replace `/`, `-`, `.` (and the executor `:`) with `_`, and
    the executor's rewrite of method names writes that name into string arguments (`"run ls()"`
    becomes `"run <name>_<task>_GorillaFileSystem_instance.ls()"`). Where that is no Python
    identifier (BFCL would then fail every call), every other non-word character becomes `_` and a
    leading digit gets a `_` in front."""
    if not isinstance(model, str) or not model:
        return MODEL_NAME
    name = re.sub(r"[-./:]", "_", model)
    if not (name + "_x").isidentifier():
        name = re.sub(r"\W", "_", name)
        if not name.isidentifier():
            name = "_" + name
    return name


_utils.execute_multi_turn_func_call = guarded_execute
_checker.execute_multi_turn_func_call = guarded_execute


def render_instance(instance, room=STATE_DEPTH - 2):
    """The attributes `multi_turn_checker` compares (public ones), rendered, nesting at most `room`
    levels (the state puts each class two levels down: classes -> class name). Rendering and folding
    keep their own stacks (`jail_render`), so a state of any depth its calls build is carried, and
    rebuilt after a crash, in time proportional to its size."""
    return fold({k: render(v) for k, v in vars(instance).items() if not k.startswith("_")}, room)


class BFCLEnvironment:
    """One BFCL task's API instances. Config: `{"_bfcl": {"id", "initial_config", "involved_classes",
    "long_context"}}` (a private key, so the sandbox's loader does not expect it back in the state)."""

    def __init__(self, config):
        self._spec = config["_bfcl"]
        self._executed = []
        self._instances = self._load()

    def _run(self, calls):
        spec = self._spec
        return _utils.execute_multi_turn_func_call(
            calls, spec["initial_config"], spec["involved_classes"], instance_model_name(spec.get("model_name")), spec["id"],
            long_context=bool(spec["long_context"]), is_evaL_run=False)

    def _load(self):
        """Fresh instances: forget the package's cached ones, then let it build them."""
        _forget_instances()
        return self._run([])[1]

    def execute(self, call: str) -> str:
        """Run one call string exactly as BFCL's inference loop does; the result is its observation."""
        if not isinstance(call, str):
            raise TypeError(f"call must be a string, got {type(call).__name__}")
        results, self._instances = self._run([call])
        self._executed.append(call)
        return results[0]

    def execute_all(self, calls: list) -> list:
        """The calls of one model step, in order, in one run of the executor, as BFCL's loop passes a
        step's calls: one round trip and one state snapshot per step, and a call of the executor's
        `func_call_result` sees the earlier calls of its step, as in BFCL. (A restore replays the calls
        one at a time: only such a call, which changes nothing, reads differently there.)"""
        if not isinstance(calls, list) or not all(isinstance(call, str) for call in calls):
            raise TypeError("calls must be a list of strings")
        results, self._instances = self._run(list(calls))
        self._executed.extend(calls)
        return results

    def __sandbox_state__(self):
        classes = {name: render_instance(inst) for name, inst in self._instances.items()}
        return {"classes": classes, "executed": list(self._executed)}

    def __sandbox_restore__(self, snapshot):
        self._instances = self._load()
        self._executed = []
        for call in snapshot.get("executed", []):
            self.execute(call)
        rebuilt = json.loads(json.dumps(self.__sandbox_state__()["classes"]))
        if rebuilt != snapshot.get("classes"):
            raise RuntimeError("replaying the executed calls did not reproduce the snapshot's state")


def _json_safe(value):
    """The checker's details as JSON every later step can carry, readable: rendered, with what the wire
    refuses made plain (a lone surrogate written as its escape, an integer beyond 64 bits as
    `{"__py__": "int", "text"}`), parts nested deeper than `DETAILS_DEPTH` as their JSON text (`fold`),
    and, when longer than `DETAILS_CAP` characters, cut inside its values (`jail_details.cut_to_fit`): the structure and
    the keys stay, the checker's `differences` are cut last, and `"__cut__"` counts the characters and
    items left out. A value too deep even to render is named. Never an error: the verdict does not
    depend on its details."""
    try:
        rendered = fold(_plain(render(value)), DETAILS_DEPTH)
        text = json.dumps(rendered, ensure_ascii=False)
    except (RecursionError, MemoryError) as exc:
        return {"unrenderable": f"{type(exc).__name__}: the details nest too deeply to render"}
    if len(text) <= DETAILS_CAP:
        return rendered
    return cut_to_fit(rendered)


def _plain(node):
    """A rendered value with no lone surrogate and no integer beyond 64 bits (the wire refuses both)."""
    if isinstance(node, str):
        return node.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(node, bool) or node is None or isinstance(node, float):
        return node
    if isinstance(node, int):
        if -(1 << 63) <= node < (1 << 63):
            return node
        try:
            digits = str(node)
        except ValueError:  # past Python's digit limit
            digits = f"an integer of {node.bit_length()} bits"
        return {TAG: "int", "text": digits}
    if isinstance(node, list):
        return [_plain(child) for child in node]
    if isinstance(node, dict):
        return {_plain(k): _plain(v) for k, v in node.items()}
    return node


def _wire_text(text):
    """A verdict's text as the wire carries it (a lone surrogate written as its escape)."""
    if not isinstance(text, str):
        return None if text is None else _wire_text(str(text))
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class BFCLScorer:
    """`multi_turn_checker` for one task (config as for `BFCLEnvironment`). With `"_score": {"decoded",
    "ground_truth"}` in the config it scores while loading and its state is `{"verdict": ...}`, so a
    scoring episode is one round trip (load) instead of two (load, then `score`)."""

    def __init__(self, config):
        self._spec = config["_bfcl"]
        job = config.get("_score")
        if job is not None:
            self.verdict = self.score(job["decoded"], job["ground_truth"])

    def score(self, decoded: list, ground_truth: list) -> dict:
        spec = self._spec
        _forget_instances()
        entry = {"id": spec["id"], "initial_config": spec["initial_config"],
                 "involved_classes": spec["involved_classes"]}
        try:
            verdict = multi_turn_checker(decoded, ground_truth, entry, spec["id"].rsplit("_", 1)[0],
                                         instance_model_name(spec.get("model_name")))
        except Exception as exc:  # e.g. a RecursionError comparing a state nested hundreds of levels deep
            return {"valid": False, "error_type": "multi_turn:checker_error",
                    "error_message": _wire_text(f"multi_turn_checker raised {type(exc).__name__}: {str(exc)[:500]}")}
        out = {"valid": bool(verdict.get("valid")), "error_type": _wire_text(verdict.get("error_type")),
               "error_message": _wire_text(verdict.get("error_message"))}
        extra = {k: v for k, v in verdict.items() if k not in ("valid", "error_type", "error_message")}
        if extra:
            out["details"] = _json_safe(extra)
        return out
