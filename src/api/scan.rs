//! lance.h section "Scan and search": a scanner collects settings, each
//! checked as it is made, then runs once as a batch iterator or any number
//! of times as Arrow streams.

use std::any::Any;
use std::ffi::{c_char, c_void};
use std::sync::Arc;

use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{Array, ArrayRef, FixedSizeListArray, Float16Array, Float32Array, Float64Array, Int8Array, RecordBatch, UInt8Array};
use arrow_buffer::{Buffer, ScalarBuffer};
use arrow_schema::{DataType, Field};
use futures::StreamExt;
use lance_io::stream::RecordBatchStream;
use lance::dataset::scanner::{DatasetRecordBatchStream, Scanner};
use lance::Dataset;
use lance_index::scalar::FullTextSearchQuery;
use lance_linalg::distance::DistanceType;
use uuid::Uuid;

use crate::floor::arrow::{export_batch, export_stream, IterReader};
use crate::floor::catalog::user_segments;
use crate::floor::error::{guard, invalid, status, CError, CResult, Context};
use crate::floor::ffi::{
    copy_untyped, free_handle, handle_mut, handle_ref, into_handle, null_terminated_strs, optional_str, require_out,
    required_nonempty_str, slice_arg, uuids_from_packed, write_out,
};
use crate::floor::handle::{check_fragment_ids, dataset_ref, LanceDataset};
use crate::floor::poll::PolledStream;
use crate::floor::params::{
    metric_from_c, DTYPE_FLOAT16, DTYPE_FLOAT32, DTYPE_FLOAT64, DTYPE_INT8, DTYPE_UINT8,
};
use crate::floor::runtime::block_on;

/// A k-NN query set on a scanner.
#[derive(Clone)]
struct Nearest {
    column: String,
    query: ArrayRef,
    k: usize,
    /// Query vectors of a multivector search (`query` is then a
    /// FixedSizeList of them); 0 for a single-vector search.
    multivector_count: usize,
}

/// Upstream's bounds on a multivector search.
const MULTIVECTOR_MAX_QUERIES: usize = 128;
const MULTIVECTOR_MAX_CANDIDATES: usize = 100_000;

/// Everything a caller sets on a scanner before it runs.
#[derive(Clone)]
pub(crate) struct Settings {
    columns: Option<Vec<String>>,
    filter: Option<String>,
    limit: Option<i64>,
    offset: Option<i64>,
    batch_size: Option<usize>,
    with_row_id: bool,
    fragment_ids: Option<Vec<u32>>,
    nearest: Option<Nearest>,
    nprobes: Option<usize>,
    refine_factor: Option<u32>,
    ef: Option<usize>,
    metric: Option<DistanceType>,
    use_index: bool,
    prefilter: bool,
    index_segments: Option<Vec<Uuid>>,
    /// A full-text search (set in fts.rs).
    pub(crate) full_text: Option<FullTextSearchQuery>,
    /// Leave rows the full-text index does not cover out of the search.
    pub(crate) full_text_index_only: bool,
    /// The prepared query context `full_text` came from, kept alive with
    /// the scanner (its type belongs to fts.rs).
    pub(crate) full_text_context: Option<Arc<dyn Any + Send + Sync>>,
    /// lance_scanner_set_scalar_index_segment's segment.
    scalar_index_segment: Option<Uuid>,
}

pub struct LanceScanner {
    pub(crate) dataset: Arc<Dataset>,
    pub(crate) settings: Settings,
    /// The scanner's own iteration, started by the first `lance_scanner_next`.
    stream: Option<DatasetRecordBatchStream>,
    /// `LanceDataset::id` of the handle the scanner was made from.
    pub(crate) origin: u64,
    /// The iteration of `lance_scanner_poll_next` (scan_async.rs).
    pub(crate) poll: Option<PolledStream>,
}

pub struct LanceBatch {
    pub(crate) batch: RecordBatch,
}

impl Settings {
    /// A lance scanner over `dataset` with every setting applied.
    fn build(&self, dataset: &Arc<Dataset>) -> CResult<Scanner> {
        let mut scanner = dataset.scan();
        if let Some(columns) = &self.columns {
            scanner.project(columns)?;
        }
        if let Some(filter) = &self.filter {
            scanner.filter(filter)?;
        }
        if self.limit.is_some() || self.offset.is_some() {
            scanner.limit(self.limit, self.offset)?;
        }
        if let Some(batch_size) = self.batch_size {
            scanner.batch_size(batch_size);
        }
        if self.with_row_id {
            scanner.with_row_id();
        }
        if let Some(ids) = &self.fragment_ids {
            let fragments = ids
                .iter()
                .map(|id| {
                    dataset
                        .manifest
                        .fragments
                        .iter()
                        .find(|f| f.id == u64::from(*id))
                        .cloned()
                        .expect("fragment ids were validated when set")
                })
                .collect();
            scanner.with_fragments(fragments);
        }
        if let Some(nearest) = &self.nearest {
            scanner.nearest(&nearest.column, nearest.query.as_ref(), nearest.k)?;
            if let Some(n) = self.nprobes {
                scanner.nprobes(n);
            }
            if let Some(f) = self.refine_factor {
                scanner.refine(f);
            } else if nearest.multivector_count > 0 {
                // Upstream's default for multivector searches.
                scanner.refine(1);
            }
            if let Some(ef) = self.ef {
                scanner.ef(ef);
            }
            if let Some(metric) = self.metric {
                scanner.distance_metric(metric);
            }
            scanner.use_index(self.use_index);
        }
        scanner.prefilter(self.prefilter);
        if let Some(segments) = &self.index_segments {
            scanner.with_index_segments(segments.clone())?;
        }
        if let Some(query) = &self.full_text {
            scanner.full_text_search(query.clone())?;
            if self.full_text_index_only {
                scanner.fast_search();
            }
        }
        if self.scalar_index_segment.is_some() {
            // Lance 14.0.2 cannot pin a scan's scalar-index search to one
            // segment (Scanner::with_scalar_index_selection is private,
            // lance-14.0.2 src/dataset/scanner.rs:1742), so the scan takes
            // upstream's fallback: the fragments read with every scalar
            // index off and the whole filter checked on each row.
            scanner.use_scalar_index(false);
        }
        Ok(scanner)
    }

    /// Builds the scan and plans it, which checks columns, the filter and
    /// the k-NN query against the dataset without reading any data.
    fn validate(&self, dataset: &Arc<Dataset>) -> CResult<()> {
        if self.scalar_index_segment.is_some() && (self.nearest.is_some() || self.full_text.is_some()) {
            return Err(invalid(
                "a scalar index segment (lance_scanner_set_scalar_index_segment) cannot be combined with a \
                 k-NN or full-text search",
            ));
        }
        if self.nearest.is_some() && self.full_text.is_some() {
            return Err(invalid("a k-NN search (nearest) and a full-text search cannot be combined on one scanner"));
        }
        if let Some(nearest) = self.nearest.as_ref().filter(|n| n.multivector_count > 0) {
            let refine = self.refine_factor.unwrap_or(1) as usize;
            for (what, factor) in [("num_vectors", nearest.multivector_count), ("refine_factor", refine)] {
                if factor.saturating_mul(nearest.k) > MULTIVECTOR_MAX_CANDIDATES {
                    return Err(invalid(format!(
                        "{what} * k = {factor} * {} exceeds {MULTIVECTOR_MAX_CANDIDATES} for a multivector search",
                        nearest.k
                    )));
                }
            }
        }
        let scanner = self.build(dataset)?;
        block_on(scanner.create_plan())??;
        Ok(())
    }
}

impl LanceScanner {
    /// The scan a stream runs; checks that only a complete set of settings
    /// can satisfy are made here, not at each setter.
    pub(crate) fn build(&self) -> CResult<Scanner> {
        if self.settings.scalar_index_segment.is_some() && self.settings.fragment_ids.is_none() {
            return Err(invalid(
                "a scalar index segment scan needs lance_scanner_set_fragment_ids (the fragments to read)",
            ));
        }
        self.settings.build(&self.dataset)
    }

    /// Whether `lance_scanner_next` has started the scanner's own iteration.
    pub(crate) fn is_iterating(&self) -> bool {
        self.stream.is_some()
    }

    fn ensure_not_started(&self) -> CResult<()> {
        if self.stream.is_some() || self.poll.is_some() {
            Err(invalid("the scanner has started iterating; settings can no longer change"))
        } else {
            Ok(())
        }
    }

    /// Every setter goes through here: the change is kept only if the
    /// resulting settings still plan as a valid scan, so an error surfaces
    /// at the call that caused it and the scanner stays as it was.
    pub(crate) fn try_set(&mut self, change: impl FnOnce(&mut Settings)) -> CResult<()> {
        self.ensure_not_started()?;
        let mut changed = self.settings.clone();
        change(&mut changed);
        changed.validate(&self.dataset)?;
        self.settings = changed;
        Ok(())
    }
}

pub(crate) unsafe fn scanner_mut<'a>(ptr: *mut LanceScanner) -> CResult<&'a mut LanceScanner> {
    handle_mut(ptr, "scanner")
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_new(
    dataset: *const LanceDataset,
    columns: *const *const c_char,
    filter: *const c_char,
) -> *mut LanceScanner {
    guard(std::ptr::null_mut(), || {
        let handle = dataset_ref(dataset)?;
        let ds = handle.snapshot();
        let columns = null_terminated_strs(columns, "columns")?;
        let filter = optional_str(filter, "filter")?.map(str::to_string);
        let settings = Settings {
            columns,
            filter,
            limit: None,
            offset: None,
            batch_size: None,
            with_row_id: false,
            fragment_ids: None,
            nearest: None,
            nprobes: None,
            refine_factor: None,
            ef: None,
            metric: None,
            use_index: true,
            prefilter: false,
            index_segments: None,
            full_text: None,
            full_text_index_only: false,
            full_text_context: None,
            scalar_index_segment: None,
        };
        // Unknown columns and malformed filters are reported here, not at the first read.
        settings.validate(&ds)?;
        Ok(into_handle(LanceScanner { dataset: ds, settings, stream: None, origin: handle.id(), poll: None }))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_close(scanner: *mut LanceScanner) {
    free_handle(scanner);
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_limit(scanner: *mut LanceScanner, limit: i64) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let limit = match limit {
            -1 => None,
            l if l < 0 => return Err(invalid(format!("limit = {l} is negative (use -1 for no limit)"))),
            l => Some(l),
        };
        s.try_set(|s| s.limit = limit)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_offset(scanner: *mut LanceScanner, offset: i64) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        if offset < 0 {
            return Err(invalid(format!("offset = {offset} is negative")));
        }
        s.try_set(|s| s.offset = (offset > 0).then_some(offset))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_batch_size(scanner: *mut LanceScanner, batch_size: i64) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        if batch_size < 0 {
            return Err(invalid(format!("batch_size = {batch_size} is negative")));
        }
        let batch_size = usize::try_from(batch_size).map_err(|_| invalid(format!("batch_size = {batch_size} is too large")))?;
        s.try_set(|s| s.batch_size = (batch_size > 0).then_some(batch_size))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_with_row_id(scanner: *mut LanceScanner, enable: bool) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        s.try_set(|s| s.with_row_id = enable)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_fragment_ids(
    scanner: *mut LanceScanner,
    ids: *const u64,
    len: usize,
) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let ids = slice_arg(ids, len, "ids")?;
        let ids = if ids.is_empty() { None } else { Some(check_fragment_ids(&s.dataset, ids, "ids")?) };
        s.try_set(|s| s.fragment_ids = ids)
    })
}

/// Copies a caller's query vector into an Arrow array of its element type.
/// `data` is untyped, so it is read without assuming its alignment.
unsafe fn query_array(data: *const c_void, len: usize, element_type: i32) -> CResult<ArrayRef> {
    if len == 0 {
        return Err(invalid("query_len must be at least 1"));
    }
    const NAME: &str = "query_data";
    Ok(match element_type {
        DTYPE_FLOAT32 => Arc::new(Float32Array::from(copy_untyped::<f32>(data, len, NAME)?)),
        DTYPE_FLOAT16 => {
            let bits = copy_untyped::<u16>(data, len, NAME)?;
            Arc::new(Float16Array::new(ScalarBuffer::new(Buffer::from_vec(bits), 0, len), None))
        }
        DTYPE_FLOAT64 => Arc::new(Float64Array::from(copy_untyped::<f64>(data, len, NAME)?)),
        DTYPE_UINT8 => Arc::new(UInt8Array::from(copy_untyped::<u8>(data, len, NAME)?)),
        DTYPE_INT8 => Arc::new(Int8Array::from(copy_untyped::<i8>(data, len, NAME)?)),
        other => {
            return Err(invalid(format!(
                "element_type = {other} is not a LanceDataType (0 = FLOAT32 .. 4 = INT8)"
            )))
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_nearest(
    scanner: *mut LanceScanner,
    column: *const c_char,
    query_data: *const c_void,
    query_len: usize,
    element_type: i32,
    k: u32,
) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let column = required_nonempty_str(column, "column")?.to_string();
        let query = query_array(query_data, query_len, element_type)?;
        if k == 0 {
            return Err(invalid("k must be at least 1"));
        }
        s.try_set(|s| s.nearest = Some(Nearest { column, query, k: k as usize, multivector_count: 0 }))
    })
}

/// The element type of a multivector column, `List<FixedSizeList<float>>`.
fn multivector_element_type(dataset: &Dataset, column: &str) -> CResult<DataType> {
    let field = dataset
        .schema()
        .field(column)
        .ok_or_else(|| crate::floor::error::not_found(format!("column = '{column}' is not a column of the dataset")))?;
    let data_type = field.data_type();
    if let DataType::List(item) = &data_type {
        if let DataType::FixedSizeList(element, _) = item.data_type() {
            if matches!(element.data_type(), DataType::Float16 | DataType::Float32 | DataType::Float64) {
                return Ok(element.data_type().clone());
            }
        }
    }
    Err(invalid(format!(
        "column '{column}' is {data_type}, not a multivector column (List<FixedSizeList<float16/32/64>>)"
    )))
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_nearest_multivector(
    scanner: *mut LanceScanner,
    column: *const c_char,
    query_data: *const c_void,
    dimension: usize,
    num_vectors: usize,
    element_type: i32,
    k: u32,
) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let column = required_nonempty_str(column, "column")?.to_string();
        if dimension == 0 || num_vectors == 0 || k == 0 {
            return Err(invalid(format!(
                "dimension = {dimension}, num_vectors = {num_vectors} and k = {k} must all be at least 1"
            )));
        }
        if num_vectors > MULTIVECTOR_MAX_QUERIES {
            return Err(invalid(format!("num_vectors = {num_vectors} exceeds {MULTIVECTOR_MAX_QUERIES}")));
        }
        let len = dimension
            .checked_mul(num_vectors)
            .ok_or_else(|| invalid(format!("dimension * num_vectors = {dimension} * {num_vectors} overflows")))?;
        let values = query_array(query_data, len, element_type)?;
        // The core converts float32 queries to the column's float type;
        // any other query type must be the column's own.
        let column_type = multivector_element_type(&s.dataset, &column)?;
        if values.data_type() != &column_type && values.data_type() != &DataType::Float32 {
            return Err(invalid(format!(
                "element_type is {}, the column's vectors hold {column_type} (pass that type or FLOAT32)",
                values.data_type()
            )));
        }
        let dim = i32::try_from(dimension).map_err(|_| invalid(format!("dimension = {dimension} is too large")))?;
        let item = Arc::new(Field::new("item", values.data_type().clone(), false));
        let query: ArrayRef = Arc::new(FixedSizeListArray::try_new(item, dim, values, None)?);
        s.try_set(|s| {
            s.nearest = Some(Nearest { column, query, k: k as usize, multivector_count: num_vectors })
        })
    })
}

/// A tuning setter: 0 restores the default.
unsafe fn set_tuning(scanner: *mut LanceScanner, apply: impl FnOnce(&mut Settings)) -> i32 {
    status(|| scanner_mut(scanner)?.try_set(apply))
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_nprobes(scanner: *mut LanceScanner, n: u32) -> i32 {
    set_tuning(scanner, |s| s.nprobes = (n > 0).then_some(n as usize))
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_refine_factor(scanner: *mut LanceScanner, f: u32) -> i32 {
    set_tuning(scanner, |s| s.refine_factor = (f > 0).then_some(f))
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_ef(scanner: *mut LanceScanner, e: u32) -> i32 {
    set_tuning(scanner, |s| s.ef = (e > 0).then_some(e as usize))
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_metric(scanner: *mut LanceScanner, metric: i32) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let metric = metric_from_c(metric, "metric")?;
        s.try_set(|s| s.metric = Some(metric))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_use_index(scanner: *mut LanceScanner, enable: bool) -> i32 {
    set_tuning(scanner, |s| s.use_index = enable)
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_prefilter(scanner: *mut LanceScanner, enable: bool) -> i32 {
    set_tuning(scanner, |s| s.prefilter = enable)
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_index_segments(
    scanner: *mut LanceScanner,
    segment_uuids: *const u8,
    len: usize,
) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let uuids = uuids_from_packed(segment_uuids, len, "segment_uuids")?;
        let segments = (!uuids.is_empty()).then_some(uuids);
        s.try_set(|s| s.index_segments = segments)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_scalar_index_segment(
    scanner: *mut LanceScanner,
    segment_uuid: *const u8,
) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let segment = if segment_uuid.is_null() {
            None
        } else {
            let uuid = uuids_from_packed(segment_uuid, 1, "segment_uuid")?[0];
            if !user_segments(&s.dataset)?.iter().any(|index| index.uuid == uuid) {
                return Err(invalid(format!(
                    "segment_uuid = {uuid} is not an index segment of dataset version {}",
                    s.dataset.version().version
                )));
            }
            Some(uuid)
        };
        s.try_set(|s| s.scalar_index_segment = segment)
    })
}

fn stream_error(err: lance::Error) -> arrow_schema::ArrowError {
    arrow_schema::ArrowError::ExternalError(Box::new(err))
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_to_arrow_stream(
    scanner: *mut LanceScanner,
    out: *mut FFI_ArrowArrayStream,
) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        require_out(out, "out")?;
        let lance_scanner = s.build()?;
        let stream = block_on(lance_scanner.try_into_stream())??;
        export_scan_stream(stream, out);
        Ok(())
    })
}

/// Exports a scan's stream; each `get_next` blocks its caller's thread.
pub(crate) unsafe fn export_scan_stream(mut stream: DatasetRecordBatchStream, out: *mut FFI_ArrowArrayStream) {
    let schema = stream.schema();
    let iter = std::iter::from_fn(move || match block_on(stream.next()) {
        Ok(item) => item.map(|r| r.map_err(stream_error)),
        Err(e) => Some(Err(arrow_schema::ArrowError::ExternalError(e.message.into()))),
    });
    export_stream(Box::new(IterReader { schema, iter }), out);
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_next(scanner: *mut LanceScanner, out: *mut *mut LanceBatch) -> i32 {
    guard(-1, || {
        let s = scanner_mut(scanner)?;
        require_out(out, "out")?;
        write_out(out, std::ptr::null_mut());
        if s.poll.is_some() {
            return Err(invalid("the scanner is being read with lance_scanner_poll_next; it cannot also be read with lance_scanner_next"));
        }
        if s.stream.is_none() {
            let lance_scanner = s.build()?;
            s.stream = Some(block_on(lance_scanner.try_into_stream())??);
        }
        let stream = s.stream.as_mut().expect("stream was just started");
        match block_on(stream.next())? {
            None => Ok(1),
            Some(batch) => {
                let batch = batch.map_err(CError::from).context("reading the next batch")?;
                write_out(out, into_handle(LanceBatch { batch }));
                Ok(0)
            }
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_batch_to_arrow(
    batch: *const LanceBatch,
    out_array: *mut FFI_ArrowArray,
    out_schema: *mut FFI_ArrowSchema,
) -> i32 {
    status(|| {
        let batch = handle_ref(batch, "batch")?;
        require_out(out_array, "out_array")?;
        require_out(out_schema, "out_schema")?;
        export_batch(&batch.batch, out_array, out_schema)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_batch_num_rows(batch: *const LanceBatch) -> u64 {
    guard(0, || {
        Ok(handle_ref(batch, "batch")?.batch.num_rows() as u64)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_batch_free(batch: *mut LanceBatch) {
    free_handle(batch);
}

