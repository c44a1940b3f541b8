//! Collective data access (`MPI_File_read_all`, `_write_all`, `_at_all`, `_ordered`, split
//! collectives) with two-phase aggregation: many small noncontiguous pieces of all ranks
//! become a few large contiguous file accesses.
//!
//! 1. Every rank lists the file pieces of its access (its view's pieces, in file order) and
//!    the ranks exchange their ranges. If no two ranks' ranges interleave, or the pieces
//!    average `LARGE_PIECE` bytes or more (or aggregation is switched off by
//!    `romio_cb_read`/`romio_cb_write`), each rank accesses its own pieces.
//! 2. Otherwise the span of all accesses is cut into one file domain per aggregator
//!    (`cb_nodes` ranks spread over the communicator), each handled in windows of
//!    `cb_buffer_size` bytes, one window per aggregator per round.
//! 3. The ranks send each aggregator the list of their pieces inside its domain (one
//!    exchange), then per round exchange the data: for a write an aggregator receives each
//!    rank's bytes straight into their places in its window buffer (a datatype made of the
//!    rank's pieces) and writes every contiguous run of the window with one `pwrite`; for a
//!    read it reads the window's span once and sends each rank its pieces the same way.
//!    Bytes nobody accessed are never written (no read-modify-write).
//!
//! The steps run as a state machine (`CollOp`) over the nonblocking collectives, each phase
//! on a sequence number reserved when the operation starts (so operations started in the
//! same order everywhere match, whatever order their later phases run in): blocking
//! collectives drive it to the end at the call, nonblocking ones (`MPI_File_iread_all`, ...)
//! from their request's `poll_fn` (`nb.rs`).
#![forbid(unsafe_code)]

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::coll;
use crate::coll::sched::with_seq;
use crate::datatype::access::Scratch;
use crate::datatype::{Buf, Type};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::io::config::Buffering;
use crate::io::file::{byte_type, File};
use crate::io::rw::{self, Conv, Mem};
use crate::io::sys::RangeLock;
use crate::io::view::View;
use crate::progress;
use crate::request::ReqId;

/// Sequence numbers an operation reserves for its exchanges (ranges, lengths, piece lists,
/// one per round, the final agreement): at most this many minus 4 rounds.
const SEQS: u32 = 4096;
const MAX_ROUNDS: u64 = (SEQS - 4) as u64;
/// Average piece size from which `automatic` collective buffering lets every rank access its
/// own pieces (a system call per piece costs under a few percent of copying it).
const LARGE_PIECE: u64 = 64 << 10;

/// The bytes of an access in stream order: the user's buffer itself, or a copy.
struct Stream {
    scratch: Option<Scratch>,
    buf: Buf,
}

impl Stream {
    fn for_write(mem: &Mem) -> MpiResult<Stream> {
        if let Some(data) = mem.converted()? {
            let mut s = Scratch::new(data.len());
            s.bytes_mut().copy_from_slice(&data);
            let buf = s.buf();
            return Ok(Stream {
                scratch: Some(s),
                buf,
            });
        }
        if mem.buf.is_contiguous() {
            return Ok(Stream {
                scratch: None,
                buf: mem.buf,
            });
        }
        let mut s = Scratch::copy_of(&mem.buf);
        let buf = s.buf();
        Ok(Stream {
            scratch: Some(s),
            buf,
        })
    }

    fn for_read(mem: &Mem) -> Stream {
        if matches!(mem.conv, Conv::None) && mem.buf.is_contiguous() {
            return Stream {
                scratch: None,
                buf: mem.buf,
            };
        }
        let mut s = Scratch::new(mem.file_len() as usize);
        let buf = s.buf();
        Stream {
            scratch: Some(s),
            buf,
        }
    }

    /// Hand `got` bytes read to the user's buffer.
    fn finish_read(&self, mem: &Mem, got: u64) -> MpiResult<u64> {
        match &self.scratch {
            None => Ok(got),
            Some(s) if !matches!(mem.conv, Conv::None) => {
                mem.store_converted(&s.bytes()[..got as usize])?;
                Ok(mem.mem_bytes(got))
            }
            Some(s) => {
                mem.buf.unpack(0, &s.bytes()[..got as usize]);
                Ok(got)
            }
        }
    }
}

/// A piece of this rank's access: file offset, length, stream offset.
#[derive(Clone, Copy, Debug)]
struct Piece {
    off: u64,
    len: u64,
    at: u64,
}

/// How the span of all accesses is divided among aggregators.
struct Plan {
    gmin: u64,
    domain: u64,
    window: u64,
    rounds: u64,
    aggregators: Vec<u32>,
}

impl Plan {
    /// Aggregator index and round of the window holding file offset `off`, and the window's
    /// end.
    fn window_of(&self, off: u64) -> (usize, u64, u64) {
        let rel = off - self.gmin;
        let i = (rel / self.domain) as usize;
        let r = (rel - i as u64 * self.domain) / self.window;
        let start = self.gmin + i as u64 * self.domain + r * self.window;
        let dom_end = self.gmin + (i as u64 + 1) * self.domain;
        (i, r, (start + self.window).min(dom_end))
    }

    fn window_start(&self, i: usize, r: u64) -> u64 {
        self.gmin + i as u64 * self.domain + r * self.window
    }
}

/// This rank's pieces cut at window boundaries: per aggregator, per round, the pieces and
/// the stream range they cover.
fn split(plan: &Plan, pieces: &[Piece]) -> Vec<Vec<Vec<Piece>>> {
    let n = plan.aggregators.len();
    let mut out = vec![vec![Vec::new(); plan.rounds as usize]; n];
    for p in pieces {
        let mut off = p.off;
        let mut at = p.at;
        let end = p.off + p.len;
        while off < end {
            let (i, r, wend) = plan.window_of(off);
            let take = wend.min(end) - off;
            out[i][r as usize].push(Piece { off, len: take, at });
            off += take;
            at += take;
        }
    }
    out
}

fn words(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

fn scratch_of(w: &[u64]) -> Scratch {
    let mut s = Scratch::new(w.len() * 8);
    for (k, v) in w.iter().enumerate() {
        s.bytes_mut()[k * 8..k * 8 + 8].copy_from_slice(&v.to_le_bytes());
    }
    s
}

/// An hindexed type of bytes placing `runs` (offset in the window, length) over a window
/// buffer.
fn layout(runs: &[(u64, u64)]) -> MpiResult<Arc<Type>> {
    let lens: Vec<usize> = runs.iter().map(|r| r.1 as usize).collect();
    let disps: Vec<i64> = runs.iter().map(|r| r.0 as i64).collect();
    let t = Type::indexed(&lens, &disps, true, false, &byte_type(), false)?;
    t.commit();
    Ok(t)
}

/// Where a collective operation is.
enum Phase {
    /// Exchanging every rank's (first offset, end, number of pieces).
    Ranges,
    /// Exchanging the lengths of the piece lists.
    Lens,
    /// Exchanging the piece lists.
    Meta,
    /// Round r: exchanging its data (a read's window was read before).
    Round(usize),
    /// Agreeing on failures.
    Agree,
    Done,
}

/// A collective access in progress.
pub struct CollOp {
    file: Arc<File>,
    mem: Mem,
    write: bool,
    func: String,
    pieces: Vec<Piece>,
    stream: Option<Stream>,
    /// Why this rank takes part without data (a mode error), reported at the end.
    refused: Option<MpiError>,
    seq: u32,
    phase: Phase,
    /// The exchange in flight.
    pending: Option<ReqId>,
    /// Buffers of the exchange in flight (kept until it completes).
    out: Vec<Scratch>,
    inn: Vec<Scratch>,
    keep: Vec<Arc<Type>>,
    plan: Option<Plan>,
    mine: Vec<Vec<Vec<Piece>>>,
    /// At an aggregator: per source, per round, the pieces (file offset, length).
    theirs: Vec<Vec<Vec<(u64, u64)>>>,
    my_aggr: Option<usize>,
    wbuf: Scratch,
    /// The merged runs of the current round's window (aggregators).
    runs: Vec<(u64, u64)>,
    failure: Option<MpiError>,
    result: Option<MpiResult<(u64, u64)>>,
}

impl CollOp {
    /// Start a collective access of `mem` at stream position `pos` of `view` (every rank of
    /// the file's communicator calls this in the same order).
    pub fn start(
        file: &Arc<File>,
        view: &View,
        pos: u64,
        mem: Mem,
        write: bool,
        func: &str,
    ) -> MpiResult<CollOp> {
        let refused = if write {
            rw::check_writable(file, func)
        } else {
            rw::check_readable(file, func)
        }
        .err();
        let len = if refused.is_none() { mem.file_len() } else { 0 };
        // A read moves nothing past the end of the file (the user's buffer beyond what was
        // read stays as it was).
        let eof = if write || len == 0 {
            u64::MAX
        } else {
            file.size(func)?
        };
        let mut pieces = Vec::new();
        let mut at = 0;
        view.pieces(pos, len, |off, l| {
            let l = l.min(eof.saturating_sub(off));
            if l > 0 {
                pieces.push(Piece { off, len: l, at });
            }
            at += l;
            off + l < eof
        });
        let stream = if refused.is_some() {
            None
        } else if write {
            Some(Stream::for_write(&mem)?)
        } else {
            Some(Stream::for_read(&mem))
        };
        let (lo, hi) = match (pieces.first(), pieces.last()) {
            (Some(f), Some(l)) => (f.off, l.off + l.len),
            _ => (u64::MAX, 0),
        };
        let comm = &file.comm;
        let seq = comm.coll_seq.fetch_add(SEQS, Ordering::Relaxed);
        let mut op = CollOp {
            file: file.clone(),
            mem,
            write,
            func: func.to_owned(),
            pieces,
            stream,
            refused,
            seq,
            phase: Phase::Ranges,
            pending: None,
            out: vec![scratch_of(&[lo, hi, 0, 0])],
            inn: vec![Scratch::new(32 * comm.size() as usize)],
            keep: Vec::new(),
            plan: None,
            mine: Vec::new(),
            theirs: Vec::new(),
            my_aggr: None,
            wbuf: Scratch::new(0),
            runs: Vec::new(),
            failure: None,
            result: None,
        };
        // Pieces that overlap or go back (a read-only view may have them) do not split into
        // windows as stream ranges: such an access is done without aggregation.
        let backward = op.pieces.windows(2).any(|w| w[1].off < w[0].off + w[0].len);
        let word = op.pieces.len() as u64 | (backward as u64) << 63;
        op.out[0].bytes_mut()[16..24].copy_from_slice(&word.to_le_bytes());
        let bytes: u64 = op.pieces.iter().map(|p| p.len).sum();
        op.out[0].bytes_mut()[24..32].copy_from_slice(&bytes.to_le_bytes());
        let (send, recv) = (op.out[0].buf(), op.inn[0].buf());
        op.pending = Some(op.exchange(0, |c, o| coll::iallgather(c, Some(&send), &recv, o))?);
        Ok(op)
    }

    /// Start exchange `k` of this operation (its reserved sequence number).
    fn exchange(
        &self,
        k: u32,
        f: impl FnOnce(&crate::object::Comm, usize) -> MpiResult<ReqId>,
    ) -> MpiResult<ReqId> {
        with_seq(self.seq + k, || f(&self.file.comm, 0))
    }

    /// Whether the exchange in flight is over (waiting for it when `block`).
    fn ready(&mut self, block: bool) -> MpiResult<bool> {
        let Some(id) = self.pending else {
            return Ok(true);
        };
        let inst = &self.file.comm.session.instance;
        let done = if block {
            Some(progress::wait(inst, id))
        } else {
            progress::take_if_complete(inst, id)
        };
        match done {
            None => Ok(false),
            Some(c) => {
                self.pending = None;
                c.status.into_result().map(|_| true)
            }
        }
    }

    /// The outcome, once `step` returned true.
    pub fn result(&mut self) -> MpiResult<(u64, u64)> {
        self.result.take().unwrap_or_else(|| {
            Err(MpiError::new(
                ErrorClass::Intern,
                "collective access not finished",
            ))
        })
    }

    /// Advance as far as possible (to the end when `block`). Returns whether it finished.
    pub fn step(&mut self, block: bool) -> bool {
        loop {
            if matches!(self.phase, Phase::Done) {
                return true;
            }
            match self.ready(block) {
                Ok(false) => return false,
                Ok(true) => {}
                Err(e) => {
                    // The communication failed: nothing more can be agreed on.
                    self.result = Some(Err(e));
                    self.phase = Phase::Done;
                    return true;
                }
            }
            if let Err(e) = self.advance() {
                self.result = Some(Err(e));
                self.phase = Phase::Done;
                return true;
            }
        }
    }

    /// The exchange that was in flight is over: act on it and start the next one.
    fn advance(&mut self) -> MpiResult<()> {
        match self.phase {
            Phase::Ranges => self.after_ranges(),
            Phase::Lens => {
                let lens = words(self.inn[0].bytes());
                self.inn = lens.iter().map(|&l| Scratch::new(l as usize)).collect();
                let send: Vec<Buf> = self.out[1..].iter_mut().map(|s| s.buf()).collect();
                let recv: Vec<Buf> = self.inn.iter_mut().map(|s| s.buf()).collect();
                self.phase = Phase::Meta;
                self.pending =
                    Some(self.exchange(2, |c, o| coll::ialltoallv(c, Some(&send), &recv, o))?);
                Ok(())
            }
            Phase::Meta => {
                self.parse_meta();
                self.out.clear();
                self.inn.clear();
                self.begin_round(0)
            }
            Phase::Round(r) => {
                self.keep.clear();
                if self.write {
                    self.write_window();
                }
                self.begin_round(r + 1)
            }
            Phase::Agree => {
                let all = words(self.inn[0].bytes());
                self.finish(all.into_iter().find(|&c| c != 0).unwrap_or(0));
                Ok(())
            }
            Phase::Done => Ok(()),
        }
    }

    fn after_ranges(&mut self) -> MpiResult<()> {
        let all = words(self.inn[0].bytes());
        let comm = self.file.comm.clone();
        let backward = all.chunks(4).any(|c| c[2] >> 63 != 0);
        let pieces: u64 = all.chunks(4).map(|c| c[2] & !(1 << 63)).sum();
        let bytes: u64 = all.chunks(4).map(|c| c[3]).sum();
        let ranges: Vec<(u64, u64)> = all
            .chunks(4)
            .filter(|c| c[2] & !(1 << 63) > 0)
            .map(|c| (c[0], c[1]))
            .collect();
        let hints = self.file.hints();
        let mode = if self.write {
            hints.cb_write
        } else {
            hints.cb_read
        };
        let interleaved = {
            let mut r = ranges.clone();
            r.sort();
            r.windows(2).any(|w| w[1].0 < w[0].1)
        };
        let aggregate = comm.size() > 1
            && !backward
            && !ranges.is_empty()
            && match mode {
                Buffering::Enable => true,
                Buffering::Disable => false,
                // Pieces this large are already large accesses: moving them through an
                // aggregator would only add copies.
                Buffering::Auto => interleaved && bytes < LARGE_PIECE * pieces.max(1),
            };
        if !aggregate {
            self.independent();
            return Ok(());
        }
        let gmin = ranges.iter().map(|r| r.0).min().unwrap_or(0);
        let gmax = ranges.iter().map(|r| r.1).max().unwrap_or(0);
        let size = comm.size() as usize;
        let naggr = match hints.cb_nodes {
            0 => size,
            n => n.min(size),
        }
        .max(1);
        let mut domain = (gmax - gmin).div_ceil(naggr as u64).max(1);
        if domain > 4096 {
            domain = domain.div_ceil(4096) * 4096;
        }
        let window = (hints.cb_buffer_size as u64)
            .max(domain.div_ceil(MAX_ROUNDS))
            .min(domain)
            .max(1);
        let plan = Plan {
            gmin,
            domain,
            window,
            rounds: domain.div_ceil(window),
            aggregators: (0..naggr).map(|i| (i * size / naggr) as u32).collect(),
        };
        self.mine = split(&plan, &self.pieces);
        self.my_aggr = plan.aggregators.iter().position(|&a| a == comm.rank);
        // The piece lists: to aggregator a, [count per round..., (off, len)...].
        let mut msgs: Vec<Vec<u64>> = vec![Vec::new(); size];
        for (i, &a) in plan.aggregators.iter().enumerate() {
            let m = &mut msgs[a as usize];
            m.extend(self.mine[i].iter().map(|r| r.len() as u64));
            for r in &self.mine[i] {
                for p in r {
                    m.push(p.off);
                    m.push(p.len);
                }
            }
        }
        if self.my_aggr.is_some() {
            self.wbuf = Scratch::new(plan.window as usize);
        }
        self.plan = Some(plan);
        let lens: Vec<u64> = msgs.iter().map(|m| m.len() as u64 * 8).collect();
        self.out = std::iter::once(scratch_of(&lens))
            .chain(msgs.iter().map(|m| scratch_of(m)))
            .collect();
        self.inn = vec![Scratch::new(8 * size)];
        let (send, recv) = (self.out[0].buf(), self.inn[0].buf());
        self.phase = Phase::Lens;
        self.pending = Some(self.exchange(1, |c, o| coll::ialltoall(c, Some(&send), &recv, o))?);
        Ok(())
    }

    /// No aggregation: each rank accesses its own pieces.
    fn independent(&mut self) {
        let func = self.func.clone();
        let r = if self.refused.is_some() {
            Ok((0, 0))
        } else {
            self.direct(&func)
        };
        self.phase = Phase::Done;
        self.result = Some(match (self.refused.take(), r) {
            (Some(e), _) => Err(e),
            (None, r) => r,
        });
    }

    /// Access this rank's pieces itself (no aggregation; the pieces are those of the view
    /// and position the operation started with).
    fn direct(&mut self, func: &str) -> MpiResult<(u64, u64)> {
        let stream = self.stream.as_ref().expect("a stream when allowed");
        let mut done = 0u64;
        for p in &self.pieces {
            let b = stream.buf.slice(p.at as usize, p.len as usize);
            if self.write {
                b.with_bytes(|d| rw::pwrite(&self.file, d, p.off, func))?;
                done += p.len;
            } else {
                let got = b.with_bytes_mut(|d| rw::pread(&self.file, d, p.off, func))? as u64;
                done += got;
                if got < p.len {
                    break;
                }
            }
        }
        if self.write {
            return Ok((done, self.mem.buf.len() as u64));
        }
        let m = stream.finish_read(&self.mem, done)?;
        Ok((done, m))
    }

    fn parse_meta(&mut self) {
        let rounds = self.plan.as_ref().map_or(0, |p| p.rounds as usize);
        if self.my_aggr.is_none() {
            return;
        }
        self.theirs = self
            .inn
            .iter()
            .map(|s| {
                let w = words(s.bytes());
                if w.is_empty() {
                    return vec![Vec::new(); rounds];
                }
                let mut k = rounds;
                (0..rounds)
                    .map(|r| {
                        let n = w[r] as usize;
                        let v = (0..n).map(|j| (w[k + 2 * j], w[k + 2 * j + 1])).collect();
                        k += 2 * n;
                        v
                    })
                    .collect()
            })
            .collect();
    }

    /// Set up round `r`'s exchange (after the last round, the agreement).
    fn begin_round(&mut self, r: usize) -> MpiResult<()> {
        let plan = self.plan.as_ref().expect("planned");
        let size = self.file.comm.size() as usize;
        if r as u64 >= plan.rounds {
            let class = self
                .failure
                .as_ref()
                .or(self.refused.as_ref())
                .map_or(0, |e| e.class() as u64);
            self.out = vec![scratch_of(&[class])];
            self.inn = vec![Scratch::new(8 * size)];
            let (send, recv) = (self.out[0].buf(), self.inn[0].buf());
            self.phase = Phase::Agree;
            let k = 3 + plan.rounds as u32;
            self.pending =
                Some(self.exchange(k, |c, o| coll::iallgather(c, Some(&send), &recv, o))?);
            return Ok(());
        }
        // This rank's side: the stream range for each aggregator's window.
        let mut mine_bufs = vec![Buf::EMPTY; size];
        if let Some(stream) = &self.stream {
            for (i, &a) in plan.aggregators.iter().enumerate() {
                let ps = &self.mine[i][r];
                if let (Some(f), Some(l)) = (ps.first(), ps.last()) {
                    mine_bufs[a as usize] = stream
                        .buf
                        .slice(f.at as usize, (l.at + l.len - f.at) as usize);
                }
            }
        }
        // The aggregator's side: each source's pieces placed in the window buffer.
        let mut agg_bufs = vec![Buf::EMPTY; size];
        self.runs.clear();
        if let Some(i) = self.my_aggr {
            let wstart = plan.window_start(i, r as u64);
            let mut runs = Vec::new();
            for (j, src) in self.theirs.iter().enumerate() {
                let ps = &src[r];
                if ps.is_empty() {
                    continue;
                }
                let rel: Vec<(u64, u64)> = ps.iter().map(|&(o, l)| (o - wstart, l)).collect();
                runs.extend(ps.iter().copied());
                let t = layout(&rel)?;
                agg_bufs[j] = self.wbuf.typed(&t).expect("pieces lie inside the window");
                self.keep.push(t);
            }
            runs.sort_unstable();
            for (o, l) in runs {
                match self.runs.last_mut() {
                    Some(m) if o <= m.0 + m.1 => m.1 = m.1.max(o + l - m.0),
                    _ => self.runs.push((o, l)),
                }
            }
            if !self.write {
                self.read_window(wstart);
            }
        }
        self.phase = Phase::Round(r);
        let k = 3 + r as u32;
        self.pending = Some(if self.write {
            self.exchange(k, |c, o| {
                coll::ialltoallv(c, Some(&mine_bufs), &agg_bufs, o)
            })?
        } else {
            self.exchange(k, |c, o| {
                coll::ialltoallv(c, Some(&agg_bufs), &mine_bufs, o)
            })?
        });
        Ok(())
    }

    /// An aggregator reads the span of its window's runs at once.
    fn read_window(&mut self, wstart: u64) {
        if self.runs.is_empty() || self.failure.is_some() {
            return;
        }
        let (s, e) = (self.runs[0].0, self.runs.last().map_or(0, |m| m.0 + m.1));
        let file = self.file.clone();
        let _lock = span_lock(&file, &self.runs, false);
        let b = (s - wstart) as usize;
        let n = (e - s) as usize;
        let mut area = std::mem::take(&mut self.wbuf);
        if let Err(e) = rw::pread(&self.file, &mut area.bytes_mut()[b..b + n], s, &self.func) {
            self.failure = Some(e);
        }
        self.wbuf = area;
    }

    /// An aggregator writes each contiguous run of its window.
    fn write_window(&mut self) {
        let (Some(i), Some(plan)) = (self.my_aggr, self.plan.as_ref()) else {
            return;
        };
        if self.runs.is_empty() || self.failure.is_some() {
            return;
        }
        let Phase::Round(r) = self.phase else { return };
        let wstart = plan.window_start(i, r as u64);
        let file = self.file.clone();
        let _lock = span_lock(&file, &self.runs, true);
        for &(o, l) in &self.runs {
            let b = (o - wstart) as usize;
            if let Err(e) = rw::pwrite(
                &self.file,
                &self.wbuf.bytes()[b..b + l as usize],
                o,
                &self.func,
            ) {
                self.failure = Some(e);
                break;
            }
        }
    }

    fn finish(&mut self, agreed: u64) {
        self.phase = Phase::Done;
        let func = &self.func;
        let r = if let Some(e) = self.refused.take().or(self.failure.take()) {
            Err(e)
        } else if agreed != 0 {
            Err(MpiError::new(
                ErrorClass::from_i32(agreed as i32).unwrap_or(ErrorClass::Io),
                format!(
                    "{func}(\"{}\"): the access failed on another rank",
                    self.file.name
                ),
            ))
        } else {
            // The pieces end where the file ended: what moved is the stream up to there.
            let total = self.pieces.iter().map(|p| p.len).sum::<u64>();
            if self.write {
                Ok((total, self.mem.buf.len() as u64))
            } else {
                let stream = self.stream.as_ref().expect("a stream when allowed");
                stream.finish_read(&self.mem, total).map(|m| (total, m))
            }
        };
        self.result = Some(r);
    }
}

/// In atomic mode, a lock over the span of `runs`.
fn span_lock<'f>(file: &'f File, runs: &[(u64, u64)], write: bool) -> Option<RangeLock<'f>> {
    let (s, e) = (runs.first()?.0, runs.last().map(|m| m.0 + m.1)?);
    if file.state().atomic {
        RangeLock::new(&file.fd, s, e - s, write).ok()
    } else {
        None
    }
}

/// A blocking collective access (every rank of the file's communicator calls it). Returns
/// (stream bytes, memory bytes) accessed by this rank.
pub fn access_all(
    file: &Arc<File>,
    view: &View,
    pos: u64,
    mem: Mem,
    write: bool,
    func: &str,
) -> MpiResult<(u64, u64)> {
    let mut op = CollOp::start(file, view, pos, mem, write, func)?;
    op.step(true);
    op.result()
}
