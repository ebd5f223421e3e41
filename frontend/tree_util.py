"""``irax.tree_util``: pytrees as JAX defines them.

Containers (tuple, list, dict with sorted keys, None, namedtuple, OrderedDict,
defaultdict, and registered classes) are nodes; everything else is a leaf.
A ``PyTreeDef`` is hashable and compares by structure: jit caches key on it,
so flattening builtin containers takes a fast path.
"""
from __future__ import annotations

import collections
import dataclasses
import functools
from typing import Any, Callable, NamedTuple, TypeVar

KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyPath = tuple[KeyEntry, ...]


class _NodeType(NamedTuple):
    name: str
    flatten: Callable       # x -> (children, aux)
    unflatten: Callable     # (aux, children) -> x
    flatten_with_keys: Callable | None = None


_registry: dict = {}


class PyTreeDef:
    """The structure of a pytree: node types, their auxiliary data, and where leaves go."""

    __slots__ = ("_node", "_aux", "_children", "num_leaves", "num_nodes", "_hash")

    def __init__(self, node, aux, children):
        self._node = node
        self._aux = aux
        self._children = children
        if node is None:
            self.num_leaves, self.num_nodes = 1, 1
        else:
            self.num_leaves = sum(c.num_leaves for c in children)
            self.num_nodes = 1 + sum(c.num_nodes for c in children)
        self._hash = hash((id(node) if node is not None else 0, _hashable(aux), children))

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return (self is other or (isinstance(other, PyTreeDef) and self._hash == other._hash
                                  and self._node is other._node and self._aux == other._aux
                                  and self._children == other._children))

    def children(self):
        """The treedefs of this node's children (none for a leaf)."""
        return list(self._children)

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"Too {'few' if len(leaves) < self.num_leaves else 'many'} leaves for PyTreeDef; "
                             f"expected {self.num_leaves}, got {len(leaves)}.")
        return self._build(iter(leaves))

    def _build(self, leaves):
        if self._node is None:
            return next(leaves)
        return self._node.unflatten(self._aux, [c._build(leaves) for c in self._children])

    def flatten_up_to(self, tree):
        """The subtrees of ``tree`` at this treedef's leaves; ``tree`` must have this structure as a prefix."""
        out = []
        try:
            self._flatten_up_to(tree, out)
        except _StructureMismatch as e:
            path = keystr(tuple(reversed(e.path))) or "<root>"
            raise ValueError(f"pytree structure error: {e.problem} at key path {path}: {e.detail}") from None
        return out

    def _flatten_up_to(self, tree, out):
        if self._node is None:
            out.append(tree)
            return
        node = _node_of(tree)
        if node is None:
            raise _StructureMismatch("different types", f"expected {self._type_name()}, got a leaf {tree!r}.")
        children, aux = node.flatten(tree)
        if node is not self._node or (node is _NAMEDTUPLE and aux is not self._aux):
            raise _StructureMismatch("different types", f"expected {self._type_name()}, got "
                                     f"{type(tree).__name__}: {tree!r}.")
        if len(children) != len(self._children) and self._aux is None:
            raise _StructureMismatch(f"different lengths of {self._node.name}",
                                     f"expected {len(self._children)}, got {len(children)}: {tree!r}.")
        if aux != self._aux:
            raise _StructureMismatch("different pytree metadata", f"expected {self._aux!r}, got {aux!r}: {tree!r}.")
        if len(children) != len(self._children):
            raise _StructureMismatch("different numbers of pytree children",
                                     f"expected {len(self._children)}, got {len(children)}: {tree!r}.")
        for i, (c, sub) in enumerate(zip(self._children, children)):
            try:
                c._flatten_up_to(sub, out)
            except _StructureMismatch as e:
                e.path.append(_keyed_children(tree, node)[i][0])
                raise

    def _type_name(self):
        return f"namedtuple {self._aux.__name__}" if self._node is _NAMEDTUPLE else self._node.name

    def __repr__(self):
        return f"PyTreeDef({self._repr()})"

    def _repr(self):
        if self._node is None:
            return "*"
        parts = [c._repr() for c in self._children]
        name = self._node.name
        if name == "tuple":
            return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
        if name == "list":
            return "[" + ", ".join(parts) + "]"
        if name == "dict":
            return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(self._aux, parts)) + "}"
        if name == "None":
            return "None"
        if name == "namedtuple":
            name = f"namedtuple[{self._aux.__name__}]"
            return f"CustomNode({name}, [{', '.join(parts)}])"
        return f"CustomNode({name}[{self._aux}], [{', '.join(parts)}])"


class _StructureMismatch(Exception):
    """Where and how a tree differs from a treedef; ``path`` collects keys leaf-first while unwinding."""

    def __init__(self, problem, detail):
        super().__init__(problem)
        self.problem, self.detail, self.path = problem, detail, []


def _hashable(aux):
    try:
        hash(aux)
        return aux
    except TypeError:
        return repr(aux)


_LEAF = PyTreeDef(None, None, ())


def _sorted_keys(d):
    try:
        return tuple(sorted(d))
    except TypeError:
        raise ValueError(f"Comparator raised exception while sorting pytree dictionary keys: {list(d)!r}.") from None


def _flatten_dict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], keys


def _flatten_defaultdict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, keys)


def _register_builtin(typ, name, flatten, unflatten, flatten_with_keys=None):
    _registry[typ] = _NodeType(name, flatten, unflatten, flatten_with_keys)


_register_builtin(tuple, "tuple", lambda t: (list(t), None), lambda aux, c: tuple(c),
                  lambda t: ([(SequenceKey(i), v) for i, v in enumerate(t)], None))
_register_builtin(list, "list", lambda t: (list(t), None), lambda aux, c: list(c),
                  lambda t: ([(SequenceKey(i), v) for i, v in enumerate(t)], None))
_register_builtin(dict, "dict", _flatten_dict, lambda aux, c: dict(zip(aux, c)),
                  lambda d: ([(DictKey(k), d[k]) for k in _sorted_keys(d)], _sorted_keys(d)))
_register_builtin(type(None), "None", lambda n: ([], None), lambda aux, c: None, lambda n: ([], None))
_register_builtin(collections.OrderedDict, "OrderedDict", lambda d: (list(d.values()), tuple(d)),
                  lambda aux, c: collections.OrderedDict(zip(aux, c)),
                  lambda d: ([(DictKey(k), v) for k, v in d.items()], tuple(d)))
_register_builtin(collections.defaultdict, "defaultdict", _flatten_defaultdict,
                  lambda aux, c: collections.defaultdict(aux[0], zip(aux[1], c)),
                  lambda d: ([(DictKey(k), d[k]) for k in _sorted_keys(d)], (d.default_factory, _sorted_keys(d))))
_NAMEDTUPLE = _NodeType("namedtuple", lambda t: (list(t), type(t)), lambda aux, c: aux(*c),
                        lambda t: ([(GetAttrKey(f), v) for f, v in zip(t._fields, t)], type(t)))


def _node_of(x):
    node = _registry.get(type(x))
    if node is None and isinstance(x, tuple) and hasattr(type(x), "_fields"):
        return _NAMEDTUPLE
    return node


def _flatten(x, leaves, is_leaf):
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    node = _node_of(x)
    if node is None:
        leaves.append(x)
        return _LEAF
    children, aux = node.flatten(x)
    return PyTreeDef(node, aux, tuple(_flatten(c, leaves, is_leaf) for c in children))


_TUPLE_NODE = _registry[tuple]
_tuple_defs: dict = {}


def tree_flatten(tree, is_leaf=None):
    """``(leaves, treedef)`` of ``tree``, leaves in JAX's order."""
    leaves = []
    if is_leaf is None and type(tree) is tuple and all(_node_of(x) is None for x in tree):
        leaves = list(tree)
        n = len(leaves)
        treedef = _tuple_defs.get(n)
        if treedef is None:
            treedef = _tuple_defs[n] = PyTreeDef(_TUPLE_NODE, None, (_LEAF,) * n)
        return leaves, treedef
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def tree_unflatten(treedef: PyTreeDef, leaves):
    return treedef.unflatten(leaves)


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True for a leaf and for a node without children (``None``, ``()``), as in JAX."""
    return treedef.num_nodes == 1


def treedef_children(treedef: PyTreeDef):
    return treedef.children()


def treedef_tuple(treedefs):
    treedefs = tuple(treedefs)
    return PyTreeDef(_TUPLE_NODE, None, treedefs)


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """``full_tree``'s structure with each leaf of ``prefix_tree`` repeated over its subtree."""
    leaves = []
    tree_map(lambda x, subtree: leaves.extend([x] * tree_structure(subtree).num_leaves), prefix_tree, full_tree,
             is_leaf=is_leaf)
    return tree_structure(full_tree).unflatten(leaves)


def is_tree_node(typ) -> bool:
    """True for a registered node type and for namedtuple types."""
    return typ in _registry or (issubclass(typ, tuple) and hasattr(typ, "_fields"))


def flatten_one_level(tree):
    """``(children, aux)`` of one node; the children in a list for lists and namedtuples, else a tuple (JAX's
    containers)."""
    node = _node_of(tree)
    if node is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    children, aux = node.flatten(tree)
    return (list if isinstance(tree, list) or node is _NAMEDTUPLE else tuple)(children), aux


def flatten_one_level_with_keys(tree):
    """``flatten_one_level`` with each child paired with its key: a tuple for JAX's built-in containers, a list
    for namedtuples and registered classes, as JAX's."""
    _, aux = flatten_one_level(tree)
    pairs = _keyed_children(tree, _node_of(tree))
    builtin = tree is None or type(tree) in (dict, list, tuple, collections.OrderedDict, collections.defaultdict)
    return (tuple if builtin else list)(pairs), aux


def all_leaves(iterable, is_leaf=None) -> bool:
    return all(tree_structure(x, is_leaf) == _LEAF for x in iterable)


def tree_map(f, tree, *rest, is_leaf=None):
    """Applies ``f`` leafwise; ``rest`` must have ``tree``'s structure (or be deeper)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    all_leaves_ = [leaves] + [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten(f(*xs) for xs in zip(*all_leaves_))


class _Unspecified:
    """Marks an argument not given (``None`` is a valid initializer or identity)."""


_UNSPECIFIED = _Unspecified()


def tree_reduce(function, tree, initializer=_UNSPECIFIED, is_leaf=None):
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _UNSPECIFIED:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(operation, tree, *, identity=_UNSPECIFIED, is_leaf=None):
    """Reduces the leaves pairwise in halves, JAX's bracketing: ``((a, b), (c, (d, e)))``."""
    def reduce(leaves):
        if len(leaves) == 1:
            return leaves[0]
        half = len(leaves) // 2
        return operation(reduce(leaves[:half]), reduce(leaves[half:]))
    leaves = tree_leaves(tree, is_leaf)
    if leaves:
        return reduce(leaves)
    if identity is _UNSPECIFIED:
        raise TypeError("Must specify identity for parallel reduction of empty sequence.")
    return identity


def tree_all(tree, *, is_leaf=None) -> bool:
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    flat = outer_treedef.flatten_up_to(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(flat[0])
    inner = [inner_treedef.flatten_up_to(x) for x in flat]
    transposed = [outer_treedef.unflatten(col) for col in zip(*inner)] if inner else []
    return inner_treedef.unflatten(transposed)


# Key paths ----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class DictKey:
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    key: int

    def __str__(self):
        return f"[<flat index {self.key}>]"


def keystr(keys, *, simple: bool = False, separator: str = "") -> str:
    if simple:
        return separator.join(str(getattr(k, "idx", getattr(k, "key", getattr(k, "name", k)))) for k in keys)
    return separator.join(map(str, keys))


def _keyed_children(x, node):
    if node.flatten_with_keys is not None:
        return node.flatten_with_keys(x)[0]
    children, _ = node.flatten(x)
    return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)]


def _flatten_with_path(x, path, out, is_leaf):
    node = None if (is_leaf is not None and is_leaf(x)) else _node_of(x)
    if node is None:
        out.append((path, x))
        return
    for key, child in _keyed_children(x, node):
        _flatten_with_path(child, path + (key,), out, is_leaf)


def tree_flatten_with_path(tree, is_leaf=None):
    out = []
    _flatten_with_path(tree, (), out, is_leaf)
    return out, tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree, is_leaf=None):
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f, tree, *rest, is_leaf=None):
    keyed, treedef = tree_flatten_with_path(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten(f(path, leaf, *xs) for (path, leaf), *xs in zip(keyed, *others))


# Registration --------------------------------------------------------------------------------


def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
    """Makes ``nodetype`` a pytree node: ``flatten_func(x) -> (children, aux)``,
    ``unflatten_func(aux, children) -> x``."""
    if nodetype in _registry:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    with_keys = None
    if flatten_with_keys_func is not None:
        with_keys = lambda x: flatten_with_keys_func(x)
    _registry[nodetype] = _NodeType(nodetype.__name__, lambda x: _as_pair(flatten_func(x)),
                                    lambda aux, c: unflatten_func(aux, c), with_keys)
    return nodetype


def _as_pair(result):
    children, aux = result
    return list(children), aux


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    def flatten(x):
        if flatten_func is not None:
            return flatten_func(x)
        keyed, aux = flatten_with_keys(x)
        return [c for _, c in keyed], aux
    return register_pytree_node(nodetype, flatten, unflatten_func, lambda x: _as_pair(flatten_with_keys(x)))


def register_pytree_node_class(cls):
    """Class decorator: ``cls.tree_flatten`` and ``cls.tree_unflatten`` define the node."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_static(cls):
    """Registers ``cls`` as a node with no children (its instances are structure, not data)."""
    register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


def register_pytree_with_keys_class(cls):
    """Class decorator: ``cls.tree_flatten_with_keys`` and ``cls.tree_unflatten`` (and, if defined,
    ``cls.tree_flatten``) define the node."""
    flatten_func = (lambda x: x.tree_flatten()) if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten, flatten_func)
    return cls


def register_dataclass(nodetype=None, data_fields=None, meta_fields=None, drop_fields=()):
    """Registers a dataclass: ``data_fields`` are children, ``meta_fields`` are static.

    Without field lists (e.g. used bare as a decorator), fields with ``metadata=dict(static=True)``
    are meta fields and the others data fields. As in JAX, the lists of a dataclass must name
    exactly its ``init`` fields less ``drop_fields``, so that unflattening can call the constructor.
    """
    if nodetype is None:
        return functools.partial(register_dataclass, data_fields=data_fields, meta_fields=meta_fields,
                                 drop_fields=drop_fields)
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError("register_dataclass: data_fields and meta_fields must both be specified when either "
                            f"is specified. Got {data_fields=} {meta_fields=}.")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required when nodetype is not "
                            f"a dataclass. Got {nodetype=}.")
        fields = dataclasses.fields(nodetype)
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        named = {*data_fields, *meta_fields}
        if named != init_fields:
            msg = "data_fields and meta_fields must include all dataclass fields with ``init=True`` and only them."
            if missing := init_fields - named:
                msg += f" Missing fields: {missing}. Add them to drop_fields to suppress this error."
            if unexpected := named - init_fields:
                msg += f" Unexpected fields: {unexpected}."
            raise ValueError(msg)
    if overlap := set(data_fields) & set(meta_fields):
        raise ValueError(f"data_fields and meta_fields must not overlap. Overlapping fields: {overlap}.")

    def flatten(x):
        return [getattr(x, f) for f in data_fields], tuple(getattr(x, f) for f in meta_fields)

    def unflatten(aux, children):
        return nodetype(**dict(zip(data_fields, children)), **dict(zip(meta_fields, aux)))

    def with_keys(x):
        return [(GetAttrKey(f), getattr(x, f)) for f in data_fields], tuple(getattr(x, f) for f in meta_fields)
    register_pytree_node(nodetype, flatten, unflatten, with_keys)
    return nodetype


class Partial(functools.partial):
    """A ``functools.partial`` whose bound arguments are pytree children (the function is static)."""

    def __new__(cls, func, *args, **kw):
        if isinstance(func, functools.partial):
            original = func
            func = _HashablePartial(original)
        return super().__new__(cls, func, *args, **kw)


class _HashablePartial:
    def __init__(self, p):
        self.p = p

    def __call__(self, *args, **kwargs):
        return self.p(*args, **kwargs)

    def __eq__(self, other):
        return isinstance(other, _HashablePartial) and self.p.func is other.p.func and \
            self.p.args == other.p.args and self.p.keywords == other.p.keywords

    def __hash__(self):
        return hash(self.p.func)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, xs: Partial(func, *xs[0], **xs[1]))
