"""The example at the top of docs/pool-trees.md runs as written."""

from __future__ import annotations

import re
from pathlib import Path

from ytsched.pooltree import Operation, OperationState

DOC = Path(__file__).resolve().parents[2] / "docs" / "pool-trees.md"


def test_pool_trees_doc_example_runs() -> None:
    match = re.search(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert match is not None
    namespace: dict[str, object] = {}
    exec(compile(match.group(1), str(DOC), "exec"), namespace)
    operation = namespace["op"]
    assert isinstance(operation, Operation)
    assert operation.state is OperationState.RUNNING
