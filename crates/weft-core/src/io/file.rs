//! The file object (`MPI_File`): opening (collectively, every access mode), closing,
//! deleting, sizes, hints, atomicity, sync, and the state data accesses share (view,
//! individual and shared file pointers).
#![forbid(unsafe_code)]

use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::datatype::{Datatype, Type, TypeClass};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::io::config::{parse_size, Buffering};
use crate::io::errors::file_error;
use crate::io::shared::SharedPtr;
use crate::io::view::View;
use crate::io::{exch, sys};
use crate::object::{comm, Comm, Errhandler};

static BYTE: Datatype = Datatype::predefined("MPI_BYTE", 1, TypeClass::Byte);

/// The byte type of default views.
pub fn byte_type() -> Arc<Type> {
    static T: std::sync::OnceLock<Arc<Type>> = std::sync::OnceLock::new();
    T.get_or_init(|| Type::basic(&BYTE)).clone()
}

/// An access mode (`MPI_MODE_*`), as flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Amode {
    pub rdonly: bool,
    pub wronly: bool,
    pub rdwr: bool,
    pub create: bool,
    pub excl: bool,
    pub delete_on_close: bool,
    pub unique_open: bool,
    pub sequential: bool,
    pub append: bool,
}

impl Amode {
    /// The standard's rules: exactly one of read-only, write-only, read-write; no create or
    /// exclusive with read-only; no sequential with read-write.
    pub fn check(&self, func: &str) -> MpiResult<()> {
        let n = self.rdonly as u8 + self.wronly as u8 + self.rdwr as u8;
        let why = if n != 1 {
            Some("exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY and MPI_MODE_RDWR is required")
        } else if self.rdonly && (self.create || self.excl) {
            Some("MPI_MODE_RDONLY cannot be combined with MPI_MODE_CREATE or MPI_MODE_EXCL")
        } else if self.rdwr && self.sequential {
            Some("MPI_MODE_RDWR cannot be combined with MPI_MODE_SEQUENTIAL")
        } else {
            None
        };
        match why {
            Some(w) => Err(MpiError::new(
                ErrorClass::Amode,
                format!("{func}(amode): {w}"),
            )),
            None => Ok(()),
        }
    }

    pub fn readable(&self) -> bool {
        !self.wronly
    }

    pub fn writable(&self) -> bool {
        !self.rdonly
    }

    fn bits(&self) -> u64 {
        [
            self.rdonly,
            self.wronly,
            self.rdwr,
            self.create,
            self.excl,
            self.delete_on_close,
            self.unique_open,
            self.sequential,
            self.append,
        ]
        .iter()
        .enumerate()
        .fold(0, |acc, (i, &b)| acc | (b as u64) << i)
    }
}

/// The hints Weft acts on (each from the file's info, else `WEFT_IO_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hints {
    pub cb_buffer_size: usize,
    pub cb_nodes: usize,
    pub cb_read: Buffering,
    pub cb_write: Buffering,
}

/// Mutable state of an open file.
pub struct State {
    pub view: Arc<View>,
    /// The individual file pointer, in stream bytes of the view.
    pub pos: u64,
    pub atomic: bool,
    pub hints: Hints,
    /// Every key the program passed (reported back by `MPI_File_get_info` with ours).
    pub info: Vec<(String, String)>,
}

/// An open file.
pub struct File {
    /// A private duplicate of the opening communicator (collective traffic never meets the
    /// program's).
    pub comm: Arc<Comm>,
    /// The name as the program gave it.
    pub name: String,
    path: PathBuf,
    pub amode: Amode,
    pub fd: std::fs::File,
    state: Mutex<State>,
    errhandler: Mutex<Arc<Errhandler>>,
    pub shared: SharedPtr,
    /// The split collective begun and not yet ended (`_begin`/`_end`), with its result.
    pub split: Mutex<Option<crate::io::Split>>,
}

impl std::fmt::Debug for File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("File").field("name", &self.name).finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The errhandler of `MPI_FILE_NULL`: what files opened from now on start with, and what
/// handles errors of calls without an open file (`MPI_File_open`, `MPI_File_delete`).
/// `MPI_ERRORS_RETURN` until the program sets another (MPI 5.0 §9.3).
static DEFAULT_ERRHANDLER: Mutex<Option<Arc<Errhandler>>> = Mutex::new(None);

pub fn default_errhandler() -> Arc<Errhandler> {
    lock(&DEFAULT_ERRHANDLER)
        .clone()
        .unwrap_or_else(|| Arc::new(Errhandler::RETURN))
}

pub fn set_default_errhandler(e: Arc<Errhandler>) {
    *lock(&DEFAULT_ERRHANDLER) = Some(e);
}

/// A file name without a file-system prefix (`ufs:`, `nfs:`: ROMIO's, which programs pass).
fn path_of(name: &str) -> PathBuf {
    for prefix in ["ufs:", "nfs:", "posix:"] {
        if let Some(rest) = name.strip_prefix(prefix) {
            return PathBuf::from(rest);
        }
    }
    PathBuf::from(name)
}

fn open_one(path: &PathBuf, amode: &Amode, creator: bool) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(amode.readable()).write(amode.writable()).mode(0o666);
    if creator && amode.create {
        if amode.excl {
            o.create_new(true);
        } else {
            o.create(true);
        }
    }
    let f = o.open(path)?;
    if f.metadata()?.is_dir() {
        return Err(std::io::Error::from_raw_os_error(libc::EISDIR));
    }
    Ok(f)
}

impl Hints {
    fn defaults(comm: &Comm) -> Hints {
        let c = &comm.session.instance.config.io;
        Hints {
            cb_buffer_size: c.cb_buffer_size,
            cb_nodes: c.cb_nodes,
            cb_read: c.cb_read,
            cb_write: c.cb_write,
        }
    }

    /// Take the values of known keys from `info`; unknown keys and malformed values are
    /// ignored (hints never make a call fail).
    fn apply(&mut self, info: &[(String, String)]) {
        for (k, v) in info {
            match k.as_str() {
                "cb_buffer_size" => {
                    if let Some(n) = parse_size(v, 1 << 30) {
                        self.cb_buffer_size = n;
                    }
                }
                "cb_nodes" => {
                    if let Ok(n) = v.trim().parse::<usize>() {
                        self.cb_nodes = n;
                    }
                }
                "romio_cb_read" | "weft_cb_read" => {
                    if let Some(b) = Buffering::parse(v) {
                        self.cb_read = b;
                    }
                }
                "romio_cb_write" | "weft_cb_write" => {
                    if let Some(b) = Buffering::parse(v) {
                        self.cb_write = b;
                    }
                }
                "collective_buffering" => {
                    if let Some(b) = Buffering::parse(v) {
                        self.cb_read = b;
                        self.cb_write = b;
                    }
                }
                _ => {}
            }
        }
    }
}

impl File {
    /// `MPI_File_open`: collective over `parent`. Rank 0 creates the file (so an exclusive
    /// create fails or succeeds once), then the others open it; every rank returns the same
    /// error class when any rank failed.
    pub fn open(
        parent: &Comm,
        name: &str,
        amode: Amode,
        info: Vec<(String, String)>,
        func: &str,
    ) -> MpiResult<Arc<File>> {
        if parent.is_inter() {
            return Err(MpiError::new(
                ErrorClass::Comm,
                format!("{func}(comm): an intercommunicator cannot open a file"),
            ));
        }
        amode.check(func)?;
        let comm = comm::dup_named(parent, func)?;
        // Same access mode everywhere (the standard requires it).
        let modes = exch::allgather(&comm, &[amode.bits()])?;
        if modes.iter().any(|&m| m != modes[0]) {
            return Err(MpiError::new(
                ErrorClass::NotSame,
                format!("{func}(\"{name}\", amode): the ranks passed different access modes"),
            ));
        }
        let path = path_of(name);
        let mut first = [0u64];
        let mut mine = None;
        if comm.rank == 0 {
            match open_one(&path, &amode, true) {
                Ok(f) => mine = Some(f),
                Err(e) => {
                    let err = file_error(func, name, "cannot open", &e);
                    first[0] = err.class() as u64;
                    exch::bcast(&comm, 0, &mut first)?;
                    return Err(err);
                }
            }
        }
        exch::bcast(&comm, 0, &mut first)?;
        if first[0] != 0 {
            return Err(MpiError::new(
                ErrorClass::from_i32(first[0] as i32).unwrap_or(ErrorClass::Io),
                format!("{func}(\"{name}\"): cannot open (rank 0 failed)"),
            ));
        }
        let mut failure = None;
        if comm.rank != 0 {
            match open_one(&path, &amode, false) {
                Ok(f) => mine = Some(f),
                Err(e) => failure = Some(file_error(func, name, "cannot open", &e)),
            }
        }
        let agreed = exch::agree(&comm, failure.as_ref().map_or(0, |e| e.class() as u64))?;
        if agreed != 0 {
            return Err(failure.unwrap_or_else(|| {
                MpiError::new(
                    ErrorClass::from_i32(agreed as i32).unwrap_or(ErrorClass::Io),
                    format!("{func}(\"{name}\"): cannot open (another rank failed)"),
                )
            }));
        }
        let fd = mine.expect("opened");
        let shared = SharedPtr::setup(&comm, func)?;
        let mut hints = Hints::defaults(&comm);
        hints.apply(&info);
        let pos = if amode.append {
            fd.metadata()
                .map_err(|e| file_error(func, name, "cannot stat", &e))?
                .len()
        } else {
            0
        };
        if amode.append && comm.rank == 0 {
            shared.store(pos);
        }
        let file = File {
            comm,
            name: name.to_owned(),
            path,
            amode,
            fd,
            state: Mutex::new(State {
                view: Arc::new(View::default_view(&byte_type())),
                pos,
                atomic: false,
                hints,
                info,
            }),
            errhandler: Mutex::new(default_errhandler()),
            shared,
            split: Mutex::new(None),
        };
        if amode.append {
            exch::barrier(&file.comm)?;
        }
        Ok(Arc::new(file))
    }

    pub fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    pub fn view(&self) -> Arc<View> {
        self.state().view.clone()
    }

    pub fn hints(&self) -> Hints {
        self.state().hints
    }

    pub fn errhandler(&self) -> Arc<Errhandler> {
        lock(&self.errhandler).clone()
    }

    pub fn set_errhandler(&self, e: Arc<Errhandler>) {
        *lock(&self.errhandler) = e;
    }

    /// `MPI_File_close` (collective): after every rank got here, a file opened with
    /// `MPI_MODE_DELETE_ON_CLOSE` is removed by rank 0.
    pub fn close(&self, func: &str) -> MpiResult<()> {
        exch::barrier(&self.comm)?;
        if self.amode.delete_on_close && self.comm.rank == 0 {
            std::fs::remove_file(&self.path)
                .map_err(|e| file_error(func, &self.name, "cannot delete", &e))?;
        }
        Ok(())
    }

    /// `MPI_File_get_size`.
    pub fn size(&self, func: &str) -> MpiResult<u64> {
        self.fd
            .metadata()
            .map(|m| m.len())
            .map_err(|e| file_error(func, &self.name, "cannot stat", &e))
    }

    fn check_writable(&self, func: &str) -> MpiResult<()> {
        if self.amode.rdonly {
            return Err(MpiError::new(
                ErrorClass::ReadOnly,
                format!("{func}(\"{}\"): the file was opened read-only", self.name),
            ));
        }
        Ok(())
    }

    /// Agree on `size` (the same on every rank), then let rank 0 run `act`; every rank
    /// returns its outcome.
    fn on_rank0(
        &self,
        size: u64,
        func: &str,
        act: impl FnOnce() -> std::io::Result<()>,
    ) -> MpiResult<()> {
        let sizes = exch::allgather(&self.comm, &[size])?;
        if sizes.iter().any(|&s| s != size) {
            return Err(MpiError::new(
                ErrorClass::NotSame,
                format!(
                    "{func}(\"{}\", size): the ranks passed different sizes",
                    self.name
                ),
            ));
        }
        let mut err = None;
        let mut class = [0u64];
        if self.comm.rank == 0 {
            if let Err(e) = act() {
                let e = file_error(func, &self.name, "failed", &e);
                class[0] = e.class() as u64;
                err = Some(e);
            }
        }
        exch::bcast(&self.comm, 0, &mut class)?;
        match (err, class[0]) {
            (Some(e), _) => Err(e),
            (None, 0) => Ok(()),
            (None, c) => Err(MpiError::new(
                ErrorClass::from_i32(c as i32).unwrap_or(ErrorClass::Io),
                format!("{func}(\"{}\"): failed on rank 0", self.name),
            )),
        }
    }

    /// `MPI_File_set_size` (collective).
    pub fn set_size(&self, size: u64, func: &str) -> MpiResult<()> {
        self.check_writable(func)?;
        self.on_rank0(size, func, || self.fd.set_len(size))
    }

    /// `MPI_File_preallocate` (collective): storage for the first `size` bytes; a larger
    /// file keeps its size.
    pub fn preallocate(&self, size: u64, func: &str) -> MpiResult<()> {
        self.check_writable(func)?;
        self.on_rank0(size, func, || sys::preallocate(&self.fd, size))
    }

    /// `MPI_File_sync` (collective): this rank's writes reach storage; every rank has
    /// synced before any returns.
    pub fn sync(&self, func: &str) -> MpiResult<()> {
        let r = if self.amode.rdonly {
            Ok(())
        } else {
            self.fd
                .sync_all()
                .map_err(|e| file_error(func, &self.name, "cannot sync", &e))
        };
        exch::barrier(&self.comm)?;
        r
    }

    /// `MPI_File_set_info`: record the keys, act on the known ones.
    pub fn set_info(&self, info: Vec<(String, String)>) {
        let mut st = self.state();
        st.hints.apply(&info);
        for (k, v) in info {
            match st.info.iter_mut().find(|(key, _)| *key == k) {
                Some(slot) => slot.1 = v,
                None => st.info.push((k, v)),
            }
        }
    }

    /// `MPI_File_get_info`: the hints in effect and every other key the program passed.
    pub fn info(&self) -> Vec<(String, String)> {
        let st = self.state();
        let h = st.hints;
        let mut out: Vec<(String, String)> = vec![
            ("cb_buffer_size".into(), h.cb_buffer_size.to_string()),
            (
                "cb_nodes".into(),
                if h.cb_nodes == 0 {
                    self.comm.size() as usize
                } else {
                    h.cb_nodes.min(self.comm.size() as usize)
                }
                .to_string(),
            ),
            ("romio_cb_read".into(), h.cb_read.name().into()),
            ("romio_cb_write".into(), h.cb_write.name().into()),
        ];
        for (k, v) in &st.info {
            if !out.iter().any(|(key, _)| key == k) {
                out.push((k.clone(), v.clone()));
            }
        }
        out.push(("filename".into(), self.name.clone()));
        out
    }

    /// `MPI_File_set_atomicity` (collective: the same value everywhere).
    pub fn set_atomicity(&self, atomic: bool, func: &str) -> MpiResult<()> {
        let all = exch::allgather(&self.comm, &[atomic as u64])?;
        if all.iter().any(|&a| a != atomic as u64) {
            return Err(MpiError::new(
                ErrorClass::NotSame,
                format!(
                    "{func}(\"{}\", flag): the ranks passed different values",
                    self.name
                ),
            ));
        }
        self.state().atomic = atomic;
        Ok(())
    }
}

/// `MPI_File_delete`: remove a file that is not open.
pub fn delete(name: &str, func: &str) -> MpiResult<()> {
    let path = path_of(name);
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.is_dir() => {
            return Err(MpiError::new(
                ErrorClass::BadFile,
                format!("{func}(\"{name}\"): a directory, not a file"),
            ))
        }
        _ => {}
    }
    std::fs::remove_file(&path).map_err(|e| file_error(func, name, "cannot delete", &e))
}
