/* worker: builds one index segment of a distributed build, as a process of
 * its own, and hands the segment's metadata bytes back through a file.
 *
 *   lance_worker <dataset uri> <version> <model file> <segment uuid, 32 hex>
 *                <output file> <fragment ids, comma-separated> [index type]
 *
 * It opens the dataset at the version the coordinator pinned, reads the
 * shared model the coordinator trained, builds its segment over its
 * fragments with that model (never training), and writes the metadata to
 * <output file> atomically (a temporary file renamed into place), so the
 * coordinator never reads half a segment.  Exit status 0 on success, 1
 * when the build fails, 2 for bad arguments (the fragment list is read
 * strictly, whatever its length: a non-number, an empty item, an id out of
 * range or given twice is refused, never truncated or read as 0).
 * The dataset may be on object storage (s3://, gs://, az://, ...: every
 * object store is in the default build): its storage options come from
 * LANCE_STORAGE_OPTIONS ("key=value,...") and from "--storage-option
 * key=value" arguments anywhere on the line.
 * Progress goes to stderr, "worker <uuid>: " and the tool's lines
 * (common/progress_print.h): one when a stage starts, with its total, and
 * one when it is done, with the time it took.  SIGTERM (or
 * SIGINT) cancels the build through a cancel token: the worker removes its
 * partial segment and exits with status 3.
 *
 *   lance_worker --train <dataset uri> <version> <fragment ids>
 *
 * is the same worker's part in training the shared model across the
 * workers (lance.h "Distributed index builds: distributed training"): it
 * answers the coordinator's requests for its fragments, one line
 * "REQUEST STATS" at a time on stdin (common/training_rounds.h), keeping its
 * sample between rounds, until its stdin ends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cancel_signal.h"
#include "die.h"
#include "files.h"
#include "id_list.h"
#include "lance/lance.h"
#include "progress_print.h"
#include "segment_params.h"
#include "storage_options.h"
#include "training_rounds.h"
#include "uuid_hex.h"

/* Exit statuses: 0 built, 1 the build failed, 2 bad arguments, 3 cancelled. */
enum { EXIT_FAILED = 1, EXIT_ARGUMENTS = 2, EXIT_CANCELLED = 3 };

static int fail(const char* what) {
    return report_lance_error(what) == LANCE_ERR_CANCELLED ? EXIT_CANCELLED : EXIT_FAILED;
}

static int run(int argc, char** argv, const char* const* storage_opts);
static int train(int argc, char** argv, const char* const* storage_opts);

int main(int argc, char** argv) {
    StorageOptions storage = {0};
    if (storage_options_init(&storage, &argc, argv, "worker") != 0) return EXIT_ARGUMENTS;
    int rc = argc > 1 && !strcmp(argv[1], "--train") ? train(argc, argv, storage_options_array(&storage))
                                                     : run(argc, argv, storage_options_array(&storage));
    storage_options_free(&storage);
    return rc;
}

static int run(int argc, char** argv, const char* const* storage_opts) {
    if (argc < 7 || argc > 8) {
        fprintf(stderr,
                "usage: %s uri version model-file uuid-hex out-file frag,frag,... [IVF_FLAT|IVF_PQ]"
                " [--storage-option key=value]...\n",
                argv[0]);
        return EXIT_ARGUMENTS;
    }
    const char* uri = argv[1];
    uint64_t version = 0;
    if (decimal_parse(argv[2], UINT64_MAX, &version) != 0) {
        fprintf(stderr, "worker: the version \"%s\" is not a number\n", argv[2]);
        return EXIT_ARGUMENTS;
    }
    uint8_t uuid[16];
    if (uuid_hex_parse(argv[4], uuid) != 0) {
        fprintf(stderr, "worker: bad segment uuid \"%s\" (32 hex digits expected)\n", argv[4]);
        return EXIT_ARGUMENTS;
    }
    /* The coordinator's list, refused whole when any of it is wrong: a
     * worker that built fewer fragments than assigned would leave a hole. */
    uint32_t* fragment_ids = NULL;
    size_t fragment_count = 0;
    char why[160];
    if (id_list_parse(argv[6], ID_LIST_UNIQUE, &fragment_ids, &fragment_count, why, sizeof why) != 0) {
        fprintf(stderr, "worker: bad fragment list: %s\n", why);
        return EXIT_ARGUMENTS;
    }
    LanceVectorIndexType type = LANCE_INDEX_IVF_PQ;
    if (argc > 7 && strcmp(argv[7], "IVF_FLAT") == 0) type = LANCE_INDEX_IVF_FLAT;
    else if (argc > 7 && strcmp(argv[7], "IVF_PQ") != 0) {
        fprintf(stderr, "worker: unknown index type %s (IVF_FLAT or IVF_PQ)\n", argv[7]);
        free(fragment_ids);
        return EXIT_ARGUMENTS;
    }

    int rc = 0;
    LanceDataset* ds = NULL;
    unsigned char* model_bytes = NULL;
    size_t model_len = 0;
    LanceVectorModel* model = NULL;
    LanceIndexSegmentBuilder* b = NULL;
    uint8_t* bytes = NULL;
    size_t len = 0;
    LanceVectorModelInfo info;
    char who[UUID_HEX_DASHED_LEN + 16];
    snprintf(who, sizeof who, "worker %s: ", argv[4]);
    ProgressPrint shown;
    progress_print_init(&shown, who, 0);
    const LanceIndexBuildCancelToken* token = cancel_signal_start();
    if (!token) {
        perror("worker: cannot watch SIGTERM");
        rc = EXIT_FAILED;
    } else if (!(ds = lance_dataset_open(uri, storage_opts, version))) {
        rc = fail("open");
    } else if (!(model_bytes = read_whole_file(argv[3], &model_len))) {
        fprintf(stderr, "worker: cannot read %s\n", argv[3]);
        rc = EXIT_FAILED;
    } else if (lance_vector_model_parse(model_bytes, model_len, &model) != 0) {
        rc = fail("model parse");
    } else if (lance_vector_model_info(model, &info) != 0) {
        rc = fail("model info");
    } else {
        LanceVectorIndexParams params = {0};
        params.index_type = type;
        params.metric = info.metric;
        params.num_partitions = info.num_partitions;
        params.num_sub_vectors = info.num_sub_vectors;
        /* With the model set the builder never trains (mode AUTO, the zero
         * value); a model it refuses is a failed build. */
        LanceIndexSegmentBuildOptions o = {0};
        o.fragment_ids = fragment_ids;
        o.fragment_count = fragment_count;
        o.index_uuid = uuid;
        b = vector_segment_builder_new(ds, "vec", NULL, &params, &o, model);
        if (!b) rc = fail("builder");
        else if (lance_index_segment_builder_set_progress_callback(b, progress_print_event, &shown) != 0 ||
                 lance_index_segment_builder_set_cancel_token(b, token) != 0)
            rc = fail("builder settings");
        else if (lance_index_segment_builder_execute_uncommitted(b, &bytes, &len) != 0) rc = fail("build");
        else if (write_whole_file(argv[5], bytes, len) != 0) {
            fprintf(stderr, "worker: cannot write %s\n", argv[5]);
            rc = EXIT_FAILED;
        }
    }
    lance_free_bytes(bytes);
    lance_index_segment_builder_free(b);
    cancel_signal_stop();
    lance_vector_model_free(model);
    free(model_bytes);
    lance_dataset_close(ds);
    free(fragment_ids);
    return rc;
}

/* The training line's EXIT: 0 is never printed; any error is a failure. */
static int training_exit(LanceErrorCode code) { return code == LANCE_ERR_CANCELLED ? EXIT_CANCELLED : EXIT_FAILED; }

static int train(int argc, char** argv, const char* const* storage_opts) {
    uint64_t version = 0;
    uint32_t* fragment_ids = NULL;
    size_t fragment_count = 0;
    char why[160];
    if (argc != 5 || decimal_parse(argv[3], UINT64_MAX, &version) != 0 ||
        id_list_parse(argv[4], ID_LIST_UNIQUE, &fragment_ids, &fragment_count, why, sizeof why) != 0) {
        fprintf(stderr, "usage: %s --train uri version frag,frag,... [--storage-option key=value]...\n", argv[0]);
        free(fragment_ids);
        return EXIT_ARGUMENTS;
    }
    int rc = 0;
    LanceVectorTrainingWorker* w = NULL;
    LanceDataset* ds = lance_dataset_open(argv[2], storage_opts, version);
    if (!ds) rc = fail("open");
    else if (lance_vector_training_worker_new(ds, fragment_ids, fragment_count, &w) != 0) rc = fail("training worker");
    else rc = training_serve(w, stdin, stdout, training_exit, EXIT_ARGUMENTS);
    lance_vector_training_worker_free(w);
    lance_dataset_close(ds);
    free(fragment_ids);
    return rc;
}
