"""A Wadler/Lindig-style document printer whose layout matches JAX's jaxpr printer.

A group is laid out flat when its own flat width fits in what is left of the
line (JAX measures the group alone, not the text after it); otherwise its
breaks become newlines at the current nesting. Flat widths are computed once,
when a document is built, so formatting is linear in the document's size.
"""
from __future__ import annotations


class Doc:
    __slots__ = ("width",)

    def __add__(self, other: "Doc") -> "Doc":
        return concat([self, other])


class _Text(Doc):
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text
        self.width = len(text)


class _Concat(Doc):
    __slots__ = ("children",)

    def __init__(self, children):
        self.children = children
        self.width = sum(c.width for c in children)


class _Break(Doc):
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text
        self.width = len(text)


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
    return _NIL


def text(s: str) -> Doc:
    return _Text(s)


def concat(docs) -> Doc:
    return _Concat(list(docs))


def brk(s: str = " ") -> Doc:
    return _Break(s)


def group(doc: Doc) -> Doc:
    return _Group(doc)


def nest(n: int, doc: Doc) -> Doc:
    return _Nest(n, doc)


def join(sep: Doc, docs) -> Doc:
    docs = list(docs)
    if len(docs) <= 1:
        return docs[0] if docs else _NIL
    out = [docs[0]]
    for d in docs[1:]:
        out += [sep, d]
    return _Concat(out)


def format(doc: Doc, width: int = 80) -> str:
    """Lays ``doc`` out in ``width`` columns."""
    lines, line, column = [], [], 0
    agenda = [(0, False, doc)]
    while agenda:
        indent, flat, d = agenda.pop()
        kind = type(d)
        if kind is _Text:
            line.append(d.text)
            column += d.width
        elif kind is _Concat:
            agenda.extend((indent, flat, c) for c in reversed(d.children))
        elif kind is _Break:
            if flat:
                line.append(d.text)
                column += d.width
            else:
                lines.append("".join(line))
                line, column = [" " * indent], indent
        elif kind is _Group:
            agenda.append((indent, flat or d.width <= width - column, d.child))
        else:
            agenda.append((indent + d.n, flat, d.child))
    lines.append("".join(line))
    return "\n".join(lines)
