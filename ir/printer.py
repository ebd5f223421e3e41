"""Prints jaxpr functions in JAX's text format, byte for byte.

Names are handed out the way JAX's printer does: in the order variables are
first printed, with a nested jit body borrowing its caller's names for its
inputs and outputs, and unused top-level results shown as ``_``. Bodies used
more than once (or nested ones over 10 equations) are printed once up front as
``let name = { ... } in``.
"""
from __future__ import annotations

import collections
import itertools

from . import pretty as pp
from .control_flow import BODY_PARAMS
from .gather_scatter import SCATTERS, AppliedJaxprKind, UpdateJaxprKind, update_jaxpr_view
from .jaxpr_view import Literal, Var, num_consts, rotate_call_operands, view
from .mlir import ir, module_body
from .ops import CALL_BODY_PARAMS, jax_name


def _alpha(n: int) -> str:
    s = ""
    while not s or n:
        n, i = divmod(n, 26)
        s = chr(97 + i) + s
    return s


class _Names:
    def __init__(self, reserved=()):
        self.reserved = set(reserved)
        self.names: dict = {}
        self._fresh = (n for i in itertools.count() if (n := _alpha(i)) not in self.reserved)

    def __getitem__(self, value):
        name = self.names.get(value)
        if name is None:
            name = self.names[value] = next(self._fresh)
        return name

    def suggest(self, for_vars, like_vars):
        if len(for_vars) != len(like_vars):
            return
        used = set()
        for f, l in zip(for_vars, like_vars):
            if isinstance(l, Var) and l not in used and isinstance(f, Var) and f not in self.names:
                used.add(l)
                self.names[f] = self[l]


class Printer:
    def __init__(self, module, top, nested=False):
        self.module = module
        self.symbols = _symbol_table(module)
        self.views = {}
        self._custom_views = {}  # id(eqn) -> the view of that custom call's body
        self._update_views = {}  # (combiner, dtype) -> a scatter's update_jaxpr
        self.top = self._view(top, nested=nested)
        self._constants = {id(self.top): (self.top, set(self.top.constvars))}  # jaxpr -> its concrete constvars
        self._inner_consts = {}  # id(pjit eqn) -> positions of the closed-over operands its body keeps inside
        self.shared = self._shared_bodies()
        self._drop_unused_constvars()
        self.names = _Names(self.shared.values())
        for v in _dropped(self.top):
            self.names.names[v] = "_"

    def _view(self, func, nested=False):
        key = ir.StringAttr(func.attributes["sym_name"]).value
        if key not in self.views:
            self.views[key] = view(func, nested=nested)
        return self.views[key]

    def _callee(self, eqn):
        """A jit body is one object wherever it is called (JAX prints it once, shared, if called twice);
        a custom_jvp/vjp body is traced anew at each call, so each call gets its own view."""
        func = self.symbols[eqn.params["callee"]]
        if eqn.primitive == "pjit":
            return self._view(func, nested=True)
        return view(func, nested=True, scope=id(eqn))

    def _shared_bodies(self):
        counts = collections.Counter()
        names = {}
        queue = collections.deque([self.top])
        while queue:
            jaxpr = queue.popleft()
            key = id(jaxpr)
            counts[key] += 1 + (jaxpr is not self.top and len(jaxpr.eqns) > 10)
            for eqn in jaxpr.eqns:
                update = self._update_jaxpr(eqn)
                if update is not None:  # one jaxpr per combiner and dtype, as JAX caches them
                    queue.append(update)
                    names.setdefault(id(update), ("jaxpr", update))
                for body in self._bodies(eqn):
                    queue.append(body)
                    names.setdefault(id(body), ("jaxpr", body))
                if eqn.primitive in CALL_BODY_PARAMS:
                    body = self._callee(eqn)
                    queue.append(body)
                    if eqn.primitive == "pjit":
                        self._close_constants(jaxpr, eqn, body)
                        names.setdefault(id(body), (eqn.params["name"].strip("<>"), body))
                    else:  # a long custom body is printed apart too, named as JAX names an anonymous one
                        self._custom_views[id(eqn)] = body
                        names.setdefault(id(body), ("jaxpr", body))
        shared, taken = {}, collections.Counter()
        for key, count in counts.items():
            if count == 1:
                continue
            name, body = names[key]
            if taken[name]:
                taken[name] += 1
                name += str(taken[name] - 1)
            taken[name] += 1
            shared[key] = name
        self._shared_views = {k: names[k][1] for k in shared}
        return shared

    def _close_constants(self, caller, eqn, body):
        """JAX keeps the constants a jit body closes over inside it (``{ lambda c:f32[3]; a:f32[3]. ...``) when it
        closes over nothing traced (else it passes them all as operands): closed-over operands that are all the
        caller's constants become the body's constvars (the first call of a body decides its shape)."""
        n = num_consts(body.func)
        constants = self._constants.get(id(caller), (None, ()))[1]
        closure = eqn.invars[len(eqn.invars) - n:] if n else []
        inner = set(range(n)) if closure and all(v in constants for v in closure) else set()
        self._inner_consts[id(eqn)] = inner
        if id(body) not in self._constants:
            closure = body.invars[:n]
            body.constvars = [v for j, v in enumerate(closure) if j in inner]
            body.invars = [v for j, v in enumerate(closure) if j not in inner] + body.invars[n:]
            self._constants[id(body)] = (body, set(body.constvars))

    def _drop_unused_constvars(self):
        """A constant only passed on into jit bodies (which keep it inside) is not one of the caller's."""
        for jaxpr, _ in self._constants.values():
            used = {v for v in jaxpr.outvars if isinstance(v, Var)}
            for eqn in jaxpr.eqns:
                inner = self._inner_consts.get(id(eqn), ())
                first_closure = len(eqn.invars) - num_consts(self._callee(eqn).func) if inner else len(eqn.invars)
                used.update(v for k, v in enumerate(eqn.invars)
                            if isinstance(v, Var) and (k < first_closure or k - first_closure not in inner))
            jaxpr.constvars = [v for v in jaxpr.constvars if v in used]

    def doc(self):
        docs = []
        for key, name in self.shared.items():
            docs.append(pp.concat([pp.text("let "), pp.text(name), pp.text(" = "),
                                   self._skeleton(self._shared_views[key]), pp.text(" in"), pp.brk()]))
        docs.append(self._jaxpr(self.top))
        return pp.concat(docs)

    def _var(self, v):
        if isinstance(v, Literal):
            return f"{pp_literal(v)}"
        return self.names[v]

    def _vars(self, vs, separator="", shapes=False):
        items = [pp.text(self._var(v) + (":" + v.aval.str_short() if shapes else "")) for v in vs]
        return pp.nest(2, pp.group(pp.join(pp.text(separator) + pp.group(pp.brk()), items)))

    def _jaxprs(self, jaxprs):
        """A tuple of bodies, as JAX's ``pp_jaxprs``."""
        return pp.group(pp.concat([pp.nest(2, pp.concat([pp.text("("), pp.brk(""),
                                                         pp.join(pp.brk(), [self._jaxpr(j) for j in jaxprs])])),
                                   pp.brk(""), pp.text(")")]))

    def _jaxpr(self, jaxpr):
        name = self.shared.get(id(jaxpr))
        return pp.text(name) if name else self._skeleton(jaxpr)

    def _skeleton(self, jaxpr):
        constvars = self._vars(jaxpr.constvars, shapes=True)
        invars = self._vars(jaxpr.invars, shapes=True)
        eqns = pp.join(pp.brk("; "), [self._eqn(e) for e in jaxpr.eqns])
        outvars = pp.concat([pp.text("("), self._vars(jaxpr.outvars, separator=","),
                             pp.text(")" if len(jaxpr.outvars) != 1 else ",)")])
        return pp.group(pp.nest(2, pp.concat([
            pp.text("{ "), pp.text("lambda "), constvars, pp.text("; "), invars,
            pp.text(". "), pp.text("let"), pp.nest(2, pp.brk() + eqns), pp.brk(),
            pp.text("in "), outvars])) + pp.text(" }"))

    def _eqn(self, eqn):
        params = [self._param(eqn, p, v) for p, v in eqn.opdef.printed_params(eqn.params)]
        invars = eqn.invars
        if eqn.primitive in CALL_BODY_PARAMS:
            body = self._view(self.symbols[eqn.params["callee"]], nested=True) if eqn.primitive == "pjit" \
                else self._custom_views[id(eqn)]
            if eqn.primitive == "pjit":
                n, inner = num_consts(body.func), self._inner_consts.get(id(eqn), ())
                closure = [v for j, v in enumerate(invars[len(invars) - n:]) if j not in inner] if n else []
                invars = closure + list(invars[:len(invars) - n])
            else:
                invars = rotate_call_operands(invars[:len(body.invars)], num_consts(body.func))
            if id(body) not in self.shared and eqn.primitive == "pjit":  # JAX names a custom call's body afresh
                self.names.suggest(body.invars, invars)
                self.names.suggest(body.outvars, eqn.outvars)
            n_consts = num_consts(body.func) if eqn.primitive != "pjit" else 0  # a custom call's closed-over values
            rest = sorted([(k, v, None) for k, v, _ in params if k not in ("name", "callee")] +
                          [(CALL_BODY_PARAMS[eqn.primitive], None, body)] +
                          ([("num_consts", str(n_consts), None)] if n_consts else []), key=lambda item: item[0])
            params = ([("name", eqn.params["name"], None)] if "name" in eqn.params else []) + rest
        lhs = self._vars(eqn.outvars, shapes=True)
        rhs = [pp.text(jax_name(eqn.opdef)), self._params(params), pp.text(" ") + self._vars(invars)]
        if eqn.outvars:
            return pp.concat([lhs, pp.text(" = "), *rhs])
        return pp.concat(rhs)

    def _bodies(self, eqn):
        """A control-flow op's bodies (cond's branches, while's cond and body, scan's body)."""
        names = []
        for param in BODY_PARAMS.get(eqn.primitive, ()):
            value = eqn.params[param]
            names.extend(value if isinstance(value, tuple) else (value,))
        return [self._view(self.symbols[name], nested=True) for name in names]

    def _update_jaxpr(self, eqn):
        """A scatter's ``update_jaxpr`` as a body (None for a plain scatter): one object per combiner, dtype and
        trace context (forward or transposing), as JAX's ``_reduction_jaxpr`` cache makes them, so that one used
        twice is printed once, shared."""
        if eqn.primitive not in SCATTERS or eqn.params["update_jaxpr"] is None:
            return None
        if SCATTERS[eqn.primitive] is None:  # scatter_apply's function
            return self._view(self.symbols[eqn.params["update_jaxpr"]], nested=True)
        key = (eqn.params["update_jaxpr"], eqn.invars[0].aval.dtype, bool(eqn.params["transposed"]))
        if key not in self._update_views:
            self._update_views[key] = update_jaxpr_view(*key[:2])
        return self._update_views[key]

    def _param(self, eqn, p, value):
        """A scatter's ``update_jaxpr`` and a control-flow op's bodies are bodies, whose names come after the
        equation's results, as in JAX."""
        if isinstance(p.kind, (UpdateJaxprKind, AppliedJaxprKind)) and value is not None:
            return (p.name, None, self._update_jaxpr(eqn))
        if hasattr(p.kind, "fmt_bodies"):  # bodies JAX prints with str(), each a closed jaxpr on its own
            return (p.name, p.kind.fmt_bodies([self._closed_text(v) for v in p.kind.with_missing(value)]), None)
        if p.name in BODY_PARAMS.get(eqn.primitive, ()):
            if isinstance(value, tuple):
                return (p.name, None, [self._view(self.symbols[v], nested=True) for v in value])
            return (p.name, None, self._view(self.symbols[value], nested=True))
        return (p.name, p.kind.fmt(value), None)

    def _closed_text(self, name):
        """``str(ClosedJaxpr)`` of a body: printed apart, with its own names (None: a missing body)."""
        if name is None:
            return None
        return pp.format(Printer(self.module, self.symbols[name], nested=True).doc(), 80)

    def _params(self, params):
        if not params:
            return pp.nil()
        items = [pp.text(f"{k}=") + (pp.text(v) if body is None else self._jaxprs(body) if isinstance(body, list)
                                     else self._jaxpr(body)) for k, v, body in params]
        return pp.group(pp.concat([pp.nest(2, pp.concat([pp.text("["), pp.brk(""), pp.join(pp.brk(), items)])),
                                   pp.brk(""), pp.text("]")]))


def pp_literal(lit: Literal) -> str:
    import numpy as np
    return f"{np.asarray(lit.value).item() if lit.shown is None else lit.shown}:{lit.aval.str_short()}"


def _dropped(jaxpr):
    used = {v for v in jaxpr.outvars if isinstance(v, Var)}
    dropped = []
    for eqn in reversed(jaxpr.eqns):
        dropped.extend(v for v in eqn.outvars if v not in used)
        used.update(v for v in eqn.invars if isinstance(v, Var))
    return dropped


def _symbol_table(module):
    table = {}
    for op in module_body(module).operations:
        if "sym_name" in op.attributes:
            table[ir.StringAttr(op.attributes["sym_name"]).value] = op
    return table


def jaxpr_text(module, func_name: str, width: int = 80) -> str:
    """The text JAX's ``str(make_jaxpr(f)(...))`` gives for ``func_name`` of ``module``."""
    top = _symbol_table(module)[func_name]
    return pp.format(Printer(module, top).doc(), width)
