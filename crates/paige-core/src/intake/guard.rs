//! The session guard (filled in by its own change).
