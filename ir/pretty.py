"""A Wadler/Lindig-style document printer whose layout matches JAX's jaxpr printer.

``make_jaxpr`` text is produced by JAX's pretty printer, so irax must lay out
documents exactly as it does (colors off, no annotations) to print identical
jaxprs. The rules, as JAX's engine applies them:

* Layout walks the document once with a stack, starting in BREAK mode.
* A group decides once, when it is reached: it is laid out flat if its own
  flat width fits in what is left of the line, otherwise its breaks become
  newlines. Only the group is measured, not the text after it (JAX departs
  from Lindig's paper here).
* Widths and columns count UTF-8 bytes, and a newline inside a text does not
  reset the column, because that is what JAX's engine does.

Every document records its flat width when it is built, so deciding a group
costs O(1) and formatting is linear in the document's size, however deeply
groups nest.
"""
from __future__ import annotations

from collections.abc import Iterable


def _byte_len(s: str) -> int:
    """Width of ``s`` as JAX measures it: UTF-8 bytes, not code points."""
    return len(s) if s.isascii() else len(s.encode("utf-8"))


class Doc:
    """A document; ``width`` is its length when every break is laid out flat."""

    __slots__ = ("width",)

    def __add__(self, other: Doc) -> Doc:
        return concat([self, other])

    def __str__(self) -> str:
        return format(self)


class _Text(Doc):
    __slots__ = ("text",)

    def __init__(self, s: str):
        self.text = s
        self.width = _byte_len(s)


class _Break(Doc):
    """Prints as ``text`` in a flat group, as a newline plus indent otherwise."""

    __slots__ = ("text",)

    def __init__(self, s: str):
        self.text = s
        self.width = _byte_len(s)


class _Concat(Doc):
    __slots__ = ("children",)

    def __init__(self, children: list[Doc]):
        self.children = children
        self.width = sum(c.width for c in children)


class _Group(Doc):
    __slots__ = ("child",)

    def __init__(self, child: Doc):
        self.child = child
        self.width = child.width


class _Nest(Doc):
    __slots__ = ("n", "child")

    def __init__(self, n: int, child: Doc):
        self.n = n
        self.child = child
        self.width = child.width


_NIL = _Concat([])


def nil() -> Doc:
    """The empty document."""
    return _NIL


def text(s: str) -> Doc:
    """Literal text, printed as is."""
    return _Text(s)


def concat(docs: Iterable[Doc]) -> Doc:
    """The documents one after another."""
    return _Concat(list(docs))


def brk(s: str = " ") -> Doc:
    """A break: ``s`` when its group is flat, a newline when it is broken."""
    return _Break(s)


def group(doc: Doc) -> Doc:
    """Lays ``doc`` out flat if it fits on the rest of the line, else broken."""
    return _Group(doc)


def nest(n: int, doc: Doc) -> Doc:
    """Indents the lines that breaks inside ``doc`` start by ``n`` more columns."""
    return _Nest(n, doc)


def join(sep: Doc, docs: Iterable[Doc]) -> Doc:
    """``docs`` with ``sep`` between each pair."""
    docs = list(docs)
    if len(docs) == 1:
        return docs[0]
    out = docs[:1]
    for d in docs[1:]:
        out += (sep, d)
    return _Concat(out)


def _emit_flat(doc: Doc, out: list[str]) -> None:
    """Appends ``doc`` with every break as its text; nothing inside can break."""
    stack = [doc]
    while stack:
        d = stack.pop()
        kind = type(d)
        if kind is _Text or kind is _Break:
            out.append(d.text)
        elif kind is _Concat:
            stack.extend(reversed(d.children))
        else:
            stack.append(d.child)


def format(doc: Doc, width: int = 80) -> str:
    """Lays ``doc`` out in ``width`` columns, exactly as JAX's printer would.

    Everything on the agenda is in BREAK mode: a group that fits is written
    out flat at once by ``_emit_flat``, so no FLAT entry is ever pushed.
    """
    out: list[str] = []
    column = 0
    agenda = [(0, doc)]
    while agenda:
        indent, d = agenda.pop()
        kind = type(d)
        if kind is _Text:
            out.append(d.text)
            column += d.width
        elif kind is _Concat:
            agenda.extend((indent, c) for c in reversed(d.children))
        elif kind is _Break:
            out.append("\n" + " " * indent)
            column = indent
        elif kind is _Group:
            if d.width <= width - column:
                _emit_flat(d.child, out)
                column += d.width
            else:
                agenda.append((indent, d.child))
        else:
            agenda.append((indent + d.n, d.child))
    return "".join(out)
