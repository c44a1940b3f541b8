//! Stream communicators: `MPIX_Stream_comm_create`/`_multiplex` (the map of every member's
//! stream VCIs and the pair rings between processes' streams) and the lanes that
//! `MPIX_Stream_send`/`recv` name. The streams themselves and the map are `stream`'s.
#![forbid(unsafe_code)]

use std::sync::Arc;

use super::comm::{self, Comm};
use super::exchange::{self, Channel};
use super::stream::{Stream, StreamMap};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::transport::shm::foreign::FOREIGN_BASE;
use crate::transport::shm::pair::{PairEnd, PairRing};
use crate::transport::shm::Geometry;
use crate::transport::Route;

/// `MPIX_Stream_comm_create` (`local`: none or one stream) and
/// `MPIX_Stream_comm_create_multiplex` (`None` entries: `MPIX_STREAM_NULL`, served by the
/// implicit VCI): a duplicate of `parent` whose operations run on the streams each member
/// attached. Collective over `parent` (an intracommunicator).
pub fn comm_create(
    parent: &Comm,
    local: Vec<Option<Arc<Stream>>>,
    multiplex: bool,
    func: &str,
) -> MpiResult<Arc<Comm>> {
    if parent.is_inter() {
        return Err(MpiError::new(
            ErrorClass::Comm,
            format!("{func}(comm): an intercommunicator cannot carry streams"),
        ));
    }
    // Stream VCIs reach other processes through pair rings named by job rank: processes of
    // other jobs have none. Every member sees such a process in the group (each job's
    // processes are the other's), so all fail alike without talking.
    if parent.group.members().iter().any(|&p| p >= FOREIGN_BASE) {
        return Err(MpiError::new(
            ErrorClass::UnsupportedOperation,
            format!("{func}(comm): streams between processes of different jobs (a communicator from MPI_Comm_spawn, MPI_Comm_connect/accept or MPI_Comm_join) are not supported"),
        ));
    }
    for s in local.iter().flatten() {
        if !Arc::ptr_eq(&s.instance, &parent.session.instance) {
            return Err(MpiError::new(
                ErrorClass::Arg,
                format!("{func}: the stream belongs to an MPI instance that has ended"),
            ));
        }
    }
    let mut c = comm::dup_comm(parent, func)?;
    // Every member's stream VCIs, over the new communicator's collective context (before
    // its VCI changes, every member is on the implicit VCI of the new context id).
    let n = c.size();
    let me = c.rank as usize;
    let members = exchange::all(n);
    let ch = Channel::collective(&c);
    let inst = &parent.session.instance;
    let mut block = [0u8; 12];
    block[..4].copy_from_slice(&(local.len() as u32).to_le_bytes());
    block[4..].copy_from_slice(&inst.nonce.to_le_bytes());
    let gathered = ch.allgather(&members, me, exchange::tag::STREAMS, &block)?;
    let counts: Vec<u32> = gathered
        .chunks_exact(12)
        .map(|b| u32::from_le_bytes(b[..4].try_into().expect("4 bytes")))
        .collect();
    let nonces: Vec<u64> = gathered
        .chunks_exact(12)
        .map(|b| u64::from_le_bytes(b[4..].try_into().expect("8 bytes")))
        .collect();
    let width = counts.iter().copied().max().unwrap_or(0).max(1) as usize;
    let implicit = c.vci;
    let mut mine = vec![implicit as u8; width];
    for (slot, s) in mine.iter_mut().zip(&local) {
        *slot = s.as_ref().map_or(implicit, |s| s.vci) as u8;
    }
    let table = ch.allgather(&members, me, exchange::tag::STREAMS, &mine)?;
    let vcis: Vec<Vec<u8>> = table
        .chunks_exact(width)
        .zip(&counts)
        .map(|(row, &k)| row[..(k as usize).max(1)].to_vec())
        .collect();
    // Pair rings to and from the other processes' streams, installed only once every
    // member has opened its own (the two ends of a ring must agree that it exists).
    let opened = open_pairs(&c, &local, &vcis, &nonces, func);
    let agreed = ch.allgather(
        &members,
        me,
        exchange::tag::STREAMS,
        &[opened.is_ok() as u8],
    )?;
    drop(ch);
    let opened = match (opened, agreed.iter().all(|&ok| ok == 1)) {
        (Ok(opened), true) => opened,
        (Err(e), _) => return Err(e),
        (Ok(_), false) => {
            return Err(MpiError::new(
                ErrorClass::Other,
                format!(
                "{func}: another member could not set up its shared-memory rings for the streams"
            ),
            ))
        }
    };
    for (vci, end, ring, out) in opened {
        let mut st = inst.vcis[vci].lock();
        if out {
            st.add_pair_out(end, ring);
        } else {
            st.add_pair_in(end, ring);
        }
    }
    let map = StreamMap::new(vcis, counts, local, implicit, multiplex);
    if let Some(&first) = map.local_vcis.first() {
        c.vci = first;
    }
    c.streams = Some(map);
    Ok(Arc::new(c))
}

/// Open the pair rings (`transport::shm::pair`) between each stream this process attaches
/// to `c` and each stream that another process of this node attaches (`vcis[r]`: rank r's
/// VCIs, stream VCIs being those past the implicit ones; `nonces[r]`: its instance's nonce),
/// where the stream's VCI has none yet: `(local VCI, peer end, ring, outgoing?)`. Both ends
/// compute the same names and the same decisions.
fn open_pairs(
    c: &Comm,
    local: &[Option<Arc<Stream>>],
    vcis: &[Vec<u8>],
    nonces: &[u64],
    func: &str,
) -> MpiResult<Vec<(usize, PairEnd, PairRing, bool)>> {
    let inst = &c.session.instance;
    let my_job = inst.job.rank;
    let my_nonce = inst.nonce;
    let geometry = Geometry {
        cells: inst.config.shm_cells,
        cell_size: inst.config.shm_cell_size,
    };
    let mut mine: Vec<usize> = local.iter().flatten().map(|s| s.vci).collect();
    mine.dedup();
    let mut opened = Vec::new();
    for (r, theirs) in vcis.iter().enumerate() {
        let Some(job) = c.group.proc_at(r as u32) else {
            continue;
        };
        if job == my_job || !matches!(inst.transports.route(job), Route::Shm { .. }) {
            continue;
        }
        let mut theirs: Vec<u8> = theirs
            .iter()
            .copied()
            .filter(|&x| x as usize >= inst.config.num_vcis)
            .collect();
        theirs.sort_unstable();
        theirs.dedup();
        for &a in &mine {
            for &x in &theirs {
                let end = PairEnd {
                    job_rank: job,
                    vci: x,
                    nonce: nonces[r],
                };
                let (need_out, need_in) = {
                    let st = inst.vcis[a].lock();
                    (!st.has_pair_out(end), !st.has_pair_in(end))
                };
                let me_end = format!("{my_job}.{a}.{my_nonce:x}");
                let them = format!("{job}.{x}.{:x}", nonces[r]);
                for (need, out, name) in [
                    (need_out, true, format!("pair.{me_end}.{them}")),
                    (need_in, false, format!("pair.{them}.{me_end}")),
                ] {
                    if need {
                        let name = inst.job.segment_name(name);
                        let ring = PairRing::open(&name, geometry).map_err(|e| {
                            MpiError::new(
                                ErrorClass::Other,
                                format!(
                                    "{func}: cannot set up a shared-memory ring for a stream: {e}"
                                ),
                            )
                        })?;
                        opened.push((a, end, ring, out));
                    }
                }
            }
        }
    }
    Ok(opened)
}

/// The streams an `MPIX_Stream_*` operation uses: this process's VCI, the peer's VCI (sends)
/// and the sender's stream mark (the index plus one on a multiplex communicator; 0 on a
/// receive of any stream, and on a communicator with one stream per process).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lane {
    pub vci: usize,
    pub remote_vci: u8,
    pub mark: u8,
}

/// The streams of `comm`, or the error of an `MPIX_Stream_*` call on another communicator.
fn streams_of<'c>(comm: &'c Comm, func: &str) -> MpiResult<&'c StreamMap> {
    comm.streams.as_ref().ok_or_else(|| {
        MpiError::new(
            ErrorClass::Comm,
            format!(
                "{func}(comm): not a stream communicator (make one with MPIX_Stream_comm_create \
                 or MPIX_Stream_comm_create_multiplex)"
            ),
        )
    })
}

/// This process's stream `index` of `comm` (argument `arg`).
fn local_vci(map: &StreamMap, index: i32, arg: &str, func: &str) -> MpiResult<usize> {
    let n = map.local_vcis.len();
    match usize::try_from(index)
        .ok()
        .and_then(|i| map.local_vcis.get(i))
    {
        Some(&v) => Ok(v),
        None => Err(MpiError::new(
            ErrorClass::Arg,
            format!(
                "{func}({arg}={index}): this process attached {n} stream{} to the communicator \
                 (valid indexes 0..{n})",
                if n == 1 { "" } else { "s" }
            ),
        )),
    }
}

/// The index error for a peer's stream.
fn remote_index_error(rank: u32, count: u32, index: i32, arg: &str, func: &str) -> MpiError {
    MpiError::new(
        ErrorClass::Arg,
        format!(
            "{func}({arg}={index}): rank {rank} attached {count} stream{} to the communicator",
            if count == 1 { "" } else { "s" }
        ),
    )
}

/// `MPIX_Stream_send`/`isend` from this process's stream `source_index` to stream
/// `dest_index` of rank `dest`.
pub fn send_lane(
    comm: &Comm,
    source_index: i32,
    dest: u32,
    dest_index: i32,
    func: &str,
) -> MpiResult<Lane> {
    let map = streams_of(comm, func)?;
    let vci = local_vci(map, source_index, "source_stream_index", func)?;
    let count = map.count_of(dest);
    let remote_vci = u32::try_from(dest_index)
        .ok()
        .and_then(|i| map.remote_vci(dest, i))
        .ok_or_else(|| remote_index_error(dest, count, dest_index, "dest_stream_index", func))?;
    Ok(Lane {
        vci,
        remote_vci,
        mark: if map.is_multiplex() {
            source_index as u8 + 1
        } else {
            0
        },
    })
}

/// `MPIX_Stream_recv`/`irecv` on this process's stream `dest_index`, of the sender's stream
/// `source_index` (-1: any) of rank `source` (`None`: any source).
pub fn recv_lane(
    comm: &Comm,
    source_index: i32,
    source: Option<u32>,
    dest_index: i32,
    func: &str,
) -> MpiResult<Lane> {
    let map = streams_of(comm, func)?;
    let vci = local_vci(map, dest_index, "dest_stream_index", func)?;
    let valid = match (source_index, source) {
        (-1, _) => true,
        (i, Some(r)) => i >= 0 && (i as u32) < map.count_of(r).max(1),
        (i, None) => (0..=254).contains(&i),
    };
    if !valid {
        let count = source.map_or(0, |r| map.count_of(r));
        return Err(remote_index_error(
            source.unwrap_or(0),
            count,
            source_index,
            "source_stream_index",
            func,
        ));
    }
    let mark = if map.is_multiplex() && source_index >= 0 {
        source_index as u8 + 1
    } else {
        0
    };
    Ok(Lane {
        vci,
        remote_vci: 0,
        mark,
    })
}

/// The offload stream a communicator's operations are queued on: its one local stream,
/// when that stream was created with an info `type` (`MPIX_*_enqueue`).
pub fn offload_stream(comm: &Comm) -> Option<&Arc<Stream>> {
    match comm.streams.as_ref()?.local() {
        [Some(s)] if s.offload().is_some() => Some(s),
        _ => None,
    }
}

/// Before a communicator is freed: wait for the operations queued on its offload stream
/// (they use it). Refused from a task of that queue, which would wait for itself.
pub fn drain_before_free(comm: &Comm, func: &str) -> MpiResult<()> {
    let Some(queue) = offload_stream(comm).and_then(|s| s.offload()) else {
        return Ok(());
    };
    if queue.is_queue_thread() {
        return Err(MpiError::new(
            ErrorClass::Comm,
            format!(
                "{func}(comm): the communicator's offload stream is running this call: free \
                 it from the program's thread"
            ),
        ));
    }
    queue.synchronize(func)
}
