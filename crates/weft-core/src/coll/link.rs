//! Point-to-point messages of collectives: sent on the communicator's collective context id
//! (never the user's point-to-point context), through the same engine and VCI.
#![forbid(unsafe_code)]

use crate::datatype::access::Scratch;
use crate::datatype::Buf;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::instance::Instance;
use crate::message::{Pattern, SendMode, SourceSel, TagSel, Target};
use crate::object::Comm;
use crate::op::Reduction;
use crate::progress;
use crate::request::ReqId;
use crate::vci::engine::{self, SendStart};

use super::tag;

/// An operation a collective started and must wait for.
#[must_use]
#[derive(Debug)]
pub enum Pending {
    Done,
    Req(ReqId),
    /// A receive of exactly this many bytes, whose message must carry these flags
    /// (`tag::FLAGS`): a shorter message means the ranks passed different sizes (an erroneous
    /// program), reported like a longer one; other flags, another algorithm or op.
    Recv(ReqId, usize, i32),
}

/// Bytes of a size header (`tag::HEADER`): the sender's size, little-endian, or `FAILED`
/// plus the class of an error it found.
pub const HEADER_LEN: usize = 8;
const FAILED: u64 = 1 << 63;

/// A size header saying `len`, or, after `result` failed, its error class.
pub fn header(len: usize, result: &MpiResult<()>) -> Scratch {
    let word = match result {
        Ok(()) => len as u64,
        Err(e) => FAILED | e.class() as u32 as u64,
    };
    let mut h = Scratch::new(HEADER_LEN);
    h.bytes_mut().copy_from_slice(&word.to_le_bytes());
    h
}

/// Check the header at the start of `bytes`, from rank `r`, against this rank's `len`: a
/// different size is `MPI_ERR_TRUNCATE`; a failure found elsewhere is its error.
pub fn check_header(bytes: &[u8], len: usize, r: u32) -> MpiResult<()> {
    let word = header_word(bytes);
    if word & FAILED != 0 {
        let class = ErrorClass::from_i32((word & 0xffff) as i32).unwrap_or(ErrorClass::Other);
        let what = if class == ErrorClass::Op {
            "the op differs between the ranks"
        } else {
            "the count or datatype differs between the ranks"
        };
        return Err(MpiError::new(
            class,
            format!("another rank found that {what}"),
        ));
    }
    match usize::try_from(word) {
        Ok(l) if l == len => Ok(()),
        _ => Err(super::mismatch(&format!("rank {r}"), word as usize, len)),
    }
}

/// The size a (root's, never failed) header at the start of `bytes` says.
pub fn header_says(bytes: &[u8]) -> usize {
    usize::try_from(header_word(bytes) & !FAILED).unwrap_or(usize::MAX)
}

fn header_word(bytes: &[u8]) -> u64 {
    let mut word = [0u8; HEADER_LEN];
    word.copy_from_slice(&bytes[..HEADER_LEN]);
    u64::from_le_bytes(word)
}

/// The error of a reduction that received from rank `source` a message with another op mark.
fn other_op(source: i32) -> MpiError {
    MpiError::new(
        ErrorClass::Op,
        format!("rank {source} passed another op than this rank: the op differs between the ranks"),
    )
}

/// What a receive got (`Link::recv_telling`).
#[derive(Clone, Copy, Debug)]
pub struct Arrived {
    /// The message was a size header (`tag::HEADER`).
    pub header: bool,
    /// Bytes in the receive buffer.
    pub bytes: usize,
}

/// A communicator as its collectives see it.
#[derive(Clone, Copy)]
pub struct Link<'a> {
    pub comm: &'a Comm,
    pub inst: &'a Instance,
    pub rank: u32,
    pub size: u32,
    context: u32,
    /// What this side's messages carry in `tag::FLAGS` and expects in its peers'.
    flags: i32,
}

impl<'a> Link<'a> {
    pub fn new(comm: &'a Comm) -> Link<'a> {
        Link {
            comm,
            inst: &comm.session.instance,
            rank: comm.rank,
            size: comm.size(),
            context: comm.collective_context(),
            flags: 0,
        }
    }

    /// The link of a reduction with `red`: its op mark travels in every message, so that a
    /// rank that receives from one with another op fails with `MPI_ERR_OP`.
    pub fn reducing(comm: &'a Comm, red: &Reduction) -> Link<'a> {
        Link {
            flags: i32::from(red.mark()) << tag::MARK_SHIFT,
            ..Link::new(comm)
        }
    }

    /// The same link for size headers (`tag::HEADER`): a header meets data where one rank
    /// chose an algorithm by its size that another did not, and both fail.
    pub fn headers(&self) -> Link<'a> {
        Link {
            flags: self.flags | tag::HEADER,
            ..*self
        }
    }

    /// This link for the messages after `result`: once this rank failed on another op
    /// (`MPI_ERR_OP`), they carry a mark no op has (`tag::FAILED_OP`), so that the ranks
    /// that receive them fail with `MPI_ERR_OP` too rather than take its data, which mixes
    /// two ops, for a right result.
    pub fn after(&self, result: &MpiResult<()>) -> Link<'a> {
        match result {
            Err(e) if e.class() == ErrorClass::Op as i32 => Link {
                flags: (self.flags & tag::HEADER) | tag::FAILED_OP,
                ..*self
            },
            _ => *self,
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
        let target = Target::new(self.context, self.rank, dest_job, tag | self.flags, vci);
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
        let ignore = tag::FLAGS;
        let pattern = Pattern::new(
            self.context,
            SourceSel::Rank(src),
            TagSel::Masked { tag, ignore },
        );
        let vci = self.comm.vci;
        let mut st = self.inst.vcis[vci].lock();
        let id = engine::start_recv(&self.inst.transports, vci, &mut st, pattern, *buf, 0);
        Pending::Recv(id, buf.len(), self.flags)
    }

    pub fn wait(&self, p: Pending) -> MpiResult<()> {
        match p {
            Pending::Done => Ok(()),
            Pending::Req(id) => {
                let done = progress::wait(self.inst, id);
                done.status.into_result().map(|_| ())
            }
            Pending::Recv(id, len, flags) => self.finish_recv(id, len, flags).0,
        }
    }

    /// Wait for a receive of `len` bytes expecting `flags`; also say which flags its message
    /// carried and how many bytes arrived.
    fn finish_recv(&self, id: ReqId, len: usize, flags: i32) -> (MpiResult<()>, Arrived) {
        let status = progress::wait(self.inst, id).status;
        let arrived = Arrived {
            header: status.tag & tag::HEADER != 0,
            bytes: usize::try_from(status.bytes).unwrap_or(usize::MAX).min(len),
        };
        let source = status.source;
        let theirs = status.tag & tag::FLAGS;
        let differs = |what: String| {
            Err(MpiError::new(
                ErrorClass::Truncate,
                format!("{what}: the count or datatype differs between the ranks"),
            ))
        };
        // Another op mark first: the ranks' algorithms may differ by the op's kind (a user
        // op's or a predefined one's), so its messages may also differ in size or kind.
        let arrived_any = status.error == 0 || status.truncated();
        let result = if arrived_any && (theirs ^ flags) & !tag::HEADER != 0 {
            Err(other_op(source))
        } else if (theirs ^ flags) & tag::HEADER != 0 {
            differs(format!(
                "rank {source} chose another algorithm than this rank by the size it passed"
            ))
        } else if status.truncated() {
            differs(format!(
                "rank {source} sent more than the {len} bytes this rank expected"
            ))
        } else {
            match status.into_result().map(|st| usize::try_from(st.bytes)) {
                Err(e) => Err(e),
                Ok(Ok(got)) if got < len => {
                    Err(super::mismatch(&format!("rank {source}"), got, len))
                }
                _ => Ok(()),
            }
        };
        (result, arrived)
    }

    /// `recv`, also saying what arrived: whether the message was a size header
    /// (`tag::HEADER`; its sender may wait for a verdict, `reduce.rs`) and how many bytes
    /// of it `buf` holds.
    pub fn recv_telling(&self, src: u32, tag: i32, buf: &Buf) -> (MpiResult<()>, Arrived) {
        match self.irecv(src, tag, buf) {
            Pending::Recv(id, len, flags) => self.finish_recv(id, len, flags),
            p => unreachable!("irecv gave {p:?}"),
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

    /// Before an algorithm chosen by size that every rank must run (Rabenseifner's reduce,
    /// a linear gather), when the ranks did not compare their sizes on the area: a size
    /// header (`header`) goes up the binomial tree rooted at `root` (children `vr + m` for
    /// the `m` below the lowest set bit of relative rank `vr`: the tree of a binomial reduce
    /// or gather, so a rank that chose that algorithm by a smaller size meets this header and
    /// fails, and this rank meets its data and fails), each rank comparing its children's
    /// with its own (a reduction's op mark travels in the tag), and the root's verdict comes
    /// back down to the ranks that sent a header. Two trips through the tree. A rank of the
    /// tree algorithm that met a header owes its sender a verdict (any header: `owe_verdicts`).
    pub fn agree_on_tree(&self, len: usize, root: u32, tag: i32) -> MpiResult<()> {
        let hl = self.headers();
        let n = self.size;
        let vr = (self.rank + n - root) % n;
        let real = |v: u32| (v + root) % n;
        let mut theirs = Scratch::new(HEADER_LEN);
        let tb = theirs.buf();
        let mut result = Ok(());
        let mut waiting = Vec::new();
        let mut mask = 1;
        while mask < n && vr & mask == 0 {
            if vr + mask < n {
                let child = real(vr + mask);
                let (got, arrived) = hl.recv_telling(child, tag, &tb);
                if arrived.header {
                    waiting.push(child);
                }
                result = result
                    .and(got)
                    .and(check_header(theirs.bytes(), len, child));
            }
            mask <<= 1;
        }
        if vr != 0 {
            let parent = real(vr - mask);
            let mut mine = header(len, &result);
            result = result.and(hl.send(parent, tag, &mine.buf()));
            let got = hl.recv(parent, tag, &tb);
            result = result
                .and(got)
                .and(check_header(theirs.bytes(), len, parent));
        }
        let mut verdict = header(len, &result);
        for child in waiting {
            result = result.and(hl.send(child, tag, &verdict.buf()));
        }
        result
    }

    /// The failing verdicts a rank of a tree algorithm owes the `children` that sent it a
    /// size header (`agree_on_tree`) instead of data.
    pub fn owe_verdicts(&self, children: &[u32], tag: i32) -> MpiResult<()> {
        let mut result = Ok(());
        for &child in children {
            result = result.and(self.headers().send(child, tag, &Buf::EMPTY));
        }
        result
    }

    /// Before an algorithm chosen by size that every rank must run (a ring allgather), when
    /// the ranks did not compare their sizes on the area: one size header per round of the
    /// algorithm the smaller sizes pick, to the same partners in the same order (`rounds`:
    /// (destination, source) of each), so that a rank of that algorithm meets a header and
    /// fails, and this rank meets its data and fails. A rank that found a difference says so
    /// in its later headers; the rounds of recursive doubling and of Bruck's dissemination
    /// carry every rank's word to every other. `result`: this rank's verdict so far.
    pub fn agree_in_rounds(
        &self,
        len: usize,
        tag: i32,
        rounds: impl IntoIterator<Item = (u32, u32)>,
        mut result: MpiResult<()>,
    ) -> MpiResult<()> {
        let hl = self.headers();
        let mut theirs = Scratch::new(HEADER_LEN);
        let tb = theirs.buf();
        for (dest, src) in rounds {
            let mut mine = header(len, &result);
            let got = hl.sendrecv(dest, &mine.buf(), src, &tb, tag);
            result = result.and(got).and(check_header(theirs.bytes(), len, src));
        }
        result
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_say_a_size_or_a_failure() {
        let class = |r: MpiResult<()>| r.unwrap_err().class();
        let h = header(80_000, &Ok(()));
        assert!(check_header(h.bytes(), 80_000, 1).is_ok());
        assert_eq!(header_says(h.bytes()), 80_000);
        assert_eq!(
            class(check_header(h.bytes(), 48_000, 1)),
            ErrorClass::Truncate as i32
        );
        let op = MpiError::new(ErrorClass::Op, "x");
        let failed = header(80_000, &Err(op));
        let e = check_header(failed.bytes(), 80_000, 1).unwrap_err();
        assert_eq!(e.class(), ErrorClass::Op as i32);
        assert!(
            e.to_string().contains("the op differs between the ranks"),
            "{e}"
        );
    }
}
