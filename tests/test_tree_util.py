"""irax.tree_util against jax.tree_util.

jit flattens every argument and keys its cache on the treedef, so leaf order, structure
equality and the errors of mismatched trees must be JAX's, or a ported program silently
passes its leaves in another order or retraces.
"""
from __future__ import annotations

import collections
import dataclasses
import functools
import re

import pytest

from irax import tree_util as itu

try:
    import jax
    jtu = jax.tree_util
except ImportError:  # JAX is an optional oracle
    jax = jtu = None

needs_jax = pytest.mark.skipif(jax is None, reason="JAX is the oracle")
TREE_UTILS = [itu] if jax is None else [itu, jtu]


def register_in_both(register, *args, **kwargs):
    """Registers a class with irax and JAX alike, so that the same trees are valid in both."""
    def decorate(cls):
        for tu in TREE_UTILS:
            getattr(tu, register)(cls, *args, **kwargs)
        return cls
    return decorate


class Box:
    """Registered with ``register_pytree_node``; ``name`` is its auxiliary data."""

    def __init__(self, a, b, name):
        self.a, self.b, self.name = a, b, name

    def __eq__(self, other):
        return type(other) is Box and (self.a, self.b, self.name) == (other.a, other.b, other.name)

    def __repr__(self):
        return f"Box({self.a!r}, {self.b!r}, {self.name!r})"


register_in_both("register_pytree_node", lambda b: ((b.a, b.b), b.name), lambda name, c: Box(*c, name))(Box)


@register_in_both("register_pytree_node_class")
class Pair:
    def __init__(self, first, tag):
        self.first, self.tag = first, tag

    def tree_flatten(self):
        return [self.first], self.tag

    @classmethod
    def tree_unflatten(cls, tag, children):
        return cls(children[0], tag)

    def __eq__(self, other):
        return type(other) is Pair and (self.first, self.tag) == (other.first, other.tag)


@register_in_both("register_dataclass", data_fields=["w", "b"], meta_fields=["activation"])
@dataclasses.dataclass
class Dense:
    w: object
    b: object
    activation: str


@register_in_both("register_dataclass")
@dataclasses.dataclass
class Conv:
    """Registered bare, as a decorator: ``stride`` is static through its field metadata."""
    kernel: object
    stride: int = dataclasses.field(metadata=dict(static=True))
    bias: object = None


@register_in_both("register_static")
@dataclasses.dataclass(frozen=True)
class Activation:
    name: str


Point = collections.namedtuple("Point", "x y")
Vec = collections.namedtuple("Vec", "x y")
OrderedDict, defaultdict = collections.OrderedDict, collections.defaultdict

TREES = {
    "leaf": 1,
    "none": None,
    "empty_tuple": (),
    "empty_list": [],
    "empty_dict": {},
    "singleton_tuple": (1,),
    "list": [1, 2, 3],
    "dict_unsorted_keys": {"b": 1, "a": 2, "c": 3},
    "dict_int_keys": {2: 1, 1: 2, 10: 3},
    "nested": (1, [2, {"c": 3, "a": (4, None)}], {"z": [5, 6]}),
    "none_inside": [None, (None,), {"a": None, "b": 1}],
    "namedtuple": Point(1, (2, 3)),
    "namedtuple_of_empties": Point(None, []),
    "ordered_dict": OrderedDict([("b", 1), ("a", 2)]),
    "defaultdict": defaultdict(list, {"b": 1, "a": 2}),
    "custom_node": Box(1, [2, 3], "relu"),
    "custom_node_class": Pair({"q": 1, "p": 2}, "tag"),
    "dataclass_fields": Dense(w=1, b=(2, 3), activation="tanh"),
    "dataclass_decorator": Conv(kernel=[1, 2], stride=2, bias=None),
    "static": [Activation("gelu"), 1],
    "mixed": {"params": [Dense(1, 2, "relu"), Box(3, None, "b")],
              "state": Point(Pair(4, 5), OrderedDict(z=6, y=7))},
}
tree_params = pytest.mark.parametrize("tree", TREES.values(), ids=TREES.keys())


@needs_jax
@tree_params
def test_flatten_matches_jax(tree):
    leaves, treedef = itu.tree_flatten(tree)
    jax_leaves, jax_treedef = jtu.tree_flatten(tree)
    assert leaves == jax_leaves
    assert str(treedef) == str(jax_treedef)
    assert (treedef.num_leaves, treedef.num_nodes) == (jax_treedef.num_leaves, jax_treedef.num_nodes)
    assert [str(c) for c in treedef.children()] == [str(c) for c in jax_treedef.children()]
    assert itu.treedef_is_leaf(treedef) == jtu.treedef_is_leaf(jax_treedef)


@tree_params
def test_unflatten_rebuilds_the_same_types(tree):
    """OrderedDict order, defaultdict factories and namedtuple types survive a round trip."""
    leaves, treedef = itu.tree_flatten(tree)
    rebuilt = itu.tree_unflatten(treedef, leaves)
    assert rebuilt == tree
    assert type(rebuilt) is type(tree)
    assert itu.tree_structure(rebuilt) == treedef
    assert str(itu.tree_structure(rebuilt)) == str(treedef)


@needs_jax
@tree_params
def test_tree_map_matches_jax(tree):
    assert itu.tree_map(lambda x: 10 * x + 1, tree) == jtu.tree_map(lambda x: 10 * x + 1, tree)


@needs_jax
@tree_params
def test_tree_map_over_several_trees_matches_jax(tree):
    negated = itu.tree_map(lambda x: -x, tree)
    tripled = itu.tree_map(lambda x: 3 * x, tree)

    def combine(a, b, c):
        return (a, b, c)
    assert itu.tree_map(combine, tree, negated, tripled) == jtu.tree_map(combine, tree, negated, tripled)


@needs_jax
@tree_params
def test_key_paths_match_jax(tree):
    paths = [(itu.keystr(p), leaf) for p, leaf in itu.tree_leaves_with_path(tree)]
    assert paths == [(jtu.keystr(p), leaf) for p, leaf in jtu.tree_leaves_with_path(tree)]


@needs_jax
@pytest.mark.parametrize("is_leaf, tree", [
    (lambda x: x is None, [None, 1, (None, {"a": None})]),
    (lambda x: isinstance(x, tuple), [(1, 2), [(3,)], {"k": ()}]),
    (lambda x: isinstance(x, Box), {"b": Box(1, 2, "x"), "c": [Box(3, 4, "y")]}),
    (lambda x: isinstance(x, list), [[1, 2], 3]),
], ids=["none", "tuples", "custom_nodes", "root"])
def test_is_leaf_matches_jax(is_leaf, tree):
    assert itu.tree_leaves(tree, is_leaf=is_leaf) == jtu.tree_leaves(tree, is_leaf=is_leaf)
    assert str(itu.tree_structure(tree, is_leaf=is_leaf)) == str(jtu.tree_structure(tree, is_leaf=is_leaf))
    assert itu.tree_map(repr, tree, is_leaf=is_leaf) == jtu.tree_map(repr, tree, is_leaf=is_leaf)


@needs_jax
@pytest.mark.parametrize("prefix, full", [
    ([1, 2], [(3, 4), {"a": 5}]),
    ({"a": 1, "b": 2}, {"a": [1, 2], "b": None}),
    (Point(1, 2), Point([1], Box(2, 3, "n"))),
    (1, None),
], ids=["list", "dict", "namedtuple", "leaf_over_none"])
def test_later_trees_may_be_deeper(prefix, full):
    """Trees after the first need only have the first's structure as a prefix."""
    def pair(a, b):
        return (a, b)
    assert itu.tree_map(pair, prefix, full) == jtu.tree_map(pair, prefix, full)


MISMATCHES = {
    "list_vs_tuple": ([1, 2], (1, 2), "different types at key path <root>"),
    "list_lengths": ([1, 2], [1, 2, 3], "different lengths of list"),
    "tuple_lengths": ((1, {"k": [1, 2]}), (1, {"k": [1]}), "different lengths of list at key path [1]['k']"),
    "dict_keys": ({"a": 1}, {"b": 1}, "different pytree metadata"),
    "dict_key_count": ({"a": 1}, {"a": 1, "b": 2}, "different pytree metadata"),
    "none_vs_leaf": ({"x": [None]}, {"x": [1]}, "different types at key path ['x'][0]"),
    "node_vs_leaf": ([1, [2]], [1, 2], "different types at key path [1]"),
    "dict_vs_ordered_dict": ({"a": 1}, OrderedDict(a=1), "different types"),
    "ordered_dict_order": (OrderedDict(a=1, b=2), OrderedDict(b=1, a=2), "different pytree metadata"),
    "defaultdict_vs_dict": (defaultdict(int, a=1), {"a": 1}, "different types"),
    "namedtuple_types": (Point(1, 2), Vec(1, 2), "different types"),
    "namedtuple_vs_tuple": (Point(1, 2), (1, 2), "different types"),
    "custom_aux": (Box(1, 2, "a"), Box(1, 2, "b"), "different pytree metadata"),
    "dataclass_meta": ([Dense(1, 2, "relu")], [Dense(1, 2, "tanh")], "different pytree metadata at key path [0]"),
    "in_dataclass": (Dense(1, [2], "relu"), Dense(1, (2,), "relu"), "different types at key path .b"),
}


@pytest.mark.parametrize("tree, other, message", MISMATCHES.values(), ids=MISMATCHES.keys())
def test_tree_map_rejects_mismatched_structures(tree, other, message):
    """JAX raises ValueError; irax's message also says what differs and where."""
    for tu in TREE_UTILS:
        with pytest.raises(ValueError):
            tu.tree_map(lambda a, b: a, tree, other)
    with pytest.raises(ValueError, match="^" + re.escape(f"pytree structure error: {message}")):
        itu.tree_map(lambda a, b: a, tree, other)


STRUCTURE_PAIRS = {
    "leaves_of_any_type": (1, "x"),
    "dict_insertion_order": ({"a": 1, "b": 2}, {"b": 3, "a": 4}),
    "list_vs_tuple": ([1], (1,)),
    "none_vs_empty_tuple": (None, ()),
    "none_vs_leaf": ([None], [1]),
    "ordered_dict_order": (OrderedDict(a=1, b=2), OrderedDict(b=1, a=2)),
    "defaultdict_factories": (defaultdict(int, a=1), defaultdict(list, a=1)),
    "namedtuple_types": (Point(1, 2), Vec(1, 2)),
    "namedtuple_vs_tuple": (Point(1, 2), (1, 2)),
    "custom_aux_equal": (Box(1, 2, "a"), Box(3, 4, "a")),
    "custom_aux_differs": (Box(1, 2, "a"), Box(1, 2, "b")),
    "dataclass_meta_differs": (Dense(1, 2, "relu"), Dense(1, 2, "tanh")),
    "static_equal": (Activation("relu"), Activation("relu")),
    "static_differs": (Activation("relu"), Activation("tanh")),
}


@needs_jax
@pytest.mark.parametrize("a, b", STRUCTURE_PAIRS.values(), ids=STRUCTURE_PAIRS.keys())
def test_structure_equality_matches_jax(a, b):
    equal = itu.tree_structure(a) == itu.tree_structure(b)
    assert equal == (jtu.tree_structure(a) == jtu.tree_structure(b))
    if equal:
        assert hash(itu.tree_structure(a)) == hash(itu.tree_structure(b))


def test_unsortable_dict_keys_raise():
    """JAX orders dict children by sorted key and refuses keys that do not sort."""
    for tu in TREE_UTILS:
        with pytest.raises(ValueError, match="sorting pytree dictionary keys"):
            tu.tree_leaves({1: "a", "b": "c"})


def test_none_is_an_empty_node_not_a_leaf():
    assert itu.tree_leaves([None, (None,), {"a": None}]) == []
    assert itu.tree_map(lambda x: 1, {"a": None, "b": 0}) == {"a": None, "b": 1}
    assert itu.tree_structure(None).num_leaves == 0


@pytest.mark.parametrize("leaves, error", [([1], "Too few leaves"), ([1, 2, 3], "Too many leaves")],
                         ids=["few", "many"])
def test_unflatten_checks_the_leaf_count(leaves, error):
    for tu in TREE_UTILS:
        with pytest.raises(ValueError, match=error):
            tu.tree_unflatten(tu.tree_structure([0, 0]), leaves)


def test_register_dataclass_used_as_decorators():
    @itu.register_dataclass
    @dataclasses.dataclass
    class Bare:
        x: object
        name: str = dataclasses.field(default="n", metadata=dict(static=True))

    @functools.partial(itu.register_dataclass, data_fields=["y"], meta_fields=["name"])
    @dataclasses.dataclass
    class Explicit:
        y: object
        name: str

    assert dataclasses.is_dataclass(Bare) and dataclasses.is_dataclass(Explicit)
    tree = [Bare(1), Explicit((2, 3), "e")]
    leaves, treedef = itu.tree_flatten(tree)
    assert leaves == [1, 2, 3]
    assert itu.tree_unflatten(treedef, [4, 5, 6]) == [Bare(4), Explicit((5, 6), "e")]
    assert [itu.keystr(p) for p, _ in itu.tree_leaves_with_path(tree)] == ["[0].x", "[1].y[0]", "[1].y[1]"]


def _fresh_dataclass():
    @dataclasses.dataclass
    class Fields:
        x: object
        y: object = None
        z: object = dataclasses.field(init=False, default=0)
    return Fields


class _NotADataclass:
    def __init__(self, x):
        self.x = x


BAD_DATACLASS_REGISTRATIONS = {
    "only_data_fields": (_fresh_dataclass, dict(data_fields=["x", "y"]), TypeError),
    "not_a_dataclass_without_fields": (lambda: _NotADataclass, {}, TypeError),
    "missing_field": (_fresh_dataclass, dict(data_fields=["x"], meta_fields=[]), ValueError),
    "unknown_field": (_fresh_dataclass, dict(data_fields=["x", "y", "w"], meta_fields=[]), ValueError),
    "non_init_field": (_fresh_dataclass, dict(data_fields=["x", "y", "z"], meta_fields=[]), ValueError),
    "overlap": (_fresh_dataclass, dict(data_fields=["x", "y"], meta_fields=["y"]), ValueError),
    "implicit_with_non_init_field": (_fresh_dataclass, {}, ValueError),
}


@pytest.mark.parametrize("make_class, kwargs, error", BAD_DATACLASS_REGISTRATIONS.values(),
                         ids=BAD_DATACLASS_REGISTRATIONS.keys())
def test_register_dataclass_rejects_fields_as_jax_does(make_class, kwargs, error):
    """The field lists must let unflattening call the constructor with exactly its arguments."""
    for tu in TREE_UTILS:
        with pytest.raises(error):
            tu.register_dataclass(make_class(), **kwargs)


def test_register_dataclass_drop_fields():
    Fields = _fresh_dataclass()
    for tu in TREE_UTILS:
        tu.register_dataclass(Fields, data_fields=["x"], meta_fields=[], drop_fields=["y"])
    for tu in TREE_UTILS:
        assert tu.tree_leaves(Fields(1, 2)) == [1]
        assert tu.tree_unflatten(tu.tree_structure(Fields(1, 2)), [5]) == Fields(5, None)


def test_registering_a_type_twice_raises():
    for tu in TREE_UTILS:
        with pytest.raises(ValueError, match="Duplicate"):
            tu.register_pytree_node(Box, lambda b: ((), None), lambda aux, c: None)


def test_register_pytree_with_keys_class():
    @itu.register_pytree_with_keys_class
    class Named:
        def __init__(self, values):
            self.values = values

        def tree_flatten_with_keys(self):
            return [(itu.GetAttrKey(k), v) for k, v in self.values.items()], tuple(self.values)

        @classmethod
        def tree_unflatten(cls, keys, children):
            return cls(dict(zip(keys, children)))

    tree = Named({"w": 1, "b": [2]})
    assert [itu.keystr(p) for p, _ in itu.tree_leaves_with_path(tree)] == [".w", ".b[0]"]
    assert itu.tree_map(lambda x: x + 1, tree).values == {"w": 2, "b": [3]}


@needs_jax
def test_helpers_match_jax():
    tree = [1, (2, {"a": 3}), None]
    outer, inner = itu.tree_structure([0, 0]), itu.tree_structure((0, 0, 0))
    nested = [(1, 2, 3), (4, 5, 6)]
    assert itu.tree_transpose(outer, inner, nested) == jtu.tree_transpose(
        jtu.tree_structure([0, 0]), jtu.tree_structure((0, 0, 0)), nested)
    assert itu.tree_reduce(lambda a, b: a * 10 + b, tree) == jtu.tree_reduce(lambda a, b: a * 10 + b, tree)
    assert (itu.tree_all([1, (True, {"a": 0})]), itu.tree_all([])) == (False, True)
    assert str(itu.treedef_tuple([itu.tree_structure(1), itu.tree_structure([1, 2])])) == str(
        jtu.treedef_tuple([jtu.tree_structure(1), jtu.tree_structure([1, 2])]))
    assert itu.tree_structure([1, (2, 3)]).flatten_up_to([{"a": 1}, ([2], 3)]) == [{"a": 1}, [2], 3]


def test_partial_binds_arguments_as_children():
    partial = itu.Partial(lambda a, b: a + b, 1)
    assert itu.tree_leaves(partial) == [1]
    assert itu.tree_map(lambda x: 10 * x, partial)(2) == 12


@needs_jax
def test_more_helpers_match_jax():
    def pair(a, b):
        return (a, b)
    leaves = [1, 2, 3, 4, 5]
    assert itu.tree_reduce_associative(pair, leaves) == jtu.tree_reduce_associative(pair, leaves)
    assert itu.tree_reduce_associative(pair, [], identity=0) == 0
    with pytest.raises(TypeError, match="identity"):
        itu.tree_reduce_associative(pair, [])
    assert itu.tree_reduce(pair, [1, 2], None) == jtu.tree_reduce(pair, [1, 2], None) == ((None, 1), 2)
    prefix, full = [1, {"a": 2}], [[3, 4], {"a": (5, 6)}]
    assert itu.tree_broadcast(prefix, full) == jtu.tree_broadcast(prefix, full)
    outer = [(1, 2), (3, 4)]
    assert itu.tree_transpose(itu.tree_structure([0, 0]), None, outer) == jtu.tree_transpose(
        jtu.tree_structure([0, 0]), None, outer)
    from jax._src.tree_util import flatten_one_level
    point = collections.namedtuple("Point", "x y")
    for tree in [(1, [2]), [1, 2], {"b": 1, "a": [2]}, point(1, 2), None]:
        assert itu.flatten_one_level(tree) == flatten_one_level(tree)
    with pytest.raises(ValueError, match="can't tree-flatten type"):
        itu.flatten_one_level(1)
    assert [itu.is_tree_node(t) for t in (tuple, dict, point, int)] == [True, True, True, False]


@needs_jax
def test_tree_module_is_jax_tree():
    import irax
    names = [n for n in dir(jax.tree) if not n.startswith("_")]
    assert sorted(irax.tree.__all__) == names
    tree = {"b": [1, 2], "a": (3, None)}
    for name in ["leaves", "structure", "all"]:
        assert str(getattr(irax.tree, name)(tree)) == str(getattr(jax.tree, name)(tree))
    assert irax.tree.map(lambda x, y: x * y, tree, tree) == jax.tree.map(lambda x, y: x * y, tree, tree)
    assert irax.tree.unflatten(*reversed(irax.tree.flatten(tree))) == tree

    @irax.tree_util.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: int
        op: str = irax.tree.static(default="add")
    assert irax.tree.leaves(Op(1)) == [1]
    assert irax.tree.map(lambda v: v + 1, Op(1, "mul")) == Op(2, "mul")


@needs_jax
def test_ravel_pytree_matches_jax():
    import numpy as np
    from jax.flatten_util import ravel_pytree as jax_ravel

    import irax
    from irax.flatten_util import ravel_pytree
    tree = {"a": np.ones((2, 3), np.float32), "b": (np.arange(3, dtype=np.int32), 2.5), "c": None}
    for ravel, lib in ((ravel_pytree, irax), (jax_ravel, jax)):
        flat, unravel = ravel(tree)
        assert flat.dtype == np.float32 and flat.shape == (10,)
        back = unravel(flat * 2)
        assert [(np.asarray(x).dtype, np.shape(x)) for x in lib.tree_util.tree_leaves(back)] == [
            (np.float32, (2, 3)), (np.int32, (3,)), (np.float32, ())]
    np.testing.assert_array_equal(irax.jit(lambda t: ravel_pytree(t)[0])(tree), jax_ravel(tree)[0])
    params = {"w": np.ones(2, np.float32), "v": np.float32(3)}
    grads = irax.grad(lambda t: (ravel_pytree(t)[0] ** 2).sum())(params)
    assert float(grads["v"]) == 6.0 and grads["w"].tolist() == [2.0, 2.0]
    unravel = ravel_pytree(tree)[1]
    with pytest.raises(TypeError, match="unravel function given array of dtype int32, but expected dtype float32"):
        unravel(np.ones(10, np.int32))
    with pytest.raises(ValueError, match=r"Sum of sizes 10 must be equal to dimension 0 of the operand shape \[3\]"):
        unravel(np.ones(3, np.float32))
    assert ravel_pytree({"a": np.ones(3, np.float32)})[1](np.ones(3, np.float16))["a"].dtype == np.float16
    flat, unravel = ravel_pytree([])
    assert flat.dtype == np.float32 and flat.shape == (0,) and unravel(flat) == []
    irax.effects_barrier()  # nothing is pending: host callbacks run during the call


@needs_jax
@pytest.mark.parametrize("tree", [{"a": 1, "b": (2, 3)}, [1, (2,)], (1, 2), None,
                                  collections.namedtuple("Point", "x y")(1, 2)], ids=repr)
def test_flatten_one_level_with_keys_as_jax(tree):
    ours, theirs = itu.flatten_one_level_with_keys(tree), jtu.flatten_one_level_with_keys(tree)
    assert type(ours[0]) is type(theirs[0]) and ours[1] == theirs[1]
    assert [(itu.keystr((k,)), c) for k, c in ours[0]] == [(jtu.keystr((k,)), c) for k, c in theirs[0]] or \
        isinstance(tree, tuple) and hasattr(tree, "_fields")  # JAX names every namedtuple field by the first's


def test_flatten_one_level_with_keys_of_a_leaf_fails():
    with pytest.raises(ValueError, match="can't tree-flatten type: <class 'int'>"):
        itu.flatten_one_level_with_keys(1)
