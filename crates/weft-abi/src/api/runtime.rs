//! Initialization, finalization, thread levels, versions and abort.

use std::ffi::{c_char, c_int};

use weft_core::error::MpiResult;
use weft_core::instance::ThreadLevel;
use weft_core::mpi_err;
use weft_core::runtime::world;

use crate::args::{copy_out_str, write};
use crate::constants::*;
use crate::ctypes::*;
use crate::objects;

/// Library version text (`MPI_Get_library_version`).
pub const LIBRARY_VERSION: &str = concat!(
    "Weft ",
    env!("CARGO_PKG_VERSION"),
    " (MPI 5.0 standard ABI)"
);

fn thread_level(value: c_int, func: &str) -> MpiResult<ThreadLevel> {
    match value {
        MPI_THREAD_SINGLE => Ok(ThreadLevel::Single),
        MPI_THREAD_FUNNELED => Ok(ThreadLevel::Funneled),
        MPI_THREAD_SERIALIZED => Ok(ThreadLevel::Serialized),
        MPI_THREAD_MULTIPLE => Ok(ThreadLevel::Multiple),
        other => Err(mpi_err!(
            Arg,
            "{func}(required={other}): not an MPI_THREAD_* level"
        )),
    }
}

pub(crate) fn thread_level_value(level: ThreadLevel) -> c_int {
    match level {
        ThreadLevel::Single => MPI_THREAD_SINGLE,
        ThreadLevel::Funneled => MPI_THREAD_FUNNELED,
        ThreadLevel::Serialized => MPI_THREAD_SERIALIZED,
        ThreadLevel::Multiple => MPI_THREAD_MULTIPLE,
    }
}

/// `MPI_Init`'s world; with `WEFT_STATS` or `WEFT_TRACE` on, every call is measured from now on.
fn init_world(level: ThreadLevel) -> MpiResult<ThreadLevel> {
    let provided = world::init(level)?;
    if weft_core::stats::measured() {
        crate::qmpi::measure_calls();
    }
    Ok(provided)
}

pub(crate) unsafe fn mpi_init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> MpiResult<()> {
    init_world(ThreadLevel::Single).map(|_| ())
}

pub(crate) unsafe fn mpi_init_thread(
    _argc: *mut c_int,
    _argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> MpiResult<()> {
    crate::args::non_null(provided, "MPI_Init_thread", "provided")?;
    let level = init_world(thread_level(required, "MPI_Init_thread")?)?;
    // SAFETY: checked non-null above; the caller passes a valid int pointer.
    unsafe {
        write(
            provided,
            thread_level_value(level),
            "MPI_Init_thread",
            "provided",
        )
    }
}

pub(crate) fn mpi_finalize() -> MpiResult<()> {
    // Operations still queued on offload streams run while the world is there; an error
    // one of them left is reported once the world has ended.
    let drained = crate::api::stream::drain_offload_streams();
    crate::api::attr::finalize_attrs()?;
    crate::api::stream::stop_implicit_progress();
    world::finalize()?;
    drained
}

pub(crate) unsafe fn mpi_initialized(flag: *mut c_int) -> MpiResult<()> {
    // SAFETY: the caller passes a valid int pointer (checked for null).
    unsafe {
        write(
            flag,
            world::initialized() as c_int,
            "MPI_Initialized",
            "flag",
        )
    }
}

pub(crate) unsafe fn mpi_finalized(flag: *mut c_int) -> MpiResult<()> {
    // SAFETY: as above.
    unsafe { write(flag, world::finalized() as c_int, "MPI_Finalized", "flag") }
}

pub(crate) unsafe fn mpi_query_thread(provided: *mut c_int) -> MpiResult<()> {
    let w = world::get("MPI_Query_thread")?;
    // SAFETY: as above.
    unsafe {
        write(
            provided,
            thread_level_value(w.provided),
            "MPI_Query_thread",
            "provided",
        )
    }
}

pub(crate) unsafe fn mpi_is_thread_main(flag: *mut c_int) -> MpiResult<()> {
    let w = world::get("MPI_Is_thread_main")?;
    let main = std::thread::current().id() == w.main_thread;
    // SAFETY: as above.
    unsafe { write(flag, main as c_int, "MPI_Is_thread_main", "flag") }
}

pub(crate) fn mpi_abort(comm: MPI_Comm, errorcode: c_int) -> MpiResult<()> {
    // An invalid communicator does not stop an abort: the whole job ends either way.
    let comm = objects::comm_for_errors(comm);
    let rank = comm
        .as_ref()
        .map(|c| c.rank.to_string())
        .unwrap_or_else(|| "?".into());
    let message = format!("MPI_Abort called on rank {rank} with error code {errorcode}");
    eprintln!("Weft: {message}");
    match comm {
        Some(c) => c.session.instance.abort_job(errorcode, &message),
        None => weft_core::instance::abort_without_instance(errorcode),
    }
}

pub(crate) unsafe fn mpi_get_version(version: *mut c_int, subversion: *mut c_int) -> MpiResult<()> {
    crate::args::non_null(subversion, "MPI_Get_version", "subversion")?;
    // SAFETY: the caller passes valid int pointers (checked for null).
    unsafe {
        write(version, MPI_VERSION, "MPI_Get_version", "version")?;
        write(subversion, MPI_SUBVERSION, "MPI_Get_version", "subversion")
    }
}

pub(crate) unsafe fn mpi_get_library_version(
    version: *mut c_char,
    resultlen: *mut c_int,
) -> MpiResult<()> {
    crate::args::non_null(resultlen, "MPI_Get_library_version", "resultlen")?;
    let capacity = MPI_MAX_LIBRARY_VERSION_STRING as usize;
    // SAFETY: the standard requires a buffer of MPI_MAX_LIBRARY_VERSION_STRING bytes.
    unsafe {
        copy_out_str(
            LIBRARY_VERSION,
            version,
            capacity,
            resultlen,
            "MPI_Get_library_version",
            "version",
        )
    }
}

pub(crate) unsafe fn mpi_get_processor_name(
    name: *mut c_char,
    resultlen: *mut c_int,
) -> MpiResult<()> {
    crate::args::non_null(resultlen, "MPI_Get_processor_name", "resultlen")?;
    let w = world::get("MPI_Get_processor_name")?;
    let capacity = MPI_MAX_PROCESSOR_NAME as usize;
    // SAFETY: the standard requires a buffer of MPI_MAX_PROCESSOR_NAME bytes.
    unsafe {
        copy_out_str(
            &w.session.instance.processor_name,
            name,
            capacity,
            resultlen,
            "MPI_Get_processor_name",
            "name",
        )
    }
}

pub(crate) unsafe fn mpi_abi_get_version(
    abi_major: *mut c_int,
    abi_minor: *mut c_int,
) -> MpiResult<()> {
    crate::args::non_null(abi_minor, "MPI_Abi_get_version", "abi_minor")?;
    // SAFETY: the caller passes valid int pointers (checked for null).
    unsafe {
        write(
            abi_major,
            MPI_ABI_VERSION,
            "MPI_Abi_get_version",
            "abi_major",
        )?;
        write(
            abi_minor,
            MPI_ABI_SUBVERSION,
            "MPI_Abi_get_version",
            "abi_minor",
        )
    }
}

pub(crate) unsafe fn mpi_abi_get_info(info: *mut MPI_Info) -> MpiResult<()> {
    crate::args::non_null(info, "MPI_Abi_get_info", "info")?;
    let pairs = [
        ("mpi_aint_size", std::mem::size_of::<MPI_Aint>()),
        ("mpi_count_size", std::mem::size_of::<MPI_Count>()),
        ("mpi_offset_size", std::mem::size_of::<MPI_Offset>()),
    ];
    let made = weft_core::object::Info::from_pairs(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    let handle = objects::INFOS.insert(std::sync::Arc::new(made));
    // SAFETY: checked non-null; the caller passes a valid MPI_Info pointer.
    unsafe { write(info, handle, "MPI_Abi_get_info", "info") }
}
