#define _GNU_SOURCE
/* Workers and coordinators killed outright (issue 17): real `lance-index`
 * processes get SIGKILL at random points of every stage, and the dataset
 * must survive each kill whole.  Usage: test_kills PATH-TO-lance-index [PASSES]
 *
 * Kill points: a random delay (seeded; the seed is printed, LANCE_KILL_SEED
 * repeats it) after the process starts or after it reports a stage on
 * stderr, drawn uniformly from what remained of an unkilled run of the same
 * command after that point (measured at startup; narrowed whenever a victim
 * finishes before its kill, and that victim is then followed by another,
 * up to 3), so kills land all over the stage and the ones after it:
 *   train           shared-model training, and writing the model file;
 *   build (local)   startup, local IVF training, shuffle;
 *   build (model)   shuffle, merging and writing partitions, writing the
 *                   segment's metadata file;
 *   commit          anywhere in a coordinator's commit process, up to 6
 *                   kills a round until one lands or the process finishes
 *                   (each later attempt aims at the later half of what the
 *                   previous one could hit: the commit itself comes last).
 * One pass kills at each of these points once, and the coordinator in 4
 * rounds; CI runs 3 passes, PASSES (or LANCE_KILL_PASSES) more.
 *
 * After every kill:
 *   - the dataset opens at a consistent version: a worker never moves it; a
 *     coordinator's commit landed whole (version 2, both segments, every
 *     fragment covered) or not at all (version 1, no index);
 *   - a worker's output file is absent or complete (never half a model or
 *     half a segment's metadata);
 *   - a killed build that left its _indices/<uuid>/ refuses a retry with the
 *     same UUID (LANCE_ERR_DUPLICATE_SEGMENT, exit 22) and the files stay;
 *   - lance_dataset_cleanup_old_versions(ds, 0, true) leaves no orphan under
 *     _indices/ (every directory is a segment of a version still kept);
 *   - the retry succeeds: a worker with a fresh UUID, a coordinator with the
 *     same segments (answered as already committed when the killed commit
 *     had landed) or, after a cleanup reclaimed the uncommitted segments,
 *     LANCE_ERR_INCOMPLETE_SEGMENT and a rebuild; k-NN through the index
 *     equals brute force (IVF_FLAT probing every partition).
 * Finally a worker retried with the UUID of a committed segment (an
 * at-least-once scheduler) fails with LANCE_ERR_DUPLICATE_SEGMENT and the
 * committed index keeps answering exactly (issue item 1).  The leftover of
 * a kill in the middle of writing a file (a staging file) is also placed
 * exactly once, since random kills hit that window rarely.
 *
 * What killed workers leave in TMPDIR (their process directory with the
 * core's shuffle spill) is removed by the next process's first lance-c
 * call (lance.h, "Temporary files"): the children get a TMPDIR of their
 * own, and after each round, whose later processes ran after its kills, it
 * must be empty. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "measure.h"
#include "test_util.h"
#include "uuid_hex.h"

#define ROWS 96000
#define DIM 32
#define FRAGS 8
#define PARTITIONS 16
#define INDEX "vec_idx"
#define COMMIT_ATTEMPTS 6
#define VICTIM_ATTEMPTS 3
/* lance-index's exit status for LANCE_ERR_DUPLICATE_SEGMENT: 20 + (code - 1000). */
#define EXIT_DUPLICATE_SEGMENT 22

extern char** environ;

static const char* tool;
static char* dir;
static char spill_dir[700];
static char model_file[700];
static char** child_env;
static TuData data;
static int round_seq;

/* ---- seeded random numbers (xorshift64*) ---- */

static uint64_t rng_state;

static double rng_unit(void) { /* in [0, 1) */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

/* ---- processes ---- */

typedef enum { TRAIN, BUILD_LOCAL, BUILD, COMMIT, KINDS } Kind;
static const char* kind_names[KINDS] = {"train", "build (local)", "build (model)", "commit"};

/* The lines each kind reports on stderr that a kill can follow (NULL = the
 * start of the process).  The tool prints them when stderr is no terminal. */
#define MAX_TRIGGERS 4
static const char* const triggers[KINDS][MAX_TRIGGERS] = {
    {NULL, "training the shared model", NULL, NULL},
    {NULL, "train_ivf: started", "shuffle: started", NULL},
    {NULL, "shuffle: started", "merge_partitions: started", "merge_partitions: done"},
    {NULL, NULL, NULL, NULL},
};
static const int trigger_count[KINDS] = {2, 3, 4, 1};

/* What remained of an unkilled run after each trigger, in seconds. */
static double remaining[KINDS][MAX_TRIGGERS];

typedef struct {
    int status;                   /* from waitpid */
    int killed;                   /* died of our SIGKILL */
    double seen_at[MAX_TRIGGERS]; /* when each trigger line came, 0 = never */
    double started, exited;
    char last_line[160]; /* the last stderr line before the end or the kill */
} Run;

/* Runs `argv` (argv[0] is the tool) with stdout to /dev/null and stderr read
 * here.  kill_trigger >= 0: SIGKILL `delay` seconds after that trigger of
 * `kind` (index 0 = the start).  Blocks until the process is gone. */
static void run(Kind kind, char* const* argv, int kill_trigger, double delay, Run* out) {
    memset(out, 0, sizeof *out);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        CHECK(!"pipe");
        return;
    }
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    out->started = monotonic_seconds();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 2);
        dup2(null, 1);
        execve(tool, argv, child_env);
        _exit(127);
    }
    CHECK(pid > 0);
    close(fds[1]);
    close(null);
    double kill_at = kill_trigger == 0 ? out->started + delay : -1;
    out->seen_at[0] = out->started;
    char buf[8192];
    size_t used = 0;
    for (;;) {
        int timeout = -1;
        if (kill_at >= 0) {
            double left = kill_at - monotonic_seconds();
            if (left <= 0) {
                kill(pid, SIGKILL);
                break;
            }
            timeout = (int)(left * 1000) + 1;
        }
        struct pollfd p = {fds[0], POLLIN, 0};
        int ready = poll(&p, 1, timeout);
        if (ready <= 0) continue; /* a timeout (the kill is due) or EINTR */
        ssize_t got = read(fds[0], buf + used, sizeof buf - 1 - used);
        if (got <= 0) break; /* the process closed stderr: it is exiting */
        used += (size_t)got;
        buf[used] = 0;
        char* line = buf;
        char* end;
        while ((end = strchr(line, '\n')) != NULL) {
            *end = 0;
            snprintf(out->last_line, sizeof out->last_line, "%s", line);
            for (int t = 1; t < trigger_count[kind]; t++)
                if (!out->seen_at[t] && strstr(line, triggers[kind][t])) {
                    out->seen_at[t] = monotonic_seconds();
                    if (t == kill_trigger) kill_at = out->seen_at[t] + delay;
                }
            line = end + 1;
        }
        used = strlen(line);
        memmove(buf, line, used + 1);
        if (used == sizeof buf - 1) used = 0; /* a line longer than the buffer: drop it */
    }
    waitpid(pid, &out->status, 0);
    out->exited = monotonic_seconds();
    close(fds[0]);
    out->killed = WIFSIGNALED(out->status) && WTERMSIG(out->status) == SIGKILL;
}

static int exit_code(const Run* r) { return WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1; }

/* ---- the commands ---- */

typedef struct {
    char uri[700];
    char uuid_text[2][UUID_HEX_DASHED_LEN + 1]; /* the segments of groups 0 and 1 */
    char seg_file[2][760];
    char model[760]; /* the model the round's segments use */
} Round;

static const char* group_fragments[2] = {"0,1,2,3", "4,5,6,7"};

static void new_uuid(char out[UUID_HEX_DASHED_LEN + 1]) {
    uint8_t bytes[16];
    CHECK(uuid_random_v4(bytes) == 0);
    uuid_hex_format_dashed(bytes, out);
}

/* Runs one `kind` of command on the round's dataset: a worker over `group`
 * with `uuid` writing `out_file`, or the coordinator's commit of both
 * segment files.  Kill arguments as for run(). */
static void run_kind(Kind kind, Round* r, int group, const char* uuid, const char* out_file, int kill_trigger,
                     double delay, Run* result) {
    char partitions[16];
    snprintf(partitions, sizeof partitions, "%d", PARTITIONS);
    const char* words[32];
    int n = 0;
    words[n++] = tool;
    switch (kind) {
    case TRAIN: words[n++] = "train", words[n++] = r->uri, words[n++] = "--partitions", words[n++] = partitions; break;
    case BUILD_LOCAL:
        words[n++] = "build", words[n++] = r->uri, words[n++] = "--partitions", words[n++] = partitions;
        break;
    case BUILD: words[n++] = "build", words[n++] = r->uri, words[n++] = "--model", words[n++] = r->model; break;
    default:
        words[n++] = "commit", words[n++] = r->uri, words[n++] = "--name", words[n++] = INDEX;
        words[n++] = r->seg_file[0], words[n++] = r->seg_file[1], words[n++] = "--job-id", words[n++] = "kills";
        break;
    }
    words[n++] = "--column", words[n++] = "vec";
    if (kind != COMMIT) {
        words[n++] = "--type", words[n++] = "IVF_FLAT", words[n++] = "-o", words[n++] = out_file;
    }
    if (kind == BUILD_LOCAL || kind == BUILD) {
        words[n++] = "--fragments", words[n++] = group_fragments[group];
        words[n++] = "--uuid", words[n++] = uuid;
    }
    words[n] = NULL;
    run(kind, (char* const*)words, kill_trigger, delay, result);
}

/* A worker run to its end; the build must succeed. */
static void build_segment(Round* r, int group) {
    new_uuid(r->uuid_text[group]);
    snprintf(r->seg_file[group], sizeof r->seg_file[group], "%s/seg-%d.bin", dir, group);
    Run result;
    run_kind(BUILD, r, group, r->uuid_text[group], r->seg_file[group], -1, 0, &result);
    CHECK(exit_code(&result) == 0);
}

/* ---- what a dataset must look like ---- */

static char segment_dir[800];

static const char* seg_dir(const Round* r, const char* uuid) {
    snprintf(segment_dir, sizeof segment_dir, "%s/_indices/%s", r->uri, uuid);
    return segment_dir;
}

static int exists(const char* path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* Whether a directory exists and holds at least one entry. */
static int holds_files(const char* path) {
    DIR* d = opendir(path);
    if (!d) return 0;
    int found = 0;
    for (struct dirent* e; !found && (e = readdir(d));)
        found = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return found;
}

/* An order-independent digest of a directory tree's names, sizes and
 * modification times: equal before and after means untouched. */
static uint64_t tree_digest;

static int digest_entry(const char* path, const struct stat* st, int flag, struct FTW* ftw) {
    (void)flag;
    uint64_t h = 1469598103934665603ull;
    for (const char* p = path + ftw->base; *p; p++) h = (h ^ (uint8_t)*p) * 1099511628211ull;
    tree_digest += h ^ ((uint64_t)st->st_size * 31 + (uint64_t)st->st_mtim.tv_nsec + (uint64_t)st->st_mtim.tv_sec);
    return 0;
}

static int print_entry(const char* path, const struct stat* st, int flag, struct FTW* ftw) {
    (void)flag;
    printf("      %s (%lld bytes)\n", path + ftw->base, (long long)st->st_size);
    return 0;
}

static uint64_t digest(const char* path) {
    tree_digest = 0;
    if (nftw(path, digest_entry, 16, FTW_PHYS) != 0) return 0;
    return tree_digest;
}

/* The entries of a directory (0 when it does not exist). */
static int entries(const char* path) {
    int n = 0;
    DIR* d = opendir(path);
    for (struct dirent* e; d && (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

/* Directories under _indices/ that are no segment of any version still on
 * storage (each is printed).  `committed` receives how many are. */
static int orphans(const char* uri, int* committed) {
    JValue* kept[64];
    int nkept = 0;
    LanceDataset* latest = lance_dataset_open(uri, NULL, 0);
    uint64_t last = latest ? lance_dataset_version(latest) : 0;
    lance_dataset_close(latest);
    for (uint64_t v = 1; v <= last && nkept < 64; v++) {
        LanceDataset* ds = lance_dataset_open(uri, NULL, v);
        if (!ds) continue; /* cleaned up */
        const char* text = lance_dataset_index_segments_json(ds);
        kept[nkept] = text ? json_parse(text) : NULL;
        CHECK(kept[nkept] != NULL);
        nkept += kept[nkept] != NULL;
        lance_free_string(text);
        lance_dataset_close(ds);
    }
    char path[800];
    snprintf(path, sizeof path, "%s/_indices", uri);
    int count = 0;
    *committed = 0;
    DIR* d = opendir(path);
    for (struct dirent* e; d && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        int found = 0;
        for (int k = 0; k < nkept && !found; k++)
            for (size_t i = 0; i < kept[k]->count && !found; i++) {
                const JValue* uuid = json_get(kept[k]->items[i], "uuid");
                found = uuid && uuid->type == J_STRING && !strcmp(uuid->string, e->d_name);
            }
        if (found) {
            (*committed)++;
        } else {
            printf("    orphan under _indices/: %s\n", e->d_name);
            count++;
        }
    }
    if (d) closedir(d);
    for (int k = 0; k < nkept; k++) json_free(kept[k]);
    return count;
}

/* A worker retried with `uuid` (of a committed segment, or of a directory a
 * killed build left) is refused with LANCE_ERR_DUPLICATE_SEGMENT (exit 22),
 * writes no output and leaves the directory as it was. */
static void check_retry_refused(Round* r, const char* uuid) {
    uint64_t before = digest(seg_dir(r, uuid));
    char again_out[760];
    snprintf(again_out, sizeof again_out, "%s/again.bin", dir);
    unlink(again_out);
    Run again;
    run_kind(BUILD, r, 0, uuid, again_out, -1, 0, &again);
    CHECK(exit_code(&again) == EXIT_DUPLICATE_SEGMENT);
    if (exit_code(&again) != EXIT_DUPLICATE_SEGMENT) {
        printf("    a retry was let build into %s, which now holds:\n", seg_dir(r, uuid));
        nftw(seg_dir(r, uuid), print_entry, 16, FTW_PHYS);
    }
    CHECK(!exists(again_out));
    CHECK(before != 0 && digest(seg_dir(r, uuid)) == before);
}

/* Lance's cleanup, keeping only the latest version, then the orphan check;
 * returns how many segment directories remain (all committed). */
static int cleanup(const Round* r) {
    LanceDataset* ds = lance_dataset_open(r->uri, NULL, 0);
    CHECK(ds != NULL);
    LanceCleanupStats stats;
    CHECK_OK(lance_dataset_cleanup_old_versions(ds, 0, true, &stats));
    lance_dataset_close(ds);
    int committed = 0;
    CHECK(orphans(r->uri, &committed) == 0);
    return committed;
}

/* The version the latest manifest holds, and that nothing of an index is
 * there (a worker never commits). */
static void check_untouched(const Round* r) {
    LanceDataset* ds = lance_dataset_open(r->uri, NULL, 0);
    CHECK(ds != NULL);
    CHECK(lance_dataset_version(ds) == 1);
    CHECK(lance_dataset_index_count(ds) == 0 && lance_last_error_code() == LANCE_OK);
    CHECK(lance_dataset_count_rows(ds) == ROWS);
    lance_dataset_close(ds);
}

/* The index as both segments commit it: version 2, exactly these segments,
 * every fragment covered, k-NN exact. */
static void check_committed(const Round* r) {
    LanceDataset* ds = lance_dataset_open(r->uri, NULL, 0);
    CHECK(ds != NULL);
    if (!ds) return;
    CHECK(lance_dataset_version(ds) == 2);
    CHECK(lance_dataset_index_count(ds) == 1);
    uint8_t got[4][16], want[16];
    uint64_t count = 0;
    CHECK_OK(lance_dataset_index_segments(ds, INDEX, got[0], 4, &count));
    CHECK(count == 2);
    for (int g = 0; g < 2 && count == 2; g++) {
        CHECK(uuid_hex_parse(r->uuid_text[g], want) == 0);
        CHECK(!memcmp(got[0], want, 16) || !memcmp(got[1], want, 16));
    }
    const char* text = lance_dataset_index_coverage_json(ds, INDEX);
    JValue* doc = text ? json_parse(text) : NULL;
    const JValue* indexed = json_get(doc, "indexed_fragments");
    const JValue* unindexed = json_get(doc, "unindexed_fragments");
    CHECK(indexed && indexed->count == FRAGS && unindexed && unindexed->count == 0);
    json_free(doc);
    lance_free_string(text);
    int mismatches = -1;
    CHECK(tu_recall(ds, &data, 4, PARTITIONS, 0, &mismatches) == 1.0 && mismatches == 0);
    lance_dataset_close(ds);
}

/* Commits the round's two segment files through the library. */
static int commit_files(const Round* r, LanceCommitIndexResult* result) {
    const uint8_t* ptrs[2] = {NULL, NULL};
    size_t lens[2] = {0, 0};
    for (int g = 0; g < 2; g++) ptrs[g] = read_whole_file(r->seg_file[g], &lens[g]);
    LanceDataset* ds = lance_dataset_open(r->uri, NULL, 0);
    LanceCommitIndexOptions o = {0};
    o.job_id = "kills";
    int rc = ptrs[0] && ptrs[1] && ds
                 ? lance_dataset_commit_index_segments_v2(ds, INDEX, "vec", ptrs, lens, 2, &o, result)
                 : -2;
    LanceErrorCode code = lance_last_error_code();
    lance_dataset_close(ds);
    for (int g = 0; g < 2; g++) free((void*)ptrs[g]);
    if (rc == -1 && code != LANCE_ERR_INCOMPLETE_SEGMENT) {
        const char* msg = lance_last_error_message();
        printf("    commit failed [%d]: %s\n", (int)code, msg ? msg : "");
        lance_free_string(msg);
    }
    return rc == -1 ? -(int)code - 100 : rc;
}

/* Whether a worker's output file is absent or whole. */
static int output_whole(Kind kind, const char* file, const char* uuid) {
    size_t len = 0;
    unsigned char* bytes = read_whole_file(file, &len);
    if (!bytes) return 1;
    int ok = 0;
    if (kind == TRAIN) {
        LanceVectorModel* m = NULL;
        LanceVectorModelInfo info;
        ok = lance_vector_model_parse(bytes, len, &m) == 0 && lance_vector_model_info(m, &info) == 0 &&
             info.num_partitions == PARTITIONS && info.dimension == DIM;
        lance_vector_model_free(m);
    } else {
        LanceIndexSegmentMetadata* m = NULL;
        uint8_t got[16], want[16];
        uint32_t fragment_ids[FRAGS];
        size_t n = 0;
        ok = lance_index_segment_metadata_parse(bytes, len, &m) == 0 &&
             lance_index_segment_metadata_uuid(m, got) == 0 && uuid_hex_parse(uuid, want) == 0 &&
             !memcmp(got, want, 16) && lance_index_segment_metadata_fragment_ids(m, fragment_ids, FRAGS, &n) == 0 &&
             n == 4 && fragment_ids[0] == 0 && fragment_ids[3] == 3;
        lance_index_segment_metadata_free(m);
    }
    free(bytes);
    return ok;
}

/* ---- figures ---- */

typedef struct {
    char stage[48];
    int kills;
} StageTally;

static StageTally stages[32];
static int kills, finished_first, commit_kills, commits_landed_under_kill, commits_cut_after_transaction, spill_entries;

/* The stage a process was in when killed: its last report, shortened. */
static void tally_kill(Kind kind, const Run* run) {
    char stage[48];
    if (!run->last_line[0]) snprintf(stage, sizeof stage, "%s: startup", kind_names[kind]);
    else
        snprintf(stage, sizeof stage, "%s: after '%.*s'", kind_names[kind],
                 (int)strcspn(run->last_line, "(.0123456789"), run->last_line);
    int i = 0;
    while (i < 32 && stages[i].stage[0] && strcmp(stages[i].stage, stage)) i++;
    if (i == 32) return;
    snprintf(stages[i].stage, sizeof stages[i].stage, "%s", stage);
    stages[i].kills++;
}

/* Counts what the children left in their TMPDIR, then empties it. */
static void sweep_spill(void) {
    int left = tu_dir_entries_print(spill_dir, "left in TMPDIR: ");
    if (left > 0) spill_entries += left;
    tu_remove_tree(spill_dir);
    mkdir(spill_dir, 0700);
}

/* ---- rounds ---- */

static void new_round(Round* r) {
    memset(r, 0, sizeof *r);
    snprintf(r->uri, sizeof r->uri, "%s/round%d.lance", dir, round_seq++);
    LanceDataset* ds = tu_write(r->uri, &data, 0, ROWS, LANCE_WRITE_CREATE, ROWS / FRAGS);
    CHECK(ds != NULL);
    lance_dataset_close(ds);
    snprintf(r->model, sizeof r->model, "%s", model_file);
}

static void end_round(Round* r) {
    tu_remove_tree(r->uri);
    sweep_spill();
}

/* One worker killed at (kind, trigger), the invariants, and the retry. */
static void worker_round(Kind kind, int trigger) {
    Round r;
    new_round(&r);
    /* A victim that finishes before its kill (the machine ran faster than
       measured) is checked all the same, and another one is started. */
    for (int attempt = 0; attempt < VICTIM_ATTEMPTS; attempt++) {
        char victim_uuid[UUID_HEX_DASHED_LEN + 1], victim_out[760];
        new_uuid(victim_uuid);
        snprintf(victim_out, sizeof victim_out, "%s/victim.bin", dir);
        unlink(victim_out);
        double delay = rng_unit() * remaining[kind][trigger];
        Run victim;
        run_kind(kind, &r, 0, victim_uuid, victim_out, trigger, delay, &victim);
        CHECK(victim.seen_at[trigger] > 0);
        if (victim.killed) {
            kills++;
            tally_kill(kind, &victim);
        } else {
            finished_first++;
            CHECK(exit_code(&victim) == 0); /* not killed in time: it must have succeeded */
            /* Aim within what this run took from then on. */
            if (victim.seen_at[trigger] > 0) remaining[kind][trigger] = victim.exited - victim.seen_at[trigger];
        }

        /* A worker never moves the dataset; its output is absent or whole. */
        check_untouched(&r);
        CHECK(output_whole(kind, victim_out, victim_uuid));
        if (!victim.killed) CHECK(exists(victim_out));
        /* Files left under the victim's UUID refuse a retry with that UUID
         * (a directory left empty does not: lance.h, "holds files"). */
        if (kind != TRAIN && holds_files(seg_dir(&r, victim_uuid))) check_retry_refused(&r, victim_uuid);
        /* The cleanup reclaims everything uncommitted. */
        CHECK(cleanup(&r) == 0);
        check_untouched(&r);
        if (victim.killed) break;
    }

    /* The retry: a killed trainer trains again; the workers build with
       fresh UUIDs; the coordinator commits. */
    if (kind == TRAIN) {
        Run again;
        snprintf(r.model, sizeof r.model, "%s/retrained.bin", dir);
        run_kind(TRAIN, &r, 0, NULL, r.model, -1, 0, &again);
        CHECK(exit_code(&again) == 0 && output_whole(TRAIN, r.model, NULL));
    }
    build_segment(&r, 0);
    build_segment(&r, 1);
    LanceCommitIndexResult result = {0, true};
    CHECK(commit_files(&r, &result) == 0);
    CHECK(result.version == 2 && !result.already_committed);
    check_committed(&r);
    CHECK(cleanup(&r) == 2);
    end_round(&r);
}

/* A coordinator killed during its commit, up to COMMIT_ATTEMPTS times. */
static void coordinator_round(int cleanup_first) {
    Round r;
    new_round(&r);
    build_segment(&r, 0);
    build_segment(&r, 1);
    int landed = 0;
    char transactions[760];
    snprintf(transactions, sizeof transactions, "%s/_transactions", r.uri);
    for (int attempt = 0; attempt < COMMIT_ATTEMPTS && !landed; attempt++) {
        int written_before = entries(transactions);
        Run run_result;
        /* Later attempts aim later: the commit itself comes last. */
        double span = remaining[COMMIT][0], from = span * (1.0 - 1.0 / (double)(1 << attempt));
        run_kind(COMMIT, &r, 0, NULL, NULL, 0, from + rng_unit() * (span - from), &run_result);
        if (run_result.killed) {
            commit_kills++;
        } else {
            CHECK(exit_code(&run_result) == 0);
            if (run_result.exited - run_result.started < span)
                remaining[COMMIT][0] = run_result.exited - run_result.started;
        }
        /* All or nothing. */
        LanceDataset* ds = lance_dataset_open(r.uri, NULL, 0);
        CHECK(ds != NULL);
        uint64_t v = lance_dataset_version(ds);
        lance_dataset_close(ds);
        CHECK(v == 1 || v == 2);
        landed = v == 2;
        if (landed) check_committed(&r);
        else check_untouched(&r);
        if (!run_result.killed) CHECK(landed);
        if (landed && run_result.killed) commits_landed_under_kill++;
        /* Killed between writing its transaction and the manifest. */
        if (!landed && entries(transactions) > written_before) commits_cut_after_transaction++;
    }

    LanceCommitIndexResult result = {0, false};
    if (cleanup_first) {
        /* A cleanup between the kill and the retry: it reclaims the
           segments of a commit that did not land. */
        int left = cleanup(&r);
        CHECK(left == (landed ? 2 : 0));
        int rc = commit_files(&r, &result);
        if (landed) {
            CHECK(rc == 0 && result.already_committed && result.version == 2);
        } else {
            CHECK(rc == -100 - LANCE_ERR_INCOMPLETE_SEGMENT);
            check_untouched(&r);
            build_segment(&r, 0);
            build_segment(&r, 1);
            CHECK(commit_files(&r, &result) == 0);
            CHECK(result.version == 2 && !result.already_committed);
        }
    } else {
        CHECK(commit_files(&r, &result) == 0);
        CHECK(result.version == 2 && result.already_committed == (landed != 0));
    }
    check_committed(&r);
    CHECK(cleanup(&r) == 2);

    /* A worker retried after the commit with a committed segment's UUID. */
    check_retry_refused(&r, r.uuid_text[0]);
    check_committed(&r);
    end_round(&r);
}

/* Unkilled runs of each command: every trigger line appears, and what
 * remains after it (the shorter of two runs, the first one warming the
 * caches) sets the range of the random delays. */
static void calibrate(void) {
    Round r;
    new_round(&r);
    Run result;
    char out[760];
    snprintf(out, sizeof out, "%s/calibration.bin", dir);
    for (int kind = 0; kind < COMMIT; kind++)
        for (int repeat = 0; repeat < 2; repeat++) {
            char uuid[UUID_HEX_DASHED_LEN + 1];
            new_uuid(uuid);
            run_kind((Kind)kind, &r, 0, uuid, out, -1, 0, &result);
            CHECK(exit_code(&result) == 0);
            for (int t = 0; t < trigger_count[kind]; t++) {
                CHECK(result.seen_at[t] > 0);
                double left = result.seen_at[t] > 0 ? result.exited - result.seen_at[t] : 0;
                if (!repeat || left < remaining[kind][t]) remaining[kind][t] = left;
            }
        }
    end_round(&r);
    for (int repeat = 0; repeat < 2; repeat++) {
        new_round(&r);
        build_segment(&r, 0);
        build_segment(&r, 1);
        run_kind(COMMIT, &r, 0, NULL, NULL, -1, 0, &result);
        CHECK(exit_code(&result) == 0);
        double took = result.exited - result.started;
        if (!repeat || took < remaining[COMMIT][0]) remaining[COMMIT][0] = took;
        check_committed(&r);
        end_round(&r);
    }
    for (int kind = 0; kind < KINDS; kind++) {
        printf("    %-14s", kind_names[kind]);
        for (int t = 0; t < trigger_count[kind]; t++)
            printf("  %s %.3f s", triggers[kind][t] ? triggers[kind][t] : "start:", remaining[kind][t]);
        printf("\n");
    }
}

static int passes = 3;

static void test_kills(void) {
    calibrate();
    for (int pass = 0; pass < passes; pass++) {
        for (int kind = 0; kind < COMMIT; kind++)
            for (int t = 0; t < trigger_count[kind]; t++) worker_round((Kind)kind, t);
        for (int c = 0; c < 4; c++) coordinator_round(c % 2);
    }
    printf("    worker kills: %d (%d more victims finished before their kill and were checked the same way)\n", kills,
           finished_first);
    for (int i = 0; i < 32 && stages[i].stage[0]; i++) printf("      %3d  %s\n", stages[i].kills, stages[i].stage);
    printf("    coordinator kills during commit: %d (%d after its transaction file was written and before the "
           "manifest, %d after the commit landed)\n",
           commit_kills, commits_cut_after_transaction, commits_landed_under_kill);
    printf("    left in TMPDIR after the rounds' later processes: %d entries (must be 0)\n", spill_entries);
    CHECK(spill_entries == 0);
}

/* What a worker killed in the middle of writing a segment file leaves:
 * the object store writes each file under a staging name, "<name>#<n>",
 * renamed into place when complete (the random kills above land there
 * rarely; this places the leftover exactly).  The directory holds a file:
 * a retry with that UUID is refused and the cleanup reclaims it. */
static void test_killed_mid_file(void) {
    Round r;
    new_round(&r);
    char uuid[UUID_HEX_DASHED_LEN + 1], path[900];
    new_uuid(uuid);
    snprintf(path, sizeof path, "%s/_indices", r.uri);
    mkdir(path, 0755);
    mkdir(seg_dir(&r, uuid), 0755);
    snprintf(path, sizeof path, "%s/index.idx#1", seg_dir(&r, uuid));
    CHECK(write_whole_file(path, "LANC", 4) == 0);
    check_retry_refused(&r, uuid);
    CHECK(cleanup(&r) == 0);
    CHECK(!exists(seg_dir(&r, uuid)));
    build_segment(&r, 0);
    build_segment(&r, 1);
    LanceCommitIndexResult result = {0, true};
    CHECK(commit_files(&r, &result) == 0 && result.version == 2);
    check_committed(&r);
    end_round(&r);
}

/* The children's environment: ours with TMPDIR pointing to spill_dir. */
static void make_child_env(void) {
    size_t n = 0;
    while (environ[n]) n++;
    child_env = calloc(n + 2, sizeof *child_env);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "TMPDIR=", 7) != 0) child_env[k++] = environ[i];
    static char tmpdir[720];
    snprintf(tmpdir, sizeof tmpdir, "TMPDIR=%s", spill_dir);
    child_env[k++] = tmpdir;
    child_env[k] = NULL;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_kills PATH-TO-lance-index [PASSES]\n");
        return 2;
    }
    tool = argv[1];
    const char* more = argc > 2 ? argv[2] : getenv("LANCE_KILL_PASSES");
    if (more && atoi(more) > 0) passes = atoi(more);
    const char* seed_text = getenv("LANCE_KILL_SEED");
    uint64_t seed = seed_text ? strtoull(seed_text, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    if (!seed) seed = 1;
    rng_state = seed;
    printf("test_kills: seed %llu (LANCE_KILL_SEED=%llu repeats it), %d pass(es)\n", (unsigned long long)seed,
           (unsigned long long)seed, passes);
    signal(SIGPIPE, SIG_IGN);

    data = tu_make_data(ROWS, DIM, 16, 0.5f, 23);
    dir = tu_temp_dir("kills");
    snprintf(spill_dir, sizeof spill_dir, "%s/tmp", dir);
    mkdir(spill_dir, 0700);
    make_child_env();
    /* The shared model every worker round uses. */
    snprintf(model_file, sizeof model_file, "%s/model.bin", dir);
    {
        char path[700];
        snprintf(path, sizeof path, "%s/model-source.lance", dir);
        LanceDataset* ds = tu_write(path, &data, 0, ROWS, LANCE_WRITE_CREATE, ROWS / FRAGS);
        LanceVectorIndexParams p = {0};
        p.index_type = LANCE_INDEX_IVF_FLAT;
        p.num_partitions = PARTITIONS;
        LanceVectorModel* model = NULL;
        uint8_t* bytes = NULL;
        size_t len = 0;
        CHECK_OK(lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &model));
        CHECK_OK(lance_vector_model_serialize(model, &bytes, &len));
        CHECK(write_whole_file(model_file, bytes, len) == 0);
        lance_free_bytes(bytes);
        lance_vector_model_free(model);
        lance_dataset_close(ds);
    }
    RUN(test_kills);
    RUN(test_killed_mid_file);
    tu_remove_tree(dir);
    free(dir);
    free(child_env);
    tu_free_data(&data);
    return tu_finish("test_kills");
}
