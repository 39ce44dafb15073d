#!/usr/bin/env python3
"""Drops the bulky debug instructions from a `glslc -g` SPIR-V module and
writes it as a C initializer (what `glslc -mfmt=c` writes), for
cmake/Shaders.cmake.

    spirv_strip_debug.py IN.spv OUT.spv OUT.inc [SPIRV_VAL]

Kept: every semantic instruction and the names (OpName, OpMemberName), which
runtime/spirv_reflect.* needs to name spec constants. Dropped: the embedded
source text and file names (OpSource, OpSourceContinued, OpSourceExtension,
OpString), line information (OpLine, OpNoLine) and OpModuleProcessed. Only
whole instructions go; the header's bound stays valid (ids may go unused).

With SPIRV_VAL (a spirv-val executable) OUT.spv is validated with
`--target-env vulkan1.1` before OUT.inc is written; OUT.inc is written last and
atomically, so a failed step leaves no OUT.inc for the build to take.
Exit 0: written; 1: not a SPIR-V module, or the filtered one is invalid.
"""
import os
import struct
import sys

MAGIC = 0x07230203
DROPPED = {
    2: "OpSourceContinued",
    3: "OpSource",
    4: "OpSourceExtension",
    7: "OpString",
    8: "OpLine",
    317: "OpNoLine",
    330: "OpModuleProcessed",
}
OP_EXT_INST_IMPORT = 11


def fail(msg):
    sys.stderr.write(f"spirv_strip_debug: {msg}\n")
    sys.exit(1)


def strip(data, path):
    if len(data) % 4 or len(data) < 20:
        fail(f"{path}: {len(data)} bytes is not a SPIR-V module")
    endian = "<" if struct.unpack_from("<I", data)[0] == MAGIC else ">"
    words = struct.unpack(f"{endian}{len(data) // 4}I", data)
    if words[0] != MAGIC:
        fail(f"{path}: no SPIR-V magic number")
    out = list(words[:5])
    i = 5
    while i < len(words):
        count, op = words[i] >> 16, words[i] & 0xFFFF
        if count == 0 or i + count > len(words):
            fail(f"{path}: instruction at word {i} (opcode {op}) has a bad word count {count}")
        if op == OP_EXT_INST_IMPORT:
            name = struct.pack(f"<{count - 2}I", *words[i + 2:i + count]).split(b"\0")[0]
            # NonSemantic debug info (glslc -gVS) refers to OpString ids: dropping them would break it.
            if name.startswith(b"NonSemantic."):
                fail(f"{path}: imports {name.decode()}, whose instructions use OpString: not stripped")
        if op not in DROPPED:
            out.extend(words[i:i + count])
        i += count
    return out


def write_atomically(path, text_or_bytes):
    tmp = f"{path}.tmp{os.getpid()}"
    mode = "wb" if isinstance(text_or_bytes, bytes) else "w"
    with open(tmp, mode) as f:
        f.write(text_or_bytes)
    os.replace(tmp, path)


def main(argv):
    if len(argv) not in (4, 5):
        sys.stderr.write("usage: spirv_strip_debug.py IN.spv OUT.spv OUT.inc [SPIRV_VAL]\n")
        return 2
    src, out_spv, out_inc = argv[1:4]
    with open(src, "rb") as f:
        words = strip(f.read(), src)
    write_atomically(out_spv, struct.pack(f"<{len(words)}I", *words))
    if len(argv) == 5:
        # os.spawnv, not subprocess: importing subprocess costs more than the rest of this script.
        rc = os.spawnv(os.P_WAIT, argv[4], [argv[4], "--target-env", "vulkan1.1", out_spv])
        if rc != 0:
            fail(f"{out_spv} (from {src}) fails spirv-val --target-env vulkan1.1 (exit {rc}; its messages above)")
    rows = [",".join(f"0x{w:08x}" for w in words[j:j + 8]) for j in range(0, len(words), 8)]
    write_atomically(out_inc, "{" + ",\n".join(rows) + "}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
