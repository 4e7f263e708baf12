#define _POSIX_C_SOURCE 200809L
#include "measure.h"

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

void sort_doubles(double* values, size_t n) {
    qsort(values, n, sizeof *values, cmp_double);
}

double median_of(double* values, size_t n) {
    if (n == 0) return 0;
    sort_doubles(values, n);
    return values[n / 2];
}

int take_flag(int* argc, char** argv, const char* flag) {
    int kept = 0, found = 0;
    for (int i = 0; i < *argc; i++) {
        if (i > 0 && strcmp(argv[i], flag) == 0)
            found = 1;
        else
            argv[kept++] = argv[i];
    }
    *argc = kept;
    argv[kept] = NULL;
    return found;
}
