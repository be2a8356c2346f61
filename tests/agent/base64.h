/*
 * Base64 (RFC 4648, with padding), as the guest agent carries a command's
 * output and a file's bytes.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef QGA_BASE64_H
#define QGA_BASE64_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

void base64_encode(Buf *out, const void *data, size_t len);
/* false, with out holding what came before, at a byte not of base64 */
bool base64_decode(Buf *out, const char *text, size_t len);

#endif
