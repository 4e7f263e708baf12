/* Links against an installed lance-c and checks the header and library agree. */
#include <stdio.h>
#include <string.h>

#include <lance/lance.h>

int main(void) {
    if (strcmp(lance_version(), LANCE_C_VERSION_STRING) != 0) {
        fprintf(stderr, "header %s, library %s\n", LANCE_C_VERSION_STRING, lance_version());
        return 1;
    }
    if (lance_dataset_open("/nonexistent/consumer.lance", NULL, 0) != NULL ||
        lance_last_error_code() != LANCE_ERR_NOT_FOUND) {
        fprintf(stderr, "expected NOT_FOUND\n");
        return 1;
    }
    printf("consumer: lance-c %s\n", lance_version());
    return 0;
}
