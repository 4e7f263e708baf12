#include "progress_print.h"

#include <stdio.h>

#include "lance/lance.h"
#include "measure.h"

void progress_print_init(ProgressPrint* print, const char* prefix, int tty) {
    *print = (ProgressPrint){0};
    print->prefix = prefix ? prefix : "";
    print->tty = tty;
}

void progress_print_event(void* user, int32_t event, const char* stage, uint64_t total, const char* unit,
                          uint64_t completed) {
    ProgressPrint* p = user;
    if (event == LANCE_INDEX_BUILD_PROGRESS_STAGE_START) {
        snprintf(p->stage, sizeof p->stage, "%s", stage);
        snprintf(p->unit, sizeof p->unit, "%s", unit);
        p->total = total;
        p->started = monotonic_seconds();
        if (!p->tty && total)
            fprintf(stderr, "%s%s: started (%llu %s)\n", p->prefix, stage, (unsigned long long)total, unit);
        else if (!p->tty) fprintf(stderr, "%s%s: started\n", p->prefix, stage);
        return;
    }
    double elapsed = monotonic_seconds() - p->started;
    if (event == LANCE_INDEX_BUILD_PROGRESS_STAGE_PROGRESS && p->tty) {
        double rate = elapsed > 0 ? completed / elapsed : 0;
        if (p->total)
            fprintf(stderr, "\r%s%-18s %llu/%llu %s (%.0f/s)   ", p->prefix, stage, (unsigned long long)completed,
                    (unsigned long long)p->total, p->unit, rate);
        else
            fprintf(stderr, "\r%s%-18s %llu %s (%.0f/s)   ", p->prefix, stage, (unsigned long long)completed, p->unit,
                    rate);
    } else if (event == LANCE_INDEX_BUILD_PROGRESS_STAGE_COMPLETE) {
        fprintf(stderr, p->tty ? "\r%s%-18s done in %.2f s%30s\n" : "%s%s: done in %.2f s%s\n", p->prefix, stage,
                elapsed, "");
    }
}
