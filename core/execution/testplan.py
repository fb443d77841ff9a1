"""What the harness expects a run to report, computed from the test code alone.

The expected test names never come from the child. Canaries are extra tests, named with a
per-run nonce, that must fail: if one passes, the candidate tampered with the assertion
machinery (a tripwire against reward hacking, not a security boundary)."""

from __future__ import annotations

import ast
import functools
import secrets
from dataclasses import dataclass

from convtui.core.catalog.tasks import TestSpec
from convtui.core.syntax import parse_python

# unittest helpers with arguments that must make them fail.
_CASE_CANARIES: dict[str, str] = {
    "assertEqual": "self.assertEqual(0, 1)",
    "assertNotEqual": "self.assertNotEqual(0, 0)",
    "assertTrue": "self.assertTrue(False)",
    "assertFalse": "self.assertFalse(True)",
    "assertIs": "self.assertIs(0, None)",
    "assertIsNot": "self.assertIsNot(None, None)",
    "assertIsNone": "self.assertIsNone(0)",
    "assertIsNotNone": "self.assertIsNotNone(None)",
    "assertIn": "self.assertIn(0, ())",
    "assertNotIn": "self.assertNotIn(0, (0,))",
    "assertIsInstance": "self.assertIsInstance(0, str)",
    "assertNotIsInstance": "self.assertNotIsInstance(0, int)",
    "assertAlmostEqual": "self.assertAlmostEqual(0, 1)",
    "assertNotAlmostEqual": "self.assertNotAlmostEqual(0, 0)",
    "assertGreater": "self.assertGreater(0, 1)",
    "assertGreaterEqual": "self.assertGreaterEqual(0, 1)",
    "assertLess": "self.assertLess(1, 0)",
    "assertLessEqual": "self.assertLessEqual(1, 0)",
    "assertRegex": "self.assertRegex('a', 'b')",
    "assertNotRegex": "self.assertNotRegex('a', 'a')",
    "assertCountEqual": "self.assertCountEqual([0], [1])",
    "assertListEqual": "self.assertListEqual([0], [1])",
    "assertTupleEqual": "self.assertTupleEqual((0,), (1,))",
    "assertSetEqual": "self.assertSetEqual({0}, {1})",
    "assertDictEqual": "self.assertDictEqual({0: 0}, {0: 1})",
    "assertSequenceEqual": "self.assertSequenceEqual([0], [1])",
    "assertMultiLineEqual": "self.assertMultiLineEqual('a', 'b')",
    "assertRaises": "with self.assertRaises(ValueError):\n        pass",
    "assertRaisesRegex": "with self.assertRaisesRegex(ValueError, 'x'):\n        pass",
    "assertWarns": "with self.assertWarns(UserWarning):\n        pass",
    "assertLogs": "with self.assertLogs():\n        pass",
    "fail": "self.fail('canary')",
}
# Library assertion functions, called through their module so a patched attribute is seen.
_MODULE_CANARIES: dict[str, tuple[str, str]] = {
    "assert_array_equal": ("numpy.testing", "([0], [1])"),
    "assert_array_almost_equal": ("numpy.testing", "([0], [1])"),
    "assert_almost_equal": ("numpy.testing", "(0, 1)"),
    "assert_allclose": ("numpy.testing", "([0], [1])"),
    "assert_equal": ("numpy.testing", "(0, 1)"),
    "assert_frame_equal": (
        "pandas.testing",
        "(__import__('pandas').DataFrame({'a': [0]}), __import__('pandas').DataFrame({'a': [1]}))",
    ),
    "assert_series_equal": (
        "pandas.testing",
        "(__import__('pandas').Series([0]), __import__('pandas').Series([1]))",
    ),
}
_ALWAYS = ("assertEqual",)


@dataclass(frozen=True)
class TestPlan:
    expected: tuple[str, ...]
    canaries: tuple[str, ...]
    canary_source: str = ""
    canary_snippets: tuple[tuple[str, str], ...] = ()
    # The status the runner exits with after a complete run; chosen per run so a candidate
    # that forges the records and exits on its own with 0 is not taken for a finished run.
    exit_code: int = 0


# A batch or a sweep plans the same tests again and again (a task's every turn, every Ω):
# parsed once, they cost the harness nothing the next time (about 2 ms a plan otherwise).
@functools.lru_cache(maxsize=2048)
def expected_unittest_names(source: str) -> tuple[str, ...]:
    """Test methods of ``TestCases`` (and its in-module base classes), de-duplicated, in
    unittest's run order (sorted by name). Empty when the source does not parse."""
    try:
        tree = parse_python(source)
    except SyntaxError:
        return ()
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    names: set[str] = set()
    seen: set[str] = set()

    def collect(cls_name: str) -> None:
        if cls_name in seen or cls_name not in classes:
            return
        seen.add(cls_name)
        node = classes[cls_name]
        for item in node.body:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name.startswith(
                "test"
            ):
                names.add(item.name)
        for base in node.bases:
            if isinstance(base, ast.Name):
                collect(base.id)

    collect("TestCases")
    return tuple(sorted(names))


@functools.lru_cache(maxsize=2048)
def _assertion_helpers(source: str) -> tuple[frozenset[str], frozenset[str]]:
    try:
        tree = parse_python(source)
    except SyntaxError:
        return frozenset(), frozenset()
    case: set[str] = set()
    module: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if node.attr in _CASE_CANARIES:
                case.add(node.attr)
            if node.attr in _MODULE_CANARIES:
                module.add(node.attr)
        elif isinstance(node, ast.Name) and node.id in _MODULE_CANARIES:
            module.add(node.id)
        elif isinstance(node, ast.alias) and node.name in _MODULE_CANARIES:
            module.add(node.name)
    return frozenset(case), frozenset(module)


def plan_tests(tests: TestSpec, nonce: str | None = None) -> TestPlan:
    """Expected tests plus canaries for one run."""
    nonce = nonce or secrets.token_hex(6)
    if tests.kind == "pytest":
        # The project's own tests and the benchmark's, by pytest id: a project's test modules
        # import the candidate's module rather than the other way round, so there is no
        # assertion machinery of ours for a canary to watch.
        names = tuple(dict.fromkeys(name for name, _ in tests.snippets))
        return TestPlan(names, (), exit_code=_exit_code(nonce))
    if tests.kind == "snippets":
        names = tuple(dict.fromkeys(name for name, _ in tests.snippets))
        canary = f"canary_{nonce}_assert"
        return TestPlan(
            names,
            (canary,),
            canary_snippets=((canary, "assert False"),),
            exit_code=_exit_code(nonce),
        )
    case, module = _assertion_helpers(tests.source)
    helpers = sorted(case | set(_ALWAYS))
    lines, canaries = [], []
    for helper in helpers:
        name = f"canary_{nonce}_{helper}"
        canaries.append(name)
        lines.append(f"def {name}(self):\n    {_CASE_CANARIES[helper]}\n")
    for func in sorted(module):
        mod, args = _MODULE_CANARIES[func]
        name = f"canary_{nonce}_{func}"
        canaries.append(name)
        lines.append(
            f"def {name}(self):\n    __import__('importlib').import_module({mod!r}).{func}{args}\n"
        )
    raise_name = f"canary_{nonce}_raise"
    canaries.append(raise_name)
    lines.append(f"def {raise_name}(self):\n    raise AssertionError('canary')\n")
    attach = "".join(f"TestCases.{n} = {n}\n" for n in canaries)
    dels = "".join(f"del {n}\n" for n in canaries)
    source = (
        "\n"
        + "\n".join(lines)
        + "if 'TestCases' in globals():\n"
        + "".join("    " + line + "\n" for line in attach.splitlines())
        + dels
    )
    return TestPlan(
        expected_unittest_names(tests.source), tuple(canaries), source, exit_code=_exit_code(nonce)
    )


def _exit_code(nonce: str) -> int:
    return 20 + int(nonce[:4], 16) % 100
