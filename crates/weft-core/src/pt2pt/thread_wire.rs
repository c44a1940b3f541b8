//! The wire between the processes of a spanning thread communicator (`threadcomm::link`): a
//! hidden duplicate of the parent communicator, addressed by process. It lives here, above
//! the communicator objects, because those hold the thread communicators it serves.
#![forbid(unsafe_code)]

use std::sync::Arc;

use crate::datatype::access::Scratch;
use crate::error::MpiResult;
use crate::message::{SendMode, SourceSel, TagSel};
use crate::object::comm as core_comm;
use crate::object::exchange::{self, Channel};
use crate::object::Comm;
use crate::progress;
use crate::threadcomm::link::Wire;
use crate::threadcomm::ThreadComm;
use crate::vci::engine::SendStart;

/// The hidden communicator between the processes.
struct ProcessWire {
    comm: Arc<Comm>,
}

impl Wire for ProcessWire {
    fn process(&self) -> u32 {
        self.comm.rank
    }

    fn send(
        &self,
        dest: u32,
        msg: &mut Scratch,
        sync: bool,
        on_wait: &mut dyn FnMut(&mut u32),
    ) -> MpiResult<()> {
        let mode = if sync {
            SendMode::Synchronous
        } else {
            SendMode::Standard
        };
        let inst = &self.comm.session.instance;
        let id = match super::start_send(&self.comm, dest, 0, msg.buf(), mode, None)? {
            SendStart::Done => return Ok(()),
            SendStart::Pending(id) => id,
        };
        // `msg` lives until the transport is done with it.
        let mut spins = 0u32;
        loop {
            if let Some(done) = progress::take_if_complete(inst, id) {
                return done.status.into_result().map(|_| ());
            }
            progress::poke(inst, self.comm.vci);
            on_wait(&mut spins);
        }
    }

    fn take(&self) -> Option<Vec<u8>> {
        let st = super::iprobe(&self.comm, SourceSel::Any, TagSel::Any)?;
        let mut s = Scratch::new(st.bytes as usize);
        // One thread at a time takes (the trait's contract), so the receive gets the message
        // just probed.
        super::recv(
            &self.comm,
            SourceSel::Rank(st.source as u32),
            TagSel::Tag(st.tag),
            s.buf(),
        );
        Some(s.into_vec())
    }
}

/// `MPIX_Threadcomm_init`'s thread communicator (or `func`'s): this process's `n` threads and
/// those of the other processes of `parent` (collective over `parent`).
pub fn thread_comm(parent: &Comm, n: u32, func: &str) -> MpiResult<ThreadComm> {
    if parent.size() == 1 {
        return Ok(ThreadComm::new(n));
    }
    let comm = core_comm::dup_named(parent, func)?;
    let members = exchange::all(comm.size());
    let counts = Channel::collective(&comm).allgather(
        &members,
        comm.rank as usize,
        exchange::tag::THREADCOMM,
        &n.to_le_bytes(),
    )?;
    let counts: Vec<u32> = counts
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    ThreadComm::spanning(Box::new(ProcessWire { comm }), &counts, n)
}
