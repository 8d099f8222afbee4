"""The service leaves one core to its event loop when it sizes the native engine's threads."""

from __future__ import annotations

import os

from ytsched.fairshare import native
from ytsched.server.runner import engine_threads_beside_the_loop, tune_threads


def test_one_core_stays_with_the_loop() -> None:
    default = native.default_threads()
    assert engine_threads_beside_the_loop(None) == 1
    assert engine_threads_beside_the_loop(1) == 1
    assert engine_threads_beside_the_loop(2) == 1
    assert engine_threads_beside_the_loop(64) == default


def test_tune_threads_sets_the_engine_count() -> None:
    previous = native.threads()
    try:
        tune_threads()
        assert native.threads() == engine_threads_beside_the_loop(os.cpu_count())
    finally:
        native.set_threads(previous)
