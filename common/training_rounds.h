/* A distributed training (lance.h "Distributed index builds: distributed
 * training") run over worker processes, with one line protocol on the
 * workers' stdin and stdout: the coordinator writes "REQUEST STATS\n" (two
 * file paths), the worker answers the request with its statistics in STATS
 * and prints "ok\n", or prints "error EXIT MESSAGE\n" and goes on.  The
 * tool's `train-worker` and the example worker's `--train` serve it; the
 * example coordinator and the benchmarks drive it. */
#ifndef LANCE_COMMON_TRAINING_ROUNDS_H
#define LANCE_COMMON_TRAINING_ROUNDS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "lance/lance.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Worker side: answers the lines of `in` on `out` until the end of `in`.
 * `exit_status` turns a library error code into the EXIT of an error
 * line; a line that is not two paths, or a file that cannot be read or
 * written, is EXIT `usage_status`.  From a line's arrival to its answer,
 * SIGINT and SIGTERM cancel the round
 * (lance_vector_training_worker_answer()): the worker answers
 * the line (the error line of LANCE_ERR_CANCELLED, or "ok" when the round
 * had just finished) and stops serving; between lines the signals act as
 * they did before the call.  Returns 0 at the end of `in`, or, after such a
 * signal, exit_status(LANCE_ERR_CANCELLED). */
int training_serve(LanceVectorTrainingWorker* worker, FILE* in, FILE* out, int (*exit_status)(LanceErrorCode),
                   int usage_status);

/* Coordinator side: one worker process and its pipes. */
typedef struct {
    pid_t pid;
    FILE* in;          /* the worker's stdin */
    FILE* out;         /* the worker's stdout */
    long peak_rss_kib; /* the worker's peak resident set, set by training_processes_stop() */
} TrainingProcess;

/* What a training's rounds moved and cost the coordinator. */
typedef struct {
    uint64_t bytes;            /* every request sent to every worker and every statistics file */
    uint64_t max_round_bytes;  /* the most bytes one round moved */
    double reduce_seconds;     /* lance_vector_training_reduce(), all rounds */
    double max_reduce_seconds; /* its longest round */
    double ivf_seconds;        /* from the first request to the end of the IVF phases */
} TrainingFigures;

/* Starts argv[0] with argv (NULL-terminated) and pipes on its stdin and
 * stdout; core >= 0 pins it to that core, with RAYON_NUM_THREADS=1.
 * Returns 0, or -1 with errno set. */
int training_process_start(char* const* argv, int core, TrainingProcess* out);

/* Runs the training's rounds over `count` started workers until it is done,
 * with the request and statistics files in `dir`.  Adds to *figures (when
 * not NULL) what the rounds moved and the coordinator's reductions cost.
 * Returns 0, or -1 after saying on stderr what failed (a worker's error
 * line, or the library's error). */
int training_run(LanceVectorTraining* training, TrainingProcess* workers, size_t count, const char* dir,
                 TrainingFigures* figures);

/* Closes the workers' stdin (they end) and waits for them, recording each
 * one's peak resident set.  Returns 0 when every one exited with status 0. */
int training_processes_stop(TrainingProcess* workers, size_t count);

#ifdef __cplusplus
}
#endif

#endif
