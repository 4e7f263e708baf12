/* lance-index train-start, train-worker and train-reduce: the distributed
 * training's rounds from a shell. */
#include "lance_index.h"

static const char* phase_name(LanceVectorTrainingPhase phase) {
    switch (phase) {
    case LANCE_TRAINING_IVF_INIT: return "ivf_init";
    case LANCE_TRAINING_IVF: return "ivf";
    case LANCE_TRAINING_PQ_INIT: return "pq_init";
    case LANCE_TRAINING_PQ: return "pq";
    case LANCE_TRAINING_DONE: return "done";
    }
    return "unknown";
}

/* Prints where a training is, as one JSON line. */
static int print_training(const LanceVectorTraining* t) {
    LanceVectorTrainingInfo i;
    if (lance_vector_training_info(t, &i) != 0) return lib_error("training info");
    printf("{\"phase\": \"%s\", \"done\": %s, \"rounds\": %u, \"ivf_iterations\": %u, \"pq_iterations\": %u, "
           "\"dimension\": %u, \"ivf_sample_rows\": %llu, \"pq_sample_rows\": %llu, \"ivf_loss\": %.17g, "
           "\"pq_loss\": %.17g}\n",
           phase_name(i.phase), i.phase == LANCE_TRAINING_DONE ? "true" : "false", i.rounds, i.ivf_iterations,
           i.pq_iterations, i.dimension, (unsigned long long)i.ivf_sample_rows, (unsigned long long)i.pq_sample_rows,
           i.ivf_loss, i.pq_loss);
    return 0;
}

/* Writes the training's next request to `out`, or its model once done. */
static int write_training(const LanceVectorTraining* t, const char* out) {
    LanceVectorTrainingInfo i;
    if (lance_vector_training_info(t, &i) != 0) return lib_error("training info");
    uint8_t* bytes = NULL;
    size_t len = 0;
    LanceVectorModel* model = NULL;
    int rc = 0;
    if (i.phase != LANCE_TRAINING_DONE) {
        if (lance_vector_training_request(t, &bytes, &len) != 0) rc = lib_error("training request");
    } else if (lance_vector_training_model(t, &model) != 0) {
        rc = lib_error("training model");
    } else if (lance_vector_model_serialize(model, &bytes, &len) != 0) {
        rc = lib_error("serialize");
    }
    if (rc == 0) rc = write_output(out, bytes, len);
    if (rc == 0) rc = print_training(t);
    lance_free_bytes(bytes);
    lance_vector_model_free(model);
    return rc;
}

static int cmd_train_start(const Args* a) {
    const char* column = arg(a, "--column");
    const char* out = arg(a, "-o");
    if (!column || !out) return usage("train-start needs --column and -o");
    LanceVectorIndexParams p;
    int rc = vector_params(a, &p);
    if (rc) return rc;
    const char* target = arg(a, "--target-partition-size");
    if ((a->npos == 1) != (target && !p.num_partitions))
        return usage(
            "train-start takes a URI only to count --target-partition-size's partitions (without --partitions)");
    if (target) {
        long long rows = number(target);
        if (rows < 1 || rows > UINT32_MAX) return usage("--target-partition-size must be a number of rows");
        LanceDataset* ds = NULL;
        if (!p.num_partitions) {
            if ((rc = open_dataset(a->pos[0], arg(a, "--version"), &ds)) != 0) return rc;
            rc = lance_dataset_recommended_num_partitions(ds, p.index_type, (uint32_t)rows, NULL, 0, &p.num_partitions);
            lance_dataset_close(ds);
            if (rc != 0) return lib_error("train-start");
        }
    }
    const char* seed_text = arg(a, "--seed");
    uint64_t seed = 0;
    if (seed_text && decimal_parse(seed_text, UINT64_MAX, &seed) != 0) return usage("--seed must be a number");
    LanceVectorTraining* t = NULL;
    if (lance_vector_training_new(column, &p, seed, &t) != 0) return lib_error("train-start");
    rc = write_training(t, out);
    lance_vector_training_free(t);
    return rc;
}

static const Option train_start_options[] = {
    VECTOR_OPTIONS,   {"--column", 1}, {"--seed", 1}, {"--target-partition-size", 1},
    {"--version", 1}, {"-o", 1},       {NULL, 0}};
OPTIONS_FIT(train_start_options);

const Command train_start_command = {
    "train-start",
    cmd_train_start,
    "--column C -o REQUEST [options]",
    "the shared model, trained by",
    "lance-index train-start [URI --target-partition-size R [--version V]] --column C -o REQUEST\n"
    "        [--seed S] [--type IVF_PQ] [--metric l2|cosine|dot] [--partitions K]\n"
    "        [--sub-vectors M] [--bits B] [--iterations I] [--sample-rate S]\n"
    "  Starts a distributed training (no dataset needed): writes the first round's request\n"
    "  to REQUEST and prints where the training is as JSON.  Send the request to every\n"
    "  train-worker, then train-reduce their statistics.  The same --seed over workers with\n"
    "  the same fragments trains the same model.  Without --partitions, URI and\n"
    "  --target-partition-size give the count: the dataset's rows / R, 1..4096.",
    train_start_options,
    1};

static int cmd_train_worker(const Args* a) {
    if (a->npos != 1) return usage("train-worker needs URI");
    uint32_t* fragment_ids = NULL;
    size_t fragment_count = 0;
    const char* ft = arg(a, "--fragments");
    int rc = 0;
    if (ft && (rc = fragment_list("--fragments", ft, &fragment_ids, &fragment_count)) != 0) return rc;
    LanceDataset* ds = NULL;
    LanceVectorTrainingWorker* w = NULL;
    if ((rc = open_dataset(a->pos[0], arg(a, "--version"), &ds)) != 0) goto out;
    if (lance_vector_training_worker_new(ds, fragment_ids, fragment_count, &w) != 0) {
        rc = lib_error("train-worker");
        goto out;
    }
    rc = training_serve(w, stdin, stdout, exit_status, EXIT_USAGE);
out:
    lance_vector_training_worker_free(w);
    lance_dataset_close(ds);
    free(fragment_ids);
    return rc;
}

static const Option train_worker_options[] = {{"--fragments", 1}, {"--version", 1}, {NULL, 0}};
OPTIONS_FIT(train_worker_options);

const Command train_worker_command = {
    "train-worker",
    cmd_train_worker,
    "URI [--fragments F]",
    "the workers together: rounds of",
    "lance-index train-worker URI [--fragments 0,1,...] [--version V]\n"
    "  A distributed training's worker over some fragments (all without --fragments).\n"
    "  Reads lines \"REQUEST STATS\" (two file paths) from stdin; for each, answers the\n"
    "  request with this worker's statistics in STATS and prints \"ok\", or prints\n"
    "  \"error EXIT MESSAGE\" (EXIT as the exit status table) and goes on.  Ends at the end\n"
    "  of input.  It keeps its sample between lines: keep one running for the whole\n"
    "  training (a new one over the same fragments can take over any round).\n"
    "  SIGINT or SIGTERM during a round cancels it: \"error 20 ...\", exit status 20.",
    train_worker_options,
    1};

/* The most statistics files one train-reduce takes. */
enum { MAX_STATS = 4096 };

static int cmd_train_reduce(const Args* a) {
    const char* out = arg(a, "-o");
    if (a->npos < 2 || !out) return usage("train-reduce needs REQUEST, the statistics files and -o");
    size_t len = 0;
    uint8_t* request = read_whole_file(a->pos[0], &len);
    if (!request) return usage("cannot read %s: %s", a->pos[0], strerror(errno));
    LanceVectorTraining* t = NULL;
    const uint8_t** ptrs = NULL;
    size_t* lens = NULL;
    size_t n = (size_t)(a->npos - 1);
    int rc = 0;
    if (lance_vector_training_resume(request, len, &t) != 0) {
        rc = lib_error("train-reduce");
    } else if ((rc = read_segments(a->pos + 1, n, &ptrs, &lens)) == 0) {
        if (lance_vector_training_reduce(t, ptrs, lens, n) != 0) rc = lib_error("train-reduce");
        else rc = write_training(t, out);
    }
    if (ptrs) free_segments(ptrs, lens, n);
    lance_vector_training_free(t);
    free(request);
    return rc;
}

/* One round of train-coordinator: the statistics files named on `line`
 * reduced into `t`, the next request (or the model) written to `path`.
 * Prints the training's JSON line, or "error EXIT MESSAGE". */
static void coordinate_round(LanceVectorTraining* t, char* line, const char* path) {
    const char* paths[MAX_STATS];
    size_t n = 0;
    char* save = NULL;
    for (char* tok = strtok_r(line, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == MAX_STATS) {
            printf("error %d more than %d statistics files on one line\n", EXIT_USAGE, MAX_STATS);
            return;
        }
        paths[n++] = tok;
    }
    if (n == 0) {
        printf("error %d expected a line of statistics files\n", EXIT_USAGE);
        return;
    }
    const uint8_t** ptrs = NULL;
    size_t* lens = NULL;
    if (read_segments(paths, n, &ptrs, &lens) != 0) {
        printf("error %d cannot read a statistics file of the line (stderr names it)\n", EXIT_USAGE);
    } else if (lance_vector_training_reduce(t, ptrs, lens, n) != 0) {
        LanceErrorCode code = lance_last_error_code();
        const char* message = lance_last_error_message();
        printf("error %d %s\n", exit_status(code), message ? message : "");
        lance_free_string(message);
    } else if (write_training(t, path) != 0) {
        printf("error %d cannot write the next request to %s\n", EXIT_USAGE, path);
    }
    free_segments(ptrs, lens, n);
}

static int cmd_train_coordinator(const Args* a) {
    if (a->npos != 1) return usage("train-coordinator needs REQUEST");
    const char* path = a->pos[0];
    size_t len = 0;
    uint8_t* request = read_whole_file(path, &len);
    if (!request) return usage("cannot read %s: %s", path, strerror(errno));
    LanceVectorTraining* t = NULL;
    int rc = lance_vector_training_resume(request, len, &t) != 0 ? lib_error("train-coordinator") : 0;
    free(request);
    char* line = NULL;
    size_t cap = 0;
    while (rc == 0 && getline(&line, &cap, stdin) > 0) {
        coordinate_round(t, line, path);
        fflush(stdout);
    }
    free(line);
    lance_vector_training_free(t);
    return rc;
}

static const Option train_coordinator_options[] = {{NULL, 0}};
OPTIONS_FIT(train_coordinator_options);

const Command train_coordinator_command = {
    "train-coordinator",
    cmd_train_coordinator,
    "REQUEST",
    "train-reduce for a whole training",
    "lance-index train-coordinator REQUEST\n"
    "  The coordinator's side of a distributed training in one process, for the whole\n"
    "  training (train-reduce runs one process per round): starts from the request file\n"
    "  REQUEST (train-start's), then reads lines of statistics files (paths separated by\n"
    "  spaces: every worker's statistics of one round) from stdin.  For each line it\n"
    "  reduces the round, writes the next request to REQUEST, or the model once done, and\n"
    "  prints where the training is as JSON (train-reduce's line); or it prints\n"
    "  \"error EXIT MESSAGE\" (EXIT as the exit status table), the training unchanged, and\n"
    "  goes on.  Ends at the end of input.",
    train_coordinator_options,
    1};

static const Option train_reduce_options[] = {{"-o", 1}, {NULL, 0}};
OPTIONS_FIT(train_reduce_options);

const Command train_reduce_command = {
    "train-reduce",
    cmd_train_reduce,
    "REQUEST STATS... -o OUT",
    "requests and statistics",
    "lance-index train-reduce REQUEST STATS... -o OUT\n"
    "  Reduces one round: every worker's statistics for REQUEST.  Writes the next request\n"
    "  to OUT or, when the training is done, the model (as lance-index train writes it,\n"
    "  for build --model), and prints where the training is as JSON.  Statistics of\n"
    "  another request exit 25, two covering one fragment 23, a worker's missing 11.",
    train_reduce_options,
    1 + MAX_STATS};
