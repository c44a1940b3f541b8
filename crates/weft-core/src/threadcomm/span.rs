//! Collectives over the thread ranks' point-to-point messages (`Ctx::Coll` traffic, which no
//! program receive matches): the algorithms of a thread communicator spanning several
//! processes, where `coll`'s shared slots do not reach, and of the `v`/`w` collectives and
//! reduce-scatter on any thread communicator. Each is linear through a root
//! (thread counts are small): contributions go to the root, results come back from it.
//! Collectives are called in the same order by every rank and one sender's messages stay in
//! order, so a rank's `n`-th collective message from a peer belongs to its `n`-th collective
//! with that peer: no sequence numbers are needed.
//!
//! Every buffer travels packed (`Buf::pack`); a send never waits for its receiver (local
//! messages are copied into their envelope, messages to other processes wait only for their
//! transport while taking arrivals), so sending to every peer before receiving cannot
//! deadlock.
#![forbid(unsafe_code)]

use super::ThreadComm;
use crate::datatype::Buf;
use crate::error::MpiResult;
use crate::op::Reduction;

fn packed(b: &Buf) -> Vec<u8> {
    let mut v = vec![0u8; b.len()];
    b.pack(0, &mut v);
    v
}

/// The packed bytes of `len` bytes of `b` from packed offset `at`.
fn packed_part(b: &Buf, at: usize, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    b.pack(at, &mut v);
    v
}

/// `data` into `b` from packed offset `at`, cut to what fits.
fn unpack_at(b: &Buf, at: usize, data: &[u8]) {
    let room = b.len().saturating_sub(at);
    b.unpack(at, &data[..data.len().min(room)]);
}

/// The reduction of `parts` in rank order (`parts[0]` first), as MPI defines it for
/// operations that are not commutative.
fn fold(mut parts: Vec<Vec<u8>>, red: &Reduction) -> Vec<u8> {
    let mut acc = parts.pop().unwrap_or_default();
    while let Some(p) = parts.pop() {
        red.apply(&p, &mut acc);
    }
    acc
}

impl ThreadComm {
    /// Every rank's `mine` at `root` (in rank order), `None` elsewhere.
    fn gather_bytes(&self, me: u32, mine: Vec<u8>, root: u32) -> MpiResult<Option<Vec<Vec<u8>>>> {
        if me != root {
            self.coll_send(me, root, &mine)?;
            return Ok(None);
        }
        let mut mine = Some(mine);
        let all = (0..self.size())
            .map(|r| match r == me {
                true => mine.take().unwrap_or_default(),
                false => self.coll_recv(me, r),
            })
            .collect();
        Ok(Some(all))
    }

    /// `root`'s `data` at every rank.
    fn bcast_bytes(&self, me: u32, data: Option<Vec<u8>>, root: u32) -> MpiResult<Vec<u8>> {
        if me != root {
            return Ok(self.coll_recv(me, root));
        }
        let data = data.unwrap_or_default();
        for r in (0..self.size()).filter(|&r| r != me) {
            self.coll_send(me, r, &data)?;
        }
        Ok(data)
    }

    /// `parts[r]` from `root` to each rank `r`; the root's own part returned to it.
    fn scatter_bytes(&self, me: u32, parts: Option<Vec<Vec<u8>>>, root: u32) -> MpiResult<Vec<u8>> {
        if me != root {
            return Ok(self.coll_recv(me, root));
        }
        let mut own = Vec::new();
        for (r, p) in parts.unwrap_or_default().into_iter().enumerate() {
            if r as u32 == me {
                own = p;
            } else {
                self.coll_send(me, r as u32, &p)?;
            }
        }
        Ok(own)
    }

    /// A barrier of `leaders` (ranks, `me` among them; the first gathers and releases).
    pub(super) fn leaders_barrier(&self, me: u32, leaders: &[u32]) -> MpiResult<()> {
        let (&head, rest) = leaders.split_first().expect("at least one process");
        if me != head {
            self.coll_send(me, head, &[])?;
            self.coll_recv(me, head);
            return Ok(());
        }
        for &l in rest {
            self.coll_recv(me, l);
        }
        for &l in rest {
            self.coll_send(me, l, &[])?;
        }
        Ok(())
    }

    /// `MPI_Barrier` over several processes: this process's ranks meet on `coll`'s shared
    /// barrier, its first rank meets the other processes' first ranks (one message each way
    /// per process, instead of one per rank), then this process's ranks leave together.
    pub(super) fn span_barrier(&self, me: u32, leaders: &[u32]) -> MpiResult<()> {
        self.barrier.wait(|| {});
        let crossed = match me == self.base {
            true => self.leaders_barrier(me, leaders),
            false => Ok(()),
        };
        self.barrier.wait(|| {});
        crossed
    }

    pub(super) fn span_bcast(&self, me: u32, buf: &Buf, root: u32) -> MpiResult<()> {
        let data = (me == root).then(|| packed(buf));
        let got = self.bcast_bytes(me, data, root)?;
        if me != root {
            unpack_at(buf, 0, &got);
        }
        Ok(())
    }

    pub(super) fn span_reduce(
        &self,
        me: u32,
        send: Option<&Buf>,
        recv: &Buf,
        red: &Reduction,
        root: u32,
    ) -> MpiResult<()> {
        let mine = packed(send.unwrap_or(recv));
        if let Some(all) = self.gather_bytes(me, mine, root)? {
            unpack_at(recv, 0, &fold(all, red));
        }
        Ok(())
    }

    pub(super) fn span_allreduce(
        &self,
        me: u32,
        send: Option<&Buf>,
        recv: &Buf,
        red: &Reduction,
    ) -> MpiResult<()> {
        let mine = packed(send.unwrap_or(recv));
        let acc = self.gather_bytes(me, mine, 0)?.map(|all| fold(all, red));
        let acc = self.bcast_bytes(me, acc, 0)?;
        unpack_at(recv, 0, &acc);
        Ok(())
    }

    /// `MPI_Scan`, or `MPI_Exscan` when `exclusive` (rank 0's `recv` left alone).
    pub(super) fn span_scan(
        &self,
        me: u32,
        send: Option<&Buf>,
        recv: &Buf,
        red: &Reduction,
        exclusive: bool,
    ) -> MpiResult<()> {
        let mine = packed(send.unwrap_or(recv));
        let prefixes = self.gather_bytes(me, mine, 0)?.map(|all| {
            let mut out = Vec::with_capacity(all.len());
            let mut acc: Option<Vec<u8>> = None;
            for p in all {
                let next = match &acc {
                    None => p,
                    Some(a) => {
                        let mut n = p;
                        red.apply(a, &mut n);
                        n
                    }
                };
                out.push(if exclusive {
                    acc.replace(next).unwrap_or_default()
                } else {
                    acc = Some(next.clone());
                    next
                });
            }
            out
        });
        let got = self.scatter_bytes(me, prefixes, 0)?;
        if !(exclusive && me == 0) {
            unpack_at(recv, 0, &got);
        }
        Ok(())
    }

    /// `MPI_Gather`: `recv` (at the root) holds one block per rank; `send` `None` is the
    /// root's `MPI_IN_PLACE`.
    pub(super) fn span_gather(
        &self,
        me: u32,
        send: Option<&Buf>,
        recv: &Buf,
        root: u32,
    ) -> MpiResult<()> {
        let b = recv.len() / self.size() as usize;
        let mine = send.map(packed).unwrap_or_default();
        if let Some(all) = self.gather_bytes(me, mine, root)? {
            for (r, d) in all.iter().enumerate() {
                if r as u32 != me || send.is_some() {
                    unpack_at(recv, r * b, &d[..d.len().min(b)]);
                }
            }
        }
        Ok(())
    }

    /// `MPI_Allgather`: `send` `None` is `MPI_IN_PLACE` (the rank's block of `recv`).
    pub(super) fn span_allgather(&self, me: u32, send: Option<&Buf>, recv: &Buf) -> MpiResult<()> {
        let b = recv.len() / self.size() as usize;
        let mine = match send {
            Some(s) => packed(s),
            None => packed_part(recv, me as usize * b, b),
        };
        let all = self.gather_bytes(me, mine, 0)?.map(|all| {
            all.into_iter()
                .flat_map(|mut d| {
                    d.resize(b, 0);
                    d
                })
                .collect()
        });
        let all = self.bcast_bytes(me, all, 0)?;
        unpack_at(recv, 0, &all);
        Ok(())
    }

    /// `MPI_Scatter`: `send` (at the root) holds one block per rank; `recv` `None` is the
    /// root's `MPI_IN_PLACE`.
    pub(super) fn span_scatter(
        &self,
        me: u32,
        send: &Buf,
        recv: Option<&Buf>,
        root: u32,
    ) -> MpiResult<()> {
        let n = self.size() as usize;
        let parts = (me == root).then(|| {
            let b = send.len() / n;
            (0..n).map(|r| packed_part(send, r * b, b)).collect()
        });
        let got = self.scatter_bytes(me, parts, root)?;
        if let Some(r) = recv {
            unpack_at(r, 0, &got);
        }
        Ok(())
    }

    /// `MPI_Alltoall`: `send` `None` is `MPI_IN_PLACE` (the blocks are taken from `recv`).
    pub(super) fn span_alltoall(&self, me: u32, send: Option<&Buf>, recv: &Buf) -> MpiResult<()> {
        let n = self.size() as usize;
        let all = packed(send.unwrap_or(recv));
        let sb = all.len() / n;
        let b = recv.len() / n;
        for r in (0..n as u32).filter(|&r| r != me) {
            self.coll_send(me, r, &all[r as usize * sb..(r as usize + 1) * sb])?;
        }
        let at = me as usize * sb;
        unpack_at(recv, me as usize * b, &all[at..at + sb.min(b)]);
        for r in (0..n as u32).filter(|&r| r != me) {
            let d = self.coll_recv(me, r);
            unpack_at(recv, r as usize * b, &d[..d.len().min(b)]);
        }
        Ok(())
    }

    /// `MPI_Gatherv`: `recv` (at the root) is one part per rank; `send` `None` is the root's
    /// `MPI_IN_PLACE`.
    pub fn gatherv(&self, me: u32, send: Option<&Buf>, recv: &[Buf], root: u32) -> MpiResult<()> {
        self.check_rank(root, "root")?;
        let mine = send.map(packed).unwrap_or_default();
        if let Some(all) = self.gather_bytes(me, mine, root)? {
            for (r, (d, part)) in all.iter().zip(recv).enumerate() {
                if r as u32 != me || send.is_some() {
                    unpack_at(part, 0, d);
                }
            }
        }
        Ok(())
    }

    /// `MPI_Scatterv`: `send` (at the root) is one part per rank; `recv` `None` is the
    /// root's `MPI_IN_PLACE`.
    pub fn scatterv(&self, me: u32, send: &[Buf], recv: Option<&Buf>, root: u32) -> MpiResult<()> {
        self.check_rank(root, "root")?;
        let parts = (me == root).then(|| send.iter().map(packed).collect());
        let got = self.scatter_bytes(me, parts, root)?;
        if let Some(r) = recv {
            unpack_at(r, 0, &got);
        }
        Ok(())
    }

    /// `MPI_Allgatherv`: `recv` is one part per rank; `send` `None` is `MPI_IN_PLACE` (the
    /// rank's own part of `recv`).
    pub fn allgatherv(&self, me: u32, send: Option<&Buf>, recv: &[Buf]) -> MpiResult<()> {
        let mine = match send {
            Some(s) => packed(s),
            None => recv.get(me as usize).map(packed).unwrap_or_default(),
        };
        let all = self.gather_bytes(me, mine, 0)?.map(|all| {
            all.into_iter()
                .zip(recv)
                .flat_map(|(mut d, part)| {
                    d.resize(part.len(), 0);
                    d
                })
                .collect()
        });
        let all = self.bcast_bytes(me, all, 0)?;
        let mut at = 0;
        for part in recv {
            let end = (at + part.len()).min(all.len());
            unpack_at(part, 0, &all[at..end]);
            at = end;
        }
        Ok(())
    }

    /// `MPI_Alltoallv`/`MPI_Alltoallw`: one part per rank on each side; `send` `None` is
    /// `MPI_IN_PLACE` (the parts are taken from `recv`).
    pub fn alltoallv(&self, me: u32, send: Option<&[Buf]>, recv: &[Buf]) -> MpiResult<()> {
        let out: Vec<Vec<u8>> = send.unwrap_or(recv).iter().map(packed).collect();
        for (r, d) in out.iter().enumerate().filter(|&(r, _)| r as u32 != me) {
            self.coll_send(me, r as u32, d)?;
        }
        for (r, part) in recv.iter().enumerate() {
            if r as u32 == me {
                unpack_at(part, 0, &out[r]);
            } else {
                unpack_at(part, 0, &self.coll_recv(me, r as u32));
            }
        }
        Ok(())
    }

    /// `MPI_Reduce_scatter`/`_block`: the reduction of every rank's `send` (`sizes[r]` bytes
    /// go to rank `r`, in order) lands in each rank's `recv`.
    pub fn reduce_scatter(
        &self,
        me: u32,
        send: &Buf,
        recv: &Buf,
        red: &Reduction,
        sizes: &[usize],
    ) -> MpiResult<()> {
        let parts = self.gather_bytes(me, packed(send), 0)?.map(|all| {
            let acc = fold(all, red);
            let mut at = 0;
            sizes
                .iter()
                .map(|&n| {
                    let end = (at + n).min(acc.len());
                    let part = acc[at..end].to_vec();
                    at = end;
                    part
                })
                .collect()
        });
        let got = self.scatter_bytes(me, parts, 0)?;
        unpack_at(recv, 0, &got);
        Ok(())
    }
}
