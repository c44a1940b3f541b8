#!/usr/bin/env python3
"""Generate Weft's bindings from one API description.

Inputs (all in api/):
  - the MPI 5.0 procedures from the PyPI package pympistandard (pinned in api/requirements.txt),
  - mpix_functions.txt: our MPIX prototypes,
  - abi_constants.txt / mpix_constants.txt: our tables of constant values,
  - mpix_types.h: MPIX structs and callback types,
  - exports.txt: the exact exported function set.
Outputs (committed; `gen.py --check` fails when regenerating would change one):
  - include/mpi.h
  - crates/weft-abi/src/generated/entry_points.rs: every PMPI_ entry point in Rust
  - crates/weft-abi/c/forwarders.c: weak MPI_X -> strong PMPI_X forwarders
  - crates/weft-abi/c/libmpi_abi.map: the linker version script (exported names only)
  - crates/weft-abi/c/qmpi.c, crates/weft-abi/src/generated/qmpi.rs and the QMPI parts of
    mpi.h and forwarders.c: tools chained in front of the MPI functions (api/gen_qmpi.py)

An entry point calls its implementation in crates/weft-abi/src, found by name:
  - a direct one, `pub(crate) [unsafe] fn mpi_x(` with the C parameters, or else
  - a family member (FAMILIES: the blocking `MPI_X`, nonblocking `MPI_Ix` and persistent
    `MPI_X_init` forms, each with its `_c` twin) calls the family's one implementation
    `fn x(<the blocking form's parameters>, func, mode[, extra])` through the helpers of
    `api/family.rs` (parameters a form lacks, such as a blocking receive's status, are
    passed as null), or else
  - an MPI-IO read or write (`MPI_File_iread_at_all` ...) calls one of the functions of
    `api/file/access.rs` with its form read from the name (`file_access_call`), or else
  - a twin (`MPI_X` and `MPI_X_c`) calls one implementation generic over the count and
    displacement types, `fn x(<the C parameters>, func)`.
Any other returns MPI_ERR_UNSUPPORTED_OPERATION and is listed in UNIMPLEMENTED (shown by
weft-info).
"""
import argparse
import difflib
import re
import sys
from pathlib import Path

import gen_qmpi

ROOT = Path(__file__).resolve().parent.parent
API = ROOT / "api"
ABI_SRC = ROOT / "crates" / "weft-abi" / "src"

# ---------------------------------------------------------------- API description


class Param:
    """One C parameter, parsed from its C text (e.g. `const int ranks[]`)."""

    PATTERN = re.compile(r"^(const\s+)?(\w+)\s*(\**)\s*(\w+)\s*((?:\[\d*\])*)$")

    def __init__(self, text):
        text = " ".join(text.split())
        m = self.PATTERN.match(text)
        if not m:
            raise ValueError(f"cannot parse parameter {text!r}")
        self.text = text
        self.const = bool(m.group(1))
        self.base = m.group(2)
        self.pointers = len(m.group(3))
        self.name = m.group(4)
        dims = re.findall(r"\[(\d*)\]", m.group(5))
        self.array = len(dims) > 0
        self.inner_dims = [int(d) for d in dims[1:]]

    def c_decl(self):
        return self.text


class Function:
    def __init__(self, name, ret, params, variadic=False):
        self.name = name
        self.ret = ret
        self.params = params
        self.variadic = variadic

    @property
    def pname(self):
        return "P" + self.name

    def c_proto(self, name):
        args = ", ".join(p.c_decl() for p in self.params)
        if self.variadic:
            args += ", ..."
        return f"{self.ret} {name}({args or 'void'})"


def parse_prototype(text):
    m = re.match(r"^\s*(.+?)\s*\b(P?MPIX?_\w+)\s*\((.*)\)\s*;?\s*$", text)
    if not m:
        raise ValueError(f"cannot parse prototype {text!r}")
    ret, name, args = m.group(1), m.group(2), m.group(3).strip()
    params, variadic = [], False
    if args and args != "void":
        for a in args.split(","):
            a = a.strip()
            if a in ("...", "\\ldots"):
                variadic = True
            else:
                params.append(Param(a.replace("\\ldots", "...")))
    return Function(name, ret, params, variadic)


def load_standard():
    import pympistandard as std

    std.use_api_version(1)
    funcs = {}
    for proc in std.PROCEDURES.data.values():
        forms = [proc.express.iso_c]
        if proc.has_embiggenment():
            forms.append(proc.express.embiggen.iso_c)
        for form in forms:
            text = str(form)
            if form is None or text == "None":
                continue
            text = text.replace("\\ldots", "...")
            # pympistandard drops a pointer level: the standard has `char *argv[]`.
            text = text.replace("MPI_Info_create_env(int argc, char argv[]", "MPI_Info_create_env(int argc, char *argv[]")
            f = parse_prototype(text)
            funcs[f.name] = f
    return funcs


def load_mpix():
    funcs = {}
    for line in (API / "mpix_functions.txt").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            f = parse_prototype(line)
            funcs[f.name] = f
    return funcs


def load_exports(known):
    names = []
    for line in (API / "exports.txt").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            if line not in known:
                sys.exit(f"gen.py: exports.txt names {line}, which no API description defines")
            names.append(line)
    if len(set(names)) != len(names):
        sys.exit("gen.py: exports.txt lists a name twice")
    return sorted(names)


# ---------------------------------------------------------------- constant tables


def parse_table(path):
    """Return [(section, arg, [(name, value)])] from a constants table."""
    sections = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("@"):
            head, _, arg = line[1:].partition(" ")
            sections.append((head, arg.strip(), []))
            continue
        name, _, value = line.partition("=")
        sections[-1][2].append((name.strip(), value.strip()))
    return sections


CALLBACKS = {
    "mpi": """\
typedef void (MPI_User_function)(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef void (MPI_User_function_c)(void *invec, void *inoutvec, MPI_Count *len, MPI_Datatype *datatype);

typedef int (MPI_Grequest_query_function)(void *extra_state, MPI_Status *status);
typedef int (MPI_Grequest_free_function)(void *extra_state);
typedef int (MPI_Grequest_cancel_function)(void *extra_state, int complete);

typedef int (MPI_Copy_function)(MPI_Comm comm, int keyval, void *extra_state, void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int (MPI_Delete_function)(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state);
typedef int (MPI_Comm_copy_attr_function)(MPI_Comm comm, int keyval, void *extra_state, void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int (MPI_Comm_delete_attr_function)(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state);
typedef int (MPI_Type_copy_attr_function)(MPI_Datatype datatype, int keyval, void *extra_state, void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int (MPI_Type_delete_attr_function)(MPI_Datatype datatype, int keyval, void *attribute_val, void *extra_state);
typedef int (MPI_Win_copy_attr_function)(MPI_Win win, int keyval, void *extra_state, void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int (MPI_Win_delete_attr_function)(MPI_Win win, int keyval, void *attribute_val, void *extra_state);

typedef int (MPI_Datarep_extent_function)(MPI_Datatype datatype, MPI_Aint *extent, void *extra_state);
typedef int (MPI_Datarep_conversion_function)(void *userbuf, MPI_Datatype datatype, int count, void *filebuf, MPI_Offset position, void *extra_state);
typedef int (MPI_Datarep_conversion_function_c)(void *userbuf, MPI_Datatype datatype, MPI_Count count, void *filebuf, MPI_Offset position, void *extra_state);

typedef void (MPI_Comm_errhandler_function)(MPI_Comm *comm, int *error_code, ...);
typedef void (MPI_File_errhandler_function)(MPI_File *file, int *error_code, ...);
typedef void (MPI_Win_errhandler_function)(MPI_Win *win, int *error_code, ...);
typedef void (MPI_Session_errhandler_function)(MPI_Session *session, int *error_code, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn;
typedef MPI_Session_errhandler_function MPI_Session_errhandler_fn;
""",
    "mpi_t": """\
typedef void (MPI_T_event_cb_function)(MPI_T_event_instance event_instance, MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety, void *user_data);
typedef void (MPI_T_event_free_cb_function)(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety, void *user_data);
typedef void (MPI_T_event_dropped_cb_function)(MPI_Count count, MPI_T_event_registration event_registration, int source_index, MPI_T_cb_safety cb_safety, void *user_data);
""",
}


def render_table(sections):
    out = []
    for head, arg, entries in sections:
        if head == "layout":
            continue
        out.append("")
        if head == "define":
            for name, value in entries:
                out.append(f"#define {name:<30} {value}")
        elif head == "handle":
            tag = arg.replace("_", "_ABI_", 1)
            out.append(f"typedef struct {tag}* {arg};")
            for name, value in entries:
                if re.match(r"^(0x[0-9a-fA-F]+|\d+)$", value):
                    out.append(f"#define {name:<30} (({arg})0x{int(value, 0):08x})")
                else:
                    out.append(f"#define {name:<30} {value}")
        elif head == "opaque":
            out.append(f"typedef struct {arg}_t* {arg};")
        elif head == "enum":
            out.append(f"typedef enum {arg} {{" if arg else "enum {")
            body = [f"    {name:<34} = {value}" for name, value in entries]
            out.append(",\n".join(body))
            out.append(f"}} {arg};" if arg else "};")
        elif head == "callbacks":
            out.append(CALLBACKS[arg].rstrip())
        else:
            sys.exit(f"gen.py: unknown table section @{head}")
    return "\n".join(out)


def rust_constants():
    """The constant tables as Rust items (crates/weft-abi/src/generated/constants.rs)."""
    out = [
        "// Generated by api/gen.py from api/abi_constants.txt and api/mpix_constants.txt. Do not edit.",
        "#![allow(dead_code)]",
        "use crate::ctypes::*;",
        "use std::ffi::c_int;",
        "",
    ]
    for table in ("abi_constants.txt", "mpix_constants.txt"):
        for head, arg, entries in parse_table(API / table):
            for name, value in entries:
                if head == "handle":
                    out.append(f"pub const {name}: {arg} = {value};")
                elif head == "enum":
                    out.append(f"pub const {name}: {arg or 'c_int'} = {value};")
                elif head == "define":
                    m = re.match(r"^\(\((\w+)\*+\)(-?(?:0x)?[0-9a-fA-F]+)\)$", value)
                    m2 = re.match(r"^\(\((MPI_Offset)\)(-?\d+)\)$", value)
                    if m2:
                        out.append(f"pub const {name}: MPI_Offset = {m2.group(2)};")
                    elif m:
                        out.append(f"pub const {name}: usize = {int(m.group(2), 0)};")
                    elif re.match(r"^\(\((\w+)\)(\d+)\)$", value):
                        v = re.match(r"^\(\((\w+)\)(\d+)\)$", value)
                        out.append(f"pub const {name}: {v.group(1)} = {v.group(2)};")
                    elif re.match(r"^-?\d+$", value):
                        out.append(f"pub const {name}: c_int = {value};")
                    else:
                        sys.exit(f"gen.py: cannot express {name} = {value} in Rust")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- mpi.h


HEADER_TOP = """\
/* mpi.h: the MPI 5.0 standard ABI, as implemented by Weft.
 * Generated by api/gen.py from pympistandard, api/mpix_functions.txt and Weft's constant
 * tables. Do not edit: edit the inputs and run `make generate`. */
#ifndef MPI_H_INCLUDED
#define MPI_H_INCLUDED

#include <stdint.h>

#if defined(__cplusplus)
extern "C" {
#endif

#define WEFT_MPI_H 1

typedef intptr_t MPI_Aint;
typedef int64_t MPI_Offset;
typedef MPI_Offset MPI_Count;

typedef struct {
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    int MPI_internal[5];
} MPI_Status;
"""

HEADER_BOTTOM = """
#if defined(__cplusplus)
}
#endif

/* C and Fortran together (MPI_Fint, MPI_X_c2f/f2c, the status conversions, MPI_F_STATUS_IGNORE):
 * declared by Weft's Fortran library's header, installed beside this one when Weft was built
 * with a Fortran compiler. */
#if defined(__has_include)
#if __has_include("weft_fortran.h")
#include "weft_fortran.h"
#endif
#endif

#endif /* MPI_H_INCLUDED */
"""


def render_header(funcs, exports):
    parts = [HEADER_TOP]
    parts.append(render_table(parse_table(API / "abi_constants.txt")))
    parts.append("\n/* ---- Weft MPIX extensions ---- */")
    parts.append(render_table(parse_table(API / "mpix_constants.txt")))
    parts.append("")
    parts.append((API / "mpix_types.h").read_text().rstrip())
    parts.append("\n/* ---- functions ---- */")
    for name in exports:
        parts.append(funcs[name].c_proto(name) + ";")
    parts.append("\n/* ---- profiling interface ---- */")
    for name in exports:
        parts.append(funcs[name].c_proto("P" + name) + ";")
    parts.append(gen_qmpi.render_header_part(funcs, exports))
    parts.append(HEADER_BOTTOM)
    return "\n".join(parts)


# ---------------------------------------------------------------- Rust entry points

RUST_SCALARS = {"int": "c_int", "char": "c_char", "void": "c_void", "double": "c_double"}


def rust_type(p):
    base = RUST_SCALARS.get(p.base, p.base)
    if p.base.endswith(("_function", "_function_c", "_function_x")):
        if p.pointers > 1 or p.array:
            sys.exit(f"gen.py: unsupported function-pointer parameter {p.text}")
        return f"Option<{base}>"
    t = base
    for d in reversed(p.inner_dims):
        t = f"[{t}; {d}]"
    levels = p.pointers + (1 if p.array else 0)
    for i in range(levels):
        innermost = i == 0
        t = f"*{'const' if (innermost and p.const) else 'mut'} {t}"
    return t


def rust_ret(ret):
    return RUST_SCALARS.get(ret, ret)


# Functions whose return value is not an error code: they return it directly.
def is_direct(f):
    return f.ret != "int" or f.name.endswith("_toint") or f.name in DIRECT_INT


DIRECT_INT: set = {"MPIX_Request_is_complete", "MPIX_Query_cuda_support", "MPIX_Query_ze_support", "MPIX_Query_hip_support"}  # int-returning functions whose int is not an error code

# The argument whose errhandler receives a failure, by type.
SCOPE_OF = {"MPI_Comm": "Comm", "MPI_Win": "Win", "MPI_File": "File", "MPI_Session": "Session"}


# Functions whose object arrives by pointer (it is released and the handle reset): their
# errors go to that object's errhandler, read before the call.
RELEASING = ("_free", "_finalize", "_disconnect", "_close")


def error_scope(f):
    for p in f.params:
        if p.pointers == 0 and not p.array and p.base in SCOPE_OF:
            return f"Scope::{SCOPE_OF[p.base]}({p.name})"
    if f.name.endswith(RELEASING):
        for p in f.params:
            if p.pointers == 1 and not p.array and p.base in SCOPE_OF:
                # An unsafe block: the entry point's SAFETY line covers it.
                return f"Scope::{SCOPE_OF[p.base]}(unsafe {{ read_handle({p.name}) }})"
    return "Scope::Default"


def rust_ident(name):
    return {"type": "type_", "ref": "ref_", "in": "in_", "fn": "fn_"}.get(name, name)


def find_implementations():
    """Direct implementations (`mpi_x`/`mpix_x`) and shared ones (any other `pub(crate)`
    function: family and twin implementations are looked up among them by name)."""
    direct, shared = {}, {}
    pat = re.compile(r"^pub\(crate\) (unsafe )?fn (\w+)[<(]", re.M)
    for path in sorted(ABI_SRC.rglob("*.rs")):
        if "generated" in path.parts:
            continue
        module = "::".join(path.relative_to(ABI_SRC).with_suffix("").parts)
        module = module.removesuffix("::mod")
        for m in pat.finditer(path.read_text()):
            found = (f"crate::{module}", m.group(2), bool(m.group(1)))
            if re.match(r"(mpi|mpix)_", m.group(2)):
                direct[m.group(2)] = found
            else:
                shared.setdefault(m.group(2), found)
    return direct, shared


# Families whose blocking (MPI_X), nonblocking (MPI_Ix) and persistent (MPI_X_init) forms
# share one implementation: base name -> (implementation, extra argument or None). The
# extra argument is an expression in the implementation's module.
FAMILIES = {
    **{b: (b.lower(), None) for b in (
        "Barrier", "Bcast", "Gather", "Gatherv", "Scatter", "Scatterv", "Allgather",
        "Allgatherv", "Alltoall", "Alltoallv", "Alltoallw", "Reduce", "Allreduce",
        "Reduce_scatter", "Reduce_scatter_block", "Neighbor_allgather",
        "Neighbor_allgatherv", "Neighbor_alltoall", "Neighbor_alltoallv",
        "Neighbor_alltoallw", "Recv", "Sendrecv", "Sendrecv_replace", "Mrecv")},
    "Allreduce": ("all_reduce", "AllKind::Allreduce"),
    "Scan": ("all_reduce", "AllKind::Scan"),
    "Exscan": ("all_reduce", "AllKind::Exscan"),
    "Send": ("send", "SendKind::Standard"),
    "Ssend": ("send", "SendKind::Synchronous"),
    "Rsend": ("send", "SendKind::Ready"),
    "Bsend": ("send", "SendKind::Buffered"),
    "Neighbor_allgather": ("neighbor_blocks", "Sends::Same"),
    "Neighbor_alltoall": ("neighbor_blocks", "Sends::Each"),
}


# Families outside the MPI_X/MPI_Ix naming: base -> (blocking name, nonblocking name).
NAMED_FAMILIES = {
    "Stream_send": ("MPIX_Stream_send", "MPIX_Stream_isend"),
    "Stream_recv": ("MPIX_Stream_recv", "MPIX_Stream_irecv"),
}
FAMILIES.update({base: (base.lower(), None) for base in NAMED_FAMILIES})


def family_names(base):
    """The names of a family's forms: form -> name (without the twin suffix)."""
    if base in NAMED_FAMILIES:
        blocking, nonblocking = NAMED_FAMILIES[base]
        return {"blocking": blocking, "nonblocking": nonblocking}
    return {
        "blocking": f"MPI_{base}",
        "nonblocking": f"MPI_I{base[0].lower()}{base[1:]}",
        "persistent": f"MPI_{base}_init",
    }


def family_forms(exports):
    """Each exported family member: name -> (base, form, twin suffix)."""
    forms = {}
    for base in FAMILIES:
        names = family_names(base)
        for form, name in names.items():
            for suffix in ("", "_c"):
                if name + suffix in exports:
                    forms[name + suffix] = (base, form, suffix)
    return forms


def family_call(f, funcs, impl, base, form, suffix):
    """The body of a family member's entry point."""
    module, fname, _ = impl
    extra = FAMILIES[base][1]
    blocking = funcs[family_names(base)["blocking"] + suffix]
    mine = {p.name for p in f.params}
    args = []
    for p in blocking.params:
        if p.name in mine:
            args.append(rust_ident(p.name))
        elif p.pointers or p.array:
            args.append("std::ptr::null_mut()")
        else:
            sys.exit(f"gen.py: {f.name} lacks {p.name} of the family's blocking form")
    owner = "comm" if "comm" in mine else "MPI_COMM_NULL"
    def call(mode):
        parts = args + [f'"{f.name}"', mode] + ([f"{module}::{extra}"] if extra else [])
        return f"{module}::{fname}({', '.join(parts)})"
    if form == "blocking":
        return f"family::blocking({call('Mode::Blocking')})"
    if form == "nonblocking":
        return f'family::nonblocking(request, "{f.name}", {owner}, |mode| {call("mode")})'
    info = "info" if "info" in mine else "MPI_INFO_NULL"
    return f'family::persistent({info}, request, "{f.name}", {owner}, |mode| {call("mode")})'


FILE_ACCESS = re.compile(
    r"^MPI_File_(?P<i>i?)(?P<rw>read|write)(?P<at>_at)?(?P<kind>_all|_shared|_ordered)?"
    r"(?P<split>_begin|_end)?(?:_c)?$")


def file_access_call(f):
    """The body of an MPI-IO read/write entry point (`api/file/access.rs`), its form read
    from the name; None for other functions."""
    m = FILE_ACCESS.match(f.name)
    if not m:
        return None
    kind = m["kind"] or ""
    ptr = ("Ptr::At(offset)" if m["at"] and m["split"] != "_end" else "Ptr::At(0)" if m["at"]
           else {"_shared": "Ptr::Shared", "_ordered": "Ptr::Ordered"}.get(kind, "Ptr::Individual"))
    form = (f"Form {{ write: {str(m['rw'] == 'write').lower()}, "
            f"collective: {str(kind == '_all').lower()}, ptr: {ptr} }}")
    name = f'"{f.name}"'
    if m["split"] == "_end":
        return f"access::end(fh, status, {form}, {name})"
    if m["split"] == "_begin":
        return f"access::begin(fh, buf, count, datatype, {form}, {name})"
    if m["i"]:
        return f"access::nonblocking(fh, buf, count, datatype, request, {form}, {name})"
    return f"access::blocking(fh, buf, count, datatype, status, {form}, {name})"


# RMA operations whose plain (`_c` twins), request-based (MPI_R*, MPIX_Rr*) and notifying
# (MPIX_*_notify) forms share one implementation in api/rma.rs, told what follows the
# operation by its `Then` argument. (The plain C forms and the notifying ones have direct
# implementations, which come to api/rma.rs for anything but the plainest arguments.)
RMA_FORM = re.compile(
    r"^(?:MPI_(?P<r>R)?|MPIX_(?P<rr>Rr)|MPIX_)(?P<op>Put|Get|Accumulate|Get_accumulate)"
    r"(?P<notify>_notify)?(?P<c>_c)?$", re.I)


def rma_form_call(f, shared):
    """The body of an RMA operation's entry point in one of those forms (`RMA_FORM`), or
    None for other functions; with whether it is unsafe. Put and get share `transfer`, told
    the direction, accumulate and get-accumulate `accumulate`, told the result buffer (or
    None); their plain C forms and notifying forms enter by `rma_direct::*_plain`."""
    m = RMA_FORM.match(f.name)
    if not m:
        return None
    op = m["op"].lower()
    plain = not (m["r"] or m["rr"] or m["c"])
    fname = "transfer" if op in ("put", "get") else "accumulate"
    module = "crate::api::rma"
    if plain:
        module, fname = "crate::api::rma_direct", fname + "_plain"
    if fname not in shared or shared[fname][0] != module:
        sys.exit(f"gen.py: {f.name} needs {module}::{fname}")
    if m["r"] or m["rr"]:
        then = "Then::Request(request)"
    elif m["notify"]:
        then = "Then::Notify(notification_idx)"
    else:
        then = "Then::Done"
    names = {p.name for p in f.params}
    args = ["Origin::new(origin_addr, origin_count, origin_datatype)"]
    if "result_addr" in names:
        args.append("Some(Origin::new(result_addr, result_count, result_datatype))")
    elif "op" in names:
        args.append("None")
    args.append("TargetArgs::new(target_rank, target_disp, target_count, target_datatype)")
    args += ["op"] * ("op" in names) + ["win"]
    if op in ("put", "get"):
        args.append(f"Dir::{op.capitalize()}")
    args.append(then)
    args.append(f'"{f.name}"')
    return f'{module}::{fname}({", ".join(args)})', shared[fname][2]


# Functions that differ from a sibling only in constant trailing arguments of one shared
# implementation: name (without `_c`) -> (implementation, the arguments after the C ones,
# where `{name}` is the entry point's name). A forwarded user-function argument (an
# errhandler or attribute callback; not the `_x` destructor) travels as its address,
# `Option<usize>`, so that one implementation serves every object kind.
KEYVAL = "weft_core::object::attr::AttrKind"
ERRHANDLER = "weft_core::object::ErrhandlerKind"
FORWARDS = {
    "MPI_Comm_accept": ("accept_or_connect", 'true, "{name}"'),
    "MPI_Comm_connect": ("accept_or_connect", 'false, "{name}"'),
    "MPI_Type_vector": ("strided", 'false, "{name}"'),
    "MPI_Type_create_hvector": ("strided", 'true, "{name}"'),
    "MPI_Type_get_extent": ("extent_pair", 'false, "{name}"'),
    "MPI_Type_get_true_extent": ("extent_pair", 'true, "{name}"'),
    **{f"MPI_{k}_create_errhandler": ("errhandler_create", f'{ERRHANDLER}::{k}, "{{name}}"')
       for k in ("Comm", "Win", "File", "Session")},
    **{f"MPIX_{k}_create_errhandler": ("errhandler_create_x", f'{ERRHANDLER}::{k}, "{{name}}"')
       for k in ("Comm", "Win", "File", "Session")},
    **{f"MPI_{k}_create_keyval": ("keyval_create", f'{KEYVAL}::{k}, "{{name}}"')
       for k in ("Comm", "Type", "Win")},
    **{f"MPIX_{k}_create_keyval": ("keyval_create_x", f'{KEYVAL}::{k}, "{{name}}"')
       for k in ("Comm", "Type", "Win")},
    **{f"MPI_{k}_free_keyval": ("keyval_free", f'{KEYVAL}::{k}, "{{name}}"')
       for k in ("Comm", "Type", "Win")},
    "MPI_Keyval_create": ("keyval_create", f'{KEYVAL}::Comm, "{{name}}"'),
    **{f"MPI_T_category_get_{what}": ("category_items", f'"{{name}}", weft_core::tools::category_{list}')
       for what, list in (("cvars", "cvars"), ("pvars", "pvars"),
                          ("categories", "subcategories"), ("events", "events"))},
    "MPI_Keyval_free": ("keyval_free", f'{KEYVAL}::Comm, "{{name}}"'),
    "MPI_Waitsome": ("some_impl", 'true, "{name}"'),
    "MPI_Testsome": ("some_impl", 'false, "{name}"'),
    "MPI_Group_union": ("set_op", '"{name}", weft_core::object::Group::union'),
    "MPI_Group_intersection": ("set_op", '"{name}", weft_core::object::Group::intersection'),
    "MPI_Group_difference": ("set_op", '"{name}", weft_core::object::Group::difference'),
    "MPI_Group_incl": ("subset", '"{name}", "ranks", weft_core::object::Group::incl'),
    "MPI_Group_excl": ("subset", '"{name}", "ranks", weft_core::object::Group::excl'),
    "MPI_Group_range_incl": (
        "subset", '"{name}", "ranges", weft_core::object::Group::range_incl'),
    "MPI_Group_range_excl": (
        "subset", '"{name}", "ranges", weft_core::object::Group::range_excl'),
    "MPI_Type_indexed": ("indexed", 'false, "{name}"'),
    "MPI_Type_create_hindexed": ("indexed", 'true, "{name}"'),
    "MPI_Type_create_indexed_block": ("indexed", 'false, "{name}"'),
    "MPI_Type_create_hindexed_block": ("indexed", 'true, "{name}"'),
    "MPIX_Allgather_enqueue": ("exchange_enqueue", 'false, crate::api::coll_data::allgather, "{name}"'),
    "MPIX_Alltoall_enqueue": ("exchange_enqueue", 'true, crate::api::coll_data::alltoall, "{name}"'),
    "MPI_T_pvar_read": ("pvar_read_into", 'false, "{name}"'),
    "MPI_T_pvar_readreset": ("pvar_read_into", 'true, "{name}"'),
    "MPI_Publish_name": ("service_name_call", '"{name}", weft_core::runtime::names::publish'),
    "MPI_Unpublish_name": ("service_name_call", '"{name}", weft_core::runtime::names::unpublish'),
    "MPI_Type_create_f90_real": ("f90_floating", 'false, "{name}"'),
    "MPI_Type_create_f90_complex": ("f90_floating", 'true, "{name}"'),
    "MPI_Get_count": ("status_count", '"{name}", crate::api::requests::whole_count'),
    "MPI_Get_elements": ("status_count", '"{name}", weft_core::datatype::Type::elements_in'),
    "MPIX_Send_enqueue": ("send_enqueue", '(), "{name}"'),
    "MPIX_Isend_enqueue": ("send_enqueue", '"{name}"'),
    "MPIX_Recv_enqueue": ("recv_enqueue", '"{name}"'),
    "MPIX_Irecv_enqueue": ("recv_enqueue", '"{name}"'),
    "MPI_Psend_init": ("partitioned_init", "true"),
    "MPI_Precv_init": ("partitioned_init", "false"),
    **{f"MPI_{k}_{call}_buffer": (impl, f'crate::api::buffered::Holder::{k}, "{{name}}"')
       for k in ("Comm", "Session")
       for call, impl in (("attach", "holder_attach"), ("detach", "holder_detach"),
                          ("flush", "holder_flush"), ("iflush", "holder_iflush"))},
    **{f"MPI_{k}_{call}_errhandler": (impl, f'crate::api::errors::Holder::{k}, "{{name}}"')
       for k in ("Comm", "Win", "File", "Session")
       for call, impl in (("set", "set_errhandler"), ("get", "get_errhandler"),
                          ("call", "holder_call_errhandler"))},
    "MPI_Win_allocate": ("win_allocate", 'Flavor::Allocate, "{name}"'),
    "MPI_Win_allocate_shared": ("win_allocate", 'Flavor::Shared, "{name}"'),
}


# Forwards of the int form alone (the fast paths of blocking collectives; the `_c` twin goes
# through its family): name -> (implementation, the arguments after the C ones).
INT_FORWARDS = {
    **{f"MPI_{k}": ("all_reduce_blocking", f'"{{name}}", crate::api::coll::AllKind::{k}')
       for k in ("Allreduce", "Scan", "Exscan")},
    "MPI_Allgather": (
        "all_blocks_blocking",
        'false, weft_core::coll::allgather, crate::api::coll_data::allgather, "{name}"'),
    "MPI_Alltoall": (
        "all_blocks_blocking",
        'true, weft_core::coll::alltoall, crate::api::coll_data::alltoall, "{name}"'),
}


# Forwards of one form alone, by its full name (the other form has other parameters and an
# implementation of its own): name -> (implementation, the arguments after the C ones).
ONE_FORM_FORWARDS = {
    "MPI_Type_get_contents_c": ("type_contents", '"{name}", true'),
    "MPI_Type_get_envelope_c": ("type_envelope", '"{name}"'),
}


def forward_of(name):
    """The shared implementation and trailing arguments of a forwarded function, or None."""
    for table in (INT_FORWARDS, ONE_FORM_FORWARDS):
        if name in table:
            impl, tail = table[name]
            return impl, tail.replace("{name}", name)
    base = re.sub(r"_(c|x)$", "", name)
    if base not in FORWARDS:
        return None
    impl, tail = FORWARDS[base]
    return impl, tail.replace("{name}", name)


def forward_arg(p):
    """A forwarded call's argument: a user function as its address (see FORWARDS)."""
    name = rust_ident(p.name)
    if rust_type(p).startswith("Option<") and p.base != "MPIX_Destructor_function":
        return f"{name}.map(|f| f as usize)"
    return name


def twin_key(name):
    """The shared implementation of a function, its `_c` twin and its MPI-3 `_x` form:
    `MPI_Type_size_c` -> `type_size`."""
    base = re.sub(r"^(MPI|MPIX)_", "", name)
    return re.sub(r"_(c|x)$", "", base).lower()


def render_rust(funcs, exports):
    direct, shared = find_implementations()
    forms = family_forms(exports)
    out = [
        "// Generated by api/gen.py: every exported PMPI_ entry point. Do not edit.",
        "#![allow(non_snake_case, non_camel_case_types, clippy::too_many_arguments, clippy::missing_safety_doc, unused_variables)]",
        "use crate::api::family::{self, Mode};",
        "use crate::api::file::access::{self, Form, Ptr};",
        "use crate::api::rma_args::{Dir, Origin, TargetArgs, Then};",
        "use weft_core::object::win::Flavor;",
        "use crate::boundary::{call, direct, read_handle, tool_call, unsupported, Scope};",
        "use crate::constants::*;",
        "use crate::ctypes::*;",
        "use std::ffi::{c_char, c_double, c_int, c_void};",
        "",
    ]
    missing = []
    for name in exports:
        f = funcs[name]
        if f.variadic:
            continue  # written in C (crates/weft-abi/c/variadic.c)
        args = ", ".join(f"{rust_ident(p.name)}: {rust_type(p)}" for p in f.params)
        call_args = ", ".join(rust_ident(p.name) for p in f.params)
        body, is_unsafe = None, False
        if forward_of(name) is not None:
            impl, tail = forward_of(name)
            module, fname, is_unsafe = shared[impl]
            forwarded = ", ".join(forward_arg(p) for p in f.params)
            body = f"{module}::{fname}({forwarded}, {tail})"
        elif name.lower() in direct:
            module, fname, is_unsafe = direct[name.lower()]
            body = f"{module}::{fname}({call_args})"
        elif file_access_call(f) is not None:
            body, is_unsafe = file_access_call(f), True
        elif rma_form_call(f, shared) is not None:
            body, is_unsafe = rma_form_call(f, shared)
        elif name in forms and FAMILIES[forms[name][0]][0] in shared:
            impl = shared[FAMILIES[forms[name][0]][0]]
            body = family_call(f, funcs, impl, *forms[name])
            is_unsafe = impl[2] or forms[name][1] != "blocking"
        elif twin_key(name) in shared and not is_direct(f):
            module, fname, is_unsafe = shared[twin_key(name)]
            sep = ", " if call_args else ""
            body = f'{module}::{fname}({call_args}{sep}"{name}")'
        if body is not None and is_unsafe:
            body = f"unsafe {{ {body} }}"
        # A call with no arguments is passed as the function itself (clippy: redundant closure).
        closure = f"|| {body}"
        if body is not None and not is_unsafe and body.endswith("()"):
            closure = body[:-2]
        out.append("#[no_mangle]")
        out.append(f"pub unsafe extern \"C\" fn P{name}({args}) -> {rust_ret(f.ret)} {{")
        if is_direct(f):
            if body is None:
                sys.exit(f"gen.py: {name} returns a value, not an error code: it needs an implementation")
            if is_unsafe:
                out.append(f"    // SAFETY: the caller passes arguments as the MPI standard specifies for {name}.")
            out.append(f"    direct(\"{name}\", {closure})")
        elif body is None:
            missing.append(name)
            scope = error_scope(f)
            if "unsafe {" in scope:
                out.append(f"    // SAFETY: the caller passes arguments as the MPI standard specifies for {name}.")
            out.append(f"    unsupported(\"{name}\", {scope})")
        else:
            if is_unsafe or "unsafe {" in error_scope(f):
                out.append(f"    // SAFETY: the caller passes arguments as the MPI standard specifies for {name}.")
            if name.startswith("MPI_T_"):
                out.append(f"    tool_call(\"{name}\", {closure})")
            else:
                out.append(f"    call(\"{name}\", {error_scope(f)}, {closure})")
        out.append("}")
        out.append("")
    if not missing:
        # Everything is implemented: the fallback is not called (keep the import warning-free).
        at = out.index("use crate::boundary::{call, direct, read_handle, tool_call, unsupported, Scope};")
        out[at] = "use crate::boundary::{call, direct, read_handle, tool_call, Scope};"
    stale = set(direct) - {n.lower() for n in exports}
    if stale:
        sys.exit(f"gen.py: implementations of functions that are not exported: {sorted(stale)}")
    out.append("/// Exported functions that are not implemented yet (they return MPI_ERR_UNSUPPORTED_OPERATION).")
    out.append("pub const UNIMPLEMENTED: &[&str] = &[")
    out.extend(f"    \"{n}\"," for n in missing)
    out.append("];")
    out.append("")
    out.append(f"/// Number of exported MPI/MPIX functions.")
    out.append(f"pub const EXPORTED_FUNCTIONS: usize = {len(exports)};")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- C forwarders, version script


def render_forwarders(funcs, exports):
    out = [
        "/* Generated by api/gen.py: weak MPI_X symbols forwarding to the strong PMPI_X entry",
        " * points, so that a profiling tool may define MPI_X and call PMPI_X. Do not edit. */",
        '#include "mpi.h"',
        "",
        gen_qmpi.FORWARDERS_TOP,
    ]
    for name in exports:
        f = funcs[name]
        if f.variadic:
            continue
        out.append(f"#pragma weak {name}")
        out.append(f"{f.c_proto(name)} {gen_qmpi.forwarder_body(f, name)}")
        out.append("")
    return "\n".join(out)


def render_version_script(funcs, exports):
    lines = ["/* Generated by api/gen.py: the symbols libmpi_abi.so.1 exports. Do not edit. */", "{", "  global:"]
    for name in exports:
        lines.append(f"    {name};")
        lines.append(f"    P{name};")
    for name in gen_qmpi.chained(funcs, exports):
        lines.append(f"    Q{name};")
    lines += [f"    {name};" for name in gen_qmpi.REGISTRATION]
    lines += ["  local:", "    *;", "};", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------- main


def outputs():
    funcs = load_standard()
    mpix = load_mpix()
    overlap = set(funcs) & set(mpix)
    if overlap:
        sys.exit(f"gen.py: MPIX description redefines standard functions: {sorted(overlap)}")
    funcs.update(mpix)
    exports = load_exports(funcs)
    return {
        ROOT / "include" / "mpi.h": render_header(funcs, exports),
        ABI_SRC / "generated" / "entry_points.rs": render_rust(funcs, exports),
        ABI_SRC / "generated" / "constants.rs": rust_constants(),
        ROOT / "crates" / "weft-abi" / "c" / "forwarders.c": render_forwarders(funcs, exports),
        ROOT / "crates" / "weft-abi" / "c" / "libmpi_abi.map": render_version_script(funcs, exports),
        ROOT / "crates" / "weft-abi" / "c" / "qmpi.c": gen_qmpi.render_builtins(
            funcs, exports, lambda f: not is_direct(f) and not f.name.startswith("MPI_T_")),
        ABI_SRC / "generated" / "qmpi.rs": gen_qmpi.rust_count(funcs, exports),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="fail if a generated file would change")
    args = ap.parse_args()
    stale = []
    for path, text in outputs().items():
        old = path.read_text() if path.exists() else ""
        if old == text:
            continue
        if args.check:
            stale.append(path)
            diff = difflib.unified_diff(old.splitlines(), text.splitlines(), str(path), "regenerated", lineterm="", n=1)
            sys.stderr.write("\n".join(list(diff)[:40]) + "\n")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"gen.py: wrote {path.relative_to(ROOT)}")
    if stale:
        sys.exit("gen.py --check: generated files are out of date: " + ", ".join(str(p.relative_to(ROOT)) for p in stale))


if __name__ == "__main__":
    main()
