//! MPI-IO on POSIX file systems: files opened collectively (`file`), views (`view`) and data
//! representations (`datarep`), independent access (`rw`), collective access with two-phase
//! aggregation (`two_phase`), the shared file pointer in node shared memory (`shared`), and
//! nonblocking access as generalized requests over io_uring (`nb`, `uring`).
//!
//! This module sits above the collectives (it uses them for its exchanges) and below the
//! runtime; the ABI's `api/file/` decodes and validates the C arguments and calls the
//! functions here. Positions inside a view are kept in *stream bytes* (bytes of the view's
//! data, in file representation, from the view's start); the ABI's offsets are etypes.

pub mod config;
pub mod datarep;
pub mod errors;
mod exch;
pub mod file;
pub mod nb;
pub mod rw;
pub mod shared;
mod sys;
pub mod two_phase;
mod uring;
pub mod view;

use std::sync::Arc;

pub use file::{Amode, File};
pub use rw::{Conv, Mem};
pub use view::View;

use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::message::Status;
use crate::request::ReqId;

/// Where an access starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pointer {
    /// An explicit offset, in etypes of the view.
    At(u64),
    /// The individual file pointer (advanced by the access).
    Individual,
    /// The shared file pointer (advanced by the access).
    Shared,
}

/// A split collective begun (`_begin`) and not yet ended: its kind and outcome.
#[derive(Debug)]
pub struct Split {
    pub write: bool,
    pub ordered: bool,
    pub explicit: bool,
    pub result: MpiResult<Status>,
}

fn status(bytes: u64) -> Status {
    Status {
        bytes,
        ..Status::default()
    }
}

/// The access kinds `MPI_MODE_SEQUENTIAL` allows: shared file pointers only.
fn check_sequential(file: &File, ptr: Pointer, func: &str) -> MpiResult<()> {
    if file.amode.sequential && ptr != Pointer::Shared {
        return Err(MpiError::new(
            ErrorClass::UnsupportedOperation,
            format!(
                "{func}(\"{}\"): the file was opened with MPI_MODE_SEQUENTIAL: only shared file pointer accesses are allowed",
                file.name
            ),
        ));
    }
    Ok(())
}

/// The stream position an access starts at, advancing the pointer it uses by `len`.
fn claim(file: &File, view: &View, ptr: Pointer, len: u64) -> u64 {
    match ptr {
        Pointer::At(o) => view.etype_bytes(o),
        Pointer::Individual => {
            let mut st = file.state();
            let p = st.pos;
            st.pos = p + len;
            p
        }
        Pointer::Shared => file.shared.fetch_add(len),
    }
}

/// After a read that got `got` of `len` stream bytes: an individual pointer advances by what
/// was read, not what was asked.
fn settle(file: &File, ptr: Pointer, start: u64, len: u64, got: u64) {
    if ptr == Pointer::Individual && got < len {
        let mut st = file.state();
        if st.pos == start + len {
            st.pos = start + got;
        }
    }
}

/// A blocking access, independent or collective (`collective` with `Pointer::Shared` is not
/// a thing: ordered accesses use `ordered`).
pub fn access(
    file: &Arc<File>,
    ptr: Pointer,
    mem: Mem,
    write: bool,
    collective: bool,
    func: &str,
) -> MpiResult<Status> {
    check_sequential(file, ptr, func)?;
    let view = file.view();
    let len = mem.file_len();
    let pos = claim(file, &view, ptr, len);
    let (got, bytes) = if collective {
        two_phase::access_all(file, &view, pos, mem, write, func)?
    } else if write {
        (len, rw::write(file, &view, pos, &mem, func)?)
    } else {
        rw::read(file, &view, pos, &mem, func)?
    };
    if !write {
        settle(file, ptr, pos, len, got);
    }
    Ok(status(bytes))
}

/// `MPI_File_read_ordered`/`_write_ordered`: collective, in rank order at the shared file
/// pointer, which advances by everyone's total.
pub fn ordered(file: &Arc<File>, mem: Mem, write: bool, func: &str) -> MpiResult<Status> {
    let view = file.view();
    let len = mem.file_len();
    let all = exch::allgather(&file.comm, &[len])?;
    let before: u64 = all[..file.comm.rank as usize].iter().sum();
    let total: u64 = all.iter().sum();
    let mut base = [0u64];
    if file.comm.rank == 0 {
        base[0] = file.shared.fetch_add(total);
    }
    exch::bcast(&file.comm, 0, &mut base)?;
    let (_, bytes) = two_phase::access_all(file, &view, base[0] + before, mem, write, func)?;
    Ok(status(bytes))
}

/// A nonblocking access: independent ones run in the kernel (or in `poll_fn`), collective
/// ones step through their exchanges in `poll_fn`, while the program goes on.
pub fn iaccess(
    file: &Arc<File>,
    ptr: Pointer,
    mem: Mem,
    write: bool,
    collective: bool,
    owner: usize,
    func: &str,
) -> MpiResult<ReqId> {
    check_sequential(file, ptr, func)?;
    let view = file.view();
    let pos = claim(file, &view, ptr, mem.file_len());
    if collective {
        return nb::start_collective(file, &view, pos, mem, write, owner, func);
    }
    nb::start(file, &view, pos, mem, write, owner, func)
}

/// `MPI_File_seek` whence values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whence {
    Set,
    Cur,
    End,
}

/// The stream position `offset` etypes from `whence` (current: `cur` stream bytes).
fn seek_target(file: &File, offset: i64, whence: Whence, cur: u64, func: &str) -> MpiResult<u64> {
    let view = file.view();
    let base = match whence {
        Whence::Set => 0,
        Whence::Cur => (cur / view.esize) as i64,
        Whence::End => {
            let end = view.stream_bytes_before(file.size(func)?);
            end.div_ceil(view.esize) as i64
        }
    };
    let target = base
        .checked_add(offset)
        .filter(|&t| t >= 0)
        .ok_or_else(|| {
            MpiError::new(
                ErrorClass::Arg,
                format!("{func}(offset={offset}): the resulting position would be negative"),
            )
        })?;
    Ok(view.etype_bytes(target as u64))
}

/// `MPI_File_seek`.
pub fn seek(file: &File, offset: i64, whence: Whence, func: &str) -> MpiResult<()> {
    check_sequential(file, Pointer::Individual, func)?;
    let cur = file.state().pos;
    let to = seek_target(file, offset, whence, cur, func)?;
    file.state().pos = to;
    Ok(())
}

/// `MPI_File_seek_shared` (collective: the same arguments everywhere).
pub fn seek_shared(file: &File, offset: i64, whence: Whence, func: &str) -> MpiResult<()> {
    let w = whence as u64;
    let all = exch::allgather(&file.comm, &[offset as u64, w])?;
    if all.chunks(2).any(|c| c[0] != offset as u64 || c[1] != w) {
        return Err(MpiError::new(
            ErrorClass::NotSame,
            format!("{func}(offset, whence): the ranks passed different values"),
        ));
    }
    exch::barrier(&file.comm)?;
    let mut r = Ok(());
    if file.comm.rank == 0 {
        match seek_target(file, offset, whence, file.shared.load(), func) {
            Ok(to) => file.shared.store(to),
            Err(e) => r = Err(e),
        }
    }
    exch::barrier(&file.comm)?;
    r
}

/// `MPI_File_get_position`: the individual pointer in etypes.
pub fn position(file: &File) -> u64 {
    let st = file.state();
    st.pos / st.view.esize
}

/// `MPI_File_get_position_shared`.
pub fn position_shared(file: &File) -> u64 {
    file.shared.load() / file.view().esize
}

/// `MPI_File_set_view` (collective): both file pointers go back to 0.
pub fn set_view(file: &File, view: View, func: &str) -> MpiResult<()> {
    let _ = func;
    exch::barrier(&file.comm)?;
    {
        let mut st = file.state();
        st.view = Arc::new(view);
        st.pos = 0;
    }
    if file.comm.rank == 0 {
        file.shared.store(0);
    }
    exch::barrier(&file.comm)
}

/// `MPI_File_get_byte_offset`: the absolute byte position of `offset` etypes in the view.
pub fn byte_offset(file: &File, offset: u64) -> u64 {
    let view = file.view();
    view.file_offset(view.etype_bytes(offset))
}

/// Begin a split collective: run it now and keep its outcome for `_end`.
pub fn split_begin(
    file: &Arc<File>,
    ptr: Option<Pointer>,
    mem: Mem,
    write: bool,
    func: &str,
) -> MpiResult<()> {
    let mut slot = file.split.lock().unwrap_or_else(|e| e.into_inner());
    if slot.is_some() {
        return Err(MpiError::new(
            ErrorClass::Other,
            format!(
                "{func}(\"{}\"): a split collective is already active on this file",
                file.name
            ),
        ));
    }
    drop(slot);
    let result = match ptr {
        Some(p) => access(file, p, mem, write, true, func),
        None => ordered(file, mem, write, func),
    };
    slot = file.split.lock().unwrap_or_else(|e| e.into_inner());
    *slot = Some(Split {
        write,
        ordered: ptr.is_none(),
        explicit: matches!(ptr, Some(Pointer::At(_))),
        result,
    });
    Ok(())
}

/// End a split collective of the given kind: its outcome.
pub fn split_end(
    file: &File,
    write: bool,
    ordered: bool,
    explicit: bool,
    func: &str,
) -> MpiResult<Status> {
    let mut slot = file.split.lock().unwrap_or_else(|e| e.into_inner());
    match slot.take() {
        Some(s) if s.write == write && s.ordered == ordered && s.explicit == explicit => s.result,
        other => {
            *slot = other;
            Err(MpiError::new(
                ErrorClass::Other,
                format!(
                    "{func}(\"{}\"): no matching split collective was begun",
                    file.name
                ),
            ))
        }
    }
}
