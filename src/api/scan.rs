//! lance.h section "Scan and search": a scanner collects settings, each
//! checked as it is made, then runs once as a batch iterator or any number
//! of times as Arrow streams.

use std::any::Any;
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{
    Array, ArrayRef, FixedSizeListArray, Float16Array, Float32Array, Float64Array, Int8Array, RecordBatch, UInt8Array,
};
use arrow_buffer::{Buffer, ScalarBuffer};
use arrow_schema::{DataType, Field};
use futures::StreamExt;
use lance_io::stream::RecordBatchStream;
use lance::dataset::scanner::{DatasetRecordBatchStream, ExecutionSummaryCounts, Scanner};
use lance::datatypes::BlobHandling;
use lance::Dataset;
use lance_index::scalar::FullTextSearchQuery;
use lance_index::vector::ApproxMode;
use lance_linalg::distance::DistanceType;
use uuid::Uuid;

use crate::floor::arrow::{export_batch, export_stream, IterReader};
use crate::floor::catalog::user_segments;
use crate::floor::error::{guard, invalid, status, CError, CResult, CallbackScope, Context};
use crate::floor::ffi::{
    copy_untyped, free_handle, handle_mut, handle_ref, into_handle, null_terminated_strs, optional_str, require_out,
    required_nonempty_str, slice_arg, uuids_from_packed, write_out,
};
use crate::floor::handle::{check_fragment_ids, dataset_ref, LanceDataset};
use crate::floor::poll::PolledStream;
use crate::floor::params::{
    blob_handling_from_c, metric_from_c, DTYPE_FLOAT16, DTYPE_FLOAT32, DTYPE_FLOAT64, DTYPE_INT8, DTYPE_UINT8,
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
    /// Queries of a batch search (`query` is then a FixedSizeList of them,
    /// which the core runs as independent queries); 0 otherwise.
    batch_count: usize,
}

/// Mirrors `LanceScanStatisticsCallback` in lance.h.
pub type ScanStatisticsFn = unsafe extern "C" fn(*mut c_void, *const LanceScanStatistics);

/// Mirrors `LanceScanMetricKind` in lance.h.
const METRIC_COUNT: i32 = 0;
const METRIC_TIME_NANOSECONDS: i32 = 1;

/// Mirrors `LanceScanMetric` in lance.h; `kind` is the C enum, an int.
#[repr(C)]
pub struct LanceScanMetric {
    name: *const c_char,
    name_len: usize,
    kind: i32,
    value: u64,
}

/// Mirrors `LanceScanStatistics` in lance.h.
#[repr(C)]
pub struct LanceScanStatistics {
    iops: u64,
    requests: u64,
    bytes_read: u64,
    indices_loaded: u64,
    index_partitions_loaded: u64,
    index_comparisons: u64,
    metrics: *const LanceScanMetric,
    metrics_len: usize,
}

/// A caller's statistics callback and its context.  The caller keeps both
/// valid until the scanner and every stream made from it are gone, and
/// lets them be called from whichever thread reads a stream to its end
/// (lance.h), so carrying them across threads is sound.
#[derive(Clone, Copy)]
struct StatisticsCallback {
    callback: ScanStatisticsFn,
    ctx: *mut c_void,
}
unsafe impl Send for StatisticsCallback {}
unsafe impl Sync for StatisticsCallback {}

impl StatisticsCallback {
    /// Hands the core's counts to the caller; every pointer lent to the
    /// callback lives until it returns.
    fn report(&self, counts: &ExecutionSummaryCounts) {
        let metric = |name: &String, kind: i32, value: usize| LanceScanMetric {
            name: name.as_ptr().cast(),
            name_len: name.len(),
            kind,
            value: value as u64,
        };
        let metrics: Vec<LanceScanMetric> = counts
            .all_counts
            .iter()
            .map(|(name, value)| metric(name, METRIC_COUNT, *value))
            .chain(counts.all_times.iter().map(|(name, value)| metric(name, METRIC_TIME_NANOSECONDS, *value)))
            .collect();
        let statistics = LanceScanStatistics {
            iops: counts.iops as u64,
            requests: counts.requests as u64,
            bytes_read: counts.bytes_read as u64,
            indices_loaded: counts.indices_loaded as u64,
            index_partitions_loaded: counts.parts_loaded as u64,
            index_comparisons: counts.index_comparisons as u64,
            metrics: if metrics.is_empty() { std::ptr::null() } else { metrics.as_ptr() },
            metrics_len: metrics.len(),
        };
        // The callback may not call back into the library (lance.h); the
        // scope turns such a call into an error instead of a re-entry.
        let _scope = CallbackScope::enter();
        unsafe { (self.callback)(self.ctx, &statistics) };
    }
}

/// Upstream's bounds on multivector and batch searches.
const MULTIVECTOR_MAX_QUERIES: usize = 128;
const MULTIVECTOR_MAX_CANDIDATES: usize = 100_000;
const BATCH_MAX_QUERY_BYTES: usize = 64 << 20;

/// Everything a caller sets on a scanner before it runs.
#[derive(Clone)]
pub(crate) struct Settings {
    columns: Option<Vec<String>>,
    filter: Option<String>,
    substrait_filter: Option<Vec<u8>>,
    additional_filters: Vec<String>,
    limit: Option<i64>,
    offset: Option<i64>,
    batch_size: Option<usize>,
    batch_size_bytes: Option<u64>,
    io_buffer_size: Option<u64>,
    batch_readahead: Option<usize>,
    fragment_readahead: Option<usize>,
    target_parallelism: Option<usize>,
    scan_in_order: bool,
    use_scalar_index: bool,
    strict_batch_size: bool,
    use_stats: bool,
    with_row_id: bool,
    with_row_address: bool,
    include_deleted_rows: bool,
    fragment_ids: Option<Vec<u32>>,
    nearest: Option<Nearest>,
    /// lance_scanner_set_distance_range's [lower, upper).
    distance_range: Option<(Option<f32>, Option<f32>)>,
    minimum_nprobes: Option<usize>,
    maximum_nprobes: Option<usize>,
    refine_factor: Option<u32>,
    ef: Option<usize>,
    metric: Option<DistanceType>,
    use_index: bool,
    prefilter: bool,
    approx_mode: Option<ApproxMode>,
    query_parallelism: Option<i32>,
    index_segments: Option<Vec<Uuid>>,
    statistics: Option<StatisticsCallback>,
    blob_handling: BlobHandling,
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
    stream: Option<ScanStream>,
    /// Set by the first stream made (`lance_scanner_next`,
    /// `lance_scanner_to_arrow_stream`, the async scans): upstream's
    /// "scanning has begun".
    scan_started: bool,
    /// `LanceDataset::id` of the handle the scanner was made from.
    pub(crate) origin: u64,
    /// The iteration of `lance_scanner_poll_next` (scan_async.rs).
    pub(crate) poll: Option<PolledStream>,
}

/// A running scan.  Once it has yielded an error its statistics callback
/// stays silent, even if the stream is read on to its end.
pub(crate) struct ScanStream {
    stream: DatasetRecordBatchStream,
    failed: Arc<AtomicBool>,
}

/// A scan with every setting applied, not started yet; the async scans
/// start it on the runtime.
pub(crate) struct PreparedScan {
    scanner: Scanner,
    failed: Arc<AtomicBool>,
}

impl PreparedScan {
    pub(crate) async fn open(self) -> lance::Result<ScanStream> {
        let stream = self.scanner.try_into_stream().await?;
        Ok(ScanStream { stream, failed: self.failed })
    }
}

impl ScanStream {
    /// The batches as a stream; an error silences the statistics callback.
    pub(crate) fn into_batches(self) -> impl futures::Stream<Item = CResult<RecordBatch>> + Send {
        let failed = self.failed;
        self.stream.map(move |batch| {
            if batch.is_err() {
                failed.store(true, Ordering::SeqCst);
            }
            batch.map_err(CError::from)
        })
    }

    fn next_batch(&mut self) -> CResult<Option<Result<RecordBatch, lance::Error>>> {
        let item = block_on(self.stream.next())?;
        if matches!(item, Some(Err(_))) {
            self.failed.store(true, Ordering::SeqCst);
        }
        Ok(item)
    }
}

pub struct LanceBatch {
    pub(crate) batch: RecordBatch,
}

impl Settings {
    fn new(columns: Option<Vec<String>>, filter: Option<String>) -> Self {
        Settings {
            columns,
            filter,
            substrait_filter: None,
            additional_filters: Vec::new(),
            limit: None,
            offset: None,
            batch_size: None,
            batch_size_bytes: None,
            io_buffer_size: None,
            batch_readahead: None,
            fragment_readahead: None,
            target_parallelism: None,
            scan_in_order: true,
            use_scalar_index: true,
            strict_batch_size: false,
            use_stats: true,
            with_row_id: false,
            with_row_address: false,
            include_deleted_rows: false,
            fragment_ids: None,
            nearest: None,
            distance_range: None,
            minimum_nprobes: None,
            maximum_nprobes: None,
            refine_factor: None,
            ef: None,
            metric: None,
            use_index: true,
            prefilter: false,
            approx_mode: None,
            query_parallelism: None,
            index_segments: None,
            statistics: None,
            blob_handling: BlobHandling::default(),
            full_text: None,
            full_text_index_only: false,
            full_text_context: None,
            scalar_index_segment: None,
        }
    }

    /// A lance scanner over `dataset` with every setting applied.
    fn build(&self, dataset: &Arc<Dataset>) -> CResult<Scanner> {
        let mut scanner = dataset.scan();
        if let Some(columns) = &self.columns {
            scanner.project(columns)?;
        }
        if self.limit.is_some() || self.offset.is_some() {
            scanner.limit(self.limit, self.offset)?;
        }
        if let Some(batch_size) = self.batch_size {
            scanner.batch_size(batch_size);
        }
        if let Some(bytes) = self.batch_size_bytes {
            scanner.batch_size_bytes(bytes);
        }
        if let Some(bytes) = self.io_buffer_size {
            scanner.io_buffer_size(bytes);
        }
        if let Some(n) = self.batch_readahead {
            scanner.batch_readahead(n);
        }
        if let Some(n) = self.fragment_readahead {
            scanner.fragment_readahead(n);
        }
        if let Some(n) = self.target_parallelism {
            scanner.target_parallelism(n);
        }
        scanner
            .scan_in_order(self.scan_in_order)
            .use_scalar_index(self.use_scalar_index)
            .strict_batch_size(self.strict_batch_size)
            .use_stats(self.use_stats);
        if self.with_row_id {
            scanner.with_row_id();
        }
        if self.with_row_address {
            scanner.with_row_address();
        }
        if self.include_deleted_rows {
            scanner.include_deleted_rows();
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
            if let Some(n) = self.minimum_nprobes {
                scanner.minimum_nprobes(n);
            }
            if let Some(n) = self.maximum_nprobes {
                scanner.maximum_nprobes(n);
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
            if let Some(mode) = self.approx_mode {
                scanner.approx_mode(mode);
            }
            if let Some(n) = self.query_parallelism {
                scanner.query_parallelism(n);
            }
            scanner.use_index(self.use_index);
            if let Some((lower, upper)) = self.distance_range {
                scanner.distance_range(lower, upper);
            }
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
        scanner.blob_handling(self.blob_handling.clone());
        // Last: the core resolves a filter against the columns the rest of
        // the settings make available (_distance, _rowid, ...).
        self.apply_filters(&mut scanner)?;
        Ok(scanner)
    }

    /// The main filter (Substrait over SQL), ANDed with the additional SQL
    /// filters.  The core holds one filter, so each is parsed by the core on
    /// its own and the parsed expressions are joined.
    fn apply_filters(&self, scanner: &mut Scanner) -> CResult<()> {
        if let Some(bytes) = &self.substrait_filter {
            // Whatever the core finds wrong with the bytes (not a Substrait
            // message, no expression, unknown columns) is the caller's input.
            // The core decodes the bytes when the filter is first resolved:
            // resolve it here, so that a bad filter is refused by its setter.
            let unusable = |e: lance::Error| invalid(format!("bytes: not a usable Substrait filter: {}", CError::from(e).message));
            scanner.filter_substrait(bytes).map_err(unusable)?;
            scanner.get_expr_filter().map_err(unusable)?;
        } else if let Some(filter) = &self.filter {
            scanner.filter(filter)?;
        }
        if self.additional_filters.is_empty() {
            return Ok(());
        }
        let mut combined = scanner.get_expr_filter()?;
        for sql in &self.additional_filters {
            scanner.filter(sql)?;
            let expr = scanner
                .get_expr_filter()
                .context(format!("additional filter \"{sql}\""))?
                .expect("a filter was just set");
            combined = Some(match combined {
                Some(acc) => acc.and(expr),
                None => expr,
            });
        }
        scanner.filter_expr(combined.expect("at least one additional filter"));
        Ok(())
    }

    /// Builds the scan and starts it.  The statistics callback, if any, is
    /// attached to this stream alone, gated by the stream's own failure flag.
    fn prepare(&self, dataset: &Arc<Dataset>) -> CResult<PreparedScan> {
        let mut scanner = self.build(dataset)?;
        let failed = Arc::new(AtomicBool::new(false));
        if let Some(statistics) = self.statistics {
            let failed = Arc::clone(&failed);
            // The core calls this once, when the stream first reports its end.
            scanner.scan_stats_callback(Arc::new(move |counts| {
                if !failed.load(Ordering::SeqCst) {
                    statistics.report(counts);
                }
            }));
        }
        Ok(PreparedScan { scanner, failed })
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
        if self.scalar_index_segment.is_some() && self.include_deleted_rows {
            return Err(invalid(
                "a scalar index segment (lance_scanner_set_scalar_index_segment) cannot be combined with \
                 include_deleted_rows",
            ));
        }
        if self.nearest.is_some() && self.full_text.is_some() {
            return Err(invalid("a k-NN search (nearest) and a full-text search cannot be combined on one scanner"));
        }
        if let Some(nearest) = &self.nearest {
            if nearest.batch_count > 0 && (self.limit.is_some() || self.offset.is_some()) {
                return Err(invalid(
                    "a batch k-NN search (lance_scanner_nearest_batch) cannot have a limit or offset: \
                     k applies to each query",
                ));
            }
            if (nearest.batch_count > 0 || nearest.multivector_count > 0) && self.distance_range.is_some() {
                return Err(invalid(
                    "a distance range applies to a single-vector k-NN search only, not to a batch or \
                     multivector search",
                ));
            }
            if nearest.batch_count.saturating_mul(nearest.k) > MULTIVECTOR_MAX_CANDIDATES {
                return Err(invalid(format!(
                    "num_queries * k = {} * {} exceeds {MULTIVECTOR_MAX_CANDIDATES}",
                    nearest.batch_count, nearest.k
                )));
            }
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
    pub(crate) fn prepare(&self) -> CResult<PreparedScan> {
        if self.settings.scalar_index_segment.is_some() && self.settings.fragment_ids.is_none() {
            return Err(invalid(
                "a scalar index segment scan needs lance_scanner_set_fragment_ids (the fragments to read)",
            ));
        }
        self.settings.prepare(&self.dataset)
    }

    /// `prepare`, for a stream of this scanner: scanning has begun.
    pub(crate) fn start(&mut self) -> CResult<PreparedScan> {
        let prepared = self.prepare()?;
        self.scan_started = true;
        Ok(prepared)
    }

    fn open_stream(&mut self) -> CResult<ScanStream> {
        Ok(block_on(self.start()?.open())??)
    }

    /// Whether `lance_scanner_next` has started the scanner's own iteration.
    pub(crate) fn is_iterating(&self) -> bool {
        self.stream.is_some()
    }

    /// Every setter goes through here.  Settings are fixed once any stream
    /// of the scanner was made (`lance_scanner_next`, `_to_arrow_stream`,
    /// the async scans).  The change is kept only if the resulting settings
    /// still plan as a valid scan, so an error surfaces at the call that
    /// caused it and the scanner stays as it was.
    pub(crate) fn try_set(&mut self, change: impl FnOnce(&mut Settings)) -> CResult<()> {
        if self.scan_started || self.stream.is_some() || self.poll.is_some() {
            return Err(invalid(
                "the scanner has started scanning (a stream was made from it); its settings can no longer change",
            ));
        }
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
        let settings = Settings::new(columns, filter);
        // Unknown columns and malformed filters are reported here, not at the first read.
        settings.validate(&ds)?;
        Ok(into_handle(LanceScanner {
            dataset: ds,
            settings,
            stream: None,
            scan_started: false,
            origin: handle.id(),
            poll: None,
        }))
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

/// A vector column's element type, checked against a query's: the core
/// takes the column's own type, or float32 for a float column (converted),
/// and anything else would fail inside it.
fn check_query_type(dataset: &Dataset, column: &str, query_type: &DataType) -> CResult<()> {
    let field = dataset
        .schema()
        .field(column)
        .ok_or_else(|| crate::floor::error::not_found(format!("column = '{column}' is not a column of the dataset")))?;
    let DataType::FixedSizeList(element, _) = field.data_type() else {
        return Err(invalid(format!(
            "column '{column}' is {}, not a vector column (FixedSizeList)",
            field.data_type()
        )));
    };
    let column_type = element.data_type();
    if query_type == column_type || (query_type == &DataType::Float32 && column_type.is_floating()) {
        return Ok(());
    }
    Err(invalid(format!(
        "element_type is {query_type}, the column '{column}' holds {column_type} (pass that type{})",
        if column_type.is_floating() { " or FLOAT32" } else { "" }
    )))
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
        // A multivector column takes its own query form, checked by the core.
        if s.dataset.schema().field(&column).is_some_and(|f| matches!(f.data_type(), DataType::FixedSizeList(..))) {
            check_query_type(&s.dataset, &column, query.data_type())?;
        }
        s.try_set(|s| {
            s.nearest = Some(Nearest { column, query, k: k as usize, multivector_count: 0, batch_count: 0 })
        })
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
        let query = QueryRows { data: query_data, dimension, count: num_vectors, count_name: "num_vectors", element_type, k };
        let query = query.into_list(|values| {
            // The core converts float32 queries to the column's float type;
            // any other query type must be the column's own.
            let column_type = multivector_element_type(&s.dataset, &column)?;
            if values.data_type() != &column_type && values.data_type() != &DataType::Float32 {
                return Err(invalid(format!(
                    "element_type is {}, the column's vectors hold {column_type} (pass that type or FLOAT32)",
                    values.data_type()
                )));
            }
            Ok(())
        })?;
        s.try_set(|s| {
            s.nearest = Some(Nearest { column, query, k: k as usize, multivector_count: num_vectors, batch_count: 0 })
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_nearest_batch(
    scanner: *mut LanceScanner,
    column: *const c_char,
    query_data: *const c_void,
    dimension: usize,
    num_queries: usize,
    element_type: i32,
    k: u32,
) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let column = required_nonempty_str(column, "column")?.to_string();
        let bytes = dimension.saturating_mul(num_queries).saturating_mul(element_size(element_type));
        if bytes > BATCH_MAX_QUERY_BYTES {
            return Err(invalid(format!(
                "the queries take {bytes} bytes; a batch search copies at most {BATCH_MAX_QUERY_BYTES}"
            )));
        }
        let query = QueryRows { data: query_data, dimension, count: num_queries, count_name: "num_queries", element_type, k };
        // A FixedSizeList of queries against a vector column: the core's
        // batch search, one independent k-NN per row, tagged `query_index`.
        // The check also refuses a multivector column, against which the
        // core would take the list as one multivector query.
        let query = query.into_list(|values| check_query_type(&s.dataset, &column, values.data_type()))?;
        s.try_set(|s| {
            s.nearest = Some(Nearest { column, query, k: k as usize, multivector_count: 0, batch_count: num_queries })
        })
    })
}

/// `count` query vectors of `dimension` elements, one after another, as
/// the multivector and batch searches take them.
struct QueryRows {
    data: *const c_void,
    dimension: usize,
    count: usize,
    count_name: &'static str,
    element_type: i32,
    k: u32,
}

impl QueryRows {
    /// Checks the sizes, copies the elements, lets `check` look at them,
    /// and makes them a FixedSizeList with one row per vector.
    unsafe fn into_list(self, check: impl FnOnce(&ArrayRef) -> CResult<()>) -> CResult<ArrayRef> {
        let QueryRows { data, dimension, count, count_name, element_type, k } = self;
        if dimension == 0 || count == 0 || k == 0 {
            return Err(invalid(format!(
                "dimension = {dimension}, {count_name} = {count} and k = {k} must all be at least 1"
            )));
        }
        if count > MULTIVECTOR_MAX_QUERIES {
            return Err(invalid(format!("{count_name} = {count} exceeds {MULTIVECTOR_MAX_QUERIES}")));
        }
        let len = dimension
            .checked_mul(count)
            .ok_or_else(|| invalid(format!("dimension * {count_name} = {dimension} * {count} overflows")))?;
        let values = query_array(data, len, element_type)?;
        check(&values)?;
        let dim = i32::try_from(dimension).map_err(|_| invalid(format!("dimension = {dimension} is too large")))?;
        let item = Arc::new(Field::new("item", values.data_type().clone(), false));
        Ok(Arc::new(FixedSizeListArray::try_new(item, dim, values, None)?))
    }
}

/// Bytes of one query element of a LanceDataType (an unknown type is
/// reported by `query_array`).
fn element_size(element_type: i32) -> usize {
    match element_type {
        DTYPE_FLOAT64 => 8,
        DTYPE_FLOAT32 => 4,
        DTYPE_FLOAT16 => 2,
        _ => 1,
    }
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_distance_range(
    scanner: *mut LanceScanner,
    lower: *const f32,
    upper: *const f32,
) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let lower = lower.as_ref().copied();
        let upper = upper.as_ref().copied();
        for (name, bound) in [("lower", lower), ("upper", upper)] {
            if let Some(value) = bound.filter(|v| !v.is_finite()) {
                return Err(invalid(format!("{name} = {value}; a distance bound must be finite")));
            }
        }
        if let (Some(l), Some(u)) = (lower, upper) {
            if l > u {
                return Err(invalid(format!("lower = {l} is above upper = {u}")));
            }
        }
        let range = (lower.is_some() || upper.is_some()).then_some((lower, upper));
        s.try_set(|s| s.distance_range = range)
    })
}

/// A tuning setter: 0 restores the default.
unsafe fn set_tuning(scanner: *mut LanceScanner, apply: impl FnOnce(&mut Settings)) -> i32 {
    status(|| scanner_mut(scanner)?.try_set(apply))
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_nprobes(scanner: *mut LanceScanner, n: u32) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        if n == 0 {
            return Err(invalid("nprobes must be at least 1"));
        }
        s.try_set(|s| {
            s.minimum_nprobes = Some(n as usize);
            s.maximum_nprobes = Some(n as usize);
        })
    })
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

/// A setter of upstream's tuning group: refused once scanning has begun.
unsafe fn set_before_scan(scanner: *mut LanceScanner, apply: impl FnOnce(&mut Settings)) -> i32 {
    status(|| scanner_mut(scanner)?.try_set(apply))
}

/// A count that must be at least 1.
fn positive<T: PartialEq + Default>(value: T, name: &str) -> CResult<T> {
    if value == T::default() {
        Err(invalid(format!("{name} = 0; it must be at least 1")))
    } else {
        Ok(value)
    }
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_batch_size_bytes(scanner: *mut LanceScanner, batch_size_bytes: u64) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let bytes = positive(batch_size_bytes, "batch_size_bytes")?;
        // The core refuses it next to strict batch sizes when the scan is planned.
        s.try_set(|s| s.batch_size_bytes = Some(bytes))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_io_buffer_size(scanner: *mut LanceScanner, io_buffer_size_bytes: u64) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let bytes = positive(io_buffer_size_bytes, "io_buffer_size_bytes")?;
        if bytes > i64::MAX as u64 {
            return Err(invalid(format!("io_buffer_size_bytes = {bytes} is above INT64_MAX")));
        }
        s.try_set(|s| s.io_buffer_size = Some(bytes))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_batch_readahead(scanner: *mut LanceScanner, batch_readahead: usize) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let n = positive(batch_readahead, "batch_readahead")?;
        s.try_set(|s| s.batch_readahead = Some(n))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_fragment_readahead(scanner: *mut LanceScanner, fragment_readahead: usize) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let n = positive(fragment_readahead, "fragment_readahead")?;
        s.try_set(|s| s.fragment_readahead = Some(n))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_target_parallelism(scanner: *mut LanceScanner, target_parallelism: usize) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let n = positive(target_parallelism, "target_parallelism")?;
        s.try_set(|s| s.target_parallelism = Some(n))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_scan_in_order(scanner: *mut LanceScanner, scan_in_order: bool) -> i32 {
    set_before_scan(scanner, |s| s.scan_in_order = scan_in_order)
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_use_scalar_index(scanner: *mut LanceScanner, use_scalar_index: bool) -> i32 {
    set_before_scan(scanner, |s| s.use_scalar_index = use_scalar_index)
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_strict_batch_size(scanner: *mut LanceScanner, strict_batch_size: bool) -> i32 {
    set_before_scan(scanner, |s| s.strict_batch_size = strict_batch_size)
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_use_stats(scanner: *mut LanceScanner, use_stats: bool) -> i32 {
    set_before_scan(scanner, |s| s.use_stats = use_stats)
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_with_row_address(scanner: *mut LanceScanner, enable: bool) -> i32 {
    set_before_scan(scanner, |s| s.with_row_address = enable)
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_include_deleted_rows(
    scanner: *mut LanceScanner,
    include_deleted_rows: bool,
) -> i32 {
    set_before_scan(scanner, |s| s.include_deleted_rows = include_deleted_rows)
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_substrait_filter(scanner: *mut LanceScanner, bytes: *const u8, len: usize) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        if bytes.is_null() {
            return Err(invalid("bytes must not be NULL"));
        }
        if len == 0 {
            return Err(invalid("len = 0; a Substrait filter needs at least one byte"));
        }
        let filter = slice_arg(bytes, len, "bytes")?.to_vec();
        s.try_set(|s| s.substrait_filter = Some(filter))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_additional_sql_filter(scanner: *mut LanceScanner, filter: *const c_char) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let filter = required_nonempty_str(filter, "filter")?.to_string();
        s.try_set(|s| s.additional_filters.push(filter))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_statistics_callback(
    scanner: *mut LanceScanner,
    callback: Option<ScanStatisticsFn>,
    callback_ctx: *mut c_void,
) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let callback = callback.ok_or_else(|| invalid("callback must not be NULL"))?;
        let statistics = StatisticsCallback { callback, ctx: callback_ctx };
        s.try_set(|s| s.statistics = Some(statistics))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_minimum_nprobes(scanner: *mut LanceScanner, minimum_nprobes: u32) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let n = positive(minimum_nprobes, "minimum_nprobes")? as usize;
        if let Some(max) = s.settings.maximum_nprobes.filter(|max| n > *max) {
            return Err(invalid(format!("minimum_nprobes = {n} is above maximum_nprobes = {max}")));
        }
        s.try_set(|s| s.minimum_nprobes = Some(n))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_maximum_nprobes(scanner: *mut LanceScanner, maximum_nprobes: u32) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let n = positive(maximum_nprobes, "maximum_nprobes")? as usize;
        if let Some(min) = s.settings.minimum_nprobes.filter(|min| n < *min) {
            return Err(invalid(format!("maximum_nprobes = {n} is below minimum_nprobes = {min}")));
        }
        s.try_set(|s| s.maximum_nprobes = Some(n))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_approx_mode(scanner: *mut LanceScanner, approx_mode: i32) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let mode = match approx_mode {
            0 => ApproxMode::Fast,
            1 => ApproxMode::Normal,
            2 => ApproxMode::Accurate,
            other => {
                return Err(invalid(format!(
                    "approx_mode = {other} is not a LanceApproxMode (0 = FAST, 1 = NORMAL, 2 = ACCURATE)"
                )))
            }
        };
        s.try_set(|s| s.approx_mode = Some(mode))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_query_parallelism(scanner: *mut LanceScanner, query_parallelism: i32) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        if query_parallelism < -1 {
            return Err(invalid(format!(
                "query_parallelism = {query_parallelism}; it must be -1 (CPU pool size), 0 (automatic) or positive"
            )));
        }
        s.try_set(|s| s.query_parallelism = Some(query_parallelism))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_blob_handling(scanner: *mut LanceScanner, handling: i32) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let handling = blob_handling_from_c(handling, "handling")?;
        s.try_set(|s| s.blob_handling = handling)
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
        export_scan_stream(s.open_stream()?, out);
        Ok(())
    })
}

/// Exports a scan's stream; each `get_next` blocks its caller's thread.
pub(crate) unsafe fn export_scan_stream(mut stream: ScanStream, out: *mut FFI_ArrowArrayStream) {
    let schema = stream.stream.schema();
    let iter = std::iter::from_fn(move || match stream.next_batch() {
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
            return Err(invalid(
                "the scanner is being read with lance_scanner_poll_next; it cannot also be read with lance_scanner_next",
            ));
        }
        if s.stream.is_none() {
            s.stream = Some(s.open_stream()?);
        }
        let stream = s.stream.as_mut().expect("stream was just started");
        match stream.next_batch()? {
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

