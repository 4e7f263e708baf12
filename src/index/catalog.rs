//! The index catalog of a snapshot: its columns, its user indices and their
//! segments, and the checks a build or commit makes against them before
//! the core sees a request.

use std::ffi::c_char;

use arrow_schema::DataType;
use lance::index::DatasetIndexExt;
use lance::Dataset;
use lance_linalg::distance::DistanceType;
use lance_table::format::IndexMetadata;
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
/// manifest's counts (`fragment_rows`), or the core's count for a fragment
/// whose manifest entry has none.
pub fn live_rows(ds: &Dataset, fragments: Option<&[u32]>) -> CResult<u64> {
    let mut rows = 0u64;
    for f in ds.get_fragments() {
        let id = f.id() as u32;
        if fragments.is_some_and(|ids| !ids.contains(&id)) {
            continue;
        }
        rows += match fragment_rows(ds, id) {
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
    let mut rows = 0u64;
    for f in ds.manifest.fragments.iter() {
        if fragments.is_some_and(|ids| !ids.iter().any(|id| u64::from(*id) == f.id)) {
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

/// Rows of one fragment of the snapshot: (written, live = written -
/// deleted); None when the snapshot has no such fragment or does not record
/// its counts.
pub fn fragment_rows(ds: &Dataset, id: u32) -> Option<(u64, u64)> {
    let f = ds.manifest.fragments.iter().find(|f| f.id == u64::from(id))?;
    Some((f.physical_rows? as u64, f.num_rows()? as u64))
}

/// Column names of a segment's field ids.
pub fn column_names(ds: &Dataset, fields: &[i32]) -> Vec<String> {
    fields
        .iter()
        .map(|id| ds.schema().field_by_id(*id).map(|f| f.name.clone()).unwrap_or_else(|| format!("<field {id}>")))
        .collect()
}
