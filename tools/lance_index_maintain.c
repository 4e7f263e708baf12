/* lance-index create, optimize and cleanup: one-node builds and upkeep. */
#include "lance_index.h"

int cmd_create(int argc, char** argv) {
    Opt o[] = {VECTOR_OPTS, {"--column", 1, NULL, 0}, {"--name", 1, NULL, 0}, {"--replace", 0, NULL, 0},
               {"--scalar", 1, NULL, 0}, {"--params", 1, NULL, 0}, {"--quiet", 0, NULL, 0}, {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    const char* pos[1] = {NULL};
    int np = 0;
    int done = prologue(argc, argv, o, no, pos, 1,
                        "lance-index create URI --column C [--name N] [--replace] [--quiet]\n"
                        "        [vector options as for train, or --scalar TYPE [--params JSON]]\n"
                        "  The one-shot build: trains, builds the whole dataset and commits, in this process.\n"
                        "  --scalar TYPE builds a scalar index instead (" SCALAR_NAMES "),\n"
                        "  with --params JSON its parameters, as for build.\n"
                        "  SIGINT or SIGTERM cancels it before it commits (exit status 20).", &np);
    if (done >= 0) return done;
    quiet |= opt(o, no, "--quiet") != NULL;
    const char* column = opt(o, no, "--column");
    if (np != 1 || !column) return usage("create needs URI and --column");
    const char* scalar = NULL;
    const char* params_json = NULL;
    LanceScalarIndexType st = LANCE_SCALAR_BTREE;
    int rc = scalar_options(o, no, &scalar, &st, &params_json);
    if (rc) return rc;
    LanceVectorIndexParams p;
    if ((rc = vector_params(o, no, &p)) != 0) return rc;
    LanceDataset* ds = NULL;
    if ((rc = open_dataset(pos[0], NULL, &ds)) != 0) return rc;
    LanceIndexBuildControl control = {progress_fn(), &progress_state, cancel_on_signals()};
    double t0 = monotonic_seconds();
    const char* name = opt(o, no, "--name");
    bool replace = opt(o, no, "--replace") != NULL;
    if ((scalar ? lance_dataset_create_scalar_index_with_control(ds, column, name, st, params_json, replace, &control)
                : lance_dataset_create_vector_index_with_control(ds, column, name, &p, replace, &control)) != 0) {
        rc = lib_error("create");
    } else {
        if (!quiet) fprintf(stderr, "built and committed in %.2f s\n", monotonic_seconds() - t0);
        printf("{\"version\": %llu}\n", (unsigned long long)lance_dataset_version(ds));
    }
    cancel_signal_stop();
    lance_dataset_close(ds);
    return rc;
}

/* The values of option `name` in the order given, which parse() (keeping
 * the last) does not tell: argv[first..] walked as parse() walks it.
 * Returns their count; `out` holds room for argc of them. */
static size_t repeated_values(int argc, char** argv, int first, const Opt* opts, int nopts, const char* name,
                              const char** out) {
    size_t n = 0;
    for (int i = first; i < argc; i++) {
        int k = 0;
        while (k < nopts && strcmp(opts[k].name, argv[i]) != 0) k++;
        if (k == nopts || !opts[k].takes_value || i + 1 >= argc) continue;
        if (!strcmp(argv[i], name)) out[n++] = argv[i + 1];
        i++;
    }
    return n;
}

int cmd_optimize(int argc, char** argv) {
    Opt o[] = {{"--index", 1, NULL, 0}, {"--merge", 1, NULL, 0}, {"--retrain", 0, NULL, 0},
               {"--quiet", 0, NULL, 0}, {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    const char* pos[1] = {NULL};
    int np = 0;
    int done = prologue(argc, argv, o, no, pos, 1,
                        "lance-index optimize URI [--index NAME]... [--merge N] [--retrain] [--quiet]\n"
                        "  Brings the indices up to date with the table, in this process (Lance's optimize):\n"
                        "  indexes the rows of the fragments they do not cover and commits one new version\n"
                        "  (none when there is nothing to do).  --index NAME, repeated, optimizes those indices\n"
                        "  only (default: every index).  --merge N makes the new rows and the N newest segments\n"
                        "  of each index one segment (--merge 0: a new delta segment beside the others); without\n"
                        "  it Lance decides.  --retrain trains each vector index's model again on the current\n"
                        "  rows and rebuilds the index as one segment.  Prints {\"version\": V, \"committed\": B}.\n"
                        "  SIGINT or SIGTERM cancels it at its next checkpoint, before it commits (exit status 20).",
                        &np);
    if (done >= 0) return done;
    quiet |= opt(o, no, "--quiet") != NULL;
    if (np != 1) return usage("optimize needs URI");
    LanceOptimizeIndicesOptions options = {0};
    const char* merge = opt(o, no, "--merge");
    uint64_t n = 0;
    if (merge && decimal_parse(merge, UINT32_MAX, &n) != 0)
        return usage("--merge must be a number of segments, at most 4294967295");
    options.has_num_indices_to_merge = merge != NULL;
    options.num_indices_to_merge = (uint32_t)n;
    options.retrain = opt(o, no, "--retrain") != NULL;
    const char** names = must(calloc((size_t)argc, sizeof *names));
    options.index_name_count = repeated_values(argc, argv, 2, o, no, "--index", names);
    options.index_names = options.index_name_count ? names : NULL;
    LanceDataset* ds = NULL;
    int rc = open_dataset(pos[0], NULL, &ds);
    if (rc) {
        free(names);
        return rc;
    }
    LanceIndexBuildControl control = {progress_fn(), &progress_state, cancel_on_signals()};
    uint64_t before = lance_dataset_version(ds);
    double t0 = monotonic_seconds();
    if (lance_dataset_optimize_indices_with_control(ds, &options, &control) != 0) {
        rc = lib_error("optimize");
    } else {
        uint64_t after = lance_dataset_version(ds);
        if (!quiet)
            fprintf(stderr, after != before ? "optimized and committed in %.2f s\n" : "nothing to optimize (%.2f s)\n",
                    monotonic_seconds() - t0);
        printf("{\"version\": %llu, \"committed\": %s}\n", (unsigned long long)after, after != before ? "true" : "false");
    }
    cancel_signal_stop();
    lance_dataset_close(ds);
    free(names);
    return rc;
}

int cmd_cleanup(int argc, char** argv) {
    Opt o[] = {{"--older-than", 1, NULL, 0}, {"--delete-unverified", 0, NULL, 0}, {"--help", 0, NULL, 0}};
    int no = (int)(sizeof o / sizeof o[0]);
    const char* pos[1] = {NULL};
    int np = 0;
    int done = prologue(argc, argv, o, no, pos, 1,
                        "lance-index cleanup URI [--older-than S] [--delete-unverified]\n"
                        "  Lance's cleanup: removes the versions older than S seconds (default 604800, 7 days;\n"
                        "  never the latest) and the files no remaining version references, among them the\n"
                        "  segments of builds that were never committed.  Unreferenced files younger than 7\n"
                        "  days are kept unless --delete-unverified is given: then no build of this dataset may\n"
                        "  be running, and on s3:// the incomplete multipart uploads under the dataset older\n"
                        "  than S (left by killed writers) are aborted too (\"uploads_aborted\"; null on stores\n"
                        "  where lance-c cannot list them: see docs/object-storage.md).  Prints what was removed\n"
                        "  as JSON.", &np);
    if (done >= 0) return done;
    if (np != 1) return usage("cleanup needs URI");
    const char* older = opt(o, no, "--older-than");
    /* Any uint64_t: a cutoff before 1970 removes nothing (lance.h). */
    uint64_t seconds = 7 * 24 * 3600;
    if (older && decimal_parse(older, UINT64_MAX, &seconds) != 0)
        return usage("--older-than must be a number of seconds, at most 18446744073709551615");
    LanceDataset* ds = NULL;
    int rc = open_dataset(pos[0], NULL, &ds);
    if (rc) return rc;
    LanceCleanupStats st;
    int unverified = opt(o, no, "--delete-unverified") != NULL;
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
