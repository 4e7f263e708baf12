/* s3_dataset: the parts of the object-storage tests that lance-index has
 * no command for, run as a process on one test host.
 *
 *   s3_dataset write URI ROWS DIM FRAGMENTS SEED
 *       writes ROWS clustered vectors (demo_data_make, 64 clusters, seed SEED)
 *       in FRAGMENTS fragments; prints {"version": V}
 *   s3_dataset check URI ROWS DIM SEED PARTITIONS [VERSION]
 *       k-NN of 50 rows used as queries through the index on "vec",
 *       probing PARTITIONS partitions (all of an IVF_FLAT index): every top
 *       10 must equal brute force over the same data; prints the version,
 *       the row count and the mismatches; exit 1 when any differs
 *   s3_dataset rows URI [VERSION]
 *       scans every row; prints {"version": V, "rows": R}
 *   s3_dataset cancel-at STAGE URI PARTITIONS UUID LINGER_MS
 *       builds an IVF_FLAT segment over every fragment (trained here) with
 *       index UUID UUID, and cancels it from its progress callback as its
 *       stage STAGE starts ("shuffle": it has written nothing to the store
 *       yet; "merge_partitions": it writes its files), or, for STAGE+K, as
 *       the stage reports K units done ("merge_partitions+8": in the middle
 *       of writing, 8 partitions written).
 *       Once the call has returned, prints {"code": C, "abandoned": A,
 *       "ms": T} (A = 1 when the message says the build was abandoned at
 *       once, 0 when it stopped at a checkpoint; T the milliseconds from
 *       the cancel to the return), then stays alive LINGER_MS so the
 *       abandoned build runs on in this process to its next checkpoint;
 *       exit 0 when the call returned LANCE_ERR_CANCELLED
 *
 * Storage options from LANCE_STORAGE_OPTIONS and --storage-option
 * key=value (common/storage_options.h).  Exit 0 ok, 1 check failed or the
 * library failed (its message on stderr), 2 bad arguments. */
#include <stdio.h>
#include <string.h>

#include <stdlib.h>
#include <time.h>

#include "demo_data.h"
#include "die.h"
#include "id_list.h"
#include "measure.h"
#include "segment_params.h"
#include "storage_options.h"
#include "test_util.h"
#include "uuid_hex.h"

static int decimal_arg(const char* text, uint64_t max, uint64_t* out) {
    if (decimal_parse(text, max, out) == 0) return 0;
    fprintf(stderr, "s3_dataset: \"%s\" is not a number\n", text);
    return -1;
}

static int cmd_write(char** a, const char* const* opts) {
    uint64_t rows, dim, fragments, seed;
    if (decimal_arg(a[1], INT32_MAX, &rows) || decimal_arg(a[2], 4096, &dim) ||
        decimal_arg(a[3], INT32_MAX, &fragments) || decimal_arg(a[4], UINT32_MAX, &seed) || fragments == 0)
        return 2;
    DemoData data;
    if (demo_data_make(&data, (int64_t)rows, (int32_t)dim, 64, 2.0f, seed) != 0) die_errno("demo_data_make");
    LanceDataset* ds =
        demo_data_write(a[0], &data, 0, (int64_t)rows, LANCE_WRITE_CREATE, (rows + fragments - 1) / fragments, opts);
    demo_data_free(&data);
    if (!ds) return report_lance_error("write"), 1;
    printf("{\"version\": %llu, \"fragments\": %llu}\n", (unsigned long long)lance_dataset_version(ds),
           (unsigned long long)lance_dataset_fragment_count(ds));
    lance_dataset_close(ds);
    return 0;
}

static int cmd_check(int n, char** a, const char* const* opts) {
    uint64_t rows, dim, seed, partitions, version = 0;
    if (decimal_arg(a[1], INT32_MAX, &rows) || decimal_arg(a[2], 4096, &dim) || decimal_arg(a[3], UINT32_MAX, &seed) ||
        decimal_arg(a[4], UINT32_MAX, &partitions) || (n > 5 && decimal_arg(a[5], UINT64_MAX, &version)))
        return 2;
    LanceDataset* ds = lance_dataset_open(a[0], opts, version);
    if (!ds) return report_lance_error("open"), 1;
    DemoData data;
    if (demo_data_make(&data, (int64_t)rows, (int32_t)dim, 64, 2.0f, seed) != 0) die_errno("demo_data_make");
    int mismatches = -1;
    double recall = demo_data_recall(ds, &data, 50, (uint32_t)partitions, 0, &mismatches);
    int rc = 0;
    if (recall < 0) rc = (report_lance_error("k-NN"), 1);
    else {
        printf("{\"version\": %llu, \"rows\": %llu, \"recall\": %.4f, \"mismatches\": %d}\n",
               (unsigned long long)lance_dataset_version(ds), (unsigned long long)lance_dataset_count_rows(ds), recall,
               mismatches);
        rc = mismatches != 0 || lance_dataset_count_rows(ds) != rows;
    }
    demo_data_free(&data);
    lance_dataset_close(ds);
    return rc;
}

static int cmd_rows(int n, char** a, const char* const* opts) {
    uint64_t version = 0;
    if (n > 1 && decimal_arg(a[1], UINT64_MAX, &version)) return 2;
    LanceDataset* ds = lance_dataset_open(a[0], opts, version);
    if (!ds) return report_lance_error("open"), 1;
    const char* cols[] = {"id", "vec", NULL};
    LanceScanner* s = lance_scanner_new(ds, cols, NULL);
    int64_t rows = s ? tu_count_scan(s) : -1;
    int rc = 0;
    if (rows < 0) rc = (report_lance_error("scan"), 1);
    else
        printf("{\"version\": %llu, \"rows\": %lld}\n", (unsigned long long)lance_dataset_version(ds), (long long)rows);
    lance_scanner_close(s);
    lance_dataset_close(ds);
    return rc;
}

static double cancelled_at;
static char cancel_stage[64];
static uint64_t cancel_after; /* units of the stage done */

static void cancel_at(void* token, int32_t event, const char* stage, uint64_t total, const char* unit,
                      uint64_t completed) {
    (void)total, (void)unit;
    int due = cancel_after == 0 ? event == LANCE_INDEX_BUILD_PROGRESS_STAGE_START
                                : event == LANCE_INDEX_BUILD_PROGRESS_STAGE_PROGRESS && completed >= cancel_after;
    if (due && !strcmp(stage, cancel_stage) && cancelled_at == 0) {
        cancelled_at = monotonic_seconds();
        lance_index_build_cancel((const LanceIndexBuildCancelToken*)token);
    }
}

static int cmd_cancel_at(const char* stage, char** a, const char* const* opts) {
    uint64_t partitions, linger_ms;
    uint8_t uuid[16];
    if (decimal_arg(a[1], 65536, &partitions) || decimal_arg(a[3], 600000, &linger_ms)) return 2;
    if (uuid_hex_parse(a[2], uuid) != 0) {
        fprintf(stderr, "s3_dataset: \"%s\" is not a UUID\n", a[2]);
        return 2;
    }
    const char* plus = strchr(stage, '+');
    size_t name_len = plus ? (size_t)(plus - stage) : strlen(stage);
    if (name_len >= sizeof cancel_stage || (plus && decimal_arg(plus + 1, 1 << 20, &cancel_after))) {
        fprintf(stderr, "s3_dataset: \"%s\" is not STAGE or STAGE+K\n", stage);
        return 2;
    }
    memcpy(cancel_stage, stage, name_len);
    cancel_stage[name_len] = 0;
    LanceDataset* ds = lance_dataset_open(a[0], opts, 0);
    if (!ds) die("open");
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = (uint32_t)partitions;
    LanceIndexSegmentBuildOptions o = {0};
    o.index_uuid = uuid;
    LanceIndexBuildCancelToken* token = lance_index_build_cancel_token_new();
    LanceIndexSegmentBuilder* b = vector_segment_builder_new(ds, "vec", NULL, &p, &o, NULL);
    if (!token || !b || lance_index_segment_builder_set_cancel_token(b, token) != 0 ||
        lance_index_segment_builder_set_progress_callback(b, cancel_at, token) != 0)
        die("builder");
    uint8_t* bytes = NULL;
    size_t len = 0;
    int32_t code = LANCE_OK;
    int abandoned = 0;
    int failed = lance_index_segment_builder_execute_uncommitted(b, &bytes, &len) != 0;
    double returned_at = monotonic_seconds();
    if (failed) {
        code = lance_last_error_code();
        abandoned = tu_error_mentions("abandoned");
        const char* message = tu_last_error()->message;
        fprintf(stderr, "s3_dataset: %s\n", message ? message : "(no message)");
    }
    printf("{\"code\": %d, \"abandoned\": %d, \"ms\": %.1f}\n", code, abandoned,
           cancelled_at > 0 ? (returned_at - cancelled_at) * 1000 : -1.0);
    fflush(stdout);
    struct timespec linger = {(time_t)(linger_ms / 1000), (long)(linger_ms % 1000) * 1000000L};
    nanosleep(&linger, NULL);
    lance_free_bytes(bytes);
    lance_index_segment_builder_free(b);
    lance_index_build_cancel_token_free(token);
    lance_dataset_close(ds);
    return code == LANCE_ERR_CANCELLED ? 0 : 1;
}

int main(int argc, char** argv) {
    StorageOptions storage = {0};
    char why[200];
    if (storage_options_from_env(&storage, why, sizeof why) != 0 ||
        storage_options_from_args(&storage, &argc, argv, why, sizeof why) != 0) {
        fprintf(stderr, "s3_dataset: %s\n", why);
        return 2;
    }
    const char* const* opts = storage_options_array(&storage);
    int rc = 2;
    const char* cmd = argc > 1 ? argv[1] : "";
    int n = argc - 2;
    if (!strcmp(cmd, "write") && n == 5) rc = cmd_write(argv + 2, opts);
    else if (!strcmp(cmd, "check") && (n == 5 || n == 6)) rc = cmd_check(n, argv + 2, opts);
    else if (!strcmp(cmd, "rows") && (n == 1 || n == 2)) rc = cmd_rows(n, argv + 2, opts);
    else if (!strcmp(cmd, "cancel-at") && n == 5) rc = cmd_cancel_at(argv[2], argv + 3, opts);
    else fprintf(stderr, "usage: s3_dataset write|check|rows|cancel-at ... URI ... (see tests/stores/s3_dataset.c)\n");
    storage_options_free(&storage);
    return rc;
}
