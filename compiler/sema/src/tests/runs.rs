//! Tests: runs.
use super::*;
