//! The cases each backend is known to refuse with `Unsupported`, with the reason: one list for
//! every backend. The op tests fail on an `Unsupported` that is not listed here, and on an entry
//! that no longer occurs (the case now runs), so the list always says exactly what each backend
//! refuses.

use backend_api::DType;

/// One (backend, row, dtype) the backend refuses at compile, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpectedUnsupported {
    /// The backend's registry name.
    pub backend: &'static str,
    /// The op-table row.
    pub row: &'static str,
    /// The dtype of the row's variant (Cast: the source dtype); `None` for every dtype of the row.
    pub dtype: Option<DType>,
    /// Why the backend refuses it.
    pub reason: &'static str,
}

/// Every expected `Unsupported`, by backend.
pub const EXPECTED_UNSUPPORTED: &[ExpectedUnsupported] = &[];

/// The entry that expects `backend` to refuse `row` for `dtype`, if any.
pub fn expected_unsupported(backend: &str, row: &str, dtype: DType) -> Option<&'static ExpectedUnsupported> {
    EXPECTED_UNSUPPORTED.iter().find(|e| e.backend == backend && e.row == row && e.dtype.is_none_or(|d| d == dtype))
}
