//! The world session: `MPI_Init`/`MPI_Finalize`, `MPI_COMM_WORLD` and `MPI_COMM_SELF`.
//!
//! `MPI_Init` may run once per process, so the world lives in a `OnceLock` and reading it
//! takes no lock; an atomic state says whether it is usable.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::ThreadId;

use crate::error::{fail, ErrorClass, MpiResult};
use crate::instance::{ThreadLevel, WorldAttrs};
use crate::object::exchange::{self, tag, Channel};
use crate::object::{Comm, CommKind, Errhandler, Group, Session};

/// Context ids of the predefined communicators; user communicators get larger ones. Each
/// communicator owns two ids: its own (point-to-point) and the next one (collectives), so
/// collective traffic never matches a user's receive.
pub const WORLD_CONTEXT_ID: u32 = 0;
pub const SELF_CONTEXT_ID: u32 = 2;

/// What `MPI_Init` built.
#[derive(Debug)]
pub struct World {
    pub session: Arc<Session>,
    pub world: Arc<Comm>,
    pub self_comm: Arc<Comm>,
    /// `MPI_APPNUM` and `MPI_UNIVERSE_SIZE`.
    pub attrs: WorldAttrs,
    pub provided: ThreadLevel,
    pub main_thread: ThreadId,
}

const NOT_INITIALIZED: u8 = 0;
const INITIALIZING: u8 = 1;
const INITIALIZED: u8 = 2;
const FINALIZED: u8 = 3;

static STATE: AtomicU8 = AtomicU8::new(NOT_INITIALIZED);
static WORLD: OnceLock<World> = OnceLock::new();

/// `MPI_Init_thread`: returns the provided level.
pub fn init(required: ThreadLevel) -> MpiResult<ThreadLevel> {
    match STATE.compare_exchange(
        NOT_INITIALIZED,
        INITIALIZING,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        Ok(_) => {}
        Err(FINALIZED) => {
            return fail(
                ErrorClass::Other,
                "MPI_Init: MPI was already finalized; it cannot be initialized again",
            )
        }
        Err(_) => return fail(ErrorClass::Other, "MPI_Init: MPI is already initialized"),
    }
    let session = match Session::start(required, Arc::new(Errhandler::FATAL)) {
        Ok(session) => session,
        Err(e) => {
            STATE.store(NOT_INITIALIZED, Ordering::Release);
            return Err(e);
        }
    };
    let job = session.instance.job;
    let attrs = match job.world_attrs() {
        Ok(attrs) => attrs,
        Err(e) => {
            session.finish();
            STATE.store(NOT_INITIALIZED, Ordering::Release);
            return Err(e);
        }
    };
    let world_group = Group::with_origin((0..job.size).collect(), Some(session.clone()));
    let fatal = Arc::new(Errhandler::FATAL);
    let world = Comm::new(
        CommKind::World,
        world_group,
        job.rank,
        WORLD_CONTEXT_ID,
        session.clone(),
        fatal.clone(),
        "MPI_COMM_WORLD",
    );
    let self_comm = Comm::new(
        CommKind::SelfComm,
        Group::with_origin(vec![job.rank], Some(session.clone())),
        0,
        SELF_CONTEXT_ID,
        session.clone(),
        fatal,
        "MPI_COMM_SELF",
    );
    let provided = session.thread_level;
    let built = World {
        session,
        world: Arc::new(world),
        self_comm: Arc::new(self_comm),
        attrs,
        provided,
        main_thread: std::thread::current().id(),
    };
    crate::stats::set_timing(built.session.instance.config.stats.is_some());
    if let Some(path) = &built.session.instance.config.trace {
        crate::trace::start(path, built.world.rank);
    }
    if WORLD.set(built).is_err() {
        unreachable!("the state machine lets only one thread initialize the world");
    }
    STATE.store(INITIALIZED, Ordering::Release);
    let world = WORLD.get().expect("just set");
    if let Some(port) = &world.session.instance.config.parent_port {
        // Started by MPI_Comm_spawn: connect to the parents.
        super::spawn::connect_parent(&world.world, port)?;
    }
    Ok(provided)
}

/// `MPI_Finalize`.
pub fn finalize() -> MpiResult<()> {
    match STATE.compare_exchange(INITIALIZED, FINALIZED, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => {}
        Err(FINALIZED) => return fail(ErrorClass::Other, "MPI_Finalize: MPI is already finalized"),
        Err(_) => return fail(ErrorClass::Other, "MPI_Finalize: MPI is not initialized"),
    }
    let Some(world) = WORLD.get() else {
        return Ok(());
    };
    let reported = match &world.session.instance.config.stats {
        Some(out) => super::report::report(&world.world, out),
        None => Ok(()),
    };
    let traced = crate::trace::write_part();
    world.session.instance.transports.closing();
    let synced = synchronize(&world.world).and(reported);
    super::spawn::wait_spawned();
    if let (Some((path, 0)), Ok(())) = (traced, &synced) {
        crate::trace::merge(&path, world.world.size());
    }
    world.session.finish();
    synced
}

/// `MPI_Finalize` is collective over the connected processes (MPI 4.1 §11.2.2): wait, making
/// progress, until every process of `MPI_COMM_WORLD` has called it. A request freed while
/// active must still complete (§3.7.3), and its peer may match it only later, waiting for
/// it (a receive freed before the sender's rendezvous message came, MPICH's `pt2pt/rqfree`):
/// that peer reaches `MPI_Finalize` only after, so this process is still making progress
/// when its part is needed. (MPICH's `MPI_Finalize` synchronizes the same way.)
fn synchronize(world: &Comm) -> MpiResult<()> {
    let channel = Channel::collective(world);
    let everyone = exchange::all(world.size());
    let mut word = [0u64];
    channel.allreduce_and(&everyone, world.rank as usize, tag::FINALIZE, &mut word)
}

/// `MPI_Initialized`.
pub fn initialized() -> bool {
    STATE.load(Ordering::Acquire) >= INITIALIZED
}

/// `MPI_Finalized`.
pub fn finalized() -> bool {
    STATE.load(Ordering::Acquire) == FINALIZED
}

/// The world, while it is usable (after `MPI_Init`, before `MPI_Finalize`).
pub fn get(func: &str) -> MpiResult<&'static World> {
    match STATE.load(Ordering::Acquire) {
        INITIALIZED => Ok(WORLD.get().expect("initialized implies built")),
        FINALIZED => fail(
            ErrorClass::Other,
            format!("{func}: called after MPI_Finalize"),
        ),
        _ => fail(ErrorClass::Other, format!("{func}: called before MPI_Init")),
    }
}

/// The world while it is usable (between `MPI_Init` and `MPI_Finalize`).
#[inline]
pub fn get_initialized() -> Option<&'static World> {
    match STATE.load(Ordering::Acquire) {
        INITIALIZED => WORLD.get(),
        _ => None,
    }
}

/// The world even after finalize (for errhandler lookups while reporting a late error).
pub fn get_any() -> Option<&'static World> {
    WORLD.get()
}
