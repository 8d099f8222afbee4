"""One owner per data directory: a second owner is refused, a dead owner does not block."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ytsched.datadir import lock_data_directory
from ytsched.errors import YtschedError


def test_second_lock_is_refused_naming_directory_and_holder(tmp_path: Path) -> None:
    first = lock_data_directory(tmp_path / "data", "ytsched server")
    try:
        with pytest.raises(YtschedError) as refused:
            lock_data_directory(tmp_path / "data", "ytsched server")
        assert refused.value.code == "DataDirectoryLocked"
        assert str(tmp_path / "data") in refused.value.message
        assert f"pid {os.getpid()}" in refused.value.message
        assert "ytsched server" in refused.value.message
    finally:
        first.release()
    again = lock_data_directory(tmp_path / "data", "ytsched server")
    assert again.held
    again.release()
    assert not again.held


def test_lock_of_a_killed_process_does_not_block(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from ytsched.datadir import lock_data_directory
        lock = lock_data_directory(Path({str(tmp_path / "data")!r}), "holder")
        print("locked", flush=True)
        time.sleep(60)
        """
    )
    holder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == b"locked"
        with pytest.raises(YtschedError, match=f"holder pid {holder.pid}"):
            lock_data_directory(tmp_path / "data", "second")
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=10)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(timeout=10)
    lock = lock_data_directory(tmp_path / "data", "second")
    lock.release()


def test_unusable_directory_is_a_clean_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(YtschedError) as refused:
        lock_data_directory(blocker / "data", "server")
    assert refused.value.code == "InvalidArgument"
    assert str(blocker / "data") in refused.value.message
