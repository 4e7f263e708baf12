/* coordinator: the whole distributed index build, across processes.
 *
 *   lance_coordinator [--rows N] [--dim D] [--fragments F] [--workers W]
 *                     [--parallel P] [--index IVF_PQ|IVF_FLAT] [--partitions K]
 *                     [--check] [--compare] [--kill-first] [--one-node-training]
 *                     [--uri URI] [--storage-option key=value]...
 *
 * 1. writes a dataset of N clustered vectors in F fragments (a stand-in for
 *    the engine's table);
 * 2. plans W fragment groups of balanced row counts and pre-assigns each a
 *    segment UUID;
 * 3. trains one shared model (IVF centroids, and the PQ codebook) across
 *    the W workers (a `lance_worker --train` process per group, in rounds
 *    of requests and statistics; --one-node-training: in this process) and
 *    writes it to a file every worker reads;
 * 4. starts W worker processes (fork + exec of lance_worker), at most P at a
 *    time, each pinned to the planned dataset version; a worker writes its
 *    segment's metadata bytes to a file;
 * 5. commits the W segments as one index in one new version (with a job id,
 *    so a retry of this step would be answered idempotently);
 * 6. checks the index covers every fragment and runs k-NN queries.
 * --check: IVF_FLAT probing every partition must return exactly the
 *          brute-force top 10 (exit status 1 otherwise).
 * --compare: also builds the same index in one process (one-shot) and
 *          prints both build times and recalls side by side.
 * --kill-first: first starts worker 0 alone and sends it SIGTERM as soon as
 *          it reports its "shuffle" stage (it writes by then); the worker
 *          cancels its build, removes its partial segment and exits with
 *          status 3; the coordinator checks the segment's directory is
 *          gone (local datasets only) and gives the retry a fresh UUID.
 * --uri URI: write the dataset there (it must not exist yet; default: a
 *          temporary directory), for example s3://bucket/vectors.lance
 *          (every object store is in the default build).  Its storage
 *          options come from LANCE_STORAGE_OPTIONS ("key=value,...") and
 *          from --storage-option key=value (repeated); the workers get the
 *          same.
 *          The model and the segment files stay in a local temporary
 *          directory: the dataset is the only thing on the URI. */
#define _POSIX_C_SOURCE 200809L /* fdopen, kill, readlink */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "demo_data.h"
#include "die.h"
#include "files.h"
#include "id_list.h"
#include "lance/lance.h"
#include "measure.h"
#include "storage_options.h"
#include "temp_dir.h"
#include "training_rounds.h"
#include "uuid_hex.h"

/* A fresh segment UUID, and the hex text a worker's command line takes. */
static void assign_uuid(uint8_t uuid[16], char hex[UUID_HEX_LEN + 1]) {
    if (uuid_random_v4(uuid) != 0) {
        perror("coordinator: cannot read /dev/urandom");
        exit(1);
    }
    uuid_hex_format(uuid, hex);
}

/* The worker program: lance_worker beside this executable. */
static void worker_path(char* out, size_t cap) {
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        snprintf(out, cap, "lance_worker");
        return;
    }
    self[n] = 0;
    char* slash = strrchr(self, '/');
    if (slash) *slash = 0;
    snprintf(out, cap, "%s/lance_worker", self);
}

typedef struct {
    pid_t pid;
    uint8_t uuid[16];
    char uuid_hex[UUID_HEX_LEN + 1];
    char out[700];
    char* fragment_ids; /* "0,1,2": the worker's fragment list, any length */
} Worker;

/* The storage options, and the same as "--storage-option" "key=value"
 * arguments for the workers' command lines (storage.count of them). */
static StorageOptions storage;
static char** storage_args;

static pid_t spawn(const char* program, const char* uri, uint64_t version, const char* model_file, Worker* w,
                   const char* type, int stderr_fd) {
    char version_text[32];
    snprintf(version_text, sizeof version_text, "%llu", (unsigned long long)version);
    pid_t pid = fork();
    if (pid == 0) {
        if (stderr_fd >= 0) dup2(stderr_fd, 2);
        size_t n = 0, extra = storage.count; /* one "--storage-option" + one "k=v" per pair */
        char** args = calloc(9 + extra, sizeof *args);
        if (!args) _exit(127);
        const char* fixed[] = {program, uri, version_text, model_file, w->uuid_hex, w->out, w->fragment_ids, type};
        for (size_t i = 0; i < 8; i++) args[n++] = (char*)fixed[i];
        for (size_t i = 0; i < extra; i++) args[n++] = storage_args[i];
        execv(program, args);
        fprintf(stderr, "coordinator: cannot exec %s: %s\n", program, strerror(errno));
        _exit(127);
    }
    return pid;
}

/* The shared model trained across the workers: one `lance_worker --train`
 * per group, driven in rounds (common/training_rounds.h).  Returns the
 * rounds; dies on failure. */
static uint32_t train_across(const char* program, const char* uri, uint64_t version, const Worker* w, int workers,
                             const LanceVectorIndexParams* p, const char* dir, LanceVectorModel** out_model) {
    char version_text[32];
    snprintf(version_text, sizeof version_text, "%llu", (unsigned long long)version);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int cores = online > 0 ? (int)online : 1;
    TrainingProcess* procs = calloc((size_t)workers, sizeof *procs);
    char** args = calloc(6 + storage.count, sizeof *args);
    if (!procs || !args) die("out of memory");
    for (int i = 0; i < workers; i++) {
        size_t n = 0;
        const char* fixed[] = {program, "--train", uri, version_text, w[i].fragment_ids};
        for (size_t k = 0; k < 5; k++) args[n++] = (char*)fixed[k];
        for (size_t k = 0; k < storage.count; k++) args[n++] = storage_args[k];
        args[n] = NULL;
        /* One core each, as many to a core as it takes (they all compute at once). */
        if (training_process_start(args, i % cores, &procs[i]) != 0) die_errno("starting a training worker");
    }
    LanceVectorTraining* t = NULL;
    if (lance_vector_training_new("vec", p, 1, &t) != 0) die("training");
    if (training_run(t, procs, (size_t)workers, dir, NULL) != 0) exit(1);
    LanceVectorTrainingInfo info;
    if (lance_vector_training_info(t, &info) != 0 || lance_vector_training_model(t, out_model) != 0)
        die("training model");
    if (training_processes_stop(procs, (size_t)workers) != 0) {
        fprintf(stderr, "coordinator: a training worker did not exit cleanly\n");
        exit(1);
    }
    lance_vector_training_free(t);
    free(args);
    free(procs);
    return info.rounds;
}

/* Recall@10 over 50 queries; dies on error. */
static double recall(const LanceDataset* ds, const DemoData* data, uint32_t nprobes, int exact, int* mismatches) {
    double r = demo_data_recall(ds, data, 50, nprobes, exact ? 0 : 5, mismatches);
    if (r < 0) die("query");
    return r;
}

/* The value of a numeric option; exits with status 2 when it is not one. */
static int count_option(const char* name, const char* text) {
    uint64_t v = 0;
    if (decimal_parse(text, INT_MAX, &v) != 0) {
        fprintf(stderr, "coordinator: %s \"%s\" is not a number\n", name, text);
        exit(2);
    }
    return (int)v;
}

int main(int argc, char** argv) {
    int64_t rows = 100000;
    int dim = 128, fragments = 16, workers = 4, parallel = 2, partitions = 64, check = 0, compare = 0, kill_first = 0,
        one_node = 0;
    const char* type_name = "IVF_PQ";
    const char* uri_given = NULL;
    if (storage_options_init(&storage, &argc, argv, "coordinator") != 0) return 2;
    if (!(storage_args = storage_options_to_args(&storage))) {
        fprintf(stderr, "coordinator: out of memory\n");
        return 1;
    }
    const char* const* opts = storage_options_array(&storage);
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--rows")) rows = count_option(a, v), i++;
        else if (!strcmp(a, "--dim")) dim = count_option(a, v), i++;
        else if (!strcmp(a, "--fragments")) fragments = count_option(a, v), i++;
        else if (!strcmp(a, "--workers")) workers = count_option(a, v), i++;
        else if (!strcmp(a, "--parallel")) parallel = count_option(a, v), i++;
        else if (!strcmp(a, "--partitions")) partitions = count_option(a, v), i++;
        else if (!strcmp(a, "--index")) type_name = v, i++;
        else if (!strcmp(a, "--uri")) uri_given = v, i++;
        else if (!strcmp(a, "--check")) check = 1;
        else if (!strcmp(a, "--compare")) compare = 1;
        else if (!strcmp(a, "--kill-first")) kill_first = 1;
        else if (!strcmp(a, "--one-node-training")) one_node = 1;
        else {
            fprintf(stderr, "coordinator: unknown argument %s\n", a);
            return 2;
        }
    }
    int flat = strcmp(type_name, "IVF_FLAT") == 0;
    if (workers < 1 || parallel < 1 || fragments < workers || dim % 16 != 0) {
        fprintf(stderr, "coordinator: need workers >= 1, parallel >= 1, fragments >= workers, dim %% 16 == 0\n");
        return 2;
    }
    printf("lance-c %s (Lance core %s): distributed %s build, %d workers (%d at a time)\n", lance_version(),
           LANCE_CORE_VERSION_STRING, type_name, workers, parallel);

    char* dir = temp_dir_create("coordinator");
    if (!dir) die_errno("creating a temporary directory");
    char uri[600], model_file[700];
    if (uri_given) snprintf(uri, sizeof uri, "%s", uri_given);
    else snprintf(uri, sizeof uri, "%s/vectors.lance", dir);
    int local = strstr(uri, "://") == NULL || strncmp(uri, "file://", 7) == 0;
    snprintf(model_file, sizeof model_file, "%s/model.bin", dir);
    DemoData data;
    if (demo_data_make(&data, rows, dim, 64, 2.0f, 1) != 0) die_errno("generating the vectors");
    LanceDataset* written =
        demo_data_write(uri, &data, 0, rows, LANCE_WRITE_CREATE, (uint64_t)((rows + fragments - 1) / fragments), opts);
    if (!written) die("write");
    lance_dataset_close(written);
    LanceDataset* ds = lance_dataset_open(uri, opts, 0);
    if (!ds) die("open");
    printf("dataset: %lld rows x %d dims, %llu fragments, version %llu\n", (long long)rows, dim,
           (unsigned long long)lance_dataset_fragment_count(ds), (unsigned long long)lance_dataset_version(ds));

    /* 2. Plan the groups and their UUIDs. */
    LanceFragmentPlan* plan = NULL;
    if (lance_dataset_plan_fragment_groups(ds, (size_t)workers, &plan) != 0) die("plan");
    uint64_t version = lance_fragment_plan_dataset_version(plan);
    Worker* w = calloc((size_t)workers, sizeof *w);
    for (int i = 0; i < workers; i++) {
        const uint32_t* ids = NULL;
        size_t n = 0;
        uint64_t group_rows = 0;
        if (lance_fragment_plan_group(plan, (size_t)i, &ids, &n, &group_rows) != 0) die("plan group");
        w[i].fragment_ids = id_list_format(ids, n);
        if (!w[i].fragment_ids) {
            fprintf(stderr, "coordinator: out of memory\n");
            return 1;
        }
        assign_uuid(w[i].uuid, w[i].uuid_hex);
        snprintf(w[i].out, sizeof w[i].out, "%s/segment-%d.bin", dir, i);
        printf("  worker %d: fragments [%s] (%llu rows), segment %s\n", i, w[i].fragment_ids,
               (unsigned long long)group_rows, w[i].uuid_hex);
    }
    lance_fragment_plan_free(plan);

    /* 3. The shared model: trained by the workers together (one
     *    `lance_worker --train` process per group, over the group's
     *    fragments, all at once), or with --one-node-training here. */
    char program[1100];
    worker_path(program, sizeof program);
    double t0 = monotonic_seconds();
    LanceVectorIndexParams p = {0};
    p.index_type = flat ? LANCE_INDEX_IVF_FLAT : LANCE_INDEX_IVF_PQ;
    p.num_partitions = (uint32_t)partitions;
    p.num_sub_vectors = (uint32_t)(dim / 8 < 16 ? dim / 8 : 16);
    LanceVectorModel* model = NULL;
    uint32_t rounds = 0;
    if (one_node) {
        if (lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &model) != 0) die("train");
    } else {
        rounds = train_across(program, uri, version, w, workers, &p, dir, &model);
    }
    uint8_t* model_bytes = NULL;
    size_t model_len = 0;
    if (lance_vector_model_serialize(model, &model_bytes, &model_len) != 0) die("serialize model");
    if (write_whole_file(model_file, model_bytes, model_len) != 0) {
        perror("coordinator: cannot write the model");
        return 1;
    }
    lance_free_bytes(model_bytes);
    const char* fingerprint = lance_vector_model_fingerprint(model);
    double t1 = monotonic_seconds();
    if (one_node)
        printf("trained the shared model (%d partitions) in this process: %.2f s, fingerprint %.16s...\n", partitions,
               t1 - t0, fingerprint);
    else
        printf("trained the shared model (%d partitions) across the %d workers in %u rounds: %.2f s, "
               "fingerprint %.16s...\n",
               partitions, workers, rounds, t1 - t0, fingerprint);

    /* 4. Worker processes, at most `parallel` at a time. */
    int bad = 0;
    if (kill_first) {
        int fds[2];
        if (pipe(fds) != 0) die("pipe");
        pid_t pid = spawn(program, uri, version, model_file, &w[0], type_name, fds[1]);
        close(fds[1]);
        FILE* err = fdopen(fds[0], "r");
        char line[512];
        int sent = 0;
        while (fgets(line, sizeof line, err)) {
            if (!sent && strstr(line, ": shuffle: started")) {
                kill(pid, SIGTERM);
                sent = 1;
            }
        }
        fclose(err);
        int status = 0;
        waitpid(pid, &status, 0);
        char dashed[UUID_HEX_DASHED_LEN + 1], seg_dir[800];
        uuid_hex_format_dashed(w[0].uuid, dashed);
        snprintf(seg_dir, sizeof seg_dir, "%s/_indices/%s", uri, dashed);
        struct stat st;
        int left = local && stat(seg_dir, &st) == 0;
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        printf("killed worker 0 during its shuffle: exit status %d (3 = cancelled), segment directory %s\n", code,
               !local ? "not checked (object storage)"
               : left ? "LEFT BEHIND"
                      : "removed");
        if (!sent || code != 3 || left) bad = 1;
        /* The retry is a new attempt with a new segment UUID. */
        assign_uuid(w[0].uuid, w[0].uuid_hex);
        unlink(w[0].out);
    }
    int next = 0, running = 0, failed = 0;
    while (next < workers || running > 0) {
        if (next < workers && running < parallel) {
            w[next].pid = spawn(program, uri, version, model_file, &w[next], type_name, -1);
            if (w[next].pid < 0) die("fork");
            next++;
            running++;
            continue;
        }
        int status = 0;
        pid_t done = wait(&status);
        if (done < 0) break;
        running--;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "coordinator: worker process %d failed (status %d)\n", (int)done, status);
            failed++;
        }
    }
    double t2 = monotonic_seconds();
    if (failed) {
        fprintf(stderr, "coordinator: %d workers failed; nothing committed\n", failed);
        return 1;
    }
    printf("built %d segments in worker processes: %.2f s\n", workers, t2 - t1);

    /* 5. Commit them as one index. */
    const uint8_t** ptrs = calloc((size_t)workers, sizeof *ptrs);
    size_t* lens = calloc((size_t)workers, sizeof *lens);
    for (int i = 0; i < workers; i++) {
        ptrs[i] = read_whole_file(w[i].out, &lens[i]);
        if (!ptrs[i]) die("read segment");
    }
    LanceCommitIndexOptions options = {0};
    options.job_id = "coordinator-example";
    options.attempt_id = "1";
    LanceCommitIndexResult result = {0};
    if (lance_dataset_commit_index_segments_v2(ds, "vec_idx", "vec", ptrs, lens, (size_t)workers, &options, &result) !=
        0)
        die("commit");
    double t3 = monotonic_seconds();
    printf("committed %d segments as index 'vec_idx' in version %llu: %.3f s\n", workers,
           (unsigned long long)result.version, t3 - t2);
    /* A retry of the same commit (as after a lost reply) changes nothing. */
    LanceCommitIndexResult retry = {0};
    options.attempt_id = "2";
    if (lance_dataset_commit_index_segments_v2(ds, "vec_idx", "vec", ptrs, lens, (size_t)workers, &options, &retry) !=
        0)
        die("retry commit");
    printf("retried the commit: already committed = %s, version %llu\n", retry.already_committed ? "yes" : "no",
           (unsigned long long)retry.version);
    bad |= !retry.already_committed || retry.version != result.version;

    /* 6. Coverage and queries. */
    const char* coverage = lance_dataset_index_coverage_json(ds, "vec_idx");
    if (!coverage) die("coverage");
    printf("coverage: %s\n", coverage);
    bad |= strstr(coverage, "\"unindexed_fragments\":[]") == NULL;
    lance_free_string(coverage);
    bad |= lance_dataset_index_segment_count(ds, "vec_idx") != (uint64_t)workers;
    int mismatches = 0;
    uint32_t nprobes = flat && check ? (uint32_t)partitions : 16;
    double r_seg = recall(ds, &data, nprobes, flat, &mismatches);
    printf("k-NN through the %d-segment index (nprobes %u%s): recall@10 = %.3f, %d/50 queries differ from "
           "brute force\n",
           workers, nprobes, flat ? "" : ", refine 5", r_seg, mismatches);
    if (check && flat && mismatches != 0) bad = 1;

    if (compare) {
        double c0 = monotonic_seconds();
        if (lance_dataset_create_vector_index(ds, "vec", "one_shot_idx", &p, false) != 0) die("one-shot build");
        double c1 = monotonic_seconds();
        if (lance_dataset_drop_index(ds, "vec_idx") != 0) die("drop");
        double r_one = recall(ds, &data, nprobes, flat, &mismatches);
        printf("one-shot build in this process: %.2f s; distributed (train + workers + commit): %.2f s; "
               "ratio distributed / one-shot = %.2f\n",
               c1 - c0, t3 - t0, (t3 - t0) / (c1 - c0));
        printf("recall@10: one-shot %.3f, %d segments %.3f, difference %+.3f\n", r_one, workers, r_seg, r_seg - r_one);
    }

    for (int i = 0; i < workers; i++) {
        free((void*)ptrs[i]);
        free(w[i].fragment_ids);
    }
    free(ptrs);
    free(lens);
    free(w);
    lance_free_string(fingerprint);
    lance_vector_model_free(model);
    lance_dataset_close(ds);
    demo_data_free(&data);
    remove_tree(dir);
    free(dir);
    storage_options_args_free(storage_args);
    storage_options_free(&storage);
    if (bad) fprintf(stderr, "coordinator: a check failed\n");
    return bad;
}
