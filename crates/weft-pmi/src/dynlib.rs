//! Shared libraries loaded at run time with `dlopen`: OpenPMIx's client (`pmix/ffi.rs`), UCX's
//! UCP (`weft-core`'s `transport/ucx/ffi.rs`) and the CUDA runtime (`weft-abi`'s `cuda.rs`).
//! None is a build requirement, and a program that does not use one does not load it.
//!
//! This is the one place that calls `dlopen`, `dlsym` and `dlclose`. A user declares its
//! functions once, as a table of C prototypes ([`symbol_table!`](crate::symbol_table)), and
//! loads the first library of its list that resolves the whole table ([`load_first`]). The
//! table owns its [`Library`], so no function pointer of it outlives the mapping it points
//! into.

use std::ffi::{c_void, CStr, CString};
use std::ptr::NonNull;

/// Who else sees the library's symbols.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `RTLD_LOCAL`: only lookups through this handle.
    Local,
    /// `RTLD_GLOBAL`: also libraries loaded later (a library that loads plugins of its own,
    /// which resolve its symbols).
    Global,
}

/// A loaded shared library, closed when dropped.
pub struct Library {
    handle: NonNull<c_void>,
    name: String,
}

// SAFETY: a `dlopen` handle is a process-wide reference; `dlsym` and `dlclose` may be called
// with it from any thread.
unsafe impl Send for Library {}
// SAFETY: a shared `Library` only resolves symbols (`dlsym` is thread-safe).
unsafe impl Sync for Library {}

impl Library {
    /// Loads `name` (a file name `dlopen` searches for, or a path) with `RTLD_NOW`.
    pub fn open(name: &str, scope: Scope) -> Result<Library, String> {
        let c_name = CString::new(name).map_err(|_| format!("{name:?}: a NUL in the name"))?;
        let mode = libc::RTLD_NOW
            | match scope {
                Scope::Local => libc::RTLD_LOCAL,
                Scope::Global => libc::RTLD_GLOBAL,
            };
        // SAFETY: a NUL-terminated name; the library's initialisers run here, once per load.
        let handle = unsafe { libc::dlopen(c_name.as_ptr(), mode) };
        match NonNull::new(handle) {
            Some(handle) => Ok(Library {
                handle,
                name: name.to_owned(),
            }),
            None => Err(last_error().unwrap_or_else(|| format!("{name}: not loadable"))),
        }
    }

    /// The name it was opened by.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The address of `symbol`; the error names the library and the symbol.
    pub fn address(&self, symbol: &str) -> Result<NonNull<c_void>, String> {
        let missing = || format!("{} has no {symbol}", self.name);
        let c_symbol = CString::new(symbol).map_err(|_| missing())?;
        // SAFETY: a live handle (closed only by drop) and a NUL-terminated name.
        let address = unsafe { libc::dlsym(self.handle.as_ptr(), c_symbol.as_ptr()) };
        NonNull::new(address).ok_or_else(missing)
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        // A table resolved from the library owns it, so none of its functions is used after this.
        // SAFETY: the handle came from `dlopen` and is closed once.
        unsafe { libc::dlclose(self.handle.as_ptr()) };
    }
}

/// Why the last `dlopen` of this thread failed (`dlerror`), if it says.
fn last_error() -> Option<String> {
    // The text stays valid until the next `dl*` call of this thread; it is copied at once.
    // SAFETY: `dlerror` returns null or a NUL-terminated string.
    let text = unsafe { libc::dlerror() };
    let text = NonNull::new(text)?;
    // SAFETY: non-null, so NUL-terminated (above).
    let text = unsafe { CStr::from_ptr(text.as_ptr()) };
    Some(text.to_string_lossy().into_owned())
}

/// The first of `names` that loads and that `bind` accepts (`bind` resolves its table, and
/// may check more, such as that a device is present; a library it refuses is closed). The
/// error says, name by name, why none was taken.
pub fn load_first<T, S: AsRef<str>>(
    names: impl IntoIterator<Item = S>,
    scope: Scope,
    mut bind: impl FnMut(Library) -> Result<T, String>,
) -> Result<T, String> {
    let mut why = Vec::new();
    for name in names {
        match Library::open(name.as_ref(), scope).and_then(&mut bind) {
            Ok(bound) => return Ok(bound),
            Err(e) => why.push(e),
        }
    }
    Err(why.join("; "))
}

/// A table of functions resolved from a [`Library`](crate::dynlib::Library): a struct with one
/// function-pointer field per entry (`field = "symbol" => prototype,`), the library it came
/// from, `unsafe fn resolve(Library) -> Result<Self, String>` and `fn library(&self)`.
///
/// ```ignore
/// weft_pmi::symbol_table! {
///     pub(super) struct Client {
///         pub init = "PMIx_Init" => unsafe extern "C" fn(*mut Proc, *mut Info, usize) -> c_int,
///     }
/// }
/// ```
#[macro_export]
macro_rules! symbol_table {
    (
        $(#[$meta:meta])*
        $vis:vis struct $table:ident {
            $($(#[$field_meta:meta])* $field_vis:vis $field:ident = $symbol:expr => $prototype:ty,)*
        }
    ) => {
        $(#[$meta])*
        $vis struct $table {
            $($(#[$field_meta])* $field_vis $field: $prototype,)*
            /// The library the functions are in: loaded as long as they may be called.
            library: $crate::dynlib::Library,
        }

        impl $table {
            /// Resolves every function of the table in `library`; the error names the first
            /// symbol it lacks.
            ///
            /// # Safety
            /// Each declared prototype is the C prototype of the function of that name in
            /// `library`.
            $vis unsafe fn resolve(library: $crate::dynlib::Library) -> Result<$table, String> {
                Ok($table {
                    $($field: {
                        let address = library.address($symbol)?;
                        // Code and data pointers have one size wherever `dlsym` exists.
                        // SAFETY: the caller's promise: the prototype is the symbol's.
                        unsafe {
                            ::std::mem::transmute::<*mut ::std::ffi::c_void, $prototype>(
                                address.as_ptr(),
                            )
                        }
                    },)*
                    library,
                })
            }

            /// The library the functions came from.
            #[allow(dead_code)]
            $vis fn library(&self) -> &$crate::dynlib::Library {
                &self.library
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::c_char;

    crate::symbol_table! {
        struct Libc {
            strlen = "strlen" => unsafe extern "C" fn(*const c_char) -> usize,
        }
    }

    crate::symbol_table! {
        #[allow(dead_code)]
        struct Missing {
            strlen = "strlen" => unsafe extern "C" fn(*const c_char) -> usize,
            nothing = "weft_no_such_symbol" => unsafe extern "C" fn(),
        }
    }

    #[test]
    fn resolves_a_table_from_the_first_name_that_loads() {
        let names = ["libweft-not-there.so", "libc.so.6"];
        // SAFETY: `strlen`'s prototype is `size_t strlen(const char *)`.
        let libc = load_first(names, Scope::Local, |lib| unsafe { Libc::resolve(lib) })
            .expect("libc.so.6 loads");
        assert_eq!(libc.library().name(), "libc.so.6");
        // SAFETY: a NUL-terminated string.
        assert_eq!(unsafe { (libc.strlen)(c"weft".as_ptr()) }, 4);
    }

    #[test]
    fn names_what_is_missing() {
        // SAFETY: the prototypes are not called (resolving fails).
        let err = load_first(["libc.so.6"], Scope::Local, |lib| unsafe {
            Missing::resolve(lib)
        })
        .err()
        .expect("a symbol is missing");
        assert_eq!(err, "libc.so.6 has no weft_no_such_symbol");
        let err = load_first(["libweft-not-there.so"], Scope::Local, |lib| {
            Ok(lib.name().len())
        })
        .expect_err("no such library");
        assert!(err.contains("libweft-not-there.so"), "{err}");
    }
}
