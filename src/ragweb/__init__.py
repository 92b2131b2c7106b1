"""ragweb: a local context compressor for LLMs.

Index files, ask a question, get back the few passages that answer it, with exact
`path:Lstart-end` citations, inside a token budget. The same package runs as the `rag`
CLI and, on Pyodide, in the browser (see DESIGN.md for the layers).
"""

from ragweb.config import default_config, load_config
from ragweb.engine import Engine, Hit
from ragweb.errors import (ConfigError, EmptyQueryError, IndexBusyError, IndexCorruptError,
                           IndexMissingError, RagError, UsageError)
from ragweb.indexer import index_root
from ragweb.tokens import count_tokens

__version__ = "0.1.0"
__all__ = [
    "Engine", "Hit", "index_root", "load_config", "default_config", "count_tokens",
    "RagError", "UsageError", "ConfigError", "IndexCorruptError", "IndexMissingError",
    "IndexBusyError", "EmptyQueryError", "__version__",
]
