"""HTTP header parsing: strict, case-insensitive, repeat-aware (see docs/headers.md)."""

from __future__ import annotations

import re

MAX_HEADER_BYTES = 64 * 1024
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
NEVER_JOINED = frozenset({"set-cookie"})


class MalformedHeader(ValueError):
    """A header line that breaks the rules; the message carries the line number."""

    def __init__(self, line_no: int, reason: str):
        super().__init__(f"line {line_no}: {reason}")
        self.line_no = line_no


class HeaderTooLarge(ValueError):
    """The header block is larger than the configured limit."""


class Headers:
    """A case-insensitive multimap of header names to values, in arrival order."""

    def __init__(self) -> None:
        self._items: list[tuple[str, str]] = []

    def add(self, name: str, value: str) -> None:
        self._items.append((name.lower(), value))

    def get(self, name: str, default: str | None = None) -> str | None:
        values = self.get_all(name)
        if not values:
            return default
        if name.lower() in NEVER_JOINED:
            return values[0]
        return ", ".join(values)

    def get_all(self, name: str) -> list[str]:
        key = name.lower()
        return [v for k, v in self._items if k == key]

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and any(k == name.lower() for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)


def parse_headers(raw: bytes, max_bytes: int = MAX_HEADER_BYTES) -> Headers:
    """Parse a raw header block (up to the first empty line) into `Headers`."""
    end = raw.find(b"\r\n\r\n")
    block = raw if end < 0 else raw[:end]
    if len(block) > max_bytes:
        raise HeaderTooLarge(f"header block of {len(block)} bytes exceeds {max_bytes}")
    headers = Headers()
    for line_no, line in enumerate(block.decode("latin-1").split("\r\n"), start=1):
        if not line:
            continue
        if line[0] in " \t":
            raise MalformedHeader(line_no, "obsolete line folding")
        name, sep, value = line.partition(":")
        if not sep:
            raise MalformedHeader(line_no, "missing colon")
        if not _TOKEN.match(name):
            raise MalformedHeader(line_no, f"invalid header name {name!r}")
        headers.add(name, value.strip(" \t"))
    return headers


def format_headers(headers: Headers) -> bytes:
    """Serialise headers back to wire format, names in canonical Title-Case."""
    lines = []
    for name, value in headers._items:
        canonical = "-".join(part.capitalize() for part in name.split("-"))
        lines.append(f"{canonical}: {value}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
