//! Point-to-point messages of collectives: sent on the communicator's collective context id
//! (never the user's point-to-point context), through the same engine and VCI.
#![forbid(unsafe_code)]

use crate::datatype::Buf;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::instance::Instance;
use crate::message::{Pattern, SendMode, Target};
use crate::object::Comm;
use crate::progress;
use crate::request::ReqId;
use crate::vci::engine::{self, SendStart};

/// An operation a collective started and must wait for.
#[must_use]
#[derive(Debug)]
pub enum Pending {
    Done,
    Req(ReqId),
    /// A receive of exactly this many bytes: a shorter message means the ranks passed
    /// different sizes (an erroneous program), reported like a longer one.
    Recv(ReqId, usize),
}

/// A communicator as its collectives see it.
pub struct Link<'a> {
    pub comm: &'a Comm,
    pub inst: &'a Instance,
    pub rank: u32,
    pub size: u32,
    context: u32,
}

impl<'a> Link<'a> {
    pub fn new(comm: &'a Comm) -> Link<'a> {
        Link {
            comm,
            inst: &comm.session.instance,
            rank: comm.rank,
            size: comm.size(),
            context: comm.collective_context(),
        }
    }

    /// Start sending `buf` to rank `dest` of the communicator.
    pub fn isend(&self, dest: u32, tag: i32, buf: &Buf) -> MpiResult<Pending> {
        let dest_job = self.comm.group.proc_at(dest).ok_or_else(|| {
            MpiError::new(
                ErrorClass::Intern,
                format!("collective peer {dest} out of range"),
            )
        })?;
        let vci = self.comm.peer_vci(dest);
        let target = Target::new(self.context, self.rank, dest_job, tag, vci);
        let vci = self.comm.vci;
        let mut st = self.inst.vcis[vci].lock();
        match engine::start_send(
            &self.inst.transports,
            vci,
            &mut st,
            target,
            *buf,
            SendMode::Standard,
            false,
        )? {
            SendStart::Done => Ok(Pending::Done),
            SendStart::Pending(id) => Ok(Pending::Req(id)),
        }
    }

    /// Start receiving into `buf` from rank `src` of the communicator.
    pub fn irecv(&self, src: u32, tag: i32, buf: &Buf) -> Pending {
        let pattern = Pattern::exact(self.context, src, tag);
        let vci = self.comm.vci;
        let mut st = self.inst.vcis[vci].lock();
        let id = engine::start_recv(&self.inst.transports, vci, &mut st, pattern, *buf, 0);
        Pending::Recv(id, buf.len())
    }

    pub fn wait(&self, p: Pending) -> MpiResult<()> {
        match p {
            Pending::Done => Ok(()),
            Pending::Req(id) => {
                let done = progress::wait(self.inst, id);
                done.status.into_result().map(|_| ())
            }
            Pending::Recv(id, len) => {
                let status = progress::wait(self.inst, id).status;
                let source = status.source;
                if status.truncated() {
                    return Err(MpiError::new(
                        ErrorClass::Truncate,
                        format!("rank {source} sent more than the {len} bytes this rank expected: the count or datatype differs between the ranks"),
                    ));
                }
                let got = status.into_result()?.bytes;
                match usize::try_from(got) {
                    Ok(got) if got < len => {
                        Err(super::mismatch(&format!("rank {source}"), got, len))
                    }
                    _ => Ok(()),
                }
            }
        }
    }

    /// Wait for every operation (all of them, even after an error), then report the first
    /// error.
    pub fn wait_all(&self, ops: impl IntoIterator<Item = Pending>) -> MpiResult<()> {
        let mut result = Ok(());
        for p in ops {
            let r = self.wait(p);
            if result.is_ok() {
                result = r;
            }
        }
        result
    }

    pub fn send(&self, dest: u32, tag: i32, buf: &Buf) -> MpiResult<()> {
        let p = self.isend(dest, tag, buf)?;
        self.wait(p)
    }

    pub fn recv(&self, src: u32, tag: i32, buf: &Buf) -> MpiResult<()> {
        let p = self.irecv(src, tag, buf);
        self.wait(p)
    }

    /// Send `sbuf` to `dest` while receiving `rbuf` from `src`.
    pub fn sendrecv(&self, dest: u32, sbuf: &Buf, src: u32, rbuf: &Buf, tag: i32) -> MpiResult<()> {
        let r = self.irecv(src, tag, rbuf);
        let s = self.isend(dest, tag, sbuf);
        let rr = self.wait(r);
        let sr = s.and_then(|s| self.wait(s));
        rr.and(sr)
    }
}
