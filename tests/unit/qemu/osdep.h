/*
 * Stand-in for QEMU's qemu/osdep.h, so that the device's QEMU-free files
 * (the frame parser) compile on the host for unit tests.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef SOFTHCA_UNIT_OSDEP_H
#define SOFTHCA_UNIT_OSDEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

/* what QEMU's config-host.h says of the host */
#if defined(__x86_64__)
#define HOST_X86_64 1
#endif

#endif
