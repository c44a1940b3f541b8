//! Ports (`MPI_Open_port`, `MPI_Close_port`) and the roots' ends of `MPI_Comm_accept` and
//! `MPI_Comm_connect`.
//!
//! A port is a listening Unix stream socket in Linux's abstract namespace (no file to clean
//! up; it goes with the process), named `weft-port:<job>.<rank>.<n>`. The port name is the
//! socket's address, so any process of the machine (any job, any launcher) can connect with
//! the name alone. Connecting only needs the port open: the kernel queues the connection
//! until the root accepts it.
#![forbid(unsafe_code)]

use std::io::{ErrorKind, Read, Write};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::instance::Instance;

/// How every Weft port name starts.
pub const PREFIX: &str = "weft-port:";

/// The ports this process opened and has not closed.
static PORTS: Mutex<Vec<(String, UnixListener)>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(0);

fn ports() -> std::sync::MutexGuard<'static, Vec<(String, UnixListener)>> {
    PORTS.lock().unwrap_or_else(|p| p.into_inner())
}

fn address(port: &str, func: &str) -> MpiResult<SocketAddr> {
    let name = port.trim_end();
    if !name.starts_with(PREFIX) {
        return Err(MpiError::new(
            ErrorClass::Port,
            format!("{func}(port_name): \"{port}\" is not a port name of Weft (they start with {PREFIX})"),
        ));
    }
    SocketAddr::from_abstract_name(name.as_bytes()).map_err(|e| {
        MpiError::new(
            ErrorClass::Port,
            format!("{func}(port_name): \"{port}\" is not a usable port name ({e})"),
        )
    })
}

/// `MPI_Open_port`: a new port of this process.
pub fn open(inst: &Instance) -> MpiResult<String> {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = format!("{PREFIX}{}.{}.{n}", inst.job.name(), inst.job.rank);
    let listener = address(&name, "MPI_Open_port").and_then(|addr| {
        UnixListener::bind_addr(&addr).map_err(|e| {
            MpiError::new(
                ErrorClass::Other,
                format!("MPI_Open_port: cannot listen on {name}: {e}"),
            )
        })
    })?;
    ports().push((name.clone(), listener));
    Ok(name)
}

/// `MPI_Close_port`.
pub fn close(port: &str) -> MpiResult<()> {
    let mut ports = ports();
    match ports.iter().position(|(n, _)| n == port.trim_end()) {
        Some(i) => {
            ports.swap_remove(i);
            Ok(())
        }
        None => Err(MpiError::new(
            ErrorClass::Port,
            format!("MPI_Close_port(port_name): \"{port}\" is not a port this process opened (or it was closed already)"),
        )),
    }
}

/// The accepting root: wait for the next connection to `port` (opened by this process),
/// making progress meanwhile (on every implicit VCI, and the polled work), so that what this
/// process started before, an `MPI_Isend` another process waits for, completes while it
/// waits here.
pub fn accept(inst: &Instance, port: &str, func: &str) -> MpiResult<UnixStream> {
    let failed = |e: std::io::Error| {
        MpiError::new(
            ErrorClass::Port,
            format!("{func}: waiting for a connection on {port} failed: {e}"),
        )
    };
    let listener = {
        let ports = ports();
        let (_, l) = ports
            .iter()
            .find(|(n, _)| n == port.trim_end())
            .ok_or_else(|| {
                MpiError::new(
                    ErrorClass::Port,
                    format!("{func}(port_name): \"{port}\" is not a port this process opened"),
                )
            })?;
        // A second descriptor, so that other ports stay usable while this one waits.
        l.try_clone()
            .map_err(|e| MpiError::new(ErrorClass::Other, format!("{func}: {e}")))?
    };
    // Every accept of this process goes through here: the listener is always nonblocking.
    listener.set_nonblocking(true).map_err(failed)?;
    let mut idle = 0u32;
    loop {
        match listener.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false).map_err(failed)?;
                return Ok(s);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if crate::progress::progress_all(inst) {
                    idle = 0;
                } else if idle < 256 {
                    idle += 1;
                    crate::sync::spin_hint();
                } else {
                    crate::sync::yield_now();
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(failed(e)),
        }
    }
}

/// The connecting root: connect to `port`; the accepting root must answer (its hello, which
/// it writes only once it accepted) within `timeout` (`None`: no limit), or the first read
/// fails (`ConnectedEnd`).
pub fn connect(port: &str, timeout: Option<Duration>, func: &str) -> MpiResult<ConnectedEnd> {
    let addr = address(port, func)?;
    let stream = UnixStream::connect_addr(&addr).map_err(|e| {
        MpiError::new(
            ErrorClass::Port,
            format!(
                "{func}(port_name): cannot connect to \"{}\": {e} (is the port open?)",
                port.trim_end()
            ),
        )
    })?;
    stream
        .set_read_timeout(timeout)
        .map_err(|e| MpiError::new(ErrorClass::Other, format!("{func}: {e}")))?;
    Ok(ConnectedEnd {
        stream,
        waiting: timeout,
    })
}

/// The connecting root's end of a connection: until the first bytes of the accepting root
/// arrive, a read gives up after the connect timeout (the kernel queues a connection to an
/// open port until it is accepted, so connecting alone says nothing); later reads wait as
/// long as the handshake needs.
pub struct ConnectedEnd {
    stream: UnixStream,
    /// The timeout of the first read, until it returned.
    waiting: Option<Duration>,
}

impl Read for ConnectedEnd {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some(limit) = self.waiting else {
            return self.stream.read(buf);
        };
        match self.stream.read(buf) {
            Ok(n) => {
                self.waiting = None;
                self.stream.set_read_timeout(None)?;
                Ok(n)
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                Err(std::io::Error::new(
                    ErrorKind::TimedOut,
                    format!(
                        "no MPI_Comm_accept on the port within {} s (WEFT_CONNECT_TIMEOUT, or the timeout info key)",
                        limit.as_secs()
                    ),
                ))
            }
            Err(e) => Err(e),
        }
    }
}

impl Write for ConnectedEnd {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.stream.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.stream.flush()
    }
}
