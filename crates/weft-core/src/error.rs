//! Errors: the standard's error classes, error values that explain themselves, and the
//! registry of user-defined classes, codes and strings (`MPI_Add_error_*`).
#![forbid(unsafe_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Mutex;

/// The standard's error classes, with the values the MPI 5.0 ABI fixes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ErrorClass {
    Success = 0,
    Buffer = 1,
    Count = 2,
    Type = 3,
    Tag = 4,
    Comm = 5,
    Rank = 6,
    Request = 7,
    Root = 8,
    Group = 9,
    Op = 10,
    Topology = 11,
    Dims = 12,
    Arg = 13,
    Unknown = 14,
    Truncate = 15,
    Other = 16,
    Intern = 17,
    Pending = 18,
    InStatus = 19,
    Access = 20,
    Amode = 21,
    Assert = 22,
    BadFile = 23,
    Base = 24,
    Conversion = 25,
    Disp = 26,
    DupDatarep = 27,
    FileExists = 28,
    FileInUse = 29,
    File = 30,
    InfoKey = 31,
    InfoNokey = 32,
    InfoValue = 33,
    Info = 34,
    Io = 35,
    Keyval = 36,
    Locktype = 37,
    Name = 38,
    NoMem = 39,
    NotSame = 40,
    NoSpace = 41,
    NoSuchFile = 42,
    Port = 43,
    Quota = 44,
    ReadOnly = 45,
    RmaAttach = 46,
    RmaConflict = 47,
    RmaRange = 48,
    RmaShared = 49,
    RmaSync = 50,
    Service = 51,
    Size = 52,
    Spawn = 53,
    UnsupportedDatarep = 54,
    UnsupportedOperation = 55,
    Win = 56,
    RmaFlavor = 57,
    ProcAborted = 58,
    ValueTooLarge = 59,
    Session = 60,
    Errhandler = 61,
    Abi = 62,
}

/// The highest predefined error class (`MPI_ERR_LASTCODE` is larger: it bounds the range
/// reserved for the standard).
pub const LAST_STANDARD_CLASS: i32 = ErrorClass::Abi as i32;
/// `MPI_ERR_LASTCODE` in the standard ABI.
pub const ERR_LASTCODE: i32 = 0x3fff;

impl ErrorClass {
    /// All standard classes, in value order.
    pub const ALL: [ErrorClass; 63] = {
        use ErrorClass::*;
        [
            Success,
            Buffer,
            Count,
            Type,
            Tag,
            Comm,
            Rank,
            Request,
            Root,
            Group,
            Op,
            Topology,
            Dims,
            Arg,
            Unknown,
            Truncate,
            Other,
            Intern,
            Pending,
            InStatus,
            Access,
            Amode,
            Assert,
            BadFile,
            Base,
            Conversion,
            Disp,
            DupDatarep,
            FileExists,
            FileInUse,
            File,
            InfoKey,
            InfoNokey,
            InfoValue,
            Info,
            Io,
            Keyval,
            Locktype,
            Name,
            NoMem,
            NotSame,
            NoSpace,
            NoSuchFile,
            Port,
            Quota,
            ReadOnly,
            RmaAttach,
            RmaConflict,
            RmaRange,
            RmaShared,
            RmaSync,
            Service,
            Size,
            Spawn,
            UnsupportedDatarep,
            UnsupportedOperation,
            Win,
            RmaFlavor,
            ProcAborted,
            ValueTooLarge,
            Session,
            Errhandler,
            Abi,
        ]
    };

    pub fn from_i32(value: i32) -> Option<ErrorClass> {
        usize::try_from(value)
            .ok()
            .and_then(|i| Self::ALL.get(i).copied())
    }

    /// The `MPI_ERR_*` name of the class.
    pub fn name(self) -> &'static str {
        CLASS_TEXT[self as usize].0
    }

    /// A one-line description of the class.
    pub fn description(self) -> &'static str {
        CLASS_TEXT[self as usize].1
    }
}

const CLASS_TEXT: [(&str, &str); 63] = [
    ("MPI_SUCCESS", "no error"),
    ("MPI_ERR_BUFFER", "invalid buffer pointer"),
    ("MPI_ERR_COUNT", "invalid count argument"),
    ("MPI_ERR_TYPE", "invalid datatype"),
    ("MPI_ERR_TAG", "invalid tag"),
    ("MPI_ERR_COMM", "invalid communicator"),
    ("MPI_ERR_RANK", "invalid rank"),
    ("MPI_ERR_REQUEST", "invalid request"),
    ("MPI_ERR_ROOT", "invalid root"),
    ("MPI_ERR_GROUP", "invalid group"),
    ("MPI_ERR_OP", "invalid operation"),
    ("MPI_ERR_TOPOLOGY", "invalid topology"),
    ("MPI_ERR_DIMS", "invalid dimension argument"),
    ("MPI_ERR_ARG", "invalid argument"),
    ("MPI_ERR_UNKNOWN", "unknown error"),
    ("MPI_ERR_TRUNCATE", "message truncated"),
    ("MPI_ERR_OTHER", "other error"),
    ("MPI_ERR_INTERN", "internal error"),
    ("MPI_ERR_PENDING", "pending request"),
    ("MPI_ERR_IN_STATUS", "error code is in status"),
    ("MPI_ERR_ACCESS", "permission denied"),
    ("MPI_ERR_AMODE", "invalid file access mode"),
    ("MPI_ERR_ASSERT", "invalid assert argument"),
    ("MPI_ERR_BAD_FILE", "invalid file name"),
    ("MPI_ERR_BASE", "invalid base argument"),
    ("MPI_ERR_CONVERSION", "data conversion error"),
    ("MPI_ERR_DISP", "invalid displacement argument"),
    ("MPI_ERR_DUP_DATAREP", "data representation already defined"),
    ("MPI_ERR_FILE_EXISTS", "file exists"),
    ("MPI_ERR_FILE_IN_USE", "file in use by another process"),
    ("MPI_ERR_FILE", "invalid file handle"),
    ("MPI_ERR_INFO_KEY", "invalid info key"),
    ("MPI_ERR_INFO_NOKEY", "info key not defined"),
    ("MPI_ERR_INFO_VALUE", "invalid info value"),
    ("MPI_ERR_INFO", "invalid info object"),
    ("MPI_ERR_IO", "I/O error"),
    ("MPI_ERR_KEYVAL", "invalid attribute keyval"),
    ("MPI_ERR_LOCKTYPE", "invalid lock type"),
    ("MPI_ERR_NAME", "service name not published"),
    ("MPI_ERR_NO_MEM", "out of memory"),
    ("MPI_ERR_NOT_SAME", "arguments differ between processes"),
    ("MPI_ERR_NO_SPACE", "not enough space"),
    ("MPI_ERR_NO_SUCH_FILE", "file does not exist"),
    ("MPI_ERR_PORT", "invalid port name"),
    ("MPI_ERR_QUOTA", "quota exceeded"),
    ("MPI_ERR_READ_ONLY", "file is read-only"),
    ("MPI_ERR_RMA_ATTACH", "memory cannot be attached"),
    ("MPI_ERR_RMA_CONFLICT", "conflicting accesses to a window"),
    ("MPI_ERR_RMA_RANGE", "target memory outside the window"),
    ("MPI_ERR_RMA_SHARED", "memory cannot be shared"),
    ("MPI_ERR_RMA_SYNC", "wrong synchronization of RMA calls"),
    ("MPI_ERR_SERVICE", "invalid service name"),
    ("MPI_ERR_SIZE", "invalid size argument"),
    ("MPI_ERR_SPAWN", "error spawning processes"),
    (
        "MPI_ERR_UNSUPPORTED_DATAREP",
        "unsupported data representation",
    ),
    ("MPI_ERR_UNSUPPORTED_OPERATION", "operation not supported"),
    ("MPI_ERR_WIN", "invalid window"),
    ("MPI_ERR_RMA_FLAVOR", "wrong window flavor"),
    ("MPI_ERR_PROC_ABORTED", "a peer process aborted"),
    (
        "MPI_ERR_VALUE_TOO_LARGE",
        "value too large for its output argument",
    ),
    ("MPI_ERR_SESSION", "invalid session"),
    ("MPI_ERR_ERRHANDLER", "invalid errhandler"),
    ("MPI_ERR_ABI", "ABI mismatch"),
];

/// An error that says what went wrong: the class (or a user-defined code) and a message
/// that names the function, the argument and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MpiError {
    /// A standard class, a user-defined class, or a user-defined code.
    pub code: i32,
    pub message: String,
}

pub type MpiResult<T> = Result<T, MpiError>;

/// An [`MpiError`] of class `ErrorClass::$class` with a message formatted as by `format!`:
/// `mpi_err!(Arg, "{func}(n={n}): negative count")`. One line where a check states its
/// class and message, instead of the five that `MpiError::new(ErrorClass::.., format!(..))`
/// takes once formatted.
#[macro_export]
macro_rules! mpi_err {
    ($class:ident, $($message:tt)+) => {
        $crate::error::MpiError::new($crate::error::ErrorClass::$class, format!($($message)+))
    };
}

impl MpiError {
    pub fn new(class: ErrorClass, message: impl Into<String>) -> MpiError {
        MpiError {
            code: class as i32,
            message: message.into(),
        }
    }

    /// An error carrying a user-defined class or code (e.g. from `MPI_Comm_call_errhandler`).
    pub fn with_code(code: i32, message: impl Into<String>) -> MpiError {
        MpiError {
            code,
            message: message.into(),
        }
    }

    pub fn class(&self) -> i32 {
        class_of_code(self.code).unwrap_or(ErrorClass::Unknown as i32)
    }
}

impl fmt::Display for MpiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for MpiError {}

/// Shorthand for an `Err` of the given class.
pub fn fail<T>(class: ErrorClass, message: impl Into<String>) -> MpiResult<T> {
    Err(MpiError::new(class, message))
}

// ------------------------------------------------------------------ user classes and codes

/// User-defined classes and codes live above `MPI_ERR_LASTCODE`.
const FIRST_USER_VALUE: i32 = ERR_LASTCODE + 1;
/// ... and below 2^16: larger values are the library's detailed codes (a message slot in the
/// upper bits, the class in the lower ones; see weft-abi's `error_codes`).
pub const LAST_USER_VALUE: i32 = 0xffff;

#[derive(Default)]
struct UserErrors {
    /// value -> class it belongs to (a class maps to itself).
    classes: BTreeMap<i32, i32>,
    strings: BTreeMap<i32, String>,
    /// Removed values, reused (lowest first) before `next` grows.
    free: BTreeSet<i32>,
    next: i32,
}

static USER_ERRORS: Mutex<UserErrors> = Mutex::new(UserErrors {
    classes: BTreeMap::new(),
    strings: BTreeMap::new(),
    free: BTreeSet::new(),
    next: 0,
});

fn user_errors() -> std::sync::MutexGuard<'static, UserErrors> {
    USER_ERRORS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn allocate(errors: &mut UserErrors, func: &str) -> MpiResult<i32> {
    if let Some(value) = errors.free.pop_first() {
        return Ok(value);
    }
    if errors.next < FIRST_USER_VALUE {
        errors.next = FIRST_USER_VALUE;
    }
    if errors.next > LAST_USER_VALUE {
        return fail(
            ErrorClass::NoSpace,
            format!(
                "{func}: all {} user-defined error values are in use",
                LAST_USER_VALUE - ERR_LASTCODE
            ),
        );
    }
    let value = errors.next;
    errors.next += 1;
    Ok(value)
}

/// `MPI_Add_error_class`.
pub fn add_error_class() -> MpiResult<i32> {
    let mut errors = user_errors();
    let value = allocate(&mut errors, "MPI_Add_error_class")?;
    errors.classes.insert(value, value);
    Ok(value)
}

/// `MPI_Add_error_code`: a new code in an existing (standard or user) class.
pub fn add_error_code(class: i32) -> MpiResult<i32> {
    let mut errors = user_errors();
    let valid = ErrorClass::from_i32(class).is_some() || errors.classes.get(&class) == Some(&class);
    if !valid || class == 0 {
        return fail(
            ErrorClass::Arg,
            format!("MPI_Add_error_code(errorclass={class}): not an error class"),
        );
    }
    let value = allocate(&mut errors, "MPI_Add_error_code")?;
    errors.classes.insert(value, class);
    Ok(value)
}

/// `MPI_Add_error_string`.
pub fn add_error_string(code: i32, text: &str) -> MpiResult<()> {
    let mut errors = user_errors();
    if code <= ERR_LASTCODE || !errors.classes.contains_key(&code) {
        return fail(
            ErrorClass::Arg,
            format!(
                "MPI_Add_error_string(errorcode={code}): not a user-defined error class or code"
            ),
        );
    }
    errors.strings.insert(code, text.to_owned());
    Ok(())
}

/// `MPI_Remove_error_class/code`: the value must exist, have no error string left (MPI 5.0
/// §9.5: removing one whose string was not removed first is erroneous) and, for a class, no
/// codes left.
pub fn remove_error(value: i32, want_class: bool, func: &str) -> MpiResult<()> {
    let mut errors = user_errors();
    let Some(&class) = errors.classes.get(&value) else {
        return fail(
            ErrorClass::Arg,
            format!("{func}({value}): not a user-defined error value"),
        );
    };
    let is_class = class == value;
    if is_class != want_class {
        let what = if want_class { "class" } else { "code" };
        return fail(
            ErrorClass::Arg,
            format!("{func}({value}): not a user-defined error {what}"),
        );
    }
    if is_class
        && errors
            .classes
            .iter()
            .any(|(&v, &c)| c == value && v != value)
    {
        return fail(
            ErrorClass::Arg,
            format!("{func}({value}): the class still has error codes"),
        );
    }
    if errors.strings.contains_key(&value) {
        return fail(
            ErrorClass::Arg,
            format!(
                "{func}({value}): it still has an error string (MPI_Remove_error_string first)"
            ),
        );
    }
    errors.classes.remove(&value);
    errors.free.insert(value);
    Ok(())
}

/// `MPI_Remove_error_string`.
pub fn remove_error_string(code: i32) -> MpiResult<()> {
    match user_errors().strings.remove(&code) {
        Some(_) => Ok(()),
        None => fail(
            ErrorClass::Arg,
            format!("MPI_Remove_error_string({code}): no string was added for it"),
        ),
    }
}

/// The class a (standard or user) code belongs to; `None` for an unknown value.
pub fn class_of_code(code: i32) -> Option<i32> {
    if ErrorClass::from_i32(code).is_some() || tool_class(code).is_some() {
        return Some(code);
    }
    user_errors().classes.get(&code).copied()
}

/// The tool interface's error classes (`MPI_T_ERR_*`, values fixed by the MPI 5.0 ABI):
/// name and meaning.
pub fn tool_class(code: i32) -> Option<(&'static str, &'static str)> {
    const T: [(&str, &str); 18] = [
        (
            "MPI_T_ERR_CANNOT_INIT",
            "the tool interface cannot be initialized",
        ),
        ("MPI_T_ERR_NOT_ACCESSIBLE", "not accessible at this time"),
        (
            "MPI_T_ERR_NOT_INITIALIZED",
            "the tool interface is not initialized",
        ),
        ("MPI_T_ERR_NOT_SUPPORTED", "not supported"),
        ("MPI_T_ERR_MEMORY", "out of memory"),
        (
            "MPI_T_ERR_INVALID",
            "invalid use of the interface or bad parameter value",
        ),
        ("MPI_T_ERR_INVALID_INDEX", "invalid index"),
        ("MPI_T_ERR_INVALID_ITEM", "invalid enumeration item"),
        (
            "MPI_T_ERR_INVALID_SESSION",
            "invalid performance variable session",
        ),
        ("MPI_T_ERR_INVALID_HANDLE", "invalid handle"),
        (
            "MPI_T_ERR_INVALID_NAME",
            "no variable, category or event has this name",
        ),
        ("MPI_T_ERR_OUT_OF_HANDLES", "no more handles"),
        ("MPI_T_ERR_OUT_OF_SESSIONS", "no more sessions"),
        (
            "MPI_T_ERR_CVAR_SET_NOT_NOW",
            "the control variable cannot be set now",
        ),
        (
            "MPI_T_ERR_CVAR_SET_NEVER",
            "the control variable can never be set",
        ),
        (
            "MPI_T_ERR_PVAR_NO_WRITE",
            "the performance variable cannot be written or reset",
        ),
        (
            "MPI_T_ERR_PVAR_NO_STARTSTOP",
            "the performance variable cannot be started or stopped",
        ),
        (
            "MPI_T_ERR_PVAR_NO_ATOMIC",
            "the performance variable cannot be read and reset atomically",
        ),
    ];
    usize::try_from(code - 1001)
        .ok()
        .and_then(|i| T.get(i))
        .copied()
}

/// The string the user added for a class or code, if any.
pub fn user_string(code: i32) -> Option<String> {
    user_errors().strings.get(&code).cloned()
}

/// The largest error value in use (`MPI_LASTUSEDCODE`).
pub fn last_used_code() -> i32 {
    user_errors()
        .classes
        .keys()
        .next_back()
        .copied()
        .unwrap_or(ERR_LASTCODE)
        .max(ERR_LASTCODE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_round_trip_and_have_names() {
        for (i, class) in ErrorClass::ALL.iter().enumerate() {
            assert_eq!(*class as usize, i);
            assert_eq!(ErrorClass::from_i32(i as i32), Some(*class));
            assert!(class.name().starts_with("MPI_"));
        }
        assert_eq!(ErrorClass::from_i32(63), None);
        assert_eq!(ErrorClass::from_i32(-1), None);
        assert_eq!(
            ErrorClass::UnsupportedOperation.name(),
            "MPI_ERR_UNSUPPORTED_OPERATION"
        );
    }

    #[test]
    fn user_classes_codes_and_strings() {
        let class = add_error_class().unwrap();
        assert!(class > ERR_LASTCODE);
        let code = add_error_code(class).unwrap();
        assert_eq!(class_of_code(code), Some(class));
        assert_eq!(
            add_error_code(ErrorClass::Comm as i32).map(|c| class_of_code(c)),
            Ok(Some(5))
        );
        assert!(add_error_code(123_456).is_err());
        add_error_string(code, "my code").unwrap();
        assert_eq!(user_string(code).as_deref(), Some("my code"));
        assert!(add_error_string(ErrorClass::Comm as i32, "no").is_err());
        assert!(
            remove_error(class, true, "MPI_Remove_error_class").is_err(),
            "class still has a code"
        );
        assert!(
            remove_error(code, false, "MPI_Remove_error_code").is_err(),
            "the code still has a string"
        );
        remove_error_string(code).unwrap();
        remove_error(code, false, "MPI_Remove_error_code").unwrap();
        remove_error(class, true, "MPI_Remove_error_class").unwrap();
        assert_eq!(class_of_code(code), None);
        assert!(last_used_code() >= ERR_LASTCODE);
    }

    #[test]
    fn removed_values_are_reused_so_values_stay_below_2_16() {
        // MPICH's errhan/adderr adds and removes 1.9 million classes and codes.
        for _ in 0..100_000 {
            let class = add_error_class().unwrap();
            let code = add_error_code(class).unwrap();
            assert!(class <= LAST_USER_VALUE && code <= LAST_USER_VALUE);
            remove_error(code, false, "MPI_Remove_error_code").unwrap();
            remove_error(class, true, "MPI_Remove_error_class").unwrap();
        }
    }
}
