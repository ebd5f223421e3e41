"""A process that compiles StableHLO with IREE's in-process API for its parent (``irax.backends.iree``).

IREE's compiler can crash on a valid module (a segfault, an LLVM abort): in a worker process the crash becomes a
``CompileError`` in the parent instead of killing it, while the worker, started once and reused, keeps the
in-process API's saving over starting ``iree-compile`` for each module. Messages on stdin and stdout are
length-prefixed pickles: ``(text, flags)`` in; out ``(True, vmfb)``, ``(False, None)`` when IREE rejects the module
(the parent asks ``iree-compile`` why) or ``(False, message)`` when the API raised.
"""
from __future__ import annotations

import pickle
import re
import struct
import sys

_LENGTH = struct.Struct("<Q")


def write_message(stream, value):
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def read_message(stream):
    """The next message, or ``None`` at the end of the stream (the other process is gone)."""
    header = stream.read(_LENGTH.size)
    if len(header) < _LENGTH.size:
        return None
    (size,) = _LENGTH.unpack(header)
    data = stream.read(size)
    return pickle.loads(data) if len(data) == size else None


# A module whose StableHLO has control flow compiles in two stages, to IREE's VM dialect and on from there, with
# ``vm_fixups`` rewriting the VM module in between (a bug of IREE's VM bytecode encoder, explained there); a module
# without control flow has no branches with block arguments, so it compiles in one stage.
_CONTROL_FLOW = re.compile(r"stablehlo\.(?:while|case|if)\b")


def _compile(text: str, flags) -> bytes | None:
    from iree.compiler.api import Output, Session, Source
    session = Session()
    try:
        session.set_flags(*flags)
        compiled = _compiled_through_vm_fixups if _CONTROL_FLOW.search(text) else _compiled_in_one_stage
        invocation = compiled(session, Source.wrap_buffer(session, text.encode()))
        if invocation is None:
            return None
        output = Output.open_membuffer()
        invocation.output_vm_bytecode(output)
        return bytes(output.map_memory())
    finally:
        session.close()


def _compiled_in_one_stage(session, source):
    """The invocation that compiled ``source``, or ``None`` when IREE rejected it."""
    invocation = session.invocation()
    return invocation if invocation.parse_source(source) and invocation.execute() else None


def _compiled_through_vm_fixups(session, source):
    """The invocation that compiled ``source`` to the VM stage and, after ``vm_fixups``, on from there; or ``None``
    when IREE rejected it.

    The VM module crosses over as MLIR bytecode into a context of our own: the session's context, once Python takes
    it over (``Session.context``), is never freed, and a worker compiling thousands of modules grew by gigabytes.
    """
    import io

    from iree.compiler import ir
    from iree.compiler.api import Output, Source

    from .vm_fixups import copy_repeated_branch_refs
    to_vm = session.invocation()
    _set_phase(to_vm, "ireeCompilerInvocationSetCompileToPhase", "vm")
    if not (to_vm.parse_source(source) and to_vm.execute()):
        return None
    output = Output.open_membuffer()
    to_vm.output_ir_bytecode(output)
    module = ir.Module.parse(bytes(output.map_memory()), ir.Context())
    copy_repeated_branch_refs(module.operation)
    rewritten = io.BytesIO()
    module.operation.write_bytecode(rewritten)
    from_vm = session.invocation()
    _set_phase(from_vm, "ireeCompilerInvocationSetCompileFromPhase", "vm")
    if not (from_vm.parse_source(Source.wrap_buffer(session, rewritten.getvalue())) and from_vm.execute()):
        return None
    return from_vm


def _set_phase(invocation, setter: str, phase: str):
    """Where the invocation's pipeline starts or stops (``--compile-from``, ``--compile-to`` of ``iree-compile``),
    through IREE's C API: its Python ``Invocation`` does not wrap these two calls, nor do session flags take them."""
    import ctypes
    from iree.compiler.api import ctypes_dl
    function = getattr(ctypes_dl._dylib, setter)
    function.restype, function.argtypes = None, [ctypes.c_void_p, ctypes.c_char_p]
    function(invocation._inv_p, phase.encode())


def main():
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    while (request := read_message(requests)) is not None:
        try:
            vmfb = _compile(*request)
        except Exception as e:  # noqa: BLE001 (reported to the parent, which raises it)
            write_message(replies, (False, f"{type(e).__name__}: {e}"))
            continue
        write_message(replies, (vmfb is not None, vmfb))


if __name__ == "__main__":
    main()
