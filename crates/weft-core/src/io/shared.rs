//! The shared file pointer: one counter of stream bytes per open file, kept where every rank
//! of the file reaches it with one atomic instruction: in a shared segment of the node (all
//! of a file's ranks are on one node: Weft's transports reach no other), or in this process
//! for a file opened by one rank.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::io::exch;
use crate::object::Comm;
use crate::transport::shm::counter::SharedCounter;

/// Bytes of the broadcast segment name.
const NAME_BYTES: usize = 128;

static CREATED: AtomicU64 = AtomicU64::new(0);

pub enum SharedPtr {
    Local(AtomicU64),
    Node(SharedCounter),
}

impl SharedPtr {
    /// Collective over the file's communicator: rank 0 creates the counter and tells the
    /// others its name.
    pub fn setup(comm: &Comm, func: &str) -> MpiResult<SharedPtr> {
        if comm.size() == 1 {
            return Ok(SharedPtr::Local(AtomicU64::new(0)));
        }
        let inst = &comm.session.instance;
        let mut name = [0u8; NAME_BYTES];
        let mut made = None;
        if comm.rank == 0 {
            let n = CREATED.fetch_add(1, Ordering::Relaxed);
            let path = inst
                .job
                .segment_name(format_args!("io.{}.{n}", std::process::id()));
            if path.len() < NAME_BYTES {
                if let Ok(c) = SharedCounter::create(&path, comm.size()) {
                    name[..path.len()].copy_from_slice(path.as_bytes());
                    made = Some(c);
                }
            }
        }
        exch::bcast_bytes(comm, 0, &mut name)?;
        let len = name.iter().position(|&b| b == 0).unwrap_or(NAME_BYTES);
        let failed = |why: String| {
            MpiError::new(
                ErrorClass::Other,
                format!("{func}: cannot set up the shared file pointer: {why}"),
            )
        };
        if len == 0 {
            return Err(failed("rank 0 could not create its shared memory".into()));
        }
        let counter = match made {
            Some(c) => Ok(c),
            None => {
                let path = String::from_utf8_lossy(&name[..len]).into_owned();
                SharedCounter::attach(&path, comm.size()).map_err(|e| e.to_string())
            }
        };
        let ok = exch::agree(comm, counter.is_err() as u64)?;
        match counter {
            Ok(c) if ok == 0 => Ok(SharedPtr::Node(c)),
            Ok(_) => Err(failed("a rank could not attach the shared memory".into())),
            Err(e) => Err(failed(e)),
        }
    }

    /// Advance by `n`, returning the position before.
    pub fn fetch_add(&self, n: u64) -> u64 {
        match self {
            SharedPtr::Local(a) => a.fetch_add(n, Ordering::AcqRel),
            SharedPtr::Node(c) => c.fetch_add(n),
        }
    }

    pub fn load(&self) -> u64 {
        match self {
            SharedPtr::Local(a) => a.load(Ordering::Acquire),
            SharedPtr::Node(c) => c.load(),
        }
    }

    pub fn store(&self, v: u64) {
        match self {
            SharedPtr::Local(a) => a.store(v, Ordering::Release),
            SharedPtr::Node(c) => c.store(v),
        }
    }
}
