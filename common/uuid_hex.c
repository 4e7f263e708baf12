#include "uuid_hex.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char digits[] = "0123456789abcdef";

void uuid_hex_format(const uint8_t uuid[16], char out[UUID_HEX_LEN + 1]) {
    for (int i = 0; i < 16; i++) {
        out[2 * i] = digits[uuid[i] >> 4];
        out[2 * i + 1] = digits[uuid[i] & 0xF];
    }
    out[UUID_HEX_LEN] = 0;
}

/* After which byte the dashed form has a dash. */
static int dash_after(int byte) { return byte == 3 || byte == 5 || byte == 7 || byte == 9; }

void uuid_hex_format_dashed(const uint8_t uuid[16], char out[UUID_HEX_DASHED_LEN + 1]) {
    size_t n = 0;
    for (int i = 0; i < 16; i++) {
        out[n++] = digits[uuid[i] >> 4];
        out[n++] = digits[uuid[i] & 0xF];
        if (dash_after(i)) out[n++] = '-';
    }
    out[n] = 0;
}

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int uuid_hex_parse(const char* text, uint8_t out[16]) {
    if (!text) return -1;
    size_t len = strlen(text);
    int dashed = len == UUID_HEX_DASHED_LEN;
    if (!dashed && len != UUID_HEX_LEN) return -1;
    uint8_t bytes[16];
    const char* p = text;
    for (int i = 0; i < 16; i++) {
        int hi = hex_value(p[0]), lo = hex_value(p[1]);
        if (hi < 0 || lo < 0) return -1;
        bytes[i] = (uint8_t)(hi << 4 | lo);
        p += 2;
        if (dashed && dash_after(i) && *p++ != '-') return -1;
    }
    memcpy(out, bytes, 16);
    return 0;
}

int uuid_random_v4(uint8_t out[16]) {
    FILE* f = fopen("/dev/urandom", "rb");
    if (!f) return -1;
    size_t got = fread(out, 1, 16, f);
    fclose(f);
    if (got != 16) {
        errno = EIO;
        return -1;
    }
    out[6] = (uint8_t)(0x40 | (out[6] & 0x0f));
    out[8] = (uint8_t)(0x80 | (out[8] & 0x3f));
    return 0;
}
