//! Tests: kernels.
use super::*;
