//! The broadcast/reduce fabric between the weight store and a cluster of systems (the SwarmX
//! role): a tree of switches of a given fan-out, its links' bandwidth and latency, the
//! switches' latency and the rate at which they sum streams on the way back to the store.
//!
//! A target file may leave the `[swarm]` table out: it then gets [`Swarm::default`], the
//! figures of the `wse2` preset. Only `wsel run --systems N` with N ≥ 2 uses it; one system is
//! connected straight to its weight store. The timing model over these figures lives in the
//! `wsel-swarm` crate.

use serde::{Deserialize, Serialize};

/// The broadcast/reduce fabric. Every figure is per link direction or per switch.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Swarm {
    /// Children per switch (systems or switches below it); at least 2. N systems hang at
    /// depth `ceil(log_fan_out N)` below the root switch.
    pub fan_out: u32,
    /// Bytes per cycle (of the systems' clock) of every link, in each direction: the store's
    /// link into the root switch, the links between switches, and each system's link.
    pub link_bytes_per_cycle: u32,
    /// Cycles a byte takes to cross one link.
    pub link_latency_cycles: u32,
    /// Cycles from a packet's first byte reaching a switch to its first byte leaving it
    /// (switches cut through: a packet is forwarded as it arrives).
    pub switch_latency_cycles: u32,
    /// Bytes per cycle at which a switch sums its children's streams on the way back to the
    /// store (the reduction's cost); the reduced stream leaves no faster than this.
    pub reduce_bytes_per_cycle: u32,
    /// Bytes per packet: the unit the switches forward and sum (a multiple of 4, one f32).
    pub packet_bytes: u32,
}

/// The largest fan-out a switch may have.
pub const MAX_FAN_OUT: u32 = 1024;

impl Default for Swarm {
    /// The `wse2` preset's broadcast/reduce fabric ([`Swarm::wse2`]).
    fn default() -> Swarm {
        Swarm::wse2()
    }
}

impl Swarm {
    /// The SwarmX figures wsel uses for CS-2 clusters. Public: SwarmX connects up to 192
    /// CS-2 systems to MemoryX as a broadcast/reduce tree, and a CS-2 has 12 × 100 GbE of
    /// I/O (1.2 Tb/s). Not public (wsel defaults): the fan-out, the latencies, the packet size
    /// and the reduction rate.
    pub fn wse2() -> Swarm {
        Swarm {
            // Default (wsel): the SwarmX topology's fan-out is not public; 4 children per
            // switch puts 192 systems at depth 4.
            fan_out: 4,
            // Public-derived (wsel's reading): a CS-2's 12 × 100 GbE = 1.2 Tb/s = 150 GB/s,
            // 176 bytes per cycle at 850 MHz, as for `host_io`.
            link_bytes_per_cycle: 176,
            // Default (wsel): 1 µs per link (cable, PHY and MAC) at 850 MHz.
            link_latency_cycles: 850,
            // Default (wsel): 0.5 µs per switch.
            switch_latency_cycles: 425,
            // Default (wsel): the switches sum at line rate.
            reduce_bytes_per_cycle: 176,
            // Default (wsel): 4 KiB packets.
            packet_bytes: 4096,
        }
    }

    /// Small figures for the `dev` preset, so that tests see the tree's latency and
    /// bandwidth on small models: fan-out 2, 16 bytes per cycle, 20 cycles per link, 10 per
    /// switch, 256-byte packets.
    pub fn dev() -> Swarm {
        Swarm {
            fan_out: 2,
            link_bytes_per_cycle: 16,
            link_latency_cycles: 20,
            switch_latency_cycles: 10,
            reduce_bytes_per_cycle: 16,
            packet_bytes: 256,
        }
    }

    /// The first problem with these figures, as (field below `swarm`, message).
    pub(crate) fn problem(&self) -> Option<(&'static str, String)> {
        if self.fan_out < 2 || self.fan_out > MAX_FAN_OUT {
            return Some((
                "fan_out",
                format!("must be 2 to {MAX_FAN_OUT} (children per switch)"),
            ));
        }
        let positive = [
            ("link_bytes_per_cycle", self.link_bytes_per_cycle),
            ("reduce_bytes_per_cycle", self.reduce_bytes_per_cycle),
            ("packet_bytes", self.packet_bytes),
        ];
        if let Some((field, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Some((field, "must be at least 1".to_string()));
        }
        if !self.packet_bytes.is_multiple_of(4) {
            return Some((
                "packet_bytes",
                "must be a multiple of 4 (whole f32 values)".into(),
            ));
        }
        None
    }
}
