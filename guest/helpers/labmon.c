// SPDX-License-Identifier: GPL-2.0
/*
 * labmon - sample memory-pressure counters into a CSV file.
 *
 * Runs in the bouncelab guest next to fio.  A counter the running kernel
 * does not expose is written as an empty cell, never as 0, so that
 * "no bounces happened" and "bounces cannot be seen" stay distinguishable.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "labutil.h"

#define BUF_SIZE	(64 * 1024)
#define CELL_SIZE	32
#define PATH_SIZE	4096
#define LINE_SIZE	2048

enum src { MEMINFO, VMSTAT, PSI, HIST, NR_SRC };

struct col {
	const char *name;
	enum src src;
	const char *key;	/* meminfo/vmstat key, or PSI line "some"/"full" */
	const char *field;	/* PSI field, e.g. "avg10=" */
};

/* meminfo and vmstat columns are named after their key */
#define MEM(k)		{ k, MEMINFO, k, NULL }
#define VM(k)		{ k, VMSTAT, k, NULL }
#define PSI_COL(l, f)	{ l "_" f, PSI, l, f "=" }
#define HIST_COL(n)	{ n, HIST, NULL, NULL }

/*
 * The CSV columns after t_ms, in output order: X(ID, definition).  The
 * enum of column ids (COL_ID) and the cols[] table are both generated
 * from this one list, so code names a column (cells[COL_BOUNCE]) and can
 * never index the wrong one when columns are added or moved.
 */
#define COLUMNS(X)						\
	X(MEMFREE,		MEM("MemFree"))			\
	X(LOWFREE,		MEM("LowFree"))			\
	X(HIGHFREE,		MEM("HighFree"))		\
	X(CACHED,		MEM("Cached"))			\
	X(DIRTY,		MEM("Dirty"))			\
	X(WRITEBACK,		MEM("Writeback"))		\
	X(BOUNCE,		MEM("Bounce"))			\
	X(NR_FREE_PAGES,	VM("nr_free_pages"))		\
	X(NR_BOUNCE,		VM("nr_bounce"))		\
	X(PGSCAN_KSWAPD,	VM("pgscan_kswapd"))		\
	X(PGSCAN_DIRECT,	VM("pgscan_direct"))		\
	X(PGSTEAL_KSWAPD,	VM("pgsteal_kswapd"))		\
	X(PGSTEAL_DIRECT,	VM("pgsteal_direct"))		\
	X(ALLOCSTALL_NORMAL,	VM("allocstall_normal"))	\
	X(ALLOCSTALL_MOVABLE,	VM("allocstall_movable"))	\
	X(ALLOCSTALL_DMA,	VM("allocstall_dma"))		\
	X(PGMAJFAULT,		VM("pgmajfault"))		\
	X(SOME_AVG10,		PSI_COL("some", "avg10"))	\
	X(SOME_TOTAL,		PSI_COL("some", "total"))	\
	X(FULL_AVG10,		PSI_COL("full", "avg10"))	\
	X(FULL_TOTAL,		PSI_COL("full", "total"))	\
	X(BOUNCE_HITS,		HIST_COL("bounce_hits"))

#define COL_ENUM(id, def)	COL_##id,
#define COL_DEF(id, def)	[COL_##id] = def,

enum col_id { COLUMNS(COL_ENUM) NR_COLS };

static const struct col cols[NR_COLS] = { COLUMNS(COL_DEF) };

struct source {
	char path[PATH_SIZE];	/* empty: source not configured */
	char buf[BUF_SIZE];
	int ok;			/* read fully during this sample */
};

static struct source srcs[NR_SRC];
static char cells[NR_COLS][CELL_SIZE];

const char *prog_name = "labmon";

void usage(void)
{
	fprintf(stderr,
		"usage: labmon -i INTERVAL_MS -o OUT.csv [-r ROOT] [-b HIST_FILE] [-n MAX_SAMPLES]\n"
		"  -i  sample interval in milliseconds (1..86400000)\n"
		"  -o  output CSV file, '-' for stdout\n"
		"  -r  prefix for /proc paths (default /)\n"
		"  -b  tracing hist file of block:block_bio_bounce (not prefixed)\n"
		"  -n  stop after this many samples (default: until SIGTERM/SIGINT)\n");
}

/*
 * Slurp a file.  read() loops: seq_file hands out at most one buffer
 * page per call, and /proc/vmstat on a HIGHMEM kernel is close to 4 KiB.
 */
static void read_source(struct source *s)
{
	size_t len = 0;
	ssize_t n = 0;
	int fd;

	s->ok = 0;
	if (!s->path[0])
		return;
	fd = open(s->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	while (len < BUF_SIZE - 1) {
		n = read(fd, s->buf + len, BUF_SIZE - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	/* an error or a truncated file is "unknown", not a partial answer */
	if (n < 0 || len == BUF_SIZE - 1)
		return;
	s->buf[len] = '\0';
	s->ok = 1;
}

static const char *next_line(const char *p)
{
	p = strchr(p, '\n');
	return p ? p + 1 : NULL;
}

/* Text after "KEY<sep>" at the start of a line; whole-name match only. */
static const char *find_key(const char *buf, const char *key, char sep)
{
	size_t len = strlen(key);
	const char *p;

	for (p = buf; p && *p; p = next_line(p))
		if (!strncmp(p, key, len) && p[len] == sep)
			return p + len + 1;
	return NULL;
}

/* Unsigned decimal at @p (after blanks) into @cell, else leave it empty. */
static void put_u64(char *cell, const char *p)
{
	unsigned long long v;
	char *end;

	if (!p)
		return;
	p += strspn(p, " \t");
	if (*p < '0' || *p > '9')
		return;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (!errno)
		snprintf(cell, CELL_SIZE, "%llu", v);
}

/* PSI values are copied verbatim ("1.25"), only checked to be numeric. */
static void put_psi(char *cell, const char *buf, const struct col *c)
{
	const char *p = find_key(buf, c->key, ' ');
	const char *eol;
	size_t flen = strlen(c->field), n;

	if (!p)
		return;
	eol = strchrnul(p, '\n');
	while (p < eol) {
		p += strspn(p, " ");
		n = strcspn(p, " \n");
		if (!strncmp(p, c->field, flen)) {
			p += flen;
			n -= flen;
			if (n && n < CELL_SIZE && strspn(p, "0123456789.") == n) {
				memcpy(cell, p, n);
				cell[n] = '\0';
			}
			return;
		}
		p += n;
	}
}

/*
 * Total of a hist trigger file.  "Totals: Hits:" is preferred: it also
 * counts events dropped when the hist map was full.  Without it, sum the
 * per-key "hitcount:" of entry lines (those start with '{'; the comment
 * header may contain "sort=hitcount:").
 */
static void put_hist(char *cell, const char *buf)
{
	unsigned long long sum = 0;
	const char *p, *q, *eol;
	int seen = 0;

	p = find_key(buf, "Totals", ':');
	if (p) {
		q = strstr(p, "Hits:");
		if (q)
			put_u64(cell, q + 5);
		return;
	}
	for (p = buf; p && *p; p = next_line(p)) {
		if (*p != '{')
			continue;
		eol = strchrnul(p, '\n');
		q = strstr(p, "hitcount:");
		if (!q || q > eol)
			continue;
		sum += strtoull(q + 9, NULL, 10);
		seen = 1;
	}
	if (seen)
		snprintf(cell, CELL_SIZE, "%llu", sum);
}

static void sample(void)
{
	const struct col *c;
	size_t i;

	for (i = 0; i < NR_SRC; i++)
		read_source(&srcs[i]);
	for (i = 0; i < NR_COLS; i++) {
		c = &cols[i];
		cells[i][0] = '\0';
		if (!srcs[c->src].ok)
			continue;
		if (c->src == MEMINFO)
			put_u64(cells[i], find_key(srcs[MEMINFO].buf, c->key, ':'));
		else if (c->src == VMSTAT)
			put_u64(cells[i], find_key(srcs[VMSTAT].buf, c->key, ' '));
		else if (c->src == PSI)
			put_psi(cells[i], srcs[PSI].buf, c);
		else
			put_hist(cells[i], srcs[HIST].buf);
	}
	/*
	 * Kernels that dropped NR_BOUNCE (bounce buffering removed in 2025)
	 * still print a hard-wired "Bounce: 0 kB"; that 0 is not a measurement.
	 */
	if (!cells[COL_NR_BOUNCE][0])
		cells[COL_BOUNCE][0] = '\0';
}

static int write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* One line per write(): every line reaches the kernel before the next. */
static int emit(int fd, int64_t start)
{
	char line[LINE_SIZE];
	size_t i;
	int len;

	sample();
	len = snprintf(line, sizeof(line), "%lld",
		       (long long)((now_ns() - start) / NSEC_PER_MSEC));
	for (i = 0; i < NR_COLS; i++)
		len += snprintf(line + len, sizeof(line) - len, ",%s", cells[i]);
	line[len++] = '\n';
	return write_all(fd, line, len);
}

static int emit_header(int fd)
{
	char line[LINE_SIZE];
	size_t i;
	int len;

	len = snprintf(line, sizeof(line), "t_ms");
	for (i = 0; i < NR_COLS; i++)
		len += snprintf(line + len, sizeof(line) - len, ",%s", cols[i].name);
	line[len++] = '\n';
	return write_all(fd, line, len);
}

static void set_path(enum src s, const char *root, const char *rel)
{
	if (snprintf(srcs[s].path, PATH_SIZE, "%s%s", root, rel) >= PATH_SIZE)
		die_usage("path too long: %s", root);
}

int main(int argc, char **argv)
{
	const char *out = NULL, *root = "/", *hist = NULL;
	unsigned long interval = 0, max = 0, n = 0;
	char prefix[PATH_SIZE];
	int64_t start, next;
	size_t len;
	sigset_t set;
	int opt, fd;

	while ((opt = getopt(argc, argv, ":i:o:r:b:n:h")) != -1) {
		switch (opt) {
		case 'i':
			interval = parse_num(optarg, "interval", 1, 86400000);
			break;
		case 'o':
			out = optarg;
			break;
		case 'r':
			root = optarg;
			break;
		case 'b':
			hist = optarg;
			break;
		case 'n':
			max = parse_num(optarg, "sample count", 1, 1000000000);
			break;
		default:
			common_option(opt);
		}
	}
	no_more_args(argc, argv);
	if (!interval)
		die_usage("-i INTERVAL_MS is required");
	if (!out || !*out)
		die_usage("-o OUT.csv is required");

	/* "/" and "/x/" must not yield "//proc" or "/x//proc" */
	len = strlen(root);
	while (len && root[len - 1] == '/')
		len--;
	if (len >= PATH_SIZE)
		die_usage("path too long: %s", root);
	memcpy(prefix, root, len);
	prefix[len] = '\0';
	set_path(MEMINFO, prefix, "/proc/meminfo");
	set_path(VMSTAT, prefix, "/proc/vmstat");
	set_path(PSI, prefix, "/proc/pressure/memory");
	if (hist)
		set_path(HIST, "", hist);

	setup_signals(&set);
	fd = 1;
	if (strcmp(out, "-"))
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "labmon: cannot open %s: %s\n", out, strerror(errno));
		return 1;
	}
	if (emit_header(fd))
		goto write_err;

	start = next = now_ns();
	for (;;) {
		if (emit(fd, start))
			goto write_err;
		if (max && ++n >= max)
			break;
		next += interval * NSEC_PER_MSEC;
		/* after an overrun, sample at once rather than catch up */
		if (next < now_ns())
			next = now_ns();
		if (wait_until(&set, next))
			break;
	}
	if (fd != 1 && close(fd))
		goto write_err;
	return 0;

write_err:
	fprintf(stderr, "labmon: write %s: %s\n", out, strerror(errno));
	return 1;
}
