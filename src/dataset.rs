//! Dataset handles: open, close, versions, schema, fragments.

use std::ffi::c_char;
use std::sync::{Arc, RwLock};

use arrow::ffi::FFI_ArrowSchema;
use lance::dataset::builder::DatasetBuilder;
use lance::Dataset;

use crate::arrow_ffi::export_schema;
use crate::convert::{fragment_id_u32, require_handle, require_out, required_nonempty_str, storage_options, write_out};
use crate::error::{guard, invalid, status, CResult, Context};
use crate::runtime::block_on;

/// An open dataset. It holds one snapshot (one version); calls that commit
/// through the handle move it to the version they committed.
pub struct LanceDataset {
    snapshot: RwLock<Arc<Dataset>>,
}

impl LanceDataset {
    pub fn new(dataset: Dataset) -> Self {
        Self { snapshot: RwLock::new(Arc::new(dataset)) }
    }

    /// The snapshot the handle holds now.
    pub fn snapshot(&self) -> Arc<Dataset> {
        Arc::clone(&self.snapshot.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Runs a mutation on a private copy of the snapshot and publishes the
    /// result only if it succeeds, so a failed call leaves the handle as it was.
    /// Mutations through one handle are serialized.
    pub fn mutate<T>(&self, f: impl FnOnce(&mut Dataset) -> CResult<T>) -> CResult<T> {
        let mut guard = self.snapshot.write().unwrap_or_else(|e| e.into_inner());
        let mut copy = Dataset::clone(&guard);
        let value = f(&mut copy)?;
        *guard = Arc::new(copy);
        Ok(value)
    }
}

/// Borrows a dataset handle argument.
pub unsafe fn dataset_ref<'a>(ptr: *const LanceDataset) -> CResult<&'a LanceDataset> {
    require_handle(ptr, "dataset")?;
    Ok(&*ptr)
}

pub fn open_dataset(
    uri: &str,
    options: std::collections::HashMap<String, String>,
    version: u64,
) -> CResult<Dataset> {
    let mut builder = DatasetBuilder::from_uri(uri).with_storage_options(options);
    if version != 0 {
        builder = builder.with_version(version);
    }
    block_on(builder.load())?.context(format!("opening dataset '{uri}'"))
}

/// Checks caller fragment ids against a snapshot: each must name one of its
/// fragments, at most once.  Messages name the argument, position and value.
pub fn check_fragment_ids(ds: &Dataset, ids: &[u64], name: &str) -> CResult<Vec<u32>> {
    let version = ds.version().version;
    let mut seen = std::collections::HashSet::with_capacity(ids.len());
    let mut out = Vec::with_capacity(ids.len());
    for (i, &id) in ids.iter().enumerate() {
        if !ds.manifest.fragments.iter().any(|f| f.id == id) {
            return Err(invalid(format!("{name}[{i}] = {id} is not a fragment of dataset version {version}")));
        }
        if !seen.insert(id) {
            return Err(invalid(format!("{name}[{i}] = {id} is listed twice")));
        }
        out.push(fragment_id_u32(id, name, i)?);
    }
    Ok(out)
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_open(
    uri: *const c_char,
    storage_opts: *const *const c_char,
    version: u64,
) -> *mut LanceDataset {
    guard(std::ptr::null_mut(), || {
        let uri = required_nonempty_str(uri, "uri")?;
        let options = storage_options(storage_opts)?;
        let dataset = open_dataset(uri, options, version)?;
        Ok(Box::into_raw(Box::new(LanceDataset::new(dataset))))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_close(dataset: *mut LanceDataset) {
    if !dataset.is_null() {
        drop(Box::from_raw(dataset));
    }
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_version(dataset: *const LanceDataset) -> u64 {
    guard(0, || Ok(dataset_ref(dataset)?.snapshot().version().version))
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_latest_version(dataset: *const LanceDataset) -> u64 {
    guard(0, || {
        let ds = dataset_ref(dataset)?.snapshot();
        Ok(block_on(ds.latest_version_id())??)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_count_rows(dataset: *const LanceDataset) -> u64 {
    guard(0, || {
        let ds = dataset_ref(dataset)?.snapshot();
        Ok(block_on(ds.count_rows(None))?? as u64)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_schema(
    dataset: *const LanceDataset,
    out: *mut FFI_ArrowSchema,
) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        require_out(out, "out")?;
        let schema = arrow_schema::Schema::from(ds.schema());
        export_schema(&schema, out)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_fragment_count(dataset: *const LanceDataset) -> u64 {
    guard(0, || Ok(dataset_ref(dataset)?.snapshot().manifest.fragments.len() as u64))
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_fragment_ids(
    dataset: *const LanceDataset,
    out_ids: *mut u64,
) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        require_out(out_ids, "out_ids")?;
        for (i, fragment) in ds.manifest.fragments.iter().enumerate() {
            write_out(out_ids.add(i), fragment.id);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_fragment_row_counts(
    dataset: *const LanceDataset,
    out_row_counts: *mut u64,
    capacity: usize,
) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        require_out(out_row_counts, "out_row_counts")?;
        let fragments = ds.get_fragments();
        if capacity < fragments.len() {
            return Err(invalid(format!(
                "capacity = {capacity} is less than the {} fragments of dataset version {}",
                fragments.len(),
                ds.version().version
            )));
        }
        let counts = block_on(async {
            let mut counts = Vec::with_capacity(fragments.len());
            for fragment in &fragments {
                counts.push(fragment.count_rows(None).await? as u64);
            }
            Ok::<_, lance::Error>(counts)
        })??;
        for (i, count) in counts.into_iter().enumerate() {
            write_out(out_row_counts.add(i), count);
        }
        Ok(())
    })
}
