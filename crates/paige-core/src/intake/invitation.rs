//! The coding-invitation detector (filled in by its own change).
