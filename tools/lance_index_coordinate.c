/* lance-index plan, merge and commit: the coordinator's steps before the
 * segments are built and after. */
#include "lance_index.h"

static int cmd_plan(const Args* a) {
    long long groups = number(arg(a, "--groups"));
    if (a->npos != 1 || groups < 0) return usage("plan needs URI and --groups N");
    LanceDataset* ds = NULL;
    int rc = open_dataset(a->pos[0], arg(a, "--version"), &ds);
    if (rc) return rc;
    LanceFragmentPlan* plan = NULL;
    if (lance_dataset_plan_fragment_groups(ds, (size_t)groups, &plan) != 0) {
        rc = lib_error("plan");
    } else {
        /* The whole document is checked before any of it is printed. */
        size_t count = lance_fragment_plan_group_count(plan);
        for (size_t g = 0; g < count && rc == 0; g++) {
            const uint32_t* ids = NULL;
            size_t n = 0;
            uint64_t rows = 0;
            if (lance_fragment_plan_group(plan, g, &ids, &n, &rows) != 0) rc = lib_error("plan group");
        }
        if (rc == 0) {
            printf("{\"dataset_version\": %llu, \"groups\": [",
                   (unsigned long long)lance_fragment_plan_dataset_version(plan));
            for (size_t g = 0; g < count; g++) {
                const uint32_t* ids = NULL;
                size_t n = 0;
                uint64_t rows = 0;
                lance_fragment_plan_group(plan, g, &ids, &n, &rows);
                printf("%s{\"fragments\": [", g ? ", " : "");
                for (size_t i = 0; i < n; i++) printf("%s%u", i ? ", " : "", ids[i]);
                printf("], \"rows\": %llu}", (unsigned long long)rows);
            }
            printf("]}\n");
        }
    }
    lance_fragment_plan_free(plan);
    lance_dataset_close(ds);
    return rc;
}

static const Option plan_options[] = {{"--groups", 1}, {"--version", 1}, {NULL, 0}};
OPTIONS_FIT(plan_options);

const Command plan_command = {"plan",
                              cmd_plan,
                              "URI --groups N",
                              "balanced fragment ranges (JSON)",
                              "lance-index plan URI --groups N [--version V]\n"
                              "  Splits the fragments into N ranges of consecutive fragments with balanced row counts\n"
                              "  (so that the segments built over them leave the table compactable) and prints them\n"
                              "  as JSON:\n"
                              "  {\"dataset_version\": V, \"groups\": [{\"fragments\": [...], \"rows\": R}, ...]}",
                              plan_options,
                              1};

/* The segment files after the URI, then the dataset at `version`.  Returns
 * 0, or the exit status after printing why; *ptrs, *lens and *ds are to be
 * freed either way (free_segments(), lance_dataset_close()). */
static int segments_and_dataset(const Args* a, const char* version, const uint8_t*** ptrs, size_t** lens,
                                LanceDataset** ds) {
    int rc = read_segments(a->pos + 1, (size_t)a->npos - 1, ptrs, lens);
    return rc ? rc : open_dataset(a->pos[0], version, ds);
}

/* The metadata of each committed segment of `index` named by a --segment
 * option, after the `files` segment files in ptrs and lens (which hold room
 * for them).  Returns 0, or the exit status after printing why; the bytes
 * read are in *committed (free each with lance_free_bytes()) either way. */
static int committed_segments(const LanceDataset* ds, const char* index, const char* const* uuids, size_t count,
                              size_t files, const uint8_t** ptrs, size_t* lens, uint8_t** committed) {
    for (size_t i = 0; i < count; i++) {
        if (lance_dataset_index_segment_metadata(ds, index, uuids[i], &committed[i], &lens[files + i]) != 0) {
            char what[200];
            snprintf(what, sizeof what, "reading segment %s of index %s", uuids[i], index);
            return lib_error(what);
        }
        ptrs[files + i] = committed[i];
    }
    return 0;
}

static int cmd_merge(const Args* a) {
    const char* out = arg(a, "-o");
    const char* index = arg(a, "--index");
    const char** uuids = must(calloc((size_t)a->argc, sizeof *uuids));
    size_t committed_count = arg_values(a, "--segment", uuids);
    size_t files = a->npos > 0 ? (size_t)a->npos - 1 : 0;
    size_t count = files + committed_count;
    int rc = 0;
    if (a->npos < 1 || count < 2 || !out)
        rc = usage("merge needs URI, at least two segments (files, or --segment UUID with --index NAME) and "
                   "-o MERGED");
    else if (!index != !committed_count)
        rc = usage(index ? "--index NAME needs --segment UUID, a segment of that index to merge"
                         : "--segment UUID needs --index NAME, the index the segment is committed to");
    if (rc) {
        free(uuids);
        return rc;
    }
    /* Room for the committed segments after the files' bytes. */
    const uint8_t** ptrs = NULL;
    size_t* lens = NULL;
    uint8_t** committed = must(calloc(committed_count + 1, sizeof *committed));
    LanceDataset* ds = NULL;
    rc = read_segments(a->pos + 1, files, &ptrs, &lens);
    if (rc == 0) {
        ptrs = must(realloc(ptrs, (count + 1) * sizeof *ptrs));
        lens = must(realloc(lens, (count + 1) * sizeof *lens));
        rc = open_dataset(a->pos[0], arg(a, "--version"), &ds);
    }
    if (rc == 0) rc = committed_segments(ds, index, uuids, committed_count, files, ptrs, lens, committed);
    uint8_t* bytes = NULL;
    size_t len = 0;
    if (rc == 0) {
        double t0 = monotonic_seconds();
        if (lance_dataset_merge_index_segments(ds, ptrs, lens, count, &bytes, &len) != 0) rc = lib_error("merge");
        else rc = write_output(out, bytes, len);
        if (rc == 0 && !quiet)
            fprintf(stderr, "%zu segments merged in %.2f s -> %s\n", count, monotonic_seconds() - t0, out);
    }
    lance_free_bytes(bytes);
    for (size_t i = 0; i < committed_count; i++) lance_free_bytes(committed[i]);
    free(committed);
    free_segments(ptrs, lens, files);
    lance_dataset_close(ds);
    free(uuids);
    return rc;
}

static const Option merge_options[] = {{"-o", 1},        {"--version", 1}, {"--index", 1},
                                       {"--segment", 1}, {"--quiet", 0},   {NULL, 0}};
OPTIONS_FIT(merge_options);

const Command merge_command = {"merge",
                               cmd_merge,
                               "URI SEGMENT SEGMENT... -o MERGED",
                               "segments merged into one",
                               "lance-index merge URI SEGMENT SEGMENT... -o MERGED [--version V] [--quiet]\n"
                               "        [--index NAME --segment UUID...]\n"
                               "  Merges two or more uncommitted segments (the metadata files `build` wrote)\n"
                               "  into one and writes its metadata to MERGED; nothing is committed: commit\n"
                               "  MERGED like any segment.  Vector segments must come from one shared model\n"
                               "  (their partitions are combined, not retrained); scalar segments of the\n"
                               "  types Lance merges are rebuilt.  Fewer segments make k-NN queries faster.\n"
                               "  --segment UUID (repeated, with --index NAME) adds a segment committed to index\n"
                               "  NAME at version V, as a maintenance plan's merge tasks name them; commit the\n"
                               "  result with --replace, and it replaces them.\n"
                               "  --version V reads the segments' files at version V (default: latest).",
                               merge_options,
                               INT_MAX};

static int cmd_commit(const Args* a) {
    const char* name = arg(a, "--name");
    const char* column = arg(a, "--column");
    if (a->npos < 1 || !name || !column) return usage("commit needs URI, --name, --column and segment files");
    size_t count = (size_t)a->npos - 1;
    const uint8_t** ptrs = NULL;
    size_t* lens = NULL;
    LanceDataset* ds = NULL;
    int rc = segments_and_dataset(a, NULL, &ptrs, &lens, &ds);
    if (rc == 0) {
        LanceCommitIndexOptions c;
        memset(&c, 0, sizeof c);
        c.replace = arg(a, "--replace") != NULL;
        c.allow_independent_models = arg(a, "--allow-independent-models") != NULL;
        c.job_id = arg(a, "--job-id");
        c.attempt_id = arg(a, "--attempt-id");
        LanceCommitIndexResult r;
        if (lance_dataset_commit_index_segments_v2(ds, name, column, ptrs, lens, count, &c, &r) != 0)
            rc = lib_error("commit");
        else
            printf("{\"version\": %llu, \"already_committed\": %s}\n", (unsigned long long)r.version,
                   r.already_committed ? "true" : "false");
    }
    free_segments(ptrs, lens, count);
    lance_dataset_close(ds);
    return rc;
}

static const Option commit_options[] = {{"--name", 1},   {"--column", 1},     {"--replace", 0},
                                        {"--job-id", 1}, {"--attempt-id", 1}, {"--allow-independent-models", 0},
                                        {NULL, 0}};
OPTIONS_FIT(commit_options);

const Command commit_command = {"commit",
                                cmd_commit,
                                "URI --name N --column C SEGMENT...",
                                "one index, one new version",
                                "lance-index commit URI --name N --column C SEGMENT... [--replace] [--job-id ID]\n"
                                "        [--attempt-id ID] [--allow-independent-models]\n"
                                "  Commits the segments as one index in one new version and prints\n"
                                "  {\"version\": V, \"already_committed\": false|true}.  A retry of a commit that\n"
                                "  happened prints the version that holds the segments.",
                                commit_options,
                                INT_MAX};
