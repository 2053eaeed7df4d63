//! Placeholder; filled by the crate's first real commit.
