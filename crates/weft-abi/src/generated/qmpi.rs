/// Number of functions a QMPI tool can be chained in front of (`MPI_LAST_FUNC_T`).
pub const QMPI_FUNCTIONS: usize = 739;
