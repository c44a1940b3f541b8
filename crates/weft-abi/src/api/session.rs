//! MPI Sessions: init/finalize, process sets, session info and errhandlers.

use std::ffi::{c_char, c_int};
use std::sync::Arc;

use weft_core::error::{ErrorClass, MpiError, MpiResult};
use weft_core::instance::ThreadLevel;
use weft_core::mpi_err;
use weft_core::object::{comm, idup, ErrhandlerKind, Group, Info, Session};

use crate::api::errors::errhandler_for;
use crate::args::{c_str, non_null, write};
use crate::boundary::{clear_raise_on, raise_on, Scope};
use crate::constants::*;
use crate::ctypes::*;
use crate::objects;

/// The thread level a session gets when its info does not ask: the world's, if `MPI_Init`
/// ran (a library inside a threaded program expects the program's level), else single.
fn default_level() -> ThreadLevel {
    match weft_core::runtime::world::get_any() {
        Some(w) if weft_core::runtime::world::initialized() => w.provided,
        _ => ThreadLevel::Single,
    }
}

/// The thread level asked for in a session's info (`thread_level`), by name, and whether
/// `strict_finalize` is on.
fn requested(info: MPI_Info, func: &str) -> MpiResult<(ThreadLevel, bool)> {
    if info == MPI_INFO_NULL {
        return Ok((default_level(), false));
    }
    let i = objects::INFOS
        .get(info)
        .map_err(|why| mpi_err!(Info, "{func}(info={info:#x}): {}", why.describe()))?;
    let strict = matches!(
        i.get("strict_finalize").as_deref().map(str::trim),
        Some("true" | "1")
    );
    let level = match i.get("thread_level").as_deref().map(str::trim) {
        None => default_level(),
        Some("MPI_THREAD_SINGLE") => ThreadLevel::Single,
        Some("MPI_THREAD_FUNNELED") => ThreadLevel::Funneled,
        Some("MPI_THREAD_SERIALIZED") => ThreadLevel::Serialized,
        Some("MPI_THREAD_MULTIPLE") => ThreadLevel::Multiple,
        Some(other) => {
            return Err(mpi_err!(
                InfoValue,
                "{func}(info): thread_level={other:?} is not an MPI_THREAD_* name"
            ))
        }
    };
    Ok((level, strict))
}

pub(crate) unsafe fn mpi_session_init(
    info: MPI_Info,
    errhandler: MPI_Errhandler,
    session: *mut MPI_Session,
) -> MpiResult<()> {
    // Until the session exists, its errors go to the errhandler passed in.
    raise_on(Scope::Errhandler(errhandler));
    non_null(session, "MPI_Session_init", "session")?;
    let (level, strict) = requested(info, "MPI_Session_init")?;
    let e = errhandler_for(errhandler, ErrhandlerKind::Session, "MPI_Session_init")?;
    let s = Session::start(level, e)?;
    s.set_strict_finalize(strict);
    let handle = objects::SESSIONS.insert(s);
    clear_raise_on();
    // SAFETY: checked non-null; the caller passes a writable MPI_Session.
    unsafe { write(session, handle, "MPI_Session_init", "session") }
}

pub(crate) unsafe fn mpi_session_finalize(session: *mut MPI_Session) -> MpiResult<()> {
    non_null(session, "MPI_Session_finalize", "session")?;
    // SAFETY: checked non-null.
    let handle = unsafe { *session };
    let live = objects::session(handle, "MPI_Session_finalize", "session")?;
    // The handle table and `live` hold the session; anything more is a derived object.
    if live.strict_finalize() && Arc::strong_count(&live) > 2 {
        return Err(MpiError::new(
            ErrorClass::Other,
            "MPI_Session_finalize(session): strict_finalize is set and groups or communicators derived from the session are still alive",
        ));
    }
    drop(live);
    let s = objects::SESSIONS.remove(handle).map_err(|why| {
        mpi_err!(
            Session,
            "MPI_Session_finalize(session={handle:#x}): {}",
            why.describe()
        )
    })?;
    s.finish();
    // SAFETY: checked non-null.
    unsafe { write(session, MPI_SESSION_NULL, "MPI_Session_finalize", "session") }
}

pub(crate) unsafe fn mpi_session_get_num_psets(
    session: MPI_Session,
    _info: MPI_Info,
    npset_names: *mut c_int,
) -> MpiResult<()> {
    let s = objects::session(session, "MPI_Session_get_num_psets", "session")?;
    // SAFETY: checked by write.
    unsafe {
        write(
            npset_names,
            s.psets()?.len() as c_int,
            "MPI_Session_get_num_psets",
            "npset_names",
        )
    }
}

pub(crate) unsafe fn mpi_session_get_nth_pset(
    session: MPI_Session,
    _info: MPI_Info,
    n: c_int,
    pset_len: *mut c_int,
    pset_name: *mut c_char,
) -> MpiResult<()> {
    let s = objects::session(session, "MPI_Session_get_nth_pset", "session")?;
    non_null(pset_len, "MPI_Session_get_nth_pset", "pset_len")?;
    let sets = s.psets()?;
    let set = usize::try_from(n)
        .ok()
        .and_then(|i| sets.get(i))
        .ok_or_else(|| {
            mpi_err!(
                Arg,
                "MPI_Session_get_nth_pset(n={n}): the session has {} process sets",
                sets.len()
            )
        })?;
    let needed = set.name.len() + 1;
    // SAFETY: checked non-null.
    let room = unsafe { *pset_len };
    if room <= 0 {
        // A length query: report the room the name needs, NUL included.
        // SAFETY: checked non-null.
        unsafe { pset_len.write(needed as c_int) };
        return Ok(());
    }
    non_null(pset_name, "MPI_Session_get_nth_pset", "pset_name")?;
    let n = set.name.len().min(room as usize - 1);
    // SAFETY: the caller's buffer has `room` bytes; n < room.
    unsafe {
        std::ptr::copy_nonoverlapping(set.name.as_ptr(), pset_name.cast::<u8>(), n);
        *pset_name.add(n) = 0;
        pset_len.write(needed as c_int);
    }
    Ok(())
}

pub(crate) unsafe fn mpi_session_get_pset_info(
    session: MPI_Session,
    pset_name: *const c_char,
    info: *mut MPI_Info,
) -> MpiResult<()> {
    let s = objects::session(session, "MPI_Session_get_pset_info", "session")?;
    // SAFETY: the caller passes a NUL-terminated name (checked for null).
    let name = unsafe { c_str(pset_name, "MPI_Session_get_pset_info", "pset_name")? };
    non_null(info, "MPI_Session_get_pset_info", "info")?;
    let set = s
        .instance
        .job
        .find_pset(&name, "MPI_Session_get_pset_info")?;
    let made = Info::from_pairs(vec![("mpi_size".into(), set.members.len().to_string())]);
    // SAFETY: checked non-null.
    unsafe {
        write(
            info,
            objects::INFOS.insert(Arc::new(made)),
            "MPI_Session_get_pset_info",
            "info",
        )
    }
}

pub(crate) unsafe fn mpi_session_get_info(
    session: MPI_Session,
    info_used: *mut MPI_Info,
) -> MpiResult<()> {
    let s = objects::session(session, "MPI_Session_get_info", "session")?;
    non_null(info_used, "MPI_Session_get_info", "info_used")?;
    let made = Info::from_pairs(vec![("thread_level".into(), s.thread_level.name().into())]);
    // SAFETY: checked non-null.
    unsafe {
        write(
            info_used,
            objects::INFOS.insert(Arc::new(made)),
            "MPI_Session_get_info",
            "info_used",
        )
    }
}

// ------------------------------------------------------------------ groups and communicators

pub(crate) unsafe fn mpi_group_from_session_pset(
    session: MPI_Session,
    pset_name: *const c_char,
    newgroup: *mut MPI_Group,
) -> MpiResult<()> {
    let func = "MPI_Group_from_session_pset";
    let s = objects::session(session, func, "session")?;
    // SAFETY: the caller passes a NUL-terminated name (checked for null).
    let name = unsafe { c_str(pset_name, func, "pset_name")? };
    non_null(newgroup, func, "newgroup")?;
    let set = s.instance.job.find_pset(&name, func)?;
    let group = Group::with_origin(set.members, Some(s));
    // SAFETY: checked non-null.
    unsafe { write(newgroup, objects::group_handle(group), func, "newgroup") }
}

/// The session a group belongs to, for the `*_from_group(s)` calls (which take no session).
fn session_of(group: &Group, func: &str, arg: &str) -> MpiResult<Arc<Session>> {
    group.origin().cloned().ok_or_else(|| {
        mpi_err!(Group, "{func}({arg}): the group belongs to no session (use MPI_Group_from_session_pset or a session communicator's group)")
    })
}

fn session_errhandler(
    errhandler: MPI_Errhandler,
    func: &str,
) -> MpiResult<Arc<weft_core::object::Errhandler>> {
    errhandler_for(errhandler, ErrhandlerKind::Comm, func)
}

fn string_tag<'a>(stringtag: *const c_char, func: &str) -> MpiResult<std::borrow::Cow<'a, str>> {
    // SAFETY: the caller passes a NUL-terminated tag (checked for null).
    let tag = unsafe { c_str(stringtag, func, "stringtag")? };
    if tag.len() >= MPI_MAX_STRINGTAG_LEN as usize {
        return Err(mpi_err!(
            Arg,
            "{func}(stringtag): longer than MPI_MAX_STRINGTAG_LEN"
        ));
    }
    Ok(tag)
}

pub(crate) unsafe fn mpi_comm_create_from_group(
    group: MPI_Group,
    stringtag: *const c_char,
    _info: MPI_Info,
    errhandler: MPI_Errhandler,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Comm_create_from_group";
    // Until the communicator exists, its errors go to the errhandler passed in.
    raise_on(Scope::Errhandler(errhandler));
    let g = objects::group(group, func, "group")?;
    let tag = string_tag(stringtag, func)?;
    non_null(newcomm, func, "newcomm")?;
    let e = session_errhandler(errhandler, func)?;
    if g.is_empty() {
        // SAFETY: checked non-null.
        return unsafe { write(newcomm, MPI_COMM_NULL, func, "newcomm") };
    }
    let s = session_of(&g, func, "group")?;
    let c = idup::create_from_group(&s, &g, &tag, e)?;
    clear_raise_on();
    // SAFETY: checked non-null.
    unsafe { write(newcomm, objects::comm_handle(Some(c)), func, "newcomm") }
}

pub(crate) unsafe fn mpi_intercomm_create_from_groups(
    local_group: MPI_Group,
    local_leader: c_int,
    remote_group: MPI_Group,
    remote_leader: c_int,
    stringtag: *const c_char,
    _info: MPI_Info,
    errhandler: MPI_Errhandler,
    newintercomm: *mut MPI_Comm,
) -> MpiResult<()> {
    let func = "MPI_Intercomm_create_from_groups";
    raise_on(Scope::Errhandler(errhandler));
    let lg = objects::group(local_group, func, "local_group")?;
    let rg = objects::group(remote_group, func, "remote_group")?;
    let tag = string_tag(stringtag, func)?;
    non_null(newintercomm, func, "newintercomm")?;
    let e = session_errhandler(errhandler, func)?;
    let s = session_of(&lg, func, "local_group")?;
    let local_leader_proc = lg.checked_rank(local_leader, func, "local_leader")?;
    let remote_leader_proc = rg.checked_rank(remote_leader, func, "remote_leader")?;
    // The local group's communicator, then (leaders only) a two-process bridge between the
    // leaders; both are agreed among their members alone, told apart by derived tags.
    // Both are used at once below: wait for their context ids (`create_from_group` returns
    // before its agreement).
    let local = idup::create_from_group(&s, &lg, &format!("{tag}\u{0}local"), e.clone())?;
    local.resolve()?;
    let mut leaders = vec![local_leader_proc, remote_leader_proc];
    leaders.sort_unstable();
    let am_leader = local.rank == local_leader as u32;
    let bridge = if am_leader {
        let g = Group::with_origin(leaders.clone(), Some(s.clone()));
        let b = idup::create_from_group(&s, &g, &format!("{tag}\u{0}leaders"), e.clone())?;
        b.resolve()?;
        Some(b)
    } else {
        None
    };
    let remote_in_bridge = leaders
        .iter()
        .position(|&p| p == remote_leader_proc)
        .unwrap_or(0) as u32;
    let inter = comm::intercomm_create(
        &local,
        local_leader as u32,
        bridge.as_deref(),
        remote_in_bridge,
        0,
    )?;
    inter.set_errhandler(e);
    clear_raise_on();
    // SAFETY: checked non-null.
    unsafe {
        write(
            newintercomm,
            objects::comm_handle(Some(inter)),
            func,
            "newintercomm",
        )
    }
}
