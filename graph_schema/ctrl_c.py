"""Ctrl-C (SIGINT) that is never lost: our own handler records the press, and the code that
holds it raises it at a safe point even when the KeyboardInterrupt the handler raised was
swallowed.

Python's own handler raises KeyboardInterrupt wherever the interpreter is. In a finalizer
(the driver's `Workspace.__del__`, run by the GC at any allocation) or a weakref callback it
is printed as "Exception ignored ... KeyboardInterrupt" and dropped: the command went on and
ended 0 as if nothing was pressed (the ingest in session 37; `schema apply`, `purge`,
`investigate`, ... until session 39).

- `held()` installs the handler for a block of the main thread (the outermost block installs
  it and puts the previous one back on every exit; inner blocks join it). A press raises at
  once (`at_once`, the default) and is recorded; a second press always raises at once. The
  block's end raises a press still recorded, so a swallowed raise is honoured there.
- `at_safe_points()`: from here on, until the block that called it ends, a first press waits
  for the holder's next safe point (`stop_if_pressed`): the writer's, so that a write
  transaction in flight ends first and its records are counted.
- `stop_if_pressed()`: a safe point.

Only the main thread can install a handler; on other threads, and under a handler someone
else installed (a program embedding us, `SIG_IGN` in a background job), everything here does
nothing, and Ctrl-C is what it was. While a block holds Ctrl-C, a KeyboardInterrupt a
finalizer swallowed is not printed ("Exception ignored"): it was recorded and stops the
holder. Standard library only: the CLI imports this before any command.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any


class CtrlCHold:
    """The main thread's Ctrl-C while a block holds it: `pressed` once the user pressed it."""

    def __init__(self) -> None:
        self.pressed = False
        self.at_once = True

    def record(self, _signum: int, _frame: object) -> None:
        second = self.pressed
        self.pressed = True
        if second or self.at_once:
            raise KeyboardInterrupt  # if this raise is lost, the recorded press is not


_hold: CtrlCHold | None = None  # while a block of the main thread holds Ctrl-C


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def current() -> CtrlCHold | None:
    """The hold of the main thread's block, when this is the main thread and one holds."""
    return _hold if _main_thread() else None


def pressed() -> bool:
    """Whether Ctrl-C was pressed while the current block held it."""
    hold = current()
    return hold is not None and hold.pressed


def stop_if_pressed() -> None:
    """A safe point: a press recorded since the block began raises KeyboardInterrupt here."""
    if pressed():
        raise KeyboardInterrupt


def at_safe_points() -> None:
    """From here on, until the block that called this ends, a first press waits for the next
    `stop_if_pressed` (a second press still stops at once)."""
    hold = current()
    if hold is not None:
        hold.at_once = False


def _quiet_lost_interrupts(previous: Any) -> Any:
    """An unraisable hook that leaves out a KeyboardInterrupt (the press is recorded: the
    holder raises it) and hands every other unraisable exception to `previous`."""

    def hook(unraisable: Any) -> None:
        exc_type = getattr(unraisable, "exc_type", None)
        if (
            isinstance(exc_type, type)
            and issubclass(exc_type, KeyboardInterrupt)
            and _hold is not None
            and _hold.pressed
        ):
            return
        previous(unraisable)

    return hook


@contextlib.contextmanager
def held(*, stop_at_end: bool = True) -> Iterator[CtrlCHold | None]:
    """Hold the main thread's Ctrl-C for the block (see the module's text); yields the hold,
    or None where nothing is held (another thread, someone else's handler).

    `stop_at_end`: the block's end raises KeyboardInterrupt for a press recorded (True), or
    leaves that to the caller, who reads `hold.pressed` (the CLI's dispatch, which has to
    return an exit code). An `Exception` raised out of the block after a press is the press
    (the driver's error for a connection the interrupt cut), raised as KeyboardInterrupt."""
    global _hold
    if not _main_thread():
        yield None
        return
    hold = _hold
    previous = signal.getsignal(signal.SIGINT)
    installed = hold is None and previous is signal.default_int_handler
    if installed:
        hold = CtrlCHold()
    if hold is None:
        yield None
        return
    at_once = hold.at_once
    previous_hook = sys.unraisablehook
    try:
        if installed:  # inside the `try`: a press from here on finds the handler restored
            _hold = hold
            sys.unraisablehook = _quiet_lost_interrupts(previous_hook)
            signal.signal(signal.SIGINT, hold.record)
        stop_if_pressed()
        yield hold
    except Exception as exc:
        if hold.pressed:  # the user asked to stop: the error it caused is not the news
            raise KeyboardInterrupt from exc
        raise
    finally:
        hold.at_once = at_once
        if installed:  # the handler first: a press meanwhile still raises
            signal.signal(signal.SIGINT, previous)
            _hold = None
            sys.unraisablehook = previous_hook
    if stop_at_end and hold.pressed:
        raise KeyboardInterrupt
