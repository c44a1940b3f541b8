//! CUDA, loaded at run time: never a build requirement, and no cost for a program that does
//! not ask for it. The first `MPIX_Stream_create` with info `type` = `"cudaStream_t"`,
//! `MPIX_GPU_query_support`/`MPIX_Query_cuda_support` or `weft-info` `dlopen`s the CUDA
//! runtime (`libcudart.so`, then the versioned names) and looks up the few functions the
//! enqueue path calls. `CudaQueue` is an offload queue on a `cudaStream_t`: a task is a
//! host function (`cudaLaunchHostFunc`), synchronisation is `cudaStreamSynchronize`, and
//! device buffers are staged through pinned host blocks (`api/cuda_stage.rs`) kept in a
//! per-stream pool (`cuda_pool`). A block an operation used is free again once a later task of the stream
//! has started (stream order: the operation's copies back ran before it): each task records
//! its sequence number when it starts, and the enqueuing thread takes such blocks back when
//! it needs one — no extra host function per operation, and no CUDA call in a host function
//! (which CUDA forbids). `MPIX_Stream_synchronize` frees what the pool holds beyond a bound.

use std::any::Any;
use std::cell::Cell;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use weft_core::error::MpiResult;
use weft_core::mpi_err;
use weft_core::object::offload::{OffloadQueue, Task};
use weft_pmi::dynlib;

use crate::cuda_pool::{Pinned, Pool};

type CudaError = c_int;
type Stream = *mut c_void;
type HostFn = unsafe extern "C" fn(*mut c_void);

/// `cudaMemcpyKind`.
pub const HOST_TO_DEVICE: c_int = 1;
pub const DEVICE_TO_HOST: c_int = 2;
/// `cudaMemoryType` of device memory in `cudaPointerAttributes::type`.
const MEMORY_DEVICE: c_int = 2;

/// `struct cudaPointerAttributes`: the four fields Weft reads, then room for what later
/// runtimes add. CUDA 13.0's has `long reserved[8]` after them (88 bytes), and its
/// `cudaPointerGetAttributes` writes all 88 (seen on an H200): a 24-byte struct on the stack
/// was overrun and every enqueue of a device buffer crashed. 152 bytes leave a margin.
#[repr(C)]
struct PointerAttributes {
    kind: c_int,
    device: c_int,
    device_pointer: *mut c_void,
    host_pointer: *mut c_void,
    reserved: [u64; 16],
}

weft_pmi::symbol_table! {
    /// The CUDA runtime functions the enqueue path uses.
    pub struct Cuda {
        launch_host_func = "cudaLaunchHostFunc" =>
            unsafe extern "C" fn(Stream, HostFn, *mut c_void) -> CudaError,
        stream_synchronize = "cudaStreamSynchronize" => unsafe extern "C" fn(Stream) -> CudaError,
        memcpy_async = "cudaMemcpyAsync" =>
            unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int, Stream) -> CudaError,
        pointer_attributes = "cudaPointerGetAttributes" =>
            unsafe extern "C" fn(*mut PointerAttributes, *const c_void) -> CudaError,
        malloc_host = "cudaMallocHost" =>
            unsafe extern "C" fn(*mut *mut c_void, usize) -> CudaError,
        free_host = "cudaFreeHost" => unsafe extern "C" fn(*mut c_void) -> CudaError,
        get_error_string = "cudaGetErrorString" =>
            unsafe extern "C" fn(CudaError) -> *const c_char,
        get_device_count = "cudaGetDeviceCount" => unsafe extern "C" fn(*mut c_int) -> CudaError,
    }
}

/// Library names tried, in order.
const LIBRARIES: [&str; 4] = [
    "libcudart.so",
    "libcudart.so.13",
    "libcudart.so.12",
    "libcudart.so.11.0",
];

static CUDA: OnceLock<Option<Cuda>> = OnceLock::new();

/// The CUDA runtime, loaded on first use; `None` when it is not installed (or has no
/// device).
pub fn runtime() -> Option<&'static Cuda> {
    CUDA.get_or_init(load).as_ref()
}

fn load() -> Option<Cuda> {
    if std::env::var_os("WEFT_CUDA").is_some_and(|v| v == "0") {
        return None;
    }
    let bind = |lib| {
        // SAFETY: the table's prototypes are those the CUDA runtime API documents.
        let cuda = unsafe { Cuda::resolve(lib) }?;
        match cuda.device_count() {
            0 => Err(format!("{}: no CUDA device", cuda.library().name())),
            _ => Ok(cuda),
        }
    };
    dynlib::load_first(LIBRARIES, dynlib::Scope::Local, bind).ok()
}

impl Cuda {
    fn device_count(&self) -> c_int {
        let mut n: c_int = 0;
        // SAFETY: a writable int.
        let rc = unsafe { (self.get_device_count)(&mut n) };
        if rc == 0 {
            n
        } else {
            0
        }
    }

    fn check(&self, rc: CudaError, what: &str, func: &str) -> MpiResult<()> {
        if rc == 0 {
            return Ok(());
        }
        // SAFETY: cudaGetErrorString returns a static NUL-terminated string.
        let why = unsafe { CStr::from_ptr((self.get_error_string)(rc)) };
        Err(mpi_err!(
            Other,
            "{func}: {what} failed: CUDA error {rc} ({})",
            why.to_string_lossy()
        ))
    }

    /// Whether `addr` is device memory.
    pub fn is_device(&self, addr: usize) -> bool {
        if addr == 0 {
            return false;
        }
        let mut a = PointerAttributes {
            kind: 0,
            device: 0,
            device_pointer: std::ptr::null_mut(),
            host_pointer: std::ptr::null_mut(),
            reserved: [0; 16],
        };
        // SAFETY: a writable attributes struct; any address may be asked about.
        let rc = unsafe { (self.pointer_attributes)(&mut a, addr as *const c_void) };
        rc == 0 && a.kind == MEMORY_DEVICE
    }
}

thread_local! {
    /// Set while a host function of a CUDA queue runs on this thread.
    static IN_HOST_FN: Cell<bool> = const { Cell::new(false) };
}

/// Runs a boxed task as a CUDA host function.
unsafe extern "C" fn run_task(data: *mut c_void) {
    // SAFETY: `data` is the `Box<Task>` `CudaQueue::enqueue` leaked for this one call.
    let task = unsafe { Box::from_raw(data as *mut Task) };
    IN_HOST_FN.with(|f| f.set(true));
    // A panic must not unwind into CUDA (the task catches its own; this is the last resort).
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(task)).is_err() {
        eprintln!("weft: a task on a CUDA stream panicked");
    }
    IN_HOST_FN.with(|f| f.set(false));
}

/// `"cudaStream_t"`: an offload queue on the program's CUDA stream.
pub struct CudaQueue {
    cuda: &'static Cuda,
    stream: usize,
    pool: Mutex<Pool>,
    /// Sequence number of the last task that started running (0: none yet).
    started: Arc<AtomicU64>,
}

impl CudaQueue {
    pub fn new(cuda: &'static Cuda, stream: usize) -> CudaQueue {
        CudaQueue {
            cuda,
            stream,
            pool: Mutex::new(Pool::default()),
            started: Arc::new(AtomicU64::new(0)),
        }
    }

    fn pool(&self) -> std::sync::MutexGuard<'_, Pool> {
        self.pool.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A pinned block of at least `len` bytes: from the pool, else new.
    pub fn take_pinned(&self, len: usize, func: &str) -> MpiResult<Pinned> {
        let len = len.max(1);
        let mut pool = self.pool();
        pool.reclaim(self.started.load(Ordering::Acquire));
        if let Some(b) = pool.take(len) {
            return Ok(b);
        }
        drop(pool);
        let size = Pool::allocation_for(len);
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: a writable pointer; cudaMallocHost allocates `size` pinned bytes.
        let rc = unsafe { (self.cuda.malloc_host)(&mut p, size) };
        self.cuda.check(rc, "cudaMallocHost", func)?;
        Ok(self.pool().add(p as usize, len))
    }

    /// Blocks used by the work queued so far (the last task and the copies after it): free
    /// again once a task queued later has started.
    pub fn hold(&self, blocks: Vec<Pinned>) {
        self.pool().hold(blocks);
    }

    /// Queue a copy of `len` bytes (`kind`: `HOST_TO_DEVICE` or `DEVICE_TO_HOST`).
    ///
    /// # Safety
    /// Both ranges are valid for `len` bytes until the copy has run in stream order.
    pub unsafe fn copy(
        &self,
        dst: usize,
        src: usize,
        len: usize,
        kind: c_int,
        func: &str,
    ) -> MpiResult<()> {
        // SAFETY: the caller's contract.
        let rc = unsafe {
            (self.cuda.memcpy_async)(
                dst as *mut c_void,
                src as *const c_void,
                len,
                kind,
                self.stream as Stream,
            )
        };
        self.cuda.check(rc, "cudaMemcpyAsync", func)
    }

    pub fn cuda(&self) -> &'static Cuda {
        self.cuda
    }

    /// After the stream ran everything: free what the pool keeps beyond its bound.
    fn trim_pool(&self) {
        let excess = self.pool().settle();
        for addr in excess {
            // The stream ran everything queued.
            // SAFETY: a block from cudaMallocHost that no queued work uses.
            unsafe { (self.cuda.free_host)(addr as *mut c_void) };
        }
    }
}

impl OffloadQueue for CudaQueue {
    fn kind(&self) -> &'static str {
        "cudaStream_t"
    }

    fn enqueue(&self, task: Task, func: &str) -> MpiResult<()> {
        // The pool's lock orders the numbering with the launch (one enqueuing thread at a
        // time is the stream's rule; the lock makes the numbers right even without it).
        let mut pool = self.pool();
        let seq = pool.queued + 1;
        let started = self.started.clone();
        let task: Task = Box::new(move || {
            started.fetch_max(seq, Ordering::Release);
            task()
        });
        let data = Box::into_raw(Box::new(task)) as *mut c_void;
        // SAFETY: `run_task` takes back the box exactly once, when the stream runs it.
        let rc = unsafe { (self.cuda.launch_host_func)(self.stream as Stream, run_task, data) };
        if rc == 0 {
            pool.queued = seq;
        } else {
            // Not queued: the task is ours to drop.
            // SAFETY: the pointer came from Box::into_raw above and CUDA did not take it.
            drop(unsafe { Box::from_raw(data as *mut Task) });
        }
        drop(pool);
        self.cuda.check(rc, "cudaLaunchHostFunc", func)
    }

    fn synchronize(&self, func: &str) -> MpiResult<()> {
        if self.is_queue_thread() {
            return Err(mpi_err!(
                Other,
                "{func}: called from a host function of the stream itself"
            ));
        }
        // SAFETY: the program's stream, alive while the MPIX stream is (its contract).
        let rc = unsafe { (self.cuda.stream_synchronize)(self.stream as Stream) };
        self.cuda.check(rc, "cudaStreamSynchronize", func)?;
        self.trim_pool();
        Ok(())
    }

    fn is_queue_thread(&self) -> bool {
        IN_HOST_FN.with(Cell::get)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Drop for CudaQueue {
    fn drop(&mut self) {
        // The stream was synchronised before its MPIX stream was freed.
        let pool = self.pool.get_mut().unwrap_or_else(|p| p.into_inner());
        for addr in pool.allocations() {
            // SAFETY: an allocation of cudaMallocHost no queued work uses any more.
            unsafe { (self.cuda.free_host)(addr as *mut c_void) };
        }
    }
}

/// What `weft-info` prints about CUDA.
pub fn describe() -> String {
    match runtime() {
        Some(c) => format!(
            "found ({}, {} device(s))",
            c.library().name(),
            c.device_count()
        ),
        None => "not found (libcudart.so not loadable or no device)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_attributes_hold_what_cuda_13_writes() {
        // CUDA 13.0: type, device, devicePointer, hostPointer, long reserved[8].
        assert!(size_of::<PointerAttributes>() >= 88);
    }
}
