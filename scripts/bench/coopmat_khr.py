#!/usr/bin/env python3
"""Rewrites a SPIR-V module that glslang 12 compiled from GL_NV_cooperative_matrix into
SPV_KHR_cooperative_matrix, optionally at another scope (issue #11, bench/DECISIONS.md#gemm-ceiling).

Why: Debian 12's glslang knows only the NV extension, while a cooperative matrix of Workgroup
scope (VK_NV_cooperative_matrix2's cooperativeMatrixWorkgroupScope) exists only for the KHR
type. The two extensions differ in a few operands, all checked against SPIRV-Headers'
spirv.core.grammar.json:

  Capability CooperativeMatrixNV (5357)   -> CooperativeMatrixKHR (6022)
  OpExtension "SPV_NV_cooperative_matrix" -> "SPV_KHR_cooperative_matrix"
  OpTypeCooperativeMatrixNV 5358 (Result, Component, Scope, Rows, Columns)
    -> OpTypeCooperativeMatrixKHR 4456 (Result, Component, Scope, Rows, Columns, Use)
       Use (MatrixA 0, MatrixB 1, Accumulator 2) is taken from how OpCooperativeMatrixMulAdd
       uses each type; a type used in two roles is an error (give A and B distinct shapes or
       distinct specialization constants).
  OpCooperativeMatrixLoadNV 5359 (Type, Result, Pointer, Stride, ColumnMajor, [Access])
    -> OpCooperativeMatrixLoadKHR 4457 (Type, Result, Pointer, MemoryLayout, Stride, [Access])
  OpCooperativeMatrixStoreNV 5360 (Pointer, Object, Stride, ColumnMajor, [Access])
    -> OpCooperativeMatrixStoreKHR 4458 (Pointer, Object, MemoryLayout, Stride, [Access])
       MemoryLayout RowMajor 0 / ColumnMajor 1 from the constant boolean ColumnMajor; the stride
       keeps its unit (elements of the pointer's array) in both extensions.
  OpCooperativeMatrixMulAddNV 5361 -> OpCooperativeMatrixMulAddKHR 4459 (same operands)
  OpCooperativeMatrixLengthNV 5362 -> OpCooperativeMatrixLengthKHR 4460 (same operands)

--scope workgroup|subgroup points every matrix type's Scope at a constant of that scope (2 / 3),
leaving the constant the shader used (possibly shared with other code) alone.

--tensor turns every column-major load into VK_NV_cooperative_matrix2's tensor-addressing load
(OpCooperativeMatrixLoadTensorNV 5367 on SPV_NV_tensor_addressing's tensor layout:
OpTypeTensorLayoutNV 5370, OpCreateTensorLayoutNV 5372, OpTensorLayoutSetDimensionNV 5373,
OpTensorLayoutSliceNV 5375): the marked load reads the matrix's rows x columns from a row-major
tensor that starts at its Pointer and whose rows are Stride elements long (glslang 12 has no
syntax for these loads).

  coopmat_khr.py IN.spv OUT.spv [--scope workgroup|subgroup]
  coopmat_khr.py --verify OUT.spv [--scope workgroup|subgroup]
    checks what SPIRV-Tools 2023.1 cannot (it predates the KHR opcodes): no NV opcode is left,
    every operand the rewrite added names an integer constant of the right value, each MulAdd's
    operands have the uses A, B, Accumulator, every id is below the bound.
"""
import argparse
import struct
import sys

MAGIC = 0x07230203
OP_NAME_EXTENSION, OP_CAPABILITY = 10, 17
OP_TYPE_BOOL, OP_TYPE_INT = 20, 21
OP_CONSTANT_TRUE, OP_CONSTANT_FALSE, OP_CONSTANT = 41, 42, 43
CAP_NV, CAP_KHR = 5357, 6022
NV_TYPE, NV_LOAD, NV_STORE, NV_MULADD, NV_LENGTH = 5358, 5359, 5360, 5361, 5362
KHR_TYPE, KHR_LOAD, KHR_STORE, KHR_MULADD, KHR_LENGTH = 4456, 4457, 4458, 4459, 4460
EXT_NV, EXT_KHR = "SPV_NV_cooperative_matrix", "SPV_KHR_cooperative_matrix"
SCOPES = {"workgroup": 2, "subgroup": 3}
# --tensor: SPV_NV_tensor_addressing and SPV_NV_cooperative_matrix2's tensor-addressing load.
CAP_COOPMAT_TENSOR_ADDRESSING, CAP_TENSOR_ADDRESSING = 5433, 5439
EXT_TENSOR = ("SPV_NV_cooperative_matrix2", "SPV_NV_tensor_addressing")
OP_UNDEF, OP_LOAD_TENSOR, OP_TYPE_TENSOR_LAYOUT = 1, 5367, 5370
OP_CREATE_TENSOR_LAYOUT, OP_TENSOR_LAYOUT_SET_DIMENSION, OP_TENSOR_LAYOUT_SLICE = 5372, 5373, 5375
USE_A, USE_B, USE_ACC = 0, 1, 2


class RewriteError(Exception):
    pass


def parse(words):
    if len(words) < 5 or words[0] != MAGIC:
        raise RewriteError("not a little-endian SPIR-V module")
    header, body, i = list(words[:5]), [], 5
    while i < len(words):
        count, op = words[i] >> 16, words[i] & 0xFFFF
        if count == 0 or i + count > len(words):
            raise RewriteError(f"truncated instruction (opcode {op}) at word {i}")
        body.append([op] + list(words[i + 1:i + count]))
        i += count
    return header, body


def encode_string(text):
    data = text.encode() + b"\0"
    data += b"\0" * (-len(data) % 4)
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def decode_string(operands):
    data = struct.pack(f"<{len(operands)}I", *operands)
    return data[:data.index(b"\0")].decode()


def serialize(header, body):
    out = list(header)
    for ins in body:
        out.append((len(ins) << 16) | ins[0])
        out.extend(ins[1:])
    return struct.pack(f"<{len(out)}I", *out)


# Instructions that can produce a cooperative-matrix value, all (Result Type, Result, ...):
# enough to type every MulAdd operand of a compute shader (numbers from the core grammar).
VALUE_OPCODES = {
    "OpUndef": 1, "OpCompositeConstruct": 80, "OpCompositeExtract": 81, "OpCopyObject": 83,
    "OpConstantComposite": 44, "OpConstantNull": 46, "OpSpecConstantComposite": 51,
    "OpFunctionParameter": 55, "OpFunctionCall": 57, "OpLoad": 61, "OpFConvert": 115,
    "OpFNegate": 127, "OpFAdd": 129, "OpFSub": 131, "OpFMul": 133, "OpFDiv": 136,
    "OpMatrixTimesScalar": 143, "OpSelect": 169, "OpPhi": 245,
    "OpCooperativeMatrixLoadNV": NV_LOAD, "OpCooperativeMatrixMulAddNV": NV_MULADD,
    "OpCooperativeMatrixLoadKHR": KHR_LOAD, "OpCooperativeMatrixMulAddKHR": KHR_MULADD,
}


def result_type_of(body):
    """value id -> its type id, for the instructions in VALUE_OPCODES."""
    opcodes = set(VALUE_OPCODES.values())
    return {ins[2]: ins[1] for ins in body if ins[0] in opcodes and len(ins) >= 3}


def constants(body):
    """id -> (type id, value) of every 32-bit OpConstant, and the bool constants."""
    ints = {}
    for ins in body:
        if ins[0] == OP_TYPE_INT and ins[2] == 32:
            ints[ins[1]] = ins[3]
    consts, bools = {}, {}
    for ins in body:
        if ins[0] == OP_CONSTANT and ins[1] in ints and len(ins) == 4:
            consts[ins[2]] = (ins[1], ins[3])
        elif ins[0] in (OP_CONSTANT_TRUE, OP_CONSTANT_FALSE):
            bools[ins[2]] = ins[0] == OP_CONSTANT_TRUE
    return ints, consts, bools


def rewrite(words, scope=None, tensor=False):
    header, body = parse(words)
    ints, consts, bools = constants(body)
    typeof = result_type_of(body)
    nv_types = {ins[1]: ins for ins in body if ins[0] == NV_TYPE}
    if not nv_types:
        raise RewriteError("no OpTypeCooperativeMatrixNV in the module")

    uses = {}

    def assign(type_id, use, where):
        if type_id not in nv_types:
            raise RewriteError(f"{where}: operand type %{type_id} is not a cooperative matrix")
        if uses.setdefault(type_id, use) != use:
            raise RewriteError(f"cooperative matrix type %{type_id} is used as both "
                               f"{['A', 'B', 'Accumulator'][uses[type_id]]} and "
                               f"{['A', 'B', 'Accumulator'][use]}: give the operands distinct "
                               "shapes or specialization constants")

    for ins in body:
        if ins[0] == NV_MULADD:
            _, rtype, res, a, b, c = ins
            for value in (a, b, c):
                if value not in typeof:
                    raise RewriteError(f"OpCooperativeMatrixMulAddNV %{res}: no type known for "
                                       f"operand %{value}")
            assign(typeof[a], USE_A, f"MulAdd %{res} A")
            assign(typeof[b], USE_B, f"MulAdd %{res} B")
            assign(typeof[c], USE_ACC, f"MulAdd %{res} C")
            assign(rtype, USE_ACC, f"MulAdd %{res} result")
    for type_id in nv_types:
        uses.setdefault(type_id, USE_ACC)  # never multiplied: only loaded/stored

    # The integer type of the new constants: the one the NV scope constants already use.
    scope_const = next(iter(nv_types.values()))[3]
    if scope_const not in consts:
        raise RewriteError(f"cooperative matrix scope %{scope_const} is not an integer constant")
    int_type = consts[scope_const][0]
    new_consts = {}  # value -> id, added after the integer type

    # An existing constant is reused only where it is declared before the first matrix type.
    first_type = next(i for i, ins in enumerate(body) if ins[0] == NV_TYPE)
    early = {ins[2] for ins in body[:first_type] if ins[0] == OP_CONSTANT}

    def const_id(value):
        for cid, (tid, v) in consts.items():
            if tid == int_type and v == value and cid in early:
                return cid
        if value not in new_consts:
            new_consts[value] = header[3]
            header[3] += 1
        return new_consts[value]

    def layout_of(bool_id, where):
        if bool_id not in bools:
            raise RewriteError(f"{where}: ColumnMajor %{bool_id} is not a constant boolean")
        return const_id(1 if bools[bool_id] else 0)

    def new_id():
        header[3] += 1
        return header[3] - 1

    layout_type = new_id() if tensor else None
    out = []
    for ins in body:
        op = ins[0]
        if op == OP_CAPABILITY and ins[1] == CAP_NV:
            ins = [OP_CAPABILITY, CAP_KHR]
            if tensor:
                out += [[OP_CAPABILITY, CAP_TENSOR_ADDRESSING],
                        [OP_CAPABILITY, CAP_COOPMAT_TENSOR_ADDRESSING]]
        elif op == OP_NAME_EXTENSION and decode_string(ins[1:]) == EXT_NV:
            ins = [OP_NAME_EXTENSION] + encode_string(EXT_KHR)
            if tensor:
                out += [[OP_NAME_EXTENSION] + encode_string(e) for e in EXT_TENSOR]
        elif op == NV_LOAD and tensor and bools.get(ins[5]):
            # --tensor: a column-major NV load marks a tensor-addressing load of the matrix's
            # rows x columns from a row-major tensor starting at Pointer whose rows are Stride
            # elements (not vectors) long: a layout of exactly that block, sliced whole.
            rtype, res, ptr, row_length = ins[1:5]
            rows, cols = nv_types[rtype][4], nv_types[rtype][5]
            l0, l1, l2, undef = new_id(), new_id(), new_id(), new_id()
            zero = const_id(0)
            out += [[OP_CREATE_TENSOR_LAYOUT, layout_type, l0],
                    [OP_TENSOR_LAYOUT_SET_DIMENSION, layout_type, l1, l0, rows, row_length],
                    [OP_TENSOR_LAYOUT_SLICE, layout_type, l2, l1, zero, rows, zero, cols],
                    [OP_UNDEF, rtype, undef]]
            ins = [OP_LOAD_TENSOR, rtype, res, ptr, undef, l2, 0, 0]  # MemoryAccess, operands: None
        elif op == NV_TYPE:
            _, res, comp, sc, rows, cols = ins
            if scope is not None:
                sc = const_id(SCOPES[scope])
            ins = [KHR_TYPE, res, comp, sc, rows, cols, const_id(uses[res])]
        elif op == NV_LOAD:
            rtype, res, ptr, stride, colmajor, *access = ins[1:]
            ins = [KHR_LOAD, rtype, res, ptr, layout_of(colmajor, f"load %{res}"), stride] + access
        elif op == NV_STORE:
            ptr, obj, stride, colmajor, *access = ins[1:]
            ins = [KHR_STORE, ptr, obj, layout_of(colmajor, f"store of %{obj}"), stride] + access
        elif op == NV_MULADD:
            ins = [KHR_MULADD] + ins[1:]
        elif op == NV_LENGTH:
            ins = [KHR_LENGTH] + ins[1:]
        out.append(ins)
    # New constants go right after their integer type, before any matrix type uses them.
    at = next(i for i, ins in enumerate(out) if ins[0] == OP_TYPE_INT and ins[1] == int_type)
    if tensor:  # two dimensions, ClampMode Undefined; before the first matrix type
        layout = [OP_TYPE_TENSOR_LAYOUT, layout_type, const_id(2), const_id(0)]
        out.insert(next(i for i, ins in enumerate(out) if ins[0] == KHR_TYPE), layout)
    for value, cid in sorted(new_consts.items(), reverse=True):
        out.insert(at + 1, [OP_CONSTANT, int_type, cid, value])
    return serialize(header, out)


def verify(words, scope=None):
    header, body = parse(words)
    bound = header[3]
    _, consts, _ = constants(body)
    typeof = result_type_of(body)
    problems = []
    defined = set()
    for ins in body:
        if ins[0] in (NV_TYPE, NV_LOAD, NV_STORE, NV_MULADD, NV_LENGTH):
            problems.append(f"NV opcode {ins[0]} left")
        if ins[0] == OP_CAPABILITY and ins[1] == CAP_NV:
            problems.append("capability CooperativeMatrixNV left")
        if ins[0] == OP_NAME_EXTENSION and decode_string(ins[1:]) == EXT_NV:
            problems.append(f"extension {EXT_NV} left")
    caps = {ins[1] for ins in body if ins[0] == OP_CAPABILITY}
    exts = {decode_string(ins[1:]) for ins in body if ins[0] == OP_NAME_EXTENSION}
    if CAP_KHR not in caps or EXT_KHR not in exts:
        problems.append("capability CooperativeMatrixKHR or its extension missing")
    types, declared = {}, set()
    for ins in body:
        if ins[0] == OP_CONSTANT:
            declared.add(ins[2])
        if ins[0] == KHR_TYPE:
            if len(ins) != 7:
                problems.append(f"type %{ins[1]}: {len(ins) - 1} operands, 6 expected")
                continue
            res, _, sc, _, _, use = ins[1:]
            types[res] = use
            if not {sc, use} <= declared:
                problems.append(f"type %{res}: scope or use constant declared after the type")
            for what, cid, allowed in (("scope", sc, (2, 3)), ("use", use, (0, 1, 2))):
                if cid not in consts or consts[cid][1] not in allowed:
                    problems.append(f"type %{res}: {what} %{cid} is not a constant in {allowed}")
            if scope is not None and consts.get(sc, (0, -1))[1] != SCOPES[scope]:
                problems.append(f"type %{res}: scope is not {scope}")
            if use in consts:
                types[res] = consts[use][1]
        elif ins[0] == KHR_LOAD and consts.get(ins[4], (0, -1))[1] not in (0, 1):
            problems.append(f"load %{ins[2]}: layout %{ins[4]} is not RowMajor/ColumnMajor")
        elif ins[0] == KHR_STORE and consts.get(ins[3], (0, -1))[1] not in (0, 1):
            problems.append(f"store of %{ins[2]}: layout %{ins[3]} is not RowMajor/ColumnMajor")
        elif ins[0] == KHR_MULADD:
            _, rtype, res, a, b, c = ins[:6]
            got = [types.get(typeof.get(x)) for x in (a, b, c)] + [types.get(rtype)]
            if got != [USE_A, USE_B, USE_ACC, USE_ACC]:
                problems.append(f"MulAdd %{res}: operand uses {got}, expected [0, 1, 2, 2]")
        if ins[0] in (OP_CONSTANT, KHR_TYPE, OP_TYPE_INT):
            defined.add(ins[2] if ins[0] == OP_CONSTANT else ins[1])
    for ins in body:
        if ins[0] in (OP_CONSTANT, KHR_TYPE, KHR_LOAD, KHR_MULADD) and max(ins[1:3]) >= bound:
            problems.append(f"id beyond the bound {bound} in opcode {ins[0]}")
    if not types:
        problems.append("no OpTypeCooperativeMatrixKHR")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input")
    parser.add_argument("output", nargs="?")
    parser.add_argument("--scope", choices=sorted(SCOPES))
    parser.add_argument("--verify", action="store_true")
    parser.add_argument("--tensor", action="store_true",
                        help="column-major loads become tensor-addressing loads (see rewrite)")
    args = parser.parse_args()
    with open(args.input, "rb") as f:
        data = f.read()
    if len(data) % 4:
        sys.exit(f"{args.input}: size {len(data)} is not a multiple of 4")
    words = struct.unpack(f"<{len(data) // 4}I", data)
    try:
        if args.verify:
            problems = verify(words, args.scope)
            for p in problems:
                print(f"{args.input}: {p}", file=sys.stderr)
            sys.exit(1 if problems else 0)
        if not args.output:
            sys.exit("an output path is needed")
        out = rewrite(words, args.scope, args.tensor)
        problems = verify(struct.unpack(f"<{len(out) // 4}I", out), args.scope)
        if problems:
            raise RewriteError("; ".join(problems))
    except RewriteError as e:
        sys.exit(f"{args.input}: {e}")
    with open(args.output, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
