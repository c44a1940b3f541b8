//! The PMI client used by the MPI library at initialization.
//!
//! [`PmiClient::from_env`] finds the process manager the way the environment describes
//! it (`PMI_FD`, Hydra's `PMI_PORT`/`PMI_ID`, a PMIx server's `PMIX_NAMESPACE`, or none: a
//! singleton of size 1) and speaks PMI-1, PMI-2 or PMIx (through OpenPMIx's library,
//! `crate::pmix`) to it. Keys put by a rank are stored under `<rank>/<key>` in the job's
//! flat key-value space, so [`PmiClient::get`] can address any rank's keys.

mod connection;
mod inherit;

use std::collections::BTreeMap;
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::mapping::parse_process_mapping;
use crate::pmix::{self, Pmix};
use crate::wire::{Framing, Message};
use crate::{decode_psets, hex_encode, PmiError, Pset, ABORT_MESSAGE_HEX, PSETS_KEY};
use connection::{Connection, Stream};

/// Longest key the servers accept (`keylen_max`), our `<rank>/` prefix included.
const DEFAULT_KEY_MAX: usize = 64;
/// Longest value the servers accept (`vallen_max`).
const DEFAULT_VALUE_MAX: usize = 1024;

/// How the client reaches its process manager.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// No process manager: a world of one rank with a local key-value store.
    Singleton,
    /// The PMI-1 line protocol.
    Pmi1,
    /// The PMI-2 length-prefixed protocol.
    Pmi2,
    /// PMIx, through OpenPMIx's client library (Open MPI's `mpirun`, PRRTE's `prterun`).
    Pmix,
}

/// Where put/get go.
#[derive(Debug)]
enum Backend {
    /// The singleton's in-memory store.
    Local(BTreeMap<String, String>),
    /// A live connection to the process manager.
    Remote(Connection),
    /// A PMIx server, through OpenPMIx (boxed: a `pmix_proc_t` is 260 bytes).
    Pmix(Box<Pmix>),
    /// After finalize.
    Done,
}

/// A PMI client: the job's identity plus access to its key-value space.
#[derive(Debug)]
pub struct PmiClient {
    mode: Mode,
    rank: u32,
    size: u32,
    /// Facts fetched on first use (each is a round trip to the process manager, and most
    /// processes never need them): `None` until then.
    appnum: Option<i32>,
    universe_size: Option<Option<u32>>,
    /// `(keylen_max, vallen_max)`.
    limits: Option<(usize, usize)>,
    kvs_name: String,
    backend: Backend,
}

impl PmiClient {
    /// Connects as the environment says: `PMI_FD` (with `PMI_RANK`/`PMI_SIZE`), or
    /// `PMI_PORT` + `PMI_ID` (Hydra's `-pmi-port`), else a singleton of size 1.
    ///
    /// `version`: `Some(1)`/`Some(2)` forces a wire version; `None` picks PMI-2 under
    /// Slurm (`PMI_JOBID` or `PMI2_SUN_PATH` set) and PMI-1 otherwise. The inherited
    /// socket can be adopted once per process; it is closed by [`finalize`](Self::finalize).
    pub fn from_env(version: Option<u8>) -> Result<PmiClient, PmiError> {
        let version = match version {
            None if env("PMI_JOBID").is_some() || env("PMI2_SUN_PATH").is_some() => 2,
            None => 1,
            Some(v @ (1 | 2)) => v,
            Some(v) => {
                return Err(PmiError::invalid(
                    "init",
                    format!("PMI version {v} is not 1 or 2"),
                ))
            }
        };
        if let Some(fd) = env("PMI_FD") {
            let fd = fd.trim().parse().map_err(|_| PmiError::Environment {
                var: "PMI_FD",
                reason: format!("{fd:?} is not a descriptor number"),
            })?;
            let stream = inherit::adopt_socket(fd)?;
            let rank = env_u32("PMI_RANK")?;
            let size = env_u32("PMI_SIZE")?;
            if version == 1 && (rank.is_none() || size.is_none()) {
                return Err(PmiError::Environment {
                    var: "PMI_RANK",
                    reason: "and PMI_SIZE must be set for PMI-1".into(),
                });
            }
            let conn = Connection::new(Stream::Unix(stream));
            return Self::handshake(conn, version, rank.unwrap_or(0), size.unwrap_or(1));
        }
        if let (Some(port), Some(id)) = (env("PMI_PORT"), env("PMI_ID")) {
            return Self::dial(&port, &id, version);
        }
        if pmix::launched() {
            return Self::pmix();
        }
        Ok(Self::singleton())
    }

    /// Connects to the PMIx server that started this process and learns the job's size.
    fn pmix() -> Result<PmiClient, PmiError> {
        let pmix = Pmix::init()?;
        let size = pmix
            .get_number(None, "pmix.job.size")?
            .and_then(|n| u32::try_from(n).ok())
            .filter(|&n| n > 0 && pmix.rank() < n)
            .ok_or_else(|| {
                PmiError::protocol(
                    "PMIx_Get",
                    format!(
                        "no usable pmix.job.size for rank {} of {}",
                        pmix.rank(),
                        pmix.namespace()
                    ),
                )
            })?;
        Ok(PmiClient {
            mode: Mode::Pmix,
            rank: pmix.rank(),
            size,
            appnum: None,
            universe_size: None,
            limits: Some((pmix::MAX_KEY, pmix::MAX_VALUE)),
            kvs_name: pmix.namespace(),
            backend: Backend::Pmix(Box::new(pmix)),
        })
    }

    /// Speaks PMI `version` (1 or 2) over an already connected stream, as rank `rank` of
    /// `size` (PMI-2 takes both from the server instead).
    pub fn over_stream(
        stream: UnixStream,
        version: u8,
        rank: u32,
        size: u32,
    ) -> Result<PmiClient, PmiError> {
        if !(1..=2).contains(&version) {
            return Err(PmiError::invalid(
                "init",
                format!("PMI version {version} is not 1 or 2"),
            ));
        }
        Self::handshake(Connection::new(Stream::Unix(stream)), version, rank, size)
    }

    /// A world of one rank that needs no process manager.
    fn singleton() -> PmiClient {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        PmiClient {
            mode: Mode::Singleton,
            rank: 0,
            size: 1,
            appnum: Some(0),
            universe_size: Some(Some(1)),
            limits: Some((DEFAULT_KEY_MAX, DEFAULT_VALUE_MAX)),
            kvs_name: format!("singleton-{}-{nanos}", std::process::id()),
            backend: Backend::Local(BTreeMap::new()),
        }
    }

    /// Connects to Hydra's `-pmi-port` listener and identifies with `cmd=initack`.
    fn dial(port: &str, id: &str, version: u8) -> Result<PmiClient, PmiError> {
        let tcp = TcpStream::connect(port).map_err(|source| PmiError::Io {
            cmd: format!("connect to PMI_PORT={port}"),
            source,
        })?;
        let mut conn = Connection::new(Stream::Tcp(tcp));
        let ack = conn.request_ok(&Message::new("initack").with("pmiid", id), "initack")?;
        let rank = field(&ack, "initack", "rank")?;
        let size = field(&ack, "initack", "size")?;
        for _ in ["size", "rank", "debug"] {
            conn.receive("initack", "set")?;
        }
        Self::handshake(conn, version, rank, size)
    }

    /// Runs the init exchange of `version` and learns the job's identity: for PMI-1, `init`
    /// and `get_my_kvsname` alone (the rest is asked for when first needed).
    fn handshake(
        mut conn: Connection,
        version: u8,
        rank: u32,
        size: u32,
    ) -> Result<PmiClient, PmiError> {
        // Subversion 1.1 and 2.0: Slurm accepts nothing else.
        let subversion = if version == 1 { 1 } else { 0 };
        let init = Message::new("init")
            .with("pmi_version", version)
            .with("pmi_subversion", subversion);
        let client = if version == 1 {
            conn.request_ok(&init, "response_to_init")?;
            let kvs = conn.request_ok(&Message::new("get_my_kvsname"), "my_kvsname")?;
            PmiClient {
                mode: Mode::Pmi1,
                rank,
                size,
                appnum: None,
                universe_size: None,
                limits: None,
                kvs_name: field(&kvs, "get_my_kvsname", "kvsname")?,
                backend: Backend::Remote(conn),
            }
        } else {
            conn.request_ok(&init, "response_to_init")?;
            conn.set_framing(Framing::V2);
            let jobid = env("PMI_JOBID")
                .filter(|j| !j.is_empty())
                .unwrap_or_else(|| "weft".into());
            let full = Message::new("fullinit")
                .with("pmijobid", jobid)
                .with("pmirank", rank)
                .with("threaded", "FALSE");
            let full = conn.request_ok(&full, "fullinit-response")?;
            let id = conn.request_ok(&Message::new("job-getid"), "job-getid-response")?;
            PmiClient {
                mode: Mode::Pmi2,
                rank: field(&full, "fullinit", "rank")?,
                size: field(&full, "fullinit", "size")?,
                appnum: Some(field(&full, "fullinit", "appnum")?),
                universe_size: None,
                limits: Some((DEFAULT_KEY_MAX, DEFAULT_VALUE_MAX)),
                kvs_name: field(&id, "job-getid", "jobid")?,
                backend: Backend::Remote(conn),
            }
        };
        if client.size == 0 || client.rank >= client.size {
            return Err(PmiError::protocol(
                "init",
                format!("rank {} of a job of size {}", client.rank, client.size),
            ));
        }
        Ok(client)
    }

    /// How this client reaches its process manager.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// This process's rank in the job.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// The number of ranks in the job.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// The index of this rank's application in an MPMD launch (0 otherwise).
    pub fn appnum(&mut self) -> Result<i32, PmiError> {
        if let Some(appnum) = self.appnum {
            return Ok(appnum);
        }
        if let Backend::Pmix(pmix) = &self.backend {
            let appnum = pmix
                .get_number(Some(self.rank), "pmix.appnum")?
                .unwrap_or(0);
            return Ok(*self.appnum.insert(appnum as i32));
        }
        let answer = self
            .remote("get_appnum")?
            .request_ok(&Message::new("get_appnum"), "appnum")?;
        let appnum = field(&answer, "get_appnum", "appnum")?;
        Ok(*self.appnum.insert(appnum))
    }

    /// The universe size, when the process manager knows one.
    pub fn universe_size(&mut self) -> Result<Option<u32>, PmiError> {
        if let Some(size) = self.universe_size {
            return Ok(size);
        }
        let size = match self.mode {
            Mode::Pmix => match &self.backend {
                Backend::Pmix(pmix) => pmix
                    .get_number(None, "pmix.univ.size")?
                    .and_then(|n| i64::try_from(n).ok()),
                _ => None,
            },
            Mode::Pmi2 => self
                .get_job_attr("universeSize")?
                .and_then(|v| v.parse::<i64>().ok()),
            _ => {
                let msg = Message::new("get_universe_size");
                let answer = self
                    .remote("get_universe_size")?
                    .request_ok(&msg, "universe_size")?;
                Some(field::<i64>(&answer, "get_universe_size", "size")?)
            }
        };
        let size = size.and_then(|n| u32::try_from(n).ok()).filter(|&n| n > 0);
        Ok(*self.universe_size.insert(size))
    }

    /// The server's `(keylen_max, vallen_max)` (PMI-1 `get_maxes`, asked for on first use).
    fn limits(&mut self) -> Result<(usize, usize), PmiError> {
        if let Some(limits) = self.limits {
            return Ok(limits);
        }
        let maxes = self
            .remote("get_maxes")?
            .request_ok(&Message::new("get_maxes"), "maxes")?;
        let limits = (
            field(&maxes, "get_maxes", "keylen_max").unwrap_or(DEFAULT_KEY_MAX),
            field(&maxes, "get_maxes", "vallen_max").unwrap_or(DEFAULT_VALUE_MAX),
        );
        Ok(*self.limits.insert(limits))
    }

    /// The live connection to the process manager (only called in the remote modes).
    fn remote(&mut self, cmd: &str) -> Result<&mut Connection, PmiError> {
        match self.backend_for(cmd)? {
            Backend::Remote(conn) => Ok(conn),
            _ => Err(PmiError::protocol(cmd, "no process manager to ask")),
        }
    }

    /// The job id (the key-value space's name); a singleton makes up a unique
    /// `singleton-<pid>-<nanos>`.
    pub fn kvs_name(&self) -> &str {
        &self.kvs_name
    }

    /// Publishes `key=value` for the other ranks; visible to them after [`fence`](Self::fence).
    ///
    /// Keys and values must be non-empty and free of whitespace, control characters and
    /// `;` (keys also of `=`); hex-encode anything else with [`crate::hex_encode`].
    pub fn put(&mut self, key: &str, value: &str) -> Result<(), PmiError> {
        let wire_key = self.wire_key("put", self.rank, key)?;
        let (_, value_max) = self.limits()?;
        if value.is_empty() || value.len() > value_max || value.chars().any(unsafe_char) {
            return Err(PmiError::invalid(
                "put",
                format!(
                    "value for {key:?} must be 1 to {value_max} characters without spaces, control characters or ';' (hex-encode it)",
                ),
            ));
        }
        let (mode, kvs_name) = (self.mode, self.kvs_name.clone());
        match self.backend_for("put")? {
            Backend::Local(map) => {
                map.insert(wire_key, value.to_string());
            }
            Backend::Remote(conn) if mode == Mode::Pmi1 => {
                let msg = Message::new("put")
                    .with("kvsname", kvs_name)
                    .with("key", wire_key)
                    .with("value", value);
                conn.request_ok(&msg, "put_result")?;
            }
            Backend::Remote(conn) => {
                let msg = Message::new("kvs-put")
                    .with("key", wire_key)
                    .with("value", value);
                conn.request_ok(&msg, "kvs-put-response")?;
            }
            Backend::Pmix(pmix) => pmix.put(&wire_key, value)?,
            Backend::Done => unreachable!("backend_for refuses Done"),
        }
        Ok(())
    }

    /// Commits this rank's puts and waits until every rank of the job has done the same.
    pub fn fence(&mut self) -> Result<(), PmiError> {
        let mode = self.mode;
        match self.backend_for("fence")? {
            Backend::Local(_) => {}
            Backend::Remote(conn) if mode == Mode::Pmi1 => {
                conn.request_ok(&Message::new("barrier_in"), "barrier_out")?;
            }
            Backend::Remote(conn) => {
                conn.request_ok(&Message::new("kvs-fence"), "kvs-fence-response")?;
            }
            Backend::Pmix(pmix) => pmix.fence()?,
            Backend::Done => unreachable!("backend_for refuses Done"),
        }
        Ok(())
    }

    /// The value `rank` put under `key` (before the last fence), or `None`.
    pub fn get(&mut self, rank: u32, key: &str) -> Result<Option<String>, PmiError> {
        if rank >= self.size {
            return Err(PmiError::invalid(
                "get",
                format!("rank {rank} is not below the job size {}", self.size),
            ));
        }
        let wire_key = self.wire_key("get", rank, key)?;
        if let Backend::Pmix(pmix) = self.backend_for("get")? {
            return pmix.get(Some(rank), &wire_key);
        }
        let (mode, kvs_name) = (self.mode, self.kvs_name.clone());
        let msg = match mode {
            Mode::Pmi2 => Message::new("kvs-get")
                .with("jobid", kvs_name)
                .with("srcid", rank)
                .with("key", wire_key),
            _ => Message::new("get")
                .with("kvsname", kvs_name)
                .with("key", wire_key),
        };
        self.lookup(msg)
    }

    /// A job attribute such as `PMI_process_mapping` or `universeSize` (PMI-1: a get of
    /// that key from the job's key-value space; PMI-2: `info-getjobattr`).
    pub fn get_job_attr(&mut self, key: &str) -> Result<Option<String>, PmiError> {
        check_key("get_job_attr", key)?;
        if let Backend::Pmix(pmix) = self.backend_for("get_job_attr")? {
            return pmix.get(None, key);
        }
        let msg = match self.mode {
            Mode::Pmi2 => Message::new("info-getjobattr").with("key", key),
            _ => Message::new("get")
                .with("kvsname", &self.kvs_name)
                .with("key", key),
        };
        self.lookup(msg)
    }

    /// The process sets the launcher defines: Weft's `mpiexec --pset` (the job attribute
    /// [`crate::PSETS_KEY`]) or, under PMIx, PRRTE's `--pset`; `None` when it defines none.
    pub fn launcher_psets(&mut self) -> Result<Option<Vec<Pset>>, PmiError> {
        if let Backend::Pmix(pmix) = self.backend_for("launcher_psets")? {
            let sets = pmix.psets()?;
            return Ok((!sets.is_empty()).then(|| {
                sets.into_iter()
                    .map(|(name, ranks)| Pset { name, ranks })
                    .collect()
            }));
        }
        match self.get_job_attr(PSETS_KEY)? {
            Some(value) => decode_psets(&value).map(Some),
            None => Ok(None),
        }
    }

    /// The node index of every rank, from `PMI_process_mapping`.
    ///
    /// A singleton is `[0]`. Without a mapping, every rank is on node 0 only if
    /// `MPI_LOCALNRANKS` equals the job size; otherwise the placement is unknown.
    pub fn node_of_ranks(&mut self) -> Result<Vec<u32>, PmiError> {
        if self.mode == Mode::Singleton {
            return Ok(vec![0]);
        }
        let size = self.size;
        if let Backend::Pmix(pmix) = self.backend_for("node_of_ranks")? {
            return pmix.node_of_ranks(size);
        }
        match self.get_job_attr("PMI_process_mapping")? {
            Some(mapping) => parse_process_mapping(&mapping, self.size),
            None if env_u32("MPI_LOCALNRANKS")? == Some(self.size) => Ok(vec![0; self.size as usize]),
            None => Err(PmiError::protocol(
                "get_job_attr",
                "no PMI_process_mapping and MPI_LOCALNRANKS does not cover the job: rank placement unknown",
            )),
        }
    }

    /// Asks the process manager to end the job with `exit_code`; no answer is awaited.
    /// Whitespace and `;` in `message` are replaced so that it survives the wire; Weft's own
    /// launcher (which sets `WEFT_MPIEXEC` for its ranks) also gets it as it is, hex-encoded
    /// under [`ABORT_MESSAGE_HEX`], a key other process managers are not sent.
    pub fn abort(&mut self, exit_code: i32, message: &str) {
        let mut text: String = message
            .chars()
            .map(|c| if unsafe_char(c) { '_' } else { c })
            .take(DEFAULT_VALUE_MAX)
            .collect();
        if text.is_empty() {
            text = "aborted".into();
        }
        let mut msg = match self.mode {
            Mode::Pmi2 => Message::new("abort")
                .with("isworldabort", "TRUE")
                .with("exitcode", exit_code)
                .with("message", &text)
                .with("msg", &text),
            _ => Message::new("abort")
                .with("exitcode", exit_code)
                .with("message", &text),
        };
        if env("WEFT_MPIEXEC").is_some() && !message.is_empty() {
            msg = msg.with(
                ABORT_MESSAGE_HEX,
                hex_encode(clip(message, DEFAULT_VALUE_MAX / 2).as_bytes()),
            );
        }
        match &mut self.backend {
            // The process exits right after; a failure to send leaves nothing to do.
            Backend::Remote(conn) => {
                let _ = conn.send(&msg);
            }
            Backend::Pmix(pmix) => pmix.abort(exit_code, message),
            _ => {}
        }
    }

    /// Leaves the job cleanly and closes the connection.
    pub fn finalize(&mut self) -> Result<(), PmiError> {
        let mode = self.mode;
        match self.backend_for("finalize")? {
            Backend::Remote(conn) => {
                match mode {
                    Mode::Pmi2 => {
                        conn.request_ok(&Message::new("finalize"), "finalize-response")?
                    }
                    _ => conn.request_ok(&Message::new("finalize"), "finalize_ack")?,
                };
            }
            Backend::Pmix(pmix) => pmix.finalize()?,
            _ => {}
        }
        self.backend = Backend::Done;
        Ok(())
    }

    /// Sends a get-like request; a non-zero `rc` or `found=FALSE` means "not found".
    fn lookup(&mut self, msg: Message) -> Result<Option<String>, PmiError> {
        let reply = match self.mode {
            Mode::Pmi2 => format!("{}-response", msg.cmd),
            _ => "get_result".to_string(),
        };
        let conn = match self.backend_for(&msg.cmd)? {
            Backend::Local(map) => return Ok(map.get(msg.get("key").unwrap_or_default()).cloned()),
            Backend::Remote(conn) => conn,
            Backend::Pmix(_) => unreachable!("PMIx lookups go through Pmix::get"),
            Backend::Done => unreachable!("backend_for refuses Done"),
        };
        let answer = conn.request(&msg, &reply)?;
        let rc_ok = matches!(answer.get("rc"), None | Some("0"));
        let found = !answer
            .get("found")
            .is_some_and(|f| f.eq_ignore_ascii_case("FALSE"));
        if !(rc_ok && found) {
            return Ok(None);
        }
        match answer.get("value") {
            Some(v) => Ok(Some(v.to_string())),
            None => Err(PmiError::protocol(&msg.cmd, "found, but no value")),
        }
    }

    /// The key `rank`'s `key` has on the wire, checked against the server's limits.
    fn wire_key(&mut self, cmd: &str, rank: u32, key: &str) -> Result<String, PmiError> {
        check_key(cmd, key)?;
        let wire = format!("{rank}/{key}");
        let (key_max, _) = self.limits()?;
        if wire.len() > key_max {
            return Err(PmiError::invalid(
                cmd,
                format!(
                    "key {key:?} is too long (at most {} characters)",
                    key_max - (wire.len() - key.len())
                ),
            ));
        }
        Ok(wire)
    }

    /// The backend, or an error naming `cmd` after finalize.
    fn backend_for(&mut self, cmd: &str) -> Result<&mut Backend, PmiError> {
        match self.backend {
            Backend::Done => Err(PmiError::Finalized {
                cmd: cmd.to_string(),
            }),
            _ => Ok(&mut self.backend),
        }
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
fn clip(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Whether `c` cannot travel inside a PMI value.
fn unsafe_char(c: char) -> bool {
    c.is_whitespace() || c.is_control() || c == ';'
}

/// Refuses keys that the wire cannot carry.
fn check_key(cmd: &str, key: &str) -> Result<(), PmiError> {
    if key.is_empty() || key.chars().any(|c| unsafe_char(c) || c == '=') {
        return Err(PmiError::invalid(
            cmd,
            format!("key {key:?} must be non-empty without spaces, control characters, '=' or ';'"),
        ));
    }
    Ok(())
}

/// A field of an answer, parsed.
fn field<T: std::str::FromStr>(msg: &Message, cmd: &str, key: &str) -> Result<T, PmiError> {
    let text = msg
        .get(key)
        .ok_or_else(|| PmiError::protocol(cmd, format!("cmd={} lacks {key}=", msg.cmd)))?;
    text.parse()
        .map_err(|_| PmiError::protocol(cmd, format!("{key}={text:?} is not valid")))
}

/// An environment variable, if set and valid UTF-8.
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// An unsigned environment variable; set but unparsable is an error.
fn env_u32(name: &'static str) -> Result<Option<u32>, PmiError> {
    env(name)
        .map(|v| {
            v.trim().parse().map_err(|_| PmiError::Environment {
                var: name,
                reason: format!("{v:?} is not a non-negative number"),
            })
        })
        .transpose()
}

#[cfg(test)]
mod tests;
