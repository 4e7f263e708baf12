//! lance.h section "Full-text search": BM25 search over INVERTED indices,
//! set on a scanner directly or through a query context prepared once, and
//! near-duplicate search over MINHASHLSH indices.

use std::any::Any;
use std::collections::HashSet;
use std::ffi::c_char;
use std::sync::Arc;

use lance::Dataset;
use lance_index::scalar::inverted::query::{FtsQuery, MatchQuery, Operator, PhraseQuery};
use lance_index::scalar::minhash_lsh::MinHashQuery;
use lance_index::scalar::FullTextSearchQuery;
use uuid::Uuid;

use crate::boundary::error::{guard_handle, invalid, not_found, not_supported, status, CError, CResult, Code};
use crate::boundary::ffi::{
    free_handle, handle_ref, null_terminated_strs, required_nonempty_str, required_str, uuids_from_packed,
};
use crate::index::catalog::user_segments;
use crate::index::codec::segment_type_name;
use crate::process::runtime::block_on;
use crate::scan::scanner::{scanner_mut, LanceScanner};
use crate::store::handle::{dataset_ref, LanceDataset};

/// `LanceFtsCoverageMode` in lance.h.
const COVERAGE_STRICT: i32 = 0;
const COVERAGE_INDEX_ONLY: i32 = 1;
/// `LanceFtsMatchOperator` in lance.h.
const MATCH_OR: i32 = 0;
const MATCH_AND: i32 = 1;

/// A prepared query: the query, the snapshot and FTS segments it was
/// checked against, and the handle it came from.
struct FtsContext {
    origin: u64,
    version: u64,
    query: FullTextSearchQuery,
    index_only: bool,
    segments: Vec<Uuid>,
}

pub struct LanceFtsQueryContext {
    inner: Arc<FtsContext>,
}

fn coverage_index_only(coverage_mode: i32) -> CResult<bool> {
    match coverage_mode {
        COVERAGE_STRICT => Ok(false),
        COVERAGE_INDEX_ONLY => Ok(true),
        other => {
            Err(invalid(format!("coverage_mode = {other} is not a LanceFtsCoverageMode (0 = STRICT, 1 = INDEX_ONLY)")))
        }
    }
}

/// The INVERTED segments on `column`; with `strict`, every fragment of the
/// snapshot must be covered by one of them.
fn fts_segments(ds: &Dataset, column: &str, strict: bool) -> CResult<Vec<Uuid>> {
    let field = ds
        .schema()
        .field(column)
        .ok_or_else(|| not_found(format!("column = '{column}' is not a column of the dataset")))?;
    let segments: Vec<_> = user_segments(ds)?
        .into_iter()
        .filter(|s| s.fields == [field.id] && segment_type_name(s) == "Inverted")
        .collect();
    if segments.is_empty() {
        return Err(not_found(format!(
            "column '{column}' has no full-text (INVERTED) index in dataset version {}",
            ds.version().version
        )));
    }
    if strict {
        // A segment without a fragment bitmap (old format) counts as covering all.
        if segments.iter().all(|s| s.fragment_bitmap.is_some()) {
            let covered: HashSet<u32> =
                segments.iter().flat_map(|s| s.fragment_bitmap.as_ref().expect("checked").iter()).collect();
            if let Some(f) = ds.manifest.fragments.iter().find(|f| !covered.contains(&(f.id as u32))) {
                return Err(CError::new(
                    Code::Index,
                    format!(
                        "fragment {} is not covered by the full-text index on '{column}' (coverage_mode STRICT); \
                         index it, or prepare with LANCE_FTS_COVERAGE_INDEX_ONLY to leave its rows out",
                        f.id
                    ),
                ));
            }
        }
    }
    Ok(segments.iter().map(|s| s.uuid).collect())
}

/// Prepares a context: the core plans the query once here, so a bad
/// column, a missing index or an index without positions for a phrase
/// query is reported by this call.
unsafe fn prepare(
    dataset: *const LanceDataset,
    column: *const c_char,
    query: *const c_char,
    coverage_mode: i32,
    make: impl FnOnce(String, String) -> CResult<FtsQuery>,
) -> *mut LanceFtsQueryContext {
    guard_handle(|| {
        let handle = dataset_ref(dataset)?;
        let column = required_nonempty_str(column, "column")?.to_string();
        let text = required_str(query, "query")?.to_string();
        let index_only = coverage_index_only(coverage_mode)?;
        let query = FullTextSearchQuery::new_query(make(column.clone(), text)?);
        let ds = handle.snapshot();
        let segments = fts_segments(&ds, &column, !index_only)?;
        let mut scanner = ds.scan();
        scanner.full_text_search(query.clone())?;
        if index_only {
            scanner.fast_search();
        }
        block_on(scanner.create_plan())??;
        let inner = FtsContext { origin: handle.id(), version: ds.version().version, query, index_only, segments };
        Ok(LanceFtsQueryContext { inner: Arc::new(inner) })
    })
}

fn match_query(column: String, text: String, match_operator: i32, max_fuzzy_distance: u32) -> CResult<FtsQuery> {
    let operator = match match_operator {
        MATCH_OR => Operator::Or,
        MATCH_AND => Operator::And,
        other => {
            return Err(invalid(format!("match_operator = {other} is not a LanceFtsMatchOperator (0 = OR, 1 = AND)")))
        }
    };
    if max_fuzzy_distance != 0 {
        return Err(invalid(format!(
            "max_fuzzy_distance = {max_fuzzy_distance}: prepared queries match exactly, it must be 0"
        )));
    }
    Ok(MatchQuery::new(text).with_column(Some(column)).with_operator(operator).with_fuzziness(Some(0)).into())
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_prepare_fts_query(
    dataset: *const LanceDataset,
    column: *const c_char,
    query: *const c_char,
    max_fuzzy_distance: u32,
    coverage_mode: i32,
) -> *mut LanceFtsQueryContext {
    prepare(dataset, column, query, coverage_mode, |c, t| match_query(c, t, MATCH_OR, max_fuzzy_distance))
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_prepare_fts_match_query(
    dataset: *const LanceDataset,
    column: *const c_char,
    query: *const c_char,
    match_operator: i32,
    max_fuzzy_distance: u32,
    coverage_mode: i32,
) -> *mut LanceFtsQueryContext {
    prepare(dataset, column, query, coverage_mode, |c, t| match_query(c, t, match_operator, max_fuzzy_distance))
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_prepare_fts_phrase_query(
    dataset: *const LanceDataset,
    column: *const c_char,
    query: *const c_char,
    slop: i32,
    coverage_mode: i32,
) -> *mut LanceFtsQueryContext {
    prepare(dataset, column, query, coverage_mode, |c, t| {
        let slop = u32::try_from(slop).map_err(|_| invalid(format!("slop = {slop} is negative")))?;
        Ok(PhraseQuery::new(t).with_column(Some(c)).with_slop(slop).into())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_fts_query_context_close(context: *mut LanceFtsQueryContext) {
    free_handle(context);
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_full_text_search(
    scanner: *mut LanceScanner,
    query: *const c_char,
    columns: *const *const c_char,
    max_fuzzy_distance: u32,
) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let text = required_str(query, "query")?.to_string();
        let columns = null_terminated_strs(columns, "columns")?;
        if columns.as_ref().is_some_and(Vec::is_empty) {
            return Err(invalid("columns is an empty list; pass NULL to search every FTS-indexed column"));
        }
        if s.settings.full_text_context.is_some() {
            return Err(invalid(
                "the scanner already has a full-text query context; a scanner runs one full-text search",
            ));
        }
        let mut search =
            FullTextSearchQuery::new_query(MatchQuery::new(text).with_fuzziness(Some(max_fuzzy_distance)).into());
        if let Some(columns) = columns {
            search = search.with_columns(&columns)?;
        }
        s.try_set(|s| {
            s.full_text = Some(search);
            s.full_text_index_only = false;
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_minhash_search(
    scanner: *mut LanceScanner,
    column: *const c_char,
    text: *const c_char,
) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let column = required_nonempty_str(column, "column")?.to_string();
        let text = required_str(text, "text")?.to_string();
        if let Some(set) = &s.settings.minhash {
            return Err(invalid(format!(
                "the scanner already has a near-duplicate search over '{}'; a scanner runs one search",
                set.column
            )));
        }
        s.try_set(|s| s.minhash = Some(MinHashQuery::new(text, column)))
    })
}

fn context_of(s: &LanceScanner) -> Option<&FtsContext> {
    s.settings.full_text_context.as_ref().and_then(|c| c.downcast_ref::<FtsContext>())
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_fts_query_context(
    scanner: *mut LanceScanner,
    context: *const LanceFtsQueryContext,
) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let context = &handle_ref(context, "context")?.inner;
        if context.origin != s.origin {
            return Err(invalid(
                "context was prepared from another LanceDataset handle; prepare it from the handle the scanner was made from",
            ));
        }
        let version = s.dataset.version().version;
        if context.version != version {
            return Err(invalid(format!(
                "context was prepared at dataset version {}, the scanner reads version {version}; \
                 prepare the context again",
                context.version
            )));
        }
        if s.settings.full_text.is_some() && s.settings.full_text_context.is_none() {
            return Err(invalid("the scanner already has a full_text_search; a scanner runs one full-text search"));
        }
        let keep: Arc<dyn Any + Send + Sync> = context.clone();
        s.try_set(|s| {
            s.full_text = Some(context.query.clone());
            s.full_text_index_only = context.index_only;
            s.full_text_context = Some(keep);
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_scanner_set_fts_index_segments(
    scanner: *mut LanceScanner,
    segment_uuids: *const u8,
    len: usize,
) -> i32 {
    status(|| {
        let s = scanner_mut(scanner)?;
        let uuids = uuids_from_packed(segment_uuids, len, "segment_uuids")?;
        if uuids.is_empty() {
            // Clearing: the whole context is searched, as without a call.
            return s.try_set(|_| {});
        }
        let context = context_of(s).ok_or_else(|| {
            invalid("the scanner has no full-text query context (lance_scanner_set_fts_query_context)")
        })?;
        let mut seen = HashSet::new();
        for (i, uuid) in uuids.iter().enumerate() {
            if !seen.insert(*uuid) {
                return Err(invalid(format!("segment_uuids[{i}] = {uuid} is repeated")));
            }
            if !context.segments.contains(uuid) {
                return Err(invalid(format!(
                    "segment_uuids[{i}] = {uuid} is not a full-text segment of the scanner's query context"
                )));
            }
        }
        // The core searches a logical FTS index whole: segment selection is
        // refused for anything but vector search (lance-14.0.2
        // src/dataset/scanner.rs:3442).  Selecting every segment changes
        // nothing and is accepted.
        if uuids.len() != context.segments.len() {
            return Err(not_supported(
                "searching a subset of a full-text index's segments is not supported by this build's Lance core",
            ));
        }
        s.try_set(|_| {})
    })
}
