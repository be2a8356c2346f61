// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Runs in the lab's guests under mpirun (tests/vm/mpi.sh): MPI jobs whose
 * every result is compared with the value each rank computes locally from
 * the same pattern, so a byte lost or misplaced by any layer below (Open
 * MPI, UCX, the RDMA device) shows as a failed check.
 *
 *   mpi-check check [SECONDS]
 *                         allreduce, alltoall, a ring of large messages and
 *                         a barrier-heavy loop, on all ranks; rank 0
 *                         prints one line per job: "ok" or its failures.
 *                         With SECONDS, the four again until that many
 *                         seconds have passed, and the longest round.
 *   mpi-check pingpong    ranks 0 and 1 over message sizes 4 B .. 4 MiB:
 *                         half round trip (µs) and bandwidth (MB/s)
 *
 * Exits 0 only if every check passed on every rank.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define ALLREDUCE_COUNT (64 * 1024)
#define ALLTOALL_COUNT (16 * 1024)	/* 32-bit words per pair of ranks */
#define RING_BYTES (4 << 20)
#define RING_ROUNDS 4
#define BARRIER_ROUNDS 1000
#define BARRIER_CHECK_EVERY 100
#define PINGPONG_MAX (4 << 20)
#define PINGPONG_SECONDS 1.0	/* per size, about */
#define PINGPONG_MIN 4		/* round trips per size, at least */
#define PINGPONG_MAX_ITERS 1000

static int rank, nranks;

/* A pattern any rank can recompute: splitmix64 of the three keys. */
static uint64_t pattern(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t z = a * 0x9e3779b97f4a7c15ull ^ b * 0xbf58476d1ce4e5b9ull ^
		     c * 0x94d049bb133111ebull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * A job's result: its mismatches summed over the ranks.  Rank 0 prints it
 * with what the job moved and the seconds since start (MPI_Wtime()).
 * Returns whether every rank passed.
 */
static int report(const char *job, long mismatches, const char *what,
		  double start)
{
	double secs = MPI_Wtime() - start;
	long total = 0;

	MPI_Reduce(&mismatches, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Bcast(&total, 1, MPI_LONG, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		if (total)
			printf("mpi-check: %s: FAIL, %ld values wrong (%s, %.1f s)\n",
			       job, total, what, secs);
		else
			printf("mpi-check: %s: ok (%s, %.1f s)\n", job, what, secs);
		fflush(stdout);
	}
	return total == 0;
}

/* Sums of 64-bit integers and maxima of doubles over all ranks. */
static int check_allreduce(void)
{
	double start = MPI_Wtime();
	int64_t *in = malloc(ALLREDUCE_COUNT * sizeof(*in));
	int64_t *out = malloc(ALLREDUCE_COUNT * sizeof(*out));
	double *din = malloc(ALLREDUCE_COUNT * sizeof(*din));
	double *dout = malloc(ALLREDUCE_COUNT * sizeof(*dout));
	long bad = 0;
	char what[96];
	int i, r;

	for (i = 0; i < ALLREDUCE_COUNT; i++) {
		in[i] = (int64_t)(pattern(1, rank, i) >> 16);
		din[i] = (double)(pattern(2, rank, i) >> 11);
	}
	MPI_Allreduce(in, out, ALLREDUCE_COUNT, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(din, dout, ALLREDUCE_COUNT, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	for (i = 0; i < ALLREDUCE_COUNT; i++) {
		int64_t sum = 0;
		double max = 0;

		for (r = 0; r < nranks; r++) {
			double d = (double)(pattern(2, r, i) >> 11);

			sum += (int64_t)(pattern(1, r, i) >> 16);
			if (d > max)
				max = d;
		}
		bad += (out[i] != sum) + (dout[i] != max);
	}
	snprintf(what, sizeof(what), "%d int64 sums and double maxima",
		 ALLREDUCE_COUNT);
	free(in);
	free(out);
	free(din);
	free(dout);
	return report("allreduce", bad, what, start);
}

/* Every rank sends each other rank (and itself) a block of its own. */
static int check_alltoall(void)
{
	double start = MPI_Wtime();
	size_t n = (size_t)ALLTOALL_COUNT * nranks;
	uint32_t *out = malloc(n * sizeof(*out)), *in = malloc(n * sizeof(*in));
	long bad = 0;
	char what[96];
	int r, i;

	for (r = 0; r < nranks; r++)
		for (i = 0; i < ALLTOALL_COUNT; i++)
			out[(size_t)r * ALLTOALL_COUNT + i] = (uint32_t)pattern(3, rank * 1000 + r, i);
	memset(in, 0, n * sizeof(*in));
	MPI_Alltoall(out, ALLTOALL_COUNT, MPI_UINT32_T, in, ALLTOALL_COUNT,
		     MPI_UINT32_T, MPI_COMM_WORLD);
	for (r = 0; r < nranks; r++)
		for (i = 0; i < ALLTOALL_COUNT; i++)
			bad += in[(size_t)r * ALLTOALL_COUNT + i] !=
			       (uint32_t)pattern(3, r * 1000 + rank, i);
	snprintf(what, sizeof(what), "%zu KiB per pair of ranks",
		 ALLTOALL_COUNT * sizeof(*out) / 1024);
	free(out);
	free(in);
	return report("alltoall", bad, what, start);
}

/* Each round every rank passes a large message to the next rank. */
static int check_ring(void)
{
	double start = MPI_Wtime();
	size_t words = RING_BYTES / sizeof(uint64_t), i;
	uint64_t *out = malloc(RING_BYTES), *in = malloc(RING_BYTES);
	int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
	long bad = 0;
	char what[96];
	int round;

	for (round = 0; round < RING_ROUNDS; round++) {
		for (i = 0; i < words; i++)
			out[i] = pattern(4, rank * 100 + round, i);
		memset(in, 0, RING_BYTES);
		MPI_Sendrecv(out, RING_BYTES, MPI_BYTE, next, round,
			     in, RING_BYTES, MPI_BYTE, prev, round,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		for (i = 0; i < words; i++)
			bad += in[i] != pattern(4, prev * 100 + round, i);
	}
	snprintf(what, sizeof(what), "%d rounds of %d MiB", RING_ROUNDS,
		 RING_BYTES >> 20);
	free(out);
	free(in);
	return report("ring", bad, what, start);
}

/*
 * Barriers back to back; every so often all ranks agree on the round
 * they are in (its minimum and maximum over the ranks are both it), so a
 * rank that passed a barrier early shows.
 */
static int check_barriers(void)
{
	double start = MPI_Wtime();
	long bad = 0;
	char what[96];
	int round;

	for (round = 1; round <= BARRIER_ROUNDS; round++) {
		MPI_Barrier(MPI_COMM_WORLD);
		if (round % BARRIER_CHECK_EVERY == 0) {
			int lo, hi;

			MPI_Allreduce(&round, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
			MPI_Allreduce(&round, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
			bad += lo != round || hi != round;
		}
	}
	snprintf(what, sizeof(what), "%d barriers", BARRIER_ROUNDS);
	return report("barrier", bad, what, start);
}

/* The ranks and the nodes they run on, from rank 0. */
static void print_ranks(void)
{
	char name[MPI_MAX_PROCESSOR_NAME] = "", *all = NULL;
	int len, r;

	MPI_Get_processor_name(name, &len);
	if (rank == 0)
		all = calloc(nranks, MPI_MAX_PROCESSOR_NAME);
	MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all,
		   MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("mpi-check: %d ranks:", nranks);
		for (r = 0; r < nranks; r++)
			printf(" %s", all + (size_t)r * MPI_MAX_PROCESSOR_NAME);
		printf("\n");
		free(all);
	}
}

static int run_checks(double seconds)
{
	double start = MPI_Wtime(), round, longest = 0;
	int ok = 1, rounds = 0, more;

	print_ranks();
	do {
		round = MPI_Wtime();
		ok &= check_allreduce();
		ok &= check_alltoall();
		ok &= check_ring();
		ok &= check_barriers();
		rounds++;
		round = MPI_Wtime() - round;
		if (round > longest)
			longest = round;
		/* rank 0's clock decides, so that all ranks stop together */
		more = MPI_Wtime() - start < seconds;
		MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
	} while (more);
	if (rank == 0 && seconds > 0)
		printf("mpi-check: %d rounds in %.1f s, the longest %.1f s\n",
		       rounds, MPI_Wtime() - start, longest);
	return ok;
}

/*
 * One size's round trips between ranks 0 and 1, buf holding the message;
 * the seconds they took.
 */
static double bounce(unsigned char *buf, size_t size, int iters)
{
	double start = MPI_Wtime();
	int it;

	for (it = 0; it < iters; it++) {
		if (rank == 0) {
			MPI_Send(buf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(buf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
		}
	}
	return MPI_Wtime() - start;
}

/*
 * Ranks 0 and 1 bounce a message of each size, as many round trips as fit
 * in about PINGPONG_SECONDS (from a few timed first ones, PINGPONG_MIN ..
 * PINGPONG_MAX_ITERS); the others wait.  The last message of each size
 * is checked against its pattern.
 */
static int run_pingpong(void)
{
	double start = MPI_Wtime();
	unsigned char *buf = malloc(PINGPONG_MAX);
	long bad = 0;
	size_t size, i;

	if (nranks < 2) {
		if (rank == 0)
			printf("mpi-check: pingpong needs 2 ranks\n");
		return 0;
	}
	for (size = 4; size <= PINGPONG_MAX; size *= 4) {
		double first, usec;
		int iters;

		MPI_Barrier(MPI_COMM_WORLD);
		if (rank > 1)
			continue;
		for (i = 0; i < size; i++)
			buf[i] = (unsigned char)pattern(5, rank, i);
		first = bounce(buf, size, PINGPONG_MIN);
		/* rank 0's count: both ranks must run the same */
		iters = (int)(PINGPONG_SECONDS * PINGPONG_MIN / first);
		iters = iters < PINGPONG_MIN ? PINGPONG_MIN :
			iters > PINGPONG_MAX_ITERS ? PINGPONG_MAX_ITERS : iters;
		if (rank == 0)
			MPI_Send(&iters, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
		else
			MPI_Recv(&iters, 1, MPI_INT, 0, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		usec = bounce(buf, size, iters) * 1e6 / iters / 2;
		/* rank 1 echoes what it got: both end with rank 0's pattern */
		for (i = 0; i < size; i++)
			bad += buf[i] != (unsigned char)pattern(5, 0, i);
		if (rank == 0)
			printf("mpi-pingpong: %8zu B: %9.1f us %9.2f MB/s (%d round trips)\n",
			       size, usec, size / usec, iters);
		fflush(stdout);
	}
	free(buf);
	return report("pingpong", bad, "4 B .. 4 MiB, each size's last message", start);
}

int main(int argc, char **argv)
{
	int ok;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if ((argc == 2 || argc == 3) && !strcmp(argv[1], "check")) {
		ok = run_checks(argc == 3 ? atof(argv[2]) : 0);
	} else if (argc == 2 && !strcmp(argv[1], "pingpong")) {
		ok = run_pingpong();
	} else {
		if (rank == 0)
			fprintf(stderr, "usage: mpi-check check [SECONDS] | pingpong\n");
		ok = 0;
	}
	MPI_Finalize();
	return ok ? 0 : 1;
}
