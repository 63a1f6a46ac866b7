// SPDX-License-Identifier: GPL-2.0
/*
 * copyref - the memcpy floor: how long this boot takes to copy 4 KiB and
 * 64 KiB with libc memcpy(), a per-boot speed reference for bounce copies.
 *
 * Contract:
 *   copyref [-n BATCHES]
 * prints on stdout, one key=value a line, in this order:
 *   copy_4k_ns_median= copy_4k_ns_p10= copy_4k_ns_p90=
 *   copy_64k_ns_median= copy_64k_ns_p10= copy_64k_ns_p90=
 *   batches= copies_per_batch_4k= copies_per_batch_64k= clock=CLOCK_MONOTONIC
 * The ns values are per copy, with one decimal.  Exit 0 on success, 1 if
 * the buffers cannot be had, 2 on bad usage.
 *
 * Under QEMU TCG reading the clock costs about a microsecond, so a batch
 * of copies is timed and divided; the percentiles (nearest rank, the
 * median is the lower one of an even count) are taken over batches.  4 KiB
 * and 64 KiB batches alternate, so both see the same host noise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "labutil.h"

#define KIB		1024
#define BUF_SIZE	(64 * KIB)
#define MAX_BATCHES	100000
#define WARMUP		4	/* untimed batches of each size first */

struct size_run {
	const char *name;
	size_t len;
	unsigned int copies;	/* per batch */
	double *ns;		/* per-copy time of each batch */
};

static struct size_run runs[] = {
	{ "4k", 4 * KIB, 64, NULL },
	{ "64k", 64 * KIB, 8, NULL },
};

#define NR_RUNS		(sizeof(runs) / sizeof(runs[0]))

/* Read once per batch: keeps gcc from inlining a constant-size memcpy. */
static volatile size_t copy_len;

const char *prog_name = "copyref";

void usage(void)
{
	fprintf(stderr,
		"usage: copyref [-n BATCHES]\n"
		"  -n  timed batches of each size (1..%d, default 200)\n",
		MAX_BATCHES);
}

static unsigned char *get_buf(unsigned char fill)
{
	unsigned char *p;

	p = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "copyref: mmap %d KiB: %s\n", BUF_SIZE / KIB,
			strerror(errno));
		exit(1);
	}
	/* fault every page in now, not inside a timed batch */
	memset(p, fill, BUF_SIZE);
	return p;
}

/*
 * Copies alternate a->b and b->a, so each one moves data the previous one
 * wrote; the barrier makes gcc assume memory is read and clobbered, so no
 * copy can be dropped or merged.
 */
static int64_t batch(unsigned char *a, unsigned char *b, unsigned int copies)
{
	size_t len = copy_len;
	int64_t t0, t1;
	unsigned int i;

	t0 = now_ns();
	for (i = 0; i < copies; i++) {
		if (i & 1)
			memcpy(a, b, len);
		else
			memcpy(b, a, len);
		asm volatile("" ::: "memory");
	}
	t1 = now_ns();
	return t1 - t0;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* Nearest-rank percentile of sorted @v[0..n). */
static double pct(const double *v, unsigned long n, unsigned int p)
{
	unsigned long rank = (p * n + 99) / 100;

	return v[rank ? rank - 1 : 0];
}

int main(int argc, char **argv)
{
	unsigned long nbatch = 200, i;
	unsigned char *a, *b;
	struct size_run *r;
	int opt;

	while ((opt = getopt(argc, argv, ":n:h")) != -1) {
		switch (opt) {
		case 'n':
			if (parse_ulong(optarg, 1, MAX_BATCHES, &nbatch))
				die_usage("invalid batch count '%s'", optarg);
			break;
		default:
			common_option(opt);
		}
	}
	no_more_args(argc, argv);

	/* two mappings, so the copies never share a page */
	a = get_buf(0x5a);
	b = get_buf(0xa5);
	for (r = runs; r < runs + NR_RUNS; r++) {
		r->ns = calloc(nbatch, sizeof(*r->ns));
		if (!r->ns) {
			fprintf(stderr, "copyref: out of memory\n");
			return 1;
		}
		copy_len = r->len;
		for (i = 0; i < WARMUP; i++)
			batch(a, b, r->copies);
	}
	for (i = 0; i < nbatch; i++) {
		for (r = runs; r < runs + NR_RUNS; r++) {
			copy_len = r->len;
			r->ns[i] = (double)batch(a, b, r->copies) / r->copies;
		}
	}

	for (r = runs; r < runs + NR_RUNS; r++) {
		qsort(r->ns, nbatch, sizeof(*r->ns), cmp_double);
		printf("copy_%s_ns_median=%.1f\n", r->name, pct(r->ns, nbatch, 50));
		printf("copy_%s_ns_p10=%.1f\n", r->name, pct(r->ns, nbatch, 10));
		printf("copy_%s_ns_p90=%.1f\n", r->name, pct(r->ns, nbatch, 90));
	}
	printf("batches=%lu\n", nbatch);
	for (r = runs; r < runs + NR_RUNS; r++)
		printf("copies_per_batch_%s=%u\n", r->name, r->copies);
	printf("clock=CLOCK_MONOTONIC\n");
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "copyref: write stdout: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
