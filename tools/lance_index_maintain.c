/* lance-index create, optimize and cleanup: one-node builds and upkeep. */
#include "lance_index.h"

static int cmd_create(const Args* a) {
    const char* column = arg(a, "--column");
    if (a->npos != 1 || !column) return usage("create needs URI and --column");
    const char* scalar = NULL;
    const char* params_json = NULL;
    LanceScalarIndexType st = LANCE_SCALAR_BTREE;
    int rc = scalar_options(a, &scalar, &st, &params_json);
    if (rc) return rc;
    LanceVectorIndexParams p;
    if ((rc = vector_params(a, &p)) != 0) return rc;
    LanceVectorTrainingOptions to;
    int with_options = 0;
    if ((rc = training_options(a, &to, &with_options)) != 0) return rc;
    LanceDataset* ds = NULL;
    if ((rc = open_dataset(a->pos[0], NULL, &ds)) != 0) return rc;
    LanceIndexBuildControl control = build_control();
    double t0 = monotonic_seconds();
    const char* name = arg(a, "--name");
    bool replace = arg(a, "--replace") != NULL;
    if ((scalar ? lance_dataset_create_scalar_index_v2(ds, column, name, st, params_json, replace,
                                                       &(LanceIndexCreateOptions){.control = &control})
                : lance_dataset_create_vector_index_v2(
                      ds, column, name, &p, replace,
                      &(LanceIndexCreateOptions){.control = &control, .training = with_options ? &to : NULL})) != 0) {
        rc = lib_error("create");
    } else {
        if (!quiet) fprintf(stderr, "built and committed in %.2f s\n", monotonic_seconds() - t0);
        printf("{\"version\": %llu}\n", (unsigned long long)lance_dataset_version(ds));
    }
    cancel_signal_stop();
    lance_dataset_close(ds);
    return rc;
}

static const Option create_options[] = {VECTOR_OPTIONS,  TRAINING_OPTIONS, {"--column", 1},
                                        {"--name", 1},   {"--replace", 0}, {"--scalar", 1},
                                        {"--params", 1}, {"--quiet", 0},   {NULL, 0}};
OPTIONS_FIT(create_options);

const Command create_command = {"create",
                                cmd_create,
                                "URI --column C [options]",
                                "one-shot build and commit",
                                "lance-index create URI --column C [--name N] [--replace] [--quiet]\n"
                                "        [vector and training options as for train, or --scalar TYPE [--params JSON]]\n"
                                "  The one-shot build: trains, builds the whole dataset and commits, in this process.\n"
                                "  --scalar TYPE builds a scalar index instead (" SCALAR_NAMES "),\n"
                                "  with --params JSON its parameters, as for build.\n"
                                "  SIGINT or SIGTERM cancels it before it commits (exit status 20).",
                                create_options,
                                1};

static int cmd_optimize(const Args* a) {
    if (a->npos != 1) return usage("optimize needs URI");
    LanceOptimizeIndicesOptions options = {0};
    const char* merge = arg(a, "--merge");
    uint64_t n = 0;
    if (merge && decimal_parse(merge, UINT32_MAX, &n) != 0)
        return usage("--merge must be a number of segments, at most 4294967295");
    options.has_num_indices_to_merge = merge != NULL;
    options.num_indices_to_merge = (uint32_t)n;
    options.retrain = arg(a, "--retrain") != NULL;
    const char** names = must(calloc((size_t)a->argc, sizeof *names));
    options.index_name_count = arg_values(a, "--index", names);
    options.index_names = options.index_name_count ? names : NULL;
    LanceDataset* ds = NULL;
    int rc = open_dataset(a->pos[0], NULL, &ds);
    if (rc) {
        free(names);
        return rc;
    }
    LanceIndexBuildControl control = build_control();
    options.control = &control;
    uint64_t before = lance_dataset_version(ds);
    double t0 = monotonic_seconds();
    if (lance_dataset_optimize_indices(ds, &options) != 0) {
        rc = lib_error("optimize");
    } else {
        uint64_t after = lance_dataset_version(ds);
        if (!quiet)
            fprintf(stderr, after != before ? "optimized and committed in %.2f s\n" : "nothing to optimize (%.2f s)\n",
                    monotonic_seconds() - t0);
        printf("{\"version\": %llu, \"committed\": %s}\n", (unsigned long long)after,
               after != before ? "true" : "false");
    }
    cancel_signal_stop();
    lance_dataset_close(ds);
    free(names);
    return rc;
}

static const Option optimize_options[] = {{"--index", 1}, {"--merge", 1}, {"--retrain", 0}, {"--quiet", 0}, {NULL, 0}};
OPTIONS_FIT(optimize_options);

const Command optimize_command = {
    "optimize",
    cmd_optimize,
    "URI [--index N]... [--merge N]",
    "index new rows, merge segments",
    "lance-index optimize URI [--index NAME]... [--merge N] [--retrain] [--quiet]\n"
    "  Brings the indices up to date with the table, in this process (Lance's optimize):\n"
    "  indexes the rows of the fragments they do not cover and commits one new version\n"
    "  (none when there is nothing to do).  --index NAME, repeated, optimizes those indices\n"
    "  only (default: every index).  --merge N makes the new rows and the N newest segments\n"
    "  of each index one segment (--merge 0: a new delta segment beside the others); without\n"
    "  it Lance decides.  --retrain trains each vector index's model again on the current\n"
    "  rows and rebuilds the index as one segment.  Prints {\"version\": V, \"committed\": B}.\n"
    "  SIGINT or SIGTERM cancels it at its next checkpoint, before it commits (exit status 20).",
    optimize_options,
    1};

static int cmd_cleanup(const Args* a) {
    if (a->npos != 1) return usage("cleanup needs URI");
    const char* older = arg(a, "--older-than");
    /* Any uint64_t: a cutoff before 1970 removes nothing (lance.h). */
    uint64_t seconds = 7 * 24 * 3600;
    if (older && decimal_parse(older, UINT64_MAX, &seconds) != 0)
        return usage("--older-than must be a number of seconds, at most 18446744073709551615");
    LanceDataset* ds = NULL;
    int rc = open_dataset(a->pos[0], NULL, &ds);
    if (rc) return rc;
    LanceCleanupStats st;
    int unverified = arg(a, "--delete-unverified") != NULL;
    if (lance_dataset_cleanup_old_versions(ds, seconds, unverified, &st) != 0) {
        rc = lib_error("cleanup");
        lance_dataset_close(ds);
        return rc;
    }
    char uploads[32] = "0";
    uint64_t aborted = 0;
    if (!unverified) {
        snprintf(uploads, sizeof uploads, "null");
    } else if (lance_dataset_abort_incomplete_uploads(ds, seconds, &aborted) == 0) {
        snprintf(uploads, sizeof uploads, "%llu", (unsigned long long)aborted);
    } else if (lance_last_error_code() == LANCE_ERR_NOT_SUPPORTED) {
        const char* why = lance_last_error_message();
        fprintf(stderr, "lance-index: incomplete uploads not checked: %s\n", why ? why : "");
        lance_free_string(why);
        snprintf(uploads, sizeof uploads, "null");
    } else {
        rc = lib_error("aborting incomplete uploads");
    }
    if (rc == 0)
        printf("{\"bytes_removed\": %llu, \"old_versions\": %llu, \"data_files_removed\": %llu, "
               "\"transaction_files_removed\": %llu, \"index_files_removed\": %llu, \"deletion_files_removed\": %llu, "
               "\"uploads_aborted\": %s}\n",
               (unsigned long long)st.bytes_removed, (unsigned long long)st.old_versions,
               (unsigned long long)st.data_files_removed, (unsigned long long)st.transaction_files_removed,
               (unsigned long long)st.index_files_removed, (unsigned long long)st.deletion_files_removed, uploads);
    lance_dataset_close(ds);
    return rc;
}

static const Option cleanup_options[] = {{"--older-than", 1}, {"--delete-unverified", 0}, {NULL, 0}};
OPTIONS_FIT(cleanup_options);

const Command cleanup_command = {
    "cleanup",
    cmd_cleanup,
    "URI [--older-than S]",
    "old versions, unreferenced files",
    "lance-index cleanup URI [--older-than S] [--delete-unverified]\n"
    "  Lance's cleanup: removes the versions older than S seconds (default 604800, 7 days;\n"
    "  never the latest) and the files no remaining version references, among them the\n"
    "  segments of builds that were never committed.  Unreferenced files younger than 7\n"
    "  days are kept unless --delete-unverified is given: then no build of this dataset may\n"
    "  be running, and on s3:// the incomplete multipart uploads under the dataset older\n"
    "  than S (left by killed writers) are aborted too (\"uploads_aborted\"; null on stores\n"
    "  where lance-c cannot list them: see docs/object-storage.md).  Prints what was removed\n"
    "  as JSON.",
    cleanup_options,
    1};

/* ---- plan-maintenance and maintain: the maintenance plan of one index ---- */

/* --target-rows, --small-rows, --max-segments and --drift-threshold
 * (absent: 0, the library's default; no retraining advice).  Returns 0 or
 * an exit status. */
static int maintenance_policy(const Args* a, LanceIndexMaintenanceOptions* o) {
    memset(o, 0, sizeof *o);
    const char* target = arg(a, "--target-rows");
    const char* small = arg(a, "--small-rows");
    const char* most = arg(a, "--max-segments");
    const char* drift = arg(a, "--drift-threshold");
    if (drift) {
        char* end = NULL;
        errno = 0;
        o->drift_threshold = strtof(drift, &end);
        /* The library judges the value (0, or a finite ratio above 0). */
        if (end == drift || *end || errno) return usage("--drift-threshold must be a number, such as 1.5");
    }
    uint64_t segments = 0;
    if (target && decimal_parse(target, UINT64_MAX, &o->target_rows_per_segment) != 0)
        return usage("--target-rows must be a number of rows");
    if (small && decimal_parse(small, UINT64_MAX, &o->small_segment_rows) != 0)
        return usage("--small-rows must be a number of rows");
    if (most && decimal_parse(most, UINT32_MAX, &segments) != 0)
        return usage("--max-segments must be a number of segments, at most 4294967295");
    o->max_segments = (uint32_t)segments;
    return 0;
}

static int cmd_plan_maintenance(const Args* a) {
    const char* name = arg(a, "--index");
    if (a->npos != 1 || !name) return usage("plan-maintenance needs URI and --index NAME");
    LanceIndexMaintenanceOptions policy;
    int rc = maintenance_policy(a, &policy);
    if (rc) return rc;
    LanceDataset* ds = NULL;
    if ((rc = open_dataset(a->pos[0], arg(a, "--version"), &ds)) != 0) return rc;
    char* plan = lance_dataset_plan_index_maintenance(ds, name, &policy);
    if (!plan) rc = lib_error("plan-maintenance");
    else printf("%s\n", plan);
    lance_free_string(plan);
    lance_dataset_close(ds);
    return rc;
}

#define POLICY_OPTIONS \
    {"--index", 1}, {"--target-rows", 1}, {"--small-rows", 1}, {"--max-segments", 1}, { "--drift-threshold", 1 }

static const Option plan_maintenance_options[] = {POLICY_OPTIONS, {"--version", 1}, {NULL, 0}};
OPTIONS_FIT(plan_maintenance_options);

const Command plan_maintenance_command = {
    "plan-maintenance",
    cmd_plan_maintenance,
    "URI --index N [policy]",
    "an index's upkeep as tasks (JSON)",
    "lance-index plan-maintenance URI --index NAME [--target-rows N] [--small-rows N]\n"
    "        [--max-segments N] [--drift-threshold R] [--version V]\n"
    "  Plans the maintenance of index NAME for workers and prints the plan as JSON\n"
    "  (lance.h, lance_dataset_plan_index_maintenance): \"build\" tasks that index the\n"
    "  fragments no segment covers, \"rebuild\" tasks for segments some of whose fragments\n"
    "  left the table, \"merge\" tasks that join small neighbouring segments.  Nothing is\n"
    "  built or committed.  The policy: --target-rows, the rows one segment should hold\n"
    "  (default 1048576); --small-rows, below which a segment merges with a neighbour\n"
    "  (default target / 4); --max-segments, the most segments the index keeps (default 32).\n"
    "  --drift-threshold R (a vector index): the plan's \"drift\" compares the committed\n"
    "  model's k-means loss on the rows no segment covers with its loss on the covered rows,\n"
    "  and advises retraining (\"retrain\": true) when the ratio is above R (1.5, say).\n"
    "  Run a plan with `maintain`, or on workers with build, merge --segment and one\n"
    "  commit --replace.",
    plan_maintenance_options,
    1};

/* How maintain builds and merges the segments of one index. */
typedef struct {
    LanceDataset* ds; /* at the version planned from */
    const char* name;
    const char* column;
    int vector;
    LanceVectorIndexParams params;  /* vector: the model's settings, the plan's type */
    LanceVectorModel* model;        /* vector: --model; NULL when the plan builds nothing */
    LanceScalarIndexType scalar;    /* scalar: the plan's type */
    const char* params_json;        /* scalar: --params; NULL = the type's defaults */
    LanceIndexBuildControl control; /* the cancel token; progress unless --quiet */
    ProgressPrint progress;
    char prefix[64];
} Maintenance;

static const char* plan_string(const JValue* o, const char* key) {
    const JValue* v = json_get(o, key);
    return v && v->type == J_STRING ? v->string : NULL;
}

static size_t plan_count(const JValue* o, const char* key) {
    const JValue* v = json_get(o, key);
    return v && v->type == J_NUMBER ? (size_t)v->number : 0;
}

/* The plan's type and --model / --scalar / --params: how its segments are
 * built.  A vector index's builds need --model, the model its segments were
 * built with (the plan's model_fingerprint); a scalar index's type is the
 * plan's, and --scalar, if given, must name it.  `builds` counts the build
 * and rebuild tasks.  Returns 0 or an exit status. */
static int maintenance_builds(const Args* a, const JValue* plan, size_t builds, Maintenance* m) {
    const char* type = plan_string(plan, "type");
    const char* model_path = arg(a, "--model");
    const char* scalar = arg(a, "--scalar");
    m->params_json = arg(a, "--params");
    LanceScalarIndexType given = LANCE_SCALAR_BTREE;
    if (scalar && scalar_type(scalar, &given) != 0) return usage("unknown --scalar %s (" SCALAR_NAMES ")", scalar);
    if (!type) type = "an unknown type";
    if (vector_type(type, &m->params.index_type) == 0) {
        m->vector = 1;
        if (scalar || m->params_json)
            return usage("--scalar and --params are for scalar indices; %s is an %s index", m->name, type);
        const char* planned = plan_string(plan, "model_fingerprint");
        if (!model_path && !builds) return 0;
        char read_back[300];
        int rc = 0;
        if (model_path) {
            rc = build_model(model_path, NULL, 0, &m->params, &m->model);
        } else if (!planned || lance_dataset_read_vector_model(m->ds, m->name, &m->model) != 0) {
            const char* why = planned ? lance_last_error_message() : NULL;
            rc = usage("the plan builds %zu segments of vector index %s, whose model could not be read back (%s): "
                       "give --model FILE, the model its segments were built with",
                       builds, m->name, why ? why : "its segments record no one shared model");
            lance_free_string(why);
            return rc;
        } else {
            snprintf(read_back, sizeof read_back, "the model read back from index %s", m->name);
            model_path = read_back;
            rc = model_settings(m->model, read_back, NULL, 0, &m->params);
            if (!rc && !quiet) fprintf(stderr, "%s: building with %s\n", m->name, read_back);
        }
        if (rc) return rc;
        const char* fingerprint = lance_vector_model_fingerprint(m->model);
        if (!fingerprint) return lib_error("fingerprint");
        int same = planned && !strcmp(planned, fingerprint);
        if (!same)
            fprintf(stderr,
                    "lance-index: %s is model %s, but the segments of %s were built with %s: segments built "
                    "with it would not join them\n",
                    model_path, fingerprint, m->name,
                    planned ? planned : "no one shared model (none recorded, or several)");
        lance_free_string(fingerprint);
        if (!same) return exit_status(LANCE_ERR_MODEL_MISMATCH);
        vector_type(type, &m->params.index_type);
        return 0;
    }
    if (model_path) return usage("--model is for vector indices; %s is a %s index", m->name, type);
    if (scalar_type_listed(type, &m->scalar) == 0) {
        if (scalar && given != m->scalar)
            return usage("--scalar %s conflicts with index %s, a %s index; leave --scalar out to use its type", scalar,
                         m->name, type);
        return 0;
    }
    if (!builds) return 0;
    fprintf(stderr, "lance-index: maintain cannot build segments of %s: its type %s is not one this tool builds\n",
            m->name, type);
    return exit_status(LANCE_ERR_NOT_SUPPORTED);
}

/* Runs build or rebuild task `task` (number i of n): one segment over its
 * fragments, with the index's type and model.  Returns 0 with the segment's
 * metadata in *bytes (free with lance_free_bytes()), or an exit status. */
static int run_build(Maintenance* m, const JValue* task, size_t i, size_t n, uint8_t** bytes, size_t* len) {
    const JValue* f = json_get(task, "fragment_ids");
    size_t count = f && f->type == J_ARRAY ? f->count : 0;
    uint32_t* ids = must(calloc(count + 1, sizeof *ids));
    for (size_t k = 0; k < count; k++) ids[k] = (uint32_t)f->items[k]->number;
    LanceIndexSegmentBuildOptions bo;
    memset(&bo, 0, sizeof bo);
    bo.fragment_ids = ids;
    bo.fragment_count = count;
    LanceIndexSegmentBuilder* b = m->vector
                                      ? vector_segment_builder_new(m->ds, m->column, m->name, &m->params, &bo, m->model)
                                      : lance_index_segment_builder_new_scalar(m->ds, m->column, m->name,
                                                                               (int32_t)m->scalar, m->params_json, &bo);
    int rc = 0;
    snprintf(m->prefix, sizeof m->prefix, "task %zu/%zu (%s): ", i + 1, n, plan_string(task, "kind"));
    progress_print_init(&m->progress, m->prefix, isatty(2));
    double t0 = monotonic_seconds();
    if (!b ||
        (m->control.progress &&
         lance_index_segment_builder_set_progress_callback(b, progress_print_event, &m->progress) != 0) ||
        lance_index_segment_builder_set_cancel_token(b, m->control.cancel_token) != 0) {
        rc = lib_error("preparing a build");
    } else if (lance_index_segment_builder_execute_uncommitted(b, bytes, len) != 0) {
        rc = lib_error("build");
    } else if (!quiet) {
        fprintf(stderr, "%ssegment over %zu fragments built in %.2f s\n", m->prefix, count, monotonic_seconds() - t0);
    }
    lance_index_segment_builder_free(b);
    free(ids);
    return rc;
}

/* Runs merge task `task` (number i of n): its committed segments merged
 * into one.  Returns 0 with the merged segment's metadata in *bytes, or an
 * exit status. */
static int run_merge(Maintenance* m, const JValue* task, size_t i, size_t n, uint8_t** bytes, size_t* len) {
    const JValue* u = json_get(task, "segment_uuids");
    size_t count = u && u->type == J_ARRAY ? u->count : 0;
    uint8_t** sources = must(calloc(count + 1, sizeof *sources));
    size_t* lens = must(calloc(count + 1, sizeof *lens));
    int rc = 0;
    double t0 = monotonic_seconds();
    for (size_t k = 0; k < count && rc == 0; k++)
        if (lance_dataset_index_segment_metadata(m->ds, m->name, u->items[k]->string, &sources[k], &lens[k]) != 0)
            rc = lib_error("reading a segment to merge");
    if (rc == 0 &&
        lance_dataset_merge_index_segments(m->ds, (const uint8_t* const*)sources, lens, count, bytes, len) != 0)
        rc = lib_error("merge");
    if (rc == 0 && !quiet)
        fprintf(stderr, "task %zu/%zu (merge): %zu segments merged in %.2f s\n", i + 1, n, count,
                monotonic_seconds() - t0);
    for (size_t k = 0; k < count; k++) lance_free_bytes(sources[k]);
    free(sources);
    free(lens);
    return rc;
}

/* Commits the tasks' segments in one version, replacing the segments the
 * rebuilt and merged ones cover, and prints the outcome.  Returns 0 or an
 * exit status. */
static int commit_maintenance(const Args* a, Maintenance* m, const JValue* plan, uint8_t** segments, size_t* lens,
                              size_t count) {
    LanceCommitIndexOptions c;
    memset(&c, 0, sizeof c);
    c.replace = true;
    c.job_id = arg(a, "--job-id");
    c.attempt_id = arg(a, "--attempt-id");
    LanceCommitIndexResult r;
    double t0 = monotonic_seconds();
    if (lance_dataset_commit_index_segments_v2(m->ds, m->name, m->column, (const uint8_t* const*)segments, lens, count,
                                               &c, &r) != 0)
        return lib_error("commit");
    uint64_t after = lance_dataset_index_segment_count(m->ds, m->name);
    if (!after) return lib_error("counting the segments after the commit");
    if (!quiet) fprintf(stderr, "%zu segments committed in %.2f s\n", count, monotonic_seconds() - t0);
    printf("{\"version\": %llu, \"committed\": true, \"already_committed\": %s, \"tasks\": %zu, "
           "\"segments_before\": %zu, \"segments_after\": %llu}\n",
           (unsigned long long)r.version, r.already_committed ? "true" : "false", count,
           plan_count(plan, "segments_before"), (unsigned long long)after);
    return 0;
}

/* Whether every task of `tasks` is one lance.h describes: a kind, its
 * fragment ids, and a merge's segment UUIDs. */
static int tasks_valid(const JValue* tasks) {
    if (!tasks || tasks->type != J_ARRAY) return 0;
    for (size_t i = 0; i < tasks->count; i++) {
        const JValue* t = tasks->items[i];
        const char* kind = plan_string(t, "kind");
        const JValue* f = json_get(t, "fragment_ids");
        const JValue* u = json_get(t, "segment_uuids");
        if (!kind || (strcmp(kind, "build") && strcmp(kind, "rebuild") && strcmp(kind, "merge")) || !f ||
            f->type != J_ARRAY)
            return 0;
        for (size_t k = 0; k < f->count; k++)
            if (f->items[k]->type != J_NUMBER) return 0;
        if (!strcmp(kind, "merge") && (!u || u->type != J_ARRAY || u->count < 2)) return 0;
        for (size_t k = 0; u && k < u->count; k++)
            if (u->items[k]->type != J_STRING) return 0;
    }
    return 1;
}

/* Runs every task of the plan in this process, then commits once. */
static int run_plan(const Args* a, Maintenance* m, const JValue* plan) {
    const JValue* tasks = json_get(plan, "tasks");
    size_t n = tasks->count;
    size_t builds = 0;
    for (size_t i = 0; i < n; i++) builds += strcmp(plan_string(tasks->items[i], "kind"), "merge") != 0;
    if (!quiet)
        fprintf(stderr,
                "plan of %s at version %zu: %zu tasks (%zu builds and rebuilds, %zu merges), %zu -> %zu "
                "segments\n",
                m->name, plan_count(plan, "dataset_version"), n, builds, n - builds,
                plan_count(plan, "segments_before"), plan_count(plan, "segments_after"));
    const JValue* drift = json_get(plan, "drift");
    const JValue* retrain = drift ? json_get(drift, "retrain") : NULL;
    if (retrain && retrain->type == J_BOOL && retrain->number != 0)
        fprintf(stderr, "lance-index: the plan advises retraining the model of %s: %s\n", m->name,
                "the new rows fit it worse than the indexed rows by more than --drift-threshold");
    int rc = maintenance_builds(a, plan, builds, m);
    if (rc) return rc;
    if (n == 0) {
        printf("{\"version\": %llu, \"committed\": false, \"already_committed\": false, \"tasks\": 0, "
               "\"segments_before\": %zu, \"segments_after\": %zu}\n",
               (unsigned long long)lance_dataset_version(m->ds), plan_count(plan, "segments_before"),
               plan_count(plan, "segments_before"));
        return 0;
    }
    uint8_t** segments = must(calloc(n, sizeof *segments));
    size_t* lens = must(calloc(n, sizeof *lens));
    m->control = build_control();
    const LanceIndexBuildCancelToken* token = m->control.cancel_token;
    for (size_t i = 0; i < n && rc == 0; i++) {
        /* A merge cannot be cancelled: a signal during one stops the run
         * when it ends. */
        if (token && lance_index_build_cancel_requested(token)) break;
        const JValue* task = tasks->items[i];
        rc = strcmp(plan_string(task, "kind"), "merge") ? run_build(m, task, i, n, &segments[i], &lens[i])
                                                        : run_merge(m, task, i, n, &segments[i], &lens[i]);
    }
    if (cancel_signal_stop() && rc == 0) {
        fprintf(stderr, "lance-index: cancelled before the commit: nothing committed\n");
        rc = exit_status(LANCE_ERR_CANCELLED);
    }
    if (rc == 0) rc = commit_maintenance(a, m, plan, segments, lens, n);
    for (size_t i = 0; i < n; i++) lance_free_bytes(segments[i]);
    free(segments);
    free(lens);
    return rc;
}

static int cmd_maintain(const Args* a) {
    Maintenance m;
    memset(&m, 0, sizeof m);
    m.name = arg(a, "--index");
    if (a->npos != 1 || !m.name) return usage("maintain needs URI and --index NAME");
    LanceIndexMaintenanceOptions policy;
    int rc = maintenance_policy(a, &policy);
    if (rc) return rc;
    if ((rc = open_dataset(a->pos[0], NULL, &m.ds)) != 0) return rc;
    char* text = lance_dataset_plan_index_maintenance(m.ds, m.name, &policy);
    JValue* plan = text ? json_parse(text) : NULL;
    const JValue* columns = plan ? json_get(plan, "columns") : NULL;
    if (!text) {
        rc = lib_error("plan-maintenance");
    } else if (!columns || columns->type != J_ARRAY || columns->count == 0 || columns->items[0]->type != J_STRING ||
               !tasks_valid(json_get(plan, "tasks"))) {
        fprintf(stderr, "lance-index: the library's maintenance plan is not the JSON lance.h describes\n");
        rc = exit_status(LANCE_ERR_INTERNAL);
    } else {
        m.column = columns->items[0]->string;
        rc = run_plan(a, &m, plan);
    }
    json_free(plan);
    lance_free_string(text);
    lance_vector_model_free(m.model);
    lance_dataset_close(m.ds);
    return rc;
}

static const Option maintain_options[] = {POLICY_OPTIONS,  {"--model", 1},      {"--scalar", 1}, {"--params", 1},
                                          {"--job-id", 1}, {"--attempt-id", 1}, {"--quiet", 0},  {NULL, 0}};
OPTIONS_FIT(maintain_options);

const Command maintain_command = {
    "maintain",
    cmd_maintain,
    "URI --index N [policy] [--model M]",
    "plan, run and commit upkeep",
    "lance-index maintain URI --index NAME [--target-rows N] [--small-rows N] [--max-segments N]\n"
    "        [--drift-threshold R] [--model MODEL] [--scalar TYPE] [--params JSON] [--job-id ID]\n"
    "        [--attempt-id ID] [--quiet]\n"
    "  Plans the maintenance of index NAME as plan-maintenance does, from the latest version,\n"
    "  runs every task in this process and commits their segments in ONE new version\n"
    "  (replacing the segments the rebuilt and merged ones cover), then prints\n"
    "  {\"version\": V, \"committed\": B, \"already_committed\": B, \"tasks\": N,\n"
    "   \"segments_before\": S, \"segments_after\": S}  (committed false: nothing to do).\n"
    "  Segments are built with the index's type: a vector index's with --model MODEL, the\n"
    "  model its segments were built with (a model of another fingerprint than the plan's\n"
    "  is refused, exit status 25), or without --model with the model read back from the\n"
    "  index (lance_dataset_read_vector_model); a scalar index's with\n"
    "  --params JSON, the parameters it was built with (default: the type's defaults);\n"
    "  --scalar TYPE, if given, must be the index's type.  Progress on stderr as for build;\n"
    "  SIGINT or SIGTERM cancels it before it commits (exit status 20).  With\n"
    "  --drift-threshold R a plan that advises retraining (see plan-maintenance) is said on\n"
    "  stderr, and run all the same.",
    maintain_options,
    1};
