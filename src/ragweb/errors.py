"""Named exceptions. Every message names the bad value and says what to do."""


class RagError(Exception):
    """Base class for errors shown to users as `Error: <message>` (exit code 1)."""


class UsageError(RagError):
    """Bad arguments or an impossible request (exit code 2 on the CLI)."""


class ConfigError(RagError):
    """A malformed or invalid config file; the message names the key and the line."""


class IndexCorruptError(RagError):
    """The index database is unreadable, truncated or of an unknown format version."""


class IndexMissingError(RagError):
    """There is no index where one was expected."""


class IndexReadOnlyError(RagError):
    """The index cannot be written where it lives (a read-only folder or medium)."""


class IndexBusyError(RagError):
    """Another process is writing the index."""


class EmptyQueryError(UsageError):
    """The question has no indexable words (empty, or only stopwords/punctuation)."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C where the index is not as it was before the run: ``message`` says what it is."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message
