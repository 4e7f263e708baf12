/* The shared helpers of common/ on their own: id lists, numbers, UUID text,
 * whole files, the JSON reader, medians and the --csv flag, and the
 * signal-to-cancel watcher. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cancel_signal.h"
#include "id_list.h"
#include "json.h"
#include "measure.h"
#include "test_util.h"

static char* dir;

/* Parses `text`; on success checks the ids equal `want`. */
static int parses_to(const char* text, int flags, const uint32_t* want, size_t n) {
    uint32_t* ids = NULL;
    size_t count = 0;
    char why[160] = "";
    if (id_list_parse(text, flags, &ids, &count, why, sizeof why) != 0) {
        fprintf(stderr, "    '%s' refused: %s\n", text, why);
        return 0;
    }
    int same = count == n && memcmp(ids, want, n * sizeof *ids) == 0;
    free(ids);
    return same;
}

/* Refused, with a message containing `needle`, and nothing produced. */
static int refused(const char* text, int flags, const char* needle) {
    static uint32_t sentinel[1];
    uint32_t* ids = sentinel; /* must stay untouched */
    size_t count = 12345;
    char why[160] = "";
    int rc = id_list_parse(text, flags, &ids, &count, why, sizeof why);
    int ok = rc == -1 && ids == sentinel && count == 12345 && strstr(why, needle) != NULL;
    if (!ok) fprintf(stderr, "    '%s': rc %d, message '%s', expected '%s'\n", text, rc, why, needle);
    return ok;
}

static void test_id_list(void) {
    const uint32_t a[] = {0, 3, 6};
    CHECK(parses_to("0,3,6", 0, a, 3));
    const uint32_t big[] = {4294967295u, 7};
    CHECK(parses_to("4294967295,007", 0, big, 2));
    const uint32_t twice[] = {1, 1};
    CHECK(parses_to("1,1", 0, twice, 2));
    CHECK(refused("1,1", ID_LIST_UNIQUE, "id 1 is given twice (items 1 and 2)"));
    CHECK(refused("5,2,9,2", ID_LIST_UNIQUE, "id 2 is given twice (items 2 and 4)"));
    CHECK(refused("", 0, "the list is empty"));
    CHECK(refused(NULL, 0, "the list is empty"));
    CHECK(refused("0,x", 0, "item 2 (\"x\") is not a number"));
    CHECK(refused("12abc", 0, "item 1 (\"12abc\") is not a number"));
    CHECK(refused(",1", 0, "item 1 is empty"));
    CHECK(refused("1,,2", 0, "item 2 is empty"));
    CHECK(refused("1,", 0, "item 2 is empty"));
    CHECK(refused("-1", 0, "item 1 (\"-1\") is negative"));
    CHECK(refused("+1", 0, "item 1 (\"+1\") is not a number"));
    CHECK(refused("1, 2", 0, "item 2 (\" 2\") is not a number"));
    CHECK(refused("4294967296", 0, "item 1 (\"4294967296\") is larger than 4294967295"));
    CHECK(refused("99999999999999999999999999", 0, "is larger than 4294967295"));
    /* A message that does not fit is cut, never overrun; none is asked for. */
    uint32_t* ids = NULL;
    size_t n = 0;
    char tiny[8];
    memset(tiny, 'z', sizeof tiny);
    CHECK(id_list_parse("x", 0, &ids, &n, tiny, sizeof tiny) == -1 && tiny[7] == 0);
    CHECK(id_list_parse("x", 0, &ids, &n, NULL, 0) == -1 && ids == NULL);

    /* Any length: 100000 ids round-trip through the formatter. */
    size_t count = 100000;
    uint32_t* many = malloc(count * sizeof *many);
    for (size_t i = 0; i < count; i++) many[i] = (uint32_t)(i * 2654435761u);
    char* text = id_list_format(many, count);
    CHECK(text != NULL);
    CHECK(text && parses_to(text, 0, many, count));
    /* ... and one bad item at its very end is still seen. */
    size_t len = text ? strlen(text) : 0;
    char* bad = malloc(len + 3);
    if (text) snprintf(bad, len + 3, "%s,y", text);
    CHECK(text && refused(bad, 0, "item 100001 (\"y\") is not a number"));
    free(bad);
    free(text);
    free(many);
    char* empty = id_list_format(NULL, 0);
    CHECK(empty && !strcmp(empty, ""));
    free(empty);
}

static void test_decimal(void) {
    uint64_t v = 99;
    CHECK(decimal_parse("0", 10, &v) == 0 && v == 0);
    CHECK(decimal_parse("18446744073709551615", UINT64_MAX, &v) == 0 && v == UINT64_MAX);
    v = 99;
    CHECK(decimal_parse("18446744073709551616", UINT64_MAX, &v) == -1 && v == 99);
    CHECK(decimal_parse("11", 10, &v) == -1 && v == 99);
    CHECK(decimal_parse("10", 10, &v) == 0 && v == 10);
    CHECK(decimal_parse("5", 0, &v) == -1);
    CHECK(decimal_parse("", 10, &v) == -1);
    CHECK(decimal_parse("-1", 10, &v) == -1);
    CHECK(decimal_parse("1 ", 10, &v) == -1);
    CHECK(decimal_parse(NULL, 10, &v) == -1);
}

static void test_uuid_hex(void) {
    const uint8_t u[16] = {0x1b, 0x4e, 0x28, 0xba, 0x2f, 0xa1, 0x47, 0x1f,
                           0x8e, 0x2a, 0x0d, 0x9c, 0x3f, 0x5a, 0x6b, 0x7c};
    char hex[UUID_HEX_LEN + 1], dashed[UUID_HEX_DASHED_LEN + 1];
    uuid_hex_format(u, hex);
    uuid_hex_format_dashed(u, dashed);
    CHECK(!strcmp(hex, "1b4e28ba2fa1471f8e2a0d9c3f5a6b7c"));
    CHECK(!strcmp(dashed, "1b4e28ba-2fa1-471f-8e2a-0d9c3f5a6b7c"));
    uint8_t back[16];
    CHECK(uuid_hex_parse(hex, back) == 0 && memcmp(back, u, 16) == 0);
    memset(back, 0, 16);
    CHECK(uuid_hex_parse(dashed, back) == 0 && memcmp(back, u, 16) == 0);
    memset(back, 0, 16);
    CHECK(uuid_hex_parse("1B4E28BA2FA1471F8E2A0D9C3F5A6B7C", back) == 0 && memcmp(back, u, 16) == 0);
    const char* bad[] = {"1b4e28ba2fa1471f8e2a0d9c3f5a6b7c0",    "1b4e28ba2fa1471f8e2a0d9c3f5a6b7",
                         "1b4e28ba2fa1471f8e2a0d9c3f5a6b7g",     "1b4e28ba-2fa1-471f-8e2a-0d9c3f5a6b7c-",
                         "1b4e28ba2-fa1-471f-8e2a-0d9c3f5a6b7c", "1b4e28ba-2fa1-471f-8e2a0-d9c3f5a6b7c",
                         " 1b4e28ba2fa1471f8e2a0d9c3f5a6b7",     "",
                         "{1b4e28ba-2fa1-471f-8e2a-0d9c3f5a6b7}"};
    uint8_t untouched[16];
    memset(untouched, 0xee, 16);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(uuid_hex_parse(bad[i], untouched) == -1);
        CHECK(untouched[0] == 0xee && untouched[15] == 0xee);
    }
    CHECK(uuid_hex_parse(NULL, untouched) == -1);
    uint8_t r1[16], r2[16];
    CHECK(uuid_random_v4(r1) == 0 && uuid_random_v4(r2) == 0);
    CHECK(memcmp(r1, r2, 16) != 0);
    CHECK((r1[6] >> 4) == 4 && (r1[8] & 0xc0) == 0x80);
}

static void test_files(void) {
    char path[700];
    snprintf(path, sizeof path, "%s/data.bin", dir);
    size_t n = 200000; /* larger than one read chunk */
    unsigned char* bytes = malloc(n);
    for (size_t i = 0; i < n; i++) bytes[i] = (unsigned char)(i * 31 + 7);
    CHECK(write_whole_file(path, bytes, n) == 0);
    size_t len = 0;
    unsigned char* back = read_whole_file(path, &len);
    CHECK(back && len == n && memcmp(back, bytes, n) == 0 && back[n] == 0);
    free(back);
    /* Replaced whole; no temporary file left beside it. */
    CHECK(write_whole_file(path, "abc", 3) == 0);
    back = read_whole_file(path, &len);
    CHECK(back && len == 3 && !strcmp((char*)back, "abc"));
    free(back);
    CHECK(write_whole_file(path, "", 0) == 0);
    back = read_whole_file(path, &len);
    CHECK(back && len == 0 && back[0] == 0);
    free(back);
    char cmd[800];
    snprintf(cmd, sizeof cmd, "%s/data.bin.tmp.%ld", dir, (long)getpid());
    struct stat st;
    CHECK(stat(cmd, &st) != 0);
    free(bytes);

    errno = 0;
    CHECK(read_whole_file("/nonexistent/x.bin", &len) == NULL && errno == ENOENT);
    errno = 0;
    CHECK(write_whole_file("/nonexistent/dir/x.bin", "a", 1) == -1 && errno == ENOENT);
    /* A directory is not a file. */
    errno = 0;
    CHECK(read_whole_file(dir, &len) == NULL && errno != 0);
    /* Files whose size stat does not know are read whole too. */
    back = read_whole_file("/proc/self/status", &len);
    CHECK(back && len > 0 && strstr((char*)back, "Name:") != NULL);
    free(back);
}

static void test_json(void) {
    JValue* v =
        json_parse(" {\"a\": [1, -2.5e1, true, false, null], \"s\": \"x\\\"\\n\\u00e9\\ud83d\\ude00\", \"o\": {}} ");
    CHECK(v && v->type == J_OBJECT && v->count == 3);
    const JValue* a = json_get(v, "a");
    CHECK(a && a->type == J_ARRAY && a->count == 5 && a->items[0]->number == 1 && a->items[1]->number == -25);
    CHECK(a && a->items[2]->type == J_BOOL && a->items[2]->number == 1 && a->items[4]->type == J_NULL);
    const JValue* s = json_get(v, "s");
    CHECK(s && s->type == J_STRING && !strcmp(s->string, "x\"\n\xc3\xa9\xf0\x9f\x98\x80"));
    CHECK(json_get(v, "o") && json_get(v, "o")->count == 0 && json_get(v, "missing") == NULL);
    CHECK(json_get(a, "a") == NULL && json_get(NULL, "a") == NULL);
    json_free(v);
    v = json_parse("\"\"");
    CHECK(v && v->type == J_STRING && !strcmp(v->string, ""));
    json_free(v);
    const char* bad[] = {"",
                         "{",
                         "[1,]",
                         "{\"a\" 1}",
                         "[1] x",
                         "\"\\u12\"",
                         "\"\\ud83d\"",
                         "\"\\u0000\"",
                         "\"a\nb\"",
                         "\"\\q\"",
                         "nul",
                         "{1: 2}",
                         "\"ends in a backslash\\"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        JValue* b = json_parse(bad[i]);
        if (b) fprintf(stderr, "    accepted %s\n", bad[i]);
        CHECK(b == NULL);
        json_free(b);
    }
    CHECK(json_parse(NULL) == NULL);
    json_free(NULL);

    /* json_write_string's output reads back as the same string. */
    char* text = NULL;
    size_t len = 0;
    FILE* f = open_memstream(&text, &len);
    json_write_string(f, "q\"b\\s\x01\xc3\xa9");
    fclose(f);
    CHECK(text && !strcmp(text, "\"q\\\"b\\\\s\\u0001\xc3\xa9\""));
    v = json_parse(text);
    CHECK(v && v->type == J_STRING && !strcmp(v->string, "q\"b\\s\x01\xc3\xa9"));
    json_free(v);
    free(text);
}

static void test_measure(void) {
    double v[] = {5, 1, 4, 2, 3};
    CHECK(median_of(v, 5) == 3 && v[0] == 1 && v[4] == 5);
    double w[] = {4, 1, 3, 2};
    CHECK(median_of(w, 4) == 3);
    CHECK(median_of(NULL, 0) == 0);
    double t0 = monotonic_seconds();
    CHECK(monotonic_seconds() >= t0);
    /* take_flag: every copy goes, the rest keep their order; argv[0] is the
     * program, never the flag. */
    char a0[] = "--csv", a1[] = "100", a2[] = "--csv", a3[] = "5", a4[] = "--csv";
    char* argv[] = {a0, a1, a2, a3, a4, NULL};
    int argc = 5;
    CHECK(take_flag(&argc, argv, "--csv") == 1);
    CHECK(argc == 3 && argv[0] == a0 && argv[1] == a1 && argv[2] == a3 && argv[3] == NULL);
    CHECK(take_flag(&argc, argv, "--csv") == 0 && argc == 3 && argv[2] == a3);
}

/* A SIGINT during the watch cancels the token, the process survives, and
 * after the stop the previous handler is back. */
static volatile sig_atomic_t previous_handler_ran;
static void previous_handler(int sig) {
    (void)sig;
    previous_handler_ran = 1;
}

static void test_cancel_signal(void) {
    signal(SIGINT, previous_handler);
    const LanceIndexBuildCancelToken* token = cancel_signal_start();
    CHECK(token != NULL);
    CHECK(token && !lance_index_build_cancel_requested(token));
    errno = 0;
    CHECK(cancel_signal_start() == NULL && errno == EBUSY);
    raise(SIGINT);
    /* The watcher thread cancels; wait for it (bounded: 10 s). */
    for (int i = 0; token && i < 10000 && !lance_index_build_cancel_requested(token); i++) {
        struct timespec pause = {0, 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    CHECK(token && lance_index_build_cancel_requested(token));
    CHECK(previous_handler_ran == 0);
    CHECK(cancel_signal_stop() == 1);
    CHECK(cancel_signal_stop() == 0);
    raise(SIGINT);
    CHECK(previous_handler_ran == 1);
    /* A second watch starts clean. */
    token = cancel_signal_start();
    CHECK(token && !lance_index_build_cancel_requested(token));
    CHECK(cancel_signal_stop() == 0);
    signal(SIGINT, SIG_DFL);
}

int main(void) {
    dir = tu_temp_dir("common");
    RUN(test_id_list);
    RUN(test_decimal);
    RUN(test_uuid_hex);
    RUN(test_files);
    RUN(test_json);
    RUN(test_measure);
    RUN(test_cancel_signal);
    tu_remove_tree(dir);
    free(dir);
    return tu_finish("test_common");
}
