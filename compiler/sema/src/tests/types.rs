//! Tests: types.
use super::*;
