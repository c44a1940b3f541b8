//! Offload queues (seed 000, "Offloading asynchronous operations"): an MPIX stream created
//! with an info `type` represents a serial queue of work that runs apart from the thread that
//! queues it. The `*_enqueue` functions put MPI operations on it; they run in queue order,
//! after everything queued before them and before everything queued after.
//!
//! `OffloadQueue` is what a queue offers (queue a task, wait for the queue to drain). This
//! module has the host queue (`"weft_host_queue"`): a library thread that runs the tasks in
//! order, so that enqueue semantics work without a GPU. The CUDA queue (`"cudaStream_t"`,
//! CUDA loaded at run time) lives in the ABI layer, which owns the foreign calls.
//!
//! Errors of queued operations are kept on the stream (`Stream::record_error`) until the
//! next `MPIX_Stream_synchronize`/`MPIX_Wait_enqueue` reports them.
#![forbid(unsafe_code)]

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{JoinHandle, ThreadId};

use crate::error::{ErrorClass, MpiError, MpiResult};

/// A unit of queued work. It reports its own errors (the ABI layer's wrapper records them
/// on the stream and calls the errhandler); a panic is caught and reported by the queue.
pub type Task = Box<dyn FnOnce() + Send + 'static>;

/// A serial queue that runs tasks apart from the thread that queues them.
pub trait OffloadQueue: Send + Sync {
    /// The info `type` the stream was created with.
    fn kind(&self) -> &'static str;
    /// Queue `task` after everything queued so far; never waits for the queue.
    fn enqueue(&self, task: Task, func: &str) -> MpiResult<()>;
    /// Wait until everything queued so far has run.
    fn synchronize(&self, func: &str) -> MpiResult<()>;
    /// Whether the calling thread is the one that runs the queue's tasks (it cannot wait for
    /// the queue).
    fn is_queue_thread(&self) -> bool;
    /// The queue as `Any`, for the layer that made it (the CUDA queue's staging).
    fn as_any(&self) -> &dyn Any;
}

/// Polls of an empty queue before its thread blocks: a task queued soon after the last one
/// starts without a wake-up (a futex call on each side).
const SPINS_BEFORE_BLOCK: u32 = 2000;

/// `"weft_host_queue"`: tasks run in order on a thread of the library's.
pub struct HostQueue {
    /// `None` once the queue is shut down (the thread then drains what is left and ends).
    tx: Mutex<Option<Sender<Task>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    thread_id: ThreadId,
}

impl HostQueue {
    /// Start the queue's thread.
    pub fn start(func: &str) -> MpiResult<HostQueue> {
        let (tx, rx) = channel::<Task>();
        let handle = std::thread::Builder::new()
            .name("weft-host-queue".into())
            .spawn(move || run(rx))
            .map_err(|e| {
                MpiError::new(
                    ErrorClass::Other,
                    format!("{func}: cannot start the host queue's thread: {e}"),
                )
            })?;
        Ok(HostQueue {
            tx: Mutex::new(Some(tx)),
            thread_id: handle.thread().id(),
            thread: Mutex::new(Some(handle)),
        })
    }

    fn sender(&self, func: &str) -> MpiResult<Sender<Task>> {
        self.tx
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| {
                MpiError::new(
                    ErrorClass::Other,
                    format!("{func}: the host queue was shut down"),
                )
            })
    }
}

/// The queue's thread: run tasks in order until every sender is gone.
fn run(rx: Receiver<Task>) {
    let mut idle = 0u32;
    loop {
        let task = match rx.try_recv() {
            Ok(t) => t,
            Err(TryRecvError::Disconnected) => return,
            Err(TryRecvError::Empty) if idle < SPINS_BEFORE_BLOCK => {
                idle += 1;
                std::hint::spin_loop();
                continue;
            }
            Err(TryRecvError::Empty) => match rx.recv() {
                Ok(t) => t,
                Err(_) => return,
            },
        };
        idle = 0;
        if catch_unwind(AssertUnwindSafe(task)).is_err() {
            // The ABI layer's tasks catch their own panics; this is the last resort, so that
            // one broken task does not stop the queue.
            eprintln!("weft: a task of a host queue panicked; the queue goes on");
        }
    }
}

impl OffloadQueue for HostQueue {
    fn kind(&self) -> &'static str {
        "weft_host_queue"
    }

    fn enqueue(&self, task: Task, func: &str) -> MpiResult<()> {
        let tx = self.sender(func)?;
        tx.send(task).map_err(|_| {
            MpiError::new(
                ErrorClass::Other,
                format!("{func}: the host queue's thread has ended"),
            )
        })
    }

    fn synchronize(&self, func: &str) -> MpiResult<()> {
        if self.is_queue_thread() {
            return Err(MpiError::new(
                ErrorClass::Other,
                format!(
                    "{func}: called from a task of the stream's own queue, which would wait for \
                     itself"
                ),
            ));
        }
        let done = Arc::new((Mutex::new(false), Condvar::new()));
        let signal = done.clone();
        self.enqueue(
            Box::new(move || {
                let (flag, cv) = &*signal;
                *flag.lock().unwrap_or_else(|p| p.into_inner()) = true;
                cv.notify_all();
            }),
            func,
        )?;
        let (flag, cv) = &*done;
        let mut ran = flag.lock().unwrap_or_else(|p| p.into_inner());
        while !*ran {
            ran = cv.wait(ran).unwrap_or_else(|p| p.into_inner());
        }
        Ok(())
    }

    fn is_queue_thread(&self) -> bool {
        std::thread::current().id() == self.thread_id
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Drop for HostQueue {
    fn drop(&mut self) {
        // Closing the channel lets the thread run what is queued and end.
        drop(self.tx.get_mut().unwrap_or_else(|p| p.into_inner()).take());
        let handle = self
            .thread
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(h) = handle {
            // The last reference may go inside a task on the queue's own thread: it ends by
            // itself once the task returns.
            if h.thread().id() != std::thread::current().id() {
                let _ = h.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn tasks_run_in_order_and_synchronize_waits() {
        let q = HostQueue::start("test").unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        for i in 0..1000 {
            let log = log.clone();
            q.enqueue(Box::new(move || log.lock().unwrap().push(i)), "test")
                .unwrap();
        }
        q.synchronize("test").unwrap();
        assert_eq!(*log.lock().unwrap(), (0..1000).collect::<Vec<_>>());
    }

    /// Queue a task that adds one to `n`.
    fn count_on(q: &HostQueue, n: &Arc<AtomicUsize>) {
        let m = n.clone();
        let task = move || {
            m.fetch_add(1, Ordering::SeqCst);
        };
        q.enqueue(Box::new(task), "test").unwrap();
    }

    #[test]
    fn a_panicking_task_does_not_stop_the_queue() {
        let q = HostQueue::start("test").unwrap();
        let n = Arc::new(AtomicUsize::new(0));
        q.enqueue(Box::new(|| panic!("boom")), "test").unwrap();
        count_on(&q, &n);
        q.synchronize("test").unwrap();
        assert_eq!(n.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn dropping_the_queue_runs_what_is_queued() {
        let n = Arc::new(AtomicUsize::new(0));
        {
            let q = HostQueue::start("test").unwrap();
            for _ in 0..100 {
                count_on(&q, &n);
            }
        }
        assert_eq!(n.load(Ordering::SeqCst), 100);
    }

    #[test]
    fn synchronize_from_the_queue_thread_is_refused() {
        let q = Arc::new(HostQueue::start("test").unwrap());
        let r = Arc::new(Mutex::new(None));
        let (q2, r2) = (q.clone(), r.clone());
        q.enqueue(
            Box::new(move || *r2.lock().unwrap() = Some(q2.synchronize("inner").is_err())),
            "test",
        )
        .unwrap();
        q.synchronize("test").unwrap();
        assert_eq!(*r.lock().unwrap(), Some(true));
    }
}
