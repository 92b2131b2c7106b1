"""ragweb: a local context compressor for LLMs.

Index files, ask a question, get back the few passages that answer it, with exact
`path:Lstart-end` citations, inside a token budget. The same package runs as the `rag`
CLI and, on Pyodide, in the browser (see DESIGN.md for the layers).
"""

__version__ = "0.1.0"
__all__ = [
    "Engine", "Hit", "index_root", "load_config", "default_config", "count_tokens",
    "RagError", "UsageError", "ConfigError", "IndexCorruptError", "IndexMissingError",
    "IndexBusyError", "EmptyQueryError", "__version__",
]

# Where each name of ``__all__`` is defined: imported when first asked for, so that `rag`
# starts in a module of its own (a Ctrl-C in its imports is caught there, `ragweb.__main__`).
_HOMES = {
    "Engine": "engine", "Hit": "engine", "index_root": "indexer", "load_config": "config",
    "default_config": "config", "count_tokens": "tokens", "RagError": "errors", "UsageError": "errors",
    "ConfigError": "errors", "IndexCorruptError": "errors", "IndexMissingError": "errors",
    "IndexBusyError": "errors", "EmptyQueryError": "errors",
}


def __getattr__(name: str):
    """``ragweb.Engine`` and the other names of ``__all__``, from their modules."""
    if name not in _HOMES:
        raise AttributeError(f"module 'ragweb' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f"ragweb.{_HOMES[name]}"), name)
    globals()[name] = value
    return value

