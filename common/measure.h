/* Measuring: a monotonic clock, sorting and medians of timings, and the
 * benchmarks' option that adds machine-readable output. */
#ifndef LANCE_COMMON_MEASURE_H
#define LANCE_COMMON_MEASURE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds on a monotonic clock (only differences mean anything). */
double monotonic_seconds(void);

/* Sorts `n` values ascending, in place. */
void sort_doubles(double* values, size_t n);

/* Sorts the values in place and returns values[n / 2] (the upper middle
 * for an even n); 0 when n is 0. */
double median_of(double* values, size_t n);

/* The number of threads this process has now (-1 if /proc cannot be read). */
int process_thread_count(void);

/* Samples process_thread_count() every 2 ms on a thread of its own, from
 * thread_peak_start() to thread_peak_stop(), which returns the most seen
 * (the sampler itself counted), or -1 when the thread could not start. */
typedef struct ThreadPeak ThreadPeak;
ThreadPeak* thread_peak_start(void);
int thread_peak_stop(ThreadPeak* peak);

/* Removes every argument equal to `flag` from argv (the others keep their
 * order, so positional arguments keep their meaning), updates *argc, and
 * returns whether there was one.  The benchmarks use it for "--csv". */
int take_flag(int* argc, char** argv, const char* flag);

#ifdef __cplusplus
}
#endif

#endif
