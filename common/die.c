#define _GNU_SOURCE /* program_invocation_short_name */
#include "die.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* program(void) {
#ifdef __GLIBC__
    return program_invocation_short_name;
#else
    return "lance-c";
#endif
}

LanceErrorCode report_lance_error(const char* what) {
    LanceErrorCode code = lance_last_error_code();
    const char* msg = lance_last_error_message();
    fprintf(stderr, "%s: %s failed (error %d): %s\n", program(), what, (int)code, msg ? msg : "(no message)");
    lance_free_string(msg);
    return code;
}

void die(const char* what) {
    report_lance_error(what);
    exit(1);
}

void die_errno(const char* what) {
    fprintf(stderr, "%s: %s: %s\n", program(), what, strerror(errno));
    exit(1);
}
