//! The scanner behind lance.h's "Scan and search" section (src/api/scan.rs)
//! and the sections that drive a scanner too ("Async scan", "Full-text
//! search"): its settings, checked as a whole before they are kept, the scan
//! they prepare, and the streams it runs.

use std::any::Any;
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arrow::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{ArrayRef, RecordBatch};
use futures::StreamExt;
use lance::dataset::scanner::{DatasetRecordBatchStream, ExecutionSummaryCounts, Scanner};
use lance::datatypes::BlobHandling;
use lance::Dataset;
use lance_index::scalar::minhash_lsh::MinHashQuery;
use lance_index::scalar::FullTextSearchQuery;
use lance_index::vector::ApproxMode;
use lance_io::stream::RecordBatchStream;
use lance_linalg::distance::DistanceType;
use uuid::Uuid;

use crate::boundary::arrow::{export_stream, IterReader};
use crate::boundary::error::{invalid, CError, CResult, CallbackScope, Context};
use crate::boundary::ffi::handle_mut;
use crate::process::poll::PolledStream;
use crate::process::runtime::block_on;

/// A k-NN query set on a scanner.
#[derive(Clone)]
pub(crate) struct Nearest {
    pub(crate) column: String,
    pub(crate) query: ArrayRef,
    pub(crate) k: usize,
    /// Query vectors of a multivector search (`query` is then a
    /// FixedSizeList of them); 0 for a single-vector search.
    pub(crate) multivector_count: usize,
    /// Queries of a batch search (`query` is then a FixedSizeList of them,
    /// which the core runs as independent queries); 0 otherwise.
    pub(crate) batch_count: usize,
}

/// Mirrors `LanceScanStatisticsCallback` in lance.h.
pub type ScanStatisticsFn = unsafe extern "C" fn(*mut c_void, *const LanceScanStatistics);

/// Mirrors `LanceScanMetricKind` in lance.h.
pub(crate) const METRIC_COUNT: i32 = 0;
pub(crate) const METRIC_TIME_NANOSECONDS: i32 = 1;

/// Mirrors `LanceScanMetric` in lance.h; `kind` is the C enum, an int.
#[repr(C)]
pub struct LanceScanMetric {
    pub(crate) name: *const c_char,
    pub(crate) name_len: usize,
    pub(crate) kind: i32,
    pub(crate) value: u64,
}
crate::c_layout!(LanceScanMetric, 32; name @ 0, name_len @ 8, kind @ 16, value @ 24);

/// Mirrors `LanceScanStatistics` in lance.h.
#[repr(C)]
pub struct LanceScanStatistics {
    pub(crate) iops: u64,
    pub(crate) requests: u64,
    pub(crate) bytes_read: u64,
    pub(crate) indices_loaded: u64,
    pub(crate) index_partitions_loaded: u64,
    pub(crate) index_comparisons: u64,
    pub(crate) metrics: *const LanceScanMetric,
    pub(crate) metrics_len: usize,
}
crate::c_layout!(LanceScanStatistics, 64;
    iops @ 0,
    requests @ 8,
    bytes_read @ 16,
    indices_loaded @ 24,
    index_partitions_loaded @ 32,
    index_comparisons @ 40,
    metrics @ 48,
    metrics_len @ 56,
);

/// A caller's statistics callback and its context.  The caller keeps both
/// valid until the scanner and every stream made from it are gone, and
/// lets them be called from whichever thread reads a stream to its end
/// (lance.h), so carrying them across threads is sound.
#[derive(Clone, Copy)]
pub(crate) struct StatisticsCallback {
    pub(crate) callback: ScanStatisticsFn,
    pub(crate) ctx: *mut c_void,
}
unsafe impl Send for StatisticsCallback {}
unsafe impl Sync for StatisticsCallback {}

impl StatisticsCallback {
    /// Hands the core's counts to the caller; every pointer lent to the
    /// callback lives until it returns.
    pub(crate) fn report(&self, counts: &ExecutionSummaryCounts) {
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
pub(crate) const MULTIVECTOR_MAX_QUERIES: usize = 128;
pub(crate) const MULTIVECTOR_MAX_CANDIDATES: usize = 100_000;
pub(crate) const BATCH_MAX_QUERY_BYTES: usize = 64 << 20;

/// Everything a caller sets on a scanner before it runs.
#[derive(Clone)]
pub(crate) struct Settings {
    pub(crate) columns: Option<Vec<String>>,
    pub(crate) filter: Option<String>,
    pub(crate) substrait_filter: Option<Vec<u8>>,
    pub(crate) additional_filters: Vec<String>,
    pub(crate) limit: Option<i64>,
    pub(crate) offset: Option<i64>,
    pub(crate) batch_size: Option<usize>,
    pub(crate) batch_size_bytes: Option<u64>,
    pub(crate) io_buffer_size: Option<u64>,
    pub(crate) batch_readahead: Option<usize>,
    pub(crate) fragment_readahead: Option<usize>,
    pub(crate) target_parallelism: Option<usize>,
    pub(crate) scan_in_order: bool,
    pub(crate) use_scalar_index: bool,
    pub(crate) strict_batch_size: bool,
    pub(crate) use_stats: bool,
    pub(crate) with_row_id: bool,
    pub(crate) with_row_address: bool,
    pub(crate) include_deleted_rows: bool,
    pub(crate) fragment_ids: Option<Vec<u32>>,
    pub(crate) nearest: Option<Nearest>,
    /// lance_scanner_set_distance_range's [lower, upper).
    pub(crate) distance_range: Option<(Option<f32>, Option<f32>)>,
    pub(crate) minimum_nprobes: Option<usize>,
    pub(crate) maximum_nprobes: Option<usize>,
    pub(crate) refine_factor: Option<u32>,
    pub(crate) ef: Option<usize>,
    pub(crate) metric: Option<DistanceType>,
    pub(crate) use_index: bool,
    pub(crate) prefilter: bool,
    pub(crate) approx_mode: Option<ApproxMode>,
    pub(crate) query_parallelism: Option<i32>,
    pub(crate) index_segments: Option<Vec<Uuid>>,
    pub(crate) statistics: Option<StatisticsCallback>,
    pub(crate) blob_handling: BlobHandling,
    /// A full-text search (set in fts.rs).
    pub(crate) full_text: Option<FullTextSearchQuery>,
    /// Leave rows the full-text index does not cover out of the search.
    pub(crate) full_text_index_only: bool,
    /// The prepared query context `full_text` came from, kept alive with
    /// the scanner (its type belongs to fts.rs).
    pub(crate) full_text_context: Option<Arc<dyn Any + Send + Sync>>,
    /// lance_scanner_set_scalar_index_segment's segment.
    pub(crate) scalar_index_segment: Option<Uuid>,
    /// A near-duplicate search under a MINHASHLSH index (set in fts.rs).
    pub(crate) minhash: Option<MinHashQuery>,
}

pub struct LanceScanner {
    pub(crate) dataset: Arc<Dataset>,
    pub(crate) settings: Settings,
    /// The scanner's own iteration, started by the first `lance_scanner_next`.
    pub(crate) stream: Option<ScanStream>,
    /// Set by the first stream made (`lance_scanner_next`,
    /// `lance_scanner_to_arrow_stream`, the async scans): upstream's
    /// "scanning has begun".
    pub(crate) scan_started: bool,
    /// `LanceDataset::id` of the handle the scanner was made from.
    pub(crate) origin: u64,
    /// The iteration of `lance_scanner_poll_next` (scan_async.rs).
    pub(crate) poll: Option<PolledStream>,
}

/// A running scan.  Once it has yielded an error its statistics callback
/// stays silent, even if the stream is read on to its end.
pub(crate) struct ScanStream {
    pub(crate) stream: DatasetRecordBatchStream,
    pub(crate) failed: Arc<AtomicBool>,
}

/// A scan with every setting applied, not started yet; the async scans
/// start it on the runtime.
pub(crate) struct PreparedScan {
    pub(crate) scanner: Scanner,
    pub(crate) failed: Arc<AtomicBool>,
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

    pub(crate) fn next_batch(&mut self) -> CResult<Option<Result<RecordBatch, lance::Error>>> {
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
    pub(crate) fn new(columns: Option<Vec<String>>, filter: Option<String>) -> Self {
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
            minhash: None,
            scalar_index_segment: None,
        }
    }

    /// A lance scanner over `dataset` with every setting applied.
    pub(crate) fn build(&self, dataset: &Arc<Dataset>) -> CResult<Scanner> {
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
        if let Some(query) = &self.minhash {
            scanner.minhash_search(query.clone())?;
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
    pub(crate) fn apply_filters(&self, scanner: &mut Scanner) -> CResult<()> {
        if let Some(bytes) = &self.substrait_filter {
            // Whatever the core finds wrong with the bytes (not a Substrait
            // message, no expression, unknown columns) is the caller's input.
            // The core decodes the bytes when the filter is first resolved:
            // resolve it here, so that a bad filter is refused by its setter.
            let unusable =
                |e: lance::Error| invalid(format!("bytes: not a usable Substrait filter: {}", CError::from(e).message));
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
    pub(crate) fn prepare(&self, dataset: &Arc<Dataset>) -> CResult<PreparedScan> {
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
    pub(crate) fn validate(&self, dataset: &Arc<Dataset>) -> CResult<()> {
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
        if let Some(query) = &self.minhash {
            if self.nearest.is_some() || self.full_text.is_some() || self.scalar_index_segment.is_some() {
                return Err(invalid(
                    "a near-duplicate search (lance_scanner_minhash_search) cannot be combined with a k-NN \
                     search, a full-text search or a scalar index segment on one scanner",
                ));
            }
            if self.limit.is_none() {
                return Err(invalid(format!(
                    "a near-duplicate search over '{}' needs a limit (lance_scanner_set_limit): it returns that \
                     many most similar rows",
                    query.column
                )));
            }
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

    pub(crate) fn open_stream(&mut self) -> CResult<ScanStream> {
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

pub(crate) fn stream_error(err: lance::Error) -> arrow_schema::ArrowError {
    arrow_schema::ArrowError::ExternalError(Box::new(err))
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
