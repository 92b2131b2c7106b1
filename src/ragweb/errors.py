"""Named exceptions, and `quoted`: a name the user gave as a message shows it. Every message
names the bad value and says what to do."""


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


def quoted(text: str) -> str:
    """A name, path or glob the user gave, for a message, as they typed it: as it is, or in
    quotes a shell reads it back from when it is empty or holds a space or a quote (its
    backslashes single: ``repr`` showed ``a\\b`` as ``'a\\\\b'``). One holding a control or
    bidi character is shown escaped, as ``repr`` does, so none reaches the terminal (and a
    value that is no string, as a script may pass the page's API, as ``repr`` shows it)."""
    if not isinstance(text, str) or not text.isprintable():
        return repr(text)
    if text and not any(c.isspace() or c in "'\"" for c in text):
        return text
    if "'" not in text:
        return f"'{text}'"
    if not any(c in text for c in '"\\$`'):  # (what a shell reads otherwise inside "...")
        return f'"{text}"'
    import shlex
    return shlex.quote(text)
