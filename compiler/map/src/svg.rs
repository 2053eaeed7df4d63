//! The `wsel map` picture.
