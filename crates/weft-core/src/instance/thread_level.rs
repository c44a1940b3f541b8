//! Thread support levels.
#![forbid(unsafe_code)]

/// `MPI_THREAD_*`, ordered SINGLE < FUNNELED < SERIALIZED < MULTIPLE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ThreadLevel {
    Single,
    Funneled,
    Serialized,
    Multiple,
}

impl ThreadLevel {
    /// The level granted for a request: every level is supported, so the one asked for.
    pub fn provide(required: ThreadLevel) -> ThreadLevel {
        required
    }

    /// The name used in info objects (`mpi_thread_support_level`).
    pub fn name(self) -> &'static str {
        match self {
            ThreadLevel::Single => "MPI_THREAD_SINGLE",
            ThreadLevel::Funneled => "MPI_THREAD_FUNNELED",
            ThreadLevel::Serialized => "MPI_THREAD_SERIALIZED",
            ThreadLevel::Multiple => "MPI_THREAD_MULTIPLE",
        }
    }

    /// Whether calls may come from several threads at once (locks are needed).
    pub fn concurrent(self) -> bool {
        self == ThreadLevel::Multiple
    }
}
