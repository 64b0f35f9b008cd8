"""The little condition language of layouts: which rows of a table are in a state.

A layout says `pending = "token is null and attempts = 0 and available <= now"`. Such a text is parsed here
into a tree whose every leaf is checked: a role the layout defines, `now` (the database's own clock of the
layout's kind, optionally shifted: `now - $setting` by a setting's seconds, `now - role` by each row's own
seconds or interval, as pg-boss's `expire_in`), a whole number, a short 'text' (letters, digits, space . _ -),
a `$setting` (bound as a parameter), `true`/`false`, a list of texts or numbers after `in` (a status column's
values: `status in ('todo', 'doing')`). Nothing else reaches SQL: roles become quoted column names, operators
come from a fixed list. So a layout file can describe any shape and still never carry SQL of its own.

Grammar: `expr := term (or term)*`, `term := factor (and factor)*`,
`factor := not factor | ( expr ) | true | false | operand (is [not] null | [not] in ( value, ... ) | op operand)`,
`operand := role | now [(+|-) ($setting | role)] | number | 'text' | $setting`, `op := = <> != < <= > >=`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from queuetop.core.errors import UsageError

OPERATORS = ("<=", ">=", "<>", "!=", "=", "<", ">")
_TOKEN = re.compile(r"\s*(?:(<=|>=|<>|!=|=|<|>|\(|\)|\+|-|,)|(\$[A-Za-z_][A-Za-z0-9_]*)|(\d+)|([A-Za-z_][A-Za-z0-9_]*)"
                    r"|('[A-Za-z0-9_ .-]{0,64}'))")
KEYWORDS = {"and", "or", "not", "is", "null", "true", "false", "now", "in"}
MAX_VALUES = 32  # values in one `in` list: a status column has a handful
MAX_NESTING = 32  # parentheses and `not`s inside each other: far past any real state, far below Python's stack


@dataclass(frozen=True)
class Role:
    name: str


@dataclass(frozen=True)
class Now:
    offset: str | None = None  # a setting holding seconds
    sign: int = 1
    by: str | None = None  # or a role: a column holding each row's own seconds or interval (pg-boss's expire_in)


@dataclass(frozen=True)
class Number:
    value: int


@dataclass(frozen=True)
class Setting:
    name: str


@dataclass(frozen=True)
class Text:
    value: str  # bound as a parameter, never pasted


@dataclass(frozen=True)
class Values:
    items: tuple[Text | Number, ...]  # after `in`: each rendered as a literal, as a lone Text or Number is


Operand = Role | Now | Number | Setting | Text | Values


@dataclass(frozen=True)
class Compare:
    left: Operand
    op: str  # one of OPERATORS, "is null" / "is not null", or "in" / "not in" (right: Values)
    right: Operand | None = None


@dataclass(frozen=True)
class Bool:
    value: bool


@dataclass(frozen=True)
class Not:
    inner: Node


@dataclass(frozen=True)
class Junction:
    kind: str  # "and" | "or"
    parts: tuple[Node, ...]


Node = Compare | Bool | Not | Junction


def _tokens(text: str, where: str) -> list[str]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise UsageError(f"{where}: cannot read {text[pos:].strip()[:20]!r} in {text!r}",
                             "conditions use roles, now, numbers, 'texts', $settings, and/or/not, is [not] null, "
                             "[not] in ('a', 'b'), = <> < <= > >=")
        out.append(next(group for group in match.groups() if group is not None))
        pos = match.end()
    return out


class _Parser:
    def __init__(self, text: str, where: str) -> None:
        self.text, self.where = text, where
        self.tokens = _tokens(text, where)
        self.pos = 0
        self.depth = 0

    def fail(self, what: str) -> UsageError:
        shown = self.text if len(self.text) <= 80 else self.text[:60] + " ... " + self.text[-15:]
        return UsageError(f"{self.where}: {what} in {shown!r}")

    def peek(self) -> str | None:
        return self.tokens[self.pos].lower() if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise self.fail(f"expected {expected or 'more'}, found {token or 'the end'}")
        self.pos += 1
        return self.tokens[self.pos - 1]

    def parse(self) -> Node:
        node = self.expr()
        if self.peek() is not None:
            raise self.fail(f"unexpected {self.peek()!r}")
        return node

    def expr(self) -> Node:
        return self._joined("or", self.term)

    def term(self) -> Node:
        return self._joined("and", self.factor)

    def _joined(self, keyword: str, part: Callable[[], Node]) -> Node:
        """part (keyword part)*: one part as itself, several as a Junction."""
        parts = [part()]
        while self.peek() == keyword:
            self.take()
            parts.append(part())
        return parts[0] if len(parts) == 1 else Junction(keyword, tuple(parts))

    def factor(self) -> Node:
        token = self.peek()
        if token in ("not", "("):
            self.take()
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise self.fail(f"parentheses and nots nested more than {MAX_NESTING} deep")
            node = Not(self.factor()) if token == "not" else self.expr()
            if token == "(":
                self.take(")")
            self.depth -= 1
            return node
        if token in ("true", "false"):
            self.take()
            return Bool(token == "true")
        left = self.operand()
        if self.peek() == "is":
            self.take()
            negated = self.peek() == "not"
            if negated:
                self.take()
            self.take("null")
            return Compare(left, "is not null" if negated else "is null")
        if self.peek() in ("in", "not"):
            negated = self.peek() == "not"
            if negated:
                self.take()
            self.take("in")
            return Compare(left, "not in" if negated else "in", self.values())
        op = self.take()
        if op not in OPERATORS:
            raise self.fail(f"expected a comparison, found {op!r}")
        return Compare(left, "<>" if op == "!=" else op, self.operand())

    def values(self) -> Values:
        """( value, ... ): texts and numbers only, so a list is as closed as a lone value."""
        self.take("(")
        items: list[Text | Number] = []
        while True:
            token = self.take()
            if token.startswith("'"):
                items.append(Text(token[1:-1]))
            elif token.isdigit():
                items.append(Number(int(token)))
            else:
                raise self.fail(f"an in list holds 'texts' and numbers, not {token!r}")
            if len(items) > MAX_VALUES:
                raise self.fail(f"an in list holds at most {MAX_VALUES} values")
            if self.take() == ")":
                return Values(tuple(items))
            if self.tokens[self.pos - 1] != ",":
                raise self.fail(f"expected , or ) in an in list, found {self.tokens[self.pos - 1]!r}")

    def operand(self) -> Operand:
        token = self.take()
        lowered = token.lower()
        if lowered == "now":
            if self.peek() in ("+", "-"):
                sign = 1 if self.take() == "+" else -1
                shift = self.take()
                if shift.startswith("$"):
                    return Now(shift[1:], sign)
                if re.match(r"^[A-Za-z_]", shift) and shift.lower() not in KEYWORDS:
                    return Now(sign=sign, by=shift)  # each row's own: started_on <= now - expire_in
                raise self.fail("now can only be shifted by a $setting of seconds or a role holding each row's own")
            return Now()
        if token.startswith("$"):
            return Setting(token[1:])
        if token.startswith("'"):
            return Text(token[1:-1])
        if token.isdigit():
            return Number(int(token))
        if lowered in KEYWORDS or not re.match(r"^[A-Za-z_]", token):
            raise self.fail(f"expected a role, now, a number or a $setting, found {token!r}")
        return Role(token)


def parse_predicate(text: str, where: str = "condition") -> Node:
    """Parse a condition; raises UsageError naming `where` and what could not be read."""
    if not isinstance(text, str) or not text.strip():
        raise UsageError(f"{where}: the condition is empty")
    return _Parser(text, where).parse()


def _operands(node: Node) -> Iterator[Operand]:
    """Every operand of a condition, depth first."""
    if isinstance(node, Compare):
        yield from (o for o in (node.left, node.right) if o is not None)
    elif isinstance(node, Not):
        yield from _operands(node.inner)
    elif isinstance(node, Junction):
        for part in node.parts:
            yield from _operands(part)


def roles_of(node: Node) -> set[str]:
    """Every role a condition mentions."""
    return {o.name for o in _operands(node) if isinstance(o, Role)} | {
        o.by for o in _operands(node) if isinstance(o, Now) and o.by}


def settings_of(node: Node) -> set[str]:
    """Every $setting a condition mentions."""
    return {o.name if isinstance(o, Setting) else o.offset for o in _operands(node)
            if isinstance(o, Setting) or (isinstance(o, Now) and o.offset)}  # type: ignore[misc]


def texts_of(node: Node) -> dict[str, tuple[str, ...]]:
    """Per role, the texts a condition asks it to equal (`status = 'doing'`, `state in ('created', 'retry')`),
    outside any `not`: the library's own words for a state, in the order written."""
    found: dict[str, list[str]] = {}
    if isinstance(node, Junction):
        for part in node.parts:
            for role, texts in texts_of(part).items():
                found.setdefault(role, []).extend(texts)
    elif isinstance(node, Compare) and isinstance(node.left, Role) and node.op in ("=", "in"):
        items = node.right.items if isinstance(node.right, Values) else (node.right,)
        texts = [item.value for item in items if isinstance(item, Text)]
        if texts:
            found[node.left.name] = texts
    return {role: tuple(dict.fromkeys(texts)) for role, texts in found.items()}
