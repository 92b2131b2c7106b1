"""How a `rag` command is stopped: SIGTERM and SIGHUP the way Ctrl-C does (shared by
`ragweb.cli` and `ragweb.webbuild`), and the three held while `rag index` forks a worker."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

stopped_by: int | None = None
"""The SIGTERM or SIGHUP that stopped the command, else None (Ctrl-C, or not stopped)."""


INTERRUPTED = "interrupted; the index is as it was before this run"
"""What `rag` says when Ctrl-C stops it and nothing else is to be said (`ragweb.cli.main`)."""


def interrupted_while_starting():
    """End `rag` stopped by Ctrl-C in its imports: with the line and the exit code (130) a
    Ctrl-C later gets, not a traceback from the module that was being imported."""
    print("\n" + INTERRUPTED, file=sys.stderr)
    raise SystemExit(128 + signal.SIGINT)


STOPS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextlib.contextmanager
def held():
    """Ctrl-C, SIGTERM and SIGHUP held back (delivered when the block ends) while a worker
    process is forked: the KeyboardInterrupt they raise would otherwise land in one of the
    fork's own callbacks (the `logging` module's), which Python prints and forgets, and the
    run went on to the end. The child starts with them held: `release` them there."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)


def release() -> None:
    """In a process forked under `held`: take the stop signals again."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)


@contextlib.contextmanager
def stop_signals_interrupt():
    """SIGTERM and SIGHUP (a plain `kill`, a closed terminal) stop like Ctrl-C does: they
    raise KeyboardInterrupt, so the same cleanup runs (a --rebuild's new file, a half-written
    -o file, `rag web`'s temporary folders and child processes), and `stopped_by` names the
    signal. A signal the caller ignores (`nohup`) stays ignored; only the main thread can set
    handlers. A process forked meanwhile (`rag index`'s workers) dies of the signal, as it
    would have without this."""
    global stopped_by
    stopped_by = None
    owner = os.getpid()

    def stop(sig, frame):
        global stopped_by
        if os.getpid() != owner:  # a forked worker: its parent stops the run
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
            return
        stopped_by = sig
        raise KeyboardInterrupt

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for name in ("SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is not None and signal.getsignal(sig) != signal.SIG_IGN:
                previous[sig] = signal.signal(sig, stop)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
