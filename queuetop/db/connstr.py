"""ODBC connection strings, read by one tokenizer: every place that shows, logs, hashes or stores a target.

The rules are ODBC's (SQLDriverConnect): `key=value` pairs separated by `;`, keys compared without case and with
the spaces around them ignored; a value may be wrapped in braces, `{...}`, and inside braces `}}` is a literal
`}` — the only way to write a value that holds `;`, `{` or `}`. A brace that never closes runs to the end of the
text: the reading that hides the most when the text is masked.

Pairs remember where their value sits in the text, so masking and expanding rewrite one value in place and
leave every other character as the user wrote it (a history file's name hashes the masked text: it must not
move when nothing secret changed).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

MASK = "***"
# Keys whose value is a secret: PWD and Password (every driver), SSLPassword (psqlODBC's key file), AccessToken
# (Microsoft's driver), KeyStoreSecret and ClientKey (Always Encrypted, a certificate's key and its password), and
# any key a driver names after a password, secret or token. Authentication names a method, not a secret: shown.
_SECRET_KEY = re.compile(r"pwd|pass|secret|token|clientkey", re.IGNORECASE)
# psqlODBC passes `pqopt={...}` to libpq as a conninfo string: its own `password=` must be masked inside it.
_LIBPQ_OPTIONS = "pqopt"
_LIBPQ_SECRET = re.compile(r"(?i)^(ssl)?password$")


@dataclass(frozen=True)
class Pair:
    """One `key=value` of a connection string. `value` is unescaped; `start:end` is the value as written."""

    key: str
    value: str
    braced: bool
    start: int
    end: int

    @property
    def name(self) -> str:
        """The key as ODBC compares it."""
        return self.key.strip().lower()


def parse(text: str) -> tuple[Pair, ...]:
    """Every `key=value` in `text`, in order. A part without `=` is kept by neither ODBC nor this reader."""
    pairs: list[Pair] = []
    i, n = 0, len(text)
    while i < n:
        equals, semicolon = text.find("=", i), text.find(";", i)
        if equals < 0 or (0 <= semicolon < equals):  # a part without `=`: skipped, as drivers do
            if semicolon < 0:
                break
            i = semicolon + 1
            continue
        key = text[i:equals].strip()
        j = equals + 1
        while j < n and text[j] in " \t":
            j += 1
        if j < n and text[j] == "{":
            value, end = _braced(text, j)
            pairs.append(Pair(key, value, True, j, end))
        else:
            end = text.find(";", j)
            end = n if end < 0 else end
            pairs.append(Pair(key, text[j:end].rstrip(), False, j, end))
        i = end + 1
    return tuple(pairs)


def _braced(text: str, start: int) -> tuple[str, int]:
    """The value of `{...}` at `start` and where the written value ends (up to the `;` after it, so text that
    trails a closing brace is part of the value: masked with it, never shown)."""
    out: list[str] = []
    i, n = start + 1, len(text)
    while i < n:
        char = text[i]
        if char == "}":
            if i + 1 < n and text[i + 1] == "}":
                out.append("}")
                i += 2
                continue
            end = text.find(";", i + 1)
            return "".join(out), n if end < 0 else end
        out.append(char)
        i += 1
    return "".join(out), n  # never closed: the rest of the text is the value


def is_braced(text: str) -> bool:
    """Whether `text` is one whole braced value, `{...}` with every inner `}` doubled."""
    return text.startswith("{") and brace(_braced(text, 0)[0]) == text


def brace(value: str) -> str:
    """`value` in braces, `}` doubled: how a connection string writes any value, whatever it holds."""
    return "{" + value.replace("}", "}}") + "}"


def quote(value: str) -> str:
    """`value` as a connection string writes it: bare when it can stand so, else braced."""
    if value and not any(c in value for c in ";{}") and value == value.strip():
        return value
    return brace(value)


def render(pairs: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> str:
    """`key=value;...` from (key, value) pairs: the inverse of `parse` for every value."""
    return ";".join(f"{key}={quote(value)}" for key, value in pairs)


def get(text: str, key: str) -> str | None:
    """The (first) value of `key`, compared as ODBC does; None when the string does not set it."""
    wanted = key.lower()
    return next((pair.value.strip() for pair in parse(text) if pair.name == wanted), None)


def keys(text: str) -> set[str]:
    return {pair.name for pair in parse(text)}


def replace_values(text: str, new_value: Callable[[Pair], str | None]) -> str:
    """`text` with each pair's written value replaced by `new_value(pair)` (already quoted), when not None."""
    out, last = [], 0
    for pair in parse(text):
        written = new_value(pair)
        if written is not None:
            out += [text[last : pair.start], written]
            last = pair.end
    return "".join(out) + text[last:] if out else text


def with_value(text: str, key: str, written: str) -> str:
    """`text` with the first `key`'s value replaced by `written` (as it is to be written: quoted by the caller)."""
    first = next((pair for pair in parse(text) if pair.name == key.lower()), None)
    return replace_values(text, lambda pair: written if pair == first else None)


def is_secret(key: str) -> bool:
    return bool(_SECRET_KEY.search(key))


def mask(text: str) -> str:
    """The connection string as it may be shown, logged or stored: every secret value replaced by `***`."""
    return replace_values(text, _masked_value)


def _masked_value(pair: Pair) -> str | None:
    if is_secret(pair.name):
        return MASK
    if pair.name == _LIBPQ_OPTIONS:
        masked = _mask_libpq(pair.value)
        if masked == pair.value:
            return None
        return brace(masked) if pair.braced else quote(masked)
    return None


# libpq's conninfo: `key = value` separated by spaces, a value either bare or in single quotes, `\` escaping
# the next character in both.
_CONNINFO = re.compile(r"""\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*('(?:[^'\\]|\\.)*'|(?:[^\s'\\]|\\.)+)""", re.DOTALL)


def _mask_libpq(options: str) -> str:
    out, i = [], 0
    while i < len(options):
        match = _CONNINFO.match(options, i)
        if match is None:
            if options[i:].strip():  # not conninfo as libpq reads it: hide all of it rather than guess
                return MASK if any(_LIBPQ_SECRET.search(w) for w in re.findall(r"\w+", options)) else options
            break
        secret = _LIBPQ_SECRET.match(match.group(1))
        out.append(options[i : match.start(2)] + (MASK if secret else match.group(2)))
        i = match.end()
    return "".join(out) + options[i:]
