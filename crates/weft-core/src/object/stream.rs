//! MPIX streams (seed 000): a stream is a local serial execution context that owns a VCI of
//! its own, and a stream communicator runs its operations on the streams its members
//! attached.
//!
//! The contract that makes streams fast: the program uses a stream from one thread at a time
//! (it serialises the stream's operations itself). So a stream's VCI is never locked
//! (`OptLock` unthreaded, even under `MPI_THREAD_MULTIPLE`), except while a progress thread
//! polls it (`progress::thread`), and nothing but the stream's own operations, its
//! `MPIX_Stream_progress` and its progress thread ever touch it: the implicit progress
//! (`progress::poke_all`) leaves stream VCIs alone.
//!
//! Messages carry their destination VCI (`Target::vci`, chosen from the receiver's attached
//! streams, which every member learns when the communicator is created) and their sender's
//! VCI (`Header::origin_vci`, where replies go). On a multiplex communicator each message
//! also carries its sender's stream index plus one (`Target::stream`), which receives can
//! select (`Pattern::stream`).
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::comm::{self, Comm};
use super::exchange::{self, Channel};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::instance::Instance;
use crate::progress::thread::{ProgressThread, Scope};
use crate::transport::shm::pair::{PairEnd, PairRing};
use crate::transport::shm::Geometry;
use crate::transport::Route;

/// An MPIX stream: its VCI, held until the stream goes.
pub struct Stream {
    pub instance: Arc<Instance>,
    pub vci: usize,
    /// Communicators this stream is attached to that were not freed yet.
    attached: AtomicUsize,
    /// Its progress thread, while one runs (`MPIX_Start_progress_thread(stream)`).
    progress: Mutex<Option<ProgressThread>>,
    /// The handle the ABI layer names the stream by (`MPIX_Comm_get_stream` answers it).
    pub handle: OnceLock<usize>,
}

impl Stream {
    /// `MPIX_Stream_create`: claim a stream VCI.
    pub fn create(instance: &Arc<Instance>, func: &str) -> MpiResult<Arc<Stream>> {
        let vci = instance.claim_stream_vci().ok_or_else(|| {
            MpiError::new(
                ErrorClass::Other,
                format!(
                    "{func}: all {} stream VCIs are in use (WEFT_MAX_STREAMS={}): free a stream \
                     or raise WEFT_MAX_STREAMS (at most 128)",
                    instance.config.max_streams, instance.config.max_streams
                ),
            )
        })?;
        Ok(Arc::new(Stream {
            instance: instance.clone(),
            vci,
            attached: AtomicUsize::new(0),
            progress: Mutex::new(None),
            handle: OnceLock::new(),
        }))
    }

    /// `MPIX_Start_progress_thread(stream)`.
    pub fn start_progress_thread(&self, func: &str) -> MpiResult<()> {
        let mut slot = self.progress.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_some() {
            return Err(MpiError::new(
                ErrorClass::Other,
                format!("{func}(stream): the stream already has a progress thread"),
            ));
        }
        let thread = ProgressThread::start(&self.instance, Scope::Stream(self.vci))
            .map_err(|e| MpiError::new(ErrorClass::Other, format!("{func}(stream): {e}")))?;
        *slot = Some(thread);
        Ok(())
    }

    /// `MPIX_Stop_progress_thread(stream)`: stop and join it.
    pub fn stop_progress_thread(&self, func: &str) -> MpiResult<()> {
        let thread = self
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        match thread {
            Some(t) => {
                t.stop();
                Ok(())
            }
            None => Err(MpiError::new(
                ErrorClass::Other,
                format!("{func}(stream): the stream has no progress thread"),
            )),
        }
    }

    /// How many communicators not yet freed the stream is attached to.
    pub fn attached(&self) -> usize {
        self.attached.load(Ordering::Acquire)
    }
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream").field("vci", &self.vci).finish()
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // The progress thread goes first (it is joined), then the VCI.
        drop(
            self.progress
                .get_mut()
                .unwrap_or_else(|p| p.into_inner())
                .take(),
        );
        self.instance.release_stream_vci(self.vci);
    }
}

/// A stream communicator's streams: every member's stream VCIs (where messages to it go)
/// and this process's own streams.
#[derive(Debug)]
pub struct StreamMap {
    /// Each rank's first stream VCI: where plain operations and collectives reach it.
    first: Vec<u8>,
    /// Each rank's stream VCIs, `offsets[r]..offsets[r + 1]` in `all`; a rank that attached
    /// `MPIX_STREAM_NULL` has one entry, its implicit VCI, and a count of zero.
    all: Vec<u8>,
    offsets: Vec<u32>,
    counts: Vec<u32>,
    /// This process's streams, in the order it attached them (empty: it attached
    /// `MPIX_STREAM_NULL` to a one-stream communicator); `None` entries are
    /// `MPIX_STREAM_NULL` in a multiplex array, served by the implicit VCI.
    local: Vec<Option<Arc<Stream>>>,
    /// The VCI of each of `local`.
    local_vcis: Vec<usize>,
    /// A multiplex communicator (`MPIX_Stream_comm_create_multiplex`): messages carry the
    /// sender's stream index.
    multiplex: bool,
    /// Set when the communicator was freed: its streams no longer count it.
    detached: AtomicBool,
    /// Calls that borrowed the communicator without a reference count (the ABI layer's
    /// borrow of a communicator whose user serialises it); it is not dropped while non-zero.
    /// One thread at a time uses it, so plain loads and stores suffice.
    pub borrows: AtomicU32,
}

impl StreamMap {
    /// The map of a new communicator: `vcis[r]` are rank r's stream VCIs (at least one),
    /// `counts[r]` how many streams it attached; `local` are this process's streams, which
    /// now count the communicator; `implicit` is the VCI of its `None` entries.
    fn new(
        vcis: Vec<Vec<u8>>,
        counts: Vec<u32>,
        local: Vec<Option<Arc<Stream>>>,
        implicit: usize,
        multiplex: bool,
    ) -> Self {
        let mut offsets = Vec::with_capacity(vcis.len() + 1);
        let mut all = Vec::new();
        offsets.push(0);
        for v in &vcis {
            all.extend_from_slice(v);
            offsets.push(all.len() as u32);
        }
        for s in local.iter().flatten() {
            s.attached.fetch_add(1, Ordering::AcqRel);
        }
        let local_vcis = local
            .iter()
            .map(|s| s.as_ref().map_or(implicit, |s| s.vci))
            .collect();
        StreamMap {
            first: vcis.iter().map(|v| v[0]).collect(),
            all,
            offsets,
            counts,
            local,
            local_vcis,
            multiplex,
            detached: AtomicBool::new(false),
            borrows: AtomicU32::new(0),
        }
    }

    /// The same streams for a duplicate (`MPI_Comm_dup` of a stream communicator): every
    /// member keeps the same VCIs (`MPIX_STREAM_NULL` entries too), so the tables agree.
    pub(super) fn attach_again(&self) -> StreamMap {
        for s in self.local.iter().flatten() {
            s.attached.fetch_add(1, Ordering::AcqRel);
        }
        StreamMap {
            first: self.first.clone(),
            all: self.all.clone(),
            offsets: self.offsets.clone(),
            counts: self.counts.clone(),
            local: self.local.clone(),
            local_vcis: self.local_vcis.clone(),
            multiplex: self.multiplex,
            detached: AtomicBool::new(false),
            borrows: AtomicU32::new(0),
        }
    }

    /// Where plain messages to rank `rank` go.
    #[inline]
    pub fn first_vci(&self, rank: u32) -> u8 {
        self.first[rank as usize]
    }

    /// Rank `rank`'s stream `index`'s VCI, if it attached that many (index 0 of a rank that
    /// attached `MPIX_STREAM_NULL` is its implicit VCI).
    pub fn remote_vci(&self, rank: u32, index: u32) -> Option<u8> {
        let r = rank as usize;
        let count = (*self.counts.get(r)?).max(1);
        (index < count).then(|| self.all[self.offsets[r] as usize + index as usize])
    }

    /// How many streams rank `rank` attached.
    pub fn count_of(&self, rank: u32) -> u32 {
        self.counts[rank as usize]
    }

    /// This process's streams (`None`: `MPIX_STREAM_NULL` in a multiplex array).
    pub fn local(&self) -> &[Option<Arc<Stream>>] {
        &self.local
    }

    /// Whether every operation of this process on the communicator runs on a stream of its
    /// own (no `MPIX_STREAM_NULL` attached): then the program serialises them.
    pub fn all_local_are_streams(&self) -> bool {
        !self.local.is_empty() && self.local.iter().all(Option::is_some)
    }

    pub fn is_multiplex(&self) -> bool {
        self.multiplex
    }

    /// The stream-index mark plain messages from this process carry (its first stream), so
    /// that `MPIX_Stream_recv` with a source index can select them.
    #[inline]
    pub fn own_mark(&self) -> u8 {
        self.multiplex as u8
    }

    /// The communicator was freed: its streams stop counting it (once).
    pub fn detach(&self) {
        if !self.detached.swap(true, Ordering::AcqRel) {
            for s in self.local.iter().flatten() {
                s.attached.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }
}

impl Drop for StreamMap {
    fn drop(&mut self) {
        self.detach();
    }
}

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
