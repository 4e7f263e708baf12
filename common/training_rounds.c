/* See training_rounds.h. */
#define _GNU_SOURCE /* pipe2, sched_setaffinity, getline */
#include "training_rounds.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cancel_signal.h"
#include "die.h"
#include "files.h"
#include "measure.h"

/* Strips the line end; splits "REQUEST STATS" at its first blank. */
static int split_paths(char* line, char** request, char** stats) {
    line[strcspn(line, "\r\n")] = 0;
    char* blank = strchr(line, ' ');
    if (!blank) return -1;
    *blank = 0;
    *request = line;
    *stats = blank + 1;
    return **request && **stats ? 0 : -1;
}

int training_serve(LanceVectorTrainingWorker* worker, FILE* in, FILE* out, int (*exit_status)(LanceErrorCode),
                   int usage_status) {
    char* line = NULL;
    size_t cap = 0;
    int status = 0;
    while (status == 0 && getline(&line, &cap, in) > 0) {
        char *request_path, *stats_path;
        if (split_paths(line, &request_path, &stats_path) != 0) {
            fprintf(out, "error %d expected a line \"REQUEST STATS\"\n", usage_status);
            fflush(out);
            continue;
        }
        /* From here to the answer, SIGINT and SIGTERM cancel the round. */
        LanceIndexBuildControl control = {NULL, NULL, cancel_signal_start()};
        if (!control.cancel_token) {
            fprintf(stderr, "warning: SIGINT and SIGTERM will not cancel this round (%s)\n", strerror(errno));
        }
        size_t len = 0, stats_len = 0;
        unsigned char* request = read_whole_file(request_path, &len);
        uint8_t* stats = NULL;
        if (!request) {
            fprintf(out, "error %d cannot read %s: %s\n", usage_status, request_path, strerror(errno));
        } else if (lance_vector_training_worker_answer(worker, request, len,
                                                       &(LanceVectorTrainingAnswerOptions){.control = &control}, &stats,
                                                       &stats_len) != 0) {
            LanceErrorCode code = lance_last_error_code();
            const char* message = lance_last_error_message();
            fprintf(out, "error %d %s\n", exit_status(code), message ? message : "");
            lance_free_string(message);
        } else if (write_whole_file(stats_path, stats, stats_len) != 0) {
            fprintf(out, "error %d cannot write %s: %s\n", usage_status, stats_path, strerror(errno));
        } else {
            fprintf(out, "ok\n");
        }
        fflush(out);
        /* A signal during the round ends the worker, whatever the round's
         * outcome (it was cancelled, or had just finished). */
        if (control.cancel_token && cancel_signal_stop()) status = exit_status(LANCE_ERR_CANCELLED);
        free(request);
        lance_free_bytes(stats);
    }
    free(line);
    return status;
}

int training_process_start(char* const* argv, int core, TrainingProcess* out) {
    /* Close-on-exec: a worker started later must not hold this one's pipes
     * open (this one would never see the end of its input). */
    int to[2], from[2];
    if (pipe2(to, O_CLOEXEC) != 0) return -1;
    if (pipe2(from, O_CLOEXEC) != 0) {
        close(to[0]);
        close(to[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        close(to[0]);
        close(to[1]);
        close(from[0]);
        close(from[1]);
        errno = saved;
        return -1;
    }
    if (pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        if (core >= 0) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(core, &one);
            sched_setaffinity(0, sizeof one, &one);
            setenv("RAYON_NUM_THREADS", "1", 1);
        }
        execv(argv[0], argv);
        fprintf(stderr, "cannot start %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    out->pid = pid;
    out->peak_rss_kib = 0;
    out->in = fdopen(to[1], "w");
    out->out = fdopen(from[0], "r");
    if (!out->in || !out->out) return -1;
    return 0;
}

int training_run(LanceVectorTraining* training, TrainingProcess* workers, size_t count, const char* dir,
                 TrainingFigures* figures) {
    size_t path_cap = strlen(dir) + 32;
    char* request_path = malloc(path_cap);
    char* stats_path = malloc(path_cap);
    const uint8_t** stats = calloc(count, sizeof *stats);
    size_t* lens = calloc(count, sizeof *lens);
    int rc = request_path && stats_path && stats && lens ? 0 : -1;
    if (rc) fprintf(stderr, "training: out of memory\n");
    if (!rc) snprintf(request_path, path_cap, "%s/request.bin", dir);
    double began = monotonic_seconds();
    int ivf_done = 0;
    for (;;) {
        LanceVectorTrainingInfo info;
        if (rc || lance_vector_training_info(training, &info) != 0) break;
        if (figures && !ivf_done && info.phase >= LANCE_TRAINING_PQ_INIT) {
            figures->ivf_seconds += monotonic_seconds() - began;
            ivf_done = 1;
        }
        if (info.phase == LANCE_TRAINING_DONE) break;
        uint8_t* request = NULL;
        size_t request_len = 0;
        if (lance_vector_training_request(training, &request, &request_len) != 0) {
            report_lance_error("training request");
            rc = -1;
            break;
        }
        if (write_whole_file(request_path, request, request_len) != 0) {
            fprintf(stderr, "training: cannot write %s: %s\n", request_path, strerror(errno));
            rc = -1;
        }
        lance_free_bytes(request);
        uint64_t round_bytes = 0;
        for (size_t g = 0; !rc && g < count; g++) {
            fprintf(workers[g].in, "%s %s/stats-%zu.bin\n", request_path, dir, g);
            fflush(workers[g].in);
        }
        for (size_t g = 0; !rc && g < count; g++) {
            char line[4096] = "";
            if (!fgets(line, sizeof line, workers[g].out) || strcmp(line, "ok\n") != 0) {
                fprintf(stderr, "training: worker %zu: %s", g, line[0] ? line : "ended\n");
                rc = -1;
                break;
            }
            snprintf(stats_path, path_cap, "%s/stats-%zu.bin", dir, g);
            stats[g] = read_whole_file(stats_path, &lens[g]);
            if (!stats[g]) {
                fprintf(stderr, "training: cannot read %s: %s\n", stats_path, strerror(errno));
                rc = -1;
                break;
            }
            round_bytes += request_len + lens[g];
        }
        double start = monotonic_seconds();
        if (!rc && lance_vector_training_reduce(training, stats, lens, count) != 0) {
            report_lance_error("training reduce");
            rc = -1;
        }
        double reduce = monotonic_seconds() - start;
        if (figures) {
            figures->bytes += round_bytes;
            if (round_bytes > figures->max_round_bytes) figures->max_round_bytes = round_bytes;
            figures->reduce_seconds += reduce;
            if (reduce > figures->max_reduce_seconds) figures->max_reduce_seconds = reduce;
        }
        for (size_t g = 0; g < count; g++) {
            free((void*)stats[g]);
            stats[g] = NULL;
        }
    }
    free(request_path);
    free(stats_path);
    free(stats);
    free(lens);
    return rc;
}

int training_processes_stop(TrainingProcess* workers, size_t count) {
    int rc = 0;
    for (size_t g = 0; g < count; g++) {
        if (workers[g].in) fclose(workers[g].in);
        workers[g].in = NULL;
    }
    for (size_t g = 0; g < count; g++) {
        int status = 0;
        struct rusage usage;
        memset(&usage, 0, sizeof usage);
        if (workers[g].pid > 0 &&
            (wait4(workers[g].pid, &status, 0, &usage) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0))
            rc = -1;
        workers[g].peak_rss_kib = usage.ru_maxrss;
        if (workers[g].out) fclose(workers[g].out);
        workers[g].out = NULL;
        workers[g].pid = 0;
    }
    return rc;
}
