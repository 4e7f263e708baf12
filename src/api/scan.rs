//! lance.h section "Scan and search": a scanner collects settings, each
//! checked as it is made, then runs once as a batch iterator or any number
//! of times as Arrow streams.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{ArrayRef, FixedSizeListArray, Float16Array, Float32Array, Float64Array, Int8Array, UInt8Array};
use arrow_buffer::{Buffer, ScalarBuffer};
use arrow_schema::{DataType, Field};
use lance::Dataset;
use lance_index::vector::ApproxMode;

use crate::boundary::arrow::export_batch;
use crate::boundary::error::{guard, invalid, status, CError, CResult, Context};
use crate::boundary::ffi::{
    copy_untyped, free_handle, handle_ref, into_handle, null_terminated_strs, optional_str, require_out,
    required_nonempty_str, slice_arg, uuids_from_packed, write_out,
};
use crate::boundary::params::{
    blob_handling_from_c, metric_from_c, DTYPE_FLOAT16, DTYPE_FLOAT32, DTYPE_FLOAT64, DTYPE_INT8, DTYPE_UINT8,
};
use crate::index::catalog::user_segments;
use crate::scan::scanner::*;
use crate::store::handle::{check_fragment_ids, dataset_ref, LanceDataset};

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

/// Every setter: the scanner is checked first, then `check` checks the
/// argument (it may read the scanner's dataset and settings), then `apply`
/// writes it through `try_set`, which refuses a change once scanning has
/// begun and validates the settings as a whole.
unsafe fn set_checked<T>(
    scanner: *mut LanceScanner,
    check: impl FnOnce(&LanceScanner) -> CResult<T>,
    apply: impl FnOnce(&mut Settings, T),
) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let value = check(s)?;
        s.try_set(|settings| apply(settings, value))
    })
}

/// A setter whose every argument value is valid (for a tuning number, 0
/// restores the default).
unsafe fn set_value(scanner: *mut LanceScanner, apply: impl FnOnce(&mut Settings)) -> i32 {
    set_checked(scanner, |_| Ok(()), |settings, ()| apply(settings))
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
pub unsafe extern "C" fn lance_scanner_set_limit(scanner: *mut LanceScanner, limit: i64) -> i32 {
    set_checked(
        scanner,
        |_| match limit {
            -1 => Ok(None),
            l if l < 0 => Err(invalid(format!("limit = {l} is negative (use -1 for no limit)"))),
            l => Ok(Some(l)),
        },
        |s, limit| s.limit = limit,
    )
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_offset(scanner: *mut LanceScanner, offset: i64) -> i32 {
    set_checked(
        scanner,
        |_| if offset < 0 { Err(invalid(format!("offset = {offset} is negative"))) } else { Ok(offset) },
        |s, offset| s.offset = (offset > 0).then_some(offset),
    )
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_batch_size(scanner: *mut LanceScanner, batch_size: i64) -> i32 {
    set_checked(
        scanner,
        |_| {
            if batch_size < 0 {
                return Err(invalid(format!("batch_size = {batch_size} is negative")));
            }
            usize::try_from(batch_size).map_err(|_| invalid(format!("batch_size = {batch_size} is too large")))
        },
        |s, batch_size| s.batch_size = (batch_size > 0).then_some(batch_size),
    )
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_with_row_id(scanner: *mut LanceScanner, enable: bool) -> i32 {
    set_value(scanner, |s| s.with_row_id = enable)
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_fragment_ids(
    scanner: *mut LanceScanner,
    ids: *const u64,
    len: usize,
) -> i32 {
    set_checked(
        scanner,
        |s| {
            let ids = slice_arg(ids, len, "ids")?;
            Ok(if ids.is_empty() { None } else { Some(check_fragment_ids(&s.dataset, ids, "ids")?) })
        },
        |s, ids| s.fragment_ids = ids,
    )
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
            return Err(invalid(format!("element_type = {other} is not a LanceDataType (0 = FLOAT32 .. 4 = INT8)")))
        }
    })
}

/// A vector column's element type, checked against a query's: the core
/// takes the column's own type, or float32 for a float column (converted),
/// and anything else would fail inside it.
fn check_query_type(dataset: &Dataset, column: &str, query_type: &DataType) -> CResult<()> {
    let field = dataset.schema().field(column).ok_or_else(|| {
        crate::boundary::error::not_found(format!("column = '{column}' is not a column of the dataset"))
    })?;
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

/// The setter of the three k-NN searches: the column is read first, then
/// `search` checks the query against it and makes the search.
unsafe fn set_nearest(
    scanner: *mut LanceScanner,
    column: *const c_char,
    search: impl FnOnce(&LanceScanner, String) -> CResult<Nearest>,
) -> i32 {
    set_checked(
        scanner,
        |s| search(s, required_nonempty_str(column, "column")?.to_string()),
        |s, nearest| s.nearest = Some(nearest),
    )
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
    set_nearest(scanner, column, |s, column| {
        let query = query_array(query_data, query_len, element_type)?;
        if k == 0 {
            return Err(invalid("k must be at least 1"));
        }
        // A multivector column takes its own query form, checked by the core.
        if s.dataset.schema().field(&column).is_some_and(|f| matches!(f.data_type(), DataType::FixedSizeList(..))) {
            check_query_type(&s.dataset, &column, query.data_type())?;
        }
        Ok(Nearest { column, query, k: k as usize, multivector_count: 0, batch_count: 0 })
    })
}

/// The element type of a multivector column, `List<FixedSizeList<float>>`.
fn multivector_element_type(dataset: &Dataset, column: &str) -> CResult<DataType> {
    let field = dataset.schema().field(column).ok_or_else(|| {
        crate::boundary::error::not_found(format!("column = '{column}' is not a column of the dataset"))
    })?;
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
    set_nearest(scanner, column, |s, column| {
        let query =
            QueryRows { data: query_data, dimension, count: num_vectors, count_name: "num_vectors", element_type, k };
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
        Ok(Nearest { column, query, k: k as usize, multivector_count: num_vectors, batch_count: 0 })
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
    set_nearest(scanner, column, |s, column| {
        let bytes = dimension.saturating_mul(num_queries).saturating_mul(element_size(element_type));
        if bytes > BATCH_MAX_QUERY_BYTES {
            return Err(invalid(format!(
                "the queries take {bytes} bytes; a batch search copies at most {BATCH_MAX_QUERY_BYTES}"
            )));
        }
        let query =
            QueryRows { data: query_data, dimension, count: num_queries, count_name: "num_queries", element_type, k };
        // A FixedSizeList of queries against a vector column: the core's
        // batch search, one independent k-NN per row, tagged `query_index`.
        // The check also refuses a multivector column, against which the
        // core would take the list as one multivector query.
        let query = query.into_list(|values| check_query_type(&s.dataset, &column, values.data_type()))?;
        Ok(Nearest { column, query, k: k as usize, multivector_count: 0, batch_count: num_queries })
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
    set_checked(
        scanner,
        |_| {
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
            Ok((lower.is_some() || upper.is_some()).then_some((lower, upper)))
        },
        |s, range| s.distance_range = range,
    )
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_nprobes(scanner: *mut LanceScanner, n: u32) -> i32 {
    set_checked(
        scanner,
        |_| if n == 0 { Err(invalid("nprobes must be at least 1")) } else { Ok(n as usize) },
        |s, n| {
            s.minimum_nprobes = Some(n);
            s.maximum_nprobes = Some(n);
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_refine_factor(scanner: *mut LanceScanner, f: u32) -> i32 {
    set_value(scanner, |s| s.refine_factor = (f > 0).then_some(f))
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_ef(scanner: *mut LanceScanner, e: u32) -> i32 {
    set_value(scanner, |s| s.ef = (e > 0).then_some(e as usize))
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_metric(scanner: *mut LanceScanner, metric: i32) -> i32 {
    set_checked(scanner, |_| metric_from_c(metric, "metric"), |s, metric| s.metric = Some(metric))
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_use_index(scanner: *mut LanceScanner, enable: bool) -> i32 {
    set_value(scanner, |s| s.use_index = enable)
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_prefilter(scanner: *mut LanceScanner, enable: bool) -> i32 {
    set_value(scanner, |s| s.prefilter = enable)
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_index_segments(
    scanner: *mut LanceScanner,
    segment_uuids: *const u8,
    len: usize,
) -> i32 {
    set_checked(
        scanner,
        |_| uuids_from_packed(segment_uuids, len, "segment_uuids"),
        |s, uuids| s.index_segments = (!uuids.is_empty()).then_some(uuids),
    )
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_batch_size_bytes(scanner: *mut LanceScanner, batch_size_bytes: u64) -> i32 {
    // The core refuses it next to strict batch sizes when the scan is planned.
    set_checked(
        scanner,
        |_| positive(batch_size_bytes, "batch_size_bytes"),
        |s, bytes| s.batch_size_bytes = Some(bytes),
    )
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_io_buffer_size(
    scanner: *mut LanceScanner,
    io_buffer_size_bytes: u64,
) -> i32 {
    set_checked(
        scanner,
        |_| {
            let bytes = positive(io_buffer_size_bytes, "io_buffer_size_bytes")?;
            if bytes > i64::MAX as u64 {
                return Err(invalid(format!("io_buffer_size_bytes = {bytes} is above INT64_MAX")));
            }
            Ok(bytes)
        },
        |s, bytes| s.io_buffer_size = Some(bytes),
    )
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_batch_readahead(scanner: *mut LanceScanner, batch_readahead: usize) -> i32 {
    set_checked(scanner, |_| positive(batch_readahead, "batch_readahead"), |s, n| s.batch_readahead = Some(n))
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_fragment_readahead(
    scanner: *mut LanceScanner,
    fragment_readahead: usize,
) -> i32 {
    set_checked(scanner, |_| positive(fragment_readahead, "fragment_readahead"), |s, n| s.fragment_readahead = Some(n))
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_target_parallelism(
    scanner: *mut LanceScanner,
    target_parallelism: usize,
) -> i32 {
    set_checked(scanner, |_| positive(target_parallelism, "target_parallelism"), |s, n| s.target_parallelism = Some(n))
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_scan_in_order(scanner: *mut LanceScanner, scan_in_order: bool) -> i32 {
    set_value(scanner, |s| s.scan_in_order = scan_in_order)
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_use_scalar_index(scanner: *mut LanceScanner, use_scalar_index: bool) -> i32 {
    set_value(scanner, |s| s.use_scalar_index = use_scalar_index)
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_strict_batch_size(
    scanner: *mut LanceScanner,
    strict_batch_size: bool,
) -> i32 {
    set_value(scanner, |s| s.strict_batch_size = strict_batch_size)
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_use_stats(scanner: *mut LanceScanner, use_stats: bool) -> i32 {
    set_value(scanner, |s| s.use_stats = use_stats)
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_with_row_address(scanner: *mut LanceScanner, enable: bool) -> i32 {
    set_value(scanner, |s| s.with_row_address = enable)
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_include_deleted_rows(
    scanner: *mut LanceScanner,
    include_deleted_rows: bool,
) -> i32 {
    set_value(scanner, |s| s.include_deleted_rows = include_deleted_rows)
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_substrait_filter(
    scanner: *mut LanceScanner,
    bytes: *const u8,
    len: usize,
) -> i32 {
    set_checked(
        scanner,
        |_| {
            if bytes.is_null() {
                return Err(invalid("bytes must not be NULL"));
            }
            if len == 0 {
                return Err(invalid("len = 0; a Substrait filter needs at least one byte"));
            }
            Ok(slice_arg(bytes, len, "bytes")?.to_vec())
        },
        |s, filter| s.substrait_filter = Some(filter),
    )
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_additional_sql_filter(scanner: *mut LanceScanner, filter: *const c_char) -> i32 {
    set_checked(
        scanner,
        |_| Ok(required_nonempty_str(filter, "filter")?.to_string()),
        |s, filter| s.additional_filters.push(filter),
    )
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_statistics_callback(
    scanner: *mut LanceScanner,
    callback: Option<ScanStatisticsFn>,
    callback_ctx: *mut c_void,
) -> i32 {
    set_checked(
        scanner,
        |_| {
            let callback = callback.ok_or_else(|| invalid("callback must not be NULL"))?;
            Ok(StatisticsCallback { callback, ctx: callback_ctx })
        },
        |s, statistics| s.statistics = Some(statistics),
    )
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_minimum_nprobes(scanner: *mut LanceScanner, minimum_nprobes: u32) -> i32 {
    set_checked(
        scanner,
        |s| {
            let n = positive(minimum_nprobes, "minimum_nprobes")? as usize;
            if let Some(max) = s.settings.maximum_nprobes.filter(|max| n > *max) {
                return Err(invalid(format!("minimum_nprobes = {n} is above maximum_nprobes = {max}")));
            }
            Ok(n)
        },
        |s, n| s.minimum_nprobes = Some(n),
    )
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_maximum_nprobes(scanner: *mut LanceScanner, maximum_nprobes: u32) -> i32 {
    set_checked(
        scanner,
        |s| {
            let n = positive(maximum_nprobes, "maximum_nprobes")? as usize;
            if let Some(min) = s.settings.minimum_nprobes.filter(|min| n < *min) {
                return Err(invalid(format!("maximum_nprobes = {n} is below minimum_nprobes = {min}")));
            }
            Ok(n)
        },
        |s, n| s.maximum_nprobes = Some(n),
    )
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_approx_mode(scanner: *mut LanceScanner, approx_mode: i32) -> i32 {
    set_checked(
        scanner,
        |_| match approx_mode {
            0 => Ok(ApproxMode::Fast),
            1 => Ok(ApproxMode::Normal),
            2 => Ok(ApproxMode::Accurate),
            other => Err(invalid(format!(
                "approx_mode = {other} is not a LanceApproxMode (0 = FAST, 1 = NORMAL, 2 = ACCURATE)"
            ))),
        },
        |s, mode| s.approx_mode = Some(mode),
    )
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_query_parallelism(
    scanner: *mut LanceScanner,
    query_parallelism: i32,
) -> i32 {
    set_checked(
        scanner,
        |_| {
            if query_parallelism < -1 {
                return Err(invalid(format!(
                    "query_parallelism = {query_parallelism}; it must be -1 (CPU pool size), 0 (automatic) or positive"
                )));
            }
            Ok(query_parallelism)
        },
        |s, n| s.query_parallelism = Some(n),
    )
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_blob_handling(scanner: *mut LanceScanner, handling: i32) -> i32 {
    set_checked(scanner, |_| blob_handling_from_c(handling, "handling"), |s, handling| s.blob_handling = handling)
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_scalar_index_segment(
    scanner: *mut LanceScanner,
    segment_uuid: *const u8,
) -> i32 {
    set_checked(
        scanner,
        |s| {
            if segment_uuid.is_null() {
                return Ok(None);
            }
            let uuid = uuids_from_packed(segment_uuid, 1, "segment_uuid")?[0];
            if !user_segments(&s.dataset)?.iter().any(|index| index.uuid == uuid) {
                return Err(invalid(format!(
                    "segment_uuid = {uuid} is not an index segment of dataset version {}",
                    s.dataset.version().version
                )));
            }
            Ok(Some(uuid))
        },
        |s, segment| s.scalar_index_segment = segment,
    )
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
    guard(0, || Ok(handle_ref(batch, "batch")?.batch.num_rows() as u64))
}

#[no_mangle]
pub unsafe extern "C" fn lance_batch_free(batch: *mut LanceBatch) {
    free_handle(batch);
}
