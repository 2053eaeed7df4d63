//! Tests: layers.
use super::*;
