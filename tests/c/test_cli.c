#define _GNU_SOURCE
/* The lance-index tool, run as a user would: the whole plan / train /
 * build / commit / list / search loop, its errors and exit codes, and a
 * build cancelled by SIGINT.  Usage: test_cli PATH-TO-lance-index */
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json.h"
#include "test_util.h"

#define ROWS 16000
#define DIM 32

static const char* tool;
static char* dir;
static char uri[600];
static TuData data;
static char out[1 << 16];

/* Runs `lance-index <args>`; stdout goes to `out`; returns the exit status. */
static int run(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char* fmt, ...) {
    char args[4096], cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s %s 2>%s/stderr.txt", tool, args, dir);
    FILE* p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int stderr_mentions(const char* needle) {
    char path[700];
    snprintf(path, sizeof path, "%s/stderr.txt", dir);
    size_t len = 0;
    unsigned char* text = read_whole_file(path, &len);
    int found = text && memmem(text, len, needle, strlen(needle)) != NULL;
    free(text);
    return found;
}

static void query_text(int64_t row, char* buf, size_t cap) {
    size_t used = 0;
    for (int j = 0; j < DIM; j++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%.6f", j ? "," : "", data.vectors[row * DIM + j]);
}

static void test_loop(void) {
    /* plan */
    CHECK(run("plan %s --groups 4", uri) == 0);
    JValue* plan = json_parse(out);
    const JValue* groups = plan ? json_get(plan, "groups") : NULL;
    CHECK(groups && groups->count == 4);
    CHECK(plan && json_get(plan, "dataset_version")->number == 1);
    int seen[16] = {0};
    double rows = 0;
    char lists[4][128];
    for (size_t g = 0; groups && g < groups->count; g++) {
        const JValue* f = json_get(groups->items[g], "fragments");
        rows += json_get(groups->items[g], "rows")->number;
        size_t used = 0;
        lists[g][0] = 0;
        for (size_t i = 0; f && i < f->count; i++) {
            int id = (int)f->items[i]->number;
            if (id >= 0 && id < 16) seen[id]++;
            used += (size_t)snprintf(lists[g] + used, sizeof lists[g] - used, "%s%d", i ? "," : "", id);
        }
    }
    for (int i = 0; i < 16; i++) CHECK(seen[i] == 1);
    CHECK(rows == ROWS);
    json_free(plan);

    /* train */
    CHECK(run("train %s --column vec --type IVF_FLAT --partitions 16 -o %s/model.bin", uri, dir) == 0);
    CHECK(strlen(out) == 65 && out[64] == '\n');

    /* build, one segment per group, with the model */
    for (int g = 0; g < 4; g++)
        CHECK(run("build %s --column vec --type IVF_FLAT --fragments %s --model %s/model.bin -o %s/seg-%d.bin --quiet",
                  uri, lists[g], dir, dir, g) == 0);
    LanceDataset* ds = lance_dataset_open(uri, NULL, 0);
    CHECK(lance_dataset_latest_version(ds) == 1);

    /* commit, then its retry */
    CHECK(run("commit %s --name vec_idx --column vec %s/seg-0.bin %s/seg-1.bin %s/seg-2.bin %s/seg-3.bin --job-id cli-job",
              uri, dir, dir, dir, dir) == 0);
    CHECK(strstr(out, "\"version\": 2") && strstr(out, "\"already_committed\": false"));
    CHECK(run("commit %s --name vec_idx --column vec %s/seg-0.bin %s/seg-1.bin %s/seg-2.bin %s/seg-3.bin --job-id cli-job",
              uri, dir, dir, dir, dir) == 0);
    CHECK(strstr(out, "\"version\": 2") && strstr(out, "\"already_committed\": true"));

    /* list */
    CHECK(run("list %s --json", uri) == 0);
    JValue* list = json_parse(out);
    CHECK(list && list->type == J_ARRAY && list->count == 4);
    for (size_t i = 0; list && i < list->count; i++) {
        const JValue* job = json_get(list->items[i], "job_id");
        CHECK(job && job->type == J_STRING && !strcmp(job->string, "cli-job"));
    }
    json_free(list);
    CHECK(run("list %s", uri) == 0);
    CHECK(strstr(out, "4 segments, dataset version 2") != NULL);
    int lines = 0;
    for (const char* p = out; (p = strstr(p, "vec_idx")); p++) lines++;
    CHECK(lines == 4);

    /* search: probing every partition of IVF_FLAT = brute force */
    for (int q = 0; q < 3; q++) {
        int64_t row = 123 + q * 4567;
        char query[2048];
        query_text(row, query, sizeof query);
        CHECK(run("search %s --column vec --query %s --k 10 --nprobes 16", uri, query) == 0);
        int64_t truth[10];
        tu_brute_force_knn(&data, data.vectors + row * DIM, 10, truth);
        char* line = strchr(out, '\n'); /* past the header */
        CHECK(line && !strncmp(out, "id\t_distance", 12));
        for (int i = 0; i < 10 && line; i++) {
            CHECK(atoll(line + 1) == truth[i]);
            line = strchr(line + 1, '\n');
        }
    }
    lance_dataset_close(ds);
}

static void test_errors(void) {
    CHECK(run("plan %s --groups 0", uri) == 10 + LANCE_ERR_INVALID_ARGUMENT);
    CHECK(stderr_mentions("group_count is 0"));
    CHECK(run("plan %s/missing.lance --groups 2", dir) == 10 + LANCE_ERR_NOT_FOUND);
    CHECK(run("plan %s", uri) == 2);
    CHECK(run("frobnicate %s", uri) == 2);
    CHECK(run("train %s --column vec", uri) == 2);
    CHECK(run("train %s --column vec --type IVF_MAGIC -o %s/m.bin", uri, dir) == 2);
    CHECK(run("build %s --column vec --fragments 0,0 -o %s/x.bin", uri, dir) == 10 + LANCE_ERR_INVALID_ARGUMENT);
    CHECK(run("build %s --column nope --fragments 0 -o %s/x.bin", uri, dir) == 10 + LANCE_ERR_NOT_FOUND);
    CHECK(run("commit %s --name other --column vec", uri) == 10 + LANCE_ERR_NO_SEGMENTS);
    CHECK(run("commit %s --name other --column vec %s/seg-0.bin %s/seg-0.bin", uri, dir, dir) ==
          10 + LANCE_ERR_DUPLICATE_SEGMENT);
    CHECK(run("commit %s --name other --column vec %s/no-such.bin", uri, dir) == 2);
    /* A segment over fragments 0-1 overlaps the planned group holding 0. */
    CHECK(run("build %s --column vec --type IVF_FLAT --fragments 0,1 --model %s/model.bin -o %s/extra.bin --quiet",
              uri, dir, dir) == 0);
    CHECK(run("build %s --column vec --type IVF_FLAT --fragments 1,2 --model %s/model.bin -o %s/extra2.bin --quiet",
              uri, dir, dir) == 0);
    CHECK(run("commit %s --name other --column vec %s/extra.bin %s/extra2.bin", uri, dir, dir) ==
          10 + LANCE_ERR_OVERLAPPING_SEGMENTS);
    CHECK(stderr_mentions("fragments [1]"));
    const char* commands[] = {"plan", "train", "build", "commit", "list", "search", "create"};
    for (int i = 0; i < 7; i++) {
        CHECK(run("%s --help", commands[i]) == 0);
        CHECK(strstr(out, commands[i]) != NULL);
    }
    CHECK(run("help") == 0 && strstr(out, "Exit status") != NULL);
    /* The one-shot build through the tool; a second is refused without --replace. */
    CHECK(run("create %s --column vec --type IVF_FLAT --partitions 8 --name one_idx --quiet", uri) == 0);
    CHECK(strstr(out, "\"version\": 3") != NULL);
    CHECK(run("create %s --column vec --type IVF_FLAT --partitions 8 --name one_idx --quiet", uri) ==
          10 + LANCE_ERR_INDEX);
}

/* SIGINT during a build: cancelled (exit 19), its files gone, nothing committed. */
static void test_sigint(void) {
    char big[700];
    snprintf(big, sizeof big, "%s/big.lance", dir);
    TuData d = tu_make_data(100000, 64, 32, 1.0f, 3);
    LanceDataset* ds = tu_write(big, &d, 0, d.rows, LANCE_WRITE_CREATE, 25000);
    CHECK(ds != NULL);
    const char* uuid = "1b4e28ba2fa1471f8e2a0d9c3f5a6b7c";
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        char seg[800];
        snprintf(seg, sizeof seg, "%s/sigint.bin", dir);
        execl(tool, tool, "build", big, "--column", "vec", "--type", "IVF_PQ", "--partitions", "64", "--uuid", uuid,
              "-o", seg, (char*)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE* err = fdopen(fds[0], "r");
    char line[512];
    int sent = 0;
    while (fgets(line, sizeof line, err)) {
        if (!sent && strstr(line, "started")) {
            kill(pid, SIGINT);
            sent = 1;
        }
    }
    fclose(err);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(sent);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 10 + LANCE_ERR_CANCELLED);
    char seg_dir[900];
    snprintf(seg_dir, sizeof seg_dir, "%s/_indices/1b4e28ba-2fa1-471f-8e2a-0d9c3f5a6b7c", big);
    struct stat st;
    CHECK(stat(seg_dir, &st) != 0);
    CHECK(lance_dataset_latest_version(ds) == 1);
    lance_dataset_close(ds);
    tu_free_data(&d);
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_cli PATH-TO-lance-index\n");
        return 2;
    }
    tool = argv[1];
    data = tu_make_data(ROWS, DIM, 16, 0.5f, 21);
    dir = tu_temp_dir("cli");
    snprintf(uri, sizeof uri, "%s/ds.lance", dir);
    LanceDataset* ds = tu_write(uri, &data, 0, ROWS, LANCE_WRITE_CREATE, ROWS / 16);
    CHECK(ds != NULL);
    lance_dataset_close(ds);
    RUN(test_loop);
    RUN(test_errors);
    RUN(test_sigint);
    tu_remove_tree(dir);
    free(dir);
    tu_free_data(&data);
    return tu_finish("test_cli");
}
