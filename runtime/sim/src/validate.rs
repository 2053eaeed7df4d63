//! Checking a [`Program`] against a target before anything is built: every problem becomes a
//! [`SimError`] naming the PE (and color) concerned. The checks that need the routers
//! numbered (routes that must meet a neighbour's route, ramps without a PE, edges) are in
//! [`check_routes`], which the numbering in `layout.rs` calls.

use crate::error::SimError;
use crate::layout::Numbering;
use crate::program::{PeProgram, Program, Route};
use wsel_target::{Coord, Dir, Port, Target};

/// An invalid-program error at `at`.
pub(crate) fn program_error(at: Option<Coord>, message: String) -> SimError {
    SimError::Program { at, message }
}

/// The checks of one PE's program on its own.
pub(crate) fn check_pe(target: &Target, program: &Program, p: &PeProgram) -> Result<(), SimError> {
    let at = Some(p.at);
    if !target.contains(p.at) {
        return Err(program_error(
            at,
            format!(
                "the PE is outside the {}×{} fabric",
                target.width, target.height
            ),
        ));
    }
    if target.defects.pe_dead(p.at) {
        return Err(program_error(
            at,
            "this PE is dead in the target's defect map; nothing may run on it".into(),
        ));
    }
    let Some(kernel) = program.kernels.get(p.kernel as usize) else {
        return Err(program_error(
            at,
            format!("kernel {} does not exist", p.kernel),
        ));
    };
    if let Some(&t) = p.launch.iter().find(|&&t| t as usize >= kernel.tasks.len()) {
        return Err(program_error(
            at,
            format!("launch task {t} does not exist in kernel `{}`", kernel.name),
        ));
    }
    if p.sram_bytes > target.sram_bytes {
        return Err(SimError::SramOverflow {
            at: p.at,
            needed: p.sram_bytes.into(),
            capacity: target.sram_bytes,
        });
    }
    if p.sram_init.len() > p.sram_bytes as usize {
        return Err(SimError::SramOverflow {
            at: p.at,
            needed: p.sram_init.len() as u64,
            capacity: p.sram_bytes.min(target.sram_bytes),
        });
    }
    if let Some(&c) = p.ports.iter().find(|&&c| u32::from(c) >= target.colors) {
        return Err(program_error(
            at,
            format!(
                "a port is bound to color {c}, but the target has {} colors",
                target.colors
            ),
        ));
    }
    if !p.region.contains(p.at) {
        return Err(program_error(at, "the PE is outside its own region".into()));
    }
    Ok(())
}

/// The checks of one router entry on its own.
pub(crate) fn check_route(target: &Target, r: &Route) -> Result<(), SimError> {
    let at = Some(r.at);
    if !target.contains(r.at) {
        return Err(program_error(
            at,
            format!("a route for color {} is outside the fabric", r.color),
        ));
    }
    if u32::from(r.color) >= target.colors {
        return Err(program_error(
            at,
            format!(
                "color {} does not exist: the target has {} colors",
                r.color, target.colors
            ),
        ));
    }
    if target.defects.pe_dead(r.at) {
        return Err(SimError::DeadRoute {
            at: r.at,
            color: r.color,
            element: format!("the dead PE {}", r.at),
        });
    }
    if r.rx.is_empty() || r.tx.is_empty() {
        return Err(program_error(
            at,
            format!(
                "the route for color {} needs at least one receive and one forward port",
                r.color
            ),
        ));
    }
    // A port may both receive and forward (a bus: every PE of a line sends and receives on
    // one color); each receive port's queue forwards to the others, so some must be left.
    if r.rx.iter().any(|p| r.tx.0 & !(1u8 << p.index()) == 0) {
        return Err(program_error(
            at,
            format!(
                "the route for color {} forwards what one of its receive ports takes nowhere but back",
                r.color
            ),
        ));
    }
    if let Some(f) = r.filter {
        let splits = r.rx.0.count_ones() == 1
            && r.tx.contains(Port::Ramp)
            && r.tx.0 & !(1 << Port::Ramp.index()) != 0;
        if !splits || f.keep == 0 || f.keep > f.period {
            return Err(program_error(
                at,
                format!(
                    "the route for color {} has a ramp filter (keep {} of {}), which needs one receive port, the ramp and a link port to forward to, and 1 ≤ keep ≤ period",
                    r.color, f.keep, f.period
                ),
            ));
        }
    }
    Ok(())
}

/// That an edge stream at `at` may use the `side` side.
pub(crate) fn check_edge(target: &Target, at: Coord, side: Dir) -> Result<(), SimError> {
    if !target.contains(at) || target.neighbor(at, side).is_some() {
        return Err(program_error(
            Some(at),
            format!(
                "an edge stream uses the {side} side, but the PE is not on the fabric's {side} edge"
            ),
        ));
    }
    if target.defects.pe_dead(at) {
        return Err(program_error(
            Some(at),
            "an edge stream uses a dead PE".into(),
        ));
    }
    Ok(())
}

/// Route consistency: ramps only where a PE runs, no dead links or PEs on the way, every
/// forward met by the neighbour's route for the color, forwards off the fabric only to a
/// declared output.
pub(crate) fn check_routes(target: &Target, n: &Numbering<'_>) -> Result<(), SimError> {
    for g in 0..n.keys.len() {
        let k = n.keys[g];
        let at = n.coord_of(k);
        for r in n.node_routes(g) {
            let has_pe = n.pe_at.contains_key(&k);
            if (r.rx.contains(Port::Ramp) || r.tx.contains(Port::Ramp)) && !has_pe {
                return Err(program_error(
                    Some(at),
                    format!(
                        "the route for color {} uses the ramp, but no program runs on this PE",
                        r.color
                    ),
                ));
            }
            for d in Dir::ALL {
                check_link(target, n, k, r, d)?;
            }
        }
    }
    Ok(())
}

/// The part of [`check_routes`] for route `r` at fabric index `k` and direction `d`.
fn check_link(
    target: &Target,
    n: &Numbering<'_>,
    k: u32,
    r: &Route,
    d: Dir,
) -> Result<(), SimError> {
    let at = n.coord_of(k);
    let (rx, tx) = (r.rx.contains(d.port()), r.tx.contains(d.port()));
    if !rx && !tx {
        return Ok(());
    }
    let Some(nb) = target.neighbor(at, d) else {
        if tx && !n.outputs_at.contains_key(&(k, d, r.color)) {
            return Err(program_error(
                Some(at),
                format!(
                    "the route for color {} forwards {d} off the fabric, but no output is declared there",
                    r.color
                ),
            ));
        }
        return Ok(());
    };
    if target.defects.link_dead(at, d) {
        return Err(SimError::DeadRoute {
            at,
            color: r.color,
            element: format!("the dead {d} link between PE {at} and PE {nb}"),
        });
    }
    if target.defects.pe_dead(nb) {
        return Err(SimError::DeadRoute {
            at,
            color: r.color,
            element: format!("the dead PE {nb}"),
        });
    }
    if tx {
        let port = d.opposite().port();
        let ng = n.node_at(nb);
        let ok = ng != crate::fabric::NONE
            && n.find_route(ng as usize, r.color)
                .is_some_and(|nr| nr.rx.contains(port));
        if !ok {
            return Err(SimError::RouteMismatch {
                at,
                color: r.color,
                to: nb,
                port,
            });
        }
    }
    Ok(())
}
