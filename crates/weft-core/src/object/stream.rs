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

use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::instance::{self, Instance};
use crate::object::offload::OffloadQueue;
use crate::progress::thread::{ProgressThread, Scope};

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
    /// An offload stream's queue (`object::offload`): the `*_enqueue` operations run there.
    offload: Option<Box<dyn OffloadQueue>>,
    /// The first error of a queued operation not yet reported (`take_error`), with the
    /// handle of the communicator it happened on.
    error: Mutex<Option<(usize, MpiError)>>,
}

impl Stream {
    /// `MPIX_Stream_create`: claim a stream VCI.
    pub fn create(instance: &Arc<Instance>, func: &str) -> MpiResult<Arc<Stream>> {
        Self::create_with(instance, None, func)
    }

    /// `MPIX_Stream_create` with an info `type`: a stream whose operations run on `queue`.
    /// Its VCI is used by the queue's thread and, for plain operations on its communicators,
    /// by the program's: it locks. Calls of this process may now overlap in time.
    pub fn create_offload(
        instance: &Arc<Instance>,
        queue: Box<dyn OffloadQueue>,
        func: &str,
    ) -> MpiResult<Arc<Stream>> {
        let s = Self::create_with(instance, Some(queue), func)?;
        instance::note_library_thread();
        instance.vcis[s.vci].enable_threads();
        Ok(s)
    }

    fn create_with(
        instance: &Arc<Instance>,
        offload: Option<Box<dyn OffloadQueue>>,
        func: &str,
    ) -> MpiResult<Arc<Stream>> {
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
            offload,
            error: Mutex::new(None),
        }))
    }

    /// An offload stream's queue.
    pub fn offload(&self) -> Option<&dyn OffloadQueue> {
        self.offload.as_deref()
    }

    /// Keep the error of a queued operation for the next report (the first one wins; later
    /// ones went to the errhandler when they happened).
    pub fn record_error(&self, owner: usize, err: MpiError) {
        let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some((owner, err));
        }
    }

    /// The error of a queued operation not reported yet (and its communicator's handle),
    /// now reported.
    pub fn take_error(&self) -> Option<(usize, MpiError)> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).take()
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
        // Then the queue: what is still queued runs, and its thread ends.
        if let Some(queue) = self.offload.take() {
            drop(queue);
            self.instance.vcis[self.vci].disable_threads();
        }
        self.instance.release_stream_vci(self.vci);
    }
}

/// A stream communicator's streams: every member's stream VCIs (where messages to it go)
/// and this process's own streams.
#[derive(Debug)]
pub struct StreamMap {
    /// Each rank's first stream VCI: where plain operations and collectives reach it.
    pub(super) first: Vec<u8>,
    /// Each rank's stream VCIs, `offsets[r]..offsets[r + 1]` in `all`; a rank that attached
    /// `MPIX_STREAM_NULL` has one entry, its implicit VCI, and a count of zero.
    pub(super) all: Vec<u8>,
    pub(super) offsets: Vec<u32>,
    pub(super) counts: Vec<u32>,
    /// This process's streams, in the order it attached them (empty: it attached
    /// `MPIX_STREAM_NULL` to a one-stream communicator); `None` entries are
    /// `MPIX_STREAM_NULL` in a multiplex array, served by the implicit VCI.
    pub(super) local: Vec<Option<Arc<Stream>>>,
    /// The VCI of each of `local`.
    pub(super) local_vcis: Vec<usize>,
    /// A multiplex communicator (`MPIX_Stream_comm_create_multiplex`): messages carry the
    /// sender's stream index.
    pub(super) multiplex: bool,
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
    pub(super) fn new(
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
