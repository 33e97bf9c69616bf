"""Static checks: each planted defect yields its named problem; a clean module yields none."""

from __future__ import annotations

import pytest

from envscaler_core.synth import extract_tools, static_problems

GOOD = '''from typing import Dict, Optional


class Shop:
    def __init__(self, init_config: dict | None = None):
        self.stock: Dict[str, int] = dict((init_config or {}).get("stock", {}))

    def get_stock(self, item: str, default: Optional[int] = None) -> dict:
        """Stock of an item.

        Args:
            item: Item id.
            default: Returned when unknown.
        """
        if item not in self.stock:
            return {"success": False, "error": f"unknown item {item}"}
        result = {"success": True, "data": self.stock[item]}
        return result
'''


def names(code: str, cls: str = "Shop") -> list[str]:
    return [p.name for p in static_problems(code, cls)]


def test_clean_module_has_no_problems() -> None:
    assert static_problems(GOOD, "Shop") == []


def test_syntax_error_is_reported_with_line() -> None:
    problems = static_problems(GOOD.replace("if item not in", "if item not in ("), "Shop")
    assert problems[0].name == "syntax-error" and problems[0].line is not None


def test_missing_import_is_an_undefined_name() -> None:
    problems = static_problems(GOOD.replace("from typing import Dict, Optional", "from typing import Dict"), "Shop")
    assert [(p.name, p.detail) for p in problems] == [("undefined-name", "name 'Optional' is not defined")]


def test_non_stdlib_import_is_unresolvable_in_the_sandbox() -> None:
    assert names("import requests\n" + GOOD) == ["unresolvable-import"]


def test_env_class_with_a_base_class_is_rejected() -> None:
    assert names(GOOD.replace("class Shop:", "class Shop(dict):")) == ["class-has-base"]


def test_missing_class_is_reported() -> None:
    assert names(GOOD, "Store") == ["missing-class"]


def test_unannotated_parameter_is_a_problem() -> None:
    assert names(GOOD.replace("item: str,", "item,")) == ["unannotated-parameter"]


def test_undocumented_public_method_is_a_problem() -> None:
    code = GOOD.replace('"""Stock of an item.', '"""X', 1)
    code = code[: code.index('"""X')] + code[code.index('"""', code.index('"""X') + 3) + 3:]
    assert names(code) == ["undocumented-method"]


def test_non_dict_return_annotation_and_value_are_problems() -> None:
    code = GOOD.replace(") -> dict:", ") -> list:").replace("return result", "return [result]")
    assert names(code) == ["non-dict-return", "non-dict-return"]


def test_bare_return_is_a_non_dict_return() -> None:
    assert names(GOOD.replace("return result", "return")) == ["non-dict-return"]


def test_private_helpers_are_not_held_to_the_tool_rules() -> None:
    code = GOOD + "\n    def _norm(self, x):\n        return x.strip()\n"
    assert static_problems(code, "Shop") == []


def test_a_property_setter_reads_the_property_defined_above_it() -> None:
    code = '''
class Env:
    def __init__(self):
        self._n = 0

    @property
    def n(self) -> int:
        return self._n

    @n.setter
    def n(self, value: int) -> None:
        self._n = value

    def bump(self) -> dict:
        """Bump the counter."""
        self._n += 1
        return {"success": True, "message": "bumped"}
'''
    assert static_problems(code, "Env") == []
    assert [t.function.name for t in extract_tools(code, "Env")] == ["bump"]  # properties are not tools


HOOKED = {  # red team sandbox-3 F4b: the sandbox's own hooks let a class choose the state the host sees
    "a method": ("    def __sandbox_state__(self):\n        return {'stock': {}}\n", "'__sandbox_state__'"),
    "a static method": ("    @staticmethod\n    def __sandbox_config__(config):\n        return {}\n",
                        "'__sandbox_config__'"),
    "an assignment": ("    __sandbox_result__ = staticmethod(str)\n", "'__sandbox_result__'"),
    "setattr with the name": ("    def _arm(self):\n        setattr(type(self), '__sandbox_restore__', None)\n"
                              "        return {}\n", "'__sandbox_restore__'"),
}


@pytest.mark.parametrize("where", sorted(HOOKED))
def test_a_class_that_defines_or_names_a_sandbox_hook_is_refused(where: str) -> None:
    body, name = HOOKED[where]
    problems = [p for p in static_problems(GOOD + body, "Shop") if p.name == "sandbox-hook"]
    assert len(problems) == 1, static_problems(GOOD + body, "Shop")
    assert f"{name} names one of the sandbox's own hooks" in problems[0].detail and problems[0].line


def test_a_tool_under_a_name_envscalers_runtime_reserves_is_refused_naming_it() -> None:
    """EnvScaler's runtime takes `chat_with_user` as the message to the user and never runs the method:
    a class we make or validate must not offer a tool under that name (outside check round 4, F2)."""
    code = GOOD.replace("def get_stock(", "def chat_with_user(")
    [problem] = static_problems(code, "Shop")
    assert problem.name == "reserved-tool-name" and "'chat_with_user'" in problem.detail, problem
