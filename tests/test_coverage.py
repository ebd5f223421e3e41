"""Every op of the dialect has a row in every rule table (structural ops handled by the drivers)."""
from irax.backends import numpy_rules
from irax.ir.ops import OPS
from irax.passes import to_stablehlo

# Ops that the drivers handle themselves: the interpreter calls a pjit's callee and
# the tracer folds literals into operands.
STRUCTURAL = {"pjit"}


def test_every_op_has_a_numpy_rule():
    missing = sorted(set(OPS) - set(numpy_rules.RULES) - STRUCTURAL)
    assert not missing, f"ops without a NumPy reference rule: {missing}"


def test_every_op_has_a_stablehlo_lowering():
    missing = sorted(set(OPS) - set(to_stablehlo.LOWERINGS))
    assert not missing, f"ops without a StableHLO lowering rule: {missing}"


def test_rule_tables_name_only_declared_ops():
    assert set(numpy_rules.RULES) <= set(OPS)
    assert set(to_stablehlo.LOWERINGS) <= set(OPS)


def test_every_op_has_a_doc_and_declared_params():
    for name, opdef in OPS.items():
        assert opdef.doc, f"jaxpr.{name} has no description"
        assert len({p.name for p in opdef.params}) == len(opdef.params)
