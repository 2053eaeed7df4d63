//! How the processes of a cluster simulation talk: [`Local`] when one process simulates every
//! system, MPI (feature `mpi`, rsmpi over the system's Open MPI or MPICH) when `mpirun -np K`
//! started K of them. Only the calling thread talks (MPI's "funneled" level).

/// The few collective operations a cluster simulation needs. Every process calls each of
/// them in the same order.
pub trait Comm {
    /// This process's number, 0 to `size − 1`; 0 writes the outputs.
    fn rank(&self) -> usize;
    /// How many processes take part.
    fn size(&self) -> usize;
    /// The element-wise maximum of `values` over every process.
    fn max_all(&self, values: &[u64]) -> Vec<u64>;
    /// Every process's `bytes`, in rank order, at process 0 (`None` at the others).
    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>>;
    /// Process 0's `bytes` at every process (the others' `bytes` are replaced).
    fn broadcast(&self, bytes: &mut Vec<u8>);
}

/// One process simulating the whole cluster.
pub struct Local;

impl Comm for Local {
    fn rank(&self) -> usize {
        0
    }

    fn size(&self) -> usize {
        1
    }

    fn max_all(&self, values: &[u64]) -> Vec<u64> {
        values.to_vec()
    }

    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        Some(vec![bytes.to_vec()])
    }

    fn broadcast(&self, _bytes: &mut Vec<u8>) {}
}

/// The size of the MPI job this process was started in, from the launcher's environment
/// (Open MPI's `OMPI_COMM_WORLD_SIZE`, PMI's `PMI_SIZE` as MPICH's Hydra sets it), or `None`
/// when no launcher started it.
pub fn launched_size() -> Option<usize> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|name| std::env::var(name).ok()?.parse().ok())
}

/// The processes of this run: MPI's world when an MPI launcher started it (feature `mpi`),
/// else this process alone. `Err` when a launcher started several processes but this build
/// cannot talk MPI, or MPI cannot start.
pub fn open() -> Result<Box<dyn Comm>, String> {
    match launched_size() {
        Some(size) if size > 1 => open_mpi(size),
        _ => Ok(Box::new(Local)),
    }
}

#[cfg(feature = "mpi")]
fn open_mpi(_size: usize) -> Result<Box<dyn Comm>, String> {
    mpi_world::Mpi::init().map(|m| Box::new(m) as Box<dyn Comm>)
}

#[cfg(not(feature = "mpi"))]
fn open_mpi(size: usize) -> Result<Box<dyn Comm>, String> {
    Err(format!(
        "an MPI launcher started {size} processes, but this wsel was built without MPI: every \
         process would simulate the whole cluster (build with `cargo build --release --features mpi`)"
    ))
}

#[cfg(feature = "mpi")]
mod mpi_world {
    use mpi::collective::SystemOperation;
    use mpi::datatype::PartitionMut;
    use mpi::traits::*;

    use super::Comm;

    /// MPI's world communicator; MPI is finalized when it is dropped.
    pub struct Mpi {
        world: mpi::topology::SimpleCommunicator,
        _universe: mpi::environment::Universe,
    }

    impl Mpi {
        pub fn init() -> Result<Mpi, String> {
            let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
                .ok_or("MPI cannot be initialised (was it initialised before?)")?;
            Ok(Mpi {
                world: universe.world(),
                _universe: universe,
            })
        }
    }

    impl Comm for Mpi {
        fn rank(&self) -> usize {
            self.world.rank() as usize
        }

        fn size(&self) -> usize {
            self.world.size() as usize
        }

        fn max_all(&self, values: &[u64]) -> Vec<u64> {
            let mut out = vec![0u64; values.len()];
            self.world
                .all_reduce_into(values, &mut out[..], SystemOperation::max());
            out
        }

        fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
            let root = self.world.process_at_rank(0);
            let count = bytes.len() as mpi::Count;
            if self.rank() != 0 {
                root.gather_into(&count);
                root.gather_varcount_into(bytes);
                return None;
            }
            let mut counts = vec![0 as mpi::Count; self.size()];
            root.gather_into_root(&count, &mut counts[..]);
            let mut displs = Vec::with_capacity(counts.len());
            let mut total: mpi::Count = 0;
            for &c in &counts {
                displs.push(total);
                total += c;
            }
            let mut all = vec![0u8; total as usize];
            {
                let mut partition = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
                root.gather_varcount_into_root(bytes, &mut partition);
            }
            Some(
                counts
                    .iter()
                    .zip(&displs)
                    .map(|(&c, &d)| all[d as usize..(d + c) as usize].to_vec())
                    .collect(),
            )
        }

        fn broadcast(&self, bytes: &mut Vec<u8>) {
            let root = self.world.process_at_rank(0);
            let mut count = bytes.len() as u64;
            root.broadcast_into(&mut count);
            bytes.resize(count as usize, 0);
            root.broadcast_into(&mut bytes[..]);
        }
    }
}
