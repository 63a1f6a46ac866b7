// SPDX-License-Identifier: GPL-2.0
/*
 * memhog - hold a given amount of memory resident so the guest kernel
 * runs under a known memory pressure.
 *
 * Anonymous pages are written once, then re-written every period so
 * reclaim sees them as hot.  Optionally a file is written and re-read
 * every period to keep the same amount of page cache busy.
 */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "labutil.h"

#define MIB		(1024 * 1024)
#define CHUNK		(64 * 1024)

struct hog {
	volatile unsigned char *mem;
	size_t len;
	size_t page;
	const char *file;
	int fd;
	size_t file_len;
};

static char chunk[CHUNK];

const char *prog_name = "memhog";

void usage(void)
{
	fprintf(stderr,
		"usage: memhog -m MIB [-t SECONDS] [-p PERIOD_MS] [-f FILE -c MIB]\n"
		"  -m  MiB of anonymous memory to hold\n"
		"  -t  exit after this many seconds (default 0: until SIGTERM/SIGINT)\n"
		"  -p  re-touch period in milliseconds (default 1000; 0: never,\n"
		"      hold only, so memhog uses no CPU while a benchmark runs)\n"
		"  -f  also write -c MiB to FILE and re-read it every period;\n"
		"      FILE is removed on a clean exit\n");
}

/* A new value each round, so every pass is a real store to every page. */
static void touch_mem(struct hog *h, unsigned char val)
{
	size_t off;

	for (off = 0; off < h->len; off += h->page)
		h->mem[off] = val;
}

static int fill_file(struct hog *h)
{
	size_t off, len;
	ssize_t n;

	memset(chunk, 0xa5, sizeof(chunk));
	for (off = 0; off < h->file_len; off += n) {
		len = h->file_len - off < CHUNK ? h->file_len - off : CHUNK;
		n = write(h->fd, chunk, len);
		if (n < 0 && errno == EINTR)
			n = 0;
		else if (n <= 0)
			return -1;
	}
	/* clean page cache: no writeback storm at some random later time */
	if (fdatasync(h->fd) && errno != EINVAL && errno != EROFS)
		return -1;
	return 0;
}

static int reread_file(struct hog *h)
{
	size_t off;
	ssize_t n;

	for (off = 0; off < h->file_len; off += n) {
		n = pread(h->fd, chunk, CHUNK, off);
		if (n < 0 && errno == EINTR)
			n = 0;
		else if (n < 0)
			return -1;
		else if (n == 0)
			break;	/* someone truncated it; hold what is left */
	}
	return 0;
}

static void open_file(struct hog *h)
{
	int err;

	h->fd = open(h->file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (h->fd >= 0 && !fill_file(h))
		return;
	err = errno;
	if (h->fd >= 0)
		unlink(h->file);
	fprintf(stderr, "memhog: cannot write %zu MiB to %s: %s\n",
		h->file_len / MIB, h->file, strerror(err));
	exit(1);
}

int main(int argc, char **argv)
{
	unsigned long mib = 0, secs = 0, period = 1000, cache_mib = 0;
	struct hog h = { .fd = -1 };
	unsigned char round = 1;
	int64_t end = 0, next, deadline;
	sigset_t set;
	int opt, rc = 0;

	while ((opt = getopt(argc, argv, ":m:t:p:f:c:h")) != -1) {
		switch (opt) {
		case 'm':
			mib = parse_num(optarg, "size", 1, SIZE_MAX / MIB);
			break;
		case 't':
			secs = parse_num(optarg, "time", 0, 100000000);
			break;
		case 'p':
			period = parse_num(optarg, "period", 0, 86400000);
			break;
		case 'f':
			h.file = optarg;
			break;
		case 'c':
			cache_mib = parse_num(optarg, "cache size", 1, SIZE_MAX / MIB);
			break;
		default:
			common_option(opt);
		}
	}
	no_more_args(argc, argv);
	if (!mib)
		die_usage("-m MIB is required");
	if (!h.file != !cache_mib)
		die_usage("-f FILE and -c MIB go together");
	if (h.file && !*h.file)
		die_usage("empty -f FILE");

	setup_signals(&set);
	h.page = sysconf(_SC_PAGESIZE);
	h.len = mib * MIB;
	h.mem = mmap(NULL, h.len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h.mem == MAP_FAILED) {
		fprintf(stderr, "memhog: mmap %lu MiB: %s\n", mib, strerror(errno));
		return 1;
	}
	touch_mem(&h, round);
	if (h.file) {
		h.file_len = cache_mib * MIB;
		open_file(&h);
	}
	printf("memhog: holding %lu MiB\n", mib);
	fflush(stdout);

	next = now_ns();
	if (secs)
		end = next + secs * NSEC_PER_SEC;
	for (;;) {
		next = period ? next + period * NSEC_PER_MSEC : INT64_MAX;
		deadline = end && end < next ? end : next;
		if (wait_until(&set, deadline) || (end && now_ns() >= end))
			break;
		round = round % 255 + 1;
		touch_mem(&h, round);
		if (h.file && reread_file(&h)) {
			fprintf(stderr, "memhog: read %s: %s\n", h.file, strerror(errno));
			rc = 1;
			break;
		}
	}
	if (h.file) {
		close(h.fd);
		unlink(h.file);
	}
	return rc;
}
