/* lance-index train and build: a shared model, one segment. */
#include "lance_index.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

/* ---- training has no progress events: show the time it has taken ---- */

static atomic_int training_done;
static double training_started;

static void* show_elapsed(void* arg) {
    (void)arg;
    while (!atomic_load(&training_done)) {
        fprintf(stderr, "\rtraining the shared model: %.1f s", monotonic_seconds() - training_started);
        struct timespec pause = {0, 200 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    fprintf(stderr, "\r%50s\r", "");
    return NULL;
}

static int cmd_train(const Args* a) {
    const char* column = arg(a, "--column");
    const char* out = arg(a, "-o");
    if (a->npos != 1 || !column || !out) return usage("train needs URI, --column and -o");
    LanceVectorIndexParams p;
    int rc = vector_params(a, &p);
    if (rc) return rc;
    LanceVectorTrainingOptions to;
    int with_options = 0;
    if ((rc = training_options(a, &to, &with_options)) != 0) return rc;
    uint32_t* sample = NULL;
    size_t nsample = 0;
    const char* sf = arg(a, "--sample-fragments");
    if (sf && (rc = fragment_list("--sample-fragments", sf, &sample, &nsample)) != 0) return rc;
    LanceDataset* ds = NULL;
    LanceVectorModel* model = NULL;
    uint8_t* bytes = NULL;
    size_t len = 0;
    const char* fingerprint = NULL;
    pthread_t ticker;
    int ticking = !quiet && isatty(2);
    double t0 = 0;
    if ((rc = open_dataset(a->pos[0], arg(a, "--version"), &ds)) != 0) goto done;
    t0 = monotonic_seconds();
    training_started = t0;
    if (ticking && pthread_create(&ticker, NULL, show_elapsed, NULL) != 0) ticking = 0;
    if (!ticking && !quiet) fprintf(stderr, "training the shared model...\n");
    LanceVectorModelTrainOptions options = {.training = with_options ? &to : NULL};
    int trained = lance_vector_model_train(ds, column, &p, sample, nsample, &options, &model);
    if (ticking) {
        atomic_store(&training_done, 1);
        pthread_join(ticker, NULL);
    }
    if (trained != 0) {
        rc = lib_error("train");
    } else if (lance_vector_model_serialize(model, &bytes, &len) != 0) {
        rc = lib_error("serialize");
    } else if (!(fingerprint = lance_vector_model_fingerprint(model))) {
        rc = lib_error("fingerprint");
    } else if ((rc = write_output(out, bytes, len)) == 0) {
        if (!quiet) fprintf(stderr, "trained in %.2f s\n", monotonic_seconds() - t0);
        printf("%s\n", fingerprint);
    }
done:
    lance_free_string(fingerprint);
    lance_free_bytes(bytes);
    lance_vector_model_free(model);
    lance_dataset_close(ds);
    free(sample);
    return rc;
}

static const Option train_options[] = {VECTOR_OPTIONS,   TRAINING_OPTIONS, {"--column", 1}, {"--sample-fragments", 1},
                                       {"--version", 1}, {"--quiet", 0},   {"-o", 1},       {NULL, 0}};
OPTIONS_FIT(train_options);

const Command train_command = {
    "train",
    cmd_train,
    "URI --column C -o MODEL [options]",
    "the shared model",
    "lance-index train URI --column C -o MODEL [--type IVF_PQ] [--metric l2|cosine|dot]\n"
    "        [--partitions K] [--sub-vectors M] [--bits B] [--iterations I] [--sample-rate S]\n"
    "        [--sample-fragments 0,1,...] [--version V] [--quiet]\n"
    "        [--target-partition-size R] [--streaming-sample-rate S] [--streaming-coreset-rate C]\n"
    "        [--streaming-refine-passes P] [--seed N]\n"
    "  Trains the shared model (IVF centroids, and the PQ codebook for the PQ types) and\n"
    "  writes it, serialized, to MODEL.  Prints the model's fingerprint.\n"
    "  The training options are the core's (LanceVectorTrainingOptions): without --partitions,\n"
    "  --target-partition-size R gives rows / R partitions (default: the type's); the\n"
    "  --streaming-* options train with streaming k-means; --seed N makes the training\n"
    "  reproducible (the same N, data and options: the same fingerprint).",
    train_options,
    1};

/* The model in `path` for a build: parsed, its settings filling what the
 * command line left open (model_settings()).  Returns 0 or an exit status. */
int build_model(const char* path, const char* type_given, int metric_given, LanceVectorIndexParams* p,
                LanceVectorModel** out) {
    size_t len = 0;
    unsigned char* bytes = read_whole_file(path, &len);
    if (!bytes) return usage("cannot read %s: %s", path, strerror(errno));
    int parsed = lance_vector_model_parse(bytes, len, out);
    free(bytes);
    if (parsed != 0) return lib_error("reading the model");
    return model_settings(*out, path, type_given, metric_given, p);
}

/* A model's settings filling what the command line left open.  Without
 * --type the model decides the type: the one it was trained for, or, for a
 * model that records none (made from Arrow arrays, or by lance-c before
 * 0.4), IVF_PQ with a PQ codebook and IVF_FLAT without.  A --type the model
 * (`path`, as messages name it) cannot build is a usage error naming both.
 * Returns 0 or an exit status. */
int model_settings(const LanceVectorModel* model, const char* path, const char* type_given, int metric_given,
                   LanceVectorIndexParams* p) {
    LanceVectorModelInfo info;
    if (lance_vector_model_info(model, &info) != 0) return lib_error("reading the model's settings");
    int32_t trained_for = 0;
    if (lance_vector_model_index_type(model, &trained_for) != 0) return lib_error("reading the model's index type");
    if (trained_for && type_given && p->index_type != (LanceVectorIndexType)trained_for)
        return usage("--type %s conflicts with the model %s, trained for %s; leave --type out to use the model's type",
                     type_given, path, vector_type_name(trained_for));
    const char* model_kind =
        info.has_pq_codebook ? "an IVF_PQ model (it has a PQ codebook)" : "an IVF_FLAT model (it has no PQ codebook)";
    if (trained_for) p->index_type = (LanceVectorIndexType)trained_for;
    else if (!type_given) p->index_type = info.has_pq_codebook ? LANCE_INDEX_IVF_PQ : LANCE_INDEX_IVF_FLAT;
    else if (uses_pq_codebook(p->index_type) != (int)info.has_pq_codebook)
        return usage("--type %s conflicts with the model %s, %s; leave --type out to use the model's type", type_given,
                     path, model_kind);
    if (!metric_given) p->metric = info.metric;
    if (!p->num_partitions) p->num_partitions = info.num_partitions;
    if (!p->num_sub_vectors && info.has_pq_codebook) p->num_sub_vectors = info.num_sub_vectors;
    return 0;
}

/* The float32 values of `path`; NULL after saying why (exit status
 * EXIT_USAGE). */
static float* read_floats(const char* path, size_t* count) {
    float* values = read_f32_file(path, count);
    if (!values)
        usage("cannot read %s as little-endian float32 values: %s", path,
              errno == EINVAL ? "empty, or its size is not a multiple of 4 bytes" : strerror(errno));
    return values;
}

/* `values` (taken) as an Arrow array of lists of `width` floats; running out
 * of memory ends the tool. */
static void floats_arrow(float* values, size_t count, size_t width, struct ArrowArray* array,
                         struct ArrowSchema* schema) {
    if (f32_list_arrow(values, count, (int32_t)width, array, schema) != 0) must(NULL);
}

/* A model trained elsewhere, as raw little-endian float32 files (the Lance
 * Java SDK's VectorTrainer output written as it is):
 *   centroids  [K][dim] row-major, K = --partitions;
 *   codebook   [M][2^bits][dim / M] (M = --sub-vectors, bits = --bits or 8),
 *              the order of lance_index_train_pq_model() and of the Lance
 *              core's flat codebook.
 * Checks the shapes and fills the two Arrow arrays of `options` (released by
 * the caller) with mode PRECOMPUTED.  Without --type the codebook decides
 * the type (IVF_PQ with one, IVF_FLAT without).  Returns 0 or an exit status. */
static int raw_model(const char* centroids_path, const char* codebook_path, const char* type_given,
                     LanceVectorIndexParams* p, struct ArrowArray arrays[2], struct ArrowSchema schemas[2],
                     LanceIndexSegmentBuildOptions* options) {
    if (!p->num_partitions)
        return usage("--ivf-centroids needs --partitions K, the number of centroids the file holds");
    if (!type_given) p->index_type = codebook_path ? LANCE_INDEX_IVF_PQ : LANCE_INDEX_IVF_FLAT;
    else if (uses_pq_codebook(p->index_type) != (codebook_path != NULL))
        return usage("--type %s %s --pq-codebook", type_given,
                     codebook_path ? "does not use a PQ codebook: leave out" : "needs a PQ codebook: add");
    size_t count = 0;
    float* centroids = read_floats(centroids_path, &count);
    if (!centroids) return EXIT_USAGE;
    if (count % p->num_partitions != 0 || count / p->num_partitions > INT32_MAX) {
        free(centroids);
        return usage("%s holds %zu floats, not --partitions %u rows of one dimension", centroids_path, count,
                     p->num_partitions);
    }
    size_t dim = count / p->num_partitions;
    floats_arrow(centroids, count, dim, &arrays[0], &schemas[0]);
    options->ivf_centroids = &arrays[0];
    options->ivf_centroids_schema = &schemas[0];
    options->mode = LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED;
    if (!codebook_path) return 0;
    if (!p->num_sub_vectors) return usage("--pq-codebook needs --sub-vectors M, the codebook's sub-vector count");
    uint32_t bits = p->num_bits ? p->num_bits : 8;
    if (bits > 16) return usage("--bits %u is not a PQ code width", bits);
    if (dim % p->num_sub_vectors != 0)
        return usage("--sub-vectors %u does not divide the centroids' dimension %zu", p->num_sub_vectors, dim);
    size_t sub_dim = dim / p->num_sub_vectors;
    size_t expected = (size_t)p->num_sub_vectors * ((size_t)1 << bits) * sub_dim;
    float* codebook = read_floats(codebook_path, &count);
    if (!codebook) return EXIT_USAGE;
    if (count != expected) {
        free(codebook);
        return usage("%s holds %zu floats; a codebook of %u sub-vectors x %u centroids x %zu dimensions holds %zu",
                     codebook_path, count, p->num_sub_vectors, 1u << bits, sub_dim, expected);
    }
    floats_arrow(codebook, count, sub_dim, &arrays[1], &schemas[1]);
    options->pq_codebook = &arrays[1];
    options->pq_codebook_schema = &schemas[1];
    return 0;
}

static int cmd_build(const Args* a) {
    const char* column = arg(a, "--column");
    const char* out = arg(a, "-o");
    if (a->npos != 1 || !column || !out) return usage("build needs URI, --column and -o");
    const char* scalar = NULL;
    const char* params_json = NULL;
    LanceScalarIndexType st = LANCE_SCALAR_BTREE;
    int rc = scalar_options(a, &scalar, &st, &params_json);
    if (rc) return rc;
    const char* model_path = arg(a, "--model");
    const char* centroids_path = arg(a, "--ivf-centroids");
    const char* codebook_path = arg(a, "--pq-codebook");
    if (scalar && (model_path || centroids_path || codebook_path))
        return usage("--model, --ivf-centroids and --pq-codebook are for vector indices, not with --scalar %s", scalar);
    if (model_path && (centroids_path || codebook_path))
        return usage("--model or --ivf-centroids/--pq-codebook: one model, not both");
    if (codebook_path && !centroids_path) return usage("--pq-codebook needs --ivf-centroids");
    uint8_t uuid[16];
    const char* uuid_text = arg(a, "--uuid");
    if (uuid_text && uuid_hex_parse(uuid_text, uuid) != 0)
        return usage("--uuid %s: expected 32 hex digits, or the dashed 8-4-4-4-12 form", uuid_text);
    LanceVectorIndexParams p;
    if ((rc = vector_params(a, &p)) != 0) return rc;
    LanceVectorTrainingOptions to;
    int with_options = 0;
    if ((rc = training_options(a, &to, &with_options)) != 0) return rc;

    /* One options struct for every kind of build: the fragments and the
     * UUID, and for raw model files their Arrow arrays (mode PRECOMPUTED).
     * A --model file goes to the builder with set_model instead (mode AUTO):
     * either way the builder never trains. */
    LanceIndexSegmentBuildOptions bo;
    memset(&bo, 0, sizeof bo);
    struct ArrowArray raw_arrays[2];
    struct ArrowSchema raw_schemas[2];
    memset(raw_arrays, 0, sizeof raw_arrays);
    memset(raw_schemas, 0, sizeof raw_schemas);
    uint32_t* fragment_ids = NULL;
    size_t fragment_count = 0;
    LanceVectorModel* model = NULL;
    LanceDataset* ds = NULL;
    LanceIndexSegmentBuilder* b = NULL;
    uint8_t* bytes = NULL;
    size_t len = 0;
    double t0 = 0;
    const char* ft = arg(a, "--fragments");
    if (ft && (rc = fragment_list("--fragments", ft, &fragment_ids, &fragment_count)) != 0) goto done;
    bo.fragment_ids = fragment_ids;
    bo.fragment_count = fragment_count;
    if (uuid_text) bo.index_uuid = uuid;
    if (centroids_path) {
        rc = raw_model(centroids_path, codebook_path, arg(a, "--type"), &p, raw_arrays, raw_schemas, &bo);
        if (rc) goto done;
    }
    if (model_path) {
        rc = build_model(model_path, arg(a, "--type"), arg(a, "--metric") != NULL, &p, &model);
        if (rc) goto done;
    }
    if ((rc = open_dataset(a->pos[0], arg(a, "--version"), &ds)) != 0) goto done;
    if (scalar) b = lance_index_segment_builder_new_scalar(ds, column, arg(a, "--name"), (int32_t)st, params_json, &bo);
    else b = vector_segment_builder_new(ds, column, arg(a, "--name"), &p, &bo, model);
    if (!b) {
        rc = lib_error("preparing the build");
        goto done;
    }
    if (with_options && lance_index_segment_builder_set_training_options(b, &to) != 0) {
        rc = lib_error("preparing the build");
        goto done;
    }
    LanceIndexBuildControl control = build_control();
    if ((control.progress &&
         lance_index_segment_builder_set_progress_callback(b, control.progress, control.progress_user_data) != 0) ||
        lance_index_segment_builder_set_cancel_token(b, control.cancel_token) != 0) {
        rc = lib_error("preparing the build");
        goto done;
    }
    t0 = monotonic_seconds();
    if (lance_index_segment_builder_execute_uncommitted(b, &bytes, &len) != 0) {
        rc = lib_error("build");
    } else {
        rc = write_output(out, bytes, len);
        if (rc == 0 && !quiet) fprintf(stderr, "segment built in %.2f s -> %s\n", monotonic_seconds() - t0, out);
    }
done:
    lance_index_segment_builder_free(b);
    cancel_signal_stop();
    lance_free_bytes(bytes);
    lance_vector_model_free(model);
    for (int i = 0; i < 2; i++) {
        if (raw_arrays[i].release) raw_arrays[i].release(&raw_arrays[i]);
        if (raw_schemas[i].release) raw_schemas[i].release(&raw_schemas[i]);
    }
    lance_dataset_close(ds);
    free(fragment_ids);
    return rc;
}

static const Option build_options[] = {
    VECTOR_OPTIONS,         TRAINING_OPTIONS,     {"--column", 1}, {"--fragments", 1}, {"--model", 1},
    {"--ivf-centroids", 1}, {"--pq-codebook", 1}, {"--uuid", 1},   {"--name", 1},      {"--scalar", 1},
    {"--params", 1},        {"--version", 1},     {"--quiet", 0},  {"-o", 1},          {NULL, 0}};
OPTIONS_FIT(build_options);

const Command build_command = {
    "build",
    cmd_build,
    "URI --column C -o SEGMENT [options]",
    "one uncommitted segment",
    "lance-index build URI --column C -o SEGMENT [--fragments 0,1,5] [--model MODEL]\n"
    "        [--uuid HEX] [--version V] [--name N] [--quiet]\n"
    "        [vector and training options as for train, or --scalar TYPE [--params JSON]]\n"
    "  Builds one segment over the fragments WITHOUT committing and writes its metadata\n"
    "  bytes to SEGMENT.  With --model the shared model is used and never retrained, and\n"
    "  the index type is the one it was trained for (a model that records none: IVF_PQ\n"
    "  with a PQ codebook, else IVF_FLAT); --type may name only that one.\n"
    "  --uuid takes 32 hex digits, or the dashed 8-4-4-4-12 form.\n"
    "  --ivf-centroids FILE and --pq-codebook FILE take a model trained elsewhere (the Lance\n"
    "  Java SDK's VectorTrainer) as raw little-endian float32, never retrained:\n"
    "    centroids: K rows of dim floats, row-major [K][dim]; give --partitions K;\n"
    "    codebook:  [M][2^B][dim/M]: for each of the M sub-vectors, 2^B centroids of\n"
    "               dim/M floats (VectorTrainer.trainPqCodebook's float[] as it is);\n"
    "               give --sub-vectors M (and --bits B when not 8).\n"
    "  Without --type the type is IVF_PQ with a codebook, else IVF_FLAT.\n"
    "  --scalar TYPE builds a scalar segment instead, TYPE one of\n"
    "    " SCALAR_NAMES "\n"
    "  with --params JSON the type's parameters, a JSON object (lance.h lists the keys\n"
    "  at LanceScalarIndexType), e.g. --params '{\"rows_per_zone\": 1024}' for ZONEMAP.\n"
    "  SIGINT or SIGTERM cancels the build: its files are removed, exit status 20.",
    build_options,
    1};
