//! What a layer implementation's ports become (`docs/mapping.md` §3–§4): neighbour links
//! (an `out ... to D` paired with an `in ... from opposite(D)`, two colors by parity),
//! multicast lines, buses (an `out ... to row` paired with an `in ... from row`, one color
//! for the pair), and the tensors bound to boundary ports with their part counts.
//!
//! Every port belongs to exactly one **link class** or is a multicast port. A link class
//! travels in one direction `D` (the side of its `out` port, or the opposite of its `in`
//! port's side) and owns two **slots** (color variables): PE `k` (its logical row for
//! `north`/`south`, its column for `east`/`west`) sends on slot `k % 2` and receives, from its
//! neighbour, on slot `(k + 1) % 2`. A multicast port owns one slot, and so does a bus, and
//! so does a switched pair (the k-th switched `out ... to D` with the k-th switched
//! `in ... from opposite(D)`: one color along every line, `crate::switched`).

use wsel_ir::graph::{BindTarget, Bus, LayerImpl, LayerInstance, Side, SplitAxis};
use wsel_ir::kernel::PortDirection;

/// A layer implementation's ports, link classes and slots.
#[derive(Debug, Clone)]
pub(crate) struct ImplPlan {
    pub ports: Vec<PortPlan>,
    pub links: Vec<LinkClass>,
    /// Port index of every multicast port, in declaration order; multicast `m` owns slot
    /// `2 * links.len() + m`.
    pub multicasts: Vec<usize>,
    /// Bus classes: the k-th `out ... to B` with the k-th `in ... from B` of each bus `B`,
    /// then the switched pairs; bus `b` owns slot `2 * links.len() + multicasts.len() + b`.
    pub buses: usize,
}

/// One kernel port.
#[derive(Debug, Clone)]
pub(crate) struct PortPlan {
    pub name: String,
    pub direction: PortDirection,
    /// The logical side.
    pub side: Side,
    pub multicast: bool,
    /// The bus a bus port talks on.
    pub bus: Option<Bus>,
    pub slot: SlotOf,
    pub bind: Option<PortBind>,
}

/// Which slots a port uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlotOf {
    /// The port of link class `class` (sends or receives by parity).
    Link(usize),
    /// Multicast port number `m`.
    Multicast(usize),
    /// Bus class `b` (both ports of a pair).
    Bus(usize),
}

/// A tensor streamed through a boundary port.
#[derive(Debug, Clone)]
pub(crate) struct PortBind {
    pub tensor: BoundTensor,
    pub parts: Parts,
    /// Index into the implementation's `binds`.
    pub bind: usize,
}

/// The tensor a port bind names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BoundTensor {
    /// The layer's argument `i`.
    Arg(usize),
    /// The layer's result.
    Output,
}

/// How many parts a bound tensor has: the region's rows, its columns, or one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parts {
    Rows,
    Cols,
    One,
}

/// A pair of neighbour ports (either may be missing) travelling toward `dir`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LinkClass {
    pub dir: Side,
    /// Its `out` and `in` ports (indices into the implementation's ports).
    pub out_port: Option<usize>,
    pub in_port: Option<usize>,
}

impl ImplPlan {
    /// Pairs the ports of `imp` and reads its port binds.
    pub(crate) fn new(layer: &LayerInstance, imp: &LayerImpl) -> ImplPlan {
        let mut ports: Vec<PortPlan> = imp
            .ports
            .iter()
            .map(|p| PortPlan {
                name: p.name.clone(),
                direction: p.direction,
                side: p.side,
                multicast: p.multicast && p.direction == PortDirection::In,
                bus: p.bus,
                slot: SlotOf::Multicast(usize::MAX),
                bind: None,
            })
            .collect();
        let buses = pair_buses(imp, &mut ports);
        let buses = pair_switched(imp, &mut ports, buses);
        let mut links = Vec::new();
        // Ports with a distance (`by k`) pair among themselves, like `wsel_map::pairing`.
        for far in [false, true] {
            for dir in [Side::North, Side::South, Side::East, Side::West] {
                let link_port = |i: usize, direction: PortDirection, side: Side| {
                    ports[i].direction == direction
                        && !ports[i].multicast
                        && imp.ports[i].bus.is_none()
                        && imp.ports[i].switch.is_none()
                        && imp.ports[i].distance.is_some() == far
                        && ports[i].side == side
                };
                let outs: Vec<usize> = (0..ports.len())
                    .filter(|&i| link_port(i, PortDirection::Out, dir))
                    .collect();
                let ins: Vec<usize> = (0..ports.len())
                    .filter(|&i| link_port(i, PortDirection::In, dir.opposite()))
                    .collect();
                for k in 0..outs.len().max(ins.len()) {
                    let class = links.len();
                    let (out_port, in_port) = (outs.get(k).copied(), ins.get(k).copied());
                    for p in out_port.into_iter().chain(in_port) {
                        ports[p].slot = SlotOf::Link(class);
                    }
                    links.push(LinkClass {
                        dir,
                        out_port,
                        in_port,
                    });
                }
            }
        }
        let mut multicasts = Vec::new();
        for (i, p) in ports.iter_mut().enumerate() {
            if p.multicast {
                p.slot = SlotOf::Multicast(multicasts.len());
                multicasts.push(i);
            }
        }
        for (b, bind) in imp.binds.iter().enumerate() {
            if bind.target != BindTarget::Port {
                continue;
            }
            // Several tensors bound to one port stream one after another, in bind order: the
            // first one stands for the port here (its parts are every one's).
            let Some(p) = ports
                .iter_mut()
                .find(|p| p.name == bind.target_name && p.bind.is_none())
            else {
                continue;
            };
            let tensor = if bind.tensor == layer.output_name {
                BoundTensor::Output
            } else if let Some(i) = layer.arg_names.iter().position(|a| *a == bind.tensor) {
                BoundTensor::Arg(i)
            } else {
                continue;
            };
            let parts = bind
                .split
                .iter()
                .find_map(|s| match s {
                    SplitAxis::Rows => Some(Parts::Rows),
                    SplitAxis::Cols => Some(Parts::Cols),
                    SplitAxis::Whole => None,
                })
                .unwrap_or(Parts::One);
            p.bind = Some(PortBind {
                tensor,
                parts,
                bind: b,
            });
        }
        ImplPlan {
            ports,
            links,
            multicasts,
            buses,
        }
    }

    /// Why two paired ports cannot link on a region where their distances are `distances`
    /// (per port, from `expr::port_distances`), if they cannot: the distances differ.
    pub(crate) fn distance_mismatch(&self, distances: &[Option<u32>]) -> Option<String> {
        self.links.iter().find_map(|link| {
            let (o, i) = (link.out_port?, link.in_port?);
            let (a, b) = (distances.get(o).copied()?, distances.get(i).copied()?);
            (a != b).then(|| {
                format!(
                    "ports `{}` and `{}` pair but their distances differ ({} and {})",
                    self.ports[o].name,
                    self.ports[i].name,
                    a.unwrap_or(1),
                    b.unwrap_or(1)
                )
            })
        })
    }

    /// Number of slots (color variables) of this implementation.
    pub(crate) fn slot_count(&self) -> usize {
        2 * self.links.len() + self.multicasts.len() + self.buses
    }

    /// The slot of bus class `b`.
    pub(crate) fn bus_slot(&self, b: usize) -> usize {
        2 * self.links.len() + self.multicasts.len() + b
    }

    /// The port bound to the layer's result, if any.
    pub(crate) fn output_port(&self) -> Option<usize> {
        self.ports.iter().position(|p| {
            p.bind
                .as_ref()
                .is_some_and(|b| b.tensor == BoundTensor::Output)
        })
    }

    /// The ports bound to argument `arg`.
    pub(crate) fn arg_ports(&self, arg: usize) -> impl Iterator<Item = usize> + '_ {
        self.ports.iter().enumerate().filter_map(move |(i, p)| {
            p.bind
                .as_ref()
                .is_some_and(|b| b.tensor == BoundTensor::Arg(arg))
                .then_some(i)
        })
    }

    /// The slot a port uses at the region's boundary on its own side: for an `out` port, the
    /// slot its last PE sends on out of the region; for an `in` port, the slot its first PE
    /// receives on from outside. `rows`/`cols` are the logical region size.
    pub(crate) fn boundary_slot(&self, port: usize, rows: u32, cols: u32) -> usize {
        match self.ports[port].slot {
            SlotOf::Multicast(m) => 2 * self.links.len() + m,
            SlotOf::Bus(b) => self.bus_slot(b),
            SlotOf::Link(class) => {
                let link = self.links[class];
                let len = along(link.dir, rows, cols);
                // The boundary PE's index along the class's axis.
                let sender_at_end = match link.dir {
                    Side::South | Side::East => len.saturating_sub(1),
                    Side::North | Side::West => 0,
                };
                let receiver_at_start = match link.dir {
                    Side::South | Side::East => 0,
                    Side::North | Side::West => len.saturating_sub(1),
                };
                let parity = if self.ports[port].direction == PortDirection::Out {
                    sender_at_end % 2
                } else {
                    (receiver_at_start + 1) % 2
                };
                2 * class + parity as usize
            }
        }
    }
}

/// Gives every bus port of `imp` its class (`SlotOf::Bus`): per bus, the k-th `out` port with
/// the k-th `in` port, in declaration order. Returns the number of classes.
fn pair_buses(imp: &LayerImpl, ports: &mut [PortPlan]) -> usize {
    let mut classes = 0;
    for bus in [Bus::Row, Bus::Col, Bus::Region] {
        let of = |direction: PortDirection| -> Vec<usize> {
            (0..imp.ports.len())
                .filter(|&i| imp.ports[i].bus == Some(bus) && imp.ports[i].direction == direction)
                .collect()
        };
        let (outs, ins) = (of(PortDirection::Out), of(PortDirection::In));
        for k in 0..outs.len().max(ins.len()) {
            for p in outs.get(k).into_iter().chain(ins.get(k)) {
                ports[*p].slot = SlotOf::Bus(classes);
            }
            classes += 1;
        }
    }
    classes
}

/// Gives every switched port of `imp` a class after the `classes` buses: per direction `D`,
/// the k-th switched `out ... to D` with the k-th switched `in ... from opposite(D)`, in
/// declaration order (one color for the pair, like a bus). Returns the number of classes.
fn pair_switched(imp: &LayerImpl, ports: &mut [PortPlan], mut classes: usize) -> usize {
    for dir in [Side::North, Side::South, Side::East, Side::West] {
        let of = |direction: PortDirection, side: Side| -> Vec<usize> {
            (0..imp.ports.len())
                .filter(|&i| {
                    let p = &imp.ports[i];
                    p.switch.is_some()
                        && p.bus.is_none()
                        && p.direction == direction
                        && p.side == side
                })
                .collect()
        };
        let (outs, ins) = (
            of(PortDirection::Out, dir),
            of(PortDirection::In, dir.opposite()),
        );
        for k in 0..outs.len().max(ins.len()) {
            for p in outs.get(k).into_iter().chain(ins.get(k)) {
                ports[*p].slot = SlotOf::Bus(classes);
            }
            classes += 1;
        }
    }
    classes
}

/// The region's length along a link class's direction.
pub(crate) fn along(dir: Side, rows: u32, cols: u32) -> u32 {
    match dir {
        Side::North | Side::South => rows,
        Side::East | Side::West => cols,
    }
}

/// The number of lines along a side (rows for `west`/`east`, columns for `north`/`south`),
/// which is also the part count a bind on that side must have.
pub(crate) fn lines_on(side: Side, rows: u32, cols: u32) -> u32 {
    match side {
        Side::West | Side::East => rows,
        Side::North | Side::South => cols,
    }
}

/// The parts axis a port on `side` requires.
pub(crate) fn parts_for_side(side: Side) -> Parts {
    match side {
        Side::West | Side::East => Parts::Rows,
        Side::North | Side::South => Parts::Cols,
    }
}

/// The logical side's lower-case name.
pub(crate) fn side_name(side: Side) -> &'static str {
    match side {
        Side::North => "north",
        Side::South => "south",
        Side::East => "east",
        Side::West => "west",
    }
}
