"""`copy` writes no state into a module, a class or a dataclass Field, nor a dunder into anything; `@dataclass`
and the field readers judge every field they read, inherited or held by an instance (sandbox/jail_check_guards.py).

Outside re-check rt20-R6: a `__reduce__` hands `copy._reconstruct` any callable and any state, which it then
writes with `__dict__.update`, `setattr` and `y[key] = value`: `dataclasses.__dict__.update(...)` replaced the
module's own helpers, so `astuple` read any attribute of any object (F2); a copied, unfrozen Field renamed to
code and set into a base's `__dataclass_fields__` was compiled into a subclass's `__eq__` (F1); an instance
holding its own `__dataclass_fields__` made `astuple` read the clock (F3). These run the checks in a real jail
with the audit hook on and without the static rule, as a check the rule missed would run."""

from __future__ import annotations

import pytest

from sandbox import SandboxPool
from tests.sandbox.helpers import assert_check_refused, one_check

STATE = {"credits": 5}
MAKER = ("import copy\nimport dataclasses\nimport datetime\n\n"
         "KEY = ''.join(['__', 'dataclass', '_fields', '__'])\n\n"
         "class Mk:\n    def __init__(self, target, state):\n        self.target, self.state = target, state\n"
         "    def __reduce__(self):\n        return (self.target, (), self.state)\n\n"
         "@dataclasses.dataclass(init=False, repr=False)\nclass B:\n    x: int = 0\n\n"
         "class Plain(datetime.datetime):\n    pass\n\n")
TAIL = "    return final_state['credits'] == 5\n"

COPY_WRITES = {
    "a module's globals (F2)": (
        "copy writes no state into a module",
        "def check_func(final_state):\n    copy.copy(Mk(lambda: dataclasses, {'fie' + 'lds': len}))\n" + TAIL),
    "a class's __dataclass_fields__ as slot state (F1)": (
        "copy writes no state into a class",
        "def check_func(final_state):\n    copy.copy(Mk(lambda: B, (None, {KEY: {}})))\n" + TAIL),
    "a class's attributes through deepcopy": (
        "copy writes no state into a class",
        "def check_func(final_state):\n    copy.deepcopy(Mk(lambda: B, {'x': 1}))\n" + TAIL),
    "a copied Field, then renamed (F1)": (
        "copy writes no state into a dataclass Field",
        "def check_func(final_state):\n    f = copy.copy(dataclasses.fields(B)[0])\n" + TAIL),
    "an instance's own __dataclass_fields__ (F3)": (
        "copy sets no attribute named '__dataclass_fields__'",
        "def check_func(final_state):\n    copy.copy(Mk(lambda: Plain(2020, 1, 1), {KEY: {}}))\n" + TAIL),
    "an attribute named by no string": (
        "copy sets no attribute named 1",
        "def check_func(final_state):\n    copy.copy(Mk(lambda: Plain(2020, 1, 1), (None, {1: 2})))\n" + TAIL),
}


@pytest.mark.parametrize("form", sorted(COPY_WRITES))
def test_copy_writes_no_state_a_check_chose_into_what_the_interpreter_reads(audited: SandboxPool, form: str) -> None:
    why, body = COPY_WRITES[form]
    assert_check_refused(audited, MAKER + body, STATE, why)


INJECTED = ("    f = dataclasses.field()\n    f.name = \"x,setattr(self,'out',len)\"\n    f._field_type = dataclasses._FIELD\n"
            "    B.__dataclass_fields__['x'] = f\n{make}\n    k = Sub()\n    k.x = 1\n    k == k\n    return k.out is len\n")
SUBCLASSES = {
    "a class statement": "    @dataclasses.dataclass(init=False, repr=False)\n    class Sub(B):\n        pass\n",
    "make_dataclass": "    Sub = dataclasses.make_dataclass('Sub', [], bases=(B,), init=False, repr=False)\n",
}


@pytest.mark.parametrize("form", sorted(SUBCLASSES))
def test_a_dataclass_inheriting_a_field_that_is_no_plain_name_is_refused_before_any_code_is_made(
        audited: SandboxPool, form: str) -> None:
    """rt20-R6 F1 steps 3-4: the inherited Field's name was compiled into `Sub.__eq__` and run with the builtins.
    A class statement is judged when made, `make_dataclass` where `dataclasses` reads its bases' fields."""
    source = MAKER + "def check_func(final_state):\n" + INJECTED.replace("{make}", SUBCLASSES[form])
    assert_check_refused(audited, source, STATE, "field 'x' is named \"x,setattr")


INSTANCE_FIELDS = ("def check_func(final_state):\n    f = dataclasses.field()\n    f.name = 'no' + 'w'\n    f._field_type = dataclasses._FIELD\n"
                   "    Plain.__dataclass_fields__ = {}\n    p = Plain(2020, 1, 1)\n    p.__dict__[KEY] = {'now': f}\n"
                   "    return dataclasses.{call}(p)[{at}]().year > 2000\n")


@pytest.mark.parametrize("call, at", [("astuple", "0"), ("asdict", "'now'")])
def test_a_field_reader_judges_the_fields_an_instance_holds_itself(audited: SandboxPool, call: str, at: str) -> None:
    """rt20-R6 F3: the readers judged the class, but read `getattr(obj, '__dataclass_fields__')` from the instance."""
    source = MAKER + INSTANCE_FIELDS.replace("{call}", call).replace("{at}", at)
    assert_check_refused(audited, source, STATE, "holds __dataclass_fields__ of its own")


HONEST_COPIES = {
    "a dataclass instance": ("import dataclasses\n@dataclasses.dataclass\nclass P:\n    a: int\n    b: list\n",
                             "P(1, [2])", "v.b.append(3)"),
    "a slots dataclass instance": ("import dataclasses\n@dataclasses.dataclass(slots=True, frozen=True)\n"
                                   "class P:\n    a: int\n", "P(1)", "None"),
    "a namedtuple": ("import collections\nP = collections.namedtuple('P', 'a b')\n", "P(1, [2])", "v.b.append(3)"),
    "an Enum member": ("import enum\nclass E(enum.Enum):\n    A = 1\n", "E.A", "None"),
    "plain containers": ("", "{'a': [1, {2, 3}], 'b': (4, {'c': 5})}", "v['a'].append(6)"),
    "collections' containers": (
        "import collections\n",
        "[collections.defaultdict(list, a=[1]), collections.OrderedDict(b=2), collections.Counter('aab'),"
        " collections.deque([1, 2], maxlen=3), collections.UserDict(c=[3])]", "v[0]['a'].append(2)"),
    "numbers, times, ids and addresses": (
        "import datetime\nimport decimal\nimport fractions\nimport ipaddress\nimport uuid\n",
        "[decimal.Decimal('1.10'), fractions.Fraction(1, 3), datetime.datetime(2020, 1, 2, 3, 4),"
        " datetime.timedelta(days=1), uuid.UUID(int=7), ipaddress.ip_address('10.0.0.1'),"
        " ipaddress.ip_network('10.0.0.0/8')]", "None"),
    "a nested mix": ("import collections\nimport dataclasses\n@dataclasses.dataclass\nclass P:\n    a: dict\n",
                     "{'p': P({'q': collections.deque([P({})])}), 'n': collections.Counter(x=1)}", "v['p'].a['q'].append(1)"),
}


@pytest.mark.parametrize("form", sorted(HONEST_COPIES))
@pytest.mark.parametrize("how", ["copy", "deepcopy"])
def test_an_honest_copy_in_a_check_is_verified(audited: SandboxPool, form: str, how: str) -> None:
    head, value, change = HONEST_COPIES[form]
    deep = how == "deepcopy"
    source = (f"import copy\n{head}\ndef check_func(final_state):\n    v = {value}\n    c = copy.{how}(v)\n"
              f"    same = c == v and type(c) is type(v)\n    {change}\n"
              f"    return final_state['credits'] == 5 and same and (c != v) == {deep and change != 'None'}\n")
    plain: dict = {}
    exec(compile(source, "<check>", "exec"), plain)
    assert plain["check_func"](STATE) is True
    assert one_check(audited, source, STATE).passed is True
