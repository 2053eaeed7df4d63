//! The source texts a layer graph's dry runs read, as one digest: a caller that keeps a
//! mapping measured with [`crate::KernelDryRuns`] keys it on the graph and this digest.
//!
//! The layer graph names every kernel it runs but holds none of their bodies, so an edit of a
//! kernel's body — or of a constant it uses — leaves the graph as it was while changing what
//! the dry runs measure. The digest covers the files that define the graph's kernels and,
//! transitively, every file whose items those files can name (their imports): every text a
//! kernel's lowering can depend on.

use std::collections::BTreeMap;
use std::path::Path;

use wsel_ir::graph::LayerGraph;
use wsel_sema::db::lookup_file;
use wsel_sema::{Db, SourceFile, module_scope};

/// The BLAKE3 digest of the paths and texts of the files `graph`'s kernels can depend on.
pub fn digest(db: &dyn Db, graph: &LayerGraph) -> blake3::Hash {
    let mut files: BTreeMap<&Path, SourceFile> = BTreeMap::new();
    let mut pending: Vec<SourceFile> = graph
        .layers
        .iter()
        .flat_map(|layer| &layer.impls)
        .filter_map(|imp| lookup_file(db, &imp.kernel.file))
        .collect();
    while let Some(file) = pending.pop() {
        if files.insert(file.path(db), file).is_some() {
            continue;
        }
        pending.extend(
            module_scope(db, file)
                .names
                .values()
                .map(|item| item.file(db)),
        );
    }
    let mut hasher = blake3::Hasher::new();
    for (path, file) in files {
        let text = file.text(db);
        for part in [path.as_os_str().as_encoded_bytes(), text.as_bytes()] {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
    }
    hasher.finalize()
}
