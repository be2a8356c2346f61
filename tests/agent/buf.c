/*
 * A growing byte buffer (buf.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void out_of_memory(void)
{
    fputs("qga: out of memory\n", stderr);
    exit(125);
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p) {
        out_of_memory();
    }
    return p;
}

/* Room for n more bytes and the NUL after them. */
static void buf_reserve(Buf *b, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->data = xrealloc(b->data, b->cap);
    }
}

void buf_add(Buf *b, const void *data, size_t len)
{
    buf_reserve(b, len);
    if (len) {
        memcpy(b->data + b->len, data, len);
    }
    b->len += len;
    b->data[b->len] = '\0';
}

void buf_adds(Buf *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

void buf_printf(Buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    buf_reserve(b, n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, n + 1, fmt, ap);
    va_end(ap);
    b->len += n;
}

void buf_drop(Buf *b, size_t n)
{
    if (!n) {
        return;
    }
    memmove(b->data, b->data + n, b->len - n + 1);
    b->len -= n;
}

void buf_free(Buf *b)
{
    free(b->data);
    *b = (Buf){ 0 };
}

const char *buf_text(const Buf *b)
{
    return b->data ? b->data : "";
}
