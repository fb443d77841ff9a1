"""Code extraction from model replies: robust mode, and CCW's lossy parser
(docs/harness-notes.md, Code extraction)."""

import ast
import gzip
import json

import pytest
from support.data import data_file

from convtui.core.models.extract import extract_code, holds_code

HEADER = "import os\nimport pandas as pd\nfrom collections import Counter\n"

SOLUTION = '''import os
import pandas as pd
from collections import Counter


def _count(words):
    return Counter(words)


def task_func(path):
    """Count words in a file."""
    with open(path) as fh:
        return _count(fh.read().split())
'''


def _fence(code: str, tag: str = "python", fence: str = "```") -> str:
    return f"{fence}{tag}\n{code.rstrip()}\n{fence}"


def _defs(code: str) -> list[str]:
    return [n.name for n in ast.parse(code).body if isinstance(n, ast.FunctionDef)]


# --- robust mode ------------------------------------------------------------------------------


def test_prose_around_fenced_code_keeps_pep8_blank_lines() -> None:
    reply = (
        "Here is the solution:\n\n"
        + _fence(SOLUTION)
        + "\n\nThis function reads the file and counts the words.\n"
    )
    code = extract_code(reply, entry_point="task_func")
    assert code == SOLUTION
    # Two blank lines between functions: exactly what CCW's parser cut at.
    assert "\n\n\ndef task_func" in code


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        pytest.param(
            "```python\n"
            "import math\n\n\n"
            "def task_func(x):\n"
            "    return math.sqrt(x)\n"
            "```\n\n"
            "Example usage:\n\n"
            "```python\n"
            "result = task_func(16)\n"
            "print(result)  # 4.0\n"
            "```\n",
            "import math\n\n\ndef task_func(x):\n    return math.sqrt(x)\n",
            id="second-block-is-usage-example",
        ),
        pytest.param(
            "First import the libraries:\n"
            "```python\nimport numpy as np\n```\n"
            "A first attempt:\n"
            "```python\ndef task_func(a):\n    return np.mean(a\n```\n"
            "Fixed version:\n"
            "```python\ndef task_func(a):\n    return np.mean(a)\n```\n",
            "import numpy as np\n\ndef task_func(a):\n    return np.mean(a)\n",
            id="revised-solution-wins-and-import-block-is-kept",
        ),
        pytest.param(
            "```python\nimport requests\n```\n"
            "```python\ndef task_func(a):\n    return a + 1\n```\n",
            "def task_func(a):\n    return a + 1\n",
            id="unrelated-earlier-block-is-not-kept",
        ),
    ],
)
def test_the_block_with_the_entry_point_is_the_code(reply: str, expected: str) -> None:
    assert extract_code(reply, entry_point="task_func") == expected


def test_longest_block_without_entry_point() -> None:
    reply = "```python\nx = 1\n```\nthen\n```python\ndef f():\n    return 2\n```\n"
    assert extract_code(reply) == "def f():\n    return 2\n"


def test_unfenced_reply_is_code() -> None:
    assert extract_code(SOLUTION, entry_point="task_func") == SOLUTION


def test_unfenced_code_with_leading_and_trailing_prose() -> None:
    reply = (
        "Here is the solution:\n"
        + SOLUTION
        + "\nThis reads the file and counts every word in it.\n"
    )
    assert extract_code(reply, entry_point="task_func") == SOLUTION


def test_unfenced_captions_between_functions_and_bare_words() -> None:
    reply = (
        "Sure\n"
        "import os\n\n"
        "The helper:\n"
        "def helper():\n    return os.sep\n\n"
        "And the main function:\n"
        "def task_func():\n    return helper()\n\n"
        "Hope this helps!"
    )
    code = extract_code(reply, entry_point="task_func")
    assert _defs(code) == ["helper", "task_func"]
    assert "Sure" not in code and "Hope" not in code


def test_unfenced_broken_code_is_left_for_the_compiler() -> None:
    # A real syntax error must reach compilation feedback, not be "repaired" away.
    reply = "def task_func():\n    print 'hello world'\n"
    assert extract_code(reply) == reply


def test_unclosed_final_fence() -> None:
    # The model hit its token limit inside the block.
    reply = "Sure!\n```python\nimport os\n\n\ndef task_func():\n    return os.getcwd()\n"
    code = extract_code(reply, entry_point="task_func")
    assert code == "import os\n\n\ndef task_func():\n    return os.getcwd()\n"


def test_closing_fence_glued_to_last_line() -> None:
    reply = "```python\ndef task_func():\n    return 1```\n"
    assert extract_code(reply, entry_point="task_func") == "def task_func():\n    return 1\n"


@pytest.mark.parametrize("tag", ["py", "Python3", "python3", "", "{.python}", "python title=x"])
def test_language_tags(tag: str) -> None:
    reply = "Answer:\n" + _fence("def task_func():\n    return 1", tag=tag) + "\nDone."
    assert extract_code(reply, entry_point="task_func") == "def task_func():\n    return 1\n"


def test_tilde_fence_and_indented_fence() -> None:
    tilde = _fence("def task_func():\n    return 1", fence="~~~")
    assert extract_code(tilde) == "def task_func():\n    return 1\n"
    indented = (
        "1. Write the function:\n   ```python\n   def task_func():\n       return 1\n   ```\n"
    )
    assert extract_code(indented) == "def task_func():\n    return 1\n"


def test_shell_block_is_not_code() -> None:
    reply = (
        "Install first:\n```bash\npip install pandas\n```\n"
        "```python\ndef task_func():\n    return 1\n```\n"
    )
    assert extract_code(reply) == "def task_func():\n    return 1\n"


def test_empty_reply_stays_empty_even_with_header() -> None:
    assert extract_code("", header=HEADER) == ""
    assert extract_code("```python\n```", header=HEADER) == ""


def test_missing_imports_get_the_header() -> None:
    reply = "```python\ndef task_func(path):\n    return pd.read_csv(path)\n```"
    code = extract_code(reply, header=HEADER, entry_point="task_func")
    assert code == HEADER + "def task_func(path):\n    return pd.read_csv(path)\n"


def test_header_imports_are_not_duplicated() -> None:
    code = extract_code(_fence(SOLUTION), header=HEADER, entry_point="task_func")
    assert code == SOLUTION


def test_only_the_missing_header_lines_are_added() -> None:
    reply = _fence("import os\nimport numpy as np\n\ndef task_func():\n    return os.sep")
    code = extract_code(reply, header=HEADER, entry_point="task_func")
    assert code.startswith("import pandas as pd\nfrom collections import Counter\nimport os\n")
    assert code.count("import os") == 1


def test_partial_multi_name_import() -> None:
    header = "from random import shuffle, randint\nimport itertools\n"
    code = extract_code("from random import shuffle\nx = 1\n", header=header)
    assert (
        code == "from random import randint\nimport itertools\nfrom random import shuffle\nx = 1\n"
    )


def test_alias_must_match() -> None:
    # `import pandas` does not bind `pd`, so the header's aliased import is still needed.
    code = extract_code("import pandas\nx = pd.DataFrame()\n", header="import pandas as pd\n")
    assert code.startswith("import pandas as pd\n")


def test_header_setup_statements() -> None:
    header = (
        "import logging\n"
        "from string import punctuation\n"
        "PUNCTUATION = set(punctuation)\n"
        'logging.basicConfig(filename="out.log", level=logging.INFO)\n'
    )
    # The model kept the constant and the logging call: nothing is added twice.
    full = header + "\ndef task_func():\n    return PUNCTUATION\n"
    assert extract_code(full, header=header) == full
    # It redefined the constant its own way: its version wins, the rest is added.
    own = "PUNCTUATION = {'!'}\n\ndef task_func():\n    return PUNCTUATION\n"
    code = extract_code(own, header=header)
    assert code.count("PUNCTUATION =") == 1
    assert code.startswith("import logging\nfrom string import punctuation\nlogging.basicConfig")


def test_header_after_future_import() -> None:
    code = extract_code(
        "from __future__ import annotations\n\ndef task_func() -> os.PathLike:\n    ...\n",
        header="import os\n",
    )
    assert code.startswith("from __future__ import annotations\nimport os\n")
    compile(code, "x.py", "exec")


def test_unparseable_code_still_gets_missing_header_lines() -> None:
    code = extract_code("import os\ndef task_func(:\n    pass\n", header="import os\nimport re\n")
    assert code == "import re\nimport os\ndef task_func(:\n    pass\n"


def test_unparseable_code_gets_whole_header_statements() -> None:
    header = "import os\nclass Form:\n    name = 'x'\n"
    code = extract_code("import os\ndef task_func(:\n    pass\n", header=header)
    assert code == "class Form:\n    name = 'x'\nimport os\ndef task_func(:\n    pass\n"


def test_unparseable_header_contributes_import_lines_only() -> None:
    header = "import os\nimport re\nX = (\n"
    assert extract_code("import os\nx = 1\n", header=header) == "import re\nimport os\nx = 1\n"


def test_real_bigcodebench_shape() -> None:
    header = "import csv\nimport collections\nimport operator\n"
    reply = (
        "To solve this problem, we read the CSV file, then sum the quantities per product.\n\n"
        "```python\n"
        "import csv\n"
        "import collections\n\n\n"
        "def task_func(csv_file_path):\n"
        "    totals = collections.defaultdict(int)\n"
        "    with open(csv_file_path) as fh:\n"
        "        for row in csv.DictReader(fh):\n"
        "            totals[row['product']] += int(row['quantity'])\n"
        "    return max(totals.items(), key=operator.itemgetter(1))[0]\n"
        "```\n\n"
        "### Explanation\n"
        "1. We use `csv.DictReader` to read rows.\n"
    )
    code = extract_code(reply, header=header, entry_point="task_func")
    assert code.startswith("import operator\nimport csv\nimport collections\n\n\ndef task_func")
    assert _defs(code) == ["task_func"]


def test_whitespace_only_lines_are_kept() -> None:
    # They may sit inside a string literal; textwrap.dedent would blank them.
    code = 'def task_func():\n    s = """a\n    \nb"""\n    \n    return s\n'
    assert extract_code(_fence(code)) == code


@pytest.mark.bigdata
@pytest.mark.filterwarnings("ignore:invalid escape sequence:DeprecationWarning")
def test_every_bigcodebench_solution_round_trips() -> None:
    path = data_file("BigCodeBench-v0.1.0.jsonl.gz")
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    for row in rows:
        solution = row["code_prompt"] + row["canonical_solution"]
        header = row["code_prompt"].split("def task_func")[0]
        expected = solution.strip("\n").rstrip() + "\n"
        reply = f"Here it is:\n\n```python\n{solution}\n```\n\nUsage:\n```python\ntask_func()\n```"
        assert extract_code(reply, header=header, entry_point="task_func") == expected
        # Only the function, unfenced, between prose: the header comes back in full.
        body = solution[len(header) :]
        code = extract_code(f"Sure:\n{body}\nDone, hope it helps.", header=header)
        module = ast.parse(code)
        dumps = {ast.dump(stmt) for stmt in module.body}
        assert all(ast.dump(stmt) in dumps for stmt in ast.parse(header).body), row["task_id"]
        assert "task_func" in [getattr(stmt, "name", "") for stmt in module.body]


# --- ccw mode ---------------------------------------------------------------------------------


def test_ccw_lossy_pep8_case() -> None:
    # docs/harness-notes.md (Code extraction), measured: the cut at "\n\n\n" leaves an
    # unclosed fence.
    reply = _fence(SOLUTION.replace("from collections import Counter\n", "")[:-1])
    assert extract_code(reply, mode="ccw").startswith("python\nimport os")
    assert extract_code("```python\nimport os\n\n\ndef f():\n    pass\n```", mode="ccw") == (
        "python\nimport os"
    )


def test_ccw_prefixes_the_whole_header() -> None:
    reply = "```python\nimport os\ndef task_func():\n    return os.sep\n```"
    assert extract_code(reply, header="import os\n", mode="ccw") == (
        "import os\nimport os\ndef task_func():\n    return os.sep"
    )


def test_ccw_two_backtick_closing_fence_and_separator() -> None:
    assert extract_code("```python\nx = 1\n``", mode="ccw") == "x = 1"
    assert extract_code("```python\nx = 1\n```\n\n---\n\nmore", mode="ccw") == "x = 1"


def test_ccw_bare_block_then_raw() -> None:
    assert extract_code("text\n```\ny = 2\n```", mode="ccw") == "y = 2"
    assert extract_code("z = 3", mode="ccw") == "z = 3"
    # A `py` tag is neither pattern: the raw text loses its backticks only.
    assert extract_code("```py\nx = 1\n```", mode="ccw") == "py\nx = 1\n"


def test_ccw_empty_block_keeps_cut_text() -> None:
    # CCW flags "Empty code after parsing" and carries on with the cut text, fences included.
    assert extract_code("```python\n\n```", mode="ccw") == "```python\n\n```"


def test_unknown_mode() -> None:
    with pytest.raises(ValueError, match="mode"):
        extract_code("x", mode="other")  # type: ignore[arg-type]


# --- is there any code at all? (convtui check refuses a file that holds none) -----------------

NO_CODE = {
    "prose": "This file only has words in it.\nNothing to run here, I am afraid.\n",
    "markdown": "# Notes\n\nSome words about the task.\n\n- a bullet\n- another one\n",
    "empty": "",
    "one word": "Sure",
    "empty fence": "Here it is:\n```python\n```\n",
    "text block": "I could not do it.\n```text\nno code here\n```\n",
    "shell block": "Install first:\n```bash\npip install pandas\n```\n",
    "comments only": "```python\n# TODO write the function\n```\n",
    "docstring only": '"""Nothing but a docstring."""\n',
}
SOME_CODE = {
    "plain python": "def task_func(x):\n    return x\n",
    "fenced reply": "Here you go:\n```python\ndef task_func(x):\n    return x\n```\nDone.\n",
    "unfenced with prose": "Sure! The code:\n\ndef task_func(x):\n    return x\n\nIt works.\n",
    "syntax error": "def task_func(x:\n    return x\n",
    "broken fenced block": "```python\ndef task_func(x):\n    return (x,\n```\n",
    "foreign tag, entry point": "```text\ndef task_func(x):\n    return x\n```\n",
    "one statement": "x = 1\n",
}


@pytest.mark.parametrize("reply", NO_CODE.values(), ids=NO_CODE.keys())
def test_holds_code_is_false_for_replies_without_python(reply: str) -> None:
    assert not holds_code(reply, entry_point="task_func")


@pytest.mark.parametrize("reply", SOME_CODE.values(), ids=SOME_CODE.keys())
def test_holds_code_is_true_for_any_python_even_broken(reply: str) -> None:
    assert holds_code(reply, entry_point="task_func")
    assert extract_code(reply, entry_point="task_func").strip()  # extraction agrees
