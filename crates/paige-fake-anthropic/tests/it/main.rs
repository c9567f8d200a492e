//! Tests of the fake server itself.
