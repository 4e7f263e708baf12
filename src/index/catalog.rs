//! The index catalog of a snapshot: its columns, its user indices and their
//! segments, and the checks a build or commit makes against them before
//! the core sees a request.

use std::collections::{HashMap, HashSet};
use std::ffi::c_char;

use arrow_schema::DataType;
use lance::index::DatasetIndexExt;
use lance::Dataset;
use lance_linalg::distance::DistanceType;
use lance_table::format::{Fragment, IndexMetadata};
use lance_table::system_index::is_system_index;

use crate::boundary::error::{invalid, not_found, CResult};
use crate::boundary::ffi::optional_str;
use crate::boundary::params::metric_from_c;
use crate::process::runtime::block_on;

/// Checks that `column` exists, naming it in the error otherwise.
pub fn require_column(ds: &Dataset, column: &str) -> CResult<()> {
    if ds.schema().field(column).is_none() {
        return Err(not_found(format!("column '{column}' does not exist in dataset version {}", ds.version().version)));
    }
    Ok(())
}

/// The optional index name argument: NULL is the default name, "" is refused.
pub unsafe fn optional_index_name(index_name: *const c_char) -> CResult<Option<String>> {
    match optional_str(index_name, "index_name")? {
        Some("") => Err(invalid("index_name must not be empty (pass NULL for the default name)")),
        other => Ok(other.map(str::to_string)),
    }
}

/// What the core would only find deep into a vector build, checked up
/// front: the column holds vectors, and HAMMING distances are defined on
/// binary (uint8) vectors only.
pub fn check_vector_column(ds: &Dataset, column: &str, metric: i32) -> CResult<()> {
    require_column(ds, column)?;
    let field = ds.schema().field(column).expect("checked above");
    // The element type of a vector column: FixedSizeList<T>, or a list of them.
    let element = match field.data_type() {
        DataType::FixedSizeList(item, _) => Some(item.data_type().clone()),
        DataType::List(item) | DataType::LargeList(item) => match item.data_type() {
            DataType::FixedSizeList(inner, _) => Some(inner.data_type().clone()),
            _ => None,
        },
        _ => None,
    };
    let Some(element) = element else {
        return Err(invalid(format!(
            "column '{column}' is not a vector column (a FixedSizeList, or a list of them); it holds {}",
            field.data_type()
        )));
    };
    if metric_from_c(metric, "metric")? != DistanceType::Hamming {
        return Ok(());
    }
    if element != DataType::UInt8 {
        return Err(invalid(format!(
            "metric HAMMING needs binary vectors (uint8 elements); column '{column}' holds {element} elements"
        )));
    }
    Ok(())
}

/// The rows of `fragments` (None = all), deleted rows excluded: the
/// manifest's counts (`recorded_rows`), or the core's count for a fragment
/// whose manifest entry has none.
pub fn live_rows(ds: &Dataset, fragments: Option<&[u32]>) -> CResult<u64> {
    let wanted: Option<HashSet<u32>> = fragments.map(|ids| ids.iter().copied().collect());
    let mut rows = 0u64;
    for f in ds.get_fragments() {
        if wanted.as_ref().is_some_and(|ids| !ids.contains(&(f.id() as u32))) {
            continue;
        }
        rows += match recorded_rows(f.metadata()) {
            Some((_, live)) => live,
            None => block_on(f.count_rows(None))?? as u64,
        };
    }
    Ok(rows)
}

/// k-means needs at least one row per partition among the rows it trains
/// on (the given fragments, or the whole dataset).
pub fn check_partitions(ds: &Dataset, num_partitions: u32, fragments: Option<&[u32]>) -> CResult<()> {
    if num_partitions == 0 {
        return Ok(());
    }
    let wanted: Option<HashSet<u64>> = fragments.map(|ids| ids.iter().map(|id| u64::from(*id)).collect());
    let mut rows = 0u64;
    for f in ds.manifest.fragments.iter() {
        if wanted.as_ref().is_some_and(|ids| !ids.contains(&f.id)) {
            continue;
        }
        match f.num_rows() {
            Some(n) => rows += n as u64,
            None => return Ok(()),
        }
    }
    if u64::from(num_partitions) > rows {
        return Err(invalid(format!(
            "num_partitions = {num_partitions} is more than the {rows} rows to train on{}; use at most {rows} partitions",
            if fragments.is_some() { " (in the given fragments)" } else { "" }
        )));
    }
    Ok(())
}

/// Every segment of every user index (system indices are left out), in
/// manifest order.
pub fn user_segments(ds: &Dataset) -> CResult<Vec<IndexMetadata>> {
    let all = block_on(ds.load_indices())??;
    Ok(all.iter().filter(|idx| !is_system_index(idx)).cloned().collect())
}

/// The segments of one logical index; NOT_FOUND when it has none.
pub fn named_segments(ds: &Dataset, name: &str) -> CResult<Vec<IndexMetadata>> {
    let segments: Vec<IndexMetadata> = user_segments(ds)?.into_iter().filter(|s| s.name == name).collect();
    if segments.is_empty() {
        return Err(not_found(format!("index '{name}' does not exist in dataset version {}", ds.version().version)));
    }
    Ok(segments)
}

/// The counts a manifest entry records: (written, live = written -
/// deleted); None when it does not record them.
pub fn recorded_rows(f: &Fragment) -> Option<(u64, u64)> {
    Some((f.physical_rows? as u64, f.num_rows()? as u64))
}

/// The rows of each fragment of a snapshot by id, as `recorded_rows` gives
/// them; a fragment the snapshot does not have, or whose counts it does not
/// record, is absent.  Made once for a loop over fragments: a search of the
/// manifest for each made listing, coverage and the maintenance plan
/// quadratic in the table's fragments (10,000 and more for engines that
/// append in small batches).
pub struct FragmentRows(HashMap<u32, (u64, u64)>);

impl FragmentRows {
    pub fn of(ds: &Dataset) -> Self {
        FragmentRows(
            ds.manifest.fragments.iter().filter_map(|f| Some((u32::try_from(f.id).ok()?, recorded_rows(f)?))).collect(),
        )
    }

    pub fn get(&self, id: u32) -> Option<(u64, u64)> {
        self.0.get(&id).copied()
    }
}

/// Column names of a segment's field ids.
pub fn column_names(ds: &Dataset, fields: &[i32]) -> Vec<String> {
    fields
        .iter()
        .map(|id| ds.schema().field_by_id(*id).map(|f| f.name.clone()).unwrap_or_else(|| format!("<field {id}>")))
        .collect()
}
