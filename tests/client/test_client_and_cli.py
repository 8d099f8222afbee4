"""ytsched.Client and the CLI verbs against a real server with one real node."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

import ytsched
from tests.e2e.cluster import TOKEN, ProcessCluster
from ytsched.cli.main import main
from ytsched.client import ResponseError


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    trees = {
        "default_tree": "default",
        "pool_trees": {"default": {"config": {}, "pools": {"research": {"weight": 2}}}},
    }
    process_cluster = ProcessCluster(tmp_path_factory.mktemp("client"), nodes=1, pool_trees=trees)
    try:
        yield process_cluster.start()
    finally:
        process_cluster.stop()


def run(cluster: ProcessCluster, *args: str) -> tuple[int, str, str]:
    runner = CliRunner()
    result = runner.invoke(
        main, list(args), env={"YTSCHED_PROXY": cluster.url, "YTSCHED_TOKEN": TOKEN}
    )
    return result.exit_code, result.stdout, result.stderr


def test_client_methods(cluster: ProcessCluster) -> None:
    yt = ytsched.Client(cluster.url, TOKEN)
    try:
        assert yt.ping()
        yt.create("scheduler_pool", attributes={"name": "lib", "pool_tree": "default"})
        yt.set("//sys/pools/lib/@weight", 4)
        assert yt.get("//sys/pools/lib/@weight") == 4
        assert yt.exists("//sys/pools/lib")
        assert "lib" in yt.list("//sys/pools")
        assert yt.get("//sys/pools/missing/@weight", default=None) is None
        op = yt.run_vanilla("echo hi", job_count=2, pool="lib", track=True, timeout=30)
        assert yt.get_operation(op)["state"] == "completed"
        assert len(yt.list_jobs(op)) == 2
        assert yt.list_operations(pool="lib")["operations"][0]["id"] == op
        yt.set("//sys/pools/research/@strong_guarantee_resources", {"cpu": 1})
        yt.transfer_pool_resources(
            "research", "lib", "default", {"strong_guarantee_resources": {"cpu": 0.5}}
        )
        assert yt.get("//sys/pools/lib/@strong_guarantee_resources") == {"cpu": 0.5}
        assert yt.get("//sys/pools/research/@strong_guarantee_resources") == {"cpu": 0.5}
        yt.remove("//sys/pools/lib")
        with pytest.raises(ResponseError) as error:
            yt.get("//sys/pools/lib/@weight")
        assert error.value.code == "ResolveError" and error.value.status == 404
        assert "ytsched_heartbeats_total" in yt.metrics()
    finally:
        yt.close()


def test_cli_verbs(cluster: ProcessCluster) -> None:
    assert run(cluster, "get", "//sys/pool_trees/default/research/@weight")[1].strip() == "2."
    assert run(cluster, "set", "//sys/pool_trees/default/research/@weight", "3")[0] == 0
    code, out, _ = run(cluster, "get", "//sys/pools/research/@weight", "--format", "json")
    assert code == 0 and json.loads(out) == 3.0
    code, out, _ = run(
        cluster, "create", "scheduler_pool", "--attributes", "{name=cli; pool_tree=default}"
    )
    assert code == 0 and out.strip() == "default/cli"
    code, out, _ = run(
        cluster,
        "run-vanilla",
        "--pool",
        "cli",
        "--job-count",
        "2",
        "--command",
        "echo done",
        "--cpu",
        "1",
        "--track",
    )
    assert code == 0, out
    op = out.strip().splitlines()[0]
    code, out, _ = run(cluster, "ops", "list", "--pool", "cli")
    assert code == 0 and op in out and "completed" in out
    code, out, _ = run(cluster, "ops", "get", op, "--format", "json")
    assert json.loads(out)["state"] == "completed"
    jobs = json.loads(run(cluster, "jobs", "list", op, "--format", "json")[1])
    assert run(cluster, "jobs", "stdout", jobs[0]["id"])[1] == "done\n"
    code, out, _ = run(cluster, "explain", op)
    assert code == 0 and "completed" in out
    code, out, _ = run(cluster, "explain", op, "--format", "json")
    assert json.loads(out)["operation_id"] == op


def test_cli_errors_are_one_line_and_exit_2(cluster: ProcessCluster) -> None:
    code, _, err = run(cluster, "set", "--", "//sys/pools/research/@weight", "-1")
    assert code == 2 and err.startswith("ytsched: error: ") and "[InvalidConfig]" in err
    code, _, err = run(cluster, "get", "//sys/pools/nope")
    assert code == 2 and "[ResolveError]" in err
    code, _, err = run(cluster, "create", "scheduler_pool", "--attributes", "{name=")
    assert code == 2 and "[InvalidArgument]" in err
    runner = CliRunner()
    result = runner.invoke(
        main, ["get", "//sys"], env={"YTSCHED_PROXY": cluster.url, "YTSCHED_TOKEN": "bad"}
    )
    assert result.exit_code == 2 and "[AuthenticationError]" in result.stderr


def test_hostile_cli_values_are_one_line_and_change_nothing(cluster: ProcessCluster) -> None:
    weight = "//sys/pools/research/@weight"
    before = run(cluster, "get", weight, "--format", "json")[1]
    # A negative number needs no `--`.
    code, _, err = run(cluster, "set", weight, "-5")
    assert code == 2 and "[InvalidConfig]" in err
    hostile = [
        ("set", weight, "%nan"),
        ("set", weight, "%inf"),
        ("set", weight, "9" * 5000),
        ("set", weight, "18446744073709551616"),
        ("create", "scheduler_pool", "--attributes", "{name=x; pool_tree=default; weight=%inf}"),
        ("create", "scheduler_pool", "--attributes", "{name=17; pool_tree=default}"),
        ("run-vanilla", "--command", "true", "--spec", "{weight=%nan}"),
        ("run-vanilla", "--command", "true", "--job-count", "1000000000"),
        ("ops", "update", "some-op", "{weight=-%inf}"),
    ]
    for arguments in hostile:
        code, _, err = run(cluster, *arguments)
        assert code == 2, (arguments, err)
        assert len(err.splitlines()) == 1 and err.startswith("ytsched: error: "), err
    assert "must be a string" in run(cluster, *hostile[5])[2]
    assert "Maximum total job count exceeded: 1000000000 > 100000" in run(cluster, *hostile[7])[2]
    assert run(cluster, "get", weight, "--format", "json")[1] == before
    result = CliRunner().invoke(
        main, ["get", "//sys"], env={"YTSCHED_PROXY": cluster.url, "YTSCHED_TOKEN": "to\nken"}
    )
    assert result.exit_code == 2 and "[InvalidToken]" in result.stderr
    assert len(result.stderr.splitlines()) == 1
