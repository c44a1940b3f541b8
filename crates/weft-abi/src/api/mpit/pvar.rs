//! MPI_T performance variables (`weft_core::tools::pvars`) and the sessions that read them.
//!
//! Levels and high-water marks are continuous and read-only: a handle reads the live value.
//! Counters start stopped in each session: a handle counts only what happened while it was
//! started, and can be reset or written (its own value; the process's counters never move
//! back, the handle keeps an offset).

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

use weft_core::error::MpiResult;
use weft_core::object::Comm;
use weft_core::stats::CommCounting;
use weft_core::tools::pvars::{self, Class, Pvar, Source};

use super::{check_init, index, name_arg, need, out_str, store, store_required, terr, Handles};
use crate::constants::*;
use crate::ctypes::*;

struct PvarHandle {
    pvar: &'static Pvar,
    comm: Option<Arc<Comm>>,
    started: bool,
    /// The process's values when the handle was last started (or reset while started).
    base: Vec<u64>,
    /// What the handle counted before (while started earlier), or was written.
    kept: Vec<u64>,
    /// Communicators count their messages while this lives (their message variables).
    _counting: Option<CommCounting>,
}

impl PvarHandle {
    fn live(&self) -> Vec<u64> {
        let mut v = vec![0; self.base.len()];
        pvars::read(self.pvar, self.comm.as_deref(), &mut v);
        v
    }

    fn value(&self) -> Vec<u64> {
        if self.pvar.continuous() {
            return self.live();
        }
        if !self.started {
            return self.kept.clone();
        }
        let live = self.live();
        (0..live.len())
            .map(|k| self.kept[k].wrapping_add(live[k].wrapping_sub(self.base[k])))
            .collect()
    }

    fn start(&mut self) {
        if !self.started {
            self.base = self.live();
            self.started = true;
        }
    }

    fn stop(&mut self) {
        if self.started {
            self.kept = self.value();
            self.started = false;
        }
    }

    /// Make the handle's value `to` from now on.
    fn set(&mut self, to: Vec<u64>) {
        self.kept = to;
        if self.started {
            self.base = self.live();
        }
    }
}

/// A session: its handles by handle value.
type Session = HashMap<usize, PvarHandle>;

static SESSIONS: Handles<Session> = Handles::new();

pub(super) fn release_all() {
    SESSIONS.clear();
}

fn class_code(c: Class) -> c_int {
    match c {
        Class::Level => MPI_T_PVAR_CLASS_LEVEL,
        Class::HighWaterMark => MPI_T_PVAR_CLASS_HIGHWATERMARK,
        Class::Counter => MPI_T_PVAR_CLASS_COUNTER,
    }
}

pub(crate) unsafe fn mpi_t_pvar_get_num(num_pvar: *mut c_int) -> MpiResult<()> {
    check_init("MPI_T_pvar_get_num")?;
    // SAFETY: valid per the standard when not null.
    unsafe {
        store_required(
            num_pvar,
            pvars::pvars().len() as c_int,
            "MPI_T_pvar_get_num",
            "num_pvar",
        )
    }
}

/// The variable at `pvar_index`, once the tools interface is checked to be initialized.
fn pvar_at(pvar_index: c_int, func: &str) -> MpiResult<&'static Pvar> {
    check_init(func)?;
    let all = pvars::pvars();
    Ok(&all[index(pvar_index, all.len(), func, "pvar_index")?])
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn mpi_t_pvar_get_info(
    pvar_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity: *mut c_int,
    var_class: *mut c_int,
    datatype: *mut MPI_Datatype,
    enumtype: *mut MPI_T_enum,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind: *mut c_int,
    readonly: *mut c_int,
    continuous: *mut c_int,
    atomic: *mut c_int,
) -> MpiResult<()> {
    const F: &str = "MPI_T_pvar_get_info";
    let p = pvar_at(pvar_index, F)?;
    // SAFETY: every pointer is null or valid per the standard.
    unsafe {
        out_str(&p.name, name, name_len);
        out_str(&p.desc, desc, desc_len);
        store(verbosity, MPI_T_VERBOSITY_USER_BASIC);
        store(var_class, class_code(p.class));
        store(datatype, MPI_UNSIGNED_LONG_LONG);
        store(enumtype, MPI_T_ENUM_NULL);
        store(
            bind,
            if p.bound_to_comm() {
                MPI_T_BIND_MPI_COMM
            } else {
                MPI_T_BIND_NO_OBJECT
            },
        );
        store(readonly, p.continuous() as c_int);
        store(continuous, p.continuous() as c_int);
        store(atomic, 0);
    }
    Ok(())
}

pub(crate) unsafe fn mpi_t_pvar_get_index(
    name: *const c_char,
    var_class: c_int,
    pvar_index: *mut c_int,
) -> MpiResult<()> {
    const F: &str = "MPI_T_pvar_get_index";
    check_init(F)?;
    // SAFETY: a NUL-terminated string per the standard.
    let name = unsafe { name_arg(name, F) }?;
    need(pvar_index, F, "pvar_index")?;
    let class = [Class::Level, Class::HighWaterMark, Class::Counter]
        .into_iter()
        .find(|&c| class_code(c) == var_class);
    let i = class
        .and_then(|c| pvars::index_of(&name, c))
        .ok_or_else(|| {
            terr(
                MPI_T_ERR_INVALID_NAME,
                format!("{F}(name={name:?}, var_class={var_class}): no such performance variable"),
            )
        })?;
    // SAFETY: checked non-null.
    unsafe { pvar_index.write(i as c_int) };
    Ok(())
}

pub(crate) unsafe fn mpi_t_pvar_session_create(session: *mut MPI_T_pvar_session) -> MpiResult<()> {
    const F: &str = "MPI_T_pvar_session_create";
    check_init(F)?;
    need(session, F, "pe_session")?;
    let h = SESSIONS.insert(Session::new());
    // SAFETY: checked non-null.
    unsafe { session.write(h) };
    Ok(())
}

pub(crate) unsafe fn mpi_t_pvar_session_free(session: *mut MPI_T_pvar_session) -> MpiResult<()> {
    const F: &str = "MPI_T_pvar_session_free";
    check_init(F)?;
    need(session, F, "pe_session")?;
    // SAFETY: checked non-null.
    let h = unsafe { session.read() };
    if SESSIONS.remove(h).is_none() {
        return Err(terr(
            MPI_T_ERR_INVALID_SESSION,
            format!("{F}(pe_session={h:#x}): not a live session"),
        ));
    }
    // SAFETY: checked non-null.
    unsafe { session.write(MPI_T_PVAR_SESSION_NULL) };
    Ok(())
}

pub(crate) unsafe fn mpi_t_pvar_handle_alloc(
    session: MPI_T_pvar_session,
    pvar_index: c_int,
    obj_handle: *mut c_void,
    handle: *mut MPI_T_pvar_handle,
    count: *mut c_int,
) -> MpiResult<()> {
    const F: &str = "MPI_T_pvar_handle_alloc";
    let p = pvar_at(pvar_index, F)?;
    need(handle, F, "handle")?;
    need(count, F, "count")?;
    let comm = if p.bound_to_comm() {
        // SAFETY: per the standard, obj_handle points to an MPI_Comm for a bound variable.
        Some(unsafe { super::cvar::bound_comm(obj_handle, F) }?)
    } else {
        None
    };
    let n = p.count();
    let h = super::new_handle();
    SESSIONS.with(session, MPI_T_ERR_INVALID_SESSION, F, "pe_session", |s| {
        s.insert(
            h,
            PvarHandle {
                pvar: p,
                comm,
                started: false,
                base: vec![0; n],
                kept: vec![0; n],
                _counting: matches!(p.source, Source::CommSent(_)).then(CommCounting::new),
            },
        );
        Ok(())
    })?;
    // SAFETY: checked non-null.
    unsafe {
        handle.write(h);
        count.write(n as c_int);
    }
    Ok(())
}

pub(crate) unsafe fn mpi_t_pvar_handle_free(
    session: MPI_T_pvar_session,
    handle: *mut MPI_T_pvar_handle,
) -> MpiResult<()> {
    const F: &str = "MPI_T_pvar_handle_free";
    check_init(F)?;
    need(handle, F, "handle")?;
    // SAFETY: checked non-null.
    let h = unsafe { handle.read() };
    SESSIONS.with(session, MPI_T_ERR_INVALID_SESSION, F, "pe_session", |s| {
        s.remove(&h).map(|_| ()).ok_or_else(|| bad_handle(F, h))
    })?;
    // SAFETY: checked non-null.
    unsafe { handle.write(MPI_T_PVAR_HANDLE_NULL) };
    Ok(())
}

fn bad_handle(func: &str, h: usize) -> weft_core::MpiError {
    terr(
        MPI_T_ERR_INVALID_HANDLE,
        format!("{func}(handle={h:#x}): not a handle of this session"),
    )
}

/// Run `f` on handle `h` of `session`, or on each of its handles for
/// `MPI_T_PVAR_ALL_HANDLES` (where `all` says what to skip quietly).
fn on_handles(
    session: MPI_T_pvar_session,
    h: MPI_T_pvar_handle,
    func: &str,
    skip_for_all: impl Fn(&PvarHandle) -> bool,
    mut f: impl FnMut(&mut PvarHandle) -> MpiResult<()>,
) -> MpiResult<()> {
    SESSIONS.with(
        session,
        MPI_T_ERR_INVALID_SESSION,
        func,
        "pe_session",
        |s| {
            if h == MPI_T_PVAR_ALL_HANDLES {
                return s
                    .values_mut()
                    .filter(|ph| !skip_for_all(ph))
                    .try_for_each(&mut f);
            }
            f(s.get_mut(&h).ok_or_else(|| bad_handle(func, h))?)
        },
    )
}

fn no_startstop(func: &str, p: &Pvar) -> weft_core::MpiError {
    terr(
        MPI_T_ERR_PVAR_NO_STARTSTOP,
        format!("{func}: {} is continuous (always running)", p.name),
    )
}

fn no_write(func: &str, p: &Pvar) -> weft_core::MpiError {
    terr(
        MPI_T_ERR_PVAR_NO_WRITE,
        format!("{func}: {} is read-only", p.name),
    )
}

/// Start, stop or reset one handle or all (`MPI_T_PVAR_ALL_HANDLES`: continuous variables are
/// passed over, as they can be neither started, stopped nor reset).
fn counter_op(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
    func: &str,
    refused: fn(&str, &Pvar) -> weft_core::MpiError,
    op: fn(&mut PvarHandle),
) -> MpiResult<()> {
    check_init(func)?;
    on_handles(
        session,
        handle,
        func,
        |h| h.pvar.continuous(),
        |h| {
            if h.pvar.continuous() {
                return Err(refused(func, h.pvar));
            }
            op(h);
            Ok(())
        },
    )
}

pub(crate) fn mpi_t_pvar_start(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
) -> MpiResult<()> {
    counter_op(
        session,
        handle,
        "MPI_T_pvar_start",
        no_startstop,
        PvarHandle::start,
    )
}

pub(crate) fn mpi_t_pvar_stop(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
) -> MpiResult<()> {
    counter_op(
        session,
        handle,
        "MPI_T_pvar_stop",
        no_startstop,
        PvarHandle::stop,
    )
}

pub(crate) fn mpi_t_pvar_reset(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
) -> MpiResult<()> {
    counter_op(session, handle, "MPI_T_pvar_reset", no_write, |h| {
        let n = h.kept.len();
        h.set(vec![0; n]);
    })
}

fn single(handle: MPI_T_pvar_handle, func: &str) -> MpiResult<()> {
    if handle == MPI_T_PVAR_ALL_HANDLES {
        return Err(terr(
            MPI_T_ERR_INVALID_HANDLE,
            format!("{func}(handle=MPI_T_PVAR_ALL_HANDLES): only start, stop and reset take it"),
        ));
    }
    Ok(())
}

/// `MPI_T_pvar_read` and (with `reset`, which then resets) `MPI_T_pvar_readreset`, forwarded
/// by api/gen.py: read one handle into `buf`.
///
/// # Safety
/// `buf` null or valid for the handle's count of `unsigned long long`.
pub(crate) unsafe fn pvar_read_into(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
    buf: *mut c_void,
    reset: bool,
    func: &str,
) -> MpiResult<()> {
    check_init(func)?;
    single(handle, func)?;
    let mut values = Vec::new();
    on_handles(
        session,
        handle,
        func,
        |_| false,
        |h| {
            if reset && h.pvar.continuous() {
                return Err(no_write(func, h.pvar));
            }
            values = h.value();
            if reset {
                let n = values.len();
                h.set(vec![0; n]);
            }
            Ok(())
        },
    )?;
    need(buf, func, "buf")?;
    // SAFETY: buf holds the handle's count of unsigned long long per the standard.
    unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), buf.cast::<u64>(), values.len()) };
    Ok(())
}

pub(crate) unsafe fn mpi_t_pvar_write(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
    buf: *const c_void,
) -> MpiResult<()> {
    const F: &str = "MPI_T_pvar_write";
    check_init(F)?;
    single(handle, F)?;
    need(buf, F, "buf")?;
    on_handles(
        session,
        handle,
        F,
        |_| false,
        |h| {
            if h.pvar.continuous() {
                return Err(no_write(F, h.pvar));
            }
            let n = h.kept.len();
            let mut v = vec![0u64; n];
            // SAFETY: buf holds the handle's count of unsigned long long per the standard.
            unsafe { std::ptr::copy_nonoverlapping(buf.cast::<u64>(), v.as_mut_ptr(), n) };
            h.set(v);
            Ok(())
        },
    )
}
