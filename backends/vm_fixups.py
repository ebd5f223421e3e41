"""A rewrite of the VM-stage module (``iree-compile --compile-to=vm``) that works around a bug of IREE's VM.

IREE 3.13's VM bytecode encoder mistranslates a branch (``vm.br``, ``vm.cond_br``) that passes the same
``!vm.ref`` value to several block arguments at the value's last use: it moves the ref into one argument's register
and leaves the other arguments null. The program then fails at run time with "OUT_OF_RANGE; indirect buffer
reference slot 0 is out range of the declared binding capacity of the command buffer 0" ("ref is null" under inline
execution). irax's loops make such branches, e.g. a while loop nested in a scan (``odeint`` carrying its step count
first). ``copy_repeated_branch_refs`` gives each repeat its own SSA value, which the encoder retains instead of
moving; the compile worker applies it between ``--compile-to=vm`` and ``--compile-from=vm``.
"""
from __future__ import annotations

from iree.compiler import ir


def copy_repeated_branch_refs(module: ir.Operation) -> int:
    """Makes every branch in ``module`` pass distinct ref values to its block arguments.

    Each repeat of a ref among a branch's operands becomes ``vm.select.ref %true, %ref, %ref``, a copy made just
    before the branch. A VM branch's only ref operands are the values it forwards to its successors' block arguments
    (its condition or index is an integer), so a branch of any kind (``vm.br``, ``vm.cond_br``, ``vm.br_table``) is
    found by its successors, and its operands are taken together: a ref passed to two successors is copied too,
    which costs one retain where the encoder would have been right.

    Args:
      module: the VM-stage module (or any operation holding VM functions), rewritten in place.

    Returns:
      The number of copies made.
    """
    branches = []

    def collect_branch(op):
        if op.successors:
            branches.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(collect_branch)
    with module.context:
        return sum(_copy_repeated_refs(branch) for branch in branches)


def _copy_repeated_refs(branch: ir.Operation) -> int:
    passed, true, copies = set(), None, 0
    for index, value in enumerate(branch.operands):
        if not str(value.type).startswith("!vm.ref<"):
            continue
        if value not in passed:
            passed.add(value)
            continue
        with ir.InsertionPoint(branch), branch.location:
            if true is None:
                i32 = ir.IntegerType.get_signless(32)
                true = ir.Operation.create("vm.const.i32", results=[i32],
                                           attributes={"value": ir.IntegerAttr.get(i32, 1)}).result
            copy = ir.Operation.create("vm.select.ref", results=[value.type], operands=[true, value, value])
        branch.operands[index] = copy.result
        copies += 1
    return copies
