"""A process that compiles StableHLO with IREE's in-process API for its parent (``irax.backends.iree``).

IREE's compiler can crash on a valid module (a segfault, an LLVM abort): in a worker process the crash becomes a
``CompileError`` in the parent instead of killing it, while the worker, started once and reused, keeps the
in-process API's saving over starting ``iree-compile`` for each module. Messages on stdin and stdout are
length-prefixed pickles: ``(text, flags)`` in; out ``(True, vmfb)``, ``(False, None)`` when IREE rejects the module
(the parent asks ``iree-compile`` why) or ``(False, message)`` when the API raised.
"""
from __future__ import annotations

import pickle
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


def _compile(text: str, flags) -> bytes | None:
    from iree.compiler.api import Output, Session, Source
    session = Session()
    try:
        session.set_flags(*flags)
        invocation = session.invocation()
        source = Source.wrap_buffer(session, text.encode())
        if not (invocation.parse_source(source) and invocation.execute()):
            return None
        output = Output.open_membuffer()
        invocation.output_vm_bytecode(output)
        return bytes(output.map_memory())
    finally:
        session.close()


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
