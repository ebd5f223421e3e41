"""The document printer must lay text out byte for byte as JAX's does.

Hand-written cases pin the layout rules without JAX; the differential tests
build the same random documents in both printers and compare their output.
"""
import random
import sys
import time

import pytest

from irax.ir import pretty as pp

WIDTHS = (10, 40, 80)
BATCHES = 8
DOCS_PER_BATCH = 50
ALPHABET = "abcxyz0123456789_:[]=é"
BREAK_TEXTS = ("", " ", "; ")
LEAVES = ("text",) * 5 + ("brk",) * 3 + ("nil",)
NODES = ("concat",) * 4 + ("join",) * 2 + ("group",) * 3 + ("nest",) * 2


def test_fitting_group_stays_on_one_line():
    doc = pp.group(pp.nest(2, pp.text("f") + pp.brk() + pp.text("x") + pp.brk() + pp.text("y")))
    assert pp.format(doc, 80) == "f x y"


def test_wide_group_breaks_at_the_nest_indent():
    doc = pp.group(pp.nest(2, pp.join(pp.brk(), [pp.text("alpha"), pp.text("beta"), pp.text("gamma")])))
    assert pp.format(doc, 10) == "alpha\n  beta\n  gamma"


def test_only_the_group_is_measured_not_what_follows():
    """JAX departs from Lindig: text after the group does not force a break."""
    doc = pp.group(pp.text("ab") + pp.brk() + pp.text("cd")) + pp.text("-" * 20)
    assert pp.format(doc, 10) == "ab cd" + "-" * 20


def test_a_group_that_exactly_fills_the_line_is_flat():
    doc = pp.text("abc") + pp.group(pp.brk() + pp.text("abcdef"))
    assert pp.format(doc, 10) == "abc abcdef"
    assert pp.format(doc, 9) == "abc\nabcdef"


def test_inner_group_of_a_broken_group_decides_for_itself():
    inner = pp.group(pp.nest(4, pp.text("g(") + pp.brk("") + pp.text("y)")))
    doc = pp.group(pp.nest(2, pp.text("head") + pp.brk() + inner + pp.brk() + pp.text("tail-tail")))
    assert pp.format(doc, 12) == "head\n  g(y)\n  tail-tail"


def test_break_outside_any_group_is_a_newline():
    assert pp.format(pp.text("a") + pp.brk("; ") + pp.text("b"), 80) == "a\nb"


def test_trailing_spaces_are_kept():
    doc = pp.nest(2, pp.text("a") + pp.brk() + pp.text("b  ")) + pp.brk()
    assert pp.format(doc, 10) == "a\n  b  \n"


def test_widths_count_utf8_bytes():
    """Five two-byte letters fill a 10-column line, as in JAX's engine."""
    assert pp.format(pp.group(pp.text("é" * 5) + pp.brk() + pp.text("ab")), 10) == "ééééé\nab"
    assert pp.format(pp.group(pp.text("e" * 5) + pp.brk() + pp.text("ab")), 10) == "eeeee ab"


def test_join_and_nil():
    assert pp.format(pp.join(pp.text(","), []), 80) == ""
    assert pp.format(pp.join(pp.text(","), [pp.text("a")]), 80) == "a"
    assert pp.format(pp.join(pp.text(", "), [pp.text("a"), pp.text("b")]), 80) == "a, b"
    assert str(pp.text("let") + pp.nil() + pp.text(":f32")) == "let:f32"


def test_deep_nesting_needs_no_recursion():
    """Layout walks with explicit stacks, so depth is bounded only by memory."""
    doc = pp.text("x")
    for _ in range(3 * sys.getrecursionlimit()):
        doc = pp.group(pp.nest(1, pp.text("(") + pp.brk("") + doc + pp.text(")")))
    out = pp.format(doc, 80)
    assert out.replace("\n", "").replace(" ", "").count("(") == 3 * sys.getrecursionlimit()


def _jaxpr_like(lib, n_eqns):
    """A document shaped like a printed jaxpr: one group per equation and per param list."""
    eqns = []
    for i in range(n_eqns):
        params = lib.group(lib.concat([
            lib.nest(2, lib.concat([lib.text("["), lib.brk(""),
                                    lib.join(lib.brk(), [lib.text(f"axes=({i % 3},)"),
                                                         lib.text("out_sharding=None")])])),
            lib.brk(""), lib.text("]")]))
        outs = lib.nest(2, lib.group(lib.text(f"v{i}:f32[3,4]")))
        ins = lib.nest(2, lib.group(lib.join(lib.group(lib.brk()), [lib.text(f"v{i - 1}"), lib.text("w")])))
        eqns.append(lib.concat([outs, lib.text(" = "), lib.text("reduce_sum"), params, lib.text(" "), ins]))
    body = lib.concat([lib.text("{ lambda ; a:f32[3,4]. let"),
                       lib.nest(2, lib.brk() + lib.join(lib.brk("; "), eqns)),
                       lib.brk(), lib.text("in (v0,)")])
    return lib.group(lib.nest(2, body)) + lib.text(" }")


def test_large_jaxpr_formats_in_linear_time():
    """2,000 equations take milliseconds; a generous bound still catches quadratic work."""
    doc = _jaxpr_like(pp, 2000)
    start = time.perf_counter()
    out = pp.format(doc, 80)
    assert time.perf_counter() - start < 0.5
    assert out.count("\n") == 2001


def _random_doc(lib, rng, depth):
    """One random document built with ``lib``; the same ``rng`` state gives the same shape."""
    kind = rng.choice(LEAVES if depth == 0 or rng.random() < 0.15 else NODES)
    if kind == "text":
        return lib.text("".join(rng.choice(ALPHABET) for _ in range(rng.choice((0, 1, 2, 4, 7, 12)))))
    if kind == "brk":
        return lib.brk(rng.choice(BREAK_TEXTS))
    if kind == "nil":
        return lib.nil()
    if kind == "group":
        return lib.group(_random_doc(lib, rng, depth - 1))
    if kind == "nest":
        return lib.nest(rng.randrange(5), _random_doc(lib, rng, depth - 1))
    children = [_random_doc(lib, rng, depth - 1) for _ in range(rng.randrange(1, 5))]
    if kind == "concat":
        return lib.concat(children)
    sep = lib.brk(rng.choice(BREAK_TEXTS)) if rng.random() < 0.7 else lib.text(",")
    return lib.join(sep, children)


def _both(seed, build):
    """``build`` run once per printer from the same seed, so both get the same document."""
    pytest.importorskip("jax")
    from jax._src import pretty_printer as jpp
    return build(pp, random.Random(seed)), build(jpp, random.Random(seed))


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("batch", range(BATCHES))
def test_random_documents_match_jax(batch, width):
    for seed in range(batch * DOCS_PER_BATCH, (batch + 1) * DOCS_PER_BATCH):
        ours, theirs = _both(seed, lambda lib, rng: _random_doc(lib, rng, rng.randrange(4, 9)))
        assert pp.format(ours, width) == theirs.format(width, use_color=False), f"seed {seed}"


@pytest.mark.parametrize("width", WIDTHS)
def test_jaxpr_shaped_document_matches_jax(width):
    ours, theirs = _both(0, lambda lib, rng: _jaxpr_like(lib, 40))
    assert pp.format(ours, width) == theirs.format(width, use_color=False)
