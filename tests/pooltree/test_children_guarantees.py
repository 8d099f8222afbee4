"""``allow_children_guarantees`` on every path that can put a guarantee under a pool.

YTsaurus's master checks it in ``TSchedulerPool::ValidateChildrenGuaranteeSum``
(``yt/yt/server/master/scheduler_pool_server/scheduler_pool-inl.h``), called from
``ValidateChildrenCompatibility`` on the changed pool and on its parent for every attribute
change, pool creation, move and resource transfer: under a parent that does not configure the
resource, or that sets the flag to false, an explicit child strong guarantee, resource flow or
burst guarantee is refused; otherwise the children's sum must not exceed the parent's amount.
The scheduler itself never reads the flag (no use in ``yt/yt/server/scheduler/`` nor in
``yt/yt/library/vector_hdrf/``): children without explicit guarantees keep receiving their
implicit share of the parent's guarantee, so the fair share does not depend on the flag.
"""

from __future__ import annotations

import pytest

from tests.pooltree.helpers import scheduler, state, vanilla
from ytsched.pooltree import SchedulerError
from ytsched.pooltree.transfer import transfer_pool_resources

CLOSED = {"strong_guarantee_resources": {"cpu": 10}, "allow_children_guarantees": False}


def _refused(call: object, code: str = "ChildrenGuaranteesNotAllowed") -> SchedulerError:
    assert callable(call)
    with pytest.raises(SchedulerError) as caught:
        call()
    assert caught.value.code == code
    return caught.value


def test_setting_the_flag_is_refused_while_a_child_has_a_guarantee() -> None:
    _, tree = scheduler({"main_resource": "cpu"})
    tree.create_pool("parent", config={"strong_guarantee_resources": {"cpu": 10}})
    tree.create_pool("child", "parent", {"strong_guarantee_resources": {"cpu": 4}})
    before = state(tree)
    error = _refused(lambda: tree.update_pool("parent", {"allow_children_guarantees": False}))
    assert "'child'" in error.message and "'parent'" in error.message
    assert state(tree) == before
    tree.update_pool("child", {"strong_guarantee_resources": None})
    tree.update_pool("parent", {"allow_children_guarantees": False})
    assert tree.pools["parent"].config.allow_children_guarantees is False


@pytest.mark.parametrize(
    "option",
    [
        {"integral_guarantees": {"resource_flow": {"cpu": 1}}},
        {"integral_guarantees": {"burst_guarantee_resources": {"cpu": 1}}},
    ],
)
def test_integral_amounts_count_as_children_guarantees(option: dict[str, object]) -> None:
    _, tree = scheduler({"main_resource": "cpu"})
    tree.create_pool(
        "parent",
        config={
            "allow_children_guarantees": False,
            "integral_guarantees": {
                "resource_flow": {"cpu": 5},
                "burst_guarantee_resources": {"cpu": 5},
            },
        },
    )
    integral = dict(option["integral_guarantees"])  # type: ignore[call-overload]
    config = {"integral_guarantees": {"guarantee_type": "burst", **integral}}
    _refused(lambda: tree.create_pool("child", "parent", config))
    assert "child" not in tree.pools


def test_moving_a_guaranteed_pool_under_a_closed_parent_is_refused() -> None:
    _, tree = scheduler({"main_resource": "cpu"})
    tree.create_pool("closed", config=CLOSED)
    tree.create_pool("team", config={"strong_guarantee_resources": {"cpu": 2}})
    before = state(tree)
    _refused(lambda: tree.move_pool("team", "closed"))
    assert state(tree) == before
    tree.create_pool("plain")
    tree.move_pool("plain", "closed")
    assert tree.pools["plain"].parent_name == "closed"


def test_transferring_resources_into_a_child_of_a_closed_parent_is_refused() -> None:
    """The transfer would give the child an explicit guarantee: the same refusal, wrapped as
    ``TransferPoolResources`` words it, and nothing moves."""
    _, tree = scheduler({"main_resource": "cpu"})
    tree.create_pool("donor", config={"strong_guarantee_resources": {"cpu": 5}})
    tree.create_pool("closed", config=CLOSED)
    tree.create_pool("child", "closed")
    before = state(tree)
    error = _refused(
        lambda: transfer_pool_resources(
            tree, "donor", "child", {"strong_guarantee_resources": {"cpu": 1}}
        )
    )
    assert error.message.startswith("Failed to transfer resources from pool 'donor'")
    assert state(tree) == before
    transfer_pool_resources(tree, "donor", "closed", {"strong_guarantee_resources": {"cpu": 1}})
    assert tree.pools["closed"].config.strong_guarantee_resources.as_map() == {"cpu": 11}


def test_the_parent_must_configure_the_resource_even_when_it_allows_children() -> None:
    """The first of the master's two refusals wins when both apply."""
    _, tree = scheduler({"main_resource": "cpu"})
    tree.create_pool("parent", config={"allow_children_guarantees": False})
    _refused(
        lambda: tree.create_pool("child", "parent", {"strong_guarantee_resources": {"cpu": 1}}),
        "GuaranteeNotConfiguredAtParent",
    )


def test_the_flag_does_not_change_the_fair_share() -> None:
    """Children under a closed parent get the parent's guarantee through its fair share,
    exactly as children without explicit guarantees do under an open one."""
    shares = []
    for allow in (True, False):
        trees, tree = scheduler({"main_resource": "cpu"}, cpu=100)
        tree.create_pool(
            "parent",
            config={"strong_guarantee_resources": {"cpu": 40}, "allow_children_guarantees": allow},
        )
        tree.create_pool("a", "parent")
        tree.create_pool("b", "parent")
        tree.create_pool("other")
        trees.start_operation("op_a", user="u", spec=vanilla("a", jobs=60), now=1)
        trees.start_operation("op_other", user="u", spec=vanilla("other", jobs=100), now=1)
        result = trees.update(2)["physical"]
        shares.append(
            {name: result.pools[name].fair_share for name in ("parent", "a", "b", "other")}
        )
    assert shares[0] == shares[1]
    assert shares[0]["parent"].strong_guarantee[0] == pytest.approx(0.4)
    assert shares[0]["a"].total[0] >= 0.4 - 1e-9  # the parent's guarantee reaches its child
