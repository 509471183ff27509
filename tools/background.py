"""Work started on a thread, its value or its error handed to whoever asks for it.

What runs here mostly waits on git (a search, a log), and a thread that waits on a pipe
leaves the interpreter to the caller, which judges meanwhile. The work's exception is
raised on the caller's thread, where it asks, as if the work had run there.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Background(Generic[T]):
    """``work()`` running on a daemon thread from the moment this is made."""

    def __init__(self, work: Callable[[], T]):
        self._value: T | None = None
        self._error: BaseException | None = None

        def run() -> None:
            try:
                self._value = work()
            except BaseException as exc:  # noqa: BLE001 - raised again by result()
                self._error = exc

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def result(self) -> T:
        """Wait for the work; its value, or its exception raised here."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]  # set: the work returned
