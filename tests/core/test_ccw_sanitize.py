"""BigCodeBench's ``sanitize --calibrate`` and calibrated evaluation (convtui.core.ccw.sanitize).

Each expected string is derived by hand from the rules of BigCodeBench's sanitize
(sfc-gh-hhan/bigcodebench@777303b, ``bigcodebench/sanitize.py``; the derivation is in each
test's or case's comment):

R1 extract: of all runs of >= 2 lines (split on "\\n", after stripping the answer) that
   ``ast.parse`` accepts, the one with the most non-blank lines, the earliest on a tie.
R2 keep every top-level import (not ``__future__``) and the top-level functions, classes and
   assignments reachable from ``task_func`` through the identifiers they contain; the first
   definition of a name wins; decorated definitions and other statements are dropped. An
   assignment is named by its first bare-name child: the target, else the value.
R3 output: imports, then kept definitions in source order, joined by "\\n".
R4 a definition's text runs to its last statement, plus ";"/comment on that line, plus the
   comment lines after it indented at least as deep as its body (tree-sitter's blocks).
R5 among the lines after the last one starting with a space, the first naming ``task_func``
   is cut with everything after it.
C  calibrate: "```python\\n    " becomes "```python\\n" + complete_prompt + "    ".
E  evaluation runs code_prompt + "\\n    pass\\n" + solution.
"""

from __future__ import annotations

import ast
import warnings

import pytest
from support.data import BIGCODEBENCH as BCB_FILE

from convtui.core.catalog.loaders import load_bigcodebench
from convtui.core.ccw.sanitize import (
    calibrate,
    calibrated_program,
    extract_code,
    sanitize,
    turn0_code,
)

FENCE = "```"


# Each case: an answer, and what sanitize(answer, "task_func") makes of it, derived by hand from
# the rules above in the comment before it.
SANITIZED = [
    pytest.param(
        "Here is the solution:\n\n"
        f"{FENCE}python\n"
        "import os\n"
        "import re\n"
        "\n"
        "def task_func(path):\n"
        '    """Count files."""\n'
        "    return len(os.listdir(path))\n"
        f"{FENCE}\n\n"
        "This function lists the directory.\n",
        # R1: the fences and prose do not parse; the run "import os" .. "return ..." does.
        # R2/R3: both imports (unused "re" too), then task_func; the blank line goes (R3 joins).
        "import os\n"
        "import re\n"
        "def task_func(path):\n"
        '    """Count files."""\n'
        "    return len(os.listdir(path))",
        id="a-fenced-answer-loses-its-prose-and-blank-lines-between-pieces",
    ),
    pytest.param(
        f"{FENCE}python\n"
        "import math\n"
        "from collections import Counter\n"
        "\n"
        "SCALE = 2.5\n"
        "UNUSED = 'x'\n"
        "\n"
        "def _unused(a):\n"
        "    return a\n"
        "\n"
        "class Stats:\n"
        "    def mean(self, xs):\n"
        "        return sum(xs) / len(xs)\n"
        "\n"
        "def task_func(xs):\n"
        "    s = Stats()\n"
        "    return normalise(s.mean(xs))\n"
        "\n"
        "def normalise(v):\n"
        "    return math.floor(v * SCALE)\n"
        "\n"
        'if __name__ == "__main__":\n'
        "    print(task_func([1, 2, 3]))\n"
        f"{FENCE}",
        # R2: task_func names Stats and normalise; normalise names SCALE. UNUSED and _unused are
        # reached from nothing; the __main__ block is not a definition. R3: source order.
        "import math\n"
        "from collections import Counter\n"
        "SCALE = 2.5\n"
        "class Stats:\n"
        "    def mean(self, xs):\n"
        "        return sum(xs) / len(xs)\n"
        "def task_func(xs):\n"
        "    s = Stats()\n"
        "    return normalise(s.mean(xs))\n"
        "def normalise(v):\n"
        "    return math.floor(v * SCALE)",
        id="definitions-reached-from-the-entry-point-are-kept-in-source-order",
    ),
    pytest.param(
        f"{FENCE}python\nimport os\nimport sys\n\ndef solve(x):\n    return x\n{FENCE}",
        # R2: nothing is reached from task_func, which is not defined.
        "import os\nimport sys",
        id="a-missing-entry-point-leaves-only-the-imports",
    ),
    pytest.param(
        "from __future__ import annotations\n"
        "import functools\n"
        "try:\n"
        "    import numpy as np\n"
        "except ImportError:\n"
        "    np = None\n"
        "\n"
        "@functools.lru_cache(maxsize=None)\n"
        "def fib(n):\n"
        "    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
        "\n"
        "def task_func(n):\n"
        "    return fib(n)\n",
        # R2: a __future__ import is not an import statement to tree-sitter; "try" is not an
        # import; a decorated fib is not a function definition, so task_func keeps a dangling
        # call (BigCodeBench scores this answer as failing).
        "import functools\ndef task_func(n):\n    return fib(n)",
        id="decorated-definitions-guarded-imports-and-future-imports-are-dropped",
    ),
    pytest.param(
        "def task_func():\n    return 1\n\ndef task_func():\n    return 2\n",
        "def task_func():\n    return 1",
        id="the-first-definition-of-a-name-wins",
    ),
    pytest.param(
        "helper = None\ndef helper():\n    return 3\ndef task_func():\n    return helper()\n",
        # R2: "helper = None" takes the name; the later def helper is skipped.
        "helper = None\ndef task_func():\n    return helper()",
        id="an-assignment-is-the-first-definition-of-its-name",
    ),
    pytest.param(
        "import pandas as pd\n"
        "pd.options.display.width = cols\n"
        "cols = 80\n"
        "def task_func():\n"
        "    return cols\n",
        # R2: tree-sitter names "pd.options.display.width = cols" after its first bare-name
        # child, "cols", so it is the definition task_func reaches and "cols = 80" is a duplicate.
        "import pandas as pd\npd.options.display.width = cols\ndef task_func():\n    return cols",
        id="an-attribute-assignment-is-named-after-its-value",
    ),
    pytest.param(
        "A, B = 1, 2\ndef task_func():\n    return A\n",
        # A tuple target and a non-name value: no name, never kept.
        "def task_func():\n    return A",
        id="a-tuple-assignment-of-no-name-is-never-kept",
    ),
    pytest.param(
        "def task_func(n):\n    return REGISTRY[n]()\n\nREGISTRY = {'a': task_func}\n",
        # R2 keeps REGISTRY (task_func names it) after task_func; R5: its line names task_func
        # and no indented line follows, so it is cut.
        "def task_func(n):\n    return REGISTRY[n]()",
        id="trailing-lines-naming-the-entry-point-are-cut",
    ),
    pytest.param(
        "import os\ndef task_func(): return os.getcwd()\n",
        # R5 also removes a one-line task_func: its def line is not indented.
        "import os",
        id="trailing-lines-naming-the-entry-point-are-cut-one-line-def-too",
    ),
    pytest.param(
        "def task_func():\n"
        "    if True:\n"
        "        return 1\n"
        "      # six\n"
        "    # four\n"
        "  # two\n"
        "    # four again\n"
        "def g():\n"
        "    pass\n",
        # R4: the body is indented 4; "# six" and "# four" are as deep or deeper and join it;
        # "# two" is shallower and ends the definition.
        "def task_func():\n    if True:\n        return 1\n      # six\n    # four",
        id="comments-after-a-body-follow-tree-sitters-blocks",
    ),
    pytest.param(
        "def task_func():\n    return 1;  # done\n",
        # R4: a ";" and a comment after the last statement belong to the definition.
        "def task_func():\n    return 1;  # done",
        id="a-semicolon-and-comment-on-the-last-line-belong-to-the-definition",
    ),
    pytest.param(
        "First a helper:\n"
        f"{FENCE}python\ndef helper(x):\n    return x + 1\n{FENCE}\n"
        "Then the main function:\n"
        f"{FENCE}python\ndef task_func(x):\n    return helper(x)\n{FENCE}\n",
        # R1: each block is a 2-line run; the first wins the tie, and task_func is not in it.
        "",
        id="of-two-fenced-blocks-only-the-longest-run-survives",
    ),
    pytest.param(
        f"{FENCE}python\n"
        "import re\n"
        "def task_func(s):\n"
        "    # ünïcödé\n"
        "    return re.sub('é', 'e', s)  # café\n"
        "    # fin ✓\n"
        f"{FENCE}",
        # R4 with multi-byte characters: ast columns are byte offsets.
        "import re\n"
        "def task_func(s):\n"
        "    # ünïcödé\n"
        "    return re.sub('é', 'e', s)  # café\n"
        "    # fin ✓",
        id="non-ascii-text-is-cut-at-the-right-places",
    ),
]


@pytest.mark.parametrize(("answer", "expected"), SANITIZED)
def test_sanitize_gives_the_hand_derived_answer(answer: str, expected: str) -> None:
    assert sanitize(answer, "task_func") == expected


def test_calibration_turns_a_fenced_bare_body_into_the_whole_function() -> None:
    complete_prompt = 'import heapq\n\ndef task_func(items):\n    """Sort items."""\n'
    code_prompt = "import heapq\ndef task_func(items):\n"
    answer = f"{FENCE}python\n    return sorted(items)\n{FENCE}"
    # C: the fence is followed by four spaces, so the complete prompt goes in front of them.
    assert calibrate(answer, complete_prompt) == (
        f"{FENCE}python\n"
        "import heapq\n\n"
        "def task_func(items):\n"
        '    """Sort items."""\n'
        "    return sorted(items)\n"
        f"{FENCE}"
    )
    code = turn0_code(
        answer, complete_prompt=complete_prompt, code_prompt=code_prompt, entry_point="task_func"
    )
    solution = (
        'import heapq\ndef task_func(items):\n    """Sort items."""\n    return sorted(items)'
    )
    assert code.raw == answer
    assert code.solution == solution
    # E: the stub function comes first; the solution's definition replaces it.
    assert code.program == "import heapq\ndef task_func(items):\n\n    pass\n" + solution
    assert calibrated_program(solution, code_prompt) == code.program


def test_calibration_needs_the_fence_so_an_unfenced_body_comes_out_empty() -> None:
    # An open model's answer starts after BigCodeBench's response prefix (which opened the
    # fence), so it holds no fence of its own. C does nothing; R1: a single line is returned
    # as it is; R2: "return ..." is neither an import nor a definition.
    body = "    return sorted(items)\n"
    assert calibrate(body, "def task_func(items):\n") == body
    code = turn0_code(
        body,
        complete_prompt="def task_func(items):\n",
        code_prompt="def task_func(items):\n",
        entry_point="task_func",
    )
    assert code.solution == ""
    assert code.program == "def task_func(items):\n\n    pass\n"


def test_code_that_does_not_parse_keeps_the_longest_run_that_does() -> None:
    answer = (
        f"{FENCE}python\n"
        "import os\n"
        "def task_func(path):\n"
        "    files = os.listdir(path)\n"
        '    return [f for f in files if f.endswith(".txt"]\n'
        f"{FENCE}"
    )
    # R1: the bracket mismatch breaks every run through line 4; "import os" .. "files = ..."
    # (3 lines) is the longest run left.
    assert extract_code(answer) == "import os\ndef task_func(path):\n    files = os.listdir(path)"
    assert sanitize(answer, "task_func") == (
        "import os\ndef task_func(path):\n    files = os.listdir(path)"
    )


def test_an_answer_with_nothing_parsable_gives_nothing() -> None:
    # R1: no run of two lines parses, so BigCodeBench takes the first line ("I cannot ...").
    assert extract_code("I cannot help with that.\nPlease ask again!") == "I cannot help with that."
    assert sanitize("I cannot help with that.\nPlease ask again!", "task_func") == ""
    assert sanitize("", "task_func") == ""


@pytest.mark.skipif(not BCB_FILE.is_file(), reason=f"{BCB_FILE} not found")
def test_every_ground_truth_in_a_fenced_answer_comes_through_runnable() -> None:
    tasks = load_bigcodebench(BCB_FILE)[:200]
    for task in tasks:
        answer = f"Solution:\n\n{FENCE}python\n{task.ground_truth}\n{FENCE}\n\nDone."
        code = turn0_code(
            answer,
            complete_prompt=task.complete_prompt,
            code_prompt=task.code_header,
            entry_point=task.entry_point,
        )
        assert f"def {task.entry_point}(" in code.solution, task.id
        assert code.program.startswith(task.code_header + "\n    pass\n"), task.id
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ground truths with "\s" in plain strings
            ast.parse(code.program)
