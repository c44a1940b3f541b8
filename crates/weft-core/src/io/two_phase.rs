//! Collective data access (`MPI_File_read_all`, `_write_all`, `_at_all`, `_ordered`, split
//! collectives) with two-phase aggregation: many small noncontiguous pieces of all ranks
//! become a few large contiguous file accesses.
//!
//! 1. Every rank lists the file pieces of its access (its view's pieces, in file order) and
//!    the ranks exchange their ranges. If no two ranks' ranges interleave (or aggregation is
//!    switched off by `romio_cb_read`/`romio_cb_write`), each rank accesses its own pieces.
//! 2. Otherwise the span of all accesses is cut into one file domain per aggregator
//!    (`cb_nodes` ranks spread over the communicator), each handled in windows of
//!    `cb_buffer_size` bytes, one window per aggregator per round.
//! 3. The ranks send each aggregator the list of their pieces inside its domain (one
//!    exchange), then per round exchange the data: for a write an aggregator receives each
//!    rank's bytes straight into their places in its window buffer (a datatype made of the
//!    rank's pieces) and writes every contiguous run of the window with one `pwrite`; for a
//!    read it reads the window's span once and sends each rank its pieces the same way.
//!    Bytes nobody accessed are never written (no read-modify-write).
#![forbid(unsafe_code)]

use std::sync::Arc;

use crate::datatype::access::Scratch;
use crate::datatype::{Buf, Type};
use crate::error::MpiResult;
use crate::io::config::Buffering;
use crate::io::file::{byte_type, File};
use crate::io::rw::{self, Conv, Mem};
use crate::io::sys::RangeLock;
use crate::io::view::View;
use crate::io::exch;

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
            return Ok(Stream { scratch: Some(s), buf });
        }
        if mem.buf.is_contiguous() {
            return Ok(Stream { scratch: None, buf: mem.buf });
        }
        let mut s = Scratch::copy_of(&mem.buf);
        let buf = s.buf();
        Ok(Stream { scratch: Some(s), buf })
    }

    fn for_read(mem: &Mem) -> Stream {
        if matches!(mem.conv, Conv::None) && mem.buf.is_contiguous() {
            return Stream { scratch: None, buf: mem.buf };
        }
        let mut s = Scratch::new(mem.file_len() as usize);
        let buf = s.buf();
        Stream { scratch: Some(s), buf }
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

/// A collective access of `mem` at stream position `pos` of `view` by every rank of the
/// file's communicator. Returns (stream bytes, memory bytes) accessed by this rank.
pub fn access_all(
    file: &File,
    view: &View,
    pos: u64,
    mem: &Mem,
    write: bool,
    func: &str,
) -> MpiResult<(u64, u64)> {
    let comm = &file.comm;
    // Mode errors are local: a rank that cannot access still takes part in the exchanges
    // with nothing, then reports.
    let allowed = if write {
        rw::check_writable(file, func)
    } else {
        rw::check_readable(file, func)
    };
    let len = if allowed.is_ok() { mem.file_len() } else { 0 };
    // A read moves nothing past the end of the file (the user's buffer beyond what was
    // read stays as it was).
    let eof = if write || len == 0 { u64::MAX } else { file.size(func)? };
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
    let (lo, hi) = match (pieces.first(), pieces.last()) {
        (Some(f), Some(l)) => (f.off, l.off + l.len),
        _ => (u64::MAX, 0),
    };
    let hints = file.hints();
    let all = exch::allgather(comm, &[lo, hi, pieces.len() as u64])?;
    allowed?;
    let ranges: Vec<(u64, u64)> = all
        .chunks(3)
        .filter(|c| c[2] > 0)
        .map(|c| (c[0], c[1]))
        .collect();
    let mode = if write { hints.cb_write } else { hints.cb_read };
    let interleaved = {
        let mut r = ranges.clone();
        r.sort();
        r.windows(2).any(|w| w[1].0 < w[0].1)
    };
    let aggregate = comm.size() > 1
        && !ranges.is_empty()
        && match mode {
            Buffering::Enable => true,
            Buffering::Disable => false,
            Buffering::Auto => interleaved,
        };
    if !aggregate {
        return if write {
            rw::write(file, view, pos, mem, func).map(|m| (len, m))
        } else {
            let (s, m) = rw::read(file, view, pos, mem, func)?;
            Ok((s, m))
        };
    }
    let gmin = ranges.iter().map(|r| r.0).min().unwrap_or(0);
    let gmax = ranges.iter().map(|r| r.1).max().unwrap_or(0);
    let size = comm.size() as usize;
    let naggr = match hints.cb_nodes {
        0 => size,
        n => n.min(size),
    }
    .max(1);
    let span = gmax - gmin;
    let mut domain = span.div_ceil(naggr as u64).max(1);
    if domain > 4096 {
        domain = domain.div_ceil(4096) * 4096;
    }
    let window = (hints.cb_buffer_size as u64).min(domain).max(1);
    let plan = Plan {
        gmin,
        domain,
        window,
        rounds: domain.div_ceil(window),
        aggregators: (0..naggr).map(|i| (i * size / naggr) as u32).collect(),
    };
    run(file, &plan, &pieces, mem, write, func)
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

/// An hindexed type of bytes placing `runs` (offset in the window, length) over a window
/// buffer; `None` for a single run starting at `first` (a plain slice then).
fn layout(runs: &[(u64, u64)]) -> MpiResult<Arc<Type>> {
    let lens: Vec<usize> = runs.iter().map(|r| r.1 as usize).collect();
    let disps: Vec<i64> = runs.iter().map(|r| r.0 as i64).collect();
    let t = Type::indexed(&lens, &disps, true, false, &byte_type(), false)?;
    t.commit();
    Ok(t)
}

fn run(
    file: &File,
    plan: &Plan,
    pieces: &[Piece],
    mem: &Mem,
    write: bool,
    func: &str,
) -> MpiResult<(u64, u64)> {
    let comm = &file.comm;
    let size = comm.size() as usize;
    let me = comm.rank;
    let mine = split(plan, pieces);
    let my_aggr = plan.aggregators.iter().position(|&a| a == me);
    let rounds = plan.rounds as usize;

    // The piece lists, once: to aggregator a, [count per round..., (off, len)...].
    let mut msgs: Vec<Vec<u64>> = vec![Vec::new(); size];
    for (i, &a) in plan.aggregators.iter().enumerate() {
        let m = &mut msgs[a as usize];
        m.extend(mine[i].iter().map(|r| r.len() as u64));
        for r in &mine[i] {
            for p in r {
                m.push(p.off);
                m.push(p.len);
            }
        }
    }
    let lens: Vec<u64> = msgs.iter().map(|m| m.len() as u64 * 8).collect();
    let their_lens = exch::alltoall(comm, &lens)?;
    let mut send_meta: Vec<Scratch> = msgs
        .iter()
        .map(|m| {
            let mut s = Scratch::new(m.len() * 8);
            for (k, v) in m.iter().enumerate() {
                s.bytes_mut()[k * 8..k * 8 + 8].copy_from_slice(&v.to_le_bytes());
            }
            s
        })
        .collect();
    let mut recv_meta: Vec<Scratch> = their_lens.iter().map(|&l| Scratch::new(l as usize)).collect();
    let sb: Vec<Buf> = send_meta.iter_mut().map(|s| s.buf()).collect();
    let rb: Vec<Buf> = recv_meta.iter_mut().map(|s| s.buf()).collect();
    exch::alltoallv(comm, &sb, &rb)?;
    // At an aggregator: per source rank, per round, the pieces (offset in file, length).
    let theirs: Vec<Vec<Vec<(u64, u64)>>> = if my_aggr.is_some() {
        recv_meta
            .iter()
            .map(|s| {
                let w: Vec<u64> = s
                    .bytes()
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                    .collect();
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
            .collect()
    } else {
        Vec::new()
    };

    let stream = if write {
        Stream::for_write(mem)?
    } else {
        Stream::for_read(mem)
    };
    let atomic = file.state().atomic;
    let mut wbuf = Scratch::new(if my_aggr.is_some() { plan.window as usize } else { 0 });
    let mut failure = None;
    for r in 0..rounds {
        // This rank's side: the stream range for each aggregator's window.
        let mut mine_bufs = vec![Buf::EMPTY; size];
        for (i, &a) in plan.aggregators.iter().enumerate() {
            let ps = &mine[i][r];
            if let (Some(f), Some(l)) = (ps.first(), ps.last()) {
                mine_bufs[a as usize] = stream.buf.slice(f.at as usize, (l.at + l.len - f.at) as usize);
            }
        }
        // The aggregator's side: each source's pieces placed in the window buffer.
        let mut agg_bufs = vec![Buf::EMPTY; size];
        let mut keep: Vec<Arc<Type>> = Vec::new();
        let mut runs: Vec<(u64, u64)> = Vec::new();
        let wstart = my_aggr.map(|i| plan.window_start(i, r as u64)).unwrap_or(0);
        if my_aggr.is_some() {
            for (j, src) in theirs.iter().enumerate() {
                let ps = &src[r];
                if ps.is_empty() {
                    continue;
                }
                let rel: Vec<(u64, u64)> = ps.iter().map(|&(o, l)| (o - wstart, l)).collect();
                runs.extend(ps.iter().copied());
                let t = layout(&rel)?;
                agg_bufs[j] = wbuf.typed(&t).expect("pieces lie inside the window");
                keep.push(t);
            }
            runs.sort_unstable();
            let mut merged: Vec<(u64, u64)> = Vec::new();
            for (o, l) in runs.drain(..) {
                match merged.last_mut() {
                    Some(m) if o <= m.0 + m.1 => m.1 = m.1.max(o + l - m.0),
                    _ => merged.push((o, l)),
                }
            }
            runs = merged;
        }
        if write {
            exch::alltoallv(comm, &mine_bufs, &agg_bufs)?;
            if !runs.is_empty() && failure.is_none() {
                let (s, e) = (runs[0].0, runs.last().map_or(0, |m| m.0 + m.1));
                let _lock = if atomic {
                    RangeLock::new(&file.fd, s, e - s, true).ok()
                } else {
                    None
                };
                for &(o, l) in &runs {
                    let b = (o - wstart) as usize;
                    if let Err(e) = rw::pwrite(file, &wbuf.bytes()[b..b + l as usize], o, func) {
                        failure = Some(e);
                        break;
                    }
                }
            }
        } else {
            if !runs.is_empty() && failure.is_none() {
                let (s, e) = (runs[0].0, runs.last().map_or(0, |m| m.0 + m.1));
                let _lock = if atomic {
                    RangeLock::new(&file.fd, s, e - s, false).ok()
                } else {
                    None
                };
                let b = (s - wstart) as usize;
                let n = (e - s) as usize;
                let area = &mut wbuf.bytes_mut()[b..b + n];
                if let Err(e) = rw::pread(file, area, s, func) {
                    failure = Some(e);
                }
            }
            exch::alltoallv(comm, &agg_bufs, &mine_bufs)?;
        }
        drop(keep);
    }
    let agreed = exch::agree(comm, failure.as_ref().map_or(0, |e| e.class() as u64))?;
    if let Some(e) = failure {
        return Err(e);
    }
    if agreed != 0 {
        return Err(crate::error::MpiError::new(
            crate::error::ErrorClass::from_i32(agreed as i32).unwrap_or(crate::error::ErrorClass::Io),
            format!("{func}(\"{}\"): the access failed on an aggregating rank", file.name),
        ));
    }
    // The pieces end where the file ended: what was read is the stream up to there.
    let total = pieces.iter().map(|p| p.len).sum::<u64>();
    if write {
        return Ok((total, mem.buf.len() as u64));
    }
    let m = stream.finish_read(mem, total)?;
    Ok((total, m))
}
