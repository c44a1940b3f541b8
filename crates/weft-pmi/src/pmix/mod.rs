//! A PMIx client for launchers that serve PMIx only (Open MPI's `mpirun`, PRRTE's
//! `prterun`; Slurm's `--mpi=pmix`): OpenPMIx's `libpmix.so.2`, loaded at run time
//! (`ffi.rs`), so that neither the build nor the library's start needs it. A process started
//! by such a launcher finds `PMIX_NAMESPACE` and `PMIX_RANK` in its environment.
//!
//! Keys are per process in PMIx (a get names the process), values are strings put with
//! `PMIX_GLOBAL` scope; a fence commits and collects every process's data
//! (`PMIX_COLLECT_DATA`), and gets after it are answered from what the local server holds
//! (`PMIX_IMMEDIATE`: a key a process never put is "not found" instead of a wait;
//! `PMIX_OPTIONAL` would look only in this process's cache, which lacks the other processes'
//! data under Open MPI 5's mpirun).

mod ffi;

use std::collections::HashMap;
use std::ffi::{c_char, CStr, CString};

use crate::PmiError;
use ffi::{Info, Proc, Value, ValueData};

/// Longest key (`PMIX_MAX_KEYLEN`).
pub(crate) const MAX_KEY: usize = ffi::MAX_KEYLEN;
/// Longest value Weft puts (PMIx sets no limit; the bring-up's values are far shorter).
pub(crate) const MAX_VALUE: usize = 1 << 16;

/// Whether the environment says a PMIx server started this process.
pub(crate) fn launched() -> bool {
    std::env::var_os("PMIX_NAMESPACE").is_some() && std::env::var_os("PMIX_RANK").is_some()
}

/// The loaded PMIx library's version string (`OpenPMIx 4.2.2 ...`) and file, if it can be
/// loaded.
pub fn library_version() -> Option<String> {
    let lib = ffi::library()?;
    // SAFETY: PMIx_Get_version returns a static NUL-terminated string (or null).
    let text = unsafe { (lib.version)() };
    let version = if text.is_null() {
        "OpenPMIx".into()
    } else {
        // SAFETY: non-null, NUL-terminated and static (see above).
        unsafe { CStr::from_ptr(text) }.to_string_lossy()
    };
    Some(format!("{version} ({})", lib.library().name()))
}

/// A connected PMIx client.
pub(crate) struct Pmix {
    lib: &'static ffi::Library,
    /// This process.
    me: Proc,
}

impl std::fmt::Debug for Pmix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pmix")
            .field("namespace", &self.namespace())
            .field("rank", &self.me.rank)
            .finish()
    }
}

impl Pmix {
    /// Connects to the local PMIx server (`PMIx_Init`).
    pub(crate) fn init() -> Result<Pmix, PmiError> {
        let lib = ffi::library().ok_or_else(|| PmiError::Environment {
            var: "PMIX_NAMESPACE",
            reason: "is set (a PMIx launcher started this process), but the PMIx client library libpmix.so.2 cannot be loaded (install OpenPMIx: Debian's libpmix2)".into(),
        })?;
        let mut me = Proc {
            nspace: [0; ffi::MAX_NSLEN + 1],
            rank: 0,
        };
        // SAFETY: `me` is a writable pmix_proc_t; no info array is passed.
        let rc = unsafe { (lib.init)(&mut me, std::ptr::null_mut(), 0) };
        let pmix = Pmix { lib, me };
        pmix.check("PMIx_Init", rc)?;
        Ok(pmix)
    }

    /// The job's namespace (its name in the launcher).
    pub(crate) fn namespace(&self) -> String {
        // The array has PMIX_MAX_NSLEN + 1 bytes, whose last PMIx_Init never overwrites.
        // SAFETY: PMIx_Init wrote a NUL-terminated name into the array.
        unsafe { CStr::from_ptr(self.me.nspace.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    /// This process's rank in its job.
    pub(crate) fn rank(&self) -> u32 {
        self.me.rank
    }

    /// An error for a failed `what` with PMIx status `rc` (`Ok` for `PMIX_SUCCESS`).
    fn check(&self, what: &str, rc: i32) -> Result<(), PmiError> {
        if rc == ffi::SUCCESS {
            return Ok(());
        }
        // SAFETY: PMIx_Error_string returns a static NUL-terminated string (or null).
        let text = unsafe { (self.lib.error_string)(rc) };
        let message = if text.is_null() {
            String::new()
        } else {
            // SAFETY: non-null, NUL-terminated and static.
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        };
        Err(PmiError::Rejected {
            cmd: what.to_string(),
            rc: rc.into(),
            message,
        })
    }

    /// `rank` of this job (`None`: the job itself, `PMIX_RANK_WILDCARD`).
    fn proc_of(&self, rank: Option<u32>) -> Proc {
        Proc {
            nspace: self.me.nspace,
            rank: rank.unwrap_or(ffi::RANK_WILDCARD),
        }
    }

    /// Publishes `key=value` (a string) to every process of the job, after the next fence.
    pub(crate) fn put(&mut self, key: &str, value: &str) -> Result<(), PmiError> {
        let key = c_text("PMIx_Put", key)?;
        let value = c_text("PMIx_Put", value)?;
        let mut val = Value {
            kind: ffi::TYPE_STRING,
            data: ValueData {
                string: value.as_ptr().cast_mut(),
            },
        };
        // `key` and the value's string are NUL-terminated and live across the call.
        // SAFETY: PMIx_Put copies the value (it does not keep or free the pointer).
        let rc = unsafe { (self.lib.put)(ffi::SCOPE_GLOBAL, key.as_ptr(), &mut val) };
        self.check("PMIx_Put", rc)
    }

    /// Commits this process's puts and waits for every process of the job (a fence that
    /// collects the data).
    pub(crate) fn fence(&mut self) -> Result<(), PmiError> {
        // SAFETY: no arguments.
        let rc = unsafe { (self.lib.commit)() };
        self.check("PMIx_Commit", rc)?;
        let collect = Info::flag(c"pmix.collect", true);
        // SAFETY: a null process array means the whole namespace; one info of the right layout.
        let rc = unsafe { (self.lib.fence)(std::ptr::null(), 0, &collect, 1) };
        self.check("PMIx_Fence", rc)
    }

    /// What `rank` (`None`: the job) has under `key`, as text; `None` when not found.
    pub(crate) fn get(&self, rank: Option<u32>, key: &str) -> Result<Option<String>, PmiError> {
        let ckey = c_text("PMIx_Get", key)?;
        let proc = self.proc_of(rank);
        let immediate = Info::flag(c"pmix.immediate", true);
        let mut out: *mut Value = std::ptr::null_mut();
        // `proc`, the key and one info are valid for the call.
        // SAFETY: PMIx stores a value it allocated into `out`, which is released below.
        let rc = unsafe { (self.lib.get)(&proc, ckey.as_ptr(), &immediate, 1, &mut out) };
        if rc == ffi::ERR_NOT_FOUND {
            return Ok(None);
        }
        self.check(&format!("PMIx_Get({key})"), rc)?;
        if out.is_null() {
            return Ok(None);
        }
        // SAFETY: PMIx returned a valid, initialised value it allocated with malloc.
        let text = unsafe { value_text(&*out) };
        // Destruct frees its contents, free the struct: what PMIX_VALUE_RELEASE does.
        // SAFETY: the value came from PMIx_Get and is released once, here.
        unsafe {
            (self.lib.value_destruct)(out);
            libc::free(out.cast());
        }
        text.map(Some).ok_or_else(|| {
            PmiError::protocol(
                "PMIx_Get",
                format!("{key} has a value type Weft does not read"),
            )
        })
    }

    /// A job-level or per-process number (`pmix.job.size`, `pmix.appnum`, `pmix.nodeid`).
    pub(crate) fn get_number(&self, rank: Option<u32>, key: &str) -> Result<Option<u64>, PmiError> {
        match self.get(rank, key)? {
            None => Ok(None),
            Some(text) => text.parse().map(Some).map_err(|_| {
                PmiError::protocol("PMIx_Get", format!("{key}={text:?} is not a number"))
            }),
        }
    }

    /// The node index of every rank of a job of `size`: PMIx's node ids (`pmix.nodeid`),
    /// else the host names (`pmix.hname`) numbered in order of first appearance.
    pub(crate) fn node_of_ranks(&self, size: u32) -> Result<Vec<u32>, PmiError> {
        let mut ids = Vec::with_capacity(size as usize);
        for rank in 0..size {
            match self.get_number(Some(rank), "pmix.nodeid")? {
                Some(id) => ids.push(id as u32),
                None => break,
            }
        }
        if ids.len() == size as usize {
            return Ok(renumber(ids));
        }
        let mut hosts = Vec::with_capacity(size as usize);
        for rank in 0..size {
            let host = self.get(Some(rank), "pmix.hname")?.ok_or_else(|| {
                PmiError::protocol(
                    "PMIx_Get",
                    format!("the launcher gives neither pmix.nodeid nor pmix.hname for rank {rank}: rank placement unknown"),
                )
            })?;
            hosts.push(host);
        }
        Ok(renumber(hosts))
    }

    /// The process sets the launcher defines (PRRTE's `prterun --pset NAME`), as names and the
    /// ranks of this job in each: the names are the job's `pmix.pset.nms` (a comma-separated
    /// list), the members come from a `PMIx_Query_info` of `pmix.qry.pmems` qualified by
    /// the set's name. Members of other jobs are left out; a launcher without process sets
    /// gives none.
    pub(crate) fn psets(&self) -> Result<Vec<(String, Vec<u32>)>, PmiError> {
        let Some(names) = self.get(None, "pmix.pset.nms")? else {
            return Ok(Vec::new());
        };
        let mut sets = Vec::new();
        for name in names.split(',').filter(|n| !n.is_empty()) {
            sets.push((name.to_string(), self.pset_members(name)?));
        }
        Ok(sets)
    }

    /// The ranks of this job in the launcher's process set `name`, in the launcher's order.
    fn pset_members(&self, name: &str) -> Result<Vec<u32>, PmiError> {
        let cname = c_text("PMIx_Query_info", name)?;
        let mut keys = [c"pmix.qry.pmems".as_ptr().cast_mut(), std::ptr::null_mut()];
        let mut qualifier = Info::text(c"pmix.pset.nm", &cname);
        let mut query = ffi::Query {
            keys: keys.as_mut_ptr(),
            qualifiers: &mut qualifier,
            nqual: 1,
        };
        let mut results: *mut Info = std::ptr::null_mut();
        let mut count = 0usize;
        // The query's keys, qualifier and name live across the call, which does not keep them.
        // SAFETY: PMIx stores an info array it allocated (or null) into `results`.
        let rc = unsafe { (self.lib.query_info)(&mut query, 1, &mut results, &mut count) };
        self.check(&format!("PMIx_Query_info(pmix.qry.pmems of {name})"), rc)?;
        if results.is_null() {
            return Ok(Vec::new());
        }
        // SAFETY: PMIx returned `count` initialised infos at `results`.
        let infos = unsafe { std::slice::from_raw_parts_mut(results, count) };
        let mut ranks = Vec::new();
        for info in infos.iter() {
            // SAFETY: PMIx NUL-terminates every info's key within its array.
            let key = unsafe { CStr::from_ptr(info.key.as_ptr()) };
            if key.to_bytes() == b"pmix.qry.pmems" {
                // SAFETY: the info is initialised; its value's tag names its member.
                for rank in unsafe { proc_ranks(&info.value, &self.me.nspace) } {
                    if !ranks.contains(&rank) {
                        ranks.push(rank);
                    }
                }
            }
        }
        // What PMIX_INFO_FREE does: destruct each value PMIx owns, free the array.
        // SAFETY: the array and its values came from PMIx_Query_info and are released once.
        unsafe {
            for info in infos.iter_mut() {
                if info.flags & ffi::INFO_PERSISTENT == 0 {
                    (self.lib.value_destruct)(&mut info.value);
                }
            }
            libc::free(results.cast());
        }
        Ok(ranks)
    }

    /// Asks the launcher to end the job with `code`.
    pub(crate) fn abort(&mut self, code: i32, message: &str) {
        let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
        // SAFETY: a NUL-terminated message; a null process array means the whole job.
        let _ = unsafe { (self.lib.abort)(code, text.as_ptr(), std::ptr::null_mut(), 0) };
    }

    /// Leaves the job cleanly (`PMIx_Finalize`).
    pub(crate) fn finalize(&mut self) -> Result<(), PmiError> {
        // SAFETY: no info array.
        let rc = unsafe { (self.lib.finalize)(std::ptr::null(), 0) };
        self.check("PMIx_Finalize", rc)
    }
}

/// Node ids (or host names) as indices `0..` in order of first appearance (PMIx's ids need
/// not be dense).
fn renumber<T: std::hash::Hash + Eq>(ids: Vec<T>) -> Vec<u32> {
    let mut index = HashMap::new();
    ids.into_iter()
        .map(|id| {
            let next = index.len() as u32;
            *index.entry(id).or_insert(next)
        })
        .collect()
}

/// `text` as a C string for `what`; an interior NUL cannot travel.
fn c_text(what: &str, text: &str) -> Result<CString, PmiError> {
    CString::new(text).map_err(|_| PmiError::invalid(what, format!("{text:?} contains a NUL")))
}

/// A PMIx value of the types Weft reads, as text.
///
/// # Safety
/// `value` is an initialised `pmix_value_t` whose string member, when its type is
/// `PMIX_STRING`, is null or NUL-terminated.
unsafe fn value_text(value: &Value) -> Option<String> {
    // Each arm reads the union member that the type tag says PMIx wrote.
    // SAFETY: the tag names the written member; strings are NUL-terminated (the caller's contract).
    unsafe {
        Some(match value.kind {
            ffi::TYPE_STRING if value.data.string.is_null() => String::new(),
            ffi::TYPE_STRING => CStr::from_ptr(value.data.string.cast_const() as *const c_char)
                .to_string_lossy()
                .into_owned(),
            ffi::TYPE_BOOL => u8::from(value.data.flag).to_string(),
            ffi::TYPE_SIZE => value.data.size.to_string(),
            ffi::TYPE_INT | ffi::TYPE_INT32 => value.data.integer.to_string(),
            ffi::TYPE_UINT | ffi::TYPE_UINT32 | ffi::TYPE_PROC_RANK => {
                value.data.uint32.to_string()
            }
            ffi::TYPE_UINT16 => value.data.uint16.to_string(),
            _ => return None,
        })
    }
}

/// The ranks of the processes of namespace `nspace` in `value`, an array of `pmix_proc_t`
/// (anything else holds none).
///
/// # Safety
/// `value` is an initialised `pmix_value_t`; a data array's `array` holds `size` elements of
/// its type.
unsafe fn proc_ranks(value: &Value, nspace: &[c_char; ffi::MAX_NSLEN + 1]) -> Vec<u32> {
    if value.kind != ffi::TYPE_DATA_ARRAY {
        return Vec::new();
    }
    // SAFETY: the tag says the union holds the array pointer (the caller's contract).
    let array = unsafe { value.data.array };
    // SAFETY: a non-null data array pointer from PMIx points at an initialised array.
    let Some(array) = (unsafe { array.as_ref() }) else {
        return Vec::new();
    };
    if array.kind != ffi::TYPE_PROC || array.array.is_null() {
        return Vec::new();
    }
    // SAFETY: the array holds `size` pmix_proc_t (the caller's contract).
    let procs = unsafe { std::slice::from_raw_parts(array.array.cast::<Proc>(), array.size) };
    let same_job = |p: &Proc| {
        let end = |n: &[c_char]| n.iter().position(|&c| c == 0).unwrap_or(n.len());
        p.nspace[..end(&p.nspace)] == nspace[..end(nspace)]
    };
    procs
        .iter()
        .filter(|p| same_job(p))
        .map(|p| p.rank)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pset_members_are_this_jobs_procs_in_an_array() {
        let name = |text: &str| {
            let mut n = [0 as c_char; ffi::MAX_NSLEN + 1];
            for (d, &s) in n.iter_mut().zip(text.as_bytes()) {
                *d = s as c_char;
            }
            n
        };
        let mine = name("prterun-vm-1@1");
        let mut procs = [
            Proc {
                nspace: mine,
                rank: 2,
            },
            Proc {
                nspace: name("prterun-vm-1@2"),
                rank: 0,
            },
            Proc {
                nspace: mine,
                rank: 0,
            },
        ];
        let mut array = ffi::DataArray {
            kind: ffi::TYPE_PROC,
            size: procs.len(),
            array: procs.as_mut_ptr().cast(),
        };
        let value = Value {
            kind: ffi::TYPE_DATA_ARRAY,
            data: ValueData { array: &mut array },
        };
        // SAFETY: the value holds a live array of 3 procs.
        assert_eq!(unsafe { proc_ranks(&value, &mine) }, vec![2, 0]);
        let text = Value {
            kind: ffi::TYPE_STRING,
            data: ValueData { words: [0; 3] },
        };
        // SAFETY: an initialised value of another type.
        assert!(unsafe { proc_ranks(&text, &mine) }.is_empty());
    }

    #[test]
    fn node_ids_become_dense_indices() {
        assert_eq!(renumber(vec![7, 7, 3, 7, 3, 9]), vec![0, 0, 1, 0, 1, 2]);
        assert_eq!(renumber(vec!["b", "a", "b"]), vec![0, 1, 0]);
    }

    #[test]
    fn values_read_as_text() {
        let s = CString::new("abc").unwrap();
        let v = |kind, data| Value { kind, data };
        // SAFETY: each value is initialised for its tag.
        unsafe {
            let string = v(
                ffi::TYPE_STRING,
                ValueData {
                    string: s.as_ptr().cast_mut(),
                },
            );
            assert_eq!(value_text(&string).as_deref(), Some("abc"));
            let mut n = v(ffi::TYPE_UINT32, ValueData { words: [0; 3] });
            n.data.uint32 = 4;
            assert_eq!(value_text(&n).as_deref(), Some("4"));
            let mut small = v(ffi::TYPE_UINT16, ValueData { words: [0; 3] });
            small.data.uint16 = 65535;
            assert_eq!(value_text(&small).as_deref(), Some("65535"));
            let unknown = v(22, ValueData { words: [0; 3] });
            assert_eq!(value_text(&unknown), None);
        }
    }
}
