//! Exit statuses shared by every subcommand.

/// How a command ended, mapped to the process exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Everything went well (exit 0).
    Success,
    /// The program has errors, or running it failed (exit 1).
    Failure,
    /// The command could not start: bad usage, unreadable file (exit 2).
    UsageOrIo,
}

impl Status {
    pub fn code(self) -> u8 {
        match self {
            Status::Success => 0,
            Status::Failure => 1,
            Status::UsageOrIo => 2,
        }
    }
}
