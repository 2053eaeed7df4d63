//! The host functions compiled code calls for the operations with no single machine
//! instruction (exp, log, tanh, float remainder, f16 rounding). The interpreter calls the very
//! same functions, which is what makes these results bit-identical across backends.

use crate::semantics;

/// `exp` on binary32 (the `libm` crate's `expf`: pure Rust, the same on every host).
pub extern "C" fn wsel_expf(x: f32) -> f32 {
    libm::expf(x)
}

/// Natural logarithm on binary32.
pub extern "C" fn wsel_logf(x: f32) -> f32 {
    libm::logf(x)
}

/// Hyperbolic tangent on binary32.
pub extern "C" fn wsel_tanhf(x: f32) -> f32 {
    libm::tanhf(x)
}

/// Float remainder with the sign of the dividend (C `fmodf`, Rust `%`).
pub extern "C" fn wsel_fmodf(x: f32, y: f32) -> f32 {
    libm::fmodf(x, y)
}

/// Rounds to the nearest binary16 value (ties to even) and widens back; NaN becomes the
/// canonical NaN. See [`semantics::round_f16`].
pub extern "C" fn wsel_round_f16(x: f32) -> f32 {
    semantics::round_f16(x)
}

/// One host function as the JIT backends import it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HostFn {
    Exp,
    Log,
    Tanh,
    Fmod,
    RoundF16,
}

impl HostFn {
    pub(crate) const ALL: [HostFn; 5] = [
        HostFn::Exp,
        HostFn::Log,
        HostFn::Tanh,
        HostFn::Fmod,
        HostFn::RoundF16,
    ];

    /// The symbol the JIT modules know the function by.
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            HostFn::Exp => "wsel_expf",
            HostFn::Log => "wsel_logf",
            HostFn::Tanh => "wsel_tanhf",
            HostFn::Fmod => "wsel_fmodf",
            HostFn::RoundF16 => "wsel_round_f16",
        }
    }

    /// How many `f32` parameters it takes (it returns one `f32`).
    pub(crate) fn arity(self) -> usize {
        match self {
            HostFn::Fmod => 2,
            _ => 1,
        }
    }

    /// The function's address.
    pub(crate) fn address(self) -> *const u8 {
        match self {
            HostFn::Exp => wsel_expf as extern "C" fn(f32) -> f32 as *const u8,
            HostFn::Log => wsel_logf as extern "C" fn(f32) -> f32 as *const u8,
            HostFn::Tanh => wsel_tanhf as extern "C" fn(f32) -> f32 as *const u8,
            HostFn::Fmod => wsel_fmodf as extern "C" fn(f32, f32) -> f32 as *const u8,
            HostFn::RoundF16 => wsel_round_f16 as extern "C" fn(f32) -> f32 as *const u8,
        }
    }
}
