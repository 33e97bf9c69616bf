"""Red team sandbox-3, F3 and F4: the state and replies the host sees are the env's, not what its code chooses.

* F3: keys that become the same JSON string (`101` and `"101"`, `True` and `"true"`, `None` and `"null"`,
  `1.5` and `"1.5"`) never reach the host as one key: the worker refuses the value (`unserializable`,
  naming where), and a frame that names a key twice is a crash verdict.
* Red team sandbox-4 F8: a key of the instance's `__dict__` that is not a string is refused by name.
* F4a: the worker reads containers through the base types' own methods, so a subclass overriding
  `items()`, `__iter__`, `__str__`, `__repr__` or `startswith` cannot choose what the host sees.
"""

from __future__ import annotations

import pytest

from envscaler_core.runtime import EnvLoadError
from sandbox import SandboxPool
from tests.sandbox.helpers import attack_code, benign_call_works


@pytest.mark.parametrize("first, second, key", [
    ("101", "'101'", "'101'"),
    ("True", "'true'", "'true'"),
    ("None", "'null'", "'null'"),
    ("1.5", "'1.5'", "'1.5'"),
])
def test_keys_that_collide_as_json_strings_are_unserializable(jail: SandboxPool, first: str, second: str,
                                                              key: str) -> None:
    code = attack_code(f"self.rooms = {{'a/b': {{{second}: 'config', {first}: 'booked'}}}}\nreturn 1")
    with jail.open_episode(code, "Attack", {"n": 0}) as ep:
        out = ep.call("attack", {})
        assert (out.ok, out.error_kind) == (False, "unserializable"), out
        assert f"of /rooms/a~1b both become the JSON key {key}" in out.error, out.error
        assert out.state == {"n": 0} and ep.state == {"n": 0}
        assert ep.call("ping", {}).state == {"n": 1}


def test_colliding_keys_in_a_result_are_unserializable(jail: SandboxPool) -> None:
    with jail.open_episode(attack_code("return {'data': [{7: 'a', '7': 'b'}]}"), "Attack", {"n": 0}) as ep:
        out = ep.call("attack", {})
        assert (out.ok, out.error_kind) == (False, "unserializable"), out
        assert "keys 7 and '7' of /data/0 both become the JSON key '7'" in out.error, out.error
        assert "Traceback" not in out.error


@pytest.mark.parametrize("body, named", [
    ("self.__dict__[101] = 1", "101 (int)"),
    ("self.__dict__[102] = 1\nself.__dict__['102'] = 2", "102 (int)"),
    ("self.__dict__[True] = 1", "True (bool)"),
    ("self.__dict__[None] = 1", "None (NoneType)"),
    ("self.__dict__[(1, 2)] = 1", "of type tuple"),
])
def test_a_non_string_key_in_the_instance_dict_is_refused_naming_it(jail: SandboxPool, body: str, named: str) -> None:
    """Red team sandbox-4 F8: `self.__dict__[101] = 1` made the worker exit 70, a crash saying nothing
    useful. It is no attribute, and JSON would write it as "101": refused, named, the state kept."""
    with jail.open_episode(attack_code(f"{body}\nself.n = 5\nreturn 1"), "Attack", {"n": 0}) as ep:
        out = ep.call("attack", {})
        assert (out.ok, out.error_kind) == (False, "unserializable"), out
        assert f"the instance's __dict__ holds the non-string key {named}" in out.error, out.error
        assert out.state == {"n": 0} and ep.state == {"n": 0}
        assert ep.call("ping", {}).state == {"n": 1} and ep.restarts == 0


def test_a_constructor_that_puts_a_non_string_key_in_its_dict_does_not_load(jail: SandboxPool) -> None:
    code = "class C:\n    def __init__(self, init_config=None):\n        self.__dict__[7] = 'x'\n"
    with pytest.raises(EnvLoadError, match="non-string key 7 \\(int\\)"):
        jail.open_episode(code, "C", {})


def test_a_reorder_is_no_change_but_the_state_shows_the_new_order(jail: SandboxPool) -> None:
    """Decided (docs/sandbox.md, "Key order is not state"): a diff, like `same_json`, ignores key order;
    the state the host holds (and rebuilds from) keeps it."""
    body = "self.books = {k: self.books[k] for k in reversed(list(self.books))}\nreturn 1"
    code = attack_code(body).replace('self.n = cfg.get("n", 0)', 'self.n = cfg.get("n", 0)\n        self.books = cfg.get("books", {})')
    with jail.open_episode(code, "Attack", {"n": 0, "books": {"a": 1, "b": 2}}) as ep:
        out = ep.call("attack", {})
        assert out.ok and out.state_diff == {}
        assert list(out.state["books"]) == ["b", "a"] and list(ep.state["books"]) == ["b", "a"]


def test_a_frame_naming_a_key_twice_is_a_crash_verdict(jail: SandboxPool) -> None:
    frame = "b'{\"ok\":true,\"result\":1,\"output\":\"\",\"state\":{\"n\":1,\"n\":7}}'"
    with jail.open_episode(attack_code(f"forge({frame})"), "Attack", {"n": 0}) as ep:
        out = ep.call("attack", {})
        assert (out.ok, out.error_kind) == (False, "crash"), out
        assert "names the key 'n' twice" in out.error, out.error
        assert out.state == {"n": 0}
        assert ep.call("ping", {}).state == {"n": 1}


SUBCLASSES = """
class Shelf(dict):
    def items(self):
        return {'copies': 2}.items()
    def keys(self):
        return iter(['copies'])
    def __iter__(self):
        return iter(['copies'])
class Loans(list):
    def __iter__(self):
        return iter([])
    def __len__(self):
        return 0
class Name(str):
    def __str__(self):
        return 'shown'
    def __repr__(self):
        return '"shown"'
class Count(int):
    def __repr__(self):
        return '2'
    __str__ = __repr__
class Hidden(str):
    def startswith(self, *args):
        return True
self.books = Shelf(copies=99)
self.loans = Loans(['Ana'])
self.name = Name('real')
self.count = Count(99)
self.__dict__[Hidden('secret')] = 'kept'
return {'shelf': Shelf(copies=99), 'loans': Loans(['Ana']), 'name': Name('real'), 'count': Count(99)}
"""


def test_container_subclasses_cannot_choose_what_the_host_sees(jail: SandboxPool) -> None:
    with jail.open_episode(attack_code(SUBCLASSES), "Attack", {"n": 0}) as ep:
        out = ep.call("attack", {})
        assert out.ok, out
        assert out.result == {"shelf": {"copies": 99}, "loans": ["Ana"], "name": "real", "count": 99}
        assert out.state == {"n": 0, "books": {"copies": 99}, "loans": ["Ana"], "name": "real", "count": 99,
                             "secret": "kept"}
        assert {c["path"] for c in out.state_diff["changes"]} == {"/books", "/loans", "/name", "/count", "/secret"}


def test_a_class_that_defines_its_own_dict_attribute_does_not_load(jail: SandboxPool) -> None:
    code = ("class Shown:\n"
            "    __dict__ = property(lambda self: {'n': 0})\n"
            "    def __init__(self, init_config=None):\n"
            "        self.n = 5\n"
            "class A(Shown):\n"
            "    def bump(self):\n"
            "        self.n += 1\n")
    with pytest.raises(EnvLoadError, match="Shown defines __dict__ itself"):
        jail.open_episode(code, "A", {})
    assert benign_call_works(jail)
