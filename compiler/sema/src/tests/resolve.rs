//! Tests: resolve.
use super::*;
