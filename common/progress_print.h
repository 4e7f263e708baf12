/* An index build's progress events (lance.h, LanceIndexBuildProgressCallback)
 * as lines on stderr, the way the tool and the example worker show them.
 * A stage's STAGE_START gives its total, its STAGE_PROGRESS events the count
 * so far; its STAGE_COMPLETE carries no count (completed = 0), so the line
 * that ends a stage says how long it took, never a count:
 *
 *   <prefix><stage>: started (<total> <unit>)   ("started" alone without a total)
 *   <prefix><stage>: done in <seconds> s
 *
 * On a terminal (`tty`) one line is rewritten in place instead: the stage
 * with its count so far, its total and its rate, then "done in <seconds> s". */
#ifndef LANCE_COMMON_PROGRESS_PRINT_H
#define LANCE_COMMON_PROGRESS_PRINT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char* prefix; /* borrowed; before every line ("worker 2: "); NULL for none */
    int tty;            /* rewrite one line in place */
    char stage[64];     /* the stage running, its total and unit, and when it started */
    char unit[32];
    uint64_t total;
    double started;
} ProgressPrint;

/* Sets up `print` for one build; `prefix` must outlive the build. */
void progress_print_init(ProgressPrint* print, const char* prefix, int tty);

/* The progress callback: give it to the build with the ProgressPrint as its
 * user data.  The library never overlaps its calls (lance.h), so one
 * ProgressPrint serves one build at a time. */
void progress_print_event(void* print, int32_t event, const char* stage, uint64_t total, const char* unit,
                          uint64_t completed);

#ifdef __cplusplus
}
#endif

#endif
