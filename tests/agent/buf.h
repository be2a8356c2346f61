/*
 * A growing byte buffer, always NUL-terminated once it holds anything:
 * the client's requests, its replies as they arrive, decoded output.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef QGA_BUF_H
#define QGA_BUF_H

#include <stddef.h>

typedef struct Buf {
    char *data;                 /* NULL until the first add */
    size_t len, cap;
} Buf;

void buf_add(Buf *b, const void *data, size_t len);
void buf_adds(Buf *b, const char *s);
void buf_printf(Buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void buf_drop(Buf *b, size_t n);         /* drop the first n bytes */
void buf_free(Buf *b);
/* what it holds, as a string: "" for a buffer never added to */
const char *buf_text(const Buf *b);

/* the client's end when an allocation fails: exit 125, with a message */
void out_of_memory(void) __attribute__((noreturn));

#endif
