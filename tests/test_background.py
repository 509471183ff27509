"""Work on a thread: its value, or its error raised where the caller asks for it."""

from __future__ import annotations

import threading

import pytest

from tools.background import Background
from tools.errors import UsageError


def test_the_work_runs_while_the_caller_goes_on() -> None:
    go = threading.Event()

    def work() -> str:
        # Waits for the caller: made on the caller's thread, this would never return.
        assert go.wait(timeout=30)
        return threading.current_thread().name

    pending = Background(work)
    go.set()
    assert pending.result() != threading.current_thread().name


def test_the_works_error_is_raised_where_the_caller_asks() -> None:
    error = UsageError("--base 'x' does not resolve to a commit")

    def work() -> None:
        raise error

    pending = Background(work)
    with pytest.raises(UsageError) as caught:
        pending.result()
    assert caught.value is error


def test_a_falsy_value_is_a_value() -> None:
    assert Background(list).result() == []
