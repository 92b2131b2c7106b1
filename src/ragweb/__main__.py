"""`python -m ragweb` and the `rag` command: `ragweb.cli.main`, started so that a Ctrl-C in
its imports ends it as quietly as one later does."""


def run() -> int:
    """Import the command line and run it; its exit code."""
    try:
        from ragweb.cli import main
    except KeyboardInterrupt:
        from ragweb.signals import interrupted_while_starting
        interrupted_while_starting()
    return main()


if __name__ == "__main__":
    raise SystemExit(run())
