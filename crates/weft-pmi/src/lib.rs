//! PMI wire protocols (placeholder; filled in by the PMI work).
