//! The tree's shape: which switch every system and every switch hangs from.

/// A node of the tree: the weight store, a switch (level, index in its level) or a system.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Node {
    Store,
    Switch { level: u32, index: u32 },
    System(u32),
}

/// N systems under switches of fan-out `f`: the root switch is level 0, the systems' parents
/// are level `depth − 1`. Level `l` has `ceil(N / f^(depth − l))` switches; switch `i` of
/// level `l + 1` (or system `i`) hangs from switch `i / f` of level `l`. One system has no
/// switch: it is linked to the store directly (`depth` 0).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Tree {
    pub systems: u32,
    pub fan_out: u32,
    pub depth: u32,
}

impl Tree {
    /// The tree for `systems` (at least 1) under switches of `fan_out` (at least 2).
    pub fn new(systems: u32, fan_out: u32) -> Tree {
        let (systems, fan_out) = (systems.max(1), fan_out.max(2));
        let mut depth = 0;
        let mut reach = 1u64;
        while reach < u64::from(systems) {
            reach *= u64::from(fan_out);
            depth += 1;
        }
        Tree {
            systems,
            fan_out,
            depth,
        }
    }

    /// Switches on level `level` (0 = the root).
    pub fn switches(&self, level: u32) -> u32 {
        let below = u64::from(self.fan_out).pow(self.depth - level);
        u64::from(self.systems).div_ceil(below) as u32
    }

    /// The node `node` hangs from.
    pub fn parent(&self, node: Node) -> Node {
        match node {
            Node::Store => Node::Store,
            Node::Switch { level: 0, .. } => Node::Store,
            Node::Switch { level, index } => Node::Switch {
                level: level - 1,
                index: index / self.fan_out,
            },
            Node::System(_) if self.depth == 0 => Node::Store,
            Node::System(s) => Node::Switch {
                level: self.depth - 1,
                index: s / self.fan_out,
            },
        }
    }

    /// Every link, as its lower end, top-down: the switches level by level, then the
    /// systems. A link is named by the node it leads down to.
    pub fn links_top_down(&self) -> Vec<Node> {
        let mut nodes = Vec::new();
        for level in 0..self.depth {
            nodes.extend((0..self.switches(level)).map(|index| Node::Switch { level, index }));
        }
        nodes.extend((0..self.systems).map(Node::System));
        nodes
    }

    /// The children of switch `(level, index)`, in order.
    pub fn children(&self, level: u32, index: u32) -> Vec<Node> {
        let first = index * self.fan_out;
        if level + 1 == self.depth {
            let end = (first + self.fan_out).min(self.systems);
            (first..end).map(Node::System).collect()
        } else {
            let end = (first + self.fan_out).min(self.switches(level + 1));
            (first..end)
                .map(|index| Node::Switch {
                    level: level + 1,
                    index,
                })
                .collect()
        }
    }
}
