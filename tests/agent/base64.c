/*
 * Base64 (base64.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "base64.h"

#include <stdint.h>
#include <string.h>

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void base64_encode(Buf *out, const void *data, size_t len)
{
    const uint8_t *p = data;
    char quad[4];

    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = p[i] << 16;
        size_t left = len - i;

        if (left > 1) {
            v |= p[i + 1] << 8;
        }
        if (left > 2) {
            v |= p[i + 2];
        }
        quad[0] = alphabet[v >> 18];
        quad[1] = alphabet[v >> 12 & 63];
        quad[2] = left > 1 ? alphabet[v >> 6 & 63] : '=';
        quad[3] = left > 2 ? alphabet[v & 63] : '=';
        buf_add(out, quad, 4);
    }
}

bool base64_decode(Buf *out, const char *text, size_t len)
{
    uint32_t v = 0;
    int bits = 0;

    for (size_t i = 0; i < len; i++) {
        const char *c = memchr(alphabet, text[i], sizeof(alphabet) - 1);
        uint8_t byte;

        if (text[i] == '=') {
            /* padding ends the data: only padding may follow */
            for (; i < len; i++) {
                if (text[i] != '=') {
                    return false;
                }
            }
            break;
        }
        if (!c) {
            return false;
        }
        v = v << 6 | (c - alphabet);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            byte = v >> bits;
            buf_add(out, &byte, 1);
        }
    }
    return true;
}
