#define _POSIX_C_SOURCE 200809L
#include "measure.h"

#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double monotonic_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

void sort_doubles(double* values, size_t n) { qsort(values, n, sizeof *values, cmp_double); }

double median_of(double* values, size_t n) {
    if (n == 0) return 0;
    sort_doubles(values, n);
    return values[n / 2];
}

int take_flag(int* argc, char** argv, const char* flag) {
    int kept = 0, found = 0;
    for (int i = 0; i < *argc; i++) {
        if (i > 0 && strcmp(argv[i], flag) == 0) found = 1;
        else argv[kept++] = argv[i];
    }
    *argc = kept;
    argv[kept] = NULL;
    return found;
}

int process_thread_count(void) {
    DIR* d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    for (struct dirent* e; (e = readdir(d));)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

struct ThreadPeak {
    pthread_t thread;
    pthread_mutex_t lock;
    int stop, max;
};

static void* sample_threads(void* arg) {
    ThreadPeak* p = arg;
    const struct timespec pause = {0, 2000000};
    for (;;) {
        int n = process_thread_count();
        pthread_mutex_lock(&p->lock);
        if (n > p->max) p->max = n;
        int stop = p->stop;
        pthread_mutex_unlock(&p->lock);
        if (stop) return NULL;
        nanosleep(&pause, NULL);
    }
}

ThreadPeak* thread_peak_start(void) {
    ThreadPeak* p = calloc(1, sizeof *p);
    if (!p) return NULL;
    pthread_mutex_init(&p->lock, NULL);
    if (pthread_create(&p->thread, NULL, sample_threads, p) != 0) {
        pthread_mutex_destroy(&p->lock);
        free(p);
        return NULL;
    }
    return p;
}

int thread_peak_stop(ThreadPeak* p) {
    if (!p) return -1;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    int max = p->max;
    pthread_mutex_destroy(&p->lock);
    free(p);
    return max;
}
