/*
 * What softhca's fuzzing harnesses share: writing their seed corpora.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef SOFTHCA_FUZZ_H
#define SOFTHCA_FUZZ_H

/* Write one seed input, dir/name, and free it. */
static inline void softhca_fuzz_write_seed(const char *dir, const char *name,
                                           GByteArray *input)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_autoptr(GError) err = NULL;

    if (!g_file_set_contents(path, (const char *)input->data, input->len,
                             &err)) {
        g_error("%s", err->message);
    }
    g_byte_array_unref(input);
}

#endif
