"""``vm_fixups`` on hand-written VM modules: a branch that passes one ref to several block arguments gets a copy for
each repeat, and nothing else changes (the end-to-end case, odeint's while loop in a scan, is in test_ode.py)."""
from iree.compiler import ir

from irax.backends.vm_fixups import copy_repeated_branch_refs

_BUFFER = "!vm.ref<!hal.buffer>"
_MODULE = f"""
vm.module @m {{
  vm.func @f(%c: i32, %a: {_BUFFER}, %b: {_BUFFER}) -> {_BUFFER} {{
    vm.br ^bb1(%a, %a, %b, %c, %c : {_BUFFER}, {_BUFFER}, {_BUFFER}, i32, i32)
  ^bb1(%x: {_BUFFER}, %y: {_BUFFER}, %z: {_BUFFER}, %i: i32, %j: i32):
    vm.cond_br %i, ^bb2(%x, %z : {_BUFFER}, {_BUFFER}), ^bb3(%y, %y, %y : {_BUFFER}, {_BUFFER}, {_BUFFER})
  ^bb2(%p: {_BUFFER}, %q: {_BUFFER}):
    vm.return %p : {_BUFFER}
  ^bb3(%r: {_BUFFER}, %s: {_BUFFER}, %t: {_BUFFER}):
    vm.return %r : {_BUFFER}
  }}
}}
"""


def _fixed(text):
    module = ir.Module.parse(text, ir.Context())
    copies = copy_repeated_branch_refs(module.operation)
    assert module.operation.verify()
    return module, copies


def _branches(module):
    branches = []

    def collect(op):
        if op.successors:
            branches.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(collect)
    return branches


def test_each_repeated_ref_gets_its_own_copy():
    module, copies = _fixed(_MODULE)
    assert copies == 3  # one %a in vm.br, two %y in vm.cond_br
    for branch in _branches(module):
        refs = [v for v in branch.operands if str(v.type) == _BUFFER]
        assert len(set(refs)) == len(refs), branch
    br, cond_br = _branches(module)
    copy = br.operands[1].owner
    assert copy.name == "vm.select.ref"
    assert list(copy.operands)[1:] == [br.operands[0]] * 2
    assert copy.operands[0].owner.name == "vm.const.i32"
    assert [str(v.type) for v in br.operands] == [_BUFFER] * 3 + ["i32"] * 2
    assert br.operands[3] == br.operands[4]  # integers are copied by value: left alone


def test_branches_without_repeated_refs_are_unchanged():
    text = f"""
    vm.module @m {{
      vm.func @f(%c: i32, %a: {_BUFFER}, %b: {_BUFFER}) -> {_BUFFER} {{
        vm.cond_br %c, ^bb1(%a, %b, %c, %c : {_BUFFER}, {_BUFFER}, i32, i32), ^bb2
      ^bb1(%x: {_BUFFER}, %y: {_BUFFER}, %i: i32, %j: i32):
        vm.return %x : {_BUFFER}
      ^bb2:
        vm.return %b : {_BUFFER}
      }}
    }}
    """
    module, copies = _fixed(text)
    assert copies == 0
    assert str(module) == str(ir.Module.parse(text, ir.Context()))


def test_a_ref_passed_to_two_successors_is_copied_too():
    text = _MODULE.replace("^bb3(%y, %y, %y", "^bb3(%x, %y, %y")
    _, copies = _fixed(text)
    assert copies == 3  # %a in vm.br; %x (also passed to ^bb2) and the second %y in vm.cond_br


def test_compiles_through_the_fixup_leave_no_mlir_context_behind():
    """Each such compile used to leave IREE's session context alive (megabytes each, gigabytes over the suite)."""
    import numpy as np

    import irax
    from irax.backends import compile_worker, iree
    text = irax.jit(lambda x: irax.lax.fori_loop(0, 3, lambda i, c: c * 2.0, x)).lower(np.ones(2, np.float32)).as_text()
    assert compile_worker._CONTROL_FLOW.search(text)
    compile_worker._compile(text, iree.host_cpu_flags())
    live = ir.Context._get_live_count()
    for _ in range(3):
        assert compile_worker._compile(text, iree.host_cpu_flags())
    assert ir.Context._get_live_count() == live
