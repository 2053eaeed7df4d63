//! Tests: incremental.
use super::*;
