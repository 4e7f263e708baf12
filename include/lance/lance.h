/*
 * lance.h: the C API of lance-c, a C library for the Lance columnar format.
 *
 * Upstream lance-c: this header declares upstream lance-c's interface (the
 * 0.1.9 line, which holds lance-c 0.1.6's) with upstream's exact names,
 * types, enum values and struct layouts; tests/conformance checks them at
 * compile time.  Each concept has one name, upstream's where upstream has
 * one; what this library adds is named for what it does (CHANGELOG.md maps
 * the names earlier versions used; docs/compatibility.md lists the few
 * behaviours that differ from upstream, each also documented at its
 * function).  Error codes 0-9 are upstream's; this library's own start at
 * 1000.  The conventions below (read them once) hold for every function.
 */

/*
 * Conventions: errors, and nothing crashes the host.
 *
 * Errors.  A fallible function returns int32_t 0 on success and -1 on error;
 * a function returning a handle or string returns NULL on error; a uint64_t
 * getter returns 0 on error.  After an error, lance_last_error_code() gives
 * the LanceErrorCode and lance_last_error_message() the text, which names the
 * argument and the value at fault.  The error state is per thread.  Every
 * successful call clears it; so does reading the message (the message is
 * taken: read the code first).  A getter that returns 0
 * may mean "zero" or "error": check lance_last_error_code() == LANCE_OK.
 *
 * Nothing crashes the host.  A NULL where a pointer is required, a string
 * that is not UTF-8, or an enum value out of range gives
 * LANCE_ERR_INVALID_ARGUMENT; a panic inside the library is caught and
 * gives LANCE_ERR_PANIC (the handles involved stay usable: unlike upstream,
 * a scanner that saw a panic is not poisoned).  SIGPIPE, which a write to a
 * connection the store has reset raises, never reaches the host: the
 * library blocks it on its own threads, and on the calling thread for the
 * length of a call (taking one the call raised), and never changes the
 * process's signal dispositions; the write fails as LANCE_ERR_IO.  No
 * argument is silently clamped or replaced: where a 0 or NULL means
 * "default", the default is written next to it here.
 */

/*
 * Conventions: the CPU level, and ownership.
 *
 * CPU.  The library's Rust code is compiled for one CPU level (CMake's
 * LANCE_C_TARGET_CPU; on x86-64 the default is x86-64-v3, that is AVX2,
 * FMA and BMI2, when the building CPU has it; docs/building.md, "CPU
 * level").  On a CPU without a feature the build assumes, loading the
 * library prints "lance-c: this lance-c library was compiled for CPU
 * features this CPU lacks (...)" on stderr, naming them, and aborts the
 * process, before any of its code that could use them has run (otherwise
 * it would die of an illegal instruction at some later point, possibly
 * inside a dependency's load-time constructor); build the library with
 * -DLANCE_C_TARGET_CPU=x86-64 for such hosts.
 *
 * Ownership.  Each pointer parameter is one of:
 *   borrowed  - read (or written, for out parameters) during the call only;
 *   consumed  - the library takes it over and releases it before the call
 *               returns, on success and on failure alike;
 *   produced  - the caller owns the result and frees it with the function
 *               named, each type with its own NULL-safe free function.
 */

/*
 * Conventions: threads, and the rules of each handle type.
 *
 * Threads.  Every call blocks until its work is done; the work runs on one
 * shared multi-threaded runtime that the library starts on first use (an
 * index build given a cancel token, on the local file system or a segment
 * build on s3://, runs on a runtime of its own, shut down when it returns:
 * "Build progress and cancellation"; "Process budget" bounds them).  Any
 * number of threads may call the library at once.
 * Per handle type:
 *   LanceDataset                 shared between threads freely.  Reads take
 *                                the handle's current snapshot and never
 *                                wait for a build or commit running through
 *                                the same handle; calls that commit through
 *                                one handle run one at a time.  Close it
 *                                only when no other call uses it.
 *   LanceScanner, LanceBatch     one thread at a time (any thread); a
 *                                scanner's Arrow streams likewise.
 *   LanceVectorTraining,         one thread at a time (any thread).
 *   LanceVectorTrainingWorker
 *   LanceIndexSegmentBuilder     one thread at a time, settings included:
 *                                nothing may touch a builder while its
 *                                execute runs (a cancel goes through the
 *                                token, never the builder).
 *   LanceVectorModel,            immutable once made: any number of threads
 *   LanceIndexSegmentMetadata,   may read one at once; free it when no call
 *   LanceFragmentPlan,           uses it.
 *   LanceVersions,
 *   LanceDataStatistics,
 *   LanceFtsQueryContext
 *   LanceSession                 shared between threads freely, and by
 *                                every dataset opened with it.
 *   LanceBlobFile                one thread at a time (any thread).
 *   LanceIndexBuildCancelToken   lance_index_build_cancel() and
 *                                lance_index_build_cancel_requested() from
 *                                any thread at any time; free it from one.
 */

/*
 * Conventions: callbacks, snapshots and Arrow.
 *
 * Callbacks.  Never call lance-c from inside a progress, scan-statistics
 * or log callback that lance-c is running, except the two cancel-token
 * calls and lance_set_log_callback(): anything else fails with
 * LANCE_ERR_INVALID_ARGUMENT rather than deadlock.  The async scan's
 * callbacks run on a thread of their own that holds nothing: a
 * lance_scanner_scan_async() callback may call the library (and read its
 * stream), a lance_scanner_poll_next() waker may call it for anything but
 * its own scanner.  An Arrow stream the library produced may be handed
 * back to it (a scanner's stream written to another dataset with
 * lance_dataset_write(), for example).
 *
 * Snapshots.  A LanceDataset holds one version of the dataset.  Reads through
 * it see that version even when other writers commit newer ones; a call that
 * commits through the handle (index creation, for example) moves the handle
 * to the version it committed.  Open the dataset again to see other writers'
 * versions.
 *
 * Arrow.  Data crosses the interface through the Arrow C Data Interface
 * (struct ArrowSchema / ArrowArray / ArrowArrayStream, defined below unless
 * an Arrow header defined them first).
 */

/*
 * Contents: each section below, in order, with the functions it declares
 * (scripts/check_map.sh --toc prints this list; the map check fails when it
 * disagrees with the declarations).
 * [own] marks a function of this library's own; the others are upstream lance-c's.
 *
 *   Version: lance_version [own]
 *   Arrow C Data Interface: (types only)
 *   Errors and memory: lance_last_error_code, lance_last_error_message, lance_free_string,
 *       lance_free_bytes
 *   Process budget: lance_process_budget_set [own]
 *   Logging: lance_set_log_callback [own]
 *   Datasets: lance_dataset_open, lance_dataset_close, lance_dataset_version,
 *       lance_dataset_latest_version, lance_dataset_count_rows, lance_dataset_schema,
 *       lance_dataset_fragment_count, lance_dataset_fragment_ids,
 *       lance_dataset_fragment_ids_bounded [own], lance_dataset_fragment_row_counts [own],
 *       lance_dataset_delete, lance_dataset_update, lance_dataset_compact_files,
 *       lance_dataset_cleanup_old_versions [own], lance_dataset_abort_incomplete_uploads [own]
 *   Versions, restore and statistics: lance_dataset_versions, lance_versions_count,
 *       lance_versions_id_at, lance_versions_timestamp_ms_at, lance_versions_close,
 *       lance_dataset_restore, lance_dataset_calculate_data_stats, lance_data_statistics_count,
 *       lance_data_statistics_field_id_at, lance_data_statistics_bytes_on_disk_at,
 *       lance_data_statistics_close
 *   Sessions: lance_session_new, lance_session_close, lance_session_get_cache_stats,
 *       lance_dataset_open_with_session
 *       -- Data cache: lance_session_new_with_data_cache, lance_dataset_get_data_cache_statistics
 *   Write: lance_dataset_write, lance_dataset_write_with_params, lance_write_fragments
 *   Merge-insert: lance_dataset_merge_insert
 *   Schema evolution: lance_dataset_drop_columns, lance_dataset_alter_columns,
 *       lance_dataset_add_columns_sql, lance_dataset_add_columns_nulls,
 *       lance_dataset_add_columns_stream
 *   Scan and search:
 *       -- Scanners: lance_scanner_new, lance_scanner_close
 *       -- Settings: rows, columns, batches and fragments: lance_scanner_set_limit,
 *          lance_scanner_set_offset, lance_scanner_set_batch_size, lance_scanner_with_row_id,
 *          lance_scanner_set_fragment_ids
 *       -- Vector search: the query, the index and its segments: lance_scanner_nearest,
 *          lance_scanner_nearest_multivector, lance_scanner_nearest_batch,
 *          lance_scanner_set_distance_range, lance_scanner_set_nprobes,
 *          lance_scanner_set_refine_factor, lance_scanner_set_ef, lance_scanner_set_metric,
 *          lance_scanner_set_use_index, lance_scanner_set_prefilter,
 *          lance_scanner_set_scalar_index_segment, lance_scanner_set_index_segments
 *       -- Vector search: probe bounds, approximation, parallelism:
 *          lance_scanner_set_minimum_nprobes, lance_scanner_set_maximum_nprobes,
 *          lance_scanner_set_approx_mode, lance_scanner_set_query_parallelism
 *       -- Scan tuning: lance_scanner_set_batch_size_bytes, lance_scanner_set_io_buffer_size,
 *          lance_scanner_set_batch_readahead, lance_scanner_set_fragment_readahead,
 *          lance_scanner_set_target_parallelism, lance_scanner_set_scan_in_order,
 *          lance_scanner_set_use_scalar_index, lance_scanner_set_strict_batch_size,
 *          lance_scanner_set_use_stats, lance_scanner_with_row_address,
 *          lance_scanner_set_include_deleted_rows
 *       -- Filters and scan statistics: lance_scanner_set_substrait_filter,
 *          lance_scanner_additional_sql_filter, lance_scanner_set_statistics_callback
 *       -- Reading the results: lance_scanner_to_arrow_stream, lance_scanner_next,
 *          lance_batch_to_arrow, lance_batch_num_rows [own], lance_batch_free
 *   Async scan: lance_scanner_scan_async, lance_scanner_async_stream_free, lance_scanner_poll_next
 *   Full-text search: lance_scanner_full_text_search, lance_dataset_prepare_fts_match_query,
 *       lance_dataset_prepare_fts_query, lance_dataset_prepare_fts_phrase_query,
 *       lance_fts_query_context_close, lance_scanner_set_fts_query_context,
 *       lance_scanner_set_fts_index_segments, lance_scanner_minhash_search [own]
 *   Random access: lance_dataset_take, lance_dataset_take_rows
 *   Blobs: lance_dataset_take_blobs, lance_dataset_take_blobs_by_indices, lance_blob_file_size,
 *       lance_blob_file_read, lance_blob_file_read_up_to, lance_blob_file_read_range,
 *       lance_blob_file_seek, lance_blob_file_tell, lance_blob_file_close,
 *       lance_scanner_set_blob_handling
 *   Indices: lance_dataset_create_vector_index, lance_dataset_create_scalar_index,
 *       lance_dataset_create_vector_index_v2 [own], lance_dataset_create_scalar_index_v2 [own],
 *       lance_dataset_create_vector_index_with_control [own],
 *       lance_dataset_create_scalar_index_with_control [own],
 *       lance_dataset_create_vector_index_with_options [own],
 *       lance_dataset_recommended_num_partitions [own], lance_dataset_drop_index,
 *       lance_dataset_index_count, lance_dataset_index_list_json,
 *       lance_dataset_index_segment_count, lance_dataset_index_segments,
 *       lance_dataset_prewarm_index
 *   Distributed index builds: planning: lance_dataset_plan_fragment_groups [own],
 *       lance_fragment_plan_group_count [own], lance_fragment_plan_dataset_version [own],
 *       lance_fragment_plan_group [own], lance_fragment_plan_free [own]
 *   Distributed index builds: shared models (RFC E1):
 *       -- Training a model: lance_dataset_train_ivf_centroids [own],
 *          lance_dataset_train_pq_codebook [own], lance_index_train_ivf_model,
 *          lance_index_train_pq_model, lance_vector_model_train [own],
 *          lance_dataset_train_vector_model [own],
 *          lance_dataset_train_vector_model_with_control [own],
 *          lance_dataset_train_vector_model_with_options [own]
 *       -- A model from Arrow arrays or a committed index: lance_vector_model_from_arrow [own],
 *          lance_dataset_read_vector_model [own]
 *       -- Model bytes: lance_vector_model_serialize [own], lance_vector_model_parse [own],
 *          lance_vector_model_fingerprint [own]
 *       -- Reading a model: lance_vector_model_info [own], lance_vector_model_index_type [own],
 *          lance_vector_model_centroids [own], lance_vector_model_codebook [own],
 *          lance_vector_model_free [own]
 *   Distributed index builds: distributed training: lance_vector_training_new [own],
 *       lance_vector_training_resume [own], lance_vector_training_request [own],
 *       lance_vector_training_reduce [own], lance_vector_training_info [own],
 *       lance_vector_training_model [own], lance_vector_training_free [own],
 *       lance_vector_training_worker_new [own], lance_vector_training_worker_answer [own],
 *       lance_vector_training_worker_run [own],
 *       lance_vector_training_worker_run_with_control [own],
 *       lance_vector_training_worker_free [own]
 *   Distributed index builds: uncommitted segments (RFC E1):
 *       lance_index_segment_builder_new_vector, lance_index_segment_builder_new_scalar,
 *       lance_index_segment_builder_set_model [own],
 *       lance_index_segment_builder_set_training_options [own],
 *       lance_index_segment_builder_execute_uncommitted, lance_index_segment_builder_free
 *   Build progress and cancellation (RFC E3 + E4): lance_index_build_cancel_token_new [own],
 *       lance_index_build_cancel_token_free [own], lance_index_build_cancel [own],
 *       lance_index_build_cancel_requested [own],
 *       lance_index_segment_builder_set_progress_callback,
 *       lance_index_segment_builder_set_cancel_token [own]
 *   Distributed index builds: segment metadata (RFC E2):
 *       -- Parsing and freeing: lance_index_segment_metadata_parse,
 *          lance_index_segment_metadata_free
 *       -- What the segment is: identity, type, model and versions:
 *          lance_index_segment_metadata_uuid, lance_index_segment_metadata_name,
 *          lance_index_segment_metadata_index_type,
 *          lance_index_segment_metadata_index_type_name [own],
 *          lance_index_segment_metadata_index_details_type_url,
 *          lance_index_segment_metadata_model_fingerprint [own],
 *          lance_index_segment_metadata_dataset_version,
 *          lance_index_segment_metadata_index_version,
 *          lance_index_segment_metadata_created_at_ms [own]
 *       -- What the segment covers: fields, fragments and files:
 *          lance_index_segment_metadata_field_ids, lance_index_segment_metadata_fragment_ids,
 *          lance_index_segment_metadata_field_count, lance_index_segment_metadata_fragment_count,
 *          lance_index_segment_metadata_file_count [own],
 *          lance_index_segment_metadata_file_at [own]
 *   Distributed index builds: commit (RFC E5): lance_dataset_commit_index_segments_v2 [own],
 *       lance_dataset_commit_index_segments_with_options [own],
 *       lance_dataset_commit_index_segments, lance_dataset_merge_index_segments [own]
 *   Distributed index builds: coverage and statistics (RFC E6):
 *       lance_dataset_index_segments_json [own], lance_dataset_index_coverage_json [own],
 *       lance_dataset_index_segment_metadata [own]
 *   Index maintenance: lance_dataset_optimize_indices [own],
 *       lance_dataset_optimize_indices_with_control [own],
 *       lance_dataset_plan_index_maintenance [own]
 */
#ifndef LANCE_H
#define LANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ========================================================================
 * Version
 * ======================================================================== */

/* While MAJOR is 0 a MINOR release may change the ABI: the shared library's
 * SONAME is liblance_c.so.0.MINOR, so a program linked against one minor
 * release never loads another. */
#define LANCE_C_VERSION_MAJOR 0
#define LANCE_C_VERSION_MINOR 5
#define LANCE_C_VERSION_PATCH 0
#define LANCE_C_VERSION_STRING "0.5.0"
/* The release of the Lance core this library is built on. */
#define LANCE_CORE_VERSION_STRING "14.0.2"

/* Deprecation mark for this library's own functions.
 *
 * GCC and Clang warn at each use (-Wdeprecated-declarations) with `msg`,
 * which names the replacement and the release that removes the function
 * (CHANGELOG.md lists them; docs/compatibility.md, "The ABI promise").  A
 * deprecated function works as documented until then.  Other compilers: no
 * mark. */
#if defined(__GNUC__) || defined(__clang__)
#define LANCE_DEPRECATED(msg) __attribute__((deprecated(msg)))
#else
#define LANCE_DEPRECATED(msg)
#endif

/**
 * The library's version, "MAJOR.MINOR.PATCH".  Static storage: do not free.
 * Compare with LANCE_C_VERSION_STRING to detect a header/library mismatch.
 */
const char* lance_version(void);

/* ========================================================================
 * Arrow C Data Interface
 * ======================================================================== */

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

/* The structs of the Arrow C Data Interface specification, under its own guard.
 *
 * The specification's ARROW_FLAG_* macros are not defined here (programs
 * may use those names themselves): the flag values are
 * DICTIONARY_ORDERED = 1, NULLABLE = 2, MAP_KEYS_SORTED = 4. */
struct ArrowSchema {
    const char* format;
    const char* name;
    const char* metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema** children;
    struct ArrowSchema* dictionary;
    void (*release)(struct ArrowSchema*);
    void* private_data;
};

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void** buffers;
    struct ArrowArray** children;
    struct ArrowArray* dictionary;
    void (*release)(struct ArrowArray*);
    void* private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
    int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
    int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
    const char* (*get_last_error)(struct ArrowArrayStream*);
    void (*release)(struct ArrowArrayStream*);
    void* private_data;
};

#endif /* ARROW_C_STREAM_INTERFACE */

/* ========================================================================
 * Errors and memory
 * ======================================================================== */

typedef enum {
    LANCE_OK = 0,
    /* A NULL, malformed, out-of-range or inconsistent argument. */
    LANCE_ERR_INVALID_ARGUMENT = 1,
    /* Storage failed: a file could not be read or written, or is corrupt. */
    LANCE_ERR_IO = 2,
    /* The dataset, version, column, index or field named does not exist. */
    LANCE_ERR_NOT_FOUND = 3,
    /* LANCE_WRITE_CREATE on a URI that already holds a dataset. */
    LANCE_ERR_DATASET_ALREADY_EXISTS = 4,
    /* The index could not be built, opened or used. */
    LANCE_ERR_INDEX = 5,
    /* A fault inside the library; the message says what.  Please report it. */
    LANCE_ERR_INTERNAL = 6,
    /* The request is valid but this build or the Lance core cannot do it. */
    LANCE_ERR_NOT_SUPPORTED = 7,
    /* Another writer committed a conflicting change first.  Retryable:
       reopen the dataset at its latest version and try again. */
    LANCE_ERR_COMMIT_CONFLICT = 8,
    /* A panic inside the library was caught at the boundary (it never unwinds into the host).
     *
     * The call failed; the handles it was given stay usable (a mutation
     * that panicked before committing leaves the last commit in place).
     * Please report it with the message. */
    LANCE_ERR_PANIC = 9,

    /* This library's own error codes.
     *
     * Codes 1000 and above are this library's own (upstream lance-c's codes
     * are sequential from 0 and keep their values above).  A host that only
     * knows upstream's codes should treat an unknown code as a failure of
     * the call, as for LANCE_ERR_INTERNAL. */

    /* The operation was cancelled through its cancel token. */
    LANCE_ERR_CANCELLED = 1000,
    /* Commit (E5): the segment set is empty. */
    LANCE_ERR_NO_SEGMENTS = 1001,
    /* Commit (E5): a segment UUID appears twice in the set, or is already
       committed while the rest of the set is not (the message names them). */
    LANCE_ERR_DUPLICATE_SEGMENT = 1002,
    /* Commit (E5): two segments cover the same fragment (the message names
       both segments and the shared fragments). */
    LANCE_ERR_OVERLAPPING_SEGMENTS = 1003,
    /* Commit (E5): a segment covers fragments the dataset no longer has
       (deleted or compacted away since the build); rebuild it. */
    LANCE_ERR_STALE_SEGMENT = 1004,
    /* Commit (E5): vector segments built from different shared models, or
       trained independently, without allow_independent_models. */
    LANCE_ERR_MODEL_MISMATCH = 1005,
    /* Commit (E5): a segment's files are missing or damaged.
     *
     * They are missing from storage or differ in size from what the
     * segment's metadata records (deleted by a cleanup, a build killed
     * mid-write, a corrupted UUID in transit; the message names the
     * segment and the file).  Rebuild that segment. */
    LANCE_ERR_INCOMPLETE_SEGMENT = 1006
} LanceErrorCode;

/*
 * What to do after each error code (docs/errors.md has this table with the reasons).
 *
 * "Retry as is": the same call again; "retry after ...": the same call once that is done;
 * "rebuild": build the segment or index again; "caller error": the call must change, and
 * repeating it fails the same way.
 *
 *   INVALID_ARGUMENT        caller error: fix the argument the message names.  Functions
 *                           of upstream's form report the segment-set codes 1001-1006 as
 *                           this code (the message says which): follow their advice.
 *   IO                      a store timeout, a refused or lost connection, or an HTTP 5xx,
 *                           429 or 408 answer is transient: retry after a delay (backing
 *                           off), once the client's own retries (below) have run out.  A
 *                           missing permission or credential, a full disk or a corrupt file
 *                           is not: retry after fixing the store or the storage options.
 *   NOT_FOUND               caller error (a URI, version, column, index or field that does
 *                           not exist); a version a cleanup removed: reopen it at its latest.
 *   DATASET_ALREADY_EXISTS  caller error: append or overwrite, or open the dataset
 *                           another writer created.
 *   INDEX                   an index of that name exists: caller error (pass replace, or
 *                           another name).  A fragment a full-text index does not cover:
 *                           rebuild after indexing it.  The core cannot build, open or
 *                           use the index: rebuild it after fixing what the message
 *                           names (its parameters, its data).
 *   INTERNAL, PANIC         a fault of the library: report it with the message; a retry
 *                           as is may meet it again (after a panic the handles stay usable).
 *   NOT_SUPPORTED           caller error: this build or the core cannot do it; never retry.
 *   COMMIT_CONFLICT         retry after reopening the dataset at its latest version (an
 *                           index segment commit: retry as is, it is idempotent).
 *   CANCELLED               the caller's own cancel: retry as is, with a new token, if
 *                           the work is still wanted.
 *   NO_SEGMENTS             caller error: commit at least one segment.
 *   DUPLICATE_SEGMENT       caller error: drop the repeated segment, or the ones an
 *                           earlier try already committed.
 *   OVERLAPPING_SEGMENTS    caller error in the plan: rebuild the segments over disjoint fragments.
 *   STALE_SEGMENT           rebuild the segment on the dataset's current fragments.
 *   MODEL_MISMATCH          rebuild the segments from one shared model (or commit with
 *                           allow_independent_models).
 *   INCOMPLETE_SEGMENT      rebuild that segment.
 */

/*
 * Store timeouts and retries before LANCE_ERR_IO (s3://, gs://, az://).
 *
 * docs/object-storage.md, "Timeouts and retries", has the details.  Before a
 * store failure becomes LANCE_ERR_IO the store client has retried it, as the
 * storage options say: "connect_timeout" (default 5s) and "timeout" (30s, one
 * attempt), "client_max_retries" (3) within "client_retry_timeout" (180 s),
 * Lance's throttle retries "lance_aimd_max_retries" = 3, and
 * "download_retry_count" (3) for reads.  Raise them to ride out longer
 * outages inside one call; lower them to fail sooner and retry at your level.
 * On oss://, cos://, tos:// and hf:// no option bounds a request's wait.  A
 * write or commit that failed with LANCE_ERR_IO may still have been applied
 * (its reply lost): reopen the dataset and look at its latest version before
 * writing again.  Records of each retry: "Logging", at LANCE_LOG_INFO.
 */

/**
 * The code of this thread's last error.
 *
 * LANCE_OK after a successful call, after lance_last_error_message() took
 * the error, and on a thread that has made no call.  Reading it changes
 * nothing (call it as often as needed); it never fails and may be called
 * from anywhere, callbacks included.
 */
LanceErrorCode lance_last_error_code(void);

/**
 * Takes this thread's last error message.
 *
 * Returns its message and clears the error, so that a following
 * lance_last_error_code() is LANCE_OK and a following
 * lance_last_error_message() is NULL (as upstream lance-c does).  Read the
 * code first, then the message.  NULL when there is no error to take.
 * Produced: free it with lance_free_string().
 */
const char* lance_last_error_message(void);

/**
 * Frees a string the library produced.
 *
 * One this header calls "produced, free with lance_free_string()"
 * (lance_last_error_message(), the *_json functions,
 * lance_vector_model_fingerprint()).  Never pass a string borrowed from
 * a handle (lance_index_segment_metadata_name(), ...),
 * lance_version()'s, or memory from malloc().
 * @param s  Consumed.  NULL is a no-op.
 * It cannot fail and leaves this thread's last error as it was.
 */
void lance_free_string(const char* s);

/**
 * Frees a byte buffer the library produced.
 *
 * Model, request, statistics and segment metadata bytes: every "produced,
 * free with lance_free_bytes()" below.  Pass the pointer the library wrote,
 * never one into the buffer or from malloc(); the length is not needed.
 * @param bytes  Consumed.  NULL is a no-op.
 * It cannot fail and leaves this thread's last error as it was.
 */
void lance_free_bytes(uint8_t* bytes);

/* ========================================================================
 * Process budget
 *
 * What lance-c may use of its host process, for a host that runs many
 * builds and scans at once and must bound them (a database backend).
 * Without a budget the library sizes itself to the machine:
 *   - the shared runtime ("Threads" above): one worker thread per core, and
 *     up to 512 more threads for blocking file operations, started as
 *     needed and ended after 10 s idle;
 *   - the Lance core's compute pool: cores - 2 threads, at least 1 (the
 *     LANCE_CPU_THREADS environment variable sets it), and the pool its
 *     k-means and PQ training run on, one thread per core
 *     (RAYON_NUM_THREADS sets it);
 *   - an index build given a cancel token (on the local file system, or a
 *     segment build on s3://): a runtime of its own with one worker thread
 *     per core ("Build progress and cancellation"), so N such builds at
 *     once start N x cores threads;
 *   - temporary files (a vector build's shuffle spill, which grows with
 *     the rows it shuffles) under a directory of the process's own in
 *     TMPDIR, removed when the process exits (or by the next process's
 *     first call, after a kill).
 * ======================================================================== */

typedef struct LanceProcessBudget {
    /* Threads of each of the core's two compute pools.
     *
     * 0 = the defaults above.  Else each pool has this many threads: the
     * library sets LANCE_CPU_THREADS and RAYON_NUM_THREADS to it in the
     * process environment when it starts (below), over any value the
     * host set. */
    uint32_t compute_threads;
    /* Threads of the shared runtime and of blocking file operations.
     *
     * 0 = the defaults above.  Else the shared runtime has this many worker
     * threads and at most this many threads for blocking file operations,
     * and a build with a cancel token (local, or a segment on s3://) has no
     * worker thread of its own: its tasks run on the thread that called it
     * (which waits for it anyway) and at most one thread of its own does
     * its file operations, so N such builds at once add at most N threads.
     * Cancelling such a build works as without a budget. */
    uint32_t io_threads;
    /* Where temporary files go.
     *
     * NULL = TMPDIR (/tmp when unset).  Else an absolute path to an
     * existing directory, under which the process's directory of temporary
     * files is made instead.  To bound the space builds may spill, put it
     * on a file system of that size: a build that fills it fails with
     * LANCE_ERR_IO and removes its files. */
    const char* temp_dir;
} LanceProcessBudget;

/**
 * Sets the process's budget.
 *
 * The library applies it once, when it starts its threads: at the first
 * call that reads, writes or builds (opening a dataset is the usual
 * first); calls that only handle bytes, tokens or errors do not start it.
 * So call this first thing in the process; before that, a second call
 * replaces the budget.
 *
 * With both counts set, the library's threads are at most
 * 2 x compute_threads + 2 x io_threads + 1, plus one for each build with a
 * cancel token (local, or a segment on s3://) running at that moment
 * (tests/api/test_budget.c counts them under 8 concurrent builds).
 * Setting the environment variables happens at start, from the calling
 * thread: a host whose other threads call setenv() or getenv() at that
 * moment races with it (as with any setenv()).
 *
 * @param budget  Borrowed; its temp_dir is copied.
 * @return 0, or -1: LANCE_ERR_INVALID_ARGUMENT (NULL, a count above 4096,
 *         a temp_dir that is not an absolute path to an existing directory
 *         or not UTF-8), LANCE_ERR_NOT_SUPPORTED (the library has started:
 *         the budget in force stays).
 */
int32_t lance_process_budget_set(const LanceProcessBudget* budget);

/* ========================================================================
 * Logging
 *
 * The Lance core reports what it does not return as an error in log
 * records: a store request retried (INFO, from the object-store client:
 * "backing off ..., retry n of m"), a read given up after its retries or
 * the store throttled (WARN), a deprecated setting, a fallback.  By default
 * nothing receives them: they are dropped.  lance_set_log_callback() hands
 * them to the host's logger (glog, spdlog, syslog).  A record has a level,
 * a target naming what emitted it (a module path such as
 * "lance::dataset::scanner", or an event class such as
 * "lance::dataset_events") and a message (for a structured event, its text
 * followed by its fields as name=value).  Targets and messages come from
 * the core and change with it; filter on the level.
 * ======================================================================== */

/*
 * The log callback's contract (lance_set_log_callback()).
 *
 *   - It runs on the thread that emitted the record: one that called
 *     lance-c (inside that call), or one of the library's own (its
 *     runtime's, the core's compute pools'), also between calls.  Calls on
 *     different threads may overlap: it must be thread-safe.  On one thread
 *     calls never nest: a record emitted while the callback runs on that
 *     thread is dropped.
 *   - `target` and `message` are borrowed for the call only: UTF-8,
 *     NUL-terminated, never NULL.
 *   - It runs in the middle of the core's work, at times while the core
 *     holds a lock: it must return quickly, and never wait for another
 *     lance-c call to finish (that call may wait for it).  A host logger
 *     that can block belongs behind a queue.
 *   - Inside it, call only lance_set_log_callback() (to replace or clear
 *     the callback, or change its level), lance_version(),
 *     lance_index_build_cancel() and lance_index_build_cancel_requested().
 *     Any other function that reports errors fails with
 *     LANCE_ERR_INVALID_ARGUMENT rather than re-enter the core where it
 *     logged (as in a progress callback); close and free nothing there.
 *   - It must return normally (no longjmp, no C++ exception).
 *   - Once lance_set_log_callback() returns, the callback it replaced is
 *     not running on any other thread and is never called again (the call
 *     waits for the calls in progress): its ctx may then be freed.  The one
 *     exception is a callback that replaces itself: its own call goes on
 *     until it returns.
 * A record above the level set costs the core one comparison; DEBUG and
 * TRACE records are many per scan and slow it.  lance-index prints the
 * records on stderr when LANCE_LOG is set to a level name (error, warn,
 * info, debug, trace; docs/lance-index.md).
 */

/** A record's level, and the most detailed level a callback receives. */
typedef enum {
    LANCE_LOG_OFF = 0,   /* as max_level: no records */
    LANCE_LOG_ERROR = 1, /* an operation failed (usually also returned as an error) */
    LANCE_LOG_WARN = 2,  /* the host should hear of it: a read given up, throttling, a deprecated setting */
    LANCE_LOG_INFO = 3,  /* an operation's event: a dataset opened, a file written, a request retried */
    LANCE_LOG_DEBUG = 4, /* detail for diagnosis */
    LANCE_LOG_TRACE = 5  /* everything */
} LanceLogLevel;

/** Receives one record (see the contract above); `level` is a LanceLogLevel. */
typedef void (*LanceLogCallback)(void* ctx, int32_t level, const char* target, const char* message);

/**
 * Sets the process's log callback.
 *
 * It receives the core's records of `max_level` and below (LANCE_LOG_WARN:
 * errors and warnings), and replaces the callback set before.  A NULL
 * callback, or LANCE_LOG_OFF, drops every record again, as before the first
 * call.  Any thread may call it at any time, the callback included.  It
 * does not start the library: call it first thing, before or after
 * lance_process_budget_set().
 *
 * @param max_level  A LanceLogLevel; others are LANCE_ERR_INVALID_ARGUMENT.
 * @param callback   NULL = none.
 * @param ctx        Passed back unchanged; may be NULL.  It must stay valid
 *                   until a later call has replaced the callback and returned.
 * @return 0, or -1: LANCE_ERR_INVALID_ARGUMENT (max_level),
 *         LANCE_ERR_NOT_SUPPORTED (the library's Rust `log` logger or
 *         `tracing` subscriber was already installed by other Rust code in
 *         the process, which then receives the records: possible only when
 *         the host's Rust code shares those crates with the library).
 */
int32_t lance_set_log_callback(int32_t max_level, LanceLogCallback callback, void* ctx);

/* ========================================================================
 * Datasets
 * ======================================================================== */

typedef struct LanceDataset LanceDataset;

/**
 * Opens a dataset.
 *
 * `uri` is a local path, file://, or an object store (s3://, gs://,
 * az://, abfss://, oss://, cos://, in the default build; tos:// and
 * hf:// with the cargo features "tos" and "huggingface",
 * docs/building.md "Features").  A scheme the build leaves out is
 * LANCE_ERR_INVALID_ARGUMENT naming the feature.
 *
 * @param uri           Borrowed.  Must not be NULL or empty.
 * @param storage_opts  Borrowed.  NULL, or a NULL-terminated array of
 *                      alternating keys and values, e.g.
 *                      {"aws_region", "us-east-1", NULL}.  An odd number of
 *                      entries is LANCE_ERR_INVALID_ARGUMENT.
 * @param version       The version to open; 0 = the latest.
 * @return Produced: a handle to close with lance_dataset_close(), or NULL.
 *         LANCE_ERR_NOT_FOUND when there is no dataset at `uri` or no such
 *         version.
 */
LanceDataset* lance_dataset_open(const char* uri, const char* const* storage_opts, uint64_t version);

/**
 * Closes a dataset handle, once no other call uses it.
 *
 * What was made from it keeps the version it took and stays valid:
 * scanners and their streams, blob handles, FTS query contexts, segment
 * builders, training workers.  Nothing is committed or written.
 *
 * @param dataset  Consumed.  NULL is a no-op.
 * It cannot fail and leaves this thread's last error as it was.
 */
void lance_dataset_close(LanceDataset* dataset);

/**
 * The version the handle holds.
 *
 * It moves when a call commits through the handle ("Snapshots" above).
 * No I/O.
 * @param dataset  Borrowed.
 * @return The version (1 or more), or 0 with LANCE_ERR_INVALID_ARGUMENT for
 *         a NULL `dataset`.
 */
uint64_t lance_dataset_version(const LanceDataset* dataset);

/**
 * The newest committed version in storage.
 *
 * Committed by any writer, it may be newer than the handle's, which does
 * not move (open the dataset again to read it).  Reads the dataset's
 * version list from storage.
 * @param dataset  Borrowed.
 * @return The version, or 0 on error: LANCE_ERR_INVALID_ARGUMENT (NULL),
 *         LANCE_ERR_NOT_FOUND (the dataset is gone from storage),
 *         LANCE_ERR_IO (storage could not be read).
 */
uint64_t lance_dataset_latest_version(const LanceDataset* dataset);

/**
 * The number of rows in the handle's version, deleted rows excluded.
 *
 * May read fragment metadata (deletion files) from storage.
 *
 * @param dataset  Borrowed.
 * @return The count; 0 both for an empty version and on error (check
 *         lance_last_error_code()): LANCE_ERR_INVALID_ARGUMENT (NULL),
 *         LANCE_ERR_IO.
 */
uint64_t lance_dataset_count_rows(const LanceDataset* dataset);

/**
 * Exports the dataset's schema.
 * @param out  Borrowed out parameter; on success holds a produced schema the
 *             caller releases with out->release(out).
 */
int32_t lance_dataset_schema(const LanceDataset* dataset, struct ArrowSchema* out);

/**
 * The number of fragments in the handle's version.
 *
 * Each fragment counts, whatever rows of it are deleted.  No I/O.
 * @param dataset  Borrowed.
 * @return The count; 0 both for a version without fragments and on error
 *         (LANCE_ERR_INVALID_ARGUMENT for a NULL `dataset`).
 */
uint64_t lance_dataset_fragment_count(const LanceDataset* dataset);

/**
 * Writes the fragment ids of the handle's version, in manifest order.
 *
 * @param out_ids  Borrowed; must hold lance_dataset_fragment_count() entries.
 *
 * The count and the ids are read from the snapshot the handle holds at each
 * call: when another thread commits through the same handle in between, the
 * second call may see more fragments than the buffer was sized for.  Prefer
 * lance_dataset_fragment_ids_bounded(), which cannot overrun.
 */
int32_t lance_dataset_fragment_ids(const LanceDataset* dataset, uint64_t* out_ids);

/**
 * Writes the fragment ids into a buffer of a given capacity.
 *
 * The ids are those of the handle's version, in manifest order; the buffer
 * has `capacity` entries.
 * @param out_ids    Borrowed; holds `capacity` entries.  May be NULL when
 *                   `capacity` is 0, to ask only for the count.
 * @param capacity   When it is less than the number of fragments: only the
 *                   count is written, and the call fails with
 *                   LANCE_ERR_INVALID_ARGUMENT (nothing is written to
 *                   `out_ids`), unless `out_ids` is NULL and `capacity` 0.
 * @param out_count  Borrowed, must not be NULL: receives the number of
 *                   fragments of the version read.
 */
int32_t lance_dataset_fragment_ids_bounded(const LanceDataset* dataset, uint64_t* out_ids, size_t capacity,
                                           size_t* out_count);

/**
 * Writes the row count of each fragment.
 *
 * Deleted rows excluded, in the order of lance_dataset_fragment_ids().
 * @param out_row_counts  Borrowed; holds `capacity` entries.
 * @param capacity        At least lance_dataset_fragment_count(), else
 *                        LANCE_ERR_INVALID_ARGUMENT and nothing is written.
 */
int32_t lance_dataset_fragment_row_counts(const LanceDataset* dataset, uint64_t* out_row_counts, size_t capacity);

/**
 * Deletes the rows matching an SQL predicate and commits.
 *
 * The handle moves to the new version.  A fragment whose every row is
 * deleted leaves the dataset.
 * @param predicate         Borrowed, e.g. "id >= 100"; an invalid predicate
 *                          is LANCE_ERR_INVALID_ARGUMENT.
 * @param out_deleted_rows  Nullable; receives the number of rows deleted.
 */
int32_t lance_dataset_delete(LanceDataset* dataset, const char* predicate, uint64_t* out_deleted_rows);

/**
 * Updates the rows matching a predicate.
 *
 * Sets columns of the rows matching an SQL predicate to SQL expressions
 * computed per row, and commits; the handle moves to the new version.  The
 * Lance core rewrites the matching rows into new fragments (their old copies
 * are deleted), so updated rows move to the end of the scan order and, unless
 * the dataset has stable row ids, get new row ids.  The core commits even
 * when no row matches: the handle then moves to a new version holding the
 * same rows, and `*out_num_updated` is 0.
 * @param predicate        Borrowed, e.g. "id < 100"; NULL updates every row.
 *                         "" is LANCE_ERR_INVALID_ARGUMENT (pass NULL).
 * @param columns, values  Borrowed parallel arrays of `num_updates`
 *                         non-empty strings: values[i] is an SQL expression
 *                         over the row's columns ("price * 2", "'sold'"),
 *                         cast to the type of columns[i].  A column named
 *                         twice is LANCE_ERR_INVALID_ARGUMENT.
 * @param num_updates      At least 1.
 * @param out_num_updated  Nullable; on success receives the number of rows
 *                         updated.
 * @return LANCE_ERR_INVALID_ARGUMENT for NULL or empty strings, an unknown
 *         column, or SQL that does not parse or type-check;
 *         LANCE_ERR_NOT_SUPPORTED for a nested column ("s.x") or a column
 *         holding blobs; LANCE_ERR_COMMIT_CONFLICT when other writers keep
 *         committing conflicting changes (the core retries 10 times).
 */
int32_t lance_dataset_update(LanceDataset* dataset, const char* predicate, const char* const* columns,
                             const char* const* values, size_t num_updates, uint64_t* out_num_updated);

typedef struct LanceCompactionMetrics {
    uint64_t fragments_removed;
    uint64_t fragments_added;
    uint64_t files_removed;
    uint64_t files_added;
} LanceCompactionMetrics;

/** Compaction settings (lance-c 0.1.6 layout).  0 in any field = Lance's default. */
typedef struct LanceCompactionOptions {
    uint64_t target_rows_per_fragment; /* 0 = 1 Mi rows */
    uint64_t max_rows_per_group;       /* 0 = 1024 */
    uint64_t max_bytes_per_file;       /* 0 = no limit beyond Lance's default */
    uint64_t num_threads;              /* 0 = one per CPU */
    uint64_t batch_size;               /* 0 = Lance's default read batch */
} LanceCompactionOptions;

/**
 * Compacts the dataset's files.
 *
 * Rewrites small fragments (and fragments with many deletions) into larger
 * ones and commits; the handle moves to the new version.  Committed indices
 * are remapped to the new fragments; uncommitted segments built before the
 * compaction become stale (see LANCE_ERR_STALE_SEGMENT).  With nothing to
 * compact it succeeds with zeroed metrics and commits no new version.
 * @param options      Borrowed; NULL = all defaults.  A value that does not
 *                     fit the core's size type is LANCE_ERR_INVALID_ARGUMENT.
 * @param out_metrics  Nullable; written on success only.
 */
int32_t lance_dataset_compact_files(LanceDataset* dataset, const LanceCompactionOptions* options,
                                    LanceCompactionMetrics* out_metrics);

typedef struct LanceCleanupStats {
    uint64_t bytes_removed;
    uint64_t old_versions;
    uint64_t data_files_removed;
    uint64_t transaction_files_removed;
    uint64_t index_files_removed;
    uint64_t deletion_files_removed;
} LanceCleanupStats;

/**
 * Removes old versions and unreferenced files.
 *
 * Lance's cleanup: removes the versions older than `older_than_seconds`
 * (never the latest) and the files no remaining version references, among
 * them the _indices/<uuid>/ directories of segments that were built but
 * never committed (a worker killed mid-build, a failed job).
 *
 * Files younger than 7 days that no version references are kept unless
 * `delete_unverified` is true: they may belong to a write or a segment build
 * still in progress.  With `delete_unverified` = true, make sure no worker
 * is building segments of this dataset, or its segments are deleted under
 * it.  With it, on local storage, the call also removes the _indices/<uuid>/
 * directories a build killed in the middle of writing a file leaves: they
 * hold only files still under their temporary names ("index.idx#1"),
 * which Lance's own cleanup does not see (counted in index_files_removed
 * and bytes_removed) -- when no segment of the latest version has that UUID
 * and nothing in the directory changed for `older_than_seconds`.
 * The handle stays at its version.
 * @param older_than_seconds  Any value: a cutoff (now minus this) earlier
 *                   than the Unix epoch, 1970-01-01 UTC (a value above the
 *                   seconds elapsed since then, up to UINT64_MAX), is taken
 *                   as the epoch, before which nothing a dataset holds was
 *                   written: such a call removes no version and no
 *                   unreferenced file.
 * @param out_stats  Nullable; written on success only.
 * @return 0, or -1: LANCE_ERR_INVALID_ARGUMENT, LANCE_ERR_IO (among them:
 *         files that could not be deleted, on read-only storage or without
 *         permission; the message counts them and what was removed, and the
 *         next cleanup finds them again).
 */
int32_t lance_dataset_cleanup_old_versions(LanceDataset* dataset, uint64_t older_than_seconds, bool delete_unverified,
                                           LanceCleanupStats* out_stats);

/**
 * Aborts incomplete multipart uploads.
 *
 * Those under the dataset's prefix that started more than
 * `older_than_seconds` ago (0 = every one).  A writer killed in the middle
 * of a large file (a segment build's index file, a data file) leaves one:
 * the object store keeps its parts, and bills them, until it is aborted,
 * and no listing of objects shows it (so
 * lance_dataset_cleanup_old_versions() cannot).  An upload still in
 * progress is aborted too if it is older than the cutoff (its writer can
 * then not finish its file): as with delete_unverified, make sure no worker
 * writes to this dataset, or give a cutoff longer than any write takes.
 *
 * On s3:// it lists the uploads (S3's ListMultipartUploads, signed with the
 * dataset's storage options: aws_endpoint, aws_region, the access key or
 * the AWS_* environment, allow_http; credentials from an AWS profile are
 * not read) and aborts each.  On the local file system there are none (0).
 * Other stores are LANCE_ERR_NOT_SUPPORTED: Azure discards uncommitted
 * blocks itself after about a week; for gs://, oss://, cos:// and tos://
 * configure the bucket's lifecycle rule that aborts incomplete uploads
 * (docs/object-storage.md).
 *
 * @param dataset      Borrowed.
 * @param older_than_seconds  Any value: a cutoff earlier than the Unix
 *                     epoch is taken as the epoch, as for
 *                     lance_dataset_cleanup_old_versions() (no upload is
 *                     that old: none is aborted, and 0 on the local file
 *                     system).
 * @param out_aborted  Nullable; receives how many uploads were aborted.
 * @return 0, or -1: LANCE_ERR_INVALID_ARGUMENT (NULL dataset),
 *         LANCE_ERR_IO (the listing or an abort failed; the message names
 *         the upload; those aborted before it stay aborted),
 *         LANCE_ERR_NOT_SUPPORTED (a store other than s3:// or local).
 */
int32_t lance_dataset_abort_incomplete_uploads(const LanceDataset* dataset, uint64_t older_than_seconds,
                                               uint64_t* out_aborted);

/* ========================================================================
 * Versions, restore and statistics
 * ======================================================================== */

typedef struct LanceVersions LanceVersions;
typedef struct LanceDataStatistics LanceDataStatistics;

/**
 * Reads the dataset's version history.
 *
 * Every manifest still in storage, whatever version the handle holds,
 * ordered by version id.
 * @return Produced: a snapshot of the history, to close with
 *         lance_versions_close(), or NULL.  Reads every manifest (I/O).
 */
LanceVersions* lance_dataset_versions(const LanceDataset* dataset);

/**
 * The number of versions in a history.
 *
 * As read by lance_dataset_versions() (the list does not change
 * afterwards).
 * @param versions  Borrowed.
 * @return The count (at least 1 for a history read), or 0 with
 *         LANCE_ERR_INVALID_ARGUMENT for a NULL `versions`.
 */
uint64_t lance_versions_count(const LanceVersions* versions);

/**
 * The id of entry `index` (0-based; ids increase with `index`).
 * @return 0 on error: NULL `versions` or `index` >= lance_versions_count()
 *         (LANCE_ERR_INVALID_ARGUMENT).
 */
uint64_t lance_versions_id_at(const LanceVersions* versions, size_t index);

/**
 * When entry `index` was committed, in milliseconds since the Unix epoch
 * (UTC).  0 on error, with the errors of lance_versions_id_at().
 */
int64_t lance_versions_timestamp_ms_at(const LanceVersions* versions, size_t index);

/**
 * Closes a version history.  The dataset it was read from is not touched.
 * @param versions  Consumed.  NULL is a no-op.
 * It cannot fail and leaves this thread's last error as it was.
 */
void lance_versions_close(LanceVersions* versions);

/**
 * Restores an old version.
 *
 * Makes an old version the latest: commits a new version (the latest + 1)
 * holding the fragments, schema and indices of `version`.  Versions in
 * between stay in the history.  Restoring the latest version commits a new
 * version too, with the same content, so the restore can never be mistaken
 * for (or race) another writer's commit.
 * @param dataset  Borrowed, unchanged (it keeps its version).
 * @param version  The version to restore; 0 is LANCE_ERR_INVALID_ARGUMENT.
 * @return Produced: a new handle at the committed version, to close with
 *         lance_dataset_close();
 *         NULL on error.  LANCE_ERR_NOT_FOUND when there is no such version
 *         (never committed, or removed by a cleanup);
 *         LANCE_ERR_COMMIT_CONFLICT when another writer commits at the same
 *         time.
 */
LanceDataset* lance_dataset_restore(const LanceDataset* dataset, uint64_t version);

/**
 * Measures each field's bytes on disk.
 *
 * The fields of the handle's version, measured by reading the metadata of
 * every data file (I/O).
 * @return Produced: one entry per field, nested children included, ordered
 *         by field id; close it with lance_data_statistics_close().  NULL on
 *         error.
 */
LanceDataStatistics* lance_dataset_calculate_data_stats(const LanceDataset* dataset);

/**
 * Number of entries (fields); 0 for an empty schema, and 0 with
 * LANCE_ERR_INVALID_ARGUMENT for a NULL `stats`.
 */
uint64_t lance_data_statistics_count(const LanceDataStatistics* stats);

/**
 * The field id of entry `index`.  0 is also a valid field id: on 0, check
 * lance_last_error_code().  NULL `stats` or `index` >=
 * lance_data_statistics_count() is LANCE_ERR_INVALID_ARGUMENT.
 */
uint32_t lance_data_statistics_field_id_at(const LanceDataStatistics* stats, size_t index);

/**
 * The bytes the field of entry `index` takes on disk, after compression.
 * Datasets in the legacy (v1) file format report 0 for every field, without
 * an error.  Errors as lance_data_statistics_field_id_at().
 */
uint64_t lance_data_statistics_bytes_on_disk_at(const LanceDataStatistics* stats, size_t index);

/**
 * Closes data statistics.  The dataset they were read from is not touched.
 * @param stats  Consumed.  NULL is a no-op.
 * It cannot fail and leaves this thread's last error as it was.
 */
void lance_data_statistics_close(LanceDataStatistics* stats);

/* ========================================================================
 * Sessions
 *
 * A session holds the Lance core's two caches: the index cache (opened
 * indices and their partitions) and the metadata cache (manifests, file
 * and fragment metadata, deletion files).  Every dataset opened with
 * lance_dataset_open_with_session() uses the session's caches, so datasets
 * opened with one session share what they have read: a second open of the
 * same dataset, or a search through another handle, finds it cached.
 * lance_dataset_open() gives each dataset caches of its own, with the
 * core's default sizes.
 * ======================================================================== */

typedef struct LanceSession LanceSession;

/** What a session's caches hold, and how lookups in them fared. */
typedef struct LanceSessionCacheStats {
    uint64_t index_cache_hits;       /* lookups that found their entry */
    uint64_t index_cache_misses;     /* lookups that did not */
    uint64_t index_cache_entries;    /* entries held now */
    uint64_t index_cache_size_bytes; /* bytes held now (not the limit) */
    uint64_t metadata_cache_hits;
    uint64_t metadata_cache_misses;
    uint64_t metadata_cache_entries;
    uint64_t metadata_cache_size_bytes;
} LanceSessionCacheStats;

/**
 * Creates a session.
 *
 * Its caches hold at most the given number of bytes each, as the core
 * weighs its entries (the core's estimate of an entry's memory; not a
 * limit on the process's memory).
 *
 * @param index_cache_size_bytes     Limit of the index cache.  0 means a
 *                                   capacity of zero, so nothing is cached
 *                                   (it does not mean "the default").
 * @param metadata_cache_size_bytes  Limit of the metadata cache; 0 as above.
 * @return Produced: close with lance_session_close(); NULL on error
 *         (LANCE_ERR_INVALID_ARGUMENT when a limit exceeds SIZE_MAX).
 *
 * A session may be shared between threads freely, and used by any number
 * of datasets at once.
 */
LanceSession* lance_session_new(uint64_t index_cache_size_bytes, uint64_t metadata_cache_size_bytes);

/**
 * Closes the caller's handle to a session.  NULL is a no-op.  Datasets
 * opened with the session stay valid and keep using its caches (and what
 * they hold) until the last of them is closed.
 */
void lance_session_close(LanceSession* session);

/**
 * Reads the statistics of the session's caches.
 *
 * The counters and current contents of the caches: the core's own numbers
 * for the session, shared by every dataset opened with it.  Hits and
 * misses count lookups since the session was created.
 *
 * @param session    Borrowed; must not be NULL.
 * @param out_stats  Borrowed out parameter; must not be NULL.  Written on
 *                   success only.
 */
int32_t lance_session_get_cache_stats(const LanceSession* session, LanceSessionCacheStats* out_stats);

/**
 * lance_dataset_open() with the caches of `session`.
 *
 * @param uri, storage_opts, version  As for lance_dataset_open().
 * @param session  Borrowed; must not be NULL (LANCE_ERR_INVALID_ARGUMENT).
 *                 The dataset keeps its own reference to the session's
 *                 caches: closing the session handle first is allowed.
 * @return Produced: close with lance_dataset_close(); NULL on error.
 */
LanceDataset* lance_dataset_open_with_session(const char* uri, const char* const* storage_opts, uint64_t version,
                                              const LanceSession* session);

/* ---- Data cache ---- */

/*
 * Data cache: what a session may keep of the bytes datasets read.
 *
 * A session may also cache the bytes that datasets read from object
 * storage (s3://, gs://, az://, oss://, ...): data files, deletion files and
 * index files, in blocks of a fixed size, in memory and optionally on a
 * local disk.  A read that finds its blocks cached is served without a
 * request to the store.  Data on storage never changes under a Lance file
 * name, so cached blocks never go stale.  Datasets on the local file system
 * are read directly and bypass the cache.
 *
 * The disk tier is per session and per process: each session writes into a
 * subdirectory of its own, `<directory>/lance-c-data-cache-<pid>-<n>`,
 * removed when the session's last user is gone.  Nothing is reused across
 * processes: a restarted process starts with an empty cache (no warm cache
 * after a restart), and the subdirectory of a process that was killed
 * (SIGKILL) or exited with the session still open stays behind; no later
 * process reclaims it.  Point `directory` at a place the host cleans (or
 * remove `lance-c-data-cache-<pid>-*` of dead pids at start-up).
 */

/** A session's data cache.  All zero: a memory cache of the defaults. */
typedef struct LanceDataCacheOptions {
    /* Borrowed: a directory for the disk tier (created if missing; the
       cache writes only files of its own there and removes them when the
       session's last user is gone), or NULL for no disk tier. */
    const char* directory;
    /* Bytes held in memory; 0 = 64 MiB. */
    uint64_t memory_capacity_bytes;
    /* Bytes held in `directory`; 0 = 1 GiB.  Non-zero without a directory
       is LANCE_ERR_INVALID_ARGUMENT. */
    uint64_t disk_capacity_bytes;
    /* The unit of caching: reads are rounded out to whole blocks of this
       size, aligned to multiples of it within a file.  0 = 1 MiB; otherwise
       a multiple of 4096 of at most 64 MiB (else LANCE_ERR_INVALID_ARGUMENT). */
    uint64_t read_block_size_bytes;
} LanceDataCacheOptions;

/** Where a dataset's reads of object storage were served from. */
typedef struct LanceDataCacheStatistics {
    uint64_t bytes_read_from_cache;  /* bytes served from the data cache */
    uint64_t bytes_read_from_remote; /* bytes fetched from the store (whole blocks) */
} LanceDataCacheStatistics;

/**
 * lance_session_new() with a data cache, shared by every dataset opened with the session.
 *
 * @param index_cache_size_bytes, metadata_cache_size_bytes
 *                  As for lance_session_new().
 * @param options   Borrowed; NULL = all defaults (a 64 MiB memory cache).
 * @return Produced: close with lance_session_close(); NULL on error
 *         (LANCE_ERR_INVALID_ARGUMENT for the options above,
 *         LANCE_ERR_IO when the directory cannot be created).
 */
LanceSession* lance_session_new_with_data_cache(uint64_t index_cache_size_bytes, uint64_t metadata_cache_size_bytes,
                                                const LanceDataCacheOptions* options);

/**
 * Reads one dataset handle's data-cache counters.
 *
 * The bytes its reads (scans, searches, takes, index loads through it)
 * took from the session's data cache and from the store, since the handle
 * was opened.  A dataset opened without a data cache, or on the local file
 * system, reports zeros.
 *
 * @param dataset     Borrowed.
 * @param out_stats   Borrowed out parameter; written on success only.
 * @return 0, or -1 with LANCE_ERR_INVALID_ARGUMENT (NULL).
 */
int32_t lance_dataset_get_data_cache_statistics(const LanceDataset* dataset, LanceDataCacheStatistics* out_stats);

/* ========================================================================
 * Write
 * ======================================================================== */

/* Values are ABI-stable; the `mode` parameter is an int32_t and is validated. */
typedef enum {
    LANCE_WRITE_CREATE = 0,   /* create; LANCE_ERR_DATASET_ALREADY_EXISTS if one exists */
    LANCE_WRITE_APPEND = 1,   /* append; the schema must match the dataset's */
    LANCE_WRITE_OVERWRITE = 2 /* replace the data with a new version (or create) */
} LanceWriteMode;

/** Write tuning.  Zero-initialized = all defaults. */
typedef struct LanceWriteParams {
    /* Rows per data file (and so per fragment).  0 = Lance's default (1Mi rows). */
    uint64_t max_rows_per_file;
    /* Rows per row group.  0 = Lance's default (1024). */
    uint64_t max_rows_per_group;
    /* Bytes per data file.  0 = Lance's default (90 GB). */
    uint64_t max_bytes_per_file;
    /* File format version: "2.0", "2.1", "stable", "legacy", ...  NULL = the
       core's default.  Anything else is LANCE_ERR_INVALID_ARGUMENT. */
    const char* data_storage_version;
    /* Stable row ids (ids survive compaction).  false = off, the default. */
    bool enable_stable_row_ids;
} LanceWriteParams;

/**
 * Writes a stream of record batches as a new dataset version at `uri`.
 *
 * A new dataset gets Lance 14.0.2's defaults: unlike upstream lance-c, no
 * auto-cleanup setting is stored in its manifest (old versions stay until
 * lance_dataset_cleanup_old_versions() removes them).
 *
 * @param uri           Borrowed.  Must not be NULL or empty.
 * @param schema        Borrowed (not released): the schema the stream must
 *                      have (names, types, nullability); a mismatch is
 *                      LANCE_ERR_INVALID_ARGUMENT.
 * @param stream        Consumed, whatever the result.
 * @param mode          A LanceWriteMode.
 * @param storage_opts  Borrowed; as for lance_dataset_open().
 * @param out_dataset   NULL, or a borrowed out parameter that receives on
 *                      success a produced handle at the new version (close
 *                      it with lance_dataset_close()).  Untouched on error.
 */
int32_t lance_dataset_write(const char* uri, const struct ArrowSchema* schema, struct ArrowArrayStream* stream,
                            int32_t mode, const char* const* storage_opts, LanceDataset** out_dataset);

/**
 * Writes a stream with write tuning.
 *
 * As lance_dataset_write(), with LanceWriteParams: file and row group
 * sizes, the file format version, stable row ids.
 *
 * @param params  Borrowed; NULL = all defaults (as a zeroed struct, which
 *                makes this call lance_dataset_write()).
 * Other parameters, ownership included (`stream` consumed whatever the
 * result), as for lance_dataset_write().
 * @return 0, or -1: LANCE_ERR_INVALID_ARGUMENT (NULL or empty `uri`, a
 *         schema mismatch, a `mode` that is not a LanceWriteMode, a
 *         data_storage_version that is not a Lance file version, a size
 *         that does not fit size_t), LANCE_ERR_DATASET_ALREADY_EXISTS
 *         (LANCE_WRITE_CREATE over a dataset), LANCE_ERR_IO.
 */
int32_t lance_dataset_write_with_params(const char* uri, const struct ArrowSchema* schema,
                                        struct ArrowArrayStream* stream, int32_t mode, const LanceWriteParams* params,
                                        const char* const* storage_opts, LanceDataset** out_dataset);

/**
 * Writes data files without committing them.
 *
 * The stream's record batches go to data files under `<uri>/data/`, and
 * nothing is committed: no manifest is written and no version is made, so
 * the files are invisible to readers until another writer commits them
 * (the files' footers keep the schema with its field ids, the row counts
 * and the format version).  When a dataset exists at `uri` the stream's
 * schema must be compatible with the dataset's, and the files take its
 * field ids and file format version; otherwise they are written as for a
 * new dataset.
 *
 * @param uri           Borrowed.  Must not be NULL or empty.
 * @param schema        Borrowed (not released), required: the schema the
 *                      stream must have (names, types, nullability); a
 *                      mismatch is LANCE_ERR_INVALID_ARGUMENT.
 * @param stream        Consumed, whatever the result.
 * @param storage_opts  Borrowed; as for lance_dataset_open().
 * @return 0, or -1: LANCE_ERR_INVALID_ARGUMENT for bad input or a stream
 *         incompatible with the dataset at `uri`; LANCE_ERR_IO.
 */
int32_t lance_write_fragments(const char* uri, const struct ArrowSchema* schema, struct ArrowArrayStream* stream,
                              const char* const* storage_opts);

/* ========================================================================
 * Merge-insert
 * ======================================================================== */

/* What happens to a target row whose keys match a source row. */
typedef enum {
    LANCE_MERGE_WHEN_MATCHED_DO_NOTHING = 0, /* keep the target row */
    LANCE_MERGE_WHEN_MATCHED_UPDATE_ALL = 1, /* replace it with the source row */
    LANCE_MERGE_WHEN_MATCHED_UPDATE_IF = 2,  /* replace it where when_matched_expr holds */
    LANCE_MERGE_WHEN_MATCHED_FAIL = 3,       /* fail the call on any match (the core reports
                                                it as an execution error: LANCE_ERR_INTERNAL) */
    LANCE_MERGE_WHEN_MATCHED_DELETE = 4      /* delete the target row */
} LanceMergeWhenMatched;

/* What happens to a source row that matches no target row. */
typedef enum {
    LANCE_MERGE_WHEN_NOT_MATCHED_INSERT_ALL = 0, /* insert it */
    LANCE_MERGE_WHEN_NOT_MATCHED_DO_NOTHING = 1  /* skip it */
} LanceMergeWhenNotMatched;

/* What happens to a target row that matches no source row. */
typedef enum {
    LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_KEEP = 0,     /* keep it */
    LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE = 1,   /* delete it */
    LANCE_MERGE_WHEN_NOT_MATCHED_BY_SOURCE_DELETE_IF = 2 /* delete it where when_not_matched_by_source_expr holds */
} LanceMergeWhenNotMatchedBySource;

/**
 * Merge-insert settings.  Zero-initialized (or a NULL pointer) =
 * find-or-create: DO_NOTHING / INSERT_ALL / KEEP.  The modes are int32_t
 * values of the enums above; others are LANCE_ERR_INVALID_ARGUMENT.
 */
typedef struct LanceMergeInsertParams {
    int32_t when_matched; /* a LanceMergeWhenMatched */
    /* SQL predicate over target and source columns (source ones as
       "source.<name>", target ones as "target.<name>"); required by
       UPDATE_IF, must be NULL with any other mode. */
    const char* when_matched_expr;
    int32_t when_not_matched;           /* a LanceMergeWhenNotMatched */
    int32_t when_not_matched_by_source; /* a LanceMergeWhenNotMatchedBySource */
    /* SQL predicate over the target's columns; required by DELETE_IF, must
       be NULL with any other mode. */
    const char* when_not_matched_by_source_expr;
} LanceMergeInsertParams;

/** Row counts of a merge-insert. */
typedef struct LanceMergeInsertResult {
    uint64_t num_inserted_rows;
    uint64_t num_updated_rows;
    uint64_t num_deleted_rows;
} LanceMergeInsertResult;

/**
 * Merges a stream of source rows into the dataset by key.
 *
 * Lance's merge_insert (upsert, find-or-create, replace a range, delete by
 * key); it commits when something changes; the handle moves to the new
 * version.
 *
 * @param on_columns      Borrowed: `num_on_columns` (at least 1) key column
 *                        names, each non-NULL and non-empty, matched to the
 *                        dataset's columns without regard to case.  An
 *                        unknown column is LANCE_ERR_INVALID_ARGUMENT.
 * @param source          Consumed, whatever the result.  Its schema is the
 *                        dataset's or a subset of it (with the keys).  Two
 *                        source rows with the same keys matching one target
 *                        row are an error.
 * @param params          Borrowed; NULL = all zero (see above).  An `_IF`
 *                        mode without its expression, an expression with any
 *                        other mode, an empty expression, a mode out of
 *                        range, or settings that can change nothing
 *                        (DO_NOTHING / DO_NOTHING / KEEP) are
 *                        LANCE_ERR_INVALID_ARGUMENT.
 * @param out_result      Nullable; written on success only.
 * @return 0, or -1: LANCE_ERR_INVALID_ARGUMENT for the above or a source
 *         schema the dataset cannot take; LANCE_ERR_COMMIT_CONFLICT when a
 *         concurrent writer wins.
 */
int32_t lance_dataset_merge_insert(LanceDataset* dataset, const char* const* on_columns, size_t num_on_columns,
                                   struct ArrowArrayStream* source, const LanceMergeInsertParams* params,
                                   LanceMergeInsertResult* out_result);

/* ========================================================================
 * Schema evolution
 * ======================================================================== */

/*
 * Each function commits a new version and moves the handle to it; a
 * concurrent writer that wins is LANCE_ERR_COMMIT_CONFLICT.  Nothing is
 * committed on error.
 */

/**
 * Removes columns from the schema.
 *
 * Metadata only: the data stays in the files until a compaction rewrites
 * them.
 *
 * @param columns      Borrowed: `num_columns` (at least 1) names, each
 *                     non-NULL, non-empty UTF-8, naming a column (a nested
 *                     field as "parent.child").
 * @return 0, or -1 with LANCE_ERR_INVALID_ARGUMENT for bad input, an
 *         unknown column, or dropping every column.
 */
int32_t lance_dataset_drop_columns(LanceDataset* dataset, const char* const* columns, size_t num_columns);

/* Nullability asked of a column by lance_dataset_alter_columns(). */
typedef enum {
    LANCE_COLUMN_NULLABLE_UNCHANGED = 0,
    LANCE_COLUMN_NULLABLE_TRUE = 1,
    LANCE_COLUMN_NULLABLE_FALSE = 2 /* scans the column to prove it holds no NULL */
} LanceColumnNullableMode;

/** One change to one column.  NULL / 0 fields leave that aspect as it is. */
typedef struct LanceColumnAlteration {
    const char* path;                    /* required: the column ("parent.child" when nested) */
    const char* rename;                  /* NULL = keep the name; "" is an error */
    int32_t nullable_mode;               /* a LanceColumnNullableMode */
    const struct ArrowSchema* data_type; /* NULL = keep the type; borrowed, never released */
} LanceColumnAlteration;

/**
 * Renames columns, changes their nullability or casts them to another type.
 *
 * Renames and nullability changes copy no data and keep the column's
 * indices.  A cast rewrites the column; the Lance core refuses to cast a
 * column that has an index (drop the index first, recreate it after).
 * @param alterations  Borrowed: `num_alterations` (at least 1) entries.
 * @return 0, or -1 with LANCE_ERR_INVALID_ARGUMENT for an entry that asks
 *         for nothing, a bad mode, an unknown column, a name already taken,
 *         an impossible cast, a cast of an indexed column, or NOT NULL over
 *         a column that holds NULLs.
 */
int32_t lance_dataset_alter_columns(LanceDataset* dataset, const LanceColumnAlteration* alterations,
                                    size_t num_alterations);

/** A new column computed by an SQL expression over existing columns. */
typedef struct LanceSqlColumn {
    const char* name;       /* required, non-empty, not a column already */
    const char* expression; /* required, non-empty, e.g. "id * 2" */
} LanceSqlColumn;

/**
 * Adds columns computed from SQL expressions.
 *
 * They are computed row by row, over the existing columns; new column
 * files are written for every fragment.
 * @param columns     Borrowed: `num_columns` (at least 1) entries.
 * @param batch_size  Rows read per batch; 0 = Lance's default; more than
 *                    UINT32_MAX is LANCE_ERR_INVALID_ARGUMENT.
 * @return 0, or -1 with LANCE_ERR_INVALID_ARGUMENT for an empty name or
 *         expression, bad SQL, an unknown column in an expression, or a
 *         name already taken.
 */
int32_t lance_dataset_add_columns_sql(LanceDataset* dataset, const LanceSqlColumn* columns, size_t num_columns,
                                      uint64_t batch_size);

/**
 * Adds columns whose every value is NULL.
 *
 * Metadata only: nothing is written until rows are.
 *
 * @param schema  Borrowed, never released: a struct schema of the new
 *                columns, at least one, each nullable.
 * @return 0, or -1: LANCE_ERR_INVALID_ARGUMENT for a NULL, released or
 *         empty schema, a non-nullable field or a name already taken;
 *         LANCE_ERR_NOT_SUPPORTED on a dataset of the legacy file format.
 */
int32_t lance_dataset_add_columns_nulls(LanceDataset* dataset, const struct ArrowSchema* schema);

/**
 * Adds the columns of a stream, aligned by position.
 *
 * The stream's rows line up by position with the dataset's rows in fragment
 * order (deleted rows excluded); it must hold exactly as many rows as the
 * dataset.
 * @param stream      Consumed, whatever the result (a NULL stream is
 *                    LANCE_ERR_INVALID_ARGUMENT, with nothing consumed).
 * @param batch_size  Rows read per batch; 0 = Lance's default; more than
 *                    UINT32_MAX is LANCE_ERR_INVALID_ARGUMENT.
 * @return 0, or -1 with LANCE_ERR_INVALID_ARGUMENT for a stream missing its
 *         callbacks, a row total different from the dataset's, or a name
 *         already taken.
 */
int32_t lance_dataset_add_columns_stream(LanceDataset* dataset, struct ArrowArrayStream* stream, uint64_t batch_size);

/* ========================================================================
 * Scan and search
 * ======================================================================== */

typedef struct LanceScanner LanceScanner;
typedef struct LanceBatch LanceBatch;

typedef enum {
    LANCE_DTYPE_FLOAT32 = 0,
    LANCE_DTYPE_FLOAT16 = 1, /* IEEE half precision, passed as uint16_t bits */
    LANCE_DTYPE_FLOAT64 = 2,
    LANCE_DTYPE_UINT8 = 3,
    LANCE_DTYPE_INT8 = 4
} LanceDataType;

typedef enum {
    LANCE_METRIC_L2 = 0,
    LANCE_METRIC_COSINE = 1,
    LANCE_METRIC_DOT = 2,
    LANCE_METRIC_HAMMING = 3 /* uint8 vectors only */
} LanceMetricType;

/** Speed against recall of an approximate k-NN search (lance_scanner_set_approx_mode()). */
typedef enum {
    LANCE_APPROX_MODE_FAST = 0,    /* lower latency, may lower recall */
    LANCE_APPROX_MODE_NORMAL = 1,  /* Lance's default balance */
    LANCE_APPROX_MODE_ACCURATE = 2 /* higher recall, may raise latency */
} LanceApproxMode;

/* ---- Scanners ---- */

/**
 * Creates a scanner over the handle's current version.
 *
 * The scanner keeps that version even if the handle later moves.
 *
 * @param dataset  Borrowed.
 * @param columns  Borrowed: a NULL-terminated array of column names to
 *                 project, or NULL for all columns.
 * @param filter   Borrowed: an SQL predicate (e.g. "id >= 10 AND tag = 'a'"),
 *                 or NULL for none.
 * @return Produced: close with lance_scanner_close(); NULL on error.  An
 *         unknown column or a malformed filter fails here, with a message
 *         that names it.
 */
LanceScanner* lance_scanner_new(const LanceDataset* dataset, const char* const* columns, const char* filter);

/**
 * Closes a scanner.
 *
 * NULL is a no-op; close each scanner once.  Streams it exported
 * (lance_scanner_to_arrow_stream(), lance_scanner_scan_async()) stay valid.
 * A lance_scanner_poll_next() waker not yet running is dropped uncalled,
 * and one running on another thread is waited for: after close returns no
 * waker of the scanner runs, so a waker must never close its own scanner
 * (or wait for a thread that does).
 */
void lance_scanner_close(LanceScanner* scanner);

/* ---- Settings: rows, columns, batches and fragments ---- */

/*
 * Scanner settings: when they may be set, and their errors.
 *
 * Each returns 0, or -1 with LANCE_ERR_INVALID_ARGUMENT for a NULL
 * scanner, a bad value, or once scanning has begun: every setting of this
 * section is fixed by the scanner's first stream, whichever call made it
 * (lance_scanner_next(), lance_scanner_to_arrow_stream(),
 * lance_scanner_scan_async(), lance_scanner_poll_next()).  Settings are
 * checked as they are made, against the scanner's version: a setting that
 * makes the scan invalid fails (with the core's code when the core refuses
 * the plan) and is not kept, the scanner staying as it was.
 */

/**
 * Returns at most `limit` rows (after `offset`).
 *
 * @param limit  -1 = no limit (the default); 0 and up = that many rows.
 *               Below -1: LANCE_ERR_INVALID_ARGUMENT.  A batch k-NN search
 *               (lance_scanner_nearest_batch()) refuses a limit, in either
 *               order; a MinHash search needs one.
 */
int32_t lance_scanner_set_limit(LanceScanner* scanner, int64_t limit);

/**
 * Skips the first `offset` rows of the result.
 *
 * @param offset  0 = none (the default); negative is
 *                LANCE_ERR_INVALID_ARGUMENT.  A batch k-NN search refuses
 *                an offset, in either order.
 */
int32_t lance_scanner_set_offset(LanceScanner* scanner, int64_t offset);

/**
 * The most rows in one batch the scan returns.
 *
 * @param batch_size  0 = Lance's default: 8192 rows on the local file
 *                    system; on an object store a quarter of its block
 *                    size in bytes when that is more (16384 for 64 KiB
 *                    blocks); the LANCE_DEFAULT_BATCH_SIZE environment
 *                    variable, when set, replaces that default.  Negative
 *                    is LANCE_ERR_INVALID_ARGUMENT.
 */
int32_t lance_scanner_set_batch_size(LanceScanner* scanner, int64_t batch_size);

/**
 * Adds the `_rowid` column (uint64, after the projected columns) when
 * `enable` is true; false (the default) leaves it out.  Required by
 * lance_scanner_set_include_deleted_rows().
 */
int32_t lance_scanner_with_row_id(LanceScanner* scanner, bool enable);

/**
 * Restricts the scan to the given fragments, in the given order.
 * @param ids  Borrowed; `len` fragment ids of the scanner's version, each at
 *             most once.  len = 0 removes the restriction.
 */
int32_t lance_scanner_set_fragment_ids(LanceScanner* scanner, const uint64_t* ids, size_t len);

/* ---- Vector search: the query, the index and its segments ---- */

/**
 * Makes the scan a k-nearest-neighbour search.
 *
 * The result holds the k rows closest to the query, nearest first, with a
 * float32 `_distance` column.
 *
 * @param column        Borrowed: a FixedSizeList vector column.
 * @param query_data    Borrowed: `query_len` elements of `element_type`
 *                      (copied; may be freed after the call).
 * @param query_len     The column's dimension.
 * @param element_type  A LanceDataType matching the column's element type.
 * @param k             At least 1.
 * A scanner with a full-text search (either order) refuses it:
 * LANCE_ERR_INVALID_ARGUMENT.
 */
int32_t lance_scanner_nearest(LanceScanner* scanner, const char* column, const void* query_data, size_t query_len,
                              LanceDataType element_type, uint32_t k);

/**
 * Makes the scan a multivector k-nearest-neighbour search.
 *
 * It searches a column of type List<FixedSizeList<float16/32/64>> (no null
 * vectors or elements): a row's distance is the sum, over the query's
 * vectors, of each one's smallest distance to the row's vectors (L2 unless
 * lance_scanner_set_metric() says otherwise); the k nearest rows come first,
 * with a float32 `_distance` column.  The refine factor defaults to 1 here.
 *
 * @param column        Borrowed: the multivector column.
 * @param query_data    Borrowed: `num_vectors` rows of `dimension` elements
 *                      of `element_type`, row-major (copied).
 * @param dimension     The column's vector dimension, at least 1.
 * @param num_vectors   1 .. 128.
 * @param element_type  The column's element type, or LANCE_DTYPE_FLOAT32
 *                      (converted to it).
 * @param k             At least 1; num_vectors * k and refine_factor * k
 *                      must stay within 100000 (refine factor settings are
 *                      checked against it too).
 * @return 0, or -1: LANCE_ERR_INVALID_ARGUMENT (NULL, zero or out-of-range
 *         sizes, a column that is not a multivector column, another element
 *         type, a wrong dimension, a full-text search or a scalar index
 *         segment on the scanner), LANCE_ERR_NOT_FOUND (no such column).
 */
int32_t lance_scanner_nearest_multivector(LanceScanner* scanner, const char* column, const void* query_data,
                                          size_t dimension, size_t num_vectors, LanceDataType element_type, uint32_t k);

/**
 * Runs a batch of k-nearest-neighbour queries in one scan.
 *
 * Up to 128 independent queries: each query gives the k rows nearest to it,
 * as lance_scanner_nearest() with that query alone would, and the output
 * gains an int32 column `query_index` (0-based) naming the query each row
 * answers.  Rows come query by query, in query order, nearest first within a
 * query.  Every other setting of the scanner (filter, prefilter, projection,
 * index segments, nprobes, refine factor, metric, use_index, distance range
 * excepted) applies to each query.
 *
 * @param column        Borrowed: a FixedSizeList vector column.
 * @param query_data    Borrowed: `num_queries` vectors of `dimension`
 *                      elements of `element_type`, one after another
 *                      (copied; at most 64 MiB).
 * @param dimension     The column's dimension, at least 1.
 * @param num_queries   1 .. 128.
 * @param element_type  A LanceDataType matching the column's element type.
 * @param k             At least 1; num_queries * k at most 100000.
 * @return 0, or -1: LANCE_ERR_NOT_FOUND (no such column);
 *         LANCE_ERR_INVALID_ARGUMENT: NULL or out-of-range sizes, a column
 *         that is not a FixedSizeList vector column (a multivector column
 *         takes lance_scanner_nearest_multivector()), a dimension other than
 *         the column's, a full-text search on the scanner, a limit or offset
 *         set on the scanner (in either order: a global limit has no meaning
 *         across queries), a distance range, or a scan already started.
 */
int32_t lance_scanner_nearest_batch(LanceScanner* scanner, const char* column, const void* query_data, size_t dimension,
                                    size_t num_queries, LanceDataType element_type, uint32_t k);

/**
 * Keeps only k-NN results within a distance range.
 *
 * The range applies to a single-vector k-NN search, whose results keep
 * `_distance` in [lower, upper): at most k rows still, nearest first,
 * possibly fewer.  Distances are those of the search's metric (squared L2
 * for L2).  It may be set before lance_scanner_nearest(); a scan without
 * a k-NN search ignores it.
 *
 * @param lower  Borrowed: NULL = no lower bound; otherwise a finite value.
 * @param upper  Borrowed: NULL = no upper bound; otherwise a finite value.
 *               Both NULL clears the range.
 * @return 0, or -1 with LANCE_ERR_INVALID_ARGUMENT: a bound that is NaN or
 *         infinite, lower > upper, a batch or multivector query on the
 *         scanner (in either order), or a scan already started.
 */
int32_t lance_scanner_set_distance_range(LanceScanner* scanner, const float* lower, const float* upper);

/**
 * IVF partitions to probe.
 *
 * Sets both the lower and the upper bound to `n` (as
 * lance_scanner_set_minimum_nprobes() and _set_maximum_nprobes() both with
 * `n`).  Without any of the three, Lance probes adaptively: at least one
 * partition, more until it has k results and its search-effort target is met.
 * n = 0 gives LANCE_ERR_INVALID_ARGUMENT.
 */
int32_t lance_scanner_set_nprobes(LanceScanner* scanner, uint32_t n);
/**
 * Re-ranks k-NN candidates by their exact distance.
 *
 * An indexed k-NN search fetches refine_factor * k candidates and
 * re-ranks them; the exact distance is read from the vector column.
 * @param f  0 = no refine (the default; a multivector search defaults to
 *           1).  For a multivector search refine_factor * k must stay
 *           within 100000, else LANCE_ERR_INVALID_ARGUMENT.
 */
int32_t lance_scanner_set_refine_factor(LanceScanner* scanner, uint32_t f);

/**
 * The breadth of an HNSW search.
 *
 * Candidates kept while walking an HNSW index's graph; more raises recall
 * and latency.  Index types without HNSW ignore it.
 * @param e  0 = Lance's default (k + k / 2).
 */
int32_t lance_scanner_set_ef(LanceScanner* scanner, uint32_t e);

/**
 * The distance metric of the k-NN search.
 *
 * For k-NN and multivector searches; it may be set before the query.
 * Without it the search takes the index's metric, or L2 without an
 * index.
 * @param metric  A LanceMetricType; another value is
 *                LANCE_ERR_INVALID_ARGUMENT.
 */
int32_t lance_scanner_set_metric(LanceScanner* scanner, LanceMetricType metric);

/**
 * Whether the k-NN search uses the vector index.
 *
 * false: the k-NN search reads every vector and computes exact distances
 * (a flat search) even when the column has a vector index.  true (the
 * default): it uses the index when there is one.  Scalar indices are set
 * apart: lance_scanner_set_use_scalar_index().
 */
int32_t lance_scanner_set_use_index(LanceScanner* scanner, bool enable);

/**
 * true: the filter is applied before the k-NN search, which then returns
 * the k nearest of the rows that match.  false (the default): the search
 * runs first and the filter after it, so fewer than k rows may remain.
 */
int32_t lance_scanner_set_prefilter(LanceScanner* scanner, bool enable);

/**
 * Scopes a filtered scan to one scalar index segment.
 *
 * The scan also keeps to the fragments given with
 * lance_scanner_set_fragment_ids(), which must be set (in either order)
 * before the scan starts: without them the stream is refused with
 * LANCE_ERR_INVALID_ARGUMENT when it starts.  The fragments are read with
 * every scalar index off and the whole filter checked on each row; limit and
 * offset apply after the filter.  Lance 14.0.2 cannot pin a scan's
 * scalar-index search to one segment (its segment selection is private to
 * the core; docs/core-references.md), so this library always takes
 * upstream's unindexed path: the rows are exact, the segment does not speed
 * the search up.
 *
 * @param segment_uuid  Borrowed: 16 bytes (copied), an index segment of the
 *                      scanner's version (otherwise
 *                      LANCE_ERR_INVALID_ARGUMENT); NULL clears.
 * A k-NN or full-text search, or lance_scanner_set_include_deleted_rows(),
 * on the scanner is refused with it (LANCE_ERR_INVALID_ARGUMENT), in either
 * order.
 */
int32_t lance_scanner_set_scalar_index_segment(LanceScanner* scanner, const uint8_t* segment_uuid);

/**
 * Pins the k-NN search to chosen segments of the vector index.
 *
 * @param segment_uuids  Borrowed: `len` UUIDs of 16 raw bytes each, packed
 *                       (as lance_dataset_index_segments() writes them).
 *                       len = 0 removes the pin.
 */
int32_t lance_scanner_set_index_segments(LanceScanner* scanner, const uint8_t* segment_uuids, size_t len);

/* ---- Vector search: probe bounds, approximation, parallelism ---- */

/*
 * When the probe, approximation and parallelism settings apply.
 *
 * Like the tuning settings below these are refused with
 * LANCE_ERR_INVALID_ARGUMENT once scanning has begun (a first
 * lance_scanner_next() or lance_scanner_to_arrow_stream()).  They may be set
 * before lance_scanner_nearest() and apply to the k-NN search when there is
 * one; a scan without a k-NN query ignores them.
 */

/**
 * The least number of IVF partitions a k-NN search probes.
 *
 * Lance's default: 1; Lance's adaptive probing may probe more, up to the
 * maximum, to find k results.  `minimum_nprobes` must be at least 1 and not
 * above a maximum already set; a bad value is refused and neither bound
 * changes.
 */
int32_t lance_scanner_set_minimum_nprobes(LanceScanner* scanner, uint32_t minimum_nprobes);

/**
 * The most IVF partitions a k-NN search probes.
 *
 * For its first round and for the extra partitions it probes when it runs
 * short of k candidates, as a prefiltered search can (Lance's default: all of
 * them).  `maximum_nprobes` must be at least 1 and not below a minimum
 * already set; a bad value is refused and neither bound changes.  Both bounds
 * at the index's partition count make an IVF_FLAT search exact.
 */
int32_t lance_scanner_set_maximum_nprobes(LanceScanner* scanner, uint32_t maximum_nprobes);

/**
 * Speed against recall, a LanceApproxMode (default NORMAL).
 *
 * In Lance 14.0.2 it is used by IVF_RQ indices and by prefiltered HNSW
 * searches (FAST turns on ACORN traversal); other index types ignore it.
 * Out of range: LANCE_ERR_INVALID_ARGUMENT.
 */
int32_t lance_scanner_set_approx_mode(LanceScanner* scanner, LanceApproxMode approx_mode);

/**
 * How many IVF partitions one k-NN query searches at once.
 *
 * -1 = the CPU pool size, 0 = automatic (the default; today sequential),
 * 1 = sequential, > 1 = that many in parallel, capped at the CPU pool size.
 * Below -1: LANCE_ERR_INVALID_ARGUMENT.
 */
int32_t lance_scanner_set_query_parallelism(LanceScanner* scanner, int32_t query_parallelism);

/* ---- Scan tuning ---- */

/*
 * Scan tuning: the errors, and when the settings are fixed.
 *
 * Each returns 0, or -1 with LANCE_ERR_INVALID_ARGUMENT for a bad value, for
 * a combination Lance refuses (the setting is then not kept), or once
 * scanning has begun.  Every setting of a scanner, of this group, of the two
 * groups around it and the older ones above (lance_scanner_set_limit() to
 * lance_scanner_set_index_segments()) alike, is fixed by its first stream:
 * lance_scanner_next(), lance_scanner_to_arrow_stream(), or an async scan.
 * Only lance_scanner_with_row_address() (a
 * column) and lance_scanner_set_include_deleted_rows() change what a scan
 * returns; scan_in_order(false) may change the order of the rows.
 */

/**
 * Target bytes per batch; `batch_size_bytes` must be at least 1.
 *
 * When a row batch size (lance_scanner_set_batch_size()) is also set, Lance 14.0.2 applies
 * both limits and whichever a batch reaches first ends it.  Refused while strict batch size is
 * on (see lance_scanner_set_strict_batch_size()).
 */
int32_t lance_scanner_set_batch_size_bytes(LanceScanner* scanner, uint64_t batch_size_bytes);

/**
 * Bytes of I/O the scan may hold before it is decoded, 1 .. INT64_MAX
 * (default: chosen by the object store).  It bounds buffered I/O, not the
 * scan's total memory.
 */
int32_t lance_scanner_set_io_buffer_size(LanceScanner* scanner, uint64_t io_buffer_size_bytes);

/**
 * The most batches the scan decodes at once; more uses more memory and cores.
 *
 * Default: the size of the core's compute pool ("Process budget": cores -
 * 2, at least 1, or LANCE_CPU_THREADS).
 *
 * @param batch_readahead  At least 1; 0 is LANCE_ERR_INVALID_ARGUMENT.
 */
int32_t lance_scanner_set_batch_readahead(LanceScanner* scanner, size_t batch_readahead);

/**
 * The most fragments whose reads are scheduled at once.
 *
 * In ordered and unordered scans alike (1 = one fragment at a time).
 * Default: the core's, which depends on the store's I/O parallelism.
 * @param fragment_readahead  At least 1; 0 is LANCE_ERR_INVALID_ARGUMENT.
 */
int32_t lance_scanner_set_fragment_readahead(LanceScanner* scanner, size_t fragment_readahead);

/**
 * The number of partitions of the core's physical plan.
 *
 * Its partitions are the work that can run in parallel.  Default: the
 * size of the core's compute pool, as for
 * lance_scanner_set_batch_readahead().
 * @param target_parallelism  At least 1; 0 is LANCE_ERR_INVALID_ARGUMENT.
 */
int32_t lance_scanner_set_target_parallelism(LanceScanner* scanner, size_t target_parallelism);

/**
 * true (the default): batches come in the dataset's order.  false: each batch
 * as soon as it is ready, in no fixed order; the set of rows is the same.
 */
int32_t lance_scanner_set_scan_in_order(LanceScanner* scanner, bool scan_in_order);

/**
 * false: scalar indices are not used to evaluate the filter (default true).
 * Separate from lance_scanner_set_use_index(), which is about the vector
 * index.
 */
int32_t lance_scanner_set_use_scalar_index(LanceScanner* scanner, bool use_scalar_index);

/**
 * true: every batch but the last holds exactly the row batch size
 * (lance_scanner_set_batch_size(), or Lance's default).  Refused while a byte
 * batch size is set (lance_scanner_set_batch_size_bytes()).  Default false.
 */
int32_t lance_scanner_set_strict_batch_size(LanceScanner* scanner, bool strict_batch_size);

/**
 * Whether the scan skips data by the files' statistics.
 *
 * false: the scan does not use the files' statistics to skip data it can
 * tell holds no matching row; it reads everything the filter could need.
 * true (the default): it does.  The rows are the same either way: this is
 * for diagnosis and benchmarks.
 */
int32_t lance_scanner_set_use_stats(LanceScanner* scanner, bool use_stats);

/**
 * Adds the `_rowaddr` column (uint64: fragment id << 32 | row offset in the
 * fragment) when `enable` is true.
 */
int32_t lance_scanner_with_row_address(LanceScanner* scanner, bool enable);

/**
 * Returns deleted rows too.
 *
 * true: deleted rows that are still in their data files are returned too,
 * with a NULL `_rowid`; their other columns hold the values they had.
 * Requires the `_rowid` column: call lance_scanner_with_row_id(scanner, true)
 * first, otherwise this is refused.  Fragments deleted as a whole are not in
 * the scanner's version and give no rows.  Lance refuses it with a k-NN
 * search (LANCE_ERR_INVALID_ARGUMENT).  With a filter that a scalar index
 * answers, the index leaves the deleted rows out: to see them, turn scalar
 * indices off too (lance_scanner_set_use_scalar_index(scanner, false)).
 */
int32_t lance_scanner_set_include_deleted_rows(LanceScanner* scanner, bool include_deleted_rows);

/* ---- Filters and scan statistics ---- */

/**
 * Sets the main filter from a Substrait expression.
 *
 * An ExtendedExpression holding one boolean expression; it takes
 * precedence over lance_scanner_new()'s SQL filter, and a second call
 * replaces the first.
 *
 * The expression's field references are resolved against the dataset's
 * schema (the schema the ExtendedExpression declares must name the
 * dataset's columns).  Bytes that are not such an expression, or that name
 * columns the dataset lacks, fail here with LANCE_ERR_INVALID_ARGUMENT and
 * the scanner is unchanged.
 *
 * @param bytes  Borrowed: `len` bytes (copied); NULL or len = 0 gives
 *               LANCE_ERR_INVALID_ARGUMENT.
 */
int32_t lance_scanner_set_substrait_filter(LanceScanner* scanner, const uint8_t* bytes, size_t len);

/**
 * Adds an SQL predicate to the filter.
 *
 * The predicate is ANDed with the main filter (the Substrait filter if set,
 * else lance_scanner_new()'s SQL filter) and with every other additional
 * filter.  Each predicate is parsed on its own, so one cannot change how
 * another groups.  A malformed predicate or an unknown column fails here
 * (LANCE_ERR_INVALID_ARGUMENT) and is not kept.
 * @param filter  Borrowed: a non-empty SQL predicate (copied).
 */
int32_t lance_scanner_additional_sql_filter(LanceScanner* scanner, const char* filter);

/** What a LanceScanMetric counts. */
typedef enum {
    LANCE_SCAN_METRIC_COUNT = 0,           /* an accumulated count */
    LANCE_SCAN_METRIC_TIME_NANOSECONDS = 1 /* an accumulated duration, in ns */
} LanceScanMetricKind;

/** One named diagnostic metric of a scan.  `name` is NOT NUL-terminated. */
typedef struct {
    const char* name; /* borrowed: valid while the callback runs */
    size_t name_len;
    LanceScanMetricKind kind;
    uint64_t value;
} LanceScanMetric;

/**
 * Execution statistics of one scan stream, read to its end.  Timings may
 * overlap (work runs in parallel), so they do not add up to wall time.
 */
typedef struct {
    uint64_t iops;     /* I/O operations */
    uint64_t requests; /* storage requests (after coalescing) */
    uint64_t bytes_read;
    uint64_t indices_loaded;          /* top-level indices opened (to see whether a scan
                                         used an index, read index_comparisons) */
    uint64_t index_partitions_loaded; /* index partitions loaded */
    uint64_t index_comparisons;       /* meaning depends on the index type */
    const LanceScanMetric* metrics;   /* borrowed; NULL when metrics_len is 0 */
    size_t metrics_len;               /* names are diagnostic only, in no fixed order */
} LanceScanStatistics;

/** Receives a stream's statistics; `statistics` is borrowed for the call only. */
typedef void (*LanceScanStatisticsCallback)(void* callback_ctx, const LanceScanStatistics* statistics);

/**
 * Registers a callback for each stream's statistics.
 *
 * It receives the statistics of each stream of this scanner that is read
 * to its end.  A second registration replaces the first.  Refused with
 * LANCE_ERR_INVALID_ARGUMENT once scanning has begun (as the tuning
 * settings) and for a NULL callback.
 *
 * When it fires: once per stream, when the stream first reports its end, for
 * lance_scanner_next()'s iteration (inside the call that returns 1) and for
 * each lance_scanner_to_arrow_stream() stream (inside the get_next that
 * yields the end).  Never for a stream that failed before its end, even if
 * it is read on, and never for one released before its end.
 *
 * Threads: it runs on the thread that made that call.  Two streams of one
 * scanner read on two threads may run it at the same time, so it must be
 * thread-safe in that case.  An exported stream may run it after the scanner
 * was closed: `callback` and `callback_ctx` must stay valid until the scanner
 * is closed and every stream made from it is released.
 *
 * Inside the callback: do not call lance-c (any call fails with
 * LANCE_ERR_INVALID_ARGUMENT), do not touch any stream of this scanner, and
 * return normally (no longjmp, no C++ exception).
 *
 * @param callback_ctx  Passed back unchanged; may be NULL.
 */
int32_t lance_scanner_set_statistics_callback(LanceScanner* scanner, LanceScanStatisticsCallback callback,
                                              void* callback_ctx);

/* ---- Reading the results ---- */

/**
 * Runs the scan as an Arrow stream.
 *
 * May be called more than once; each call runs the scan anew, independently
 * of lance_scanner_next().
 *
 * @param out  Borrowed out parameter; on success holds a produced stream the
 *             caller releases with out->release(out).  The stream stays
 *             valid after the scanner is closed.  Its get_next blocks.
 */
int32_t lance_scanner_to_arrow_stream(LanceScanner* scanner, struct ArrowArrayStream* out);

/**
 * Reads the scanner's next batch, blocking.
 *
 * @param out  Borrowed out parameter: a produced batch (free it with
 *             lance_batch_free()) when 0 is returned, otherwise NULL.
 * @return 0 = a batch, 1 = the end of the scan, -1 = error.
 */
int32_t lance_scanner_next(LanceScanner* scanner, LanceBatch** out);

/**
 * Exports a batch as a struct array and its schema.  The batch stays valid.
 * @param out_array, out_schema  Borrowed out parameters holding, on success,
 *        produced structs the caller releases with their release callbacks.
 */
int32_t lance_batch_to_arrow(const LanceBatch* batch, struct ArrowArray* out_array, struct ArrowSchema* out_schema);

/**
 * The number of rows in a batch.
 *
 * No I/O.
 *
 * @param batch  Borrowed.
 * @return The count, or 0 with LANCE_ERR_INVALID_ARGUMENT for a NULL
 *         `batch`.
 */
uint64_t lance_batch_num_rows(const LanceBatch* batch);

/**
 * Frees a batch.
 *
 * Arrays exported from it with lance_batch_to_arrow() stay valid (they
 * hold their own references to its buffers).
 *
 * @param batch  Consumed.  NULL is a no-op.
 * It cannot fail and leaves this thread's last error as it was.
 */
void lance_batch_free(LanceBatch* batch);

/* ========================================================================
 * Async scan
 *
 * Two ways to read a scan without blocking the calling thread: a stream
 * handed over through a callback once the scan has started, and polling a
 * scanner's batches with a waker, the C form of a Rust or C++ coroutine's
 * poll.  Both run the scan on the library's runtime.
 * ======================================================================== */

typedef enum {
    LANCE_POLL_READY = 0,    /* *out holds a batch */
    LANCE_POLL_PENDING = 1,  /* not ready: the waker will be called */
    LANCE_POLL_FINISHED = 2, /* the scan has no more batches */
    LANCE_POLL_ERROR = -1    /* see lance_last_error_code() */
} LancePollStatus;

/** The completion callback of lance_scanner_scan_async(). */
typedef void (*LanceCallback)(void* ctx, int32_t status, void* result);
/** Called when a LANCE_POLL_PENDING scanner has its next result ready. */
typedef void (*LanceWaker)(void* ctx);

/**
 * Starts a scan asynchronously.
 *
 * It runs on the library's runtime, which hands the stream to `callback`
 * once the scan has started.  Like lance_scanner_to_arrow_stream(), each
 * call runs the scan anew with the scanner's settings as they are at the
 * call; the scanner may be closed right after the call returns.
 *
 * The callback fires exactly once per call, argument and setup failures
 * included, on a library thread (a runtime thread set aside for blocking
 * work, never an async worker, so the callback may block; it may even
 * read the stream there).  Only when the runtime cannot start does it run
 * on the caller's thread, before this call returns.  Callbacks of separate
 * calls may overlap.
 *   - Success: status 0, `result` is a produced `struct ArrowArrayStream*`,
 *     allocated by the library: pass it to lance_scanner_async_stream_free()
 *     exactly once (also after releasing it yourself).  Its get_next blocks.
 *   - Failure: status -1, `result` NULL, and the error state of the
 *     callback's thread is set just before the call (read it with
 *     lance_last_error_code() inside the callback).  A NULL scanner, for
 *     example, gives LANCE_ERR_INVALID_ARGUMENT.
 *
 * @param scanner       Borrowed for the call only.
 * @param callback      Must not be NULL; a NULL callback fails on the
 *                      caller's thread with LANCE_ERR_INVALID_ARGUMENT (there
 *                      is nothing to call).  It must return normally.
 * @param callback_ctx  Passed to the callback as is; may be NULL.  It must
 *                      stay valid until the callback has run.
 */
void lance_scanner_scan_async(const LanceScanner* scanner, LanceCallback callback, void* callback_ctx);

/**
 * Frees a stream from lance_scanner_scan_async(): runs its `release` if it
 * is still set, then frees the struct itself.  NULL is a no-op.  Only for
 * scan_async results: never for a stream in the caller's storage.
 */
void lance_scanner_async_stream_free(struct ArrowArrayStream* stream);

/**
 * Reads the scanner's next batch without blocking.
 *
 * The first call starts the scanner's own iteration (settings can no longer
 * change, and lance_scanner_next() refuses it from then on; a scanner
 * already read with lance_scanner_next() cannot be polled).  Each fetch
 * runs as one task on the runtime:
 *   - LANCE_POLL_READY: `*out` is a produced batch (lance_batch_free()).
 *   - LANCE_POLL_PENDING: the next result is not ready.  The waker is called
 *     once, from a library thread (never an async worker), after the result
 *     is ready; then poll again.  Polling again before that replaces the
 *     waker: only the last one given for a fetch is called, and a waker is
 *     never called for a call that did not return PENDING.
 *   - LANCE_POLL_FINISHED: no more batches; further calls return it again.
 *   - LANCE_POLL_ERROR: see lance_last_error_code(): a bad argument
 *     (nothing changes) or a read error, which ends the iteration (further
 *     calls return FINISHED).
 * `*out` is NULL for every status but READY.
 *
 * @param waker      Must not be NULL.  It must return normally, must not
 *                   close the scanner or call into it, and with its ctx must
 *                   stay valid until it has run or lance_scanner_close()
 *                   has returned.
 * @param waker_ctx  Passed to the waker as is; may be NULL.
 * @param out        Borrowed out parameter (see above).
 */
LancePollStatus lance_scanner_poll_next(LanceScanner* scanner, LanceWaker waker, void* waker_ctx, LanceBatch** out);

/* ========================================================================
 * Full-text search
 *
 * BM25 search over INVERTED indices, and near-duplicate search over
 * MINHASHLSH indices (lance_scanner_minhash_search(), at the end).
 *
 * BM25 search over INVERTED indices (create one with
 * lance_dataset_create_scalar_index(..., LANCE_SCALAR_INVERTED, ...); a
 * phrase query needs one built with positions: params_json
 * "{\"with_position\": true}").  A full-text scan returns the matching rows,
 * best first, with a float32 `_score` column.  A scanner runs at most one
 * full-text search, and never together with lance_scanner_nearest():
 * combining them, in either order, gives LANCE_ERR_INVALID_ARGUMENT.
 * ======================================================================== */

typedef enum {
    /* Every fragment must be covered by the index, or preparation fails
       with LANCE_ERR_INDEX. */
    LANCE_FTS_COVERAGE_STRICT = 0,
    /* Rows in fragments the index does not cover are left out. */
    LANCE_FTS_COVERAGE_INDEX_ONLY = 1
} LanceFtsCoverageMode;

typedef enum {
    LANCE_FTS_MATCH_OPERATOR_OR = 0, /* a row matches any query term */
    LANCE_FTS_MATCH_OPERATOR_AND = 1 /* a row matches every query term */
} LanceFtsMatchOperator;

/** A prepared full-text query: immutable, shareable between threads. */
typedef struct LanceFtsQueryContext LanceFtsQueryContext;

/**
 * Makes the scan a full-text search for `query`'s terms (any of them).
 *
 * @param query               Borrowed UTF-8 text; the index's tokenizer
 *                            splits it into terms.
 * @param columns             Borrowed: a NULL-terminated array of the columns
 *                            to search, or NULL for every column with an
 *                            INVERTED index.  An empty array is invalid.
 * @param max_fuzzy_distance  0 = exact terms; n = terms within n edits.
 * @return 0, or -1: LANCE_ERR_INVALID_ARGUMENT (NULL or non-UTF-8 query, a
 *         scanner with a k-NN search or a query context, a scanner already
 *         iterating); an unindexed column fails here too, with the core's code.
 */
int32_t lance_scanner_full_text_search(LanceScanner* scanner, const char* query, const char* const* columns,
                                       uint32_t max_fuzzy_distance);

/**
 * Prepares a full-text match query.
 *
 * The query is on one column.  Preparing takes the handle's current
 * snapshot, finds every committed INVERTED segment of `column`, applies
 * `coverage_mode`, and plans the query, so a missing column or index fails
 * here.  The context lives in this process only.
 *
 * @param dataset             Borrowed.
 * @param column, query       Borrowed UTF-8; `column` non-empty.
 * @param match_operator      A LanceFtsMatchOperator.
 * @param max_fuzzy_distance  Must be 0 (prepared queries match exact terms).
 * @param coverage_mode       A LanceFtsCoverageMode.
 * @return Produced: close with lance_fts_query_context_close(); NULL on
 *         error: LANCE_ERR_INVALID_ARGUMENT (NULL, bad enum, fuzzy > 0),
 *         LANCE_ERR_NOT_FOUND (no such column, or it has no INVERTED index),
 *         LANCE_ERR_INDEX (STRICT and a fragment the index does not cover).
 */
LanceFtsQueryContext* lance_dataset_prepare_fts_match_query(const LanceDataset* dataset, const char* column,
                                                            const char* query, int32_t match_operator,
                                                            uint32_t max_fuzzy_distance, int32_t coverage_mode);

/**
 * Deprecated: prepare a full-text query.
 *
 * The same as lance_dataset_prepare_fts_match_query() with
 * LANCE_FTS_MATCH_OPERATOR_OR (a row matches on any of the query's terms).
 * Parameters, ownership and errors as there: `max_fuzzy_distance` must be
 * 0, `coverage_mode` a LanceFtsCoverageMode.
 * @return Produced: close with lance_fts_query_context_close(); NULL on
 *         error.
 */
LanceFtsQueryContext* lance_dataset_prepare_fts_query(const LanceDataset* dataset, const char* column,
                                                      const char* query, uint32_t max_fuzzy_distance,
                                                      int32_t coverage_mode);

/**
 * Prepares a full-text phrase query.
 *
 * The terms must occur in this order, with at most `slop` other positions
 * between them (0 = adjacent).  As lance_dataset_prepare_fts_match_query(),
 * and: `slop` negative gives LANCE_ERR_INVALID_ARGUMENT; an index built
 * without positions fails with the core's code
 * (LANCE_ERR_INVALID_ARGUMENT).
 */
LanceFtsQueryContext* lance_dataset_prepare_fts_phrase_query(const LanceDataset* dataset, const char* column,
                                                             const char* query, int32_t slop, int32_t coverage_mode);

/**
 * Closes a context.
 *
 * Scanners it was set on keep their own reference and go on running its
 * query.  Close it when no other call uses it.
 *
 * @param context  Consumed.  NULL is a no-op.
 * It cannot fail and leaves this thread's last error as it was.
 */
void lance_fts_query_context_close(LanceFtsQueryContext* context);

/**
 * Makes the scan run a prepared query; setting another context replaces it.
 *
 * @param context  Borrowed; the scanner keeps its own reference.  It must
 *                 come from the same LanceDataset handle as the scanner (an
 *                 equal URI and version do not count), and from the version
 *                 the scanner reads: otherwise LANCE_ERR_INVALID_ARGUMENT.
 *                 A scanner with a k-NN search or lance_scanner_full_text_search()
 *                 refuses it (LANCE_ERR_INVALID_ARGUMENT).
 */
int32_t lance_scanner_set_fts_query_context(LanceScanner* scanner, const LanceFtsQueryContext* context);

/**
 * Narrows the context's search to some of its segments.
 *
 * @param segment_uuids  Borrowed: `len` packed 16-byte UUIDs, each a segment
 *                       of the scanner's context, none repeated (otherwise
 *                       LANCE_ERR_INVALID_ARGUMENT, as is a scanner without a
 *                       context); len = 0 clears (with or without a context).
 * Lance 14.0.2 searches a full-text index whole (it allows a segment choice
 * for vector search only; docs/core-references.md), so a
 * strict subset of the context's segments gives LANCE_ERR_NOT_SUPPORTED;
 * naming all of them is accepted and changes nothing.
 */
int32_t lance_scanner_set_fts_index_segments(LanceScanner* scanner, const uint8_t* segment_uuids, size_t len);

/**
 * Near-duplicate search by MinHash.
 *
 * The scan returns at most `limit` rows, those whose `column` text is most
 * similar to `text` under the column's MINHASHLSH index (the Lance core's
 * MinHashQuery), with a float32 `_distance` column, 1 - the estimated Jaccard
 * similarity of their shingle sets, ascending.  Only the index's LSH candidates
 * (rows sharing a band with `text`) are returned, so fewer than `limit` rows
 * come back when fewer are similar.  `text` is tokenized and shingled exactly
 * as the indexed rows were.  A projection applies as to any scan (`_distance`
 * is added to it).
 *
 * Set the limit first (lance_scanner_set_limit()): without a limit this call
 * is LANCE_ERR_INVALID_ARGUMENT.
 * A scanner runs one search: with lance_scanner_nearest(), a full-text
 * search or lance_scanner_set_scalar_index_segment() it is
 * LANCE_ERR_INVALID_ARGUMENT, in either order.
 *
 * @param scanner  Borrowed; its settings can still change (nothing was
 *                 scanned yet).
 * @param column   Borrowed UTF-8, non-empty: a string column with a
 *                 MINHASHLSH index (lance_dataset_create_scalar_index(...,
 *                 LANCE_SCALAR_MINHASHLSH, ...) or its segments).
 * @param text     Borrowed UTF-8 (may be empty).
 * @return 0, or -1: LANCE_ERR_INVALID_ARGUMENT (NULL or empty column, NULL
 *         text, no limit, a second search, a started scanner, or a column
 *         the core cannot search: not a string, or without a MINHASHLSH
 *         index: the core's code and message).
 */
int32_t lance_scanner_minhash_search(LanceScanner* scanner, const char* column, const char* text);

/* ========================================================================
 * Random access
 * ======================================================================== */

/**
 * Reads rows by position.
 *
 * Positions in the handle's version: indices[i] is the 0-based position
 * among the live rows (deleted rows are not counted), in fragment order, as
 * a scan without filter yields them.
 * @param indices      Borrowed, `num_indices` entries; NULL only with 0.  The
 *                     rows come back in this order, repeats included.  An
 *                     index >= lance_dataset_count_rows() is
 *                     LANCE_ERR_INVALID_ARGUMENT.
 * @param columns      Borrowed.  NULL for every column, or a non-empty
 *                     NULL-terminated list of names (dataset order or not,
 *                     "_rowid" allowed); an unknown name is
 *                     LANCE_ERR_NOT_FOUND.
 * @param out          Borrowed out parameter; on success holds a produced
 *                     stream the caller releases with out->release(out).
 *                     The rows are read during the call: the stream holds
 *                     them, and stays valid after the dataset is closed.
 */
int32_t lance_dataset_take(const LanceDataset* dataset, const uint64_t* indices, size_t num_indices,
                           const char* const* columns, struct ArrowArrayStream* out);

/**
 * Reads rows by row id.
 *
 * The row ids are the "_rowid" a scan with lance_scanner_with_row_id()
 * yields from the same version.  Rows come back in the order of `row_ids`,
 * repeats included; ids of rows that are deleted or do not exist are skipped
 * by the Lance core, so the stream may hold fewer rows.
 * @param row_ids  Borrowed, `num_row_ids` entries; NULL only with 0.
 * @param columns, out  As for lance_dataset_take().
 */
int32_t lance_dataset_take_rows(const LanceDataset* dataset, const uint64_t* row_ids, size_t num_row_ids,
                                const char* const* columns, struct ArrowArrayStream* out);

/* ========================================================================
 * Blobs
 *
 * A Blob v2 column stores large binary values (images, audio, documents)
 * outside the column's pages: small values inline in the data file, larger
 * ones packed into shared side files or in a file of their own.  Such a
 * column is written as the Arrow extension type "lance.blob.v2" (pylance:
 * lance.blob.blob_field() and blob_array()), with file format 2.2 or later.
 *
 * A LanceBlobFile reads one value like a file: a size, a cursor starting at
 * 0, sequential reads from the cursor, and reads of any range that leave
 * the cursor alone.  Bytes are read from storage when asked for.  A handle
 * holds its own reference to the storage it reads, so it stays usable after
 * the dataset it came from is closed.  One thread at a time may use a
 * handle (any thread); separate handles are independent.
 * ======================================================================== */

typedef struct LanceBlobFile LanceBlobFile;

/**
 * Takes blob values by row id.
 *
 * The values of one blob column; the row ids are the `_rowid` values
 * of a scan with lance_scanner_with_row_id(), of the handle's version.
 *
 * @param dataset      Borrowed.
 * @param row_ids      Borrowed: `num_row_ids` ids; NULL only with 0 ids.
 *                     Repeats are allowed; the order is kept.
 * @param num_row_ids  0 writes nothing (`out` may be NULL) and succeeds when
 *                     `column` is a blob column (it is still checked).
 * @param column       Borrowed: the name of a Blob v2 column.
 *                     LANCE_ERR_NOT_FOUND when there is no such column,
 *                     LANCE_ERR_INVALID_ARGUMENT when it is not a blob
 *                     column.
 * @param out          Borrowed: room for `num_row_ids` pointers.  On
 *                     success out[i] is a produced handle (close it with
 *                     lance_blob_file_close()) for the value of row_ids[i],
 *                     or NULL when that value is null; an empty value gives
 *                     a handle of size 0.  On any error nothing is written.
 *
 * A row id that names no row of the version is an error, never a NULL:
 * LANCE_ERR_INVALID_ARGUMENT for an id past the rows ever written,
 * LANCE_ERR_NOT_SUPPORTED for the id of a deleted row (the Lance core's
 * classification).
 */
int32_t lance_dataset_take_blobs(const LanceDataset* dataset, const uint64_t* row_ids, size_t num_row_ids,
                                 const char* column, LanceBlobFile** out);

/**
 * Takes blob values by row position.
 *
 * As lance_dataset_take_blobs(), but indices[i] is the 0-based position
 * of a row among the live rows of the handle's version, in scan order
 * (deleted rows are not counted).  A position at or past
 * lance_dataset_count_rows() is LANCE_ERR_INVALID_ARGUMENT.
 */
int32_t lance_dataset_take_blobs_by_indices(const LanceDataset* dataset, const uint64_t* indices, size_t num_indices,
                                            const char* column, LanceBlobFile** out);

/**
 * The value's size in bytes, whatever the cursor.
 *
 * No I/O.
 *
 * @param blob  Borrowed.
 * @return The size; 0 both for an empty value and on error
 *         (LANCE_ERR_INVALID_ARGUMENT for a NULL `blob`).
 */
uint64_t lance_blob_file_size(const LanceBlobFile* blob);

/**
 * Reads the rest of a blob value.
 *
 * Copies the bytes from the cursor to the end of the value into `dst` and
 * moves the cursor to the end.  With the cursor at or past the end it
 * succeeds, copies nothing and leaves the cursor where it is.
 *
 * @param dst      Borrowed: `dst_len` writable bytes; NULL only with 0.
 * @param dst_len  Must be at least size - cursor; less is
 *                 LANCE_ERR_INVALID_ARGUMENT, with nothing read and the
 *                 cursor unchanged (read a part with
 *                 lance_blob_file_read_up_to()).
 */
int32_t lance_blob_file_read(LanceBlobFile* blob, uint8_t* dst, size_t dst_len);

/**
 * Reads up to `len` bytes of a blob value.
 *
 * Copies min(`len`, size - cursor) bytes from the cursor into `dst` and
 * advances the cursor by that many.  At or past the end, and for `len` 0,
 * it copies nothing.
 *
 * @param dst         Borrowed: `len` writable bytes; NULL only with 0.
 * @param bytes_read  Borrowed out parameter, must not be NULL: the number of
 *                    bytes copied (0 at the end).  Written on success only.
 */
int32_t lance_blob_file_read_up_to(LanceBlobFile* blob, uint8_t* dst, size_t len, size_t* bytes_read);

/**
 * Reads a byte range of a blob value.
 *
 * Copies exactly `len` bytes starting at byte `offset` of the value into
 * `dst`; the cursor does not move.  `len` 0 succeeds whatever `offset` is
 * (`dst` may be NULL).  A range that ends past the end of the value, or
 * whose end does not fit 64 bits, is LANCE_ERR_INVALID_ARGUMENT and
 * nothing is copied.
 *
 * @param dst  Borrowed: `len` writable bytes.
 */
int32_t lance_blob_file_read_range(const LanceBlobFile* blob, uint64_t offset, uint8_t* dst, size_t len);

/**
 * Moves the cursor to byte `pos`.  A position past the end is allowed;
 * reads from there copy nothing.
 */
int32_t lance_blob_file_seek(LanceBlobFile* blob, uint64_t pos);

/**
 * The cursor's position.
 *
 * 0 for a new handle, moved by the reads and lance_blob_file_seek() (it
 * may be past the end).  No I/O.
 * @param blob  Borrowed.
 * @param pos   Borrowed out parameter, must not be NULL; written on
 *              success only.
 * @return 0, or -1 with LANCE_ERR_INVALID_ARGUMENT (a NULL `blob` or
 *         `pos`).
 */
int32_t lance_blob_file_tell(const LanceBlobFile* blob, uint64_t* pos);

/**
 * Closes a blob handle.  NULL is a no-op.  It cannot fail and leaves this
 * thread's last error as it was.
 */
void lance_blob_file_close(LanceBlobFile* blob);

/* How a scan returns blob columns; the `handling` argument below is
   checked as an integer. */
typedef enum {
    /* The default: blob descriptors.
     *
     * A blob column comes as its descriptor, a struct: for Blob v2 {kind:
     * uint8, position: uint64, size: uint64, blob_id: uint32, blob_uri: utf8}
     * (where the bytes are stored), for a legacy blob column {position:
     * uint64, size: uint64}.  Read the bytes with lance_dataset_take_blobs(). */
    LANCE_BLOB_HANDLING_BLOBS_DESCRIPTIONS = 0,
    /* A blob column comes as its bytes: LargeBinary (Arrow format "Z"). */
    LANCE_BLOB_HANDLING_ALL_BINARY = 1,
    /* As BLOBS_DESCRIPTIONS: the Lance core describes only blob columns. */
    LANCE_BLOB_HANDLING_ALL_DESCRIPTIONS = 2
} LanceBlobHandling;

/**
 * Chooses how the scanner returns blob columns.
 *
 * A scanner setting: set it before the scan starts; afterwards it is
 * LANCE_ERR_INVALID_ARGUMENT.  Columns without blob metadata (plain
 * binary columns included) come as they are whatever the mode.
 *
 * @param handling  A LanceBlobHandling; other values are
 *                  LANCE_ERR_INVALID_ARGUMENT and change nothing.
 */
int32_t lance_scanner_set_blob_handling(LanceScanner* scanner, LanceBlobHandling handling);

/* ========================================================================
 * Indices
 * ======================================================================== */

typedef enum {
    LANCE_INDEX_IVF_FLAT = 101,
    LANCE_INDEX_IVF_SQ = 102,
    LANCE_INDEX_IVF_PQ = 103,
    LANCE_INDEX_IVF_HNSW_SQ = 104,
    LANCE_INDEX_IVF_HNSW_PQ = 105,
    LANCE_INDEX_IVF_HNSW_FLAT = 106,
    LANCE_INDEX_IVF_RQ = 107 /* RaBitQ; new in lance-c 0.2 */
} LanceVectorIndexType;

/*
 * Scalar index types: what each indexes and answers.
 *
 * Numbered as the Lance core numbers them (its IndexType); the gaps (6, 7,
 * 11) are the core's internal and FM indices, which are not built from
 * here, and are LANCE_ERR_INVALID_ARGUMENT.
 *
 *   type         column              answers (filters use it by themselves)
 *   BTREE        any orderable        =, <, >, BETWEEN, IN, IS NULL
 *   BITMAP       low cardinality      =, IN, IS NULL
 *   LABEL_LIST   List<T>              array_has_any / array_has_all
 *   INVERTED     string               lance_scanner_full_text_search()
 *   NGRAM        string               contains(col, 'x') (LIKE '%x%'-style
 *                                     substring filters)
 *   ZONEMAP      any orderable        range filters, by skipping zones whose
 *                                     min/max cannot match (best on sorted or
 *                                     clustered data)
 *   BLOOMFILTER  any hashable         = and IN, by skipping zones that
 *                                     cannot hold the value
 *   RTREE        geometry (GeoArrow)  st_intersects, st_contains, ... (the
 *                                     library's st_* filter functions)
 *   MINHASHLSH   string               lance_scanner_minhash_search()
 *                                     (near-duplicate text)
 */

/*
 * Scalar index types and their `params_json` keys.
 *
 * All the keys are optional; NULL or {} = the core's defaults.
 *
 *   BTREE        "zone_size" (rows per page of the lookup)
 *   BITMAP, LABEL_LIST: none
 *   INVERTED     the tokenizer: "base_tokenizer", "language", "with_position",
 *                "lower_case", "stem", "remove_stop_words",
 *                "custom_stop_words", "ascii_folding", "max_token_length",
 *                "min_ngram_length", "max_ngram_length", "prefix_only",
 *                "block_size", "memory_limit" (MiB), "num_workers", ...
 *   NGRAM        none
 *   ZONEMAP      "rows_per_zone" (integer >= 1, default 8192), "use_seeds"
 *                (bool)
 *   BLOOMFILTER  "number_of_items" (integer >= 1, items per zone, default
 *                8192), "probability" (false-positive rate, 0 < p < 1,
 *                default 0.00057)
 *   RTREE        "page_size" (integer >= 2, default 4096)
 *   MINHASHLSH   "num_hashes" (1..4096, a multiple of num_bands; default
 *                128), "num_bands" (1..256; default 16), "shingle_size"
 *                (tokens per shingle; default 3), "tokenizer" (an object of
 *                INVERTED's tokenizer keys; default lower-casing only)
 * For NGRAM, ZONEMAP, BLOOMFILTER, RTREE and MINHASHLSH a key the type does
 * not take, or a value of the wrong JSON type or out of the range above, is
 * LANCE_ERR_INVALID_ARGUMENT naming the key (the core would ignore an
 * unknown key silently); so are MinHash parameters out of range.  The four
 * older types pass their JSON to the core as upstream's library does: an
 * unknown key is ignored there.
 */
typedef enum {
    LANCE_SCALAR_BTREE = 1,
    LANCE_SCALAR_BITMAP = 2,
    LANCE_SCALAR_LABEL_LIST = 3,
    LANCE_SCALAR_INVERTED = 4,
    LANCE_SCALAR_NGRAM = 5,       /* new in lance-c 0.5 */
    LANCE_SCALAR_ZONEMAP = 8,     /* new in lance-c 0.5 */
    LANCE_SCALAR_BLOOMFILTER = 9, /* new in lance-c 0.5 */
    LANCE_SCALAR_RTREE = 10,      /* new in lance-c 0.5; needs the "geo" feature (default) */
    LANCE_SCALAR_MINHASHLSH = 12  /* new in lance-c 0.5 */
} LanceScalarIndexType;

/**
 * Vector index parameters.  A zero field means the default written next to
 * it; fields that do not apply to `index_type` are ignored.
 */
typedef struct LanceVectorIndexParams {
    LanceVectorIndexType index_type; /* required */
    LanceMetricType metric;          /* 0 = L2 */
    uint32_t num_partitions;         /* IVF partitions; 0 = chosen by Lance from the row count */
    uint32_t num_sub_vectors;        /* PQ sub-vectors; 0 = 16 (must divide the dimension) */
    uint32_t num_bits;               /* PQ: 0 = 8 (4 or 8); SQ: 0 = 8; RQ: bits per dimension,
                                        1..9, 0 = Lance's default (5) */
    uint32_t max_iterations;         /* k-means iterations (IVF and PQ); 0 = 50 */
    uint32_t hnsw_m;                 /* HNSW edges per node; 0 = 20 */
    uint32_t hnsw_ef_construction;   /* HNSW build breadth; 0 = 150 */
    uint32_t sample_rate;            /* training rows per centroid; 0 = 256 */
} LanceVectorIndexParams;

/**
 * IVF training options beyond LanceVectorIndexParams (upstream's, which cannot grow).
 *
 * Zeroed = the core's defaults: the same training as without options.  Taken by
 * lance_dataset_create_vector_index_v2() and lance_vector_model_train() (the
 * `training` field of their options), lance_index_segment_builder_set_training_options()
 * and lance_dataset_recommended_num_partitions().  A distributed training takes its seed
 * in lance_vector_training_new() and its partition count from
 * lance_dataset_recommended_num_partitions().
 *
 * target_partition_size    Rows per IVF partition.  When params->num_partitions is 0
 *     the partition count is rows / target_partition_size, clamped to 1..4096 (the
 *     core's rule; rows = the rows the build or training covers).  0 = the index
 *     type's default (the core's IndexType::target_partition_size): 4096 rows for
 *     IVF_FLAT and IVF_RQ, 8192 for IVF_SQ and IVF_PQ, 1048576 for the HNSW types.
 * streaming_sample_rate    Non-zero: streaming k-means.  The core loads at most
 *     num_partitions * streaming_sample_rate vectors at a time; above 256 partitions
 *     it trains weighted hierarchical k-means over a weighted coreset of each chunk,
 *     so memory is bounded by this rate, not by the sample (at most num_partitions *
 *     params->sample_rate vectors).  It streams only when this rate is below
 *     params->sample_rate (0 = 256), and logs "Start streaming IVF training" at
 *     LANCE_LOG_INFO; at or above it, it trains on one in-memory sample, as with 0
 *     (off, the default).  With fewer rows than num_partitions * params->sample_rate,
 *     the sample rate is lowered to the whole chunks the rows hold (at least one,
 *     trained without streaming).  Rationale: docs/core-references.md "Streaming training".
 * streaming_coreset_rate   The coreset budget, num_partitions * this vectors; 0 =
 *     bounded by streaming_sample_rate.  Needs streaming_sample_rate; above
 *     params->sample_rate it is the core's LANCE_ERR_INVALID_ARGUMENT when it runs.
 * streaming_refine_passes  Extra Lloyd passes over the sample after the coreset
 *     training, a chunk at a time (the core calls them experimental); 0 = none.
 *     Needs streaming_sample_rate.
 * A streaming rate without streaming_sample_rate is LANCE_ERR_INVALID_ARGUMENT
 * naming the field.
 */

/**
 * LanceVectorTrainingOptions: the seed, and the reserved field.
 *
 * use_seed, seed           use_seed non-zero: a reproducible training (the same seed,
 *     data, parameters and fragments give the same model and fingerprint in every
 *     run and process), run in the calling process as one worker of "Distributed
 *     index builds: distributed training" over the fragments trained on; its progress
 *     stages are a worker's ("training_sample", "training_ivf_round",
 *     "training_residuals", "training_pq_round"), a cancel returns LANCE_ERR_CANCELLED
 *     at the next chunk of work, and an IVF_RQ model's rotation is drawn from the seed
 *     too.  A column of vector lists is sampled by the core's sampler: not
 *     reproducible.  A seed with the streaming options is LANCE_ERR_NOT_SUPPORTED.
 *     Rationale: docs/core-references.md "Seeded training".
 * reserved                 0 (room for a later option); non-zero is
 *     LANCE_ERR_INVALID_ARGUMENT naming the field.
 */
typedef struct LanceVectorTrainingOptions {
    uint32_t target_partition_size;   /* 0 = the index type's default */
    uint32_t streaming_sample_rate;   /* 0 = no streaming */
    uint32_t streaming_coreset_rate;  /* 0 = bounded by streaming_sample_rate */
    uint32_t streaming_refine_passes; /* 0 = none */
    uint32_t use_seed;                /* non-zero: `seed` applies */
    uint32_t reserved;                /* 0 */
    uint64_t seed;
} LanceVectorTrainingOptions;

/**
 * Builds a vector index over the whole dataset and commits it.
 *
 * The handle moves to the new version.
 *
 * @param dataset     Borrowed.
 * @param column      Borrowed: a FixedSizeList<float32|float16|float64|uint8|int8>
 *                    column; LANCE_ERR_NOT_FOUND when it does not exist.
 * @param index_name  Borrowed; NULL = "<column>_idx".
 * @param params      Borrowed; must not be NULL.
 * @param replace     true = replace an index of the same name; false = that
 *                    is an error (LANCE_ERR_INDEX).
 */
int32_t lance_dataset_create_vector_index(LanceDataset* dataset, const char* column, const char* index_name,
                                          const LanceVectorIndexParams* params, bool replace);

/**
 * Builds a scalar index over the whole dataset and commits it.
 *
 * @param index_type   A LanceScalarIndexType; another value is
 *                     LANCE_ERR_INVALID_ARGUMENT.  A column of a type the
 *                     index cannot hold (NGRAM over integers, ...) is the
 *                     core's error, LANCE_ERR_INVALID_ARGUMENT.
 * @param params_json  Borrowed: NULL, or a JSON object of index-specific
 *                     parameters (the keys are listed at
 *                     LanceScalarIndexType; e.g. the tokenizer of an
 *                     INVERTED index, {"base_tokenizer": "whitespace"}).
 *                     Text that is not a JSON object is
 *                     LANCE_ERR_INVALID_ARGUMENT.
 * Other parameters as for lance_dataset_create_vector_index().
 */
int32_t lance_dataset_create_scalar_index(LanceDataset* dataset, const char* column, const char* index_name,
                                          LanceScalarIndexType index_type, const char* params_json, bool replace);

/*
 * One-shot creation with progress, cancellation and training options.  The
 * control (progress callback, cancel token) and the threading contract are
 * described in section "Build progress and cancellation" below.
 */
typedef struct LanceIndexBuildControl LanceIndexBuildControl;

/**
 * Options of a one-shot index creation.
 *
 * Taken by lance_dataset_create_vector_index_v2() and
 * lance_dataset_create_scalar_index_v2().  Zeroed (or a NULL options
 * pointer) = none: the call then does what upstream's call without _v2
 * does.  New options arrive as new fields (docs/compatibility.md, "The ABI
 * promise").
 */
typedef struct LanceIndexCreateOptions {
    /* Borrowed for the call; NULL = no progress, not cancellable.  Its
       callback and context must stay valid until the call returns; the
       build keeps its own reference to the token. */
    const LanceIndexBuildControl* control;
    /* Borrowed; NULL = the core's defaults.  Vector indices only: a scalar
       creation given one is LANCE_ERR_INVALID_ARGUMENT. */
    const LanceVectorTrainingOptions* training;
} LanceIndexCreateOptions;

/**
 * Creates a vector index with options: progress, cancel, training options.
 *
 * lance_dataset_create_vector_index() with `options`.  Builds over the
 * whole dataset and commits; the handle moves to the new version on success
 * only.  With a seed in options->training the model is trained first (the
 * seeded rounds, over every fragment), then the index is built with it, so
 * two builds with one seed over the same data have the same centroids; the
 * progress stages are the training's, then the build's (the stages and what
 * a cancel stops: "Build progress and cancellation").
 * @param options  Borrowed; NULL or zeroed = none.
 * Other parameters as for lance_dataset_create_vector_index().
 * @return 0 when the index was committed, or -1 with the codes of
 *         lance_dataset_create_vector_index(), LANCE_ERR_CANCELLED (nothing
 *         committed, the handle unchanged), and LANCE_ERR_INVALID_ARGUMENT
 *         or LANCE_ERR_NOT_SUPPORTED for the training options (see
 *         LanceVectorTrainingOptions).
 */
int32_t lance_dataset_create_vector_index_v2(LanceDataset* dataset, const char* column, const char* index_name,
                                             const LanceVectorIndexParams* params, bool replace,
                                             const LanceIndexCreateOptions* options);

/**
 * Creates a scalar index with options: progress and cancel.
 *
 * lance_dataset_create_scalar_index() with `options` (their stages:
 * "Build progress and cancellation").  options->training must be NULL.
 * @param options  Borrowed; NULL or zeroed = none.
 * Other parameters as for lance_dataset_create_scalar_index().
 * @return 0 when the index was committed, or -1 with the codes of
 *         lance_dataset_create_scalar_index(), or LANCE_ERR_CANCELLED
 *         (nothing committed, the handle unchanged).
 */
int32_t lance_dataset_create_scalar_index_v2(LanceDataset* dataset, const char* column, const char* index_name,
                                             LanceScalarIndexType index_type, const char* params_json, bool replace,
                                             const LanceIndexCreateOptions* options);

/** Deprecated: lance_dataset_create_vector_index_v2() with options->control. */
LANCE_DEPRECATED("use lance_dataset_create_vector_index_v2(); removed in lance-c 0.6")
int32_t lance_dataset_create_vector_index_with_control(LanceDataset* dataset, const char* column,
                                                       const char* index_name, const LanceVectorIndexParams* params,
                                                       bool replace, const LanceIndexBuildControl* control);

/** Deprecated: lance_dataset_create_scalar_index_v2() with options->control. */
LANCE_DEPRECATED("use lance_dataset_create_scalar_index_v2(); removed in lance-c 0.6")
int32_t lance_dataset_create_scalar_index_with_control(LanceDataset* dataset, const char* column,
                                                       const char* index_name, LanceScalarIndexType index_type,
                                                       const char* params_json, bool replace,
                                                       const LanceIndexBuildControl* control);

/**
 * Deprecated: lance_dataset_create_vector_index_v2() with options->training
 * and options->control.
 */
LANCE_DEPRECATED("use lance_dataset_create_vector_index_v2(); removed in lance-c 0.6")
int32_t lance_dataset_create_vector_index_with_options(LanceDataset* dataset, const char* column,
                                                       const char* index_name, const LanceVectorIndexParams* params,
                                                       const LanceVectorTrainingOptions* options, bool replace,
                                                       const LanceIndexBuildControl* control);

/**
 * The IVF partition count a build uses by default.
 *
 * Used when params->num_partitions is 0: the rows of the fragments
 * (deleted rows excluded) divided by the target partition size, clamped
 * to 1..4096, as the core computes it.  A coordinator uses it to give
 * every segment, and a distributed training
 * (lance_vector_training_new()), one partition count derived from the
 * whole table.
 * @param dataset                Borrowed: the snapshot counted.
 * @param index_type             A LanceVectorIndexType: its default target
 *                               partition size applies when
 *                               target_partition_size is 0 (see
 *                               LanceVectorTrainingOptions).
 * @param target_partition_size  Rows per partition; 0 = the type's default.
 * @param fragment_ids, fragment_count  The fragments counted; NULL + 0 =
 *                               all.
 * @param out_num_partitions     Written on success.
 * @return 0, or -1: LANCE_ERR_INVALID_ARGUMENT (NULL, a bad index type,
 *         bad fragment ids), LANCE_ERR_IO.
 */
int32_t lance_dataset_recommended_num_partitions(const LanceDataset* dataset, int32_t index_type,
                                                 uint32_t target_partition_size, const uint32_t* fragment_ids,
                                                 size_t fragment_count, uint32_t* out_num_partitions);

/**
 * Drops the named index, every segment of it, and commits.
 *
 * The handle moves to the new version (on success only).  The index's
 * files stay in storage for older versions until
 * lance_dataset_cleanup_old_versions() removes them.
 * @param dataset  Borrowed.
 * @param name     Borrowed: the name of a user index of the handle's
 *                 version, non-empty.
 * @return 0, or -1: LANCE_ERR_INVALID_ARGUMENT (NULL or empty),
 *         LANCE_ERR_NOT_FOUND (no index of that name), LANCE_ERR_IO,
 *         LANCE_ERR_COMMIT_CONFLICT (another writer's commit conflicts).
 */
int32_t lance_dataset_drop_index(LanceDataset* dataset, const char* name);

/**
 * The number of user indices.
 *
 * Counted in the handle's version: logical indices (an index of several
 * segments counts once), system indices (the fragment-reuse and MemWAL
 * indices) excluded.  Reads the version's index list (I/O the first
 * time).
 * @param dataset  Borrowed.
 * @return The count; 0 both for none and on error: LANCE_ERR_INVALID_ARGUMENT
 *         (NULL), LANCE_ERR_IO.
 */
uint64_t lance_dataset_index_count(const LanceDataset* dataset);

/**
 * Describes the indices as JSON.
 *
 * A JSON array with one object per index segment:
 *   {"name": string, "uuid": string, "columns": [string],
 *    "type": string (e.g. "IVF_PQ", "BTree"), "dataset_version": integer}
 * Produced: free with lance_free_string().  NULL on error.
 */
const char* lance_dataset_index_list_json(const LanceDataset* dataset);

/**
 * The number of segments of the named index in the handle's version.
 *
 * 1 for an index built in one piece; use it to size
 * lance_dataset_index_segments()'s buffer.  Reads the version's index list
 * (I/O the first time).
 * @param dataset     Borrowed.
 * @param index_name  Borrowed, non-empty.
 * @return The count (at least 1), or 0 on error: LANCE_ERR_INVALID_ARGUMENT
 *         (NULL or empty), LANCE_ERR_NOT_FOUND (no index of that name),
 *         LANCE_ERR_IO.
 */
uint64_t lance_dataset_index_segment_count(const LanceDataset* dataset, const char* index_name);

/**
 * Writes the UUIDs of the named index's segments, 16 raw bytes each.
 *
 * @param out_uuids  Borrowed; room for `capacity` UUIDs (16 * capacity bytes).
 * @param capacity   Fewer slots than segments is LANCE_ERR_INVALID_ARGUMENT
 *                   and nothing is written.
 * @param out_count  NULL, or receives the number of UUIDs written.
 */
int32_t lance_dataset_index_segments(const LanceDataset* dataset, const char* index_name, uint8_t* out_uuids,
                                     size_t capacity, uint64_t* out_count);

/**
 * Loads an index into the session's cache.
 *
 * Every segment of the named index goes into the index cache of the
 * dataset's session (its own caches when it was opened without one), so
 * that the first search after it does not pay for opening the index.
 * Commits nothing; the handle keeps its version.  Calling it again is safe
 * (what is cached stays cached).  The cache's capacity still applies: a
 * session whose index cache is smaller than the index keeps only part of
 * it.
 *
 * @param dataset     Borrowed.
 * @param index_name  Borrowed: the name of a logical index of the handle's
 *                    version; LANCE_ERR_NOT_FOUND when there is none.
 * @return 0, or -1: LANCE_ERR_INVALID_ARGUMENT (NULL), LANCE_ERR_NOT_FOUND,
 *         LANCE_ERR_IO (its files could not be read).
 */
int32_t lance_dataset_prewarm_index(const LanceDataset* dataset, const char* index_name);

/* ========================================================================
 * Distributed index builds: planning
 *
 * Which worker builds which fragments: a coordinator's helper, optional.
 * ======================================================================== */

typedef struct LanceFragmentPlan LanceFragmentPlan;

/**
 * Plans fragment groups for distributed builds.
 *
 * Splits the fragments of the handle's version into `group_count`
 * non-empty ranges of consecutive fragments, in the order the version
 * lists them (lance_dataset_fragment_ids()), balanced by live rows: the
 * largest group's rows are as few as any such split allows, and within
 * that bound each group, from the first, holds the rows nearest an even
 * share of the rows still to place (ties: fewer fragments).  Every
 * fragment is in exactly one group, ids ascending within a group; group 0
 * holds the first fragments.  Deterministic for a given version.
 *
 * Why consecutive: Lance's compaction merges only neighbouring fragments
 * that the same index segments cover, so an index built as one segment
 * per group leaves the small fragments inside each group free to be
 * compacted (segments over scattered fragments would keep every fragment
 * apart from its neighbours for good).
 * @param group_count  1 .. lance_dataset_fragment_count(); otherwise
 *                     LANCE_ERR_INVALID_ARGUMENT (a group would be empty).
 * @param out_plan     Produced: free with lance_fragment_plan_free().
 */
int32_t lance_dataset_plan_fragment_groups(const LanceDataset* dataset, size_t group_count,
                                           LanceFragmentPlan** out_plan);

/**
 * The number of groups: the `group_count` the plan was made with.
 *
 * @param plan  Borrowed.
 * @return The count (at least 1), or 0 with LANCE_ERR_INVALID_ARGUMENT for
 *         a NULL `plan`.
 */
size_t lance_fragment_plan_group_count(const LanceFragmentPlan* plan);

/**
 * The dataset version the plan was made from.
 *
 * Open each worker's dataset at this version (lance_dataset_open()'s
 * `version`), so that its group's fragments are the fragments it reads.
 *
 * @param plan  Borrowed.
 * @return The version, or 0 with LANCE_ERR_INVALID_ARGUMENT for a NULL
 *         `plan`.
 */
uint64_t lance_fragment_plan_dataset_version(const LanceFragmentPlan* plan);

/**
 * One group.  `*out_fragment_ids` is borrowed from the plan (valid until it
 * is freed) and can be passed as LanceIndexSegmentBuildOptions.fragment_ids.
 * @param out_rows  Nullable; the group's live rows.
 */
int32_t lance_fragment_plan_group(const LanceFragmentPlan* plan, size_t group, const uint32_t** out_fragment_ids,
                                  size_t* out_fragment_count, uint64_t* out_rows);

/**
 * Frees a fragment plan.
 *
 * The fragment id arrays lance_fragment_plan_group() lent go with it: copy
 * them first if they must outlive it.
 * @param plan  Consumed.  NULL is a no-op.
 * It cannot fail and leaves this thread's last error as it was.
 */
void lance_fragment_plan_free(LanceFragmentPlan* plan);

/* ========================================================================
 * Distributed index builds: shared models (RFC E1)
 *
 * A distributed build gives every worker the same IVF centroids (and, for
 * PQ, the same codebook; for IVF_RQ, the same RaBitQ rotation), trained
 * once by a coordinator or a training task.  Segments built from one shared
 * model give uniform recall when searched together and can later be merged;
 * segments trained independently can be searched together but not merged.
 *
 * A model travels either as Arrow arrays (when both sides have Arrow) or as
 * a LanceVectorModel serialized to bytes, which carries its parameters and a
 * SHA-256 content fingerprint.  A segment built with an injected model
 * records that fingerprint (readable from its metadata), so a coordinator
 * can refuse to commit segments built from different models.
 *
 * IVF_RQ: a RaBitQ index rotates every vector by a random rotation before
 * quantizing it, and segments merge only when they rotate alike.  A model
 * trained for IVF_RQ by this version (lance_vector_model_train(),
 * or a distributed training) carries one rotation and its bits per
 * dimension, in its bytes and in its fingerprint; every IVF_RQ segment
 * built from it uses that rotation, so the segments commit as one index
 * and merge.  A model without a rotation (bytes serialized by lance-c
 * before 0.5, a model from lance_vector_model_from_arrow() or from
 * options->ivf_centroids, a model trained for another index type) still
 * builds IVF_RQ segments as before: each build draws its own rotation.
 * Those segments record the model's fingerprint and commit together (each
 * is searched with its own rotation), but cannot be merged
 * (LANCE_ERR_MODEL_MISMATCH, see lance_dataset_merge_index_segments()).
 * Two models trained separately have two rotations and two fingerprints:
 * their segments follow the rule of independently trained models
 * (LANCE_ERR_MODEL_MISMATCH at commit unless allow_independent_models, and
 * always at merge).
 * ======================================================================== */

typedef struct LanceVectorModel LanceVectorModel;

/* ---- Training a model ---- */

/**
 * Deprecated: train IVF centroids.
 *
 * Replaced by upstream's lance_index_train_ivf_model() (the same training;
 * `metric` as an int32_t) or, for a whole model,
 * lance_vector_model_train().
 *
 * Trains IVF centroids on a column with the Lance core's k-means (the same
 * entry point the Java SDK's trainer uses).
 *
 * @param dataset         Borrowed.
 * @param column          Borrowed: a FixedSizeList vector column.
 * @param num_partitions  At least 1.
 * @param metric          A LanceMetricType.
 * @param sample_fragment_ids, sample_fragment_count
 *                        Borrowed: train only on rows of these fragments; NULL
 *                        and 0 = the whole dataset.  A non-NULL list must be
 *                        non-empty, without duplicates, of existing fragments.
 * @param out_centroids, out_schema
 *                        Borrowed out parameters holding, on success, a
 *                        produced FixedSizeList<float32>[num_partitions, dim]
 *                        the caller releases.
 */
LANCE_DEPRECATED("use lance_index_train_ivf_model(); removed in lance-c 0.6")
int32_t lance_dataset_train_ivf_centroids(const LanceDataset* dataset, const char* column, uint32_t num_partitions,
                                          LanceMetricType metric, const uint32_t* sample_fragment_ids,
                                          size_t sample_fragment_count, struct ArrowArray* out_centroids,
                                          struct ArrowSchema* out_schema);

/**
 * Deprecated: train a PQ codebook.
 *
 * Replaced by upstream's lance_index_train_pq_model() (the same training,
 * the codebook in upstream's shape) or, for a whole model,
 * lance_vector_model_train().
 *
 * Trains a PQ codebook on the residuals of the given IVF centroids, as a
 * one-shot IVF_PQ build does, so shared-model segments match its quality.
 *
 * @param num_sub_vectors  0 = 16; must divide the dimension.
 * @param num_bits         0 = 8.
 * @param ivf_centroids, ivf_centroids_schema
 *                         Borrowed: FixedSizeList<float32>[num_partitions, dim].
 * @param out_codebook, out_schema
 *                         Produced: FixedSizeList<float32>[2^num_bits, dim], the
 *                         codebook's values in the Lance core's order (each
 *                         row holds one code's centroid for every sub-vector).
 *                         The RFC describes the shape as [num_sub_vectors *
 *                         2^num_bits, dim / num_sub_vectors]; the values are
 *                         the same, and an injected codebook may use either.
 * Other parameters as for lance_dataset_train_ivf_centroids().
 */
LANCE_DEPRECATED("use lance_index_train_pq_model(); removed in lance-c 0.6")
int32_t lance_dataset_train_pq_codebook(const LanceDataset* dataset, const char* column, uint32_t num_sub_vectors,
                                        uint32_t num_bits, LanceMetricType metric,
                                        const struct ArrowArray* ivf_centroids,
                                        const struct ArrowSchema* ivf_centroids_schema,
                                        const uint32_t* sample_fragment_ids, size_t sample_fragment_count,
                                        struct ArrowArray* out_codebook, struct ArrowSchema* out_schema);

/**
 * Upstream lance-c's IVF trainer.
 *
 * lance_dataset_train_ivf_centroids() with `metric` as an int32_t
 * LanceMetricType (range-checked).  Output in out_array/out_schema (zeroed
 * first; produced, the caller releases it on success):
 * FixedSizeList<float32>[dim], one row per partition.
 */
int32_t lance_index_train_ivf_model(const LanceDataset* dataset, const char* column, uint32_t num_partitions,
                                    int32_t metric, const uint32_t* fragment_ids, size_t fragment_count,
                                    struct ArrowArray* out_array, struct ArrowSchema* out_schema);

/**
 * Upstream lance-c's PQ trainer.
 *
 * lance_dataset_train_pq_codebook() with its arguments in upstream's order
 * and the codebook in upstream's shape, FixedSizeList<float32>[dim /
 * num_sub_vectors] with num_sub_vectors * 2^num_bits rows (the same
 * values).  `num_sub_vectors` must be set and divide the dimension;
 * `num_bits` is 4 or 8 (0 = 8).  The centroids are borrowed and never
 * released.  Outputs as for lance_index_train_ivf_model().
 */
int32_t lance_index_train_pq_model(const LanceDataset* dataset, const char* column, uint32_t num_sub_vectors,
                                   uint32_t num_bits, int32_t metric, const uint32_t* fragment_ids,
                                   size_t fragment_count, struct ArrowArray* ivf_centroids,
                                   const struct ArrowSchema* ivf_centroids_schema, struct ArrowArray* out_array,
                                   struct ArrowSchema* out_schema);

/**
 * Options of lance_vector_model_train().
 *
 * Zeroed (or a NULL options pointer) = none: no progress, not cancellable,
 * the core's training defaults.  New options arrive as new fields
 * (docs/compatibility.md, "The ABI promise").
 */
typedef struct LanceVectorModelTrainOptions {
    /* Borrowed for the call; NULL = none.  Events arrive on the calling
       thread, never after the call returned ("Build progress and
       cancellation"). */
    const LanceIndexBuildControl* control;
    /* Borrowed; NULL = the core's defaults (LanceVectorTrainingOptions). */
    const LanceVectorTrainingOptions* training;
} LanceVectorModelTrainOptions;

/**
 * Trains a complete shared model on one node.
 *
 * IVF centroids for `params`, and the PQ codebook for IVF_PQ and
 * IVF_HNSW_PQ.  For IVF_RQ the model also gets its RaBitQ rotation, drawn
 * once here as a one-shot IVF_RQ build draws its own (params->num_bits bits
 * per dimension: 1..9, 0 = 5).  params->num_partitions 0 takes the count
 * from options->training's target_partition_size (or the type's default)
 * over the rows of the sampled fragments, as
 * lance_dataset_recommended_num_partitions() gives it.  With a seed the
 * training is reproducible (one seed, data, parameters and fragments give
 * one fingerprint: the seeded rounds of LanceVectorTrainingOptions, with
 * their stages and prompt cancel).  Otherwise the core trains, in two
 * stages: "train_ivf", one STAGE_PROGRESS per k-means iteration (total 0,
 * unknown), then for PQ "train_pq" (start and end only).  A cancel returns
 * LANCE_ERR_CANCELLED at once with no model; the core's k-means in progress
 * keeps its CPU until it ends, its result thrown away.  Nothing is written.
 * @param dataset     Borrowed: the snapshot trained on.
 * @param column      Borrowed: a vector column.
 * @param params      Borrowed; as for lance_dataset_create_vector_index().
 * @param sample_fragment_ids, sample_fragment_count
 *                    The fragments to sample from; NULL + 0 = all.  They
 *                    must hold at least num_partitions rows.
 * @param options     Borrowed; NULL or zeroed = none.
 * @param out_model   Produced: free with lance_vector_model_free().
 *                    Untouched on error.
 * @return 0, or -1: LANCE_ERR_INVALID_ARGUMENT (NULL, a bad enum value,
 *         num_partitions above the rows, num_sub_vectors not dividing the
 *         dimension, a column that is not a vector column of the metric's
 *         element type, bad fragment ids, bad training options),
 *         LANCE_ERR_NOT_FOUND (no such column), LANCE_ERR_NOT_SUPPORTED (a
 *         seed with streaming), LANCE_ERR_IO, LANCE_ERR_CANCELLED.
 */
int32_t lance_vector_model_train(const LanceDataset* dataset, const char* column, const LanceVectorIndexParams* params,
                                 const uint32_t* sample_fragment_ids, size_t sample_fragment_count,
                                 const LanceVectorModelTrainOptions* options, LanceVectorModel** out_model);

/**
 * Deprecated: lance_vector_model_train() with NULL options, except that
 * params->num_partitions 0 is refused here (LANCE_ERR_INVALID_ARGUMENT).
 */
LANCE_DEPRECATED("use lance_vector_model_train(); removed in lance-c 0.6")
int32_t lance_dataset_train_vector_model(const LanceDataset* dataset, const char* column,
                                         const LanceVectorIndexParams* params, const uint32_t* sample_fragment_ids,
                                         size_t sample_fragment_count, LanceVectorModel** out_model);

/**
 * Deprecated: lance_vector_model_train() with options->control, except
 * that params->num_partitions 0 is refused here (LANCE_ERR_INVALID_ARGUMENT).
 */
LANCE_DEPRECATED("use lance_vector_model_train(); removed in lance-c 0.6")
int32_t lance_dataset_train_vector_model_with_control(const LanceDataset* dataset, const char* column,
                                                      const LanceVectorIndexParams* params,
                                                      const uint32_t* sample_fragment_ids, size_t sample_fragment_count,
                                                      const LanceIndexBuildControl* control,
                                                      LanceVectorModel** out_model);

/** Deprecated: lance_vector_model_train() with options->training and options->control. */
LANCE_DEPRECATED("use lance_vector_model_train(); removed in lance-c 0.6")
int32_t lance_dataset_train_vector_model_with_options(const LanceDataset* dataset, const char* column,
                                                      const LanceVectorIndexParams* params,
                                                      const LanceVectorTrainingOptions* options,
                                                      const uint32_t* sample_fragment_ids, size_t sample_fragment_count,
                                                      const LanceIndexBuildControl* control,
                                                      LanceVectorModel** out_model);

/* ---- A model from Arrow arrays or a committed index ---- */

/**
 * Builds a model from Arrow arrays trained elsewhere (e.g. by the Java SDK).
 *
 * A model never holds an infinity or NaN: arrays with one are
 * LANCE_ERR_INVALID_ARGUMENT, and so are model bytes with one
 * (lance_vector_model_parse()).
 * @param ivf_centroids, ivf_centroids_schema  Borrowed FixedSizeList<float32>.
 * @param num_sub_vectors, num_bits            The PQ shape (ignored without a codebook).
 * @param pq_codebook, pq_codebook_schema      Borrowed, or NULL for no PQ.
 * @param out_model  Produced: free with lance_vector_model_free().
 */
int32_t lance_vector_model_from_arrow(LanceMetricType metric, const struct ArrowArray* ivf_centroids,
                                      const struct ArrowSchema* ivf_centroids_schema, uint32_t num_sub_vectors,
                                      uint32_t num_bits, const struct ArrowArray* pq_codebook,
                                      const struct ArrowSchema* pq_codebook_schema, LanceVectorModel** out_model);

/**
 * Reads the shared model of a committed vector index back from its segments.
 *
 * The model holds the IVF centroids, the metric and the index type, with the PQ codebook
 * (IVF_PQ, IVF_HNSW_PQ) or the RaBitQ rotation (IVF_RQ), as the core's reader of each
 * segment decodes them (how: docs/core-references.md, row lance_dataset_read_vector_model).
 * For a coordinator that lost the model's bytes (it restarted) or never had them (another
 * SDK, or lance_dataset_create_vector_index(), built the index): the model builds delta
 * segments (lance_index_segment_builder_set_model()) over fragments appended since, which
 * commit beside the index's segments and merge with them.
 *
 * Segments built from a model this library made (trained, distributed, from Arrow arrays
 * or parsed) read back as that model: the same fingerprint and, when the model records
 * the index's type (every trained model does), the same bytes from
 * lance_vector_model_serialize().  (Not an IVF_RQ model without a rotation: each of its
 * segments drew its own, which the model read back holds.)  The fingerprint is computed
 * from what is read, as for every model; segments built without one of this library's
 * models (a one-shot build, another SDK) record no fingerprint, so a delta built from
 * their model commits beside them only with allow_independent_models (see
 * lance_dataset_commit_index_segments_v2()).  The model records the index's type; an
 * IVF_SQ or IVF_HNSW_SQ model is its centroids (each segment trains its own scalar
 * quantizer), an IVF_HNSW_* model has no graph (each segment builds its own).
 *
 * @param dataset     Borrowed: the version read (the handle's).
 * @param index_name  Borrowed, non-empty: a vector index of that version.  Its segments
 *                    must share one model: segments of different models (different
 *                    fingerprints or index types: committed with allow_independent_models,
 *                    or IVF_RQ segments of a model without a rotation, each of which drew
 *                    its own) are LANCE_ERR_INVALID_ARGUMENT, the message naming two
 *                    segments and their models.
 * @param out_model   Produced: free with lance_vector_model_free().  Untouched on error.
 * @return 0, or -1 with LANCE_ERR_INVALID_ARGUMENT (a NULL argument, an empty name, not
 *         UTF-8, a scalar index, segments of different models), LANCE_ERR_NOT_FOUND (no
 *         index of that name), LANCE_ERR_NOT_SUPPORTED (what a LanceVectorModel cannot
 *         hold: binary vectors (HAMMING) or centroids or a codebook of another type than
 *         float32, an IVF_RQ rotation by a matrix rather than the core's default fast
 *         rotation), LANCE_ERR_IO (the index files could not be read), and the core's
 *         errors for segments it cannot open.
 */
int32_t lance_dataset_read_vector_model(const LanceDataset* dataset, const char* index_name,
                                        LanceVectorModel** out_model);

/* ---- Model bytes ---- */

/**
 * Serializes a model (little-endian, checksummed).
 *
 * A model without a RaBitQ rotation is written as every earlier lance-c
 * wrote it (and reads it); one with a rotation needs lance-c 0.5 or later
 * to parse.
 *
 * @param out_bytes  Produced: free with lance_free_bytes().
 */
int32_t lance_vector_model_serialize(const LanceVectorModel* model, uint8_t** out_bytes, size_t* out_len);

/**
 * Parses serialized model bytes (borrowed).
 *
 * Bytes of this version or of any earlier lance-c (an IVF_RQ model of
 * lance-c before 0.5 has no rotation: see the section's introduction).
 * Truncated or corrupted bytes are LANCE_ERR_INVALID_ARGUMENT.
 * @param out_model  Produced: free with lance_vector_model_free().
 */
int32_t lance_vector_model_parse(const uint8_t* bytes, size_t len, LanceVectorModel** out_model);

/**
 * The model's content fingerprint.
 *
 * 64 hex digits, the SHA-256 of its metric, centroids and codebook or
 * rotation (not of its index type).  A model parsed from bytes of an earlier
 * lance-c keeps the fingerprint that version gave it.  Produced:
 * lance_free_string().
 */
char* lance_vector_model_fingerprint(const LanceVectorModel* model);

/** What a model holds. */
typedef struct LanceVectorModelInfo {
    LanceMetricType metric;
    uint32_t dimension;
    uint32_t num_partitions;
    bool has_pq_codebook;
    bool has_rq_rotation;     /* an IVF_RQ model's RaBitQ rotation; new in lance-c 0.5 */
    uint32_t num_sub_vectors; /* 0 without a codebook */
    uint32_t num_bits;        /* the codebook's bits per code, or the rotation's bits per
                                 dimension; 0 without either */
} LanceVectorModelInfo;

/* ---- Reading a model ---- */

/**
 * Describes a model.
 *
 * Its metric, dimension, partition count, and what it holds besides the
 * centroids (a PQ codebook and its shape, or an IVF_RQ rotation and its
 * bits per dimension).  No I/O.
 * @param model  Borrowed.
 * @param out    Borrowed out parameter, must not be NULL; written on
 *               success only.
 * @return 0, or -1 with LANCE_ERR_INVALID_ARGUMENT (a NULL `model` or
 *         `out`).
 */
int32_t lance_vector_model_info(const LanceVectorModel* model, LanceVectorModelInfo* out);

/**
 * The index type the model was trained for.
 *
 * A LanceVectorIndexType, or 0 when it records none.
 * lance_vector_model_train() and a distributed training record
 * params->index_type, and the model's bytes carry it; a model made by
 * lance_vector_model_from_arrow(), or serialized by lance-c before 0.4,
 * records none.  It is not part of the fingerprint (the fingerprint names
 * the centroids and codebook segments are built from, which Arrow arrays
 * carry without a type).  The segment builders build the
 * params->index_type they are given, which may be any type the model's
 * codebook fits (IVF_PQ and IVF_HNSW_PQ with one, the others without): a
 * worker that must build what the coordinator trained for reads it here,
 * as `lance-index build --model` does (it builds the recorded type and
 * refuses a --type other than it).
 * @param out_index_type  Borrowed out parameter.
 */
int32_t lance_vector_model_index_type(const LanceVectorModel* model, int32_t* out_index_type);

/**
 * Exports the IVF centroids.
 *
 * A FixedSizeList<float32> array of num_partitions rows of `dimension`
 * values (lance_vector_model_info()), the form
 * lance_vector_model_from_arrow() takes.  A copy: it stays valid after
 * the model is freed.
 * @param model                  Borrowed.
 * @param out_array, out_schema  Borrowed out parameters, neither NULL;
 *                               on success they hold produced structs the
 *                               caller releases with their release
 *                               callbacks.
 * @return 0, or -1 with LANCE_ERR_INVALID_ARGUMENT (a NULL argument).
 */
int32_t lance_vector_model_centroids(const LanceVectorModel* model, struct ArrowArray* out_array,
                                     struct ArrowSchema* out_schema);

/**
 * Exports the PQ codebook.
 *
 * A FixedSizeList<float32> array of `dimension` values per row,
 * 2^num_bits rows (the num_sub_vectors codebooks of 2^num_bits centroids
 * each, laid out as Lance stores them), the form
 * lance_vector_model_from_arrow() takes.  A copy, as for
 * lance_vector_model_centroids().
 * @param out_array, out_schema  As for lance_vector_model_centroids().
 * @return 0, or -1 with LANCE_ERR_INVALID_ARGUMENT: a NULL argument, or a
 *         model without a PQ codebook (has_pq_codebook false: a model for
 *         a type other than IVF_PQ and IVF_HNSW_PQ; an IVF_RQ rotation has
 *         no export).
 */
int32_t lance_vector_model_codebook(const LanceVectorModel* model, struct ArrowArray* out_array,
                                    struct ArrowSchema* out_schema);

/**
 * Frees a model.
 *
 * What was made from it keeps its own copy: segment builders given it
 * (lance_index_segment_builder_set_model()), exported arrays,
 * serialized bytes.
 *
 * @param model  Consumed.  NULL is a no-op.
 * It cannot fail and leaves this thread's last error as it was.
 */
void lance_vector_model_free(LanceVectorModel* model);

/* ========================================================================
 * Distributed index builds: distributed training
 *
 * The shared model of the section above, trained by the workers together
 * instead of on one node: each worker holds a LanceVectorTrainingWorker over
 * its own fragments (the same disjoint sets its segment builds take) and a
 * coordinator holds one LanceVectorTraining.  Every round, the coordinator
 * sends the same request bytes to every worker, each worker answers with
 * statistics bytes computed on its share of the sample, and the coordinator
 * reduces all of them into the next request, until the training is done:
 *
 *     lance_vector_training_new(column, &params, seed, &t);
 *     for (;;) {
 *         LanceVectorTrainingInfo info;
 *         lance_vector_training_info(t, &info);
 *         if (info.phase == LANCE_TRAINING_DONE) break;
 *         lance_vector_training_request(t, &req, &req_len);
 *         // on worker i: lance_vector_training_worker_answer(w_i, req, req_len,
 *         //                                      NULL, &stats[i], &lens[i]);
 *         lance_vector_training_reduce(t, stats, lens, num_workers);
 *     }
 *     lance_vector_training_model(t, &model);   // as lance_vector_model_train's
 * ======================================================================== */

/*
 * Distributed training: what the rounds compute, and what a round costs.
 *
 * What the rounds compute is the core's one-node training, step by step: a
 * sample of num_partitions * sample_rate rows (each worker draws the share
 * its rows hold), IVF centroids by the core's balanced k-means (the core's
 * own assignment kernel runs on the workers; the coordinator takes the
 * means, splits empty clusters as the core does, and stops when the loss
 * changes by less than 1e-4 of itself or at max_iterations), then for the PQ
 * index types one k-means per sub-vector on the residuals, all sub-vectors in
 * the same rounds.  Cosine vectors are normalized first, as the core does.
 * Initial centroids are the sampled vectors with the smallest keys (a
 * SHA-256 of the seed and the vector).  When the workers together sample
 * every row (a dataset of at most max(num_partitions, 2^num_bits) *
 * sample_rate rows), the result does not depend on how the fragments are
 * split among the workers: one worker or several give the same model up to
 * float summation order.  Each flat round costs rows * partitions *
 * dimension multiply-adds, divided among the workers.
 *
 * With more than 256 partitions the rounds train the core's hierarchical
 * k-means (branching 16, no global refinement; where the core does it:
 * docs/core-references.md, row lance_vector_training_reduce), one
 * level of the tree at a time: the sample's rows go down the tree, every
 * node of a level runs its own k-means (at most 16 centroids, on about 512
 * of its rows per centroid) in the same rounds, its sub-clusters share its
 * leaves in proportion to their rows, and the last round takes every leaf's
 * mean.  So a round costs at most rows * 16 * dimension multiply-adds.  A
 * request carries the tree: under 3 * partitions * (dimension + 16) * 4
 * bytes; a worker's statistics under partitions * (dimension + 3) * 8
 * bytes, plus up to 16 candidate vectors (with a key and a slot) per node
 * the round opens.  ivf_iterations then counts the tree's k-means rounds,
 * and ivf_loss is, during the tree, the training nodes' losses summed and,
 * once done, the sample's squared distances to the centroid of the leaf
 * each row went down to (the core reports no loss for its hierarchy).
 */

/*
 * Distributed training: statistics refused, and a coordinator or worker replaced.
 *
 * The request carries the whole state of the training: a coordinator that
 * dies can be rebuilt from the last request it sent
 * (lance_vector_training_resume()).  Statistics name the request they answer
 * and are refused, with the training unchanged, when they answer another
 * (other centroids, another round, column, parameters or seed:
 * LANCE_ERR_MODEL_MISMATCH), come from another dataset version than each
 * other or, after the first round, than the version, row count and
 * dimension that round recorded (LANCE_ERR_MODEL_MISMATCH), share a
 * fragment with other statistics (LANCE_ERR_OVERLAPPING_SEGMENTS), leave
 * rows uncovered (a worker's statistics missing:
 * LANCE_ERR_INVALID_ARGUMENT), are truncated or corrupted, or carry what no
 * worker computes, even sealed: an infinity or NaN, dimension 0, more rows
 * sampled or assigned than it holds (LANCE_ERR_INVALID_ARGUMENT).  A
 * reduction whose arithmetic would put an infinity or NaN into the
 * training's state (its centroids, codebook, losses) is refused as
 * LANCE_ERR_INDEX, the training unchanged: vectors too large to cluster in
 * 32-bit floats, or statistics no worker computed.  So the model never
 * holds an infinity or NaN; nor does a request (one that holds one is
 * corrupted bytes).  A worker that failed is replaced
 * by a new worker over the same fragments, which answers the same request:
 * it draws the same sample from the training's seed, so its statistics are
 * the failed worker's.
 */

typedef struct LanceVectorTraining LanceVectorTraining;
typedef struct LanceVectorTrainingWorker LanceVectorTrainingWorker;

/** Where a training is; the rounds run the phases in this order. */
typedef enum {
    LANCE_TRAINING_IVF_INIT = 0, /* the workers send candidates for the initial centroids */
    LANCE_TRAINING_IVF = 1,      /* IVF k-means rounds */
    LANCE_TRAINING_PQ_INIT = 2,  /* candidates for the initial PQ codebook (PQ types only) */
    LANCE_TRAINING_PQ = 3,       /* PQ k-means rounds, every sub-vector at once */
    LANCE_TRAINING_DONE = 4      /* lance_vector_training_model() gives the model */
} LanceVectorTrainingPhase;

typedef struct LanceVectorTrainingInfo {
    LanceVectorTrainingPhase phase;
    uint32_t rounds;          /* reductions so far */
    uint32_t ivf_iterations;  /* IVF k-means iterations (rounds, for a tree) so far */
    uint32_t pq_iterations;   /* the most iterations any PQ sub-vector ran */
    uint32_t dimension;       /* 0 until the first reduction */
    uint32_t reserved;        /* 0 */
    uint64_t ivf_sample_rows; /* rows the IVF k-means trains on, all workers */
    uint64_t pq_sample_rows;  /* rows the PQ k-means trains on (0 before) */
    double ivf_loss;          /* the last IVF round's loss, as the core counts it (a tree: see above) */
    double pq_loss;           /* the last PQ round's loss, summed over sub-vectors */
} LanceVectorTrainingInfo;

/**
 * Starts a training (coordinator side; needs no dataset).
 *
 * @param column  Borrowed: the vector column every worker samples.
 * @param params  Borrowed: as for lance_vector_model_train():
 *                index_type (an IVF type; PQ types also train a codebook),
 *                metric (L2, cosine or dot), num_partitions (required),
 *                num_sub_vectors and num_bits for PQ, max_iterations and
 *                sample_rate (0 = the core's defaults: 50 and 256).
 * @param seed    Draws each worker's sample and chooses the initial
 *                centroids: the same seed, with workers over the same
 *                fragments of the same version, gives the same model (the
 *                same fingerprint) in every run.  num_partitions derived
 *                from the table: lance_dataset_recommended_num_partitions().
 * @param out_training  Produced: free with lance_vector_training_free().
 * @return 0, or -1: LANCE_ERR_INVALID_ARGUMENT (NULL, no num_partitions, a
 *         non-IVF type, the Hamming metric, bad PQ parameters).
 */
int32_t lance_vector_training_new(const char* column, const LanceVectorIndexParams* params, uint64_t seed,
                                  LanceVectorTraining** out_training);

/**
 * Rebuilds a coordinator from the last request it made (the request bytes
 * hold the whole state).  Corrupted bytes are LANCE_ERR_INVALID_ARGUMENT.
 * @param out_training  Produced: free with lance_vector_training_free().
 */
int32_t lance_vector_training_resume(const uint8_t* request, size_t len, LanceVectorTraining** out_training);

/**
 * The current round's request, for every worker.
 *
 * Calling it again without a reduction in between gives the same bytes (a
 * round retried on another worker gets the same request).
 *
 * @param out_bytes  Produced: free with lance_free_bytes().
 * @return 0, or -1: LANCE_ERR_INVALID_ARGUMENT (NULL, or the training is done).
 */
int32_t lance_vector_training_request(const LanceVectorTraining* training, uint8_t** out_bytes, size_t* out_len);

/**
 * Reduces one round of the training.
 *
 * The statistics of every worker, for the current request, go into the
 * next request.  All of them at once: together they must cover every row
 * of the dataset exactly once.  On any refusal (see the section's
 * introduction for the codes) nothing changes and the round can be reduced
 * again with the right statistics.
 *
 * @param stats, stats_lens, count  Borrowed: `count` buffers.
 */
int32_t lance_vector_training_reduce(LanceVectorTraining* training, const uint8_t* const* stats,
                                     const size_t* stats_lens, size_t count);

/**
 * Where the training is.
 *
 * Its phase (stop the rounds at LANCE_TRAINING_DONE), the rounds
 * reduced, the k-means iterations and losses so far, and the sample
 * sizes (LanceVectorTrainingInfo).  Reads the coordinator's state only:
 * no I/O, cheap to call every round.  Fields not reached yet are 0:
 * pq_iterations and pq_loss before the PQ rounds (and for types without
 * PQ), ivf_loss before the first IVF iteration.
 * @param training  Borrowed.
 * @param out       Borrowed out parameter, must not be NULL; written on
 *                  success only.
 * @return 0, or -1 with LANCE_ERR_INVALID_ARGUMENT (a NULL `training` or
 *         `out`).
 */
int32_t lance_vector_training_info(const LanceVectorTraining* training, LanceVectorTrainingInfo* out);

/**
 * The trained model.
 *
 * Available once the phase is LANCE_TRAINING_DONE (before it:
 * LANCE_ERR_INVALID_ARGUMENT).  Segment builds take it as they take a model
 * trained on one node.  For IVF_RQ the coordinator draws the model's RaBitQ
 * rotation here (the workers take no part), as many random sign bytes as
 * the Lance core's fast rotation has, taken from the training's seed: every
 * call, and a coordinator resumed from the last request, give the same
 * model, and two trainings with one seed one rotation.  params->num_bits of
 * lance_vector_training_new() sets its bits per dimension (1..9, 0 = 5;
 * another value is refused there).
 * @param out_model  Produced: free with lance_vector_model_free().
 */
int32_t lance_vector_training_model(const LanceVectorTraining* training, LanceVectorModel** out_model);

/**
 * Frees a training (the coordinator's state).
 *
 * Models taken from it with lance_vector_training_model() stay valid,
 * and the last request's bytes can still rebuild it
 * (lance_vector_training_resume()).
 *
 * @param training  Consumed.  NULL is a no-op.
 * It cannot fail and leaves this thread's last error as it was.
 */
void lance_vector_training_free(LanceVectorTraining* training);

/**
 * A worker over some fragments of a dataset.
 *
 * It samples on its first request and keeps its sample in memory for the
 * later rounds, so keep the worker for the whole training (a new worker
 * over the same fragments can take over any round).
 *
 * @param dataset  Borrowed: the worker keeps the handle's current version.
 *                 Every worker must see the same version.
 * @param fragment_ids, fragment_count
 *                 Borrowed: the worker's fragments; NULL and 0 = all of
 *                 them (one worker).  Non-empty, without duplicates, of
 *                 existing fragments.
 * @param out_worker  Produced: free with lance_vector_training_worker_free().
 */
int32_t lance_vector_training_worker_new(const LanceDataset* dataset, const uint32_t* fragment_ids,
                                         size_t fragment_count, LanceVectorTrainingWorker** out_worker);

/**
 * Options of lance_vector_training_worker_answer().
 *
 * Zeroed (or a NULL options pointer) = none.  New options arrive as new
 * fields (docs/compatibility.md, "The ABI promise").
 */
typedef struct LanceVectorTrainingAnswerOptions {
    /* The round's control.
     *
     * Borrowed for the call; NULL = no progress, not cancellable.  Section
     * "Build progress and cancellation" has the callback's threading
     * contract; the round runs on the calling thread, which also makes the
     * callback's calls. */
    const LanceIndexBuildControl* control;
} LanceVectorTrainingAnswerOptions;

/**
 * Answers a request with this worker's statistics: one training round.
 *
 * Stages, each with total and completed in "rows":
 *   "training_sample"     the worker draws its sample (its first request,
 *                         or after a cancel interrupted the draw);
 *                         completed = rows drawn (finite, non-null)
 *   "training_residuals"  the sample's residuals to the IVF centroids
 *                         (the first PQ round)
 *   "training_ivf_round"  an IVF k-means round's assignment
 *   "training_pq_round"   a PQ round's assignment, every sub-vector still
 *                         training (total = rows x those sub-vectors)
 * Initial-centroid rounds only draw the sample.  A cancelled token makes
 * the call return LANCE_ERR_CANCELLED at the next event (one every 2^27
 * multiply-adds: rows x centroids x dimension), or at once while the sample
 * is read.  Nothing is sent and nothing changes for the coordinator: run
 * the same request again (on this worker, which keeps the sample it
 * finished drawing, or on a new one).
 * @param request, len  Borrowed: the coordinator's request bytes.
 * @param options       Borrowed; NULL or zeroed = none.
 * @param out_stats     Produced: free with lance_free_bytes().
 * @return 0, or -1: LANCE_ERR_INVALID_ARGUMENT (NULL, corrupted request, a
 *         finished training), LANCE_ERR_NOT_FOUND (no such column),
 *         LANCE_ERR_MODEL_MISMATCH (the worker's dataset is at another
 *         version than the training's, or its column has another
 *         dimension), LANCE_ERR_IO, LANCE_ERR_CANCELLED.
 */
int32_t lance_vector_training_worker_answer(LanceVectorTrainingWorker* worker, const uint8_t* request, size_t len,
                                            const LanceVectorTrainingAnswerOptions* options, uint8_t** out_stats,
                                            size_t* out_len);

/** Deprecated: lance_vector_training_worker_answer() with NULL options. */
LANCE_DEPRECATED("use lance_vector_training_worker_answer(); removed in lance-c 0.6")
int32_t lance_vector_training_worker_run(LanceVectorTrainingWorker* worker, const uint8_t* request, size_t len,
                                         uint8_t** out_stats, size_t* out_len);

/** Deprecated: lance_vector_training_worker_answer() with options->control. */
LANCE_DEPRECATED("use lance_vector_training_worker_answer(); removed in lance-c 0.6")
int32_t lance_vector_training_worker_run_with_control(LanceVectorTrainingWorker* worker, const uint8_t* request,
                                                      size_t len, const LanceIndexBuildControl* control,
                                                      uint8_t** out_stats, size_t* out_len);

/**
 * Frees a worker and the sample it holds in memory.
 *
 * The dataset handle it was made from is not touched.  The training goes
 * on with a new worker over the same fragments, which draws the sample
 * again.
 *
 * @param worker  Consumed.  NULL is a no-op.  Not while a run of it is in
 *                progress on another thread.
 * It cannot fail and leaves this thread's last error as it was.
 */
void lance_vector_training_worker_free(LanceVectorTrainingWorker* worker);

/* ========================================================================
 * Distributed index builds: uncommitted segments (RFC E1)
 *
 * A worker opens the dataset at the version the coordinator pinned, makes a
 * segment builder over the fragments it was assigned, and executes it.  The
 * segment's files are written under the dataset's _indices/<uuid>/ directory
 * and nothing is committed: no manifest changes, the dataset's latest
 * version stays the same.  The worker sends the returned metadata bytes to
 * the coordinator, which commits all segments as one index.  Uncommitted
 * segment files that are never committed are unreferenced and reclaimed by
 * Lance's ordinary cleanup.
 * ======================================================================== */

typedef struct LanceIndexSegmentBuilder LanceIndexSegmentBuilder;

/*
 * How a vector segment gets the shared model.
 *
 * The shared model (the coordinator's IVF centroids, and PQ codebook for
 * the PQ types) comes one of two ways: as Arrow arrays in the options, or
 * as a LanceVectorModel handle through
 * lance_index_segment_builder_set_model().  A builder given a model never
 * trains.  A worker that must never train is given the model one of these
 * ways; a missing model then fails (PRECOMPUTED without arrays at the
 * constructor, a NULL model at set_model) instead of training locally.
 */

/** How a segment build gets its vector model. */
typedef enum LanceIndexSegmentBuildMode {
    /* Use the model given in the options or by
       lance_index_segment_builder_set_model(); without one, train locally. */
    LANCE_INDEX_SEGMENT_BUILD_AUTO = 0,
    /* Train locally; a model (in the options, or set later) is
       LANCE_ERR_INVALID_ARGUMENT. */
    LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN = 1,
    /* Use the given model, never train: the options must hold the centroids,
       and the codebook too for IVF_PQ / IVF_HNSW_PQ; otherwise
       LANCE_ERR_INVALID_ARGUMENT. */
    LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED = 2
} LanceIndexSegmentBuildMode;

/**
 * Segment build options (64 bytes on LP64).
 *
 * Zero-initialized = the defaults: the whole dataset, a library-generated
 * UUID, AUTO without a model (local training).  Every pointer is borrowed
 * for the duration of the lance_index_segment_builder_new_* call; the
 * fragment list, the UUID and the model are copied, and the Arrow arrays are
 * never released by the library (the caller releases them, and may reuse one
 * model for any number of builders).
 */
typedef struct LanceIndexSegmentBuildOptions {
    /* The fragments of this segment; NULL + 0 = the whole dataset.  A non-NULL
       list must be non-empty, without duplicates, of fragments of the
       builder's snapshot. */
    const uint32_t* fragment_ids;
    size_t fragment_count;
    /* The segment's UUID.
     *
     * 16 raw bytes of a caller-assigned segment UUID, or NULL for a generated
     * one.  Coordinators should pre-assign them.  Lance refuses caller UUIDs
     * for fragment-scoped BTREE, LABEL_LIST, NGRAM and RTREE builds:
     * LANCE_ERR_NOT_SUPPORTED (leave it NULL; the segment metadata carries
     * the UUID the core chose). */
    const uint8_t* index_uuid;
    /* A shared model as Arrow arrays.
     *
     * Vector builds only; both NULL or both set per pair:
     * FixedSizeList<float32>[dim] centroids, one row per IVF partition
     * (lance_index_train_ivf_model()), and for IVF_PQ and IVF_HNSW_PQ the PQ
     * codebook, FixedSizeList<float32>[dim / num_sub_vectors] with
     * num_sub_vectors * 2^num_bits rows (lance_index_train_pq_model()); a
     * codebook in the layout of lance_dataset_train_pq_codebook()
     * (2^num_bits rows of [dim]) holds the same values and is accepted too.
     * Centroids and codebook come together for the PQ types, or not at
     * all. */
    struct ArrowArray* ivf_centroids;
    const struct ArrowSchema* ivf_centroids_schema;
    struct ArrowArray* pq_codebook;
    const struct ArrowSchema* pq_codebook_schema;
    /* A LanceIndexSegmentBuildMode; other values are LANCE_ERR_INVALID_ARGUMENT. */
    int32_t mode;
} LanceIndexSegmentBuildOptions;

/**
 * Vector index parameters of segment builders, with the enum fields as
 * int32_t: the same fields, layout and meaning as LanceVectorIndexParams.  `index_type` is a LanceVectorIndexType and
 * `metric` a LanceMetricType, both range-checked.
 */
typedef struct LanceVectorIndexSegmentParams {
    int32_t index_type;
    int32_t metric;
    uint32_t num_partitions;
    uint32_t num_sub_vectors;
    uint32_t num_bits;
    uint32_t max_iterations;
    uint32_t hnsw_m;
    uint32_t hnsw_ef_construction;
    uint32_t sample_rate;
} LanceVectorIndexSegmentParams;

/**
 * Makes a vector index segment builder.
 *
 * The builder is bound to the handle's current snapshot (later commits
 * through the handle do not move it; the handle may be closed before the
 * builder runs).
 *
 * With a model every partition assignment uses the given centroids;
 * params->num_partitions, if set, must equal their count, and their
 * dimension must be the column's.  Metric HAMMING needs a uint8 vector
 * column.  A build that trains needs at least params->num_partitions rows
 * in its fragments, otherwise LANCE_ERR_INVALID_ARGUMENT: checked here with
 * LOCAL_TRAIN, and by execute with AUTO (a model may still be set), before
 * anything is built.
 *
 * @param dataset     Borrowed.
 * @param column      Borrowed; LANCE_ERR_NOT_FOUND when it does not exist.
 * @param index_name  Borrowed; NULL = "<column>_idx".  The name the segment
 *                    records; the commit decides the index's name.
 * @param params      Borrowed; as for lance_dataset_create_vector_index().
 * @param options     Borrowed; NULL = all defaults.
 * @return Produced: free with lance_index_segment_builder_free(); NULL on error.
 */
LanceIndexSegmentBuilder* lance_index_segment_builder_new_vector(const LanceDataset* dataset, const char* column,
                                                                 const char* index_name,
                                                                 const LanceVectorIndexSegmentParams* params,
                                                                 const LanceIndexSegmentBuildOptions* options);

/**
 * Makes a scalar index segment builder.
 *
 * The segment may be of any LanceScalarIndexType (range-checked; the types,
 * their columns and their params_json keys are listed at its definition).
 * The segments of one index, built by any number of workers over disjoint
 * fragments, answer together as the one-shot index does.  The options hold
 * no model, and their mode is AUTO or LOCAL_TRAIN (both mean the same for
 * scalar indices).  Other parameters as for
 * lance_index_segment_builder_new_vector() and
 * lance_dataset_create_scalar_index().
 */
LanceIndexSegmentBuilder* lance_index_segment_builder_new_scalar(const LanceDataset* dataset, const char* column,
                                                                 const char* index_name, int32_t index_type,
                                                                 const char* params_json,
                                                                 const LanceIndexSegmentBuildOptions* options);

/**
 * Gives a vector segment builder its shared model.
 *
 * The model comes as a handle (see lance_vector_model_train() and
 * lance_vector_model_parse()): the builder copies what it needs, the
 * caller still frees the model, and one model may serve any number of
 * builders.  The builder then never trains.
 *
 * LANCE_ERR_INVALID_ARGUMENT, with the builder unchanged, for: a NULL
 * builder or model; a scalar builder; a builder whose options hold Arrow
 * arrays (PRECOMPUTED or AUTO with arrays: one model per builder) or whose
 * mode is LOCAL_TRAIN; a builder already executed; a model of another
 * metric than params->metric, of another dimension than the column, with
 * another partition count than a non-zero params->num_partitions, without
 * a codebook for IVF_PQ / IVF_HNSW_PQ, with one for the other types, or
 * whose PQ shape disagrees with non-zero params->num_sub_vectors /
 * num_bits (zero fields take the model's), or with a RaBitQ rotation when
 * params->index_type is not IVF_RQ or a non-zero params->num_bits differs
 * from the rotation's.  A later call replaces the model.  The segment
 * records the model's fingerprint.  An IVF_RQ build uses the model's
 * rotation; given a model without one, it draws its own (the segments of
 * such a model commit together but do not merge: see "Distributed index
 * builds: shared models").
 */
int32_t lance_index_segment_builder_set_model(LanceIndexSegmentBuilder* builder, const LanceVectorModel* model);

/**
 * Gives a vector segment builder training options.
 *
 * The core's LanceVectorTrainingOptions, for a build that trains its own
 * model (no model given by the options or
 * lance_index_segment_builder_set_model()).  With a seed the builder
 * trains first with the seeded rounds over its own fragments, then builds
 * with that model: a retried segment gets the same centroids.  Give
 * segments meant to share a model one params->num_partitions
 * (lance_dataset_recommended_num_partitions() over the whole table).
 * @param builder  Borrowed: a vector builder not yet executed.
 * @param options  Borrowed; NULL = the defaults.
 * @return 0, or -1: LANCE_ERR_INVALID_ARGUMENT (NULL builder, a scalar
 *         builder, one already executed, bad options),
 *         LANCE_ERR_NOT_SUPPORTED (a seed with streaming options).
 */
int32_t lance_index_segment_builder_set_training_options(LanceIndexSegmentBuilder* builder,
                                                         const LanceVectorTrainingOptions* options);

/**
 * Builds the segment WITHOUT committing and returns its metadata.
 *
 * The metadata is the prost-encoded pb::IndexMetadata message (the manifest's own
 * encoding).  A builder runs once; a second call is LANCE_ERR_INVALID_ARGUMENT.
 *
 * A caller-assigned options->index_uuid must be new: when a segment with that UUID is
 * committed in the dataset's latest version, or its directory _indices/<uuid>/ already
 * holds files, the call fails with LANCE_ERR_DUPLICATE_SEGMENT before writing anything
 * (why, and why the temporary files below go as they do: docs/core-references.md
 * "Segment builds: UUID claims and temporary files").  The UUID is then claimed
 * atomically, by creating _indices/<uuid>/lance-c.claim if it does not exist (the store's
 * put-if-absent; Tencent COS has none and keeps only the checks before): of attempts with
 * one UUID started at the same moment exactly one proceeds, the others fail with
 * LANCE_ERR_DUPLICATE_SEGMENT.  The claim file stays beside the segment's files.  Give
 * every attempt of a task a fresh UUID.
 *
 * Temporary files: vector builds spill their shuffle (shuffle_data files
 * about the size of the group's vectors) to a directory of their own under
 * the process's directory, lance-c-process-<pid>-<random> in the system's
 * temporary directory (TMPDIR as it was at the process's first lance-c
 * call, else /tmp), and remove it when the build ends, whether it
 * succeeded, failed or was cancelled (a segment build on s3:// cancelled
 * while writing ends just after the call returns: "Cancellation" below).
 * The process holds a lock (flock) on its directory while it lives and
 * removes the directory when it exits (exit() or a return from main), with
 * any spill a build could not remove itself.  The directory is the owner's
 * alone (mode 0700).  A process killed with SIGKILL cannot remove its
 * directory, but its lock dies with it: the first lance-c call of the next
 * process on the machine removes every directory named
 * lance-c-process-<digits>-<6 letters or digits> that no process holds
 * locked; other names, even with that prefix, are left alone.
 * lance_dataset_cleanup_old_versions() reclaims only what is under the
 * dataset.
 *
 * @param out_metadata_bytes  Produced: free with lance_free_bytes().
 * @param out_metadata_len    Receives the byte count.
 */
int32_t lance_index_segment_builder_execute_uncommitted(LanceIndexSegmentBuilder* builder, uint8_t** out_metadata_bytes,
                                                        size_t* out_metadata_len);

/**
 * Frees a builder, executed or not, once no call uses it (never while its execute runs).
 *
 * A segment it built stays in storage, uncommitted, for the metadata
 * bytes its execute returned; the model and cancel token it was given
 * keep their own handles.
 *
 * @param builder  Consumed.  NULL is a no-op.
 * It cannot fail and leaves this thread's last error as it was.
 */
void lance_index_segment_builder_free(LanceIndexSegmentBuilder* builder);

/* ========================================================================
 * Build progress and cancellation (RFC E3 + E4)
 *
 * Both apply to segment builds (set on the builder before it executes) and
 * to the calls that take a LanceIndexBuildControl in their options (one-shot
 * creation, one-node training, a worker's round, optimize).
 *
 * Threading contract of the progress callback -- stronger than the RFC's:
 *   - It runs on the thread that called the build function (execute or
 *     create), never on a library thread, so it need not be thread-safe
 *     with respect to that thread.
 *   - Calls never overlap.
 *   - No call happens after the build function returned: `callback_ctx` may be
 *     freed as soon as it returns, whatever it returned.
 *   - `stage` and `unit` are borrowed for the call only.
 *   - While a callback or a cancel token is set, the build runs on a
 *     library thread and the calling thread delivers its events; the build
 *     does not wait for the callback (events queue), so a slow callback
 *     only delays later events and the return of the call (under a
 *     process budget with io_threads set, a build with a cancel token on
 *     the local file system runs on the calling thread itself, between
 *     deliveries: a slow callback then delays the build too).  The callback
 *     must not call lance-c functions other than lance_index_build_cancel()
 *     and lance_index_build_cancel_requested() (others fail with
 *     LANCE_ERR_INVALID_ARGUMENT instead of deadlocking).
 * ======================================================================== */

/*
 * Build progress: the order of events, and the stages and units reported.
 *
 * Events of one stage arrive in order: one STAGE_START, zero or more
 * STAGE_PROGRESS with `completed` never decreasing, one STAGE_COMPLETE.  A
 * failed or cancelled build may end without the STAGE_COMPLETE of the stage
 * it was in.  A NULL callback (the default) costs nothing.
 *
 * Stages and units, as reported by Lance 14.0.2 (names come from the core
 * and may change with it; treat unknown stages as opaque):
 *   IVF_* vector builds   "train_ivf" (total = max iterations, "iterations";
 *                         progress per k-means iteration; with an injected
 *                         model it starts and completes at once),
 *                         "train_quantizer" (no total, unit ""),
 *                         "shuffle" (total = rows, "rows"),
 *                         "merge_partitions" (total = partitions,
 *                         "partitions"; progress per partition written)
 *   scalar builds         "load_data" (no total, "rows"); the index is
 *   (BTREE, BITMAP,       built after this stage completes, with no
 *   LABEL_LIST, INVERTED) further events
 */

/*
 * Cancellation: the builds that return at once.
 *
 * lance_index_build_cancel() sets the token.  A build whose UUID this library chose
 * or was given (every build except the fragment-scoped BTREE and LABEL_LIST segment
 * builds) on the local file system, and such a segment build on s3:// (one whose
 * dataset has no extra base paths), returns at once, whatever stage it is in
 * (docs/measurements.md has the measured latencies; how: docs/core-references.md
 * "Cancel on s3://").
 *   - Stopped in a stage that writes, on the local file system its tasks are dropped
 *     and the file operations it had in flight end before the call returns.
 *   - On s3:// none of the build's writes (PUTs, multipart uploads and their parts,
 *     copies) starts after the cancel; before the call returns the PUTs and upload
 *     completions already sent finish and the parts in flight are cut off, so nothing
 *     more of the build is written once it returned.  What it wrote is removed on a
 *     library thread after the return: the multipart uploads it left open under
 *     _indices/<uuid>/ are aborted, its files are removed, any incomplete upload still
 *     listed there is aborted, and its UUID claim is removed last.  That takes a few
 *     store round trips (docs/core-references.md "Cancel on s3://"); a process that exits (exit()
 *     or a return from main) first waits for it; what a process killed meanwhile
 *     leaves, lance-index cleanup reclaims.
 *   - The call does not wait for the computation the build was in, which ends on a
 *     library thread after the return (at its next await in the core), writing
 *     nothing, and then removes the build's temporary directory.
 *   - A one-shot creation returns success exactly when its index was committed (a
 *     cancel that lands inside the commit is decided by whether the commit landed;
 *     the handle is then at the dataset's latest version), and LANCE_ERR_CANCELLED
 *     with nothing committed otherwise.
 */

/*
 * Cancellation: the other builds, and what a cancelled build leaves.
 *
 * Every other build (a one-shot build on an object store, a segment build on
 * another object store than s3://, or a fragment-scoped BTREE or LABEL_LIST
 * segment) returns at once while it has written nothing to the dataset's store:
 * before its first stage, in "train_ivf", "train_quantizer", "load_data", and in
 * "shuffle" (whose files go to a local temporary directory of the core's own).
 * Once it writes ("merge_partitions", a scalar index's files, a commit), it stops
 * at its next checkpoint (each progress event is one: one per partition written),
 * or runs to its end and then removes its segment (why: docs/core-references.md).
 * A fragment-scoped BTREE or LABEL_LIST build stopped at a checkpoint leaves its
 * partial files for Lance's cleanup (its UUID is the core's, reported only on
 * success).
 *
 * A build abandoned before it wrote to the store leaves the computation in
 * progress (a k-means run, which the core does not interrupt, or the shuffle up to
 * its next checkpoint) to finish on a library thread; it then fails without
 * writing to the store, and the shuffle's temporary directory is removed.
 * A cancelled build commits nothing and removes the files it had written under
 * _indices/<uuid>/ (a segment build on s3:// stopped at once, just after the call
 * returned: above).  A segment build also looks at the token once more when it
 * finishes: cancelled by then, it removes its segment and returns
 * LANCE_ERR_CANCELLED, so a cancel requested before execute returns always wins.
 * A token cancelled before the build starts makes it return LANCE_ERR_CANCELLED at
 * once; one cancelled after the build returned has no effect on it.
 *
 * A cancel requested from inside the progress callback takes effect like any
 * other: the build has moved on meanwhile, and stops as described.
 */

typedef enum {
    LANCE_INDEX_BUILD_PROGRESS_STAGE_START = 0,
    LANCE_INDEX_BUILD_PROGRESS_STAGE_PROGRESS = 1,
    LANCE_INDEX_BUILD_PROGRESS_STAGE_COMPLETE = 2
} LanceIndexBuildProgressEvent;

/**
 * The progress callback of index builds.
 *
 * @param callback_ctx  As given with the callback.
 * @param event         A LanceIndexBuildProgressEvent.
 * @param stage         Borrowed for the call.
 * @param total         STAGE_START: the stage's work units, 0 = unknown.  0 otherwise.
 * @param unit          Borrowed: what `total` and `completed` count ("" when unknown).
 * @param completed     STAGE_PROGRESS: units done so far.  0 for STAGE_START
 *                      and STAGE_COMPLETE.
 */
typedef void (*LanceIndexBuildProgressCallback)(void* callback_ctx, int32_t event, const char* stage, uint64_t total,
                                                const char* unit, uint64_t completed);

typedef struct LanceIndexBuildCancelToken LanceIndexBuildCancelToken;

/**
 * Makes a cancel token.
 *
 * The new token is uncancelled, to give to one or more builds (a builder's
 * lance_index_segment_builder_set_cancel_token(), a
 * LanceIndexBuildControl).  A token cannot be reset: one per build (or per
 * group of builds cancelled together).
 * @return Produced: free with lance_index_build_cancel_token_free(); NULL
 *         on error (LANCE_ERR_INVALID_ARGUMENT when called from inside a
 *         callback lance-c is running).
 */
LanceIndexBuildCancelToken* lance_index_build_cancel_token_new(void);

/**
 * Frees the caller's handle.  Safe while builds given the token still run:
 * they keep their own reference (and can no longer be cancelled through it).
 * NULL is a no-op.
 */
void lance_index_build_cancel_token_free(LanceIndexBuildCancelToken* token);

/**
 * Requests cancellation of every build given this token.
 *
 * Callable from any thread at any time, including from a progress callback;
 * idempotent.  Not async-signal-safe: a signal handler should set a flag
 * that a thread turns into this call (common/cancel_signal.c does).  A
 * token stays cancelled: use a new one for the next build.
 *
 * @return 0, or -1 for a NULL token.
 */
int32_t lance_index_build_cancel(const LanceIndexBuildCancelToken* token);

/**
 * Whether lance_index_build_cancel() was called on the token (once true, always true).
 *
 * Callable from any thread at any time, a progress or log callback
 * included.
 *
 * @param token  Borrowed.
 * @return true or false; false with LANCE_ERR_INVALID_ARGUMENT for a NULL
 *         `token`.
 */
bool lance_index_build_cancel_requested(const LanceIndexBuildCancelToken* token);

/**
 * Sets the progress callback of a builder.
 *
 * `callback` must not be NULL (LANCE_ERR_INVALID_ARGUMENT; a builder's
 * progress is set, never cleared); `callback_ctx` may be.  Before any
 * execute only, even a failed one (afterwards LANCE_ERR_INVALID_ARGUMENT);
 * a later call replaces the callback.  Calls follow this section's
 * threading contract: on the executing thread, never overlapping, none
 * after execute returns (so the callback and its context need to live only
 * until then).
 */
int32_t lance_index_segment_builder_set_progress_callback(LanceIndexSegmentBuilder* builder,
                                                          LanceIndexBuildProgressCallback callback, void* callback_ctx);

/**
 * Gives a builder a cancel token (NULL = none).  The builder keeps its own
 * reference; the caller still frees its handle.  Before execution only.
 */
int32_t lance_index_segment_builder_set_cancel_token(LanceIndexSegmentBuilder* builder,
                                                     const LanceIndexBuildCancelToken* token);

/**
 * Progress and cancellation of a call that is not a segment build.
 *
 * The `control` field of the options of lance_dataset_create_vector_index_v2()
 * and lance_dataset_create_scalar_index_v2() (LanceIndexCreateOptions),
 * lance_vector_model_train(), lance_vector_training_worker_answer() and
 * lance_dataset_optimize_indices().  Zeroed = none.
 */
struct LanceIndexBuildControl {
    LanceIndexBuildProgressCallback progress; /* NULL = no progress */
    void* progress_user_data;
    const LanceIndexBuildCancelToken* cancel_token; /* NULL = not cancellable */
};

/* ========================================================================
 * Distributed index builds: segment metadata (RFC E2)
 *
 * The bytes a segment build returns are the segment's whole description
 * (prost-encoded pb::IndexMetadata, docs/segment-metadata.md): they travel
 * from a worker to its coordinator by any transport.  A parsed handle reads
 * them without a dataset.
 * ======================================================================== */

typedef struct LanceIndexSegmentMetadata LanceIndexSegmentMetadata;

/* ---- Parsing and freeing ---- */

/**
 * Parses segment metadata bytes (borrowed).  Empty, truncated or garbage
 * bytes are LANCE_ERR_INVALID_ARGUMENT.
 * @param out  Produced: free with lance_index_segment_metadata_free().
 */
int32_t lance_index_segment_metadata_parse(const uint8_t* bytes, size_t len, LanceIndexSegmentMetadata** out);

/**
 * Frees parsed segment metadata.
 *
 * Every string its getters returned (the name, type name, type URL,
 * fingerprint, file paths) goes with it.  The bytes it was parsed from
 * are the caller's, untouched.
 * @param metadata  Consumed.  NULL is a no-op.
 * It cannot fail and leaves this thread's last error as it was.
 */
void lance_index_segment_metadata_free(LanceIndexSegmentMetadata* metadata);

/* ---- What the segment is: identity, type, model and versions ---- */

/**
 * Writes the segment's UUID, 16 raw bytes.
 *
 * The form lance_scanner_set_index_segments() and
 * lance_scanner_set_scalar_index_segment() take; the segment's files are
 * under _indices/<uuid>/ in the dashed text form.
 * @param metadata  Borrowed.
 * @param out_uuid  Borrowed out parameter: room for 16 bytes, not NULL;
 *                  written on success only.
 * @return 0, or -1 with LANCE_ERR_INVALID_ARGUMENT (a NULL argument).
 */
int32_t lance_index_segment_metadata_uuid(const LanceIndexSegmentMetadata* metadata, uint8_t* out_uuid);

/* The strings below are owned by the metadata handle: valid until it is freed. */

/**
 * The index name the segment records: the name its build was given, or the core's default.
 *
 * Borrowed from the handle: never free it.
 *
 * @param metadata  Borrowed.
 * @return The name, or NULL with LANCE_ERR_INVALID_ARGUMENT for a NULL
 *         `metadata`.
 */
const char* lance_index_segment_metadata_name(const LanceIndexSegmentMetadata* metadata);

/**
 * The segment's index type as an enum value.
 *
 * It is the value of the type that builds it: a LanceScalarIndexType (1-5,
 * 8-10, 12) or a LanceVectorIndexType (101-107); -1 on error, and -1 with
 * LANCE_ERR_NOT_SUPPORTED for a type neither enum names
 * (lance_index_segment_metadata_index_type_name() still names it).
 */
int32_t lance_index_segment_metadata_index_type(const LanceIndexSegmentMetadata* metadata);

/**
 * The segment's index type by name: "IVF_PQ", "IVF_HNSW_SQ", ..., "BTree",
 * "Bitmap", "LabelList", "Inverted", "NGram", "ZoneMap", "BloomFilter",
 * "RTree", "MinHashLsh" (the core's details message, less "IndexDetails").
 */
const char* lance_index_segment_metadata_index_type_name(const LanceIndexSegmentMetadata* metadata);

/**
 * The protobuf type URL of the segment's index details (e.g.
 * "/lance.index.pb.VectorIndexDetails"); NULL with LANCE_OK when the segment
 * records no details, NULL with an error code on error.
 */
const char* lance_index_segment_metadata_index_details_type_url(const LanceIndexSegmentMetadata* metadata);

/**
 * The fingerprint of the shared model the segment was built with, or NULL
 * (with LANCE_OK) when it was trained locally or is not a vector segment.
 */
const char* lance_index_segment_metadata_model_fingerprint(const LanceIndexSegmentMetadata* metadata);

/**
 * The dataset version the segment was built from.
 *
 * The version its builder's dataset handle held.
 * @param metadata  Borrowed.
 * @return The version, or 0 with LANCE_ERR_INVALID_ARGUMENT for a NULL
 *         `metadata`.
 */
uint64_t lance_index_segment_metadata_dataset_version(const LanceIndexSegmentMetadata* metadata);

/**
 * The on-disk index format version the segment records; -1 on error.  (Bytes
 * may record a negative version themselves: after -1, check
 * lance_last_error_code().)
 */
int32_t lance_index_segment_metadata_index_version(const LanceIndexSegmentMetadata* metadata);

/**
 * When the segment was created.
 *
 * In milliseconds since the Unix epoch (UTC), if its bytes record it.
 * @param metadata     Borrowed.
 * @param out_ms       Borrowed out parameter, not NULL: the time, or 0
 *                     when none is recorded.
 * @param out_present  Borrowed out parameter, not NULL: whether a time is
 *                     recorded.  Both are written on success only.
 * @return 0, or -1 with LANCE_ERR_INVALID_ARGUMENT (a NULL argument).
 */
int32_t lance_index_segment_metadata_created_at_ms(const LanceIndexSegmentMetadata* metadata, int64_t* out_ms,
                                                   bool* out_present);

/* ---- What the segment covers: fields, fragments and files ---- */

/**
 * The field ids the segment indexes.  *out_count receives the number of
 * ids; pass NULL and capacity 0 to ask for the count only.  A capacity below
 * the count is LANCE_ERR_INVALID_ARGUMENT.
 */
int32_t lance_index_segment_metadata_field_ids(const LanceIndexSegmentMetadata* metadata, int32_t* out_field_ids,
                                               size_t capacity, size_t* out_count);

/**
 * The fragments the segment covers.
 *
 * Their ids, ascending (none when its bytes record no fragment set).
 * @param metadata          Borrowed.
 * @param out_fragment_ids  Borrowed: room for `capacity` ids; NULL with
 *                          capacity 0 asks for the count only.
 * @param capacity          Below the count: LANCE_ERR_INVALID_ARGUMENT and
 *                          no id is written (the count still is).
 * @param out_count         Borrowed out parameter, not NULL: the number of
 *                          fragments.
 * @return 0, or -1 with LANCE_ERR_INVALID_ARGUMENT (a NULL `metadata` or
 *         `out_count`, NULL ids with a capacity, a misaligned buffer, a
 *         capacity below the count).
 */
int32_t lance_index_segment_metadata_fragment_ids(const LanceIndexSegmentMetadata* metadata, uint32_t* out_fragment_ids,
                                                  size_t capacity, size_t* out_count);

/**
 * The number of field ids the segment indexes.
 *
 * 1 for the index types of this library, which index one column.
 * @param metadata  Borrowed.
 * @return The count; 0 on error (LANCE_ERR_INVALID_ARGUMENT for a NULL
 *         `metadata`), and for bytes that record no field.
 */
size_t lance_index_segment_metadata_field_count(const LanceIndexSegmentMetadata* metadata);

/**
 * The number of fragments the segment covers.
 *
 * As lance_index_segment_metadata_fragment_ids() counts them.
 * @param metadata  Borrowed.
 * @return The count; 0 both for none and on error
 *         (LANCE_ERR_INVALID_ARGUMENT for a NULL `metadata`).
 */
size_t lance_index_segment_metadata_fragment_count(const LanceIndexSegmentMetadata* metadata);

/**
 * The number of files the segment lists.
 *
 * Its files under _indices/<uuid>/, which the commit checks; read each
 * with lance_index_segment_metadata_file_at().
 * @param metadata  Borrowed.
 * @return The count; 0 both for bytes that list no files and on error
 *         (LANCE_ERR_INVALID_ARGUMENT for a NULL `metadata`).
 */
uint64_t lance_index_segment_metadata_file_count(const LanceIndexSegmentMetadata* metadata);

/**
 * The index-th file: its path relative to the segment's directory (owned by
 * the handle) and its size in bytes.
 */
int32_t lance_index_segment_metadata_file_at(const LanceIndexSegmentMetadata* metadata, size_t index,
                                             const char** out_path, uint64_t* out_size_bytes);

/* ========================================================================
 * Distributed index builds: commit (RFC E5)
 * ======================================================================== */

/**
 * Committing index segments as one index: the version, conflicts and replace.
 *
 * Commits segments built by lance_index_segment_builder_execute_uncommitted()
 * (by this library or any Lance SDK of the same format) as one logical index
 * named `index_name`, in exactly one new dataset version.
 *
 * The commit is made against the dataset's LATEST version, whatever version
 * the handle is at; on success the handle moves to the new version (read it
 * with lance_dataset_version()).  A set already committed commits nothing:
 * the handle moves to the latest version, and the result's `version` is the
 * version that first held the set (it may be older).  Rows appended since
 * the segments were built are fine: their fragments stay unindexed (see
 * lance_dataset_index_coverage_json()).
 *
 * Another writer committing a conflicting change at the same moment (another
 * coordinator committing an index of the same name, a compaction of the
 * covered fragments) gives LANCE_ERR_COMMIT_CONFLICT: retryable -- call
 * again with the same segments; if the other writer committed this very
 * set, the call reports it as already committed instead.
 *
 * replace = true: the new segments replace the existing segments of the
 * index whose fragments they cover; existing segments over other fragments
 * are kept (this is how a coordinator indexes fragments appended since the
 * last build: commit only their segment, with replace).  An existing
 * segment that the new set covers only in part (some of its fragments
 * still in the dataset are covered, others are not) is
 * LANCE_ERR_OVERLAPPING_SEGMENTS: replacing it would leave its other
 * fragments unindexed without a word.  The model check then includes the
 * kept segments.
 *
 * Segments can be merged into fewer before the commit:
 * lance_dataset_merge_index_segments() below.  The checks the commit
 * makes, in order: the next block.
 */

/**
 * Committing index segments: the checks, in order.
 *
 * Each check has its own code and a message naming the segments and
 * fragments involved:
 *   segment_count == 0                         LANCE_ERR_NO_SEGMENTS
 *   bytes that are not segment metadata        LANCE_ERR_INVALID_ARGUMENT
 *   a UUID twice in the set                    LANCE_ERR_DUPLICATE_SEGMENT
 *   two segments sharing a fragment            LANCE_ERR_OVERLAPPING_SEGMENTS
 *   `column` not in the latest version         LANCE_ERR_NOT_FOUND
 *   the same set already committed as this     success, already_committed = true,
 *     index (a retry after a lost reply, even  version = the version that committed it
 *     when a compaction has since rewritten    (the oldest version still kept, if
 *     the committed segments)                  versions were cleaned up since)
 *   some of the set already committed          LANCE_ERR_DUPLICATE_SEGMENT
 *   coverage of fragments no longer in the     LANCE_ERR_STALE_SEGMENT
 *     dataset (deleted, compacted away)
 *   a segment built on another column, or an   LANCE_ERR_INVALID_ARGUMENT
 *     index of that name on another column
 *   an index of that name exists, !replace     LANCE_ERR_INDEX
 *   a segment of an index type or version      LANCE_ERR_INVALID_ARGUMENT /
 *     the Lance core cannot read (committed,   LANCE_ERR_NOT_SUPPORTED
 *     it would be invisible to queries)
 *   segments of different index types (new     LANCE_ERR_INVALID_ARGUMENT
 *     ones and those kept by replace)
 *   vector segments from different shared      LANCE_ERR_MODEL_MISMATCH
 *     models, or without one (trained
 *     independently), unless allowed
 *   a file a segment's metadata lists is       LANCE_ERR_INCOMPLETE_SEGMENT
 *     missing or of another size (or a
 *     segment listing no files has none)
 * and the core's own checks (vector query contract) give
 * LANCE_ERR_INVALID_ARGUMENT or LANCE_ERR_INDEX.  Files of segments stored
 * under another base path of a multi-base dataset are not verified here.
 */
typedef struct LanceCommitIndexOptions {
    bool replace; /* as above; false = refuse an existing index */
    /* Commit vector segments that were trained independently or from
       different shared models (queries still work: each segment is searched
       with its own model; recall per segment differs). */
    bool allow_independent_models;
    /* The coordinator's job and attempt ids.
     *
     * Borrowed, NULL = none: recorded in every committed segment and shown
     * by lance_dataset_index_segments_json() ("job_id", "attempt_id").
     * Lance 14.0.2 has a place for them on vector segments only: with scalar
     * segments a non-NULL id is LANCE_ERR_NOT_SUPPORTED.  An idempotent
     * retry keeps the ids of the commit that happened. */
    const char* job_id;
    const char* attempt_id;
} LanceCommitIndexOptions;

typedef struct LanceCommitIndexResult {
    uint64_t version;       /* the version holding the committed segments */
    bool already_committed; /* true: nothing was written by this call */
} LanceCommitIndexResult;

/**
 * Commits segments as one index, with this library's checks and codes.
 *
 * Upstream's lance_dataset_commit_index_segments() with `options` (the
 * checks and codes above) and a result.
 * @param dataset                 Borrowed.
 * @param index_name, column      Borrowed; the column must exist.
 * @param segment_metadata_bytes  Borrowed: `segment_count` pointers to
 *                                metadata bytes, with their lengths in
 *                                `segment_metadata_lens`.
 * @param options                 Borrowed; NULL = all false / NULL.
 * @param out_result              Nullable; written on success only.
 */
int32_t lance_dataset_commit_index_segments_v2(LanceDataset* dataset, const char* index_name, const char* column,
                                               const uint8_t* const* segment_metadata_bytes,
                                               const size_t* segment_metadata_lens, size_t segment_count,
                                               const LanceCommitIndexOptions* options,
                                               LanceCommitIndexResult* out_result);

/** Deprecated: the same call as lance_dataset_commit_index_segments_v2(). */
LANCE_DEPRECATED("use lance_dataset_commit_index_segments_v2(); removed in lance-c 0.6")
int32_t lance_dataset_commit_index_segments_with_options(LanceDataset* dataset, const char* index_name,
                                                         const char* column,
                                                         const uint8_t* const* segment_metadata_bytes,
                                                         const size_t* segment_metadata_lens, size_t segment_count,
                                                         const LanceCommitIndexOptions* options,
                                                         LanceCommitIndexResult* out_result);

/**
 * Upstream lance-c's form of the commit.
 *
 * lance_dataset_commit_index_segments_v2() with replace = true and
 * allow_independent_models = true, and these differences, so that a
 * program written for upstream sees upstream's behaviour:
 *   - every problem with the set (empty, a repeated UUID, overlapping
 *     segments, fragments no longer in the dataset, files missing, an
 *     existing segment covered in part) is LANCE_ERR_INVALID_ARGUMENT;
 *     the message is the one _v2 gives (it names the problem,
 *     the segments and the fragments);
 *   - there is no replace flag: existing segments of the index whose
 *     fragments the new set covers are replaced, the others kept, as
 *     described above for replace = true;
 *   - vector segments trained independently are accepted (each is searched
 *     with its own model); segments that disagree on metric, dimension or
 *     index type are still refused (LANCE_ERR_INVALID_ARGUMENT).
 * Like _v2, and unlike upstream, a retry of a set already
 * committed as this index succeeds without a new version (upstream makes
 * exactly one new version per call): a coordinator that lost the reply of
 * its commit can call again.
 */
int32_t lance_dataset_commit_index_segments(LanceDataset* dataset, const char* index_name, const char* column,
                                            const uint8_t* const* segment_metadata_bytes,
                                            const size_t* segment_metadata_lens, size_t segment_count);

/**
 * Merges uncommitted segments into one segment, WITHOUT committing.
 *
 * The Lance core's merge_existing_index_segments: fewer, larger segments
 * make queries faster, since a query searches every segment of an index.
 * Commit the returned bytes like any segment's (the sources are not
 * committed; their files stay until lance_dataset_cleanup_old_versions()
 * reclaims them).
 *
 * Vector segments (IVF_*) are merged partition by partition: their
 * partition files are combined, not retrained or re-encoded, so they must
 * come from one shared model (else LANCE_ERR_MODEL_MISMATCH) and the merged
 * segment records that model.  Scalar segments (every LanceScalarIndexType:
 * the Lance 14.0.2 core merges them all) are rebuilt from their sources.  The
 * checks of a commit apply to the set: a repeated UUID is
 * LANCE_ERR_DUPLICATE_SEGMENT, two segments over one fragment
 * LANCE_ERR_OVERLAPPING_SEGMENTS; segments of different types, columns or
 * parameters are LANCE_ERR_INVALID_ARGUMENT.  IVF_RQ segments merge when
 * they were built from one IVF_RQ model that carries a RaBitQ rotation
 * (every model this version trains for IVF_RQ does): they share its
 * rotation.  The Lance 14.0.2 core merges only IVF_RQ segments with one
 * rotation; segments of a model without one (see "Distributed index
 * builds: shared models") each drew their own, and their merge is
 * LANCE_ERR_MODEL_MISMATCH (commit them unmerged instead).  Merged segments
 * may be merged again.
 *
 * @param dataset                 Borrowed: the version the segments' files
 *                                are read from (any version that has them).
 * @param segment_metadata_bytes  Borrowed: `segment_count` (at least 2)
 *                                segments' metadata bytes, with their
 *                                lengths in `segment_metadata_lens`.
 * @param out_metadata_bytes      Produced on success: free with
 *                                lance_free_bytes().  Untouched on error.
 * @param out_metadata_len        Receives the byte count.
 */
int32_t lance_dataset_merge_index_segments(const LanceDataset* dataset, const uint8_t* const* segment_metadata_bytes,
                                           const size_t* segment_metadata_lens, size_t segment_count,
                                           uint8_t** out_metadata_bytes, size_t* out_metadata_len);

/* ========================================================================
 * Distributed index builds: coverage and statistics (RFC E6)
 *
 * Both functions return JSON: a C engine that schedules rebuilds usually
 * has a JSON parser already, the documents stay readable in logs, and new
 * fields can be added without breaking callers (readers must ignore fields
 * they do not know).  A field whose value is unknown is null, never guessed.
 * ======================================================================== */

/**
 * Describes every index segment as JSON.
 *
 * One object per segment of every user index of the handle's version, in
 * manifest order:
 *
 *   "name"              string   the logical index the segment belongs to
 *   "uuid"              string   the segment's UUID, hyphenated hex
 *   "columns"           [string] the indexed columns
 *   "type"              string   "IVF_PQ", "IVF_HNSW_SQ", "BTree", "Bitmap", ...
 *   "dataset_version"   integer  the version the segment was built from
 *   "index_version"     integer  the on-disk index format version
 *   "fragment_ids"      [integer] the fragments it covers, ascending
 *   "created_at"        string (RFC 3339, UTC) or null when not recorded
 *   "num_rows"          integer  rows of its fragments as written, deleted
 *                       rows included (a segment built after some were
 *                       deleted indexed fewer); null when a covered
 *                       fragment is no longer in the dataset
 *   "size_bytes"        integer  total size of its files as recorded, or null
 *   "model_fingerprint" string   the shared model it was built with, or null
 *   "job_id"            string   the committing job's id (see
 *                       LanceCommitIndexOptions), or null
 *   "attempt_id"        string   the committing attempt's id, or null
 *
 * lance_dataset_index_list_json() keeps its 0.1.6 shape; this is the
 * extended view.  Produced: free with lance_free_string().  NULL on error.
 */
char* lance_dataset_index_segments_json(const LanceDataset* dataset);

/**
 * How far one logical index covers the handle's version:
 *
 *   "name"                string
 *   "dataset_version"     integer  the handle's version
 *   "num_segments"        integer
 *   "indexed_fragments"   [integer] fragments of this version some segment covers
 *   "unindexed_fragments" [integer] fragments no segment covers (e.g. appended
 *                         since the build): the ones to index next
 *   "indexed_rows"        integer  live rows (deletions excluded) of the indexed
 *                         fragments, or null when a count is not recorded
 *   "unindexed_rows"      integer  the same for the unindexed fragments
 *   "stale_fragments"     [integer] fragments the segments cover that are no
 *                         longer in this version (deleted or compacted away)
 *
 * @param index_name  Borrowed; LANCE_ERR_NOT_FOUND when there is no such index.
 * Produced: free with lance_free_string().  NULL on error.
 */
char* lance_dataset_index_coverage_json(const LanceDataset* dataset, const char* index_name);

/**
 * The metadata bytes of a committed segment.
 *
 * In the form lance_index_segment_builder_execute_uncommitted() gives
 * them for a new one: what lance_dataset_merge_index_segments() takes, so
 * that committed segments can be merged (a maintenance plan's merge
 * tasks).  The bytes describe the segment as the handle's version records
 * it (its fragments after any remap by a compaction).
 * @param dataset             Borrowed.
 * @param index_name          Borrowed, non-empty.
 * @param segment_uuid        Borrowed: the segment's UUID as text, hyphenated
 *                            (as the JSON listings give it) or 32 hex digits,
 *                            either case.
 * @param out_metadata_bytes  Produced on success: free with lance_free_bytes().
 *                            Untouched on error.
 * @param out_metadata_len    Receives the byte count.
 * @return 0, or -1 with LANCE_ERR_INVALID_ARGUMENT (a NULL argument, an
 *         empty name, a text that is no UUID), LANCE_ERR_NOT_FOUND (no such
 *         index, or no such segment of it in the handle's version),
 *         LANCE_ERR_IO.
 */
int32_t lance_dataset_index_segment_metadata(const LanceDataset* dataset, const char* index_name,
                                             const char* segment_uuid, uint8_t** out_metadata_bytes,
                                             size_t* out_metadata_len);

/* ========================================================================
 * Index maintenance
 *
 * Keeping indices up to date as the table changes, on one node: the Lance
 * core's optimize_indices (pylance's dataset.optimize.optimize_indices).
 * Rows appended after an index was built sit in fragments none of its
 * segments covers (lance_dataset_index_coverage_json() lists them as
 * "unindexed_fragments"); queries still find them, by scanning those
 * fragments without the index, which grows slower as they accumulate.  An
 * optimize indexes them, as a new segment of its own (a delta) or merged
 * with the index's newest segments, and can also merge segments or
 * retrain a vector index's model on the current rows.  Deleted rows need
 * no optimize (queries skip them), nor does a compaction (it remaps the
 * committed segments to the new fragments).
 * ======================================================================== */

/**
 * Options of lance_dataset_optimize_indices().
 *
 * Zeroed (or a NULL options pointer) = the Lance core's defaults, written
 * next to each field; a combination the core would ignore or refuse is
 * LANCE_ERR_INVALID_ARGUMENT, naming the fields.
 */
typedef struct LanceOptimizeIndicesOptions {
    /* The indices to optimize.
     *
     * Borrowed: their names, `index_name_count` of them, each a user index
     * of the handle's version (else LANCE_ERR_NOT_FOUND: the core would
     * skip the name without a word), none empty or listed twice.  NULL with
     * count 0 = every user index.  NULL with a count > 0, or a non-NULL
     * list with count 0, is LANCE_ERR_INVALID_ARGUMENT. */
    const char* const* index_names;
    size_t index_name_count;
    /* How the new rows join each index.
     *
     * false (default): the core decides how the new rows join each index.
     * Lance 14.0.2: a scalar index merges them into its newest segment; a
     * vector index merges them and its segments into one segment, splitting
     * or joining IVF partitions that grew uneven (a delta segment instead
     * when its segments come from different models); with no new rows a
     * vector index is left as it is unless a partition needs rebalancing.
     * true: the new rows and the index's newest `num_indices_to_merge`
     * segments become one segment; 0 = a delta segment over the new rows
     * only, the existing segments kept as they are; a count at or above the
     * index's segment count = one segment for the whole index. */
    bool has_num_indices_to_merge;
    uint32_t num_indices_to_merge; /* read with has_num_indices_to_merge only; else it must be 0 */
    /* Retrain the model of vector indices.
     *
     * Vector indices: train the model (IVF centroids, quantizer) again on the
     * current rows and rebuild the index as one segment over every fragment,
     * for data that has drifted from the model.  Scalar indices have no
     * model: they are optimized as without it.  Not together with
     * has_num_indices_to_merge (the rebuild merges every segment).  false
     * (default) = the existing model encodes the new rows. */
    bool retrain;
    /* Rebalance uneven IVF partitions.
     *
     * Vector indices with has_num_indices_to_merge and a count > 0: split and
     * join IVF partitions that grew uneven, within the merged segments
     * (without has_num_indices_to_merge the core does so anyway).  Not with
     * num_indices_to_merge = 0 (a delta has nothing to rebalance) nor with
     * the row bounds below.  false (default) = the partitions are kept. */
    bool enable_partition_rebalancing;
    /* Bounds on the rows one build task indexes and one resulting segment holds.
     *
     * 0 (default) = unbounded: each index is optimized in one task into
     * one new segment.  With a bound, the new rows of an index whose type
     * can merge segments (IVF_*, BTREE, BITMAP, INVERTED, NGRAM) are built
     * in tasks of at most that many rows (a fragment is never split) and
     * packed with the merged segments into segments of at most
     * max_rows_per_segment rows; other types are optimized in one task.
     * An index the core cannot split this way (an INVERTED index it must
     * rebuild from the whole column, a legacy vector index) is left as it
     * is when no names are given, and refused (LANCE_ERR_NOT_SUPPORTED)
     * when named. */
    uint64_t max_rows_per_task;
    uint64_t max_rows_per_segment;
    /* Borrowed for the call; NULL = no progress, not cancellable (new in
       lance-c 0.5).  What is reported and where a cancel stops the call:
       lance_dataset_optimize_indices(). */
    const LanceIndexBuildControl* control;
} LanceOptimizeIndicesOptions;

/*
 * Optimizing indices (lance_dataset_optimize_indices()): progress and cancellation.
 *
 * Progress (options->control, under the threading contract of "Build
 * progress and cancellation"): first a stage of the call's own,
 * "optimize_indices" (total = the number of indices it optimizes, unit
 * "indices"; no STAGE_PROGRESS), which completes when the core starts its
 * first stage or, when the core reports none, when the call ends; then the
 * stages the core reports while it rebuilds vector indices (its own names,
 * as for index builds: treat unknown stages as opaque).  Lance 14.0.2
 * reports nothing while it optimizes a scalar index.
 *
 * Cancellation.  A token cancelled before the call starts gives
 * LANCE_ERR_CANCELLED at once, nothing written.  Once started, the
 * optimize may write to the dataset's store at any moment, so a cancel
 * stops it only at a checkpoint: each progress event is one (the end of
 * "optimize_indices", every event the core reports).  Stopped there, it
 * returns LANCE_ERR_CANCELLED, commits nothing (the handle keeps its
 * version) and leaves the files of the segments it had begun for
 * lance_dataset_cleanup_old_versions().  Between the core's last event
 * and its commit there is no checkpoint (the core offers none): a cancel
 * that comes after that event (for a scalar-only optimize: any time after
 * the start) does not stop the commit, and the call succeeds (its last
 * STAGE_COMPLETE may then be missing).  So LANCE_ERR_CANCELLED always
 * means nothing was committed, and success that the optimize completed.
 */

/**
 * Brings the indices of the handle's version up to date.
 *
 * It indexes the rows of the fragments they do not cover, and merges or retrains as
 * `options` say.  The Lance core plans and builds the new segments from the handle's
 * version and commits them in ONE new version, replacing the segments it merged (what
 * other writers committed meanwhile is kept, unless it conflicts: below); the handle
 * moves to that version.  With nothing to do (every fragment indexed, nothing to merge
 * or rebalance) it succeeds, commits nothing and the handle keeps its version.  Indices
 * the core cannot rewrite (an index type it does not know, a segment newer than it
 * reads) are skipped when no names are given.
 *
 * k-NN and filtered scans answer exactly as before the call (an IVF_FLAT index probed
 * in every partition still equals brute force over the live rows); only their speed
 * changes.  Progress and cancellation: the block above.
 *
 * @param dataset  Borrowed.
 * @param options  Borrowed; NULL = the defaults (every user index, the core's choice of
 *                 merges, no retraining, no bounds, no control).
 * @return 0, or -1 with:
 *         LANCE_ERR_INVALID_ARGUMENT  NULL dataset; the options above (names NULL with a
 *                                     count, empty, or repeated; not UTF-8; a field given
 *                                     without the one it needs, or against one it excludes);
 *         LANCE_ERR_NOT_FOUND         a name that is no user index of the handle's version;
 *         LANCE_ERR_COMMIT_CONFLICT   another writer committed a conflicting change
 *                                     meanwhile (a compaction of the covered fragments,
 *                                     another optimize or commit of the same index):
 *                                     nothing was committed and the handle keeps its
 *                                     version; open the dataset again and call again (on
 *                                     the old handle the call would plan from the same
 *                                     version);
 *         LANCE_ERR_INDEX,            the core refuses an index it cannot optimize (a named
 *         LANCE_ERR_NOT_SUPPORTED     index with covering fields, a legacy index asked to
 *                                     split by the row bounds, segments of different
 *                                     models asked to merge: the message says which and why);
 *         LANCE_ERR_IO                storage failed;
 *         LANCE_ERR_CANCELLED         options->control's token (above).
 *         A failed call commits nothing; new segment files it wrote are left
 *         unreferenced, for lance_dataset_cleanup_old_versions().
 */
int32_t lance_dataset_optimize_indices(LanceDataset* dataset, const LanceOptimizeIndicesOptions* options);

/**
 * Deprecated: lance_dataset_optimize_indices() with options->control (a
 * control in both places is LANCE_ERR_INVALID_ARGUMENT).
 */
LANCE_DEPRECATED("use lance_dataset_optimize_indices() with options->control; removed in lance-c 0.6")
int32_t lance_dataset_optimize_indices_with_control(LanceDataset* dataset, const LanceOptimizeIndicesOptions* options,
                                                    const LanceIndexBuildControl* control);

/**
 * Options of lance_dataset_plan_index_maintenance(): the size policy.
 * Zeroed (or a NULL options pointer) = the defaults written next to each
 * field.
 */
typedef struct LanceIndexMaintenanceOptions {
    /* The rows one segment should hold: a delta build task covers at most
       this many live rows (a fragment is never split), and merges stay
       within it unless max_segments forces more.  0 = 1048576. */
    uint64_t target_rows_per_segment;
    /* The size below which a segment is small.
     *
     * A segment holding fewer rows than this is small: it merges with a
     * neighbour while the two stay within target_rows_per_segment.  0 =
     * target_rows_per_segment / 4.  Above target_rows_per_segment is
     * LANCE_ERR_INVALID_ARGUMENT. */
    uint64_t small_segment_rows;
    /* The most segments the index should have once the plan has run.
     *
     * While it would have more, the smallest neighbouring pair merges
     * whatever its size.  0 = 32.  The new delta segments count; a plan
     * never merges them in the run that builds them. */
    uint32_t max_segments;
    /* The retraining advice's threshold (new in lance-c 0.5).
     *
     * 0 = no advice ("drift" is null).  Above 0, for a vector index: the
     * plan's "drift" compares the model's fit to the rows no segment covers
     * with its fit to the rows the segments cover, and advises retraining
     * when the ratio is above this (1.5, for example).  Ignored for a scalar
     * index.  Negative, infinite or NaN is LANCE_ERR_INVALID_ARGUMENT. */
    float drift_threshold;
} LanceIndexMaintenanceOptions;

/*
 * The maintenance plan of lance_dataset_plan_index_maintenance(): its JSON.
 *
 * The plan, an object:
 *   "index"             string   the index's name
 *   "columns"           [string] its columns
 *   "type"              string   its segments' type ("IVF_PQ", "BTree", ...)
 *   "dataset_version"   integer  the version planned from (the handle's)
 *   "model_fingerprint" string   the shared model all its segments were built with, or
 *                       null (a scalar index; none recorded; segments of different models)
 *   "policy"            object   the options in force, defaults applied:
 *                       "target_rows_per_segment", "small_segment_rows", "max_segments"
 *   "segments_before"   integer  the index's segments now
 *   "segments_after"    integer  its segments once every task is committed
 *   "tasks"             [object] the work, each independent of the others (any worker,
 *                       any order), builds first:
 *     "kind"          "build"    a delta segment over "fragment_ids", fragments no
 *                                segment covers: a run of neighbouring ones (manifest
 *                                order), split into consecutive ranges balanced by rows;
 *                    "rebuild"   a new segment over "fragment_ids", the fragments the one
 *                                segment in "segment_uuids" still covers (others it
 *                                covers left the table: deleted, or compacted away
 *                                without the index being remapped); such a segment is
 *                                never merged, as a commit refuses segments over missing
 *                                fragments;
 *                    "merge"     the segments in "segment_uuids" (2 or more, neighbours
 *                                by first fragment) merged into one over "fragment_ids".
 *                                Vector segments are merged only with segments of the
 *                                same shared model.
 *     "segment_uuids" [string]   (rebuild, merge) the segments replaced
 *     "fragment_ids"  [integer]  ascending
 *     "rows"          integer    build: live rows of its fragments; rebuild and merge:
 *                                rows written in them, deleted ones included (what the
 *                                policy weighs; a segment built after deletions holds
 *                                fewer)
 *   "stale_segments"    [string] segments none of whose fragments is in the table any
 *                       more: no task (they answer no query)
 */

/*
 * The plan's "drift": when to train a new model.
 *
 * Null unless options->drift_threshold is above 0 and the index is a vector index.  The
 * model is read back from the committed segments (lance_dataset_read_vector_model()); its
 * fit to rows is their k-means loss, the mean squared L2 distance from a row to its nearest
 * IVF centroid (rows scaled to unit length under COSINE), over an evenly spread sample of
 * at most 4,096 rows of each side.  Rows drawn from the distribution the model was trained
 * on give a ratio near 1.  An object:
 *   "threshold"             number   options->drift_threshold
 *   "model_fingerprint"     string   the model read back
 *   "new_rows_sampled"      integer  rows sampled from the fragments no segment covers
 *   "new_rows_loss"         number   their loss, or null (no such row)
 *   "indexed_rows_sampled"  integer  rows sampled from the fragments the segments cover
 *   "indexed_rows_loss"     number   their loss, or null
 *   "ratio"                 number   new_rows_loss / indexed_rows_loss, or null (a side
 *                                    without rows, or an indexed loss of 0)
 *   "retrain"               bool     the ratio is above the threshold (true too when the
 *                                    indexed loss is 0 and the new one is not)
 * With "drift" asked for, the errors of lance_dataset_read_vector_model() are this call's
 * (segments of different models, for example, are LANCE_ERR_INVALID_ARGUMENT).
 */

/*
 * Running a maintenance plan (lance_dataset_plan_index_maintenance()).
 *
 * As a coordinator would run it (tools/lance_index_maintain.c,
 * `lance-index maintain`, does it in one process; tests/api/
 * test_optimize_maintenance.c runs every kind of task):
 *   - build and rebuild: a segment builder over the task's fragment_ids
 *     (lance_index_segment_builder_new_vector / _new_scalar with the
 *     index's name, column and parameters); a vector index's builder gets
 *     the index's shared model (lance_index_segment_builder_set_model; the
 *     plan names its fingerprint), so its segments stay mergeable;
 *   - merge: each source's bytes from lance_dataset_index_segment_metadata(),
 *     then lance_dataset_merge_index_segments();
 *   - all tasks' segment bytes committed together, in ONE call to
 *     lance_dataset_commit_index_segments_v2() with `replace`:
 *     a rebuilt or merged segment covers exactly the live fragments of the
 *     segments it replaces, so the commit replaces them; the delta segments
 *     are added.  Its checks, idempotent retries and provenance are a
 *     build's.
 * A plan made from an older version may no longer fit the latest one: the
 * commit's checks then refuse it (LANCE_ERR_STALE_SEGMENT when fragments a
 * task covers have left the table since); plan again from the latest
 * version.
 *
 * What this version does not plan: retraining (see
 * LanceOptimizeIndicesOptions.retrain for the one-node way).
 */

/**
 * Plans the maintenance of one index for workers, as JSON.
 *
 * The plan holds the tasks that index the fragments no segment covers, rebuild
 * segments whose fragments left the table, and merge small segments.  Reads the
 * handle's version only: builds, merges and commits nothing.  The same version always
 * gives the same plan, so a coordinator that retries plans the same tasks.  It reads
 * the manifest and the index list and no index file, and the first call on a newly
 * opened handle on s3:// may read the index list from the store (what it costs:
 * docs/measurements.md, "Index maintenance with hundreds of segments").  The plan's
 * fields and how to run it: the two blocks above.
 *
 * @param dataset     Borrowed.
 * @param index_name  Borrowed, non-empty: a user index of the handle's version.
 * @param options     Borrowed; NULL = the defaults.
 * @return The plan, produced: free with lance_free_string().  NULL on error:
 *         LANCE_ERR_INVALID_ARGUMENT (NULL dataset, NULL or empty name, not
 *         UTF-8, small_segment_rows above target_rows_per_segment),
 *         LANCE_ERR_NOT_FOUND (no index of that name), LANCE_ERR_IO.
 */
char* lance_dataset_plan_index_maintenance(const LanceDataset* dataset, const char* index_name,
                                           const LanceIndexMaintenanceOptions* options);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LANCE_H */
