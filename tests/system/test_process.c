/* What a host process sees of the library: a caught panic prints nothing on
 * its stderr, and vector builds spill only under the process's directory in
 * TMPDIR and leave nothing there, whether they succeed or are cancelled
 * mid-build; the directory itself (mode 0700) is gone once the process
 * exited, even a full one left by a process out of file descriptors.  Each case runs in
 * a child process (this program run again with the case's name) so that
 * its stderr and its TMPDIR are its own. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "segment_kit.h"
#include "segment_params.h"
#include "test_util.h"

static const char* self;

/* ---- child: metadata bytes whose decoding panics inside the core ---- */

static int child_panicking_metadata(void) {
    /* IndexMetadata { uuid: { 16 bytes }, created_at (field 8) = 2^63-1 ms }:
     * the core's conversion panics on the out-of-range timestamp. */
    uint8_t bytes[2 + 2 + 16 + 1 + 9] = {0x0a, 18, 0x0a, 16};
    for (int i = 0; i < 16; i++) bytes[4 + i] = (uint8_t)(i + 1);
    bytes[20] = 0x40;
    for (int i = 0; i < 8; i++) bytes[21 + i] = 0xff;
    bytes[29] = 0x7f;
    LanceIndexSegmentMetadata* m = NULL;
    if (lance_index_segment_metadata_parse(bytes, sizeof bytes, &m) != -1) return 10;
    if (lance_last_error_code() != LANCE_ERR_INVALID_ARGUMENT) return 11;
    return m == NULL ? 0 : 12;
}

/* ---- child: builds under TMPDIR ---- */

typedef struct {
    const char* spill_root; /* this process's directory in TMPDIR */
    LanceIndexBuildCancelToken* token;
    int cancel_at_merge;
    int max_spill_entries; /* entries seen there during the build */
} Watch;

static void watch_spill(void* user, int32_t event, const char* stage, uint64_t total, const char* unit,
                        uint64_t completed) {
    (void)total, (void)unit, (void)completed;
    Watch* w = user;
    int n = tu_dir_entries(w->spill_root);
    if (n > w->max_spill_entries) w->max_spill_entries = n;
    if (w->cancel_at_merge && event == LANCE_INDEX_BUILD_PROGRESS_STAGE_START && strcmp(stage, "merge_partitions") == 0)
        lance_index_build_cancel(w->token);
}

/* Builds one IVF_PQ segment with a model set; `cancel` stops it when
 * it starts writing partitions (after the shuffle).  Exit 0 when the build
 * spilled under TMPDIR and ended as expected. */
static int child_build(const char* dir, int cancel) {
    const char* tmpdir = getenv("TMPDIR");
    TuData data = tu_make_data(20000, 32, 16, 0.5f, 5);
    char uri[600];
    snprintf(uri, sizeof uri, "%s/spill-%d.lance", dir, cancel);
    LanceDataset* ds = tu_write(uri, &data, 0, data.rows, LANCE_WRITE_CREATE, 5000);
    if (!ds) return 20;
    char spill_root[800];
    if (tu_process_dir(tmpdir, spill_root, sizeof spill_root) != 0) return 27;
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_PQ;
    p.num_partitions = 16;
    p.num_sub_vectors = 8;
    LanceVectorModel* model = NULL;
    if (lance_vector_model_train(ds, "vec", &p, NULL, 0, NULL, &model) != 0) return 21;
    LanceIndexSegmentBuilder* b = vector_segment_builder_new(ds, "vec", NULL, &p, NULL, model);
    if (!b) return 22;
    Watch w = {spill_root, lance_index_build_cancel_token_new(), cancel, 0};
    if (lance_index_segment_builder_set_progress_callback(b, watch_spill, &w) != 0 ||
        lance_index_segment_builder_set_cancel_token(b, w.token) != 0)
        return 26;
    int code = sk_execute_status(b);
    lance_index_build_cancel_token_free(w.token);
    lance_vector_model_free(model);
    lance_dataset_close(ds);
    tu_free_data(&data);
    if (code != (cancel ? LANCE_ERR_CANCELLED : LANCE_OK)) return 23;
    if (w.max_spill_entries < 1) return 24; /* the build spilled elsewhere */
    /* It left nothing behind: TMPDIR holds this process's directory alone
     * (removed when the process exits: the parent checks), and it is empty. */
    return tu_dir_entries(tmpdir) == 1 && tu_dir_entries(spill_root) == 0 ? 0 : 25;
}

/* ---- child: a TMPDIR that does not exist ---- */

static int child_missing_tmpdir(const char* dir) {
    TuData data = tu_make_data(2000, 8, 4, 0.5f, 5);
    char uri[600];
    snprintf(uri, sizeof uri, "%s/missing-tmp.lance", dir);
    LanceDataset* ds = tu_write(uri, &data, 0, data.rows, LANCE_WRITE_CREATE, 1000);
    if (!ds) return 30;
    LanceVectorIndexParams p = {0};
    p.index_type = LANCE_INDEX_IVF_FLAT;
    p.num_partitions = 4;
    int rc = lance_dataset_create_vector_index(ds, "vec", NULL, &p, false);
    int ok = rc == -1 && lance_last_error_code() == LANCE_ERR_INVALID_ARGUMENT && tu_error_mentions("TMPDIR");
    lance_dataset_close(ds);
    tu_free_data(&data);
    return ok ? 0 : 31;
}

/* ---- child: its first call reclaims what killed processes left ---- */

static int child_write(const char* dir, const char* name) {
    TuData data = tu_make_data(100, 8, 2, 0.5f, 5);
    char uri[600];
    snprintf(uri, sizeof uri, "%s/%s.lance", dir, name);
    LanceDataset* ds = tu_write(uri, &data, 0, data.rows, LANCE_WRITE_CREATE, 100);
    tu_free_data(&data);
    if (!ds) return 40;
    lance_dataset_close(ds);
    return 0;
}

/* ---- child: exits with no file descriptor free ---- */

/* What a build that failed for want of descriptors leaves (its spill, which
 * it could not remove), here made by hand four levels deep under the
 * process's directory; then every descriptor the process may open is taken
 * and it returns from main.  The parent checks that the directory went. */
static int child_exit_out_of_fds(const char* dir) {
    const char* tmpdir = getenv("TMPDIR");
    if (child_write(dir, "out-of-fds") != 0) return 50;
    char root[800], path[1000];
    if (tu_process_dir(tmpdir, root, sizeof root) != 0) return 51;
    struct stat st;
    if (stat(root, &st) != 0 || (st.st_mode & 0777) != 0700) return 52;
    snprintf(path, sizeof path, "%s/.tmpSpill", root);
    if (mkdir(path, 0700) != 0) return 53;
    for (int level = 0; level < 3; level++) {
        size_t used = strlen(path);
        snprintf(path + used, sizeof path - used, "/level%d", level);
        if (mkdir(path, 0700) != 0) return 54;
    }
    strncat(path, "/shuffle_data_0", sizeof path - strlen(path) - 1);
    FILE* f = fopen(path, "w");
    if (!f || fputs("spill", f) < 0 || fclose(f) != 0) return 55;
    snprintf(path, sizeof path, "%s/link-out", root);
    if (symlink(tmpdir, path) != 0) return 56;
    int taken = 0;
    while (open("/dev/null", O_RDONLY) >= 0) taken++;
    if (errno != EMFILE || taken < 1) return 57;
    return 0; /* the descriptors stay open: exit() runs with none free */
}

/* ---- parent ---- */

static char* dir;

static void test_caught_panic_is_silent(void) {
    const char* args[] = {"panicking-metadata", NULL};
    tu_check_child(self, args, NULL, dir, 1);
}

static void test_spill_cleaned_after_success_and_cancel(void) {
    char tmp_ok[700], tmp_cancel[700];
    snprintf(tmp_ok, sizeof tmp_ok, "%s/tmp-ok", dir);
    snprintf(tmp_cancel, sizeof tmp_cancel, "%s/tmp-cancel", dir);
    CHECK(mkdir(tmp_ok, 0700) == 0 && mkdir(tmp_cancel, 0700) == 0);
    const char* ok[] = {"build", dir, "0", NULL};
    tu_check_child(self, ok, tmp_ok, dir, 0);
    const char* cancel[] = {"build", dir, "1", NULL};
    tu_check_child(self, cancel, tmp_cancel, dir, 0);
    CHECK(tu_dir_entries(tmp_ok) == 0 && tu_dir_entries(tmp_cancel) == 0);
}

static void test_missing_tmpdir_refused(void) {
    char missing[700];
    snprintf(missing, sizeof missing, "%s/no-such-dir", dir);
    const char* args[] = {"missing-tmpdir", dir, NULL};
    tu_check_child(self, args, missing, dir, 0);
}

/* A process at its descriptor limit at exit (a build failed with "Too many
 * open files" cannot remove its own spill) still removes its directory and
 * what it holds, following no symbolic link out of it. */
static void test_removed_at_exit_without_descriptors(void) {
    char tmp[700], marker[800];
    snprintf(tmp, sizeof tmp, "%s/tmp-fds", dir);
    CHECK(mkdir(tmp, 0700) == 0);
    /* The link the child leaves points at TMPDIR itself: following it
     * would remove this marker. */
    snprintf(marker, sizeof marker, "%s/marker", tmp);
    FILE* f = fopen(marker, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    const char* args[] = {"exit-out-of-fds", dir, NULL};
    tu_check_child(self, args, tmp, dir, 1);
    CHECK(tu_file_size(marker) == 0);
    CHECK(tu_dir_entries(tmp) == 1);
}

/* A killed process's directory (its name as the library makes them, no
 * lock held) goes at the next process's first call; a host's directories
 * whose names merely start the same stay, whatever they hold. */
static void test_reclaim_takes_only_its_names(void) {
    char tmp[700], path[800];
    snprintf(tmp, sizeof tmp, "%s/tmp-reclaim", dir);
    CHECK(mkdir(tmp, 0700) == 0);
    const char* stale = "lance-c-process-4194305-a1B2c3";
    const char* kept[] = {"lance-c-process-data", "lance-c-process-12-abc", "lance-c-process-12-abcdefg",
                          "lance-c-process--abcdef", "lance-c-process-x2-abcdef"};
    size_t n_kept = sizeof kept / sizeof kept[0];
    snprintf(path, sizeof path, "%s/%s", tmp, stale);
    CHECK(mkdir(path, 0700) == 0);
    /* What a worker killed mid-shuffle leaves: its spill, a level down. */
    snprintf(path, sizeof path, "%s/%s/.tmpKilled", tmp, stale);
    CHECK(mkdir(path, 0700) == 0);
    snprintf(path, sizeof path, "%s/%s/.tmpKilled/shuffle_data_0", tmp, stale);
    FILE* spill = fopen(path, "w");
    CHECK(spill != NULL);
    if (spill) fclose(spill);
    for (size_t i = 0; i < n_kept; i++) {
        snprintf(path, sizeof path, "%s/%s", tmp, kept[i]);
        CHECK(mkdir(path, 0700) == 0);
        snprintf(path, sizeof path, "%s/%s/file", tmp, kept[i]);
        FILE* f = fopen(path, "w");
        CHECK(f != NULL);
        if (f) fclose(f);
    }
    const char* args[] = {"write", dir, NULL};
    tu_check_child(self, args, tmp, dir, 1);
    snprintf(path, sizeof path, "%s/%s", tmp, stale);
    CHECK(tu_file_size(path) < 0);
    for (size_t i = 0; i < n_kept; i++) {
        snprintf(path, sizeof path, "%s/%s/file", tmp, kept[i]);
        int present = tu_file_size(path) == 0;
        CHECK(present);
        if (!present) fprintf(stderr, "    removed: %s\n", kept[i]);
    }
    /* Those alone: the child's own directory went with it. */
    CHECK(tu_dir_entries(tmp) == (int)n_kept);
}

int main(int argc, char** argv) {
    self = argv[0];
    if (argc >= 2 && strcmp(argv[1], "panicking-metadata") == 0) return child_panicking_metadata();
    if (argc >= 4 && strcmp(argv[1], "build") == 0) return child_build(argv[2], atoi(argv[3]));
    if (argc >= 3 && strcmp(argv[1], "missing-tmpdir") == 0) return child_missing_tmpdir(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "write") == 0) return child_write(argv[2], "reclaim");
    if (argc >= 3 && strcmp(argv[1], "exit-out-of-fds") == 0) return child_exit_out_of_fds(argv[2]);
    /* Not "process": the library's own directories start lance-c-process-. */
    dir = tu_temp_dir("spill-test");
    RUN(test_caught_panic_is_silent);
    RUN(test_spill_cleaned_after_success_and_cancel);
    RUN(test_missing_tmpdir_refused);
    RUN(test_reclaim_takes_only_its_names);
    RUN(test_removed_at_exit_without_descriptors);
    tu_remove_tree(dir);
    free(dir);
    return tu_finish("test_process");
}
