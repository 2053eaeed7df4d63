//! Tests: models.
use super::*;
