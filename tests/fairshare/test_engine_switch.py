"""Which engine ``run_update`` uses, and how to choose."""

from __future__ import annotations

import pytest

from ytsched.fairshare.elements import Element
from ytsched.fairshare.model import OperationSpec, PoolSpec, TreeSnapshot
from ytsched.fairshare.native import NativeElement
from ytsched.fairshare.update import ENGINE_VARIABLE, run_update


def _snapshot() -> TreeSnapshot:
    return TreeSnapshot(
        total_resource_limits=(10.0, 10.0, 0.0, 100.0, 0.0),
        pools=[PoolSpec("<Root>", None), PoolSpec("a", "<Root>")],
        operations=[OperationSpec("op", "a", resource_demand=(1.0, 4.0, 0.0, 10.0, 0.0))],
    )


def test_native_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENGINE_VARIABLE, raising=False)
    result = run_update(_snapshot())
    assert isinstance(result.root, NativeElement)
    assert result.operations["op"].fair_share.total == (0.1, 0.4, 0.0, 0.1, 0.0)


def test_environment_selects_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENGINE_VARIABLE, "python")
    result = run_update(_snapshot())
    assert type(result.root) is Element
    assert isinstance(run_update(_snapshot(), engine="native").root, NativeElement)


def test_unknown_engine_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENGINE_VARIABLE, "fortran")
    with pytest.raises(ValueError, match="fortran"):
        run_update(_snapshot())


def test_lazy_attributes_can_be_overwritten() -> None:
    """Callers may assign computed attributes (the scheduler does); the assignment sticks."""
    element = run_update(_snapshot()).operations["op"]
    element.weight = 5.0
    assert element.weight == 5.0
    assert element.fair_share.total == (0.1, 0.4, 0.0, 0.1, 0.0)
    assert "fair_share" in repr(element)
