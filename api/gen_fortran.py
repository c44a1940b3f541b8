#!/usr/bin/env python3
"""Generate Weft's Fortran bindings from the same API description as the C ones (api/gen.py).

Outputs (committed; `gen_fortran.py --check` fails when regenerating would change one):
  - fortran/mpif.h: the constants (from api/abi_constants.txt) and the sentinel common blocks,
    written so that it is valid fixed-form and free-form source (statements from column 7,
    no line over 72 columns, no continuations);
  - fortran/mpi_f77.c: one C function per Fortran-callable MPI procedure (gfortran's names,
    lower case and a trailing underscore), defined as the PMPI_ procedure (pmpi_send_) with
    the MPI_ name a weak alias (for profiling libraries), on top of the standard-ABI C library: handles
    travel as Fortran INTEGERs converted with MPI_X_fromint/MPI_X_toint, strings carry
    their hidden lengths, the sentinels MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE,
    MPI_STATUSES_IGNORE, MPI_ERRCODES_IGNORE, MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are
    recognised by address (fortran/runtime.c holds them).
The mpif.h / `use mpi` binding: `use mpi` (fortran/mpi.f90) includes mpif.h and adds the
MPI_Sizeof generic. gfortran's LOGICAL is a 4-byte 1/0, the same bits as a C int flag, so LOGICAL
arguments pass through unchanged (MPI_Abi_get_fortran_booleans answers 1 and 0).

A procedure is bound when pympistandard marks it expressible in Fortran 90, the C library
exports it, and each of its parameters has a rule below; the others (callbacks, argv arrays,
attribute values) are listed in UNBOUND at the end of mpi_f77.c.
"""
import argparse
import difflib
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen  # noqa: E402  (the C generator: the same parsed API description)

ROOT = gen.ROOT
OUT = ROOT / "fortran"

# Handle types and the prefix of their int conversions (MPI_<prefix>_toint/_fromint).
HANDLES = {
    "MPI_Comm": "Comm", "MPI_Datatype": "Type", "MPI_Errhandler": "Errhandler",
    "MPI_File": "File", "MPI_Group": "Group", "MPI_Info": "Info", "MPI_Message": "Message",
    "MPI_Op": "Op", "MPI_Request": "Request", "MPI_Session": "Session", "MPI_Win": "Win",
}
NULLS = {h: f"MPI_{h.upper()}_NULL" for h in HANDLES.values()}
NULLS["Type"] = "MPI_DATATYPE_NULL"
WIDE = {"MPI_Aint", "MPI_Offset", "MPI_Count"}
# Length arguments that count a string's NUL in C and not in Fortran (IN: the room, OUT: the
# value's length).
BUFLEN = {"MPI_Info_get_string": "buflen", "MPI_Session_get_nth_pset": "pset_len"}
# Procedures bound by hand in fortran/runtime.c (their C forms take argc/argv, the Fortran ones
# do not; MPI_Comm_spawn's argv is a blank-terminated string array, MPI_Comm_spawn_multiple's
# a two-dimensional one; the status conversions are the Fortran library's own, not the C
# library's).
BY_HAND = {"MPI_Init", "MPI_Init_thread", "MPI_Info_create_env", "MPI_Comm_spawn",
           "MPI_Comm_spawn_multiple", "MPI_Status_f2f08", "MPI_Status_f082f"}
STATUS_F08 = ["MPI_Status_f2f08", "MPI_Status_f082f"]
# Procedures taking user callbacks, bound by hand in fortran/callbacks.c (C trampolines call the
# Fortran procedures). Their mpi_f08 specifics are external procedures, not BIND(C): a BIND(C)
# interface cannot take a Fortran procedure argument.
CALLBACK_PROCS = {
    "MPI_Op_create", "MPI_Comm_create_keyval", "MPI_Type_create_keyval", "MPI_Win_create_keyval",
    "MPI_Keyval_create", "MPI_Comm_create_errhandler", "MPI_Win_create_errhandler",
    "MPI_File_create_errhandler", "MPI_Session_create_errhandler", "MPI_Grequest_start",
    "MPI_Register_datarep",
}
# The predefined callbacks, Fortran procedures of fortran/callbacks.c, and their interfaces.
PREDEFINED_CALLBACKS = {
    "MPI_COMM_NULL_COPY_FN": "MPI_Comm_copy_attr_function", "MPI_COMM_DUP_FN": "MPI_Comm_copy_attr_function",
    "MPI_COMM_NULL_DELETE_FN": "MPI_Comm_delete_attr_function",
    "MPI_TYPE_NULL_COPY_FN": "MPI_Type_copy_attr_function", "MPI_TYPE_DUP_FN": "MPI_Type_copy_attr_function",
    "MPI_TYPE_NULL_DELETE_FN": "MPI_Type_delete_attr_function",
    "MPI_WIN_NULL_COPY_FN": "MPI_Win_copy_attr_function", "MPI_WIN_DUP_FN": "MPI_Win_copy_attr_function",
    "MPI_WIN_NULL_DELETE_FN": "MPI_Win_delete_attr_function",
    "MPI_CONVERSION_FN_NULL": "MPI_Datarep_conversion_function",
    # MPI-1 (MPI_KEYVAL_CREATE; mpif.h only)
    "MPI_NULL_COPY_FN": None, "MPI_DUP_FN": None, "MPI_NULL_DELETE_FN": None,
}
# Functions that are not error-code subroutines.
FUNCTIONS = {"MPI_Wtime": "double", "MPI_Wtick": "double", "MPI_Aint_add": "MPI_Aint",
             "MPI_Aint_diff": "MPI_Aint"}


class Unbindable(Exception):
    pass


def array_length(fname, param, length, cparams):
    """C expression for the element count of a handle array."""
    if length in cparams:
        return f"(*{length})"
    if length == "*" and "alltoallw" in fname.lower():
        kind = "neighbor" if "neighbor" in fname.lower() else "all"
        return f'weft_f_peer_count(comm_c, "{kind}")'
    raise Unbindable(f"{param}: array length {length!r}")


def bind(f, proc, f08=False):
    """The C glue for one procedure: (parameters, hidden string lengths, statements before the
    call, call arguments, statements after). f08: buffers and strings arrive as Fortran 2018
    descriptors (CFI_cdesc_t). Raises Unbindable."""
    ps = proc._parseset
    meta = {p["name"]: p for p in ps["parameters"]}
    cparams = {p.name for p in f.params}
    args, pre, call, post, hidden = [], [], [], [], []
    for p in f.params:
        m = meta.get(p.name, {})
        kind, direction = m.get("kind", ""), m.get("param_direction", "in")
        n = p.name
        if p.base.endswith("_function") or p.base.endswith("_function_c"):
            raise Unbindable(f"{n}: callback")
        if p.base == "char":
            if p.pointers > 1 or (p.pointers and p.array):
                raise Unbindable(f"{n}: string array")
            if f08:
                args.append(f"CFI_cdesc_t *{n}_d")
                pre.append(f"char *{n} = {n}_d->base_addr;")
                pre.append(f"size_t {n}_len = {n}_d->elem_len;")
            else:
                args.append(f"char *{n}")
                hidden.append(f"size_t {n}_len")
            if p.const:
                pre.append(f"char *{n}_c = weft_f_cstring({n}, {n}_len);")
                call.append(f"{n}_c")
                post.append(f"free({n}_c);")
            else:
                pre.append(f"char *{n}_c = weft_f_string_buffer({n}_len);")
                call.append(f"{n}_c")
                # A value not found (flag false), or asked for with no room, leaves the
                # Fortran string as it was.
                cond = (["*flag"] if "flag" in cparams else []) + \
                    ([f"{BUFLEN[f.name]}_in > 0"] if f.name in BUFLEN else [])
                if cond:
                    post.append(f"if (rc == MPI_SUCCESS && {' && '.join(cond)}) weft_f_string_out({n}_c, {n}, {n}_len); else free({n}_c);")
                else:
                    post.append(f"weft_f_string_out({n}_c, {n}, {n}_len);")
            continue
        if p.base in HANDLES:
            h = HANDLES[p.base]
            args.append(f"MPI_Fint *{n}")
            if p.array:
                ln = array_length(f.name, n, m.get("length"), cparams)
                pre.append(f"int {n}_n = {ln};")
                pre.append(f"{p.base} *{n}_c = weft_f_alloc({n}_n, sizeof({p.base}));")
                if direction != "out":
                    pre.append(f"for (int i = 0; i < {n}_n; i++) {n}_c[i] = MPI_{h}_fromint({n}[i]);")
                call.append(f"{n}_c")
                if direction != "in":
                    post.append(f"for (int i = 0; i < {n}_n; i++) {n}[i] = MPI_{h}_toint({n}_c[i]);")
                post.append(f"free({n}_c);")
            elif p.pointers == 0:
                pre.append(f"{p.base} {n}_c = MPI_{h}_fromint(*{n});")
                call.append(f"{n}_c")
            elif direction == "out":
                pre.append(f"{p.base} {n}_c = {NULLS[h]};")
                call.append(f"&{n}_c")
                post.append(f"*{n} = MPI_{h}_toint({n}_c);")
            else:
                pre.append(f"{p.base} {n}_c = MPI_{h}_fromint(*{n});")
                call.append(f"&{n}_c")
                if direction != "in":
                    post.append(f"*{n} = MPI_{h}_toint({n}_c);")
            continue
        if p.base == "MPI_Status":
            args.append(f"MPI_Fint *{n}")
            call.append(f"weft_f_status{'es' if p.array else ''}({n})")
            continue
        if p.base == "void":
            if p.pointers != 1:
                raise Unbindable(f"{n}: void pointer level {p.pointers}")
            if kind in ("EXTRA_STATE", "EXTRA_STATE2"):
                raise Unbindable(f"{n}: extra state")
            if kind.startswith("ATTRIBUTE_VAL"):
                # INTEGER(KIND=MPI_ADDRESS_KIND), or INTEGER in the MPI-1 MPI_ATTR_PUT/GET.
                ftype = "MPI_Fint" if kind.endswith("_10") else "MPI_Aint"
                args.append(f"{ftype} *{n}")
                if direction == "in":
                    # A cell holding the value: C reads it through the attribute's pointer.
                    pre.append(f"void *{n}_c = weft_f_attr_cell((MPI_Aint)*{n});")
                    call.append(f"{n}_c")
                    post.append(f"if (rc != MPI_SUCCESS) weft_f_attr_cell_free({n}_c);")
                else:
                    keyval = next(q["name"] for q in ps["parameters"] if q["kind"] == "KEYVAL")
                    obj = f.name.split("_")[1].lower()
                    pre.append(f"void *{n}_c = NULL;")
                    call.append(f"&{n}_c")
                    post.append(f'if (rc == MPI_SUCCESS && *flag) *{n} = ({ftype})weft_f_attr_get(*{keyval}, {n}_c, "{obj}");')
                continue
            if kind == "BUFFER" and f08:
                args.append(f"CFI_cdesc_t *{n}")
                pre.append(f"void *{n}_c = weft_f08_buffer({n}, &noncontiguous);")
                call.append(f"{n}_c")
            else:
                args.append(f"{'const ' if p.const else ''}void *{n}")
                call.append(f"weft_f_buffer({n})" if kind == "BUFFER" else n)
            continue
        if BUFLEN.get(f.name) == n:
            # Fortran counts the characters of the value; C counts its NUL too.
            args.append(f"MPI_Fint *{n}")
            pre.append(f"int {n}_in = *{n}, {n}_c = {n}_in > 0 ? {n}_in + 1 : 0;")
            call.append(f"&{n}_c")
            post.append(f"if (rc == MPI_SUCCESS) *{n} = {n}_c > 0 ? {n}_c - 1 : 0;")
            continue
        if p.base == "int" or p.base in WIDE:
            ctype = "MPI_Fint" if p.base == "int" else p.base
            args.append(f"{'const ' if p.const and (p.pointers or p.array) else ''}{ctype} *{n}")
            if p.pointers == 0 and not p.array:
                call.append(f"*{n}")
            elif kind in ("WEIGHT", "ERROR_CODE") and p.array:
                call.append(f"weft_f_ints({n})")
            elif kind == "INDEX" and direction == "out" and m.get("length") != "maxindex":
                # Fortran indices count from 1.
                call.append(n)
                count = "outcount" if p.array else None
                post.append(f"weft_f_indices(rc, {'*' + count if count else '1'}, {n});")
            elif p.inner_dims:
                # RANGES(3, N) in Fortran is int ranges[N][3] in C.
                dims = "".join(f"[{d}]" for d in p.inner_dims)
                call.append(f"(int (*){dims}){n}")
            else:
                call.append(n)
            continue
        if p.base in ("MPI_F08_status", "MPI_Fint"):
            raise Unbindable(f"{n}: status conversion")
        raise Unbindable(f"{n}: type {p.text}")
    return args, hidden, pre, call, post


def c_name(name, f08):
    return f"weft_f08_{name.lower()}" if f08 else name.lower() + "_"


def section_pair(buf):
    """The (count, datatype) parameters describing a choice buffer, by the standard's names."""
    if buf in ("buf", "buffer"):
        return "count", "datatype"
    if buf in ("sendbuf", "recvbuf"):
        return buf[:4] + "count", buf[:4] + "type"
    if buf.endswith("_addr"):
        return buf[:-5] + "_count", buf[:-5] + "_datatype"
    return None


def sections(f, pre, call, post):
    """mpi_f08: a buffer with a (count, datatype) of its own may be a non-contiguous array
    section: weft_f08_section describes it with a datatype (count 1) made for the call."""
    bufs = [s.split(" = ")[0].split()[-1].lstrip("*")[:-2] for s in pre if "weft_f08_buffer(" in s]
    pairs = {b: section_pair(b) for b in bufs}
    for b, pair in pairs.items():
        if pair is None or list(pairs.values()).count(pair) > 1:
            continue
        cnt, dt = pair
        if f"*{cnt}" not in call or f"{dt}_c" not in call:
            continue
        pre.remove(f"void *{b}_c = weft_f08_buffer({b}, &noncontiguous);")
        pre += [f"MPI_Count {cnt}_v = *{cnt};",
                f"MPI_Datatype {dt}_v = {dt}_c, {b}_made = MPI_DATATYPE_NULL;",
                f"void *{b}_c = weft_f08_section({b}, &{cnt}_v, &{dt}_v, &{b}_made, &noncontiguous);"]
        call[call.index(f"*{cnt}")] = f"{cnt}_v"
        call[call.index(f"{dt}_c")] = f"{dt}_v"
        post.insert(0, f"if ({b}_made != MPI_DATATYPE_NULL) MPI_Type_free(&{b}_made);")


def glue(f, proc, f08=False):
    args, hidden, pre, call, post = bind(f, proc, f08)
    if f08:
        sections(f, pre, call, post)
    ret = FUNCTIONS.get(f.name.removesuffix("_c"))
    lname = c_name(f.name, f08)
    if ret:
        proto = ", ".join(args + hidden) or "void"
        return [f"{ret} {profiled(lname, f08)}({proto})", "{", f"    return {f.name}({', '.join(call)});", "}"] + \
            alias(lname, f08) + [""]
    proto = ", ".join(args + ["MPI_Fint *ierror"] + hidden)
    lines = [f"void {profiled(lname, f08)}({proto})", "{"]
    # alltoallw's arrays are sized by the communicator: convert it first.
    if any("comm_c" in s for s in pre) and "comm" in {p.name for p in f.params}:
        pre = [s for s in pre if s.startswith("MPI_Comm comm_c")] + \
              [s for s in pre if not s.startswith("MPI_Comm comm_c")]
    checked = any("noncontiguous" in s for s in pre)
    if checked:
        lines.append("    int noncontiguous = 0;")
    lines += [f"    {s}" for s in pre]
    if checked:
        args_c = ", ".join(call)
        lines.append(f'    int rc = noncontiguous ? weft_f08_noncontiguous("{f.name}", ierror) : {f.name}({args_c});')
    else:
        lines.append(f"    int rc = {f.name}({', '.join(call)});")
    lines += [f"    {s}" for s in post]
    lines.append("    if (ierror != NULL) *ierror = rc;" if f08 else "    *ierror = rc;")
    lines += ["}"] + alias(lname, f08) + [""]
    return lines


def profiled(lname, f08):
    """The name a binding is defined under: mpif.h's are PMPI_ procedures (pmpi_send_), with
    the MPI_ names weak aliases a profiling library may replace."""
    return lname if f08 else "p" + lname


def alias(lname, f08):
    return [] if f08 else [f"#pragma weak {lname} = p{lname}"]


C_TOP = """\
/* Generated by api/gen_fortran.py: the mpif.h / `use mpi` bindings, one C function per
 * Fortran-callable MPI procedure, on top of the standard-ABI C library. Do not edit. */
#define WEFT_FORTRAN_INTERNAL 1
#include <stdlib.h>
#include "weft_fortran.h"
"""


def render_c(funcs, exports):
    import pympistandard as std

    procs = {p._parseset["name"]: p for p in std.PROCEDURES.data.values()}
    out, unbound = [C_TOP], []
    for name in exports:
        proc = procs.get(name)
        if proc is None or not name.startswith("MPI_") or name.endswith("_c"):
            continue
        if not proc._parseset["attributes"]["f90_expressible"] or name in BY_HAND | CALLBACK_PROCS:
            continue
        f = funcs[name]
        try:
            out.extend(glue(f, proc))
        except Unbindable as e:
            unbound.append(f"{name} ({e})")
    out.append("/* Bound by hand in fortran/callbacks.c: " + ", ".join(sorted(CALLBACK_PROCS)) + ".")
    out.append(" * Not bound (a parameter without a rule in api/gen_fortran.py):")
    out.extend(f" *   {u}" for u in unbound)
    out.append(" */")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- mpi_f08

F08_C_TOP = """\
/* Generated by api/gen_fortran.py: the `use mpi_f08` bindings, one C function per procedure
 * form (the large-count `_c` forms too), bound by name from fortran/mpi_f08.f90's BIND(C)
 * interfaces. Buffers and strings arrive as Fortran 2018 descriptors. Do not edit. */
#define WEFT_FORTRAN_INTERNAL 1
#include <stdlib.h>
#include <ISO_Fortran_binding.h>
#include "weft_fortran.h"
"""


def f08_signature(text):
    """(result type or None, name, argument names, declaration lines, USE lines)."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    m = re.match(r"^(?:(.+?)\s+)?(MPI_\w+)\((.*)\)$", lines[0])
    if not m:
        raise Unbindable(f"f08 header {lines[0]!r}")
    names = [a.strip() for a in m.group(3).split(",") if a.strip()]
    uses = [l for l in lines[1:] if l.upper().startswith("USE")]
    decls = [l for l in lines[1:] if not l.upper().startswith("USE")]
    return m.group(1), m.group(2), names, decls, uses


def wrap(line, indent):
    """A free-form line, continued with & where it passes 100 columns."""
    out, cur = [], indent + line
    while len(cur) > 100:
        cut = cur.rfind(", ", 0, 100)
        if cut <= len(indent):
            break
        out.append(cur[:cut + 1] + " &")
        cur = indent + "    " + cur[cut + 2:]
    return out + [cur]


def f08_interface(f, text, specific, bind=None, body=None):
    """An interface body (or, with `body`, an external procedure) for one form: `specific`
    names it; `bind` is the C name of a BIND(C) interface; `body` is the C glue the procedure
    calls (its interface comes from module weft_f08_bind)."""
    ret, _, names, decls, uses = f08_signature(text)
    cnames = [p.name for p in f.params]
    if names != cnames + ([] if ret else ["ierror"]) and f.name not in BY_HAND:
        raise Unbindable(f"f08 arguments {names} differ from the C ones")
    for d in decls:
        if "(:" in d or "DIMENSION(:" in d:
            raise Unbindable("assumed-shape argument")
    kind = "function" if ret else "subroutine"
    binding = f' bind(C, name="{bind}")' if bind else ""
    ind = "    " if body else "        "
    out = wrap(f'{kind} {specific}({", ".join(names)}){binding}', ind)
    out += [f"{ind}    {u}" for u in uses]
    if body:
        out += [f"{ind}    use mpi_f08_types", f"{ind}    use weft_f08_bind, only: {body}"]
    else:
        out += [f"{ind}    import"]
    out += [f"{ind}    implicit none"]
    if ret:
        out.append(f"{ind}    {ret} :: {specific}")
    for d in decls:
        # A BIND(C) string is assumed-length (a descriptor); the standard's lengths are the
        # most the call writes.
        d = re.sub(r"CHARACTER\(LEN=[^*)][^)]*\)", "CHARACTER(LEN=*)", d)
        out += wrap(d, f"{ind}    ")
    if body:
        call = f"{body}({', '.join(names)})"
        out += wrap(f"{specific} = {call}" if ret else f"call {call}", f"{ind}    ")
    out.append(f"{ind}end {kind} {specific}")
    return out


def f08_specific(name, text):
    """The standard's specific name: MPI_X_f08, or MPI_X_f08ts for a procedure with a choice
    buffer (TYPE(*), DIMENSION(..)); the large-count form MPI_X_c_f08(ts)."""
    return name + ("_f08ts" if "TYPE(*), DIMENSION(..)" in text else "_f08")


def f08_forms(name, proc, funcs, exports):
    text = str(proc.express.f08)
    forms = [(funcs[name], text, f08_specific(name, text))]
    if proc.has_embiggenment() and f"{name}_c" in exports:
        big = str(proc.express.embiggen.f08)
        # MPI_COUNT_KIND is MPI_ADDRESS_KIND (both 8): a large-count form that differs only in
        # that kind would make the generic ambiguous, and the first form already takes it.
        if big.replace("MPI_COUNT_KIND", "MPI_ADDRESS_KIND") != forms[0][1]:
            forms.append((funcs[f"{name}_c"], big, f08_specific(f"{name}_c", big)))
    return forms


def render_f08(funcs, exports):
    import pympistandard as std

    procs = {p._parseset["name"]: p for p in std.PROCEDURES.data.values()}
    c_out, generics, binds, externals, unbound = [F08_C_TOP], {}, [], [F08_PROCS_TOP], []
    for name in list(exports) + STATUS_F08:
        proc = procs.get(name)
        if proc is None or not name.startswith("MPI_") or name.endswith("_c"):
            continue
        if not proc._parseset["attributes"]["f08_expressible"]:
            continue
        for f, text, specific in f08_forms(name, proc, funcs, exports):
            try:
                # A form the standard names itself (MPI_Op_create_c: dummy procedures do not
                # tell generics apart) is a generic of its own.
                generic = f08_signature(text)[1]
                # The MPI_ and PMPI_ specifics are external procedures (not BIND(C)): a tool
                # replaces MPI_Send_f08ts and calls PMPI_Send.
                ifaces = {g: f08_interface(f, text, p + specific) for g, p in ((generic, ""), ("P" + generic, "P"))}
                if name not in CALLBACK_PROCS:
                    cname = c_name(f.name, True)
                    bound = f08_interface(f, text, cname, bind=cname)
                    procs_of = [f08_interface(f, text, p + specific, body=cname) for p in ("P", "")]
                    if name not in BY_HAND:
                        c_out.extend(glue(f, proc, f08=True))
                    binds.extend(bound)
                    externals.extend(line for lines in procs_of for line in lines + [""])
                for g, iface in ifaces.items():
                    generics.setdefault(g, []).extend(iface)
            except Unbindable as e:
                unbound.append(f"{f.name} ({e})")
    generics = [line for g, bodies in generics.items()
                for line in [f"    interface {g}"] + bodies + [f"    end interface {g}", ""]]
    c_out.append("/* Bound by hand in fortran/callbacks.c (external procedures MPI_X_f08): "
                 + ", ".join(sorted(CALLBACK_PROCS)) + ".")
    c_out.append(" * Not bound (a parameter without a rule in api/gen_fortran.py):")
    c_out.extend(f" *   {u}" for u in unbound)
    c_out.append(" */")
    return ("\n".join(c_out) + "\n", render_f08_module(generics, binds, abstract_interfaces()),
            "\n".join(externals) + "\n")


F08_PROCS_TOP = """\
! The `use mpi_f08` specific procedures (Weft), external procedures as the standard names
! them (MPI_Send_f08ts, PMPI_Send_f08ts ...; a profiling tool defines MPI_X_f08(ts) and calls
! PMPI_X), each calling its C glue in fortran/mpi_f08.c through module weft_f08_bind.
! Generated by api/gen_fortran.py. Do not edit.
"""


def abstract_interfaces():
    """The callbacks' abstract interfaces (MPI_User_function ...) and the predefined callbacks
    (MPI_COMM_DUP_FN ...) declared with them."""
    import pympistandard as std

    out = []
    for cb in std.CALLBACKS.data.values():
        name = cb._parseset["name"]
        if name.startswith("MPI_T_"):
            continue
        forms = [cb.express.f08]
        if cb.has_embiggenment():
            forms.append(cb.express.embiggen.f08)
        for form in forms:
            text = str(form)
            if form is None or text == "None":
                continue
            lines = [l.strip() for l in text.splitlines() if l.strip()]
            assert lines[0] == "ABSTRACT INTERFACE", lines[0]
            _, cname, names, decls, uses = f08_signature("\n".join(lines[1:]))
            out += ["    abstract interface"]
            out += wrap(f"subroutine {cname}({', '.join(names)})", "        ")
            out += [f"            {u}" for u in uses] + ["            import", "            implicit none"]
            out += [l for d in decls for l in wrap(d, "            ")]
            out += [f"        end subroutine {cname}", "    end interface"]
    for name, iface in PREDEFINED_CALLBACKS.items():
        if iface:
            out.append(f"    procedure({iface}) :: {name}")
    return out + [""]


def render_f08_module(generics, binds, interfaces):
    out = [
        "! The `use mpi_f08` modules (Weft). Generated by api/gen_fortran.py from pympistandard's",
        "! Fortran 2008 signatures and api/abi_constants.txt. Do not edit.",
        "! mpi_f08_types: the handle and status types, constants and callback interfaces;",
        "! weft_f08_bind: BIND(C) interfaces to the C glue of fortran/mpi_f08.c (internal);",
        "! mpi_f08: per procedure the generics MPI_X and PMPI_X, whose specifics (MPI_X_f08 or",
        "! MPI_X_f08ts, the large-count MPI_X_c_f08(ts)) are the external procedures of",
        "! fortran/mpi_f08_procs.f90.",
        "module mpi_f08_types",
        "    use, intrinsic :: iso_c_binding, only: c_ptr",
        "    implicit none",
        "    private :: c_ptr",
        "",
    ]
    for t in HANDLES:
        out += [f"    type, bind(C) :: {t}", "        integer :: MPI_VAL", f"    end type {t}"]
    out += STATUS_TYPE + [""]
    out += [f"    {l.strip()}" for l in F08_KINDS.strip().splitlines()]
    for name, v, handle in constant_entries():
        if handle:
            out.append(f"    type({handle}), parameter :: {name} = {handle}({v})")
        else:
            out.append(f"    {F_KINDS.get(name, 'integer')}, parameter :: {name} = {v}")
    out.append("")
    f08_types = {"MPI_STATUS_IGNORE": "type(MPI_Status)", "MPI_STATUSES_IGNORE": "type(MPI_Status)",
                 "MPI_ARGV_NULL": "character(len=1)", "MPI_ARGVS_NULL": "character(len=1)"}
    for name, ftype, dims, block in SENTINELS:
        d = {"(MPI_STATUS_SIZE)": "", "(MPI_STATUS_SIZE,1)": "(1)"}.get(dims, dims)
        out.append(f"    {f08_types.get(name, 'integer')} :: {name}{d}")
        out.append(f"    common /{block}/ {name}")
    out.append("")
    ops = []
    for t in HANDLES:
        low = t.lower()
        ops += [f"    interface operator(==)", f"        module procedure weft_{low}_eq", "    end interface",
                f"    interface operator(/=)", f"        module procedure weft_{low}_ne", "    end interface"]
    out += ops + [""]
    out += interfaces
    sizeof_spec, sizeof_procs = sizeof_generic(True)
    out += sizeof_spec
    out.append("contains")
    out += sizeof_procs
    for t in HANDLES:
        low = t.lower()
        for op, sym in (("eq", "=="), ("ne", "/=")):
            out += [f"    elemental logical function weft_{low}_{op}(a, b)",
                    f"        type({t}), intent(in) :: a, b",
                    f"        weft_{low}_{op} = a%MPI_VAL {sym} b%MPI_VAL",
                    f"    end function weft_{low}_{op}"]
    out += ["end module mpi_f08_types", ""]
    out += ["module weft_f08_bind", "    use mpi_f08_types", "    implicit none", "    interface"]
    out += binds
    out += ["    end interface", "end module weft_f08_bind", ""]
    out += ["module mpi_f08", "    use mpi_f08_types", "    implicit none", ""]
    out += generics
    out.append("end module mpi_f08")
    return "\n".join(out) + "\n"


# TYPE(MPI_Status) (mpi_f08 and `use mpi`): the C status's layout.
STATUS_TYPE = ["    type, bind(C) :: MPI_Status",
               "        integer :: MPI_SOURCE, MPI_TAG, MPI_ERROR",
               "        integer, private :: weft_internal(5)",
               "    end type MPI_Status"]


# MPI_SIZEOF: one specific per intrinsic type and kind, any rank (assumed-rank).
SIZEOF_TYPES = [("integer", k) for k in (1, 2, 4, 8)] + [("real", k) for k in (4, 8, 16)] + \
    [("complex", k) for k in (4, 8, 16)] + [("logical", k) for k in (1, 2, 4, 8)] + [("character", 1)]


def sizeof_generic(f08):
    """(specification lines, procedure lines) of the MPI_Sizeof generic."""
    names = [f"weft_sizeof_{t[0]}{k}" for t, k in SIZEOF_TYPES]
    spec = [f"    private :: {', '.join(names[i:i + 4])}" for i in range(0, len(names), 4)]
    spec += ["    interface MPI_Sizeof"] + \
        [f"        module procedure {', '.join(names[i:i + 4])}" for i in range(0, len(names), 4)] + \
        ["    end interface MPI_Sizeof", ""]
    procs = []
    for (t, k), name in zip(SIZEOF_TYPES, names):
        decl = "character(len=*)" if t == "character" else f"{t}(kind={k})"
        procs += [f"    subroutine {name}(x, size, ierror)",
                  f"        {decl}, dimension(..), intent(in) :: x",
                  "        integer, intent(out) :: size",
                  f"        integer, {'optional, ' if f08 else ''}intent(out) :: ierror",
                  "        size = int(storage_size(x) / 8)",
                  "        if (present(ierror)) ierror = 0" if f08 else "        ierror = 0",
                  f"    end subroutine {name}"]
    return spec, procs


def render_mpi_module():
    spec, procs = sizeof_generic(False)
    return "\n".join([
        "! The `use mpi` module: mpif.h's constants, sentinels and implicit interfaces, and the",
        "! MPI_Sizeof generic (Weft). Generated by api/gen_fortran.py. Do not edit.",
        "module mpi",
        "    implicit none",
        "    include 'mpif.h'",
        "    ! mpi_f08's status type (MPI_STATUS_F2F08 / MPI_STATUS_F082F convert).",
    ] + STATUS_TYPE + spec + ["contains"] + procs + ["end module mpi"]) + "\n"


F08_KINDS = """
integer, parameter :: MPI_ADDRESS_KIND = 8, MPI_OFFSET_KIND = 8, MPI_COUNT_KIND = 8
integer, parameter :: MPI_INTEGER_KIND = 4
integer, parameter :: MPI_STATUS_SIZE = 8
integer, parameter :: MPI_SOURCE = 1, MPI_TAG = 2, MPI_ERROR = 3
logical, parameter :: MPI_SUBARRAYS_SUPPORTED = .false.
logical, parameter :: MPI_ASYNC_PROTECTS_NONBLOCKING = .false.
"""


# ---------------------------------------------------------------- mpif.h

F_TOP = """\
! mpif.h: Weft's Fortran constants (MPI 5.0 standard ABI values).
! Generated by api/gen_fortran.py from api/abi_constants.txt.
! Do not edit. Valid as fixed-form and free-form source.
      INTEGER MPI_ADDRESS_KIND, MPI_OFFSET_KIND, MPI_COUNT_KIND
      PARAMETER (MPI_ADDRESS_KIND=8)
      PARAMETER (MPI_OFFSET_KIND=8)
      PARAMETER (MPI_COUNT_KIND=8)
      INTEGER MPI_INTEGER_KIND
      PARAMETER (MPI_INTEGER_KIND=4)
      INTEGER MPI_STATUS_SIZE, MPI_SOURCE, MPI_TAG, MPI_ERROR
      PARAMETER (MPI_STATUS_SIZE=8)
      PARAMETER (MPI_SOURCE=1)
      PARAMETER (MPI_TAG=2)
      PARAMETER (MPI_ERROR=3)
      LOGICAL MPI_SUBARRAYS_SUPPORTED
      PARAMETER (MPI_SUBARRAYS_SUPPORTED=.FALSE.)
      LOGICAL MPI_ASYNC_PROTECTS_NONBLOCKING
      PARAMETER (MPI_ASYNC_PROTECTS_NONBLOCKING=.FALSE.)
"""

# Sentinels recognised by address: name -> (type, dimensions, common block)
SENTINELS = [
    ("MPI_BOTTOM", "INTEGER", "", "MPI_FORTRAN_BOTTOM"),
    ("MPI_IN_PLACE", "INTEGER", "", "MPI_FORTRAN_IN_PLACE"),
    ("MPI_BUFFER_AUTOMATIC", "INTEGER", "", "MPI_FORTRAN_BUFFER_AUTO"),
    ("MPI_STATUS_IGNORE", "INTEGER", "(MPI_STATUS_SIZE)", "MPI_FORTRAN_ST_IGNORE"),
    ("MPI_STATUSES_IGNORE", "INTEGER", "(MPI_STATUS_SIZE,1)", "MPI_FORTRAN_STS_IGNORE"),
    ("MPI_ERRCODES_IGNORE", "INTEGER", "(1)", "MPI_FORTRAN_ERRCODES_IGN"),
    ("MPI_UNWEIGHTED", "INTEGER", "(1)", "MPI_FORTRAN_UNWEIGHTED"),
    ("MPI_WEIGHTS_EMPTY", "INTEGER", "(1)", "MPI_FORTRAN_WEIGHTS_EMPTY"),
    ("MPI_ARGV_NULL", "CHARACTER*1", "(1)", "MPI_FORTRAN_ARGV_NULL"),
    ("MPI_ARGVS_NULL", "CHARACTER*1", "(1,1)", "MPI_FORTRAN_ARGVS_NULL"),
]

# Integer constants with a kind other than the default INTEGER.
F_KINDS = {"MPI_DISPLACEMENT_CURRENT": "INTEGER(KIND=MPI_OFFSET_KIND)"}


def f_value(value):
    m = re.match(r"^\(\((MPI_Offset)\)(-?\d+)\)$", value)
    if m:
        return int(m.group(2))
    if re.match(r"^-?(0x[0-9a-fA-F]+|\d+)$", value):
        return int(value, 0)
    return None


def f_statement(text):
    line = "      " + text
    if len(line) > 72:
        sys.exit(f"gen_fortran.py: line over 72 columns: {line}")
    return line


def constant_entries():
    """[(name, value, handle type or None)]: the Fortran constants of abi_constants.txt."""
    values, out = {}, []
    for head, arg, entries in gen.parse_table(gen.API / "abi_constants.txt"):
        if head in ("layout", "opaque", "callbacks"):
            continue
        if head == "enum" and arg.startswith("MPI_T_"):
            continue
        for name, value in entries:
            if name.startswith("MPI_T_") or name.startswith("MPI_F_"):
                continue
            v = f_value(value)
            if v is None and value in values:
                v = values[value]
            if v is None:
                continue  # pointers, callbacks: sentinels or not in Fortran
            values[name] = v
            out.append((name, v, arg if head == "handle" else None))
    return out


def render_mpif():
    out = [F_TOP.rstrip()]
    for name, v, _ in constant_entries():
        out.append(f_statement(f"{F_KINDS.get(name, 'INTEGER')} {name}"))
        out.append(f_statement(f"PARAMETER ({name}={v})"))
    for name, ftype, dims, block in SENTINELS:
        out.append(f_statement(f"{ftype} {name}{dims}"))
        out.append(f_statement(f"COMMON /{block}/ {name}"))
        out.append(f_statement(f"SAVE /{block}/"))
    for name, ret in FUNCTIONS.items():
        ftype = "DOUBLE PRECISION" if ret == "double" else "INTEGER(KIND=MPI_ADDRESS_KIND)"
        out.append(f_statement(f"{ftype} {name.upper()}"))
        out.append(f_statement(f"EXTERNAL {name.upper()}"))
    for name, ret in FUNCTIONS.items():
        ftype = "DOUBLE PRECISION" if ret == "double" else "INTEGER(KIND=MPI_ADDRESS_KIND)"
        out.append(f_statement(f"{ftype} P{name.upper()}"))
        out.append(f_statement(f"EXTERNAL P{name.upper()}"))
    for name in PREDEFINED_CALLBACKS:
        out.append(f_statement(f"EXTERNAL {name}"))
    return "\n".join(out) + "\n"


def render_sentinels_c():
    """The C side of the sentinel common blocks (included by fortran/runtime.c)."""
    out = ["/* Generated by api/gen_fortran.py: the C side of mpif.h's sentinel common blocks. */"]
    sizes = {"": 1, "(MPI_STATUS_SIZE)": 8, "(MPI_STATUS_SIZE,1)": 8, "(1)": 1, "(1,1)": 1}
    for name, ftype, dims, block in SENTINELS:
        ctype = "char" if ftype.startswith("CHARACTER") else "MPI_Fint"
        out.append(f"{ctype} {block.lower()}_[{sizes[dims]}] __attribute__((aligned(32))); /* {name}: aligned as gfortran aligns common blocks */")
    out.append("")
    out.append("#define WEFT_F_SENTINEL_BOTTOM mpi_fortran_bottom_")
    return "\n".join(out) + "\n"


def outputs():
    funcs = {**gen.load_standard(), **gen.load_mpix()}
    exports = gen.load_exports(funcs)
    f08_c, f08_module, f08_procs = render_f08(funcs, exports)
    return {
        OUT / "mpi_f08.c": f08_c,
        OUT / "mpi_f08.f90": f08_module,
        OUT / "mpi_f08_procs.f90": f08_procs,
        OUT / "mpif.h": render_mpif(),
        OUT / "mpi.f90": render_mpi_module(),
        OUT / "mpi_f77.c": render_c(funcs, exports),
        OUT / "sentinels.h": render_sentinels_c(),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="fail when a committed output is stale")
    a = ap.parse_args()
    stale = False
    for path, text in outputs().items():
        old = path.read_text() if path.exists() else ""
        if a.check:
            if old != text:
                stale = True
                diff = difflib.unified_diff(old.splitlines(), text.splitlines(), str(path), "regenerated", lineterm="")
                print("\n".join(list(diff)[:40]))
        elif old != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        sys.exit("gen_fortran.py --check: generated Fortran bindings are stale (run `make generate`)")


if __name__ == "__main__":
    main()
