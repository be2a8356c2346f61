// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Write a seeded pattern over a block device, or check that it is there:
 *
 *   blk-pattern write|verify DEVICE SEED [MIB]
 *
 * The pattern is a xorshift64* stream from SEED, each 8-byte word mixed
 * with its byte offset, so that a block written to the wrong place fails
 * too.  I/O is O_DIRECT in 1 MiB requests: what is read comes from the
 * device, not the page cache.  MIB defaults to the device's size.  verify
 * names the first differing offset and exits 1; errors exit 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define CHUNK (1u << 20)

static uint64_t state;

static uint64_t next(void)
{
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return state * 0x2545f4914f6cdd1dull;
}

static void fill(uint64_t *w, uint64_t off)
{
	for (size_t i = 0; i < CHUNK / 8; i++)
		w[i] = next() ^ (off + 8 * i);
}

int main(int argc, char **argv)
{
	uint64_t size, off, seed;
	uint64_t *want, *got;
	bool writing;
	int fd;

	if (argc < 4 || argc > 5 ||
	    (strcmp(argv[1], "write") && strcmp(argv[1], "verify"))) {
		fprintf(stderr, "usage: %s write|verify DEVICE SEED [MIB]\n",
			argv[0]);
		return 2;
	}
	writing = !strcmp(argv[1], "write");
	seed = strtoull(argv[3], NULL, 0);
	state = seed ? seed : 1;
	fd = open(argv[2], (writing ? O_WRONLY : O_RDONLY) | O_DIRECT);
	if (argc == 5)
		size = strtoull(argv[4], NULL, 0) << 20;
	if (fd < 0 || (argc == 4 && ioctl(fd, BLKGETSIZE64, &size))) {
		fprintf(stderr, "%s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	if (!size || size % CHUNK) {
		fprintf(stderr, "%s: %" PRIu64 " bytes, not whole MiB\n",
			argv[2], size);
		return 2;
	}
	if (posix_memalign((void **)&want, 4096, CHUNK) ||
	    posix_memalign((void **)&got, 4096, CHUNK))
		return 2;

	for (off = 0; off < size; off += CHUNK) {
		ssize_t n;

		fill(want, off);
		n = writing ? pwrite(fd, want, CHUNK, off) :
			      pread(fd, got, CHUNK, off);
		if (n != CHUNK) {
			fprintf(stderr, "%s at %" PRIu64 ": %s\n", argv[1], off,
				n < 0 ? strerror(errno) : "short");
			return 2;
		}
		if (!writing && memcmp(want, got, CHUNK)) {
			size_t i = 0;

			while (want[i] == got[i])
				i++;
			printf("mismatch at byte %" PRIu64 "\n", off + 8 * i);
			return 1;
		}
	}
	if (writing && fsync(fd)) {
		fprintf(stderr, "fsync: %s\n", strerror(errno));
		return 2;
	}
	printf("%s: %" PRIu64 " MiB, seed %#" PRIx64 ", %s\n", argv[2],
	       size >> 20, seed, writing ? "written" : "verified");
	return 0;
}
