"""Type stub of the native selector module (``src/native/selector.cpp``,
``src/native/usage_sums.cpp``, ``src/native/preempt.cpp``)."""

from typing import Any

SANITIZED: bool

class NativeSelector:
    """The indexed heaps of one selector over integer node ids (0 is the root)."""

    def __init__(self, root_sat: float) -> None: ...
    def add(self, parent: int, order: int, is_operation: bool, sat: float) -> int: ...
    def best_leaf(self) -> int: ...
    def is_active(self, node: int) -> bool: ...
    def activate(self, node: int) -> None: ...
    def deactivate(self, node: int) -> None: ...
    def refresh(self, node: int, sat: float) -> None: ...
    def sat(self, node: int) -> float: ...
    def set_sat(self, node: int, sat: float) -> None: ...
    def set_own_sat(self, node: int, sat: float) -> None: ...
    def pos(self, node: int) -> int: ...
    def self_active(self, node: int) -> bool: ...
    def set_self_active(self, node: int, value: bool) -> None: ...
    def heap(self, node: int) -> list[int]: ...
    def __len__(self) -> int: ...

def add_usage(element: Any, delta: tuple[float, ...]) -> None:
    """``usage += delta`` on ``element`` and each ancestor (following ``parent``)."""

def scan(
    items: list[Any], index: int, cum: tuple[float, ...], threshold: Any, bound: Any
) -> tuple[int, tuple[float, ...]]:
    """``preemptible._scan``."""

def local_satisfaction(view: Any, usage: tuple[float, ...]) -> float:
    """``ShareView.local_satisfaction``."""

def fits(need: tuple[float, ...], available: tuple[float, ...]) -> bool:
    """``satisfaction.fits``."""

def vadd(a: tuple[float, ...], b: tuple[float, ...]) -> tuple[float, ...]:
    """``resources.vadd``."""

def vsub(a: tuple[float, ...], b: tuple[float, ...]) -> tuple[float, ...]:
    """``resources.vsub``."""

def vneg(a: tuple[float, ...]) -> tuple[float, ...]:
    """The five negations."""

def apply_usage(element: Any, delta: tuple[float, ...], core: Any) -> None:
    """``add_usage``, then ``element.local_sat = local_satisfaction(element.view,
    element.usage)`` and ``core.refresh(element.node.id, sat)`` when ``element.node``."""

def walk_passes(
    last: float,
    backoff: float,
    phase: float,
    first: int,
    stop: int,
    period: float,
    stop_at_due: bool,
) -> float | None | Any:
    """``scheduler.last_pass_time``'s walk (``NotImplemented`` for other than floats)."""

PREEMPT_EPSILON: float
PREEMPT_LARGE_EPSILON: float

def template_setup(
    template_cls: Any,
    view_cls: Any,
    bounds_cls: Any,
    bound_cls: Any,
    indexes: tuple[tuple[int, ...], ...],
    normal: Any,
    below: Any,
) -> None:
    """The classes and constants ``template_from_shares`` builds from (``preempt.cpp``)."""

def template_from_shares(
    settings: Any, shares: bytes, total: tuple[float, ...], bounds: Any, fifo_index: int | None
) -> Any:
    """``native_template.template_from_shares``."""

def restart_setup(zero: tuple[float, ...]) -> None:
    """``resources.ZERO``, where ``restart`` starts a prefix sum over."""

def restart(
    items: list[Any],
    b1: int,
    cum1: tuple[float, ...],
    b2: int,
    cum2: tuple[float, ...],
    bounds: Any,
) -> Any:
    """``preemptible._restart``."""
