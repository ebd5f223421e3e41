"""``checkpoint`` (``remat``), its policies and ``checkpoint_name``, as in ``jax.ad_checkpoint``.

Under a trace a checkpointed function becomes a ``jaxpr.checkpoint`` call (JAX's
``remat2``); reverse mode then saves only its inputs and what the policy allows,
recomputing the rest in the backward pass (``passes/remat.py``). Called eagerly
outside any transformation it simply runs.
"""
from __future__ import annotations

import functools
import types

from irax.passes import remat as _remat

from . import api, core, tree_util


class Policy:
    """A saving policy, known by the text JAX prints for it."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def save_only_these_names(*names):
    return Policy(_remat.save_only_these_names(names))


checkpoint_policies = types.SimpleNamespace(
    nothing_saveable=Policy(_remat.NOTHING_SAVEABLE),
    everything_saveable=Policy(_remat.EVERYTHING_SAVEABLE),
    dots_saveable=Policy(_remat.dots_saveable(False)),
    checkpoint_dots=Policy(_remat.dots_saveable(False)),
    dots_with_no_batch_dims_saveable=Policy(_remat.dots_saveable(True)),
    checkpoint_dots_with_no_batch_dims=Policy(_remat.dots_saveable(True)),
    save_only_these_names=save_only_these_names,
)


def _policy_text(policy) -> str:
    if policy is None:
        return "None"
    if isinstance(policy, Policy):
        return policy.text
    raise NotImplementedError(f"checkpoint policy {policy!r}: irax supports the policies of "
                              "irax.checkpoint_policies (nothing_saveable, everything_saveable, dots_saveable, "
                              "dots_with_no_batch_dims_saveable, save_only_these_names)")


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=()):
    """``fun`` whose intermediate values reverse mode recomputes rather than stores (``jax.checkpoint``)."""
    policy_text = _policy_text(policy)
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    per_module = {}

    @functools.wraps(fun)
    def remat_f(*args, **kwargs):
        trace = core.current_trace()
        if isinstance(trace, core.EvalTrace):
            return fun(*args, **kwargs)
        dyn_args, dyn_kwargs, statics = api._split_static(fun, args, kwargs, static_argnums, ())
        leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        key = (id(trace.module), in_tree, tuple(api.abstractify(x) for x in leaves), statics)
        entry = per_module.get(key)
        if entry is None or entry[0] is not trace.module:
            traced = api.trace(api._with_statics(fun, statics, len(args)), dyn_args, dyn_kwargs,
                               purpose="checkpoint", module=trace.module,
                               func_name=f"{api._symbol_name(fun)}_remat_{next(api._callee_names)}", private=True)
            entry = per_module[key] = (trace.module, traced)
        traced = entry[1]
        outs = trace.call(traced, list(leaves) + list(traced.closure), "checkpoint", differentiated=False,
                          policy=policy_text, prevent_cse=prevent_cse)
        return traced.unflatten(outs)

    return remat_f


remat = checkpoint


def checkpoint_name(x, name):
    """``x`` unchanged, named ``name`` for ``save_only_these_names``."""
    return tree_util.tree_map(lambda v: core.bind1("name", v, name=name), x)
