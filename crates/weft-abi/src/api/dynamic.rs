//! Dynamic processes: `MPI_Comm_spawn(_multiple)`, `MPI_Comm_get_parent`, ports,
//! `MPI_Comm_accept`/`connect`, the name service, `MPI_Comm_join`, `MPI_Comm_disconnect`
//! (the core's `runtime::{spawn, port, names}` and `object::connect`).
//!
//! Arguments significant at the root only are checked there; a wrong one fails the call on
//! every process of the communicator (the core's handshake carries the root's error), so
//! no process waits for a root that gave up.

use std::ffi::{c_char, c_int};
use std::io::{Read, Write};
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};

use weft_core::error::MpiResult;
use weft_core::mpi_err;
use weft_core::object::connect::{handshake, Link};
use weft_core::object::Comm;
use weft_core::runtime::spawn::{self, Program, RootPort};
use weft_core::runtime::{names, port, world};

use crate::api::coll_args::root_of;
use crate::args::{c_str, copy_out_str, non_null};
use crate::constants::*;
use crate::ctypes::*;
use crate::objects::{self, info_object, out_comm};

/// The intracommunicator and root of a call with a root (`MPI_ERR_COMM`, `MPI_ERR_ROOT`).
fn comm_and_root(comm: MPI_Comm, root: c_int, func: &str) -> MpiResult<(Arc<Comm>, u32)> {
    let c = objects::comm(comm, func, "comm")?;
    if c.is_inter() {
        return Err(mpi_err!(
            Comm,
            "{func}(comm): an intracommunicator is required"
        ));
    }
    let root = root_of(&c, root, func)?;
    Ok((c, root))
}

/// The value of `key` in `info` (`MPI_INFO_NULL`: none).
fn info_value(info: MPI_Info, key: &str, func: &str) -> MpiResult<Option<String>> {
    if info == MPI_INFO_NULL {
        return Ok(None);
    }
    Ok(info_object(info, func)?.get(key))
}

/// Check an info argument (`MPI_INFO_NULL` or a valid info).
fn check_info(info: MPI_Info, func: &str) -> MpiResult<()> {
    info_value(info, "", func).map(|_| ())
}

/// The `timeout` info key of `MPI_Comm_connect`: whole seconds to wait for the accept (0: no
/// limit), as MPICH reads it; `None` when absent.
fn connect_timeout(info: MPI_Info, func: &str) -> MpiResult<Option<u64>> {
    let Some(value) = info_value(info, "timeout", func)? else {
        return Ok(None);
    };
    value.trim().parse::<u64>().map(Some).map_err(|_| {
        mpi_err!(
            InfoValue,
            "{func}(info): timeout=\"{value}\" is not a number of seconds"
        )
    })
}

/// A NULL-terminated `argv` (`MPI_ARGV_NULL`: none).
///
/// # Safety
/// `argv` is null or a null-terminated array of NUL-terminated strings.
unsafe fn argv_of(argv: *const *mut c_char, func: &str) -> MpiResult<Vec<String>> {
    let mut out = Vec::new();
    if argv.is_null() {
        return Ok(out);
    }
    for i in 0.. {
        // SAFETY: null-terminated per the caller's guarantee; reading stops at the null.
        let a = unsafe { *argv.add(i) };
        if a.is_null() {
            break;
        }
        // SAFETY: a NUL-terminated string per the caller's guarantee.
        out.push(unsafe { c_str(a, func, "argv") }?.into_owned());
    }
    Ok(out)
}

/// One command of a spawn, read at the root.
///
/// # Safety
/// As `argv_of`; `command` null or NUL-terminated.
unsafe fn program(
    command: *const c_char,
    argv: *const *mut c_char,
    maxprocs: c_int,
    info: MPI_Info,
    func: &str,
) -> MpiResult<Program> {
    // SAFETY: the caller's guarantee.
    let command = unsafe { c_str(command, func, "command") }?.into_owned();
    if maxprocs <= 0 {
        return Err(mpi_err!(
            Arg,
            "{func}(maxprocs={maxprocs}): at least one process must be asked for"
        ));
    }
    Ok(Program {
        command,
        // SAFETY: the caller's guarantee.
        args: unsafe { argv_of(argv, func) }?,
        maxprocs: maxprocs as u32,
        wdir: info_value(info, "wdir", func)?,
        path: info_value(info, "path", func)?,
        host: info_value(info, "host", func)?,
    })
}

/// Write the per-process error codes (`MPI_ERRCODES_IGNORE`: none): `n` of `code`.
///
/// # Safety
/// `errcodes` null or valid for `n` ints.
unsafe fn write_errcodes(errcodes: *mut c_int, n: usize, code: c_int) {
    if errcodes.is_null() {
        return;
    }
    for i in 0..n {
        // SAFETY: the caller's guarantee.
        unsafe { errcodes.add(i).write(code) };
    }
}

/// Finish a spawn: the handle and error codes on success; on failure the root's codes
/// (`n` processes asked for) say `MPI_ERR_SPAWN`.
///
/// # Safety
/// `intercomm` valid; `errcodes` null or valid for the processes asked for.
unsafe fn finish_spawn(
    result: MpiResult<Arc<Comm>>,
    intercomm: *mut MPI_Comm,
    errcodes: *mut c_int,
    asked: Option<usize>,
) -> MpiResult<()> {
    match result {
        Ok(c) => {
            let n = c.peer_size() as usize;
            // SAFETY: the caller's guarantee.
            unsafe {
                write_errcodes(errcodes, asked.map_or(n, |a| a.min(n)), MPI_SUCCESS);
                out_comm(intercomm, Some(c));
            }
            Ok(())
        }
        Err(e) => {
            if let Some(n) = asked {
                // SAFETY: the caller's guarantee.
                unsafe { write_errcodes(errcodes, n, MPI_ERR_SPAWN) };
            }
            Err(e)
        }
    }
}

pub(crate) unsafe fn mpi_comm_spawn(
    command: *const c_char,
    argv: *mut *mut c_char,
    maxprocs: c_int,
    info: MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    intercomm: *mut MPI_Comm,
    array_of_errcodes: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Comm_spawn";
    let (c, root) = comm_and_root(comm, root, func)?;
    non_null(intercomm, func, "intercomm")?;
    let at_root = c.rank == root;
    let programs = at_root.then(|| {
        // SAFETY: the caller passes C strings and a null-terminated argv.
        unsafe { program(command, argv, maxprocs, info, func) }.map(|p| vec![p])
    });
    let asked = (at_root || maxprocs > 0).then_some(maxprocs.max(0) as usize);
    let result = spawn::spawn(&c, root, programs, func);
    // SAFETY: checked non-null; errcodes holds maxprocs ints or is MPI_ERRCODES_IGNORE.
    unsafe { finish_spawn(result, intercomm, array_of_errcodes, asked) }
}

pub(crate) unsafe fn mpi_comm_spawn_multiple(
    count: c_int,
    array_of_commands: *mut *mut c_char,
    array_of_argv: *mut *mut *mut c_char,
    array_of_maxprocs: *const c_int,
    array_of_info: *const MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    intercomm: *mut MPI_Comm,
    array_of_errcodes: *mut c_int,
) -> MpiResult<()> {
    let func = "MPI_Comm_spawn_multiple";
    let (c, root) = comm_and_root(comm, root, func)?;
    non_null(intercomm, func, "intercomm")?;
    let read = || -> MpiResult<Vec<Program>> {
        if count <= 0 {
            return Err(mpi_err!(
                Arg,
                "{func}(count={count}): at least one command is required"
            ));
        }
        non_null(array_of_commands, func, "array_of_commands")?;
        non_null(array_of_maxprocs, func, "array_of_maxprocs")?;
        non_null(array_of_info, func, "array_of_info")?;
        (0..count as usize)
            .map(|i| {
                // MPI_ARGVS_NULL is null.
                // SAFETY: the arrays hold `count` entries (checked non-null).
                unsafe {
                    let argv = if array_of_argv.is_null() {
                        std::ptr::null_mut()
                    } else {
                        *array_of_argv.add(i)
                    };
                    program(
                        *array_of_commands.add(i),
                        argv,
                        *array_of_maxprocs.add(i),
                        *array_of_info.add(i),
                        func,
                    )
                }
            })
            .collect()
    };
    let programs = (c.rank == root).then(read);
    let asked = match &programs {
        Some(Ok(p)) => Some(p.iter().map(|p| p.maxprocs as usize).sum()),
        _ => None,
    };
    let result = spawn::spawn(&c, root, programs, func);
    // SAFETY: checked non-null; errcodes holds the total of maxprocs or is ignored.
    unsafe { finish_spawn(result, intercomm, array_of_errcodes, asked) }
}

/// The handle `MPI_Comm_get_parent` gives (made once; `MPI_COMM_NULL` after it is freed).
static PARENT: Mutex<Option<MPI_Comm>> = Mutex::new(None);

/// `MPI_Comm_get_parent`: the intercommunicator to the job that spawned this one, or
/// `MPI_COMM_NULL` (not spawned, or the program freed or disconnected it).
pub(crate) unsafe fn mpi_comm_get_parent(parent: *mut MPI_Comm) -> MpiResult<()> {
    let func = "MPI_Comm_get_parent";
    non_null(parent, func, "parent")?;
    let mut kept = PARENT.lock().unwrap_or_else(|p| p.into_inner());
    let h = match *kept {
        Some(h) if objects::comm_local(h, func, "parent").is_ok() => h,
        Some(_) => MPI_COMM_NULL,
        None => match spawn::take_parent() {
            Some(c) => {
                let h = objects::comm_handle(Some(c));
                *kept = Some(h);
                h
            }
            None => MPI_COMM_NULL,
        },
    };
    // SAFETY: checked non-null.
    unsafe { parent.write(h) };
    Ok(())
}

pub(crate) unsafe fn mpi_open_port(info: MPI_Info, port_name: *mut c_char) -> MpiResult<()> {
    let func = "MPI_Open_port";
    check_info(info, func)?;
    non_null(port_name, func, "port_name")?;
    let w = world::get(func)?;
    let name = port::open(&w.session.instance)?;
    // SAFETY: the standard asks for a buffer of MPI_MAX_PORT_NAME bytes.
    unsafe {
        copy_out_str(
            &name,
            port_name,
            MPI_MAX_PORT_NAME as usize,
            std::ptr::null_mut(),
            func,
            "port_name",
        )
    }
}

pub(crate) unsafe fn mpi_close_port(port_name: *const c_char) -> MpiResult<()> {
    // SAFETY: a NUL-terminated string per the standard.
    let name = unsafe { c_str(port_name, "MPI_Close_port", "port_name") }?;
    port::close(&name)
}

/// `MPI_Comm_accept` and `MPI_Comm_connect` (`api/gen.py` passes `accepting` and the name).
///
/// # Safety
/// `port_name` NUL-terminated at the root; `newcomm` valid.
pub(crate) unsafe fn accept_or_connect(
    port_name: *const c_char,
    info: MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    newcomm: *mut MPI_Comm,
    accepting: bool,
    func: &str,
) -> MpiResult<()> {
    let (c, root) = comm_and_root(comm, root, func)?;
    non_null(newcomm, func, "newcomm")?;
    let port = (c.rank == root).then(|| {
        let timeout_s = if accepting {
            check_info(info, func)?;
            None
        } else {
            connect_timeout(info, func)?
        };
        // SAFETY: the caller's guarantee.
        let name = unsafe { c_str(port_name, func, "port_name") }?.into_owned();
        Ok(RootPort { name, timeout_s })
    });
    let new = spawn::accept_or_connect(&c, root, port, accepting, func)?;
    // SAFETY: checked non-null.
    unsafe { out_comm(newcomm, Some(new)) };
    Ok(())
}

/// The service and port names of the name-service calls, and the configuration.
///
/// # Safety
/// Both strings NUL-terminated.
unsafe fn service_args(
    service_name: *const c_char,
    info: MPI_Info,
    port_name: Option<*const c_char>,
    func: &str,
) -> MpiResult<(String, String, Arc<weft_core::instance::Instance>)> {
    check_info(info, func)?;
    // SAFETY: the caller's guarantee.
    let service = unsafe { c_str(service_name, func, "service_name") }?.into_owned();
    let port = match port_name {
        // SAFETY: the caller's guarantee.
        Some(p) => unsafe { c_str(p, func, "port_name") }?.into_owned(),
        None => String::new(),
    };
    let inst = world::get(func)?.session.instance.clone();
    Ok((service, port, inst))
}

/// `MPI_Publish_name` and `MPI_Unpublish_name` (forwarded by api/gen.py): `op` on the checked
/// names.
///
/// # Safety
/// Both strings NUL-terminated.
pub(crate) unsafe fn service_name_call(
    service_name: *const c_char,
    info: MPI_Info,
    port_name: *const c_char,
    func: &str,
    op: fn(&weft_core::config::Config, &str, &str) -> MpiResult<()>,
) -> MpiResult<()> {
    // SAFETY: the caller's guarantee.
    let (s, p, inst) = unsafe { service_args(service_name, info, Some(port_name), func) }?;
    op(&inst.config, &s, &p)
}

pub(crate) unsafe fn mpi_lookup_name(
    service_name: *const c_char,
    info: MPI_Info,
    port_name: *mut c_char,
) -> MpiResult<()> {
    let func = "MPI_Lookup_name";
    // SAFETY: the caller passes a NUL-terminated string.
    let (s, _, inst) = unsafe { service_args(service_name, info, None, func) }?;
    non_null(port_name, func, "port_name")?;
    let port = names::lookup(&inst.config, &s)?;
    // SAFETY: the standard asks for a buffer of MPI_MAX_PORT_NAME bytes.
    unsafe {
        copy_out_str(
            &port,
            port_name,
            MPI_MAX_PORT_NAME as usize,
            std::ptr::null_mut(),
            func,
            "port_name",
        )
    }
}

/// The program's socket, borrowed: reads and writes go to its descriptor, which is never
/// closed here.
struct Borrowed(ManuallyDrop<UnixStream>);

impl Read for Borrowed {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for Borrowed {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// `MPI_Comm_join`: the two processes at the ends of the connected socket `fd` (either
/// kind of stream socket) become an intercommunicator of one process each.
pub(crate) unsafe fn mpi_comm_join(fd: c_int, intercomm: *mut MPI_Comm) -> MpiResult<()> {
    let func = "MPI_Comm_join";
    non_null(intercomm, func, "intercomm")?;
    if fd < 0 {
        return Err(mpi_err!(Arg, "{func}(fd={fd}): not a socket descriptor"));
    }
    let me = objects::comm(MPI_COMM_SELF, func, "MPI_COMM_SELF")?;
    // `ManuallyDrop` never closes it, and only read and write are used on it while the call runs.
    // SAFETY: `fd` is the program's open socket.
    let mut stream = Borrowed(ManuallyDrop::new(unsafe { UnixStream::from_raw_fd(fd) }));
    let new = handshake(&me, 0, Some(Ok(&mut stream as &mut dyn Link)), func)?;
    // SAFETY: checked non-null.
    unsafe { out_comm(intercomm, Some(new)) };
    Ok(())
}
