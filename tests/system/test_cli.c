#define _GNU_SOURCE
/* The lance-index tool, run as a user would: the whole plan / train /
 * build / commit / list / search loop, its errors and exit codes, the
 * coverage report after an append, the index type taken from the model,
 * strict --uuid and fragment lists (also the example worker's), a model
 * given as raw float32 files, a build cancelled by SIGINT, merging
 * segments, the distributed training commands, cleanup cutoffs up to
 * UINT64_MAX, the core's log records on stderr (LANCE_LOG), every
 * scalar type by name, and an index's maintenance planned and run
 * (plan-maintenance, maintain, merge --segment).
 * Usage: test_cli PATH-TO-lance-index PATH-TO-lance_worker */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json.h"
#include "dataset_kit.h"
#include "training_rounds.h"
#include "test_util.h"

#define ROWS 16000
#define DIM 32

static const char* tool;
static const char* worker;
static char* dir;
static char uri[600];
static TuData data;
static char out[1 << 16];

/* Runs `<program> <args>` through the shell; stdout goes to `out`, stderr
 * to stderr.txt; returns the exit status. */
static int run_in(const char* program, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static int run_in(const char* program, const char* fmt, ...) {
    TuText cmd = {0};
    tu_text_append(&cmd, "%s ", program);
    va_list ap;
    va_start(ap, fmt);
    tu_text_vappend(&cmd, fmt, ap);
    va_end(ap);
    tu_text_append(&cmd, " 2>%s/stderr.txt", dir);
    int status = -1;
    char* text = tu_shell_output(cmd.text, &status);
    free(cmd.text);
    if (!text) return -1;
    snprintf(out, sizeof out, "%s", text);
    free(text);
    return status;
}

/* `lance-index <args>` and the example worker, `lance_worker <args>`. */
#define run(...) run_in(tool, __VA_ARGS__)
#define run_worker(...) run_in(worker, __VA_ARGS__)

/* The bytes of dir/`file` (malloc'd; free them), or NULL when it cannot be read. */
static unsigned char* read_in_dir(const char* file, size_t* len) {
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return read_whole_file(path, len);
}

static int stderr_mentions(const char* needle) {
    size_t len = 0;
    unsigned char* text = read_in_dir("stderr.txt", &len);
    int found = text && memmem(text, len, needle, strlen(needle)) != NULL;
    free(text);
    return found;
}

/* What the tool wrote to dir/`file`, parsed as segment metadata into
 * *segment, or (segment NULL) as a model into *model; 0, or -1 when it
 * cannot be read or parsed. */
static int read_output(const char* file, LanceIndexSegmentMetadata** segment, LanceVectorModel** model) {
    size_t len = 0;
    unsigned char* bytes = read_in_dir(file, &len);
    int rc = !bytes    ? -1
             : segment ? lance_index_segment_metadata_parse(bytes, len, segment)
                       : lance_vector_model_parse(bytes, len, model);
    free(bytes);
    return rc;
}

/* The segment metadata the tool wrote to dir/`file`, parsed; NULL when it
 * cannot be read or parsed.  Free with lance_index_segment_metadata_free(). */
static LanceIndexSegmentMetadata* read_segment(const char* file) {
    LanceIndexSegmentMetadata* m = NULL;
    return read_output(file, &m, NULL) == 0 ? m : NULL;
}

/* The model the tool wrote to dir/`file`, parsed; NULL when it cannot be
 * read or parsed.  Free with lance_vector_model_free(). */
static LanceVectorModel* read_model(const char* file) {
    LanceVectorModel* model = NULL;
    return read_output(file, NULL, &model) == 0 ? model : NULL;
}

static void query_text(int64_t row, char* buf, size_t cap) {
    size_t used = 0;
    for (int j = 0; j < DIM; j++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%.6f", j ? "," : "", data.vectors[row * DIM + j]);
}

/* `search` probing every partition of an IVF_FLAT index over all rows of
 * `at` = brute force. */
static void check_search_exact(const char* at) {
    for (int q = 0; q < 3; q++) {
        int64_t row = 123 + q * 4567;
        char query[2048];
        query_text(row, query, sizeof query);
        CHECK(run("search %s --column vec --query %s --k 10 --nprobes 16", at, query) == 0);
        int64_t truth[10];
        tu_brute_force_knn(&data, data.vectors + row * DIM, 10, truth);
        char* line = strchr(out, '\n'); /* past the header */
        CHECK(line && !strncmp(out, "id\t_distance", 12));
        for (int i = 0; i < 10 && line; i++) {
            CHECK(atoll(line + 1) == truth[i]);
            line = strchr(line + 1, '\n');
        }
    }
}

static void test_loop(void) {
    /* plan */
    CHECK(run("plan %s --groups 4", uri) == 0);
    JValue* plan = json_parse(out);
    const JValue* groups = plan ? json_get(plan, "groups") : NULL;
    CHECK(groups && groups->count == 4);
    CHECK(plan && json_get(plan, "dataset_version")->number == 1);
    int seen[16] = {0};
    double rows = 0;
    char lists[4][128];
    for (size_t g = 0; groups && g < groups->count; g++) {
        const JValue* f = json_get(groups->items[g], "fragments");
        rows += json_get(groups->items[g], "rows")->number;
        size_t used = 0;
        lists[g][0] = 0;
        for (size_t i = 0; f && i < f->count; i++) {
            int id = (int)f->items[i]->number;
            if (id >= 0 && id < 16) seen[id]++;
            used += (size_t)snprintf(lists[g] + used, sizeof lists[g] - used, "%s%d", i ? "," : "", id);
        }
    }
    for (int i = 0; i < 16; i++) CHECK(seen[i] == 1);
    CHECK(rows == ROWS);
    json_free(plan);

    /* train */
    CHECK(run("train %s --column vec --type IVF_FLAT --partitions 16 -o %s/model.bin", uri, dir) == 0);
    CHECK(strlen(out) == 65 && out[64] == '\n');

    /* build, one segment per group, with the model */
    for (int g = 0; g < 4; g++)
        CHECK(run("build %s --column vec --type IVF_FLAT --fragments %s --model %s/model.bin -o %s/seg-%d.bin --quiet",
                  uri, lists[g], dir, dir, g) == 0);
    LanceDataset* ds = lance_dataset_open(uri, NULL, 0);
    CHECK(lance_dataset_latest_version(ds) == 1);

    /* commit, then its retry */
    CHECK(
        run("commit %s --name vec_idx --column vec %s/seg-0.bin %s/seg-1.bin %s/seg-2.bin %s/seg-3.bin --job-id cli-job",
            uri, dir, dir, dir, dir) == 0);
    CHECK(strstr(out, "\"version\": 2") && strstr(out, "\"already_committed\": false"));
    CHECK(
        run("commit %s --name vec_idx --column vec %s/seg-0.bin %s/seg-1.bin %s/seg-2.bin %s/seg-3.bin --job-id cli-job",
            uri, dir, dir, dir, dir) == 0);
    CHECK(strstr(out, "\"version\": 2") && strstr(out, "\"already_committed\": true"));

    /* list */
    CHECK(run("list %s --json", uri) == 0);
    JValue* list = json_parse(out);
    CHECK(list && list->type == J_ARRAY && list->count == 4);
    for (size_t i = 0; list && i < list->count; i++) {
        const JValue* job = json_get(list->items[i], "job_id");
        CHECK(job && job->type == J_STRING && !strcmp(job->string, "cli-job"));
    }
    json_free(list);
    CHECK(run("list %s", uri) == 0);
    CHECK(strstr(out, "4 segments, dataset version 2") != NULL);
    int lines = 0;
    for (const char* p = out; (p = strstr(p, "vec_idx")); p++) lines++;
    CHECK(lines == 4);

    check_search_exact(uri);
    lance_dataset_close(ds);
}

/* The exit statuses are the tool's documented table, written out as numbers:
 * 10 + code for upstream's codes 1-9, 20 + (code - 1000) for this library's
 * codes 1000-1006. */
static void test_errors(void) {
    CHECK(run("plan %s --groups 0", uri) == 11); /* 10 + LANCE_ERR_INVALID_ARGUMENT */
    CHECK(stderr_mentions("group_count is 0"));
    CHECK(run("plan %s/missing.lance --groups 2", dir) == 13); /* 10 + LANCE_ERR_NOT_FOUND */
    CHECK(run("plan %s", uri) == 2);
    CHECK(run("frobnicate %s", uri) == 2);
    CHECK(run("train %s --column vec", uri) == 2);
    CHECK(run("train %s --column vec --type IVF_MAGIC -o %s/m.bin", uri, dir) == 2);
    CHECK(run("build %s --column vec --fragments 0,0 -o %s/x.bin", uri, dir) == 11);
    CHECK(run("build %s --column nope --fragments 0 -o %s/x.bin", uri, dir) == 13);
    CHECK(run("commit %s --name other --column vec", uri) == 21); /* 20 + (LANCE_ERR_NO_SEGMENTS - 1000) */
    CHECK(run("commit %s --name other --column vec %s/seg-0.bin %s/seg-0.bin", uri, dir, dir) ==
          22); /* LANCE_ERR_DUPLICATE_SEGMENT */
    CHECK(run("commit %s --name other --column vec %s/no-such.bin", uri, dir) == 2);
    /* A segment over fragments 0-1 overlaps the planned group holding 0. */
    CHECK(run("build %s --column vec --type IVF_FLAT --fragments 0,1 --model %s/model.bin -o %s/extra.bin --quiet", uri,
              dir, dir) == 0);
    CHECK(run("build %s --column vec --type IVF_FLAT --fragments 1,2 --model %s/model.bin -o %s/extra2.bin --quiet",
              uri, dir, dir) == 0);
    CHECK(run("commit %s --name other --column vec %s/extra.bin %s/extra2.bin", uri, dir, dir) ==
          23); /* LANCE_ERR_OVERLAPPING_SEGMENTS */
    CHECK(stderr_mentions("fragments [1]"));
    const char* commands[] = {"plan", "train", "build", "merge", "commit", "list", "coverage", "search", "create"};
    for (int i = 0; i < 9; i++) {
        CHECK(run("%s --help", commands[i]) == 0);
        CHECK(strstr(out, commands[i]) != NULL);
    }
    CHECK(run("help") == 0 && strstr(out, "Exit status") != NULL && strstr(out, "lance-index coverage") != NULL);
    CHECK(strstr(out, "lance-index merge") != NULL);
    CHECK(strstr(out, "19 panic") != NULL && strstr(out, "20 cancelled") != NULL &&
          strstr(out, "29 any other") != NULL);
    /* The one-shot build through the tool; a second is refused without --replace. */
    CHECK(run("create %s --column vec --type IVF_FLAT --partitions 8 --name one_idx --quiet", uri) == 0);
    CHECK(strstr(out, "\"version\": 3") != NULL);
    CHECK(run("create %s --column vec --type IVF_FLAT --partitions 8 --name one_idx --quiet", uri) ==
          15); /* 10 + LANCE_ERR_INDEX */
}

/* --uuid, fragment lists (the tool's and the example worker's) and a --type
 * that conflicts with the model: usage errors (exit 2) that say what is wrong. */
static void test_strict_arguments(void) {
    const char* bad_uuids[] = {
        "1b4e28ba2fa1471f8e2a0d9c3f5a6b7c0",     /* 33 hex digits */
        "1b4e28ba2fa1471f8e2a0d9c3f5a6b7g",      /* a non-hex character */
        "1b4e28ba2fa1471f8e2a0d9c3f5a6b7",       /* 31: too short */
        "1b4e28ba-2fa1-471f-8e2a-0d9c3f5a6b7cX", /* the dashed form and a trailing character */
        "1b4e28ba2-fa1-471f-8e2a-0d9c3f5a6b7c",  /* a dash out of place */
    };
    for (int i = 0; i < 5; i++) {
        CHECK(run("build %s --column vec --fragments 0 --model %s/model.bin --uuid %s -o %s/u.bin --quiet", uri, dir,
                  bad_uuids[i], dir) == 2);
        CHECK(stderr_mentions("--uuid"));
    }
    struct stat st;
    char path[700];
    snprintf(path, sizeof path, "%s/u.bin", dir);
    CHECK(stat(path, &st) != 0);

    const char* bad_lists[] = {"0,x", "1,,2", "3,", "-1", "4294967296", "0, 1", ""};
    const char* why[] = {"item 2 (\"x\") is not a number",
                         "item 2 is empty",
                         "item 2 is empty",
                         "negative",
                         "larger than 4294967295",
                         "item 2 (\" 1\") is not a number",
                         "empty"};
    for (int i = 0; i < 7; i++) {
        CHECK(run("build %s --column vec --fragments '%s' --model %s/model.bin -o %s/f.bin --quiet", uri, bad_lists[i],
                  dir, dir) == 2);
        CHECK(stderr_mentions("--fragments") && stderr_mentions(why[i]));
    }
    CHECK(run("train %s --column vec --type IVF_FLAT --sample-fragments 0,a -o %s/m2.bin", uri, dir) == 2);
    CHECK(stderr_mentions("--sample-fragments"));

    /* The worker reads the coordinator's list whole: 5000 ids and then a
     * non-number (a fixed buffer would have stopped reading at 4096), an id
     * given twice, a trailing comma. */
    size_t cap = 5000 * 6 + 8, used = 0;
    char* long_list = malloc(cap);
    for (int i = 0; i < 5000; i++) used += (size_t)snprintf(long_list + used, cap - used, "%d,", i);
    snprintf(long_list + used, cap - used, "x");
    const char* worker_lists[] = {long_list, "0,1,0", "0,", "0,zero"};
    const char* worker_why[] = {"item 5001 (\"x\") is not a number", "id 0 is given twice", "item 2 is empty",
                                "item 2 (\"zero\") is not a number"};
    for (int i = 0; i < 4; i++) {
        CHECK(run_worker("%s 1 %s/model.bin 1b4e28ba2fa1471f8e2a0d9c3f5a6b7c %s/w.bin '%s' IVF_FLAT", uri, dir, dir,
                         worker_lists[i]) == 2);
        CHECK(stderr_mentions("bad fragment list") && stderr_mentions(worker_why[i]));
    }
    free(long_list);

    /* model.bin was trained for IVF_FLAT: a PQ type conflicts with it. */
    CHECK(run("build %s --column vec --fragments 0 --type IVF_PQ --model %s/model.bin -o %s/pq.bin --quiet", uri, dir,
              dir) == 2);
    CHECK(stderr_mentions("--type IVF_PQ") && stderr_mentions("model.bin") && stderr_mentions("trained for IVF_FLAT"));
    snprintf(path, sizeof path, "%s/pq.bin", dir);
    CHECK(stat(path, &st) != 0);

    /* Any uint64_t cutoff: one before 1970 removes nothing; one past
     * uint64_t is refused. */
    const char* far[] = {"10000000000000", "9300000000000000", "18446744073709551615"};
    for (int i = 0; i < 3; i++) {
        CHECK(run("cleanup %s --older-than %s", uri, far[i]) == 0);
        CHECK(strstr(out, "\"old_versions\": 0") != NULL && strstr(out, "\"bytes_removed\": 0") != NULL);
    }
    CHECK(run("cleanup %s --older-than 18446744073709551616", uri) == 2);
    CHECK(stderr_mentions("--older-than"));

    /* LANCE_LOG: the core's warning for a search projecting no _distance,
     * on stderr; an unknown level is refused. */
    char query[4096];
    query_text(3, query, sizeof query);
    TuText logged = {0};
    tu_text_append(&logged, "LANCE_LOG=warn %s", tool);
    CHECK(run_in(logged.text, "search %s --column vec --query %s --k 3", uri, query) == 0);
    CHECK(stderr_mentions("[warn lance::") && stderr_mentions("_distance"));
    free(logged.text);
    CHECK(run("search %s --column vec --query %s --k 3", uri, query) == 0);
    CHECK(!stderr_mentions("[warn lance::"));
    CHECK(run_in("LANCE_LOG=loud", "%s list %s", tool, uri) == 2);
    CHECK(stderr_mentions("LANCE_LOG=loud"));
}

/* Two fragments appended after the build: the coverage report names exactly
 * them as unindexed; a segment over them built with the model and no --type
 * is IVF_FLAT, and committed with --replace it completes the index. */
static void test_coverage_after_append(void) {
    LanceDataset* ds = lance_dataset_open(uri, NULL, 0);
    CHECK(ds != NULL);
    uint64_t before[16], after[18];
    size_t before_count = ds ? (size_t)lance_dataset_fragment_count(ds) : 0;
    CHECK(before_count == 16);
    if (before_count == 16) CHECK_OK(lance_dataset_fragment_ids(ds, before));
    lance_dataset_close(ds);
    ds = tu_write(uri, &data, 0, 2000, LANCE_WRITE_APPEND, 1000);
    CHECK(ds != NULL);
    size_t after_count = ds ? (size_t)lance_dataset_fragment_count(ds) : 0;
    CHECK(after_count == 18);
    if (after_count == 18) CHECK_OK(lance_dataset_fragment_ids(ds, after));
    uint32_t added[2] = {0, 0};
    int n_added = 0;
    for (size_t i = 0; before_count == 16 && after_count == 18 && i < after_count; i++) {
        int old = 0;
        for (size_t j = 0; j < before_count; j++) old |= after[i] == before[j];
        if (!old && n_added < 2) added[n_added++] = (uint32_t)after[i];
    }
    CHECK(n_added == 2);
    char added_text[64], line[160];
    snprintf(added_text, sizeof added_text, "%u,%u", added[0], added[1]);

    /* text */
    CHECK(run("coverage %s --name vec_idx", uri) == 0);
    snprintf(line, sizeof line, "unindexed fragments: %s (2000 rows)\n", added_text);
    CHECK(strstr(out, line) != NULL);
    CHECK(strstr(out, "indexed fragments:   0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15 (16000 rows)\n") != NULL);
    CHECK(strstr(out, "stale fragments:     none\n") != NULL);
    int segments = 0;
    for (const char* p = out; (p = strstr(p, "  segment ")); p++) segments++;
    CHECK(segments == 4);

    /* --json: the library's report plus the segments */
    CHECK(run("coverage %s --name vec_idx --json", uri) == 0);
    JValue* report = json_parse(out);
    CHECK(report && report->type == J_OBJECT);
    const JValue* unindexed = json_get(report, "unindexed_fragments");
    CHECK(unindexed && unindexed->count == 2 && unindexed->items[0]->number == added[0] &&
          unindexed->items[1]->number == added[1]);
    const JValue* indexed = json_get(report, "indexed_fragments");
    CHECK(indexed && indexed->count == 16);
    for (size_t i = 0; indexed && i < indexed->count && i < 16; i++) CHECK(indexed->items[i]->number == (double)i);
    const JValue* stale = json_get(report, "stale_fragments");
    CHECK(stale && stale->type == J_ARRAY && stale->count == 0);
    const JValue* segs = json_get(report, "segments");
    CHECK(segs && segs->count == 4);
    int covered[16] = {0};
    for (size_t i = 0; segs && i < segs->count; i++) {
        const JValue* f = json_get(segs->items[i], "fragment_ids");
        for (size_t j = 0; f && j < f->count; j++)
            if (f->items[j]->number >= 0 && f->items[j]->number < 16) covered[(int)f->items[j]->number]++;
    }
    for (int i = 0; i < 16; i++) CHECK(covered[i] == 1);
    json_free(report);
    CHECK(run("coverage %s --name no_such_idx", uri) == 13);
    CHECK(run("coverage %s", uri) == 2);

    /* The appended fragments' segment: no --type, the model says IVF_FLAT;
     * the dashed --uuid form is accepted. */
    CHECK(run("build %s --column vec --fragments %s --model %s/model.bin --uuid 5a0c3e1d-7b2f-4c8e-9d61-0f2a4b6c8e10 "
              "-o %s/seg-new.bin --quiet",
              uri, added_text, dir, dir) == 0);
    LanceIndexSegmentMetadata* m = read_segment("seg-new.bin");
    const char* type = m ? lance_index_segment_metadata_index_type_name(m) : NULL;
    CHECK(type && !strcmp(type, "IVF_FLAT"));
    uint8_t got[16], want[16];
    CHECK(m && lance_index_segment_metadata_uuid(m, got) == 0);
    CHECK(uuid_hex_parse("5a0c3e1d7b2f4c8e9d610f2a4b6c8e10", want) == 0 && memcmp(got, want, 16) == 0);
    lance_index_segment_metadata_free(m);
    CHECK(run("commit %s --name vec_idx --column vec --replace %s/seg-new.bin", uri, dir) == 0);
    CHECK(run("list %s --json", uri) == 0);
    JValue* list = json_parse(out);
    int found = 0;
    for (size_t i = 0; list && i < list->count; i++) {
        const JValue* e = list->items[i];
        const JValue* u = json_get(e, "uuid");
        if (u && u->type == J_STRING && !strcmp(u->string, "5a0c3e1d-7b2f-4c8e-9d61-0f2a4b6c8e10")) {
            found++;
            const JValue* t = json_get(e, "type");
            CHECK(t && t->type == J_STRING && !strcmp(t->string, "IVF_FLAT"));
        }
    }
    CHECK(found == 1);
    json_free(list);
    CHECK(run("coverage %s --name vec_idx", uri) == 0);
    CHECK(strstr(out, "unindexed fragments: none") != NULL);
    lance_dataset_close(ds);
}

/* SIGINT during a build: cancelled (exit 20), its files gone, nothing committed. */
static void test_sigint(void) {
    char big[700];
    snprintf(big, sizeof big, "%s/big.lance", dir);
    TuData d = tu_make_data(100000, 64, 32, 1.0f, 3);
    LanceDataset* ds = tu_write(big, &d, 0, d.rows, LANCE_WRITE_CREATE, 25000);
    CHECK(ds != NULL);
    const char* uuid = "1b4e28ba2fa1471f8e2a0d9c3f5a6b7c";
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        char seg[800];
        snprintf(seg, sizeof seg, "%s/sigint.bin", dir);
        execl(tool, tool, "build", big, "--column", "vec", "--type", "IVF_PQ", "--partitions", "64", "--uuid", uuid,
              "-o", seg, (char*)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE* err = fdopen(fds[0], "r");
    char line[512];
    int sent = 0;
    while (fgets(line, sizeof line, err)) {
        if (!sent && strstr(line, "started")) {
            kill(pid, SIGINT);
            sent = 1;
        }
    }
    fclose(err);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(sent);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 20); /* LANCE_ERR_CANCELLED */
    char seg_dir[900];
    snprintf(seg_dir, sizeof seg_dir, "%s/_indices/1b4e28ba-2fa1-471f-8e2a-0d9c3f5a6b7c", big);
    struct stat st;
    CHECK(stat(seg_dir, &st) != 0);
    CHECK(lance_dataset_latest_version(ds) == 1);
    lance_dataset_close(ds);
    tu_free_data(&d);
}

/* Writes an exported FixedSizeList<float32> model array's values as raw
 * float32 (this host is little-endian, the files' byte order). */
static void write_f32_values(const char* name, const struct ArrowArray* a, int32_t width) {
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    const struct ArrowArray* values = a->children[0];
    const float* f = (const float*)values->buffers[1] + values->offset + a->offset * width;
    CHECK(write_whole_file(path, f, sizeof(float) * (size_t)(a->length * width)) == 0);
}

/* --ivf-centroids / --pq-codebook: a model as raw little-endian float32 files
 * (the Java SDK's VectorTrainer output) is the same model as the serialized
 * one it came from: segments built from either commit together without
 * --allow-independent-models (same fingerprint); bad shapes are usage errors. */
static void test_raw_model(void) {
    CHECK(run("train %s --column vec --type IVF_PQ --partitions 8 --sub-vectors 4 -o %s/pqmodel.bin --quiet", uri,
              dir) == 0);
    LanceVectorModel* model = read_model("pqmodel.bin");
    CHECK(model != NULL);
    struct ArrowArray c, p;
    struct ArrowSchema cs, ps;
    CHECK_OK(lance_vector_model_centroids(model, &c, &cs));
    CHECK_OK(lance_vector_model_codebook(model, &p, &ps));
    CHECK(c.length == 8 && !strcmp(cs.format, "+w:32"));
    /* The codebook's values in the Lance core's flat order, [sub][centroid][sub_dim],
       however the export groups them into rows. */
    int32_t width = atoi(ps.format + 3);
    CHECK(p.length * width == 4 * 256 * 8);
    write_f32_values("c.f32", &c, 32);
    write_f32_values("p.f32", &p, width);
    c.release(&c), cs.release(&cs), p.release(&p), ps.release(&ps);
    lance_vector_model_free(model);

    char uri2[700];
    lance_dataset_close(dk_fresh(dir, "raw", &data, ROWS / 16, uri2, sizeof uri2));
    CHECK(
        run("build %s --column vec --fragments 0,1,2,3,4,5,6,7 --ivf-centroids %s/c.f32 --partitions 8 --pq-codebook %s/p.f32 "
            "--sub-vectors 4 -o %s/raw-a.bin --quiet",
            uri2, dir, dir, dir) == 0);
    CHECK(run("build %s --column vec --fragments 8,9,10,11,12,13,14,15 --model %s/pqmodel.bin -o %s/raw-b.bin --quiet",
              uri2, dir, dir) == 0);
    CHECK(run("commit %s --name vec_idx --column vec %s/raw-a.bin %s/raw-b.bin", uri2, dir, dir) == 0);
    CHECK(run("list %s --json", uri2) == 0);
    JValue* list = json_parse(out);
    CHECK(list && list->count == 2);
    for (size_t i = 0; list && i < list->count; i++) CHECK(!strcmp(json_get(list->items[i], "type")->string, "IVF_PQ"));
    json_free(list);

    /* Bad shapes and combinations: exit 2, saying what is wrong. */
    const char* b = "build";
    CHECK(run("%s %s --column vec --ivf-centroids %s/c.f32 -o %s/x.bin", b, uri2, dir, dir) == 2);
    CHECK(stderr_mentions("--ivf-centroids needs --partitions K"));
    CHECK(run("%s %s --column vec --ivf-centroids %s/c.f32 --partitions 7 -o %s/x.bin", b, uri2, dir, dir) == 2);
    CHECK(stderr_mentions("c.f32 holds 256 floats, not --partitions 7 rows"));
    CHECK(run("%s %s --column vec --pq-codebook %s/p.f32 --sub-vectors 4 -o %s/x.bin", b, uri2, dir, dir) == 2);
    CHECK(stderr_mentions("--pq-codebook needs --ivf-centroids"));
    CHECK(run("%s %s --column vec --ivf-centroids %s/c.f32 --partitions 8 --type IVF_PQ -o %s/x.bin", b, uri2, dir,
              dir) == 2);
    CHECK(stderr_mentions("--type IVF_PQ needs a PQ codebook"));
    CHECK(run("%s %s --column vec --ivf-centroids %s/c.f32 --partitions 8 --pq-codebook %s/p.f32 -o %s/x.bin", b, uri2,
              dir, dir, dir) == 2);
    CHECK(stderr_mentions("--pq-codebook needs --sub-vectors M"));
    /* The size of a codebook is 2^bits x dim floats whatever the sub-vector count,
       so the tool checks --bits (and the dimension), not --sub-vectors. */
    CHECK(run("%s %s --column vec --ivf-centroids %s/c.f32 --partitions 8 --pq-codebook %s/p.f32 --sub-vectors 4 "
              "--bits 4 -o %s/x.bin",
              b, uri2, dir, dir, dir) == 2);
    CHECK(stderr_mentions("p.f32 holds 8192 floats; a codebook of 4 sub-vectors x 16 centroids x 8 dimensions "
                          "holds 512"));
    CHECK(run("%s %s --column vec --ivf-centroids %s/c.f32 --partitions 8 --model %s/pqmodel.bin -o %s/x.bin", b, uri2,
              dir, dir, dir) == 2);
    CHECK(run("%s %s --column id --scalar BTREE --ivf-centroids %s/c.f32 -o %s/x.bin", b, uri2, dir, dir) == 2);
    CHECK(run("%s %s --column vec --ivf-centroids %s/missing.f32 --partitions 8 -o %s/x.bin", b, uri2, dir, dir) == 2);
    CHECK(stderr_mentions("cannot read"));
    CHECK(run("%s %s --column vec --ivf-centroids %s/stderr.txt --partitions 1 -o %s/x.bin", b, uri2, dir, dir) == 2);
    /* A shape the tool cannot see: 16 rows of 16 are not the column's 32 (the library's check). */
    CHECK(run("%s %s --column vec --ivf-centroids %s/c.f32 --partitions 16 -o %s/x.bin --quiet", b, uri2, dir, dir) ==
          11);
    CHECK(stderr_mentions("dimension 16"));
}

/* `merge`: four segments of one model merged into one (and 2 + 2, then the
 * two merged again), committed, searched exactly; its refusals' exit codes. */
static void test_merge(void) {
    char at[700];
    lance_dataset_close(dk_fresh(dir, "merge", &data, ROWS / 16, at, sizeof at));
    CHECK(run("train %s --column vec --type IVF_FLAT --partitions 16 -o %s/mm.bin --quiet", at, dir) == 0);
    const char* groups[] = {"0,1,2,3", "4,5,6,7", "8,9,10,11", "12,13,14,15"};
    for (int g = 0; g < 4; g++)
        CHECK(run("build %s --column vec --fragments %s --model %s/mm.bin -o %s/ms-%d.bin --quiet", at, groups[g], dir,
                  dir, g) == 0);
    CHECK(run("merge %s %s/ms-0.bin %s/ms-1.bin %s/ms-2.bin %s/ms-3.bin -o %s/merged.bin", at, dir, dir, dir, dir,
              dir) == 0);
    CHECK(stderr_mentions("4 segments merged"));
    CHECK(run("merge %s %s/ms-0.bin %s/ms-1.bin -o %s/m01.bin --quiet", at, dir, dir, dir) == 0);
    CHECK(run("merge %s %s/ms-2.bin %s/ms-3.bin -o %s/m23.bin --quiet", at, dir, dir, dir) == 0);
    CHECK(run("merge %s %s/m01.bin %s/m23.bin -o %s/again.bin --quiet", at, dir, dir, dir) == 0);
    /* The merged metadata covers all 16 fragments. */
    const char* names[] = {"merged.bin", "again.bin"};
    for (int i = 0; i < 2; i++) {
        LanceIndexSegmentMetadata* m = read_segment(names[i]);
        CHECK(m != NULL);
        CHECK(lance_index_segment_metadata_fragment_count(m) == 16);
        lance_index_segment_metadata_free(m);
    }
    /* Nothing committed by a merge; the merged segment commits and answers exactly. */
    LanceDataset* ds = lance_dataset_open(at, NULL, 0);
    CHECK(lance_dataset_latest_version(ds) == 1);
    lance_dataset_close(ds);
    CHECK(run("commit %s --name vec_idx --column vec %s/merged.bin", at, dir) == 0);
    CHECK(strstr(out, "\"version\": 2") != NULL);
    CHECK(run("list %s", at) == 0 && strstr(out, "1 segments, dataset version 2") != NULL);
    check_search_exact(at);
    CHECK(run("commit %s --name vec_idx --column vec %s/again.bin --replace", at, dir) == 0);
    check_search_exact(at);

    /* Refusals. */
    CHECK(run("merge %s %s/ms-0.bin -o %s/x.bin", at, dir, dir) == 2);
    CHECK(stderr_mentions("at least two"));
    CHECK(run("merge %s %s/ms-0.bin %s/ms-1.bin", at, dir, dir) == 2);
    CHECK(run("merge %s %s/ms-0.bin %s/no-such.bin -o %s/x.bin", at, dir, dir, dir) == 2);
    CHECK(stderr_mentions("no-such.bin"));
    CHECK(run("merge %s %s/ms-0.bin %s/ms-0.bin -o %s/x.bin", at, dir, dir, dir) == 22); /* duplicate */
    CHECK(run("merge %s %s/ms-0.bin %s/m01.bin -o %s/x.bin", at, dir, dir, dir) == 23);  /* overlapping */
    CHECK(stderr_mentions("fragments [0, 1, 2, 3]"));
    CHECK(run("train %s --column vec --type IVF_FLAT --partitions 16 --sample-fragments 8,9 -o %s/mm2.bin --quiet", at,
              dir) == 0);
    CHECK(run("build %s --column vec --fragments 4,5 --model %s/mm2.bin -o %s/other.bin --quiet", at, dir, dir) == 0);
    CHECK(run("merge %s %s/ms-0.bin %s/other.bin -o %s/x.bin", at, dir, dir, dir) == 25); /* model mismatch */
    char path[700];
    snprintf(path, sizeof path, "%s/x.bin", dir);
    struct stat st;
    CHECK(stat(path, &st) != 0);
}

/* Writes dir/name from a format (the lines a train-worker reads). */
static int lines_file(const char* name, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static int lines_file(const char* name, const char* fmt, ...) {
    TuText t = {0};
    va_list ap;
    va_start(ap, fmt);
    tu_text_vappend(&t, fmt, ap);
    va_end(ap);
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int rc = write_whole_file(path, t.text, strlen(t.text));
    free(t.text);
    return rc;
}

/* Copies dir/from to dir/to. */
static int copy_file(const char* from, const char* to) {
    char b[700];
    snprintf(b, sizeof b, "%s/%s", dir, to);
    size_t len = 0;
    unsigned char* bytes = read_in_dir(from, &len);
    int rc = bytes ? write_whole_file(b, bytes, len) : -1;
    free(bytes);
    return rc;
}

/* The distributed training commands: train-start, a train-worker per
 * group (a process per round, and one answering two lines), train-reduce
 * until done; the model they make equals the library's for the same split
 * and seed, and builds a segment; each refusal's exit status. */
/* SIGTERM while a train-worker answers a line cancels its round: the
 * worker answers "error 20" and exits 20.  The request is read from a FIFO,
 * so the signal lands while the worker is inside the round (waiting for the
 * request's bytes) and before the library runs it. */
static void test_train_worker_signal(void) {
    char fifo[700];
    snprintf(fifo, sizeof fifo, "%s/request.fifo", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    char* argv[] = {(char*)tool, "train-worker", uri, NULL};
    TrainingProcess p;
    CHECK(training_process_start(argv, -1, &p) == 0);
    fprintf(p.in, "%s %s/never.bin\n", fifo, dir);
    fflush(p.in);
    int fd = open(fifo, O_WRONLY); /* returns once the worker opened it */
    CHECK(fd >= 0);
    CHECK(kill(p.pid, SIGTERM) == 0);
    usleep(300 * 1000); /* the worker's signal thread cancels the round's token */
    size_t len = 0;
    unsigned char* request = read_in_dir("first.bin", &len);
    CHECK(request && write(fd, request, len) == (ssize_t)len);
    free(request);
    close(fd);
    char line[512] = "";
    CHECK(fgets(line, sizeof line, p.out) != NULL);
    CHECK(!strncmp(line, "error 20 ", 9) && strstr(line, "cancel"));
    int st = 0;
    fclose(p.in);
    fclose(p.out);
    CHECK(waitpid(p.pid, &st, 0) == p.pid && WIFEXITED(st) && WEXITSTATUS(st) == 20);
    snprintf(line, sizeof line, "%s/never.bin", dir);
    CHECK(access(line, F_OK) != 0);
    unlink(fifo);
}

/* The index type a model was trained for travels with it: `build --model`
 * builds that type, and refuses another --type, naming both. */
static void test_model_type(void) {
    CHECK(run("train %s --column vec --type IVF_SQ --partitions 4 --quiet -o %s/sq.bin", uri, dir) == 0);
    CHECK(run("build %s --column vec --fragments 0 --model %s/sq.bin -o %s/sq-seg.bin --quiet", uri, dir, dir) == 0);
    LanceIndexSegmentMetadata* meta = read_segment("sq-seg.bin");
    CHECK(meta && lance_index_segment_metadata_index_type(meta) == LANCE_INDEX_IVF_SQ);
    lance_index_segment_metadata_free(meta);
    CHECK(run("build %s --column vec --fragments 1 --model %s/sq.bin --type IVF_FLAT -o %s/flat.bin --quiet", uri, dir,
              dir) == 2);
    CHECK(stderr_mentions("--type IVF_FLAT conflicts with the model") && stderr_mentions("trained for IVF_SQ"));
}

static void test_distributed_training(void) {
    CHECK(run("plan %s --groups 2", uri) == 0);
    JValue* plan = json_parse(out);
    const JValue* groups = plan ? json_get(plan, "groups") : NULL;
    CHECK(groups && groups->count == 2);
    char lists[2][256];
    uint32_t ids[2][64];
    size_t counts[2] = {0, 0};
    for (size_t g = 0; groups && g < 2; g++) {
        const JValue* f = json_get(groups->items[g], "fragments");
        size_t used = 0;
        lists[g][0] = 0;
        for (size_t i = 0; f && i < f->count && i < 64; i++) {
            ids[g][counts[g]++] = (uint32_t)f->items[i]->number;
            used += (size_t)snprintf(lists[g] + used, sizeof lists[g] - used, "%s%d", i ? "," : "",
                                     (int)f->items[i]->number);
        }
    }
    json_free(plan);

    CHECK(run("train-start --column vec --type IVF_PQ --partitions 8 --sub-vectors 4 --seed 3 -o %s/req.bin", dir) ==
          0);
    CHECK(strstr(out, "\"phase\": \"ivf_init\"") && strstr(out, "\"done\": false"));
    CHECK(copy_file("req.bin", "first.bin") == 0);
    int rounds = 0, done = 0;
    while (!done && rounds < 300) {
        for (int g = 0; g < 2; g++) {
            CHECK(lines_file("lines.txt", "%s/req.bin %s/stats%d.bin\n", dir, dir, g) == 0);
            CHECK(run("train-worker %s --fragments %s < %s/lines.txt", uri, lists[g], dir) == 0 &&
                  !strcmp(out, "ok\n"));
        }
        if (rounds == 1) {
            /* Refusals: one worker's statistics missing, one twice, a malformed worker line. */
            CHECK(run("train-reduce %s/req.bin %s/stats0.bin -o %s/next.bin", dir, dir, dir) == 11);
            CHECK(stderr_mentions("a worker's statistics are missing"));
            CHECK(run("train-reduce %s/req.bin %s/stats0.bin %s/stats0.bin -o %s/next.bin", dir, dir, dir, dir) == 23);
            CHECK(lines_file("lines.txt", "only-one-path\n") == 0);
            CHECK(run("train-worker %s < %s/lines.txt", uri, dir) == 0 && !strncmp(out, "error 2 ", 8));
            /* The worker keeps its sample: two lines, two equal answers. */
            CHECK(lines_file("lines.txt", "%s/req.bin %s/a.bin\n%s/req.bin %s/b.bin\n", dir, dir, dir, dir) == 0);
            CHECK(run("train-worker %s --fragments %s < %s/lines.txt", uri, lists[0], dir) == 0 &&
                  !strcmp(out, "ok\nok\n"));
            size_t la = 0, lb = 0;
            unsigned char* a = read_in_dir("a.bin", &la);
            unsigned char* b = read_in_dir("b.bin", &lb);
            CHECK(a && b && la == lb && memcmp(a, b, la) == 0);
            free(a);
            free(b);
        }
        CHECK(copy_file("stats0.bin", "old0.bin") == 0 && copy_file("stats1.bin", "old1.bin") == 0);
        CHECK(run("train-reduce %s/req.bin %s/stats0.bin %s/stats1.bin -o %s/req.bin", dir, dir, dir, dir) == 0);
        done = strstr(out, "\"done\": true") != NULL;
        rounds++;
        if (rounds == 2) {
            /* The previous round's statistics answer another request. */
            CHECK(run("train-reduce %s/req.bin %s/old0.bin %s/old1.bin -o %s/next.bin", dir, dir, dir, dir) == 25);
        }
    }
    CHECK(done);

    /* The library, with the same split and seed, makes the same model. */
    LanceDataset* ds = lance_dataset_open(uri, NULL, 0);
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_PQ;
    p.num_partitions = 8;
    p.num_sub_vectors = 4;
    LanceVectorTraining* t = NULL;
    CHECK_OK(lance_vector_training_new("vec", &p, 3, &t));
    LanceVectorTrainingWorker* w[2] = {NULL, NULL};
    for (int g = 0; g < 2; g++) CHECK_OK(lance_vector_training_worker_new(ds, ids[g], counts[g], &w[g]));
    LanceVectorTrainingInfo info;
    int guard = 0;
    while (lance_vector_training_info(t, &info) == 0 && info.phase != LANCE_TRAINING_DONE && guard++ < 300) {
        uint8_t *req = NULL, *st[2] = {NULL, NULL};
        size_t len = 0, lens[2] = {0, 0};
        CHECK_OK(lance_vector_training_request(t, &req, &len));
        for (int g = 0; g < 2; g++)
            CHECK_OK(lance_vector_training_worker_answer(w[g], req, len, NULL, &st[g], &lens[g]));
        CHECK_OK(lance_vector_training_reduce(t, (const uint8_t* const*)st, lens, 2));
        lance_free_bytes(req);
        lance_free_bytes(st[0]);
        lance_free_bytes(st[1]);
    }
    CHECK((int)info.rounds == rounds);
    LanceVectorModel* m = NULL;
    CHECK_OK(lance_vector_training_model(t, &m));
    LanceVectorModel* from_tool = read_model("req.bin");
    CHECK(from_tool != NULL);
    const char* f1 = lance_vector_model_fingerprint(m);
    const char* f2 = lance_vector_model_fingerprint(from_tool);
    CHECK(f1 && f2 && !strcmp(f1, f2));
    int32_t trained_for = 0;
    CHECK(from_tool && lance_vector_model_index_type(from_tool, &trained_for) == 0 &&
          trained_for == LANCE_INDEX_IVF_PQ);
    lance_free_string(f1);
    lance_free_string(f2);
    lance_vector_model_free(m);
    lance_vector_model_free(from_tool);
    for (int g = 0; g < 2; g++) lance_vector_training_worker_free(w[g]);
    lance_vector_training_free(t);
    lance_dataset_close(ds);

    /* The model builds a segment; a finished training has no request. */
    CHECK(run("build %s --column vec --fragments %s --model %s/req.bin -o %s/dseg.bin --quiet", uri, lists[0], dir,
              dir) == 0);
    CHECK(lines_file("lines.txt", "%s/req.bin %s/x.bin\n", dir, dir) == 0);
    CHECK(run("train-worker %s < %s/lines.txt", uri, dir) == 0 && !strncmp(out, "error 11 ", 9));
    test_train_worker_signal();
    for (int i = 0; i < 3; i++) {
        const char* cmds[] = {"train-start", "train-worker", "train-reduce"};
        CHECK(run("%s --help", cmds[i]) == 0 && strstr(out, cmds[i]) != NULL);
    }
}

/* A training over every fragment driven by the tool to its end, the model
 * left in dir/`req` (train-start's request): each round one train-worker
 * process, reduced by train-reduce (a process per round) or, with
 * `coordinator`, by one train-coordinator process for the whole training,
 * which also answers an empty line and an unreadable file with error lines.
 * Returns the rounds, or -1. */
static int train_over_all(const char* req, int coordinator) {
    TrainingProcess c = {0};
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, req);
    char* argv[] = {(char*)tool, "train-coordinator", path, NULL};
    if (coordinator) {
        CHECK(training_process_start(argv, -1, &c) == 0);
        char line[512] = "";
        fprintf(c.in, "\n%s/missing.bin\n", dir);
        fflush(c.in);
        CHECK(fgets(line, sizeof line, c.out) && !strncmp(line, "error 2 expected", 16));
        CHECK(fgets(line, sizeof line, c.out) && !strncmp(line, "error 2 cannot read", 19));
    }
    int rounds = 0, done = 0;
    while (!done && rounds < 300) {
        CHECK(lines_file("lines.txt", "%s %s/round.bin\n", path, dir) == 0);
        if (run("train-worker %s < %s/lines.txt", uri, dir) != 0 || strcmp(out, "ok\n") != 0) break;
        if (coordinator) {
            fprintf(c.in, "%s/round.bin\n", dir);
            fflush(c.in);
            if (!fgets(out, sizeof out, c.out) || out[0] != '{') break;
        } else if (run("train-reduce %s %s/round.bin -o %s", path, dir, path) != 0) {
            break;
        }
        done = strstr(out, "\"done\": true") != NULL;
        rounds++;
    }
    CHECK(done);
    if (coordinator) CHECK(training_processes_stop(&c, 1) == 0);
    return done ? rounds : -1;
}

/* The core's training options from the command line: a seed's one
 * fingerprint, a partition count from a target, their refusals, and
 * train-start's count from a dataset; train-coordinator reduces a whole
 * training as train-reduce does round by round. */
static void test_training_options(void) {
    char first[128] = "", again[128] = "", other[128] = "";
    const char* common = "--column vec --type IVF_FLAT --target-partition-size 2000 --sample-rate 16 --quiet";
    CHECK(run("train %s %s --seed 9 -o %s/s9.bin", uri, common, dir) == 0);
    snprintf(first, sizeof first, "%.100s", out);
    CHECK(run("train %s %s --seed 9 -o %s/s9b.bin", uri, common, dir) == 0);
    snprintf(again, sizeof again, "%.100s", out);
    CHECK(run("train %s %s --seed 10 -o %s/s10.bin", uri, common, dir) == 0);
    snprintf(other, sizeof other, "%.100s", out);
    CHECK(strlen(first) == 65 && !strcmp(first, again) && strcmp(first, other) != 0);
    /* Earlier cases appended rows: the count follows the dataset's rows. */
    LanceDataset* ds = lance_dataset_open(uri, NULL, 0);
    uint64_t rows = ds ? lance_dataset_count_rows(ds) : 0;
    lance_dataset_close(ds);
    CHECK(rows >= ROWS);
    LanceVectorModel* m = read_model("s9.bin");
    LanceVectorModelInfo info;
    CHECK(m && lance_vector_model_info(m, &info) == 0 && info.num_partitions == rows / 2000);
    lance_vector_model_free(m);
    CHECK(run("train %s --column vec --partitions 4 --seed 1 --streaming-sample-rate 8 -o %s/x.bin --quiet", uri,
              dir) == 10 + LANCE_ERR_NOT_SUPPORTED);
    CHECK(run("train %s --column vec --partitions 4 --streaming-coreset-rate 8 -o %s/x.bin --quiet", uri, dir) ==
          10 + LANCE_ERR_INVALID_ARGUMENT);
    CHECK(stderr_mentions("options->streaming_coreset_rate"));
    CHECK(run("build %s --column id --scalar BTREE --seed 1 -o %s/x.bin --quiet", uri, dir) == 2);
    CHECK(stderr_mentions("--seed is for vector indices"));
    CHECK(run("train-start --column vec --target-partition-size 4000 -o %s/t.bin", dir) == 2);

    /* A seeded segment build twice: one model. */
    const char* seg =
        "--column vec --type IVF_FLAT --partitions 4 --sample-rate 16 --seed 4 --fragments 0,1,2,3 --quiet";
    CHECK(run("build %s %s -o %s/seeded-a.bin", uri, seg, dir) == 0);
    CHECK(run("build %s %s -o %s/seeded-b.bin", uri, seg, dir) == 0);
    LanceIndexSegmentMetadata* a = read_segment("seeded-a.bin");
    LanceIndexSegmentMetadata* b = read_segment("seeded-b.bin");
    const char* fa = a ? lance_index_segment_metadata_model_fingerprint(a) : NULL;
    const char* fb = b ? lance_index_segment_metadata_model_fingerprint(b) : NULL;
    CHECK(fa && fb && strlen(fa) == 64 && !strcmp(fa, fb));
    lance_index_segment_metadata_free(a);
    lance_index_segment_metadata_free(b);

    /* train-start counts the partitions; train-coordinator = train-reduce. */
    CHECK(run("train-start %s --target-partition-size 4000 --column vec --type IVF_FLAT --sample-rate 16 --seed 2 "
              "-o %s/coord.bin",
              uri, dir) == 0);
    CHECK(copy_file("coord.bin", "reduced.bin") == 0);
    int by_coordinator = train_over_all("coord.bin", 1);
    int by_reduce = train_over_all("reduced.bin", 0);
    CHECK(by_coordinator > 1 && by_coordinator == by_reduce);
    LanceVectorModel* x = read_model("coord.bin");
    LanceVectorModel* y = read_model("reduced.bin");
    const char* fx = x ? lance_vector_model_fingerprint(x) : NULL;
    const char* fy = y ? lance_vector_model_fingerprint(y) : NULL;
    CHECK(x && lance_vector_model_info(x, &info) == 0 && info.num_partitions == rows / 4000);
    CHECK(fx && fy && !strcmp(fx, fy));
    lance_free_string(fx);
    lance_free_string(fy);
    lance_vector_model_free(x);
    lance_vector_model_free(y);
    CHECK(run("train-coordinator --help") == 0 && strstr(out, "train-coordinator") != NULL);
}

/* Every scalar type by name: ZONEMAP segments built with --params,
 * committed and listed; a one-shot BLOOMFILTER from `create`; filters
 * answered exactly; the refusals of names and options. */
static void test_scalar_types(void) {
    char at[700];
    lance_dataset_close(dk_fresh(dir, "scalar", &data, ROWS / 16, at, sizeof at));
    const char* halves[] = {"0,1,2,3,4,5,6,7", "8,9,10,11,12,13,14,15"};
    for (int h = 0; h < 2; h++)
        CHECK(run("build %s --column id --scalar ZONEMAP --params '{\"rows_per_zone\": 256}' --fragments %s "
                  "-o %s/zone-%d.bin --quiet",
                  at, halves[h], dir, h) == 0);
    LanceIndexSegmentMetadata* m = read_segment("zone-0.bin");
    CHECK(m && lance_index_segment_metadata_index_type(m) == LANCE_SCALAR_ZONEMAP &&
          lance_index_segment_metadata_fragment_count(m) == 8);
    lance_index_segment_metadata_free(m);
    CHECK(run("commit %s --name id_zones --column id %s/zone-0.bin %s/zone-1.bin", at, dir, dir) == 0);
    CHECK(run("create %s --column tag --scalar BLOOMFILTER --params '{\"number_of_items\": 1024}' --quiet", at) == 0);
    CHECK(run("list %s --json", at) == 0);
    JValue* list = json_parse(out);
    int zones = 0, blooms = 0;
    for (size_t i = 0; list && i < list->count; i++) {
        const char* type = json_get(list->items[i], "type")->string;
        zones += !strcmp(type, "ZoneMap");
        blooms += !strcmp(type, "BloomFilter");
    }
    CHECK(list && list->count == 3 && zones == 2 && blooms == 1);
    json_free(list);
    LanceDataset* ds = lance_dataset_open(at, NULL, 0);
    LanceScanner* s = ds ? lance_scanner_new(ds, NULL, "id >= 4000 AND id < 4100") : NULL;
    CHECK(s && tu_count_scan(s) == 100);
    lance_scanner_close(s);
    s = ds ? lance_scanner_new(ds, NULL, "tag = 't3'") : NULL;
    CHECK(s && tu_count_scan(s) == ROWS / 7 + (3 < ROWS % 7));
    lance_scanner_close(s);
    lance_dataset_close(ds);

    CHECK(run("build %s --column id --scalar NOPE -o %s/x.bin", at, dir) == 2);
    CHECK(stderr_mentions("unknown --scalar NOPE") && stderr_mentions("MINHASHLSH"));
    CHECK(run("create %s --column id --params '{}'", at) == 2);
    CHECK(stderr_mentions("--params is for scalar indices"));
    CHECK(run("create %s --column id --scalar ZONEMAP --partitions 4", at) == 2);
    CHECK(stderr_mentions("--partitions is for vector indices"));
    /* The library's refusal of a key the type does not take: exit 11. */
    CHECK(run("create %s --column id --scalar ZONEMAP --params '{\"rows_per_zones\": 1}' --quiet", at) == 11);
    CHECK(stderr_mentions("rows_per_zones"));
}

/* The number member `key` of a parsed JSON object; -1 when it is not one. */
static double json_number(const JValue* o, const char* key) {
    const JValue* v = json_get(o, key);
    return v && v->type == J_NUMBER ? v->number : -1;
}

/* The ids of a JSON array of numbers as "0,1,5" ("" when not one). */
static void ids_text(const JValue* ids, char* buf, size_t cap) {
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; ids && ids->type == J_ARRAY && i < ids->count && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%.0f", i ? "," : "", ids->items[i]->number);
}

/* `coverage NAME --json` of `at`: the segment count and whether no fragment
 * is unindexed or stale. */
static void check_coverage(const char* at, const char* name, double segments) {
    CHECK(run("coverage %s --name %s --json", at, name) == 0);
    JValue* report = json_parse(out);
    const JValue* unindexed = json_get(report, "unindexed_fragments");
    const JValue* stale = json_get(report, "stale_fragments");
    CHECK(json_number(report, "num_segments") == segments);
    CHECK(unindexed && unindexed->type == J_ARRAY && unindexed->count == 0);
    CHECK(stale && stale->type == J_ARRAY && stale->count == 0);
    json_free(report);
}

/* plan-maintenance and maintain: a vector index of five small segments over
 * fragments 0-11 (12-15 unindexed) planned with --target-rows 4000
 * --max-segments 3 is one build over 12-15 and one merge of the four
 * 2000-row segments; maintain runs both and commits once (3 segments,
 * nothing unindexed, k-NN exact), and then has nothing to do.  A scalar
 * index takes its type from the plan.  A deleted fragment makes the
 * segments over it rebuild tasks.  merge --segment merges committed
 * segments.  The refusals' exit codes. */
static void test_maintenance(void) {
    char at[700];
    lance_dataset_close(dk_fresh(dir, "maintain", &data, ROWS / 16, at, sizeof at));
    CHECK(run("train %s --column vec --type IVF_FLAT --partitions 16 -o %s/mt.bin --quiet", at, dir) == 0);
    const char* groups[] = {"0,1", "2,3", "4,5", "6,7", "8,9,10,11"};
    for (int g = 0; g < 5; g++)
        CHECK(run("build %s --column vec --fragments %s --model %s/mt.bin -o %s/mt-%d.bin --quiet", at, groups[g], dir,
                  dir, g) == 0);
    CHECK(run("commit %s --name vec_idx --column vec %s/mt-0.bin %s/mt-1.bin %s/mt-2.bin %s/mt-3.bin %s/mt-4.bin", at,
              dir, dir, dir, dir, dir) == 0);

    /* The plan, exactly. */
    CHECK(run("plan-maintenance %s --index vec_idx --target-rows 4000 --max-segments 3", at) == 0);
    JValue* plan = json_parse(out);
    const JValue* tasks = json_get(plan, "tasks");
    const JValue* policy = json_get(plan, "policy");
    CHECK(json_number(plan, "dataset_version") == 2 && json_number(plan, "segments_before") == 5 &&
          json_number(plan, "segments_after") == 3);
    CHECK(json_number(policy, "target_rows_per_segment") == 4000 && json_number(policy, "small_segment_rows") == 1000 &&
          json_number(policy, "max_segments") == 3);
    const char* type = json_get(plan, "type") ? json_get(plan, "type")->string : NULL;
    CHECK(type && !strcmp(type, "IVF_FLAT"));
    CHECK(tasks && tasks->type == J_ARRAY && tasks->count == 2);
    char text[256] = "", uuids[2][64] = {"", ""};
    if (tasks && tasks->count == 2) {
        const JValue* build = tasks->items[0];
        const JValue* merge = tasks->items[1];
        CHECK(!strcmp(json_get(build, "kind")->string, "build") && json_number(build, "rows") == 4000);
        ids_text(json_get(build, "fragment_ids"), text, sizeof text);
        CHECK(!strcmp(text, "12,13,14,15"));
        CHECK(!strcmp(json_get(merge, "kind")->string, "merge") && json_number(merge, "rows") == 8000);
        ids_text(json_get(merge, "fragment_ids"), text, sizeof text);
        CHECK(!strcmp(text, "0,1,2,3,4,5,6,7"));
        const JValue* u = json_get(merge, "segment_uuids");
        CHECK(u && u->count == 4);
        for (int i = 0; u && i < 2 && (size_t)i < u->count; i++)
            snprintf(uuids[i], sizeof uuids[i], "%s", u->items[i]->string);
    }
    json_free(plan);

    /* merge --segment: two committed segments merged into a file, not committed. */
    CHECK(run("merge %s --index vec_idx --segment %s --segment %s -o %s/mc.bin --quiet", at, uuids[0], uuids[1], dir) ==
          0);
    LanceIndexSegmentMetadata* m = read_segment("mc.bin");
    CHECK(m && lance_index_segment_metadata_fragment_count(m) == 4);
    lance_index_segment_metadata_free(m);
    CHECK(run("merge %s --segment %s --segment %s -o %s/x.bin", at, uuids[0], uuids[1], dir) == 2);
    CHECK(stderr_mentions("--segment UUID needs --index NAME"));
    CHECK(run("merge %s --index vec_idx --segment %s -o %s/x.bin", at, uuids[0], dir) == 2);
    CHECK(stderr_mentions("at least two"));
    CHECK(run("merge %s --index vec_idx --segment %s --segment not-a-uuid -o %s/x.bin", at, uuids[0], dir) == 11);
    CHECK(run("merge %s --index vec_idx --segment %s --segment 00000000000000000000000000000000 -o %s/x.bin", at,
              uuids[0], dir) == 13);

    /* Refusals, nothing committed. */
    CHECK(run("plan-maintenance %s --index no_such_idx", at) == 13);
    CHECK(run("plan-maintenance %s --index vec_idx --target-rows 100 --small-rows 200", at) == 11);
    CHECK(stderr_mentions("small_segment_rows"));
    CHECK(run("plan-maintenance %s --index vec_idx --max-segments 4294967296", at) == 2);
    CHECK(run("plan-maintenance %s --target-rows 10", at) == 2);
    CHECK(run("plan-maintenance %s --index vec_idx --drift-threshold -1", at) == 11);
    CHECK(stderr_mentions("drift_threshold"));
    CHECK(run("plan-maintenance %s --index vec_idx --drift-threshold 1.5x", at) == 2);

    /* The retraining advice: fragments 12-15 hold rows of the data the model
     * was trained on, all of them sampled. */
    CHECK(run("plan-maintenance %s --index vec_idx --drift-threshold 1.5", at) == 0);
    plan = json_parse(out);
    const JValue* drift = json_get(plan, "drift");
    const JValue* retrain = json_get(drift, "retrain");
    const JValue* ratio = json_get(drift, "ratio");
    /* 4,000 new rows, all of them; 12,000 indexed, the plan's 4,096 of them. */
    CHECK(json_number(drift, "new_rows_sampled") == ROWS / 4 && json_number(drift, "indexed_rows_sampled") == 4096);
    CHECK(retrain && retrain->type == J_BOOL && retrain->number == 0);
    CHECK(ratio && ratio->type == J_NUMBER && ratio->number > 0.5 && ratio->number < 1.5);
    json_free(plan);
    CHECK(run("train %s --column vec --type IVF_FLAT --partitions 16 --sample-fragments 3,4 -o %s/mt2.bin --quiet", at,
              dir) == 0);
    CHECK(run("maintain %s --index vec_idx --model %s/mt2.bin --target-rows 4000 --max-segments 3", at, dir) ==
          25); /* LANCE_ERR_MODEL_MISMATCH */
    CHECK(stderr_mentions("mt2.bin"));
    CHECK(run("maintain %s --index vec_idx --model %s/mt.bin --scalar BTREE", at, dir) == 2);
    CHECK(run("maintain %s --index vec_idx --model %s/missing.bin", at, dir) == 2);
    LanceDataset* ds = lance_dataset_open(at, NULL, 0);
    CHECK(ds && lance_dataset_latest_version(ds) == 2);
    lance_dataset_close(ds);

    /* maintain: both tasks, one commit, with the model read back from the
     * index (no --model). */
    CHECK(run("maintain %s --index vec_idx --target-rows 4000 --max-segments 3 --job-id upkeep", at) == 0);
    CHECK(stderr_mentions("building with the model read back from index vec_idx"));
    JValue* result = json_parse(out);
    CHECK(json_number(result, "version") == 3 && json_number(result, "tasks") == 2 &&
          json_number(result, "segments_before") == 5 && json_number(result, "segments_after") == 3);
    CHECK(strstr(out, "\"committed\": true") && strstr(out, "\"already_committed\": false"));
    json_free(result);
    CHECK(stderr_mentions("task 2/2 (merge): 4 segments merged"));
    check_coverage(at, "vec_idx", 3);
    check_search_exact(at);
    CHECK(run("maintain %s --index vec_idx --model %s/mt.bin --target-rows 4000 --max-segments 3", at, dir) == 0);
    CHECK(strstr(out, "\"version\": 3") && strstr(out, "\"committed\": false") && strstr(out, "\"tasks\": 0"));
    /* With nothing to build the model is not needed. */
    CHECK(run("maintain %s --index vec_idx --target-rows 4000 --max-segments 3 --quiet", at) == 0);
    CHECK(strstr(out, "\"tasks\": 0") && strstr(out, "\"segments_after\": 3"));

    /* A scalar index: the type from the plan, the default policy merges its
     * two segments and indexes fragments 8-15 in one delta. */
    CHECK(run("build %s --column id --scalar BTREE --fragments 0,1,2,3 -o %s/bt-0.bin --quiet", at, dir) == 0);
    CHECK(run("build %s --column id --scalar BTREE --fragments 4,5,6,7 -o %s/bt-1.bin --quiet", at, dir) == 0);
    CHECK(run("commit %s --name id_idx --column id %s/bt-0.bin %s/bt-1.bin", at, dir, dir) == 0);
    CHECK(run("maintain %s --index id_idx --scalar BITMAP", at) == 2);
    CHECK(stderr_mentions("--scalar BITMAP conflicts") && stderr_mentions("BTree"));
    CHECK(run("maintain %s --index id_idx --model %s/mt.bin", at, dir) == 2);
    CHECK(run("maintain %s --index id_idx --scalar BTREE --quiet", at) == 0);
    result = json_parse(out);
    CHECK(json_number(result, "version") == 5 && json_number(result, "tasks") == 2 &&
          json_number(result, "segments_before") == 2 && json_number(result, "segments_after") == 2);
    json_free(result);
    check_coverage(at, "id_idx", 2);
    check_coverage(at, "vec_idx", 3);
    ds = lance_dataset_open(at, NULL, 0);
    const char* filters[] = {"id >= 3990 AND id < 4010", "id >= 15000 AND id < 15100"};
    for (int i = 0; i < 2; i++) {
        LanceScanner* s = ds ? lance_scanner_new(ds, NULL, filters[i]) : NULL;
        CHECK(s && tu_count_scan(s) == (i ? 100 : 20));
        lance_scanner_close(s);
    }

    /* Fragment 0 deleted whole leaves the table: each index's segment over
     * 0-7 is rebuilt over 1-7 (the vector one with the model). */
    uint64_t deleted = 0;
    CHECK(ds && lance_dataset_delete(ds, "id < 1000", &deleted) == 0 && deleted == 1000);
    lance_dataset_close(ds);
    CHECK(run("plan-maintenance %s --index vec_idx --target-rows 4000 --max-segments 3", at) == 0);
    CHECK(strstr(out, "\"kind\":\"rebuild\"") && strstr(out, "\"fragment_ids\":[1,2,3,4,5,6,7]"));
    CHECK(run("maintain %s --index vec_idx --model %s/mt.bin --target-rows 4000 --max-segments 3 --quiet", at, dir) ==
          0);
    CHECK(strstr(out, "\"version\": 7") && strstr(out, "\"tasks\": 1") && strstr(out, "\"segments_after\": 3"));
    CHECK(run("maintain %s --index id_idx --quiet", at) == 0);
    CHECK(strstr(out, "\"version\": 8") && strstr(out, "\"tasks\": 1") && strstr(out, "\"segments_after\": 2"));
    check_coverage(at, "vec_idx", 3);
    check_coverage(at, "id_idx", 2);
    ds = lance_dataset_open(at, NULL, 0);
    LanceScanner* s = ds ? lance_scanner_new(ds, NULL, "id >= 990 AND id < 1010") : NULL;
    CHECK(s && tu_count_scan(s) == 10);
    lance_scanner_close(s);
    lance_dataset_close(ds);
    const char* commands[] = {"plan-maintenance", "maintain"};
    for (int i = 0; i < 2; i++) CHECK(run("%s --help", commands[i]) == 0 && strstr(out, commands[i]) != NULL);
    CHECK(run("help") == 0 && strstr(out, "lance-index plan-maintenance") && strstr(out, "lance-index maintain"));
}

/* lance.h, "Temporary files": the tools ran above, builds cancelled in
 * training among them, and left nothing in TMPDIR; this process's own
 * directory (lance-c-process-<pid>-...) is empty, and a child
 * forked without exec does not remove it when it exits. */
static void check_temp_dirs(const char* tmpdir) {
    char mine[64];
    snprintf(mine, sizeof mine, "lance-c-process-%d-", (int)getpid());
    DIR* d = opendir(tmpdir);
    CHECK(d != NULL);
    int entries = 0, own = 0;
    char own_path[900] = "";
    for (struct dirent* e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        entries++;
        if (!strncmp(e->d_name, mine, strlen(mine))) {
            own++;
            snprintf(own_path, sizeof own_path, "%s/%s", tmpdir, e->d_name);
        } else {
            printf("    left in TMPDIR: %s\n", e->d_name);
        }
    }
    if (d) closedir(d);
    CHECK(entries == 1 && own == 1);
    int inside = 0;
    DIR* o = own_path[0] ? opendir(own_path) : NULL;
    for (struct dirent* e; o && (e = readdir(o));) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            inside++;
            printf("    left in this process's directory: %s\n", e->d_name);
        }
    }
    if (o) closedir(o);
    CHECK(o != NULL && inside == 0);
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) exit(0); /* runs the atexit handlers */
    int st = 0;
    CHECK(child > 0 && waitpid(child, &st, 0) == child && WIFEXITED(st));
    CHECK(access(own_path, F_OK) == 0);
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: test_cli PATH-TO-lance-index PATH-TO-lance_worker\n");
        return 2;
    }
    tool = argv[1];
    worker = argv[2];
    data = tu_make_data(ROWS, DIM, 16, 0.5f, 21);
    dir = tu_temp_dir("cli");
    /* From the first lance-c call on, every process here, this one and the
     * tools it runs, gets this TMPDIR: what they leave is checked at the end. */
    char* tmpdir = tu_temp_dir("cli-tmpdir");
    CHECK(setenv("TMPDIR", tmpdir, 1) == 0);
    lance_dataset_close(dk_fresh(dir, "ds", &data, ROWS / 16, uri, sizeof uri));
    RUN(test_loop);
    RUN(test_raw_model);
    RUN(test_errors);
    RUN(test_strict_arguments);
    RUN(test_coverage_after_append);
    RUN(test_sigint);
    RUN(test_merge);
    RUN(test_distributed_training);
    RUN(test_training_options);
    RUN(test_model_type);
    RUN(test_scalar_types);
    RUN(test_maintenance);
    check_temp_dirs(tmpdir);
    tu_remove_tree(tmpdir);
    free(tmpdir);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_cli");
}
