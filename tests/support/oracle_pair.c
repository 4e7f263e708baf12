#include "oracle_pair.h"

int tu_pairs_begin(TuPairs* pairs, int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s PYTHON ORACLE_SCRIPT\n", argv[0]);
        return 0;
    }
    pairs->python = argv[1];
    pairs->oracle = argv[2];
    pairs->serial = 0;
    pairs->data = tu_make_data(TU_PAIR_ROWS + 300, TU_PAIR_DIM, 4, 0.5f, 11);
    pairs->other = tu_make_data(TU_PAIR_ROWS + 300, TU_PAIR_DIM, 4, 0.5f, 12);
    pairs->dir = tu_temp_dir("evolve");
    return 1;
}

void tu_pairs_end(TuPairs* pairs) {
    tu_remove_tree(pairs->dir);
    free(pairs->dir);
    tu_free_data(&pairs->data);
    tu_free_data(&pairs->other);
}

LanceDataset* tu_pair_make(TuPairs* pairs, const char* tag, char* c_uri, char* py_uri) {
    pairs->serial++;
    snprintf(c_uri, 600, "%s/%s-%d-c.lance", pairs->dir, tag, pairs->serial);
    snprintf(py_uri, 600, "%s/%s-%d-py.lance", pairs->dir, tag, pairs->serial);
    LanceDataset* ds = tu_write(c_uri, &pairs->data, 0, TU_PAIR_ROWS, LANCE_WRITE_CREATE, TU_PAIR_ROWS_PER_FILE);
    CHECK(ds != NULL);
    CHECK(lance_dataset_fragment_count(ds) == 3);
    const char* copy[] = {"cp", "-r", c_uri, py_uri, NULL}; /* a failed check when it fails */
    free(tu_run_program(copy));
    return ds;
}

int tu_pair_agrees(const TuPairs* pairs, const char* c_case, const char* c_uri, const char* py_uri, const char* extra) {
    TuText cmd = {0};
    tu_text_append(&cmd, "RUST_LOG=error");
    tu_shell_quote(&cmd, pairs->python);
    tu_shell_quote(&cmd, pairs->oracle);
    tu_shell_quote(&cmd, c_case);
    tu_shell_quote(&cmd, c_uri);
    tu_shell_quote(&cmd, py_uri);
    if (extra) tu_text_append(&cmd, " %s", extra);
    int rc = system(cmd.text);
    free(cmd.text);
    if (rc != 0) fprintf(stderr, "oracle %s: exit status %d\n", c_case, rc);
    return rc == 0;
}
