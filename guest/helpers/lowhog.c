// SPDX-License-Identifier: GPL-2.0
/*
 * lowhog - fill LOWMEM with unreclaimable page tables down to a target
 * LowFree, without using highmem, and hold it until SIGTERM/SIGINT.
 *
 * Contract:
 *   lowhog -l TARGET_MIB [-H HIGH_KIB] [-t TOL_MIB] [-b BAND_KIB]
 *          [-T SECONDS] [-m MEMINFO] [-n]
 * Once LowFree <= target + tolerance it prints, and flushes, one line
 *   holding LowFree=N kB target=N kB HighFree=N kB children=N pte_pages=N
 * on stdout (HighFree=unknown without a HighFree line), then holds until
 * SIGTERM or SIGINT, kills and reaps its children and exits 0.  While it
 * holds it keeps LowFree within the tolerance of the target (once a
 * second).  SIGUSR1 freezes it: first it brings LowFree within BAND of the
 * target (default: the tolerance), adding page tables or giving single
 * ones back, once a second, until two readings in a row, half a second
 * apart, are in the band (30 s at most); then it prints and flushes
 *   frozen LowFree=N kB target=N kB HighFree=N kB children=N pte_pages=N
 * ("unsettled" before "children" when the band was not reached) and from
 * then on changes nothing and reads nothing, so the dose stays as it was
 * and the hog takes no CPU while a benchmark runs; a child that dies still
 * ends it.  SIGUSR2 thaws it: it keeps LowFree near the target again until
 * the next SIGUSR1 (between jobs, whose own use of lowmem moves LowFree).
 * The band is what makes the dose the same in every kernel: page tables
 * come and go one 4 KiB page at a time.  With -H the dose has two zones:
 * HighFree is held at HIGH_KIB as well (once a second within the
 * tolerance, on SIGUSR1 within the band, both readings in the band
 * together), by writing or dropping pages of a private highmem reserve;
 * the state lines then add "high_target=N kB high_held=N kB" after
 * HighFree.  -n prints
 * the plan and exits 0:
 *   would fill LowFree=N kB target=N kB HighFree=N kB tolerance=N kB
 *   pte_pages=N children=N
 * on one line (children: at least that many).  On any failure (no
 * LowFree, LowFree that does not drop, the time or child bound hit, a
 * child dying, a stop signal before the target) it says why on stderr,
 * kills its children and exits 1.  Bad usage exits 2.
 *
 * How: on i386 without CONFIG_HIGHPTE, user page-table pages come from
 * lowmem.  A read fault on a private anonymous mapping maps the shared
 * zero page, so no data page is spent, but it needs the page-table page
 * covering the address.  Reading one byte every PTE_SPAN therefore costs
 * exactly one lowmem page each.  One process only has ~3 GiB of address
 * space (~768 page-table pages), so children are forked one at a time,
 * each touching what the remaining deficit needs, and LowFree is re-read
 * after each one has reported.  If LowFree does not follow (a HIGHPTE
 * kernel, a 64-bit host), lowhog stops instead of forking on and on.
 * Giving back: a child unmaps its last spans on request (a pipe from the
 * parent); an aligned 4 MiB span unmapped whole frees its page-table page,
 * so lowmem is returned a page at a time, not a child at a time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "labutil.h"

#define KIB		1024UL
#define MIB		(1024 * KIB)

/*
 * Address range one page-table page maps: 1024 4-byte PTEs of 4 KiB pages
 * with the lab's non-PAE 2-level paging (HIGHMEM4G).  On PAE or x86_64 one
 * page maps 2 MiB, so a 4 MiB stride still costs one page per touch there.
 */
#define PTE_SPAN	(4 * MIB)
#define PTE_PAGE_KB	4UL
/* a 3G/1G split leaves a process less than this to map: 768 spans */
#define MAX_SPANS	768UL
/* mmap() this much at a time, halving down to MIN_CHUNK as space runs out */
#define CHUNK		(256 * MIB)
#define MIN_CHUNK	(2 * PTE_SPAN)
/* lowmem a child costs besides its spans: stacks, pgd, task, mm, vmas */
#define CHILD_KB	32UL

#define MAX_CHILDREN	4096
/*
 * Regulating towards a freeze: a reading every half second, a change of
 * the fill at most once a second (LowFree shows a change late: freed
 * pages wait on the per-CPU lists), SETTLE_S seconds at most.
 */
#define HALF_NS		(NSEC_PER_SEC / 2)
#define SETTLE_S	30
/*
 * Stall rule: once STALL_CHILDREN children have run, LowFree must have
 * dropped, since the start, by at least a tenth of the page-table pages
 * touched.  Not more: the per-CPU page lists hand out and take back pages
 * in batches that /proc/meminfo does not count as free, so the drop shows
 * late and unevenly (measured on the lab's 6.12 guest: 3760 kB for
 * 9144 kB over 3 children, 4480 kB for 18288 kB over 6).  Where page
 * tables are not in lowmem at all (HIGHPTE, 64-bit) the drop is ~0.
 */
#define STALL_CHILDREN	6

#define BUF_SIZE	(64 * 1024)

/*
 * The highmem side of the dose (-H).  memhog takes the bulk of highmem
 * once, before lowhog starts; then every child lowhog forks takes a few
 * highmem pages of its own (its stack, its copied data), and jobs leave
 * their own behind, so HighFree ends up MiB off a target set once (by
 * 4-9 MiB on 6.12, by kernel).  lowhog therefore regulates it too, after
 * its children, with a reserve of its own: anonymous pages it writes
 * (they come from highmem while HighFree is above the zone's watermarks)
 * or drops, a page at a time.  MADV_DONTFORK: a child that inherited the
 * reserve would hold page tables for it.  Its size bounds how far
 * HighFree can be moved up again, so memhog leaves about half of it.
 */
#define HIGH_RESERVE	(64 * MIB)
#define PAGE_B		4096UL

static struct {
	char *base;
	unsigned long target_kb;	/* 0: HighFree is not regulated */
	unsigned long pages;		/* written, held */
} high;

struct meminfo {
	unsigned long low_kb;
	unsigned long high_kb;
	int has_high;
};

static const char *meminfo_path = "/proc/meminfo";
/*
 * per child: its pid, the pipes to ask it to give spans back and to hear
 * how many it did (the guest has no sockets: no CONFIG_NET), its spans
 */
static struct kid {
	pid_t pid;
	int cmd, reply;
	unsigned long spans;
} *kids;
static unsigned int nr_kids;

const char *prog_name = "lowhog";

void usage(void)
{
	fprintf(stderr,
		"usage: lowhog -l TARGET_MIB [-H HIGH_KIB] [-t TOL_MIB] [-b BAND_KIB]\n"
		"              [-T SECONDS] [-m MEMINFO] [-n]\n"
		"  -l  fill lowmem until LowFree is at most TARGET_MIB (+ TOL_MIB)\n"
		"  -H  once holding, keep HighFree at HIGH_KIB too (a reserve of\n"
		"      at most 64 MiB of highmem, written or dropped)\n"
		"  -t  tolerance in MiB (default 2)\n"
		"  -b  on SIGUSR1, settle LowFree within BAND_KIB of the target\n"
		"      before freezing (default: the tolerance)\n"
		"  -T  give up if the target is not reached within SECONDS (default 120)\n"
		"  -m  meminfo file to read (default /proc/meminfo)\n"
		"  -n  dry run: print the plan and exit\n"
		"Holds until SIGTERM/SIGINT once it has printed its 'holding' line.\n");
}

static void kill_kids(void)
{
	unsigned int i;

	for (i = 0; i < nr_kids; i++)
		kill(kids[i].pid, SIGKILL);
	for (i = 0; i < nr_kids; i++) {
		while (waitpid(kids[i].pid, NULL, 0) < 0 && errno == EINTR)
			;
		close(kids[i].cmd);
		close(kids[i].reply);
	}
	nr_kids = 0;
}

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	kill_kids();
	va_start(ap, fmt);
	fprintf(stderr, "lowhog: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* "KEY:   N kB" at the start of a line; whole-name match only. */
static int find_kb(const char *buf, const char *key, unsigned long *v)
{
	size_t len = strlen(key);
	const char *p;
	char *end;

	for (p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, len) || p[len] != ':')
			continue;
		p += len + 1;
		p += strspn(p, " \t");
		if (*p < '0' || *p > '9')
			return -1;
		errno = 0;
		*v = strtoul(p, &end, 10);
		return errno ? -1 : 0;
	}
	return -1;
}

static void read_meminfo(struct meminfo *mi)
{
	static char buf[BUF_SIZE];
	size_t len = 0;
	ssize_t n = 0;
	int fd;

	fd = open(meminfo_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("open %s: %s", meminfo_path, strerror(errno));
	while (len < BUF_SIZE - 1) {
		n = read(fd, buf + len, BUF_SIZE - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	if (n < 0)
		die("read %s: %s", meminfo_path, strerror(errno));
	buf[len] = '\0';
	if (find_kb(buf, "LowFree", &mi->low_kb))
		die("no LowFree in %s: not a HIGHMEM kernel, nothing to fill",
		    meminfo_path);
	mi->has_high = !find_kb(buf, "HighFree", &mi->high_kb);
}

static void xwrite(int fd, const void *p, size_t len)
{
	while (write(fd, p, len) < 0 && errno == EINTR)
		;
}

/*
 * Child: map and read-touch up to @want spans, report how many to @fd,
 * then hold the page tables until killed, unmapping its last N spans
 * whenever the parent writes N to @cmd (and answering how many it did on
 * @fd).
 */
static void __attribute__((noreturn)) child(int fd, int cmd, unsigned long want,
					    pid_t parent)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };
	static uintptr_t span[MAX_SPANS];
	size_t chunk = CHUNK;
	unsigned long got = 0, n, i;
	uintptr_t p, end;
	sigset_t set;
	char *base;

	/* never outlive lowhog, whatever kills it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);

	if (want > MAX_SPANS)
		want = MAX_SPANS;
	while (got < want && chunk >= MIN_CHUNK) {
		if (chunk / PTE_SPAN > want - got + 1)
			chunk = (want - got + 1) * PTE_SPAN;
		/* read-only private: never charged to overcommit */
		base = mmap(NULL, chunk, PROT_READ,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (base == MAP_FAILED) {
			chunk /= 2;
			continue;
		}
		/* span-aligned addresses: one distinct page table each */
		p = ((uintptr_t)base + PTE_SPAN - 1) & ~(uintptr_t)(PTE_SPAN - 1);
		end = (uintptr_t)base + chunk;
		for (; p + PTE_SPAN <= end && got < want; p += PTE_SPAN) {
			(void)*(volatile const char *)p;
			span[got++] = p;
		}
	}
	xwrite(fd, &got, sizeof(got));
	while (read(cmd, &n, sizeof(n)) == sizeof(n)) {
		/* a whole aligned span unmapped: its page table is freed */
		for (i = 0; i < n && got; i++)
			munmap((void *)span[--got], PTE_SPAN);
		xwrite(fd, &i, sizeof(i));
	}
	for (;;)
		pause();
}

/* Fork a child for @want spans; return how many it touched. */
static unsigned long spawn(unsigned long want, int64_t deadline)
{
	struct pollfd pfd;
	unsigned long got;
	int fds[2], cmd[2], left;
	ssize_t n;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) || pipe2(cmd, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork child %u: %s", nr_kids + 1, strerror(errno));
	if (!pid) {
		close(fds[0]);
		close(cmd[1]);
		child(fds[1], cmd[0], want, getppid());
	}
	kids[nr_kids++] = (struct kid){ pid, cmd[1], fds[0], 0 };
	close(fds[1]);
	close(cmd[0]);

	pfd.fd = fds[0];
	pfd.events = POLLIN;
	for (;;) {
		left = (deadline - now_ns()) / NSEC_PER_MSEC;
		if (left <= 0)
			die("time bound hit waiting for child %u", nr_kids);
		n = poll(&pfd, 1, left);
		if (n > 0)
			break;
		if (n < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
	}
	n = read(fds[0], &got, sizeof(got));
	if (n != sizeof(got))
		die("child %u died before reporting", nr_kids);
	kids[nr_kids - 1].spans = got;
	return got;
}

/*
 * Give back @pages page tables, from the youngest children: each unmaps
 * spans (a page each); a child left with none goes too (its own lowmem
 * with it).  Returns the page tables given back.
 */
static unsigned long give_back(unsigned long pages)
{
	unsigned long done = 0, n, freed;
	struct kid *k;

	while (done < pages && nr_kids) {
		k = &kids[nr_kids - 1];
		n = pages - done < k->spans ? pages - done : k->spans;
		if (n) {
			freed = 0;
			xwrite(k->cmd, &n, sizeof(n));
			if (read(k->reply, &freed, sizeof(freed)) != sizeof(freed))
				die("child %u died while giving page tables back", nr_kids);
			k->spans -= freed;
			done += freed;
		}
		if (k->spans)
			break;
		/* an empty child: only its own lowmem is left to give */
		kill(k->pid, SIGKILL);
		while (waitpid(k->pid, NULL, 0) < 0 && errno == EINTR)
			;
		close(k->cmd);
		close(k->reply);
		nr_kids--;
		if (done >= pages)
			break;
	}
	return done;
}

static void print_state(const char *what, const struct meminfo *mi,
			unsigned long target_kb)
{
	printf("%s LowFree=%lu kB target=%lu kB ", what, mi->low_kb, target_kb);
	if (mi->has_high)
		printf("HighFree=%lu kB", mi->high_kb);
	else
		printf("HighFree=unknown");
	if (high.target_kb)
		printf(" high_target=%lu kB high_held=%lu kB", high.target_kb,
		       high.pages * PAGE_B / KIB);
}

static unsigned long dist(unsigned long a, unsigned long b)
{
	return a > b ? a - b : b - a;
}

/*
 * Move HighFree half way towards its target: write or drop reserve pages.
 * Half: the pages come from, and go back to, the per-CPU lists first
 * (about 1.7 MiB of them on the lab's 6.12), which HighFree does not
 * count, so it follows a change late and in batches; a whole step each
 * second overshot and swung around the target until the freeze gave up
 * (6 of 48 jobs of a writeback set, up to 632 kB off).
 */
static void regulate_high(const struct meminfo *mi)
{
	unsigned long n;

	if (mi->high_kb > high.target_kb) {
		n = (mi->high_kb - high.target_kb) * KIB / PAGE_B / 2;
		if (n > HIGH_RESERVE / PAGE_B - high.pages)
			n = HIGH_RESERVE / PAGE_B - high.pages;
		for (; n; n--, high.pages++)
			high.base[high.pages * PAGE_B] = 1;
	} else {
		n = (high.target_kb - mi->high_kb) * KIB / PAGE_B / 2;
		if (n > high.pages)
			n = high.pages;
		high.pages -= n;
		if (n && madvise(high.base + high.pages * PAGE_B, n * PAGE_B,
				 MADV_DONTNEED))
			die("madvise: %s", strerror(errno));
	}
}

static void nop(int sig)
{
	(void)sig;
}

/* Move LowFree towards @target_kb, a page table at a time. */
static void regulate(const struct meminfo *mi, unsigned long target_kb,
		     unsigned long *spans)
{
	unsigned long want;

	if (mi->low_kb > target_kb) {
		want = (mi->low_kb - target_kb) / PTE_PAGE_KB;
		if (want > MAX_SPANS)
			want = MAX_SPANS;
		if (want && nr_kids < MAX_CHILDREN)
			*spans += spawn(want, now_ns() + 10 * NSEC_PER_SEC);
	} else {
		*spans -= give_back((target_kb - mi->low_kb) / PTE_PAGE_KB);
	}
}

/*
 * Hold until a stop signal.  SIGCHLD comes only when a child exits
 * (SA_NOCLDSTOP), and then the page tables it held are gone.  Once a
 * second LowFree is read again and kept within the tolerance of the
 * target: it creeps back up as the per-CPU page lists drain (measured on
 * the lab's 6.12 guest: from 50 MiB to 54.5 MiB within seconds of
 * reaching a 48 MiB target), and it overshoots when the fill reads
 * LowFree late (44.9 MiB once, for 48).  SIGUSR1 asks for the freeze: it
 * then reads LowFree every half second and changes the fill at most once
 * a second, towards the band, and freezes once two readings in a row are
 * in it.  Frozen, it only waits: a regulator
 * that adds and kills children while a job runs would be work, and a
 * dose, that differ from one kernel to the next.
 */
static void hold(const sigset_t *set, unsigned long target_kb,
		 unsigned long tol_kb, unsigned long band_kb,
		 unsigned long *spans)
{
	const struct timespec tick = { .tv_sec = 1 };
	const struct timespec half = { .tv_nsec = HALF_NS };
	int sig, frozen = 0, settling = 0, inside = 0;
	int64_t settle_end = 0, acted = 0;
	struct meminfo mi;
	unsigned long off, hoff;

	for (;;) {
		sig = sigtimedwait(set, NULL, frozen ? NULL :
				   settling ? &half : &tick);
		if (sig == SIGTERM || sig == SIGINT)
			return;
		if (sig == SIGCHLD && waitpid(-1, NULL, WNOHANG) > 0)
			die("a child died while holding: lowmem is no longer held");
		if (sig == SIGUSR2) {
			frozen = settling = 0;
			continue;
		}
		if (sig == SIGUSR1 && !frozen && !settling) {
			settling = 1;
			inside = 0;
			acted = 0;
			settle_end = now_ns() + SETTLE_S * NSEC_PER_SEC;
		} else if (frozen || sig >= 0 || errno != EAGAIN) {
			continue;
		}
		read_meminfo(&mi);
		off = dist(mi.low_kb, target_kb);
		hoff = high.target_kb ? dist(mi.high_kb, high.target_kb) : 0;
		if (settling) {
			inside = off <= band_kb && hoff <= band_kb ? inside + 1 : 0;
			if (inside >= 2 || now_ns() >= settle_end) {
				frozen = 1;
				settling = 0;
				print_state("frozen", &mi, target_kb);
				printf(" %schildren=%u pte_pages=%lu\n",
				       inside >= 2 ? "" : "unsettled ", nr_kids,
				       *spans);
				fflush(stdout);
				continue;
			}
			if ((off > band_kb || hoff > band_kb) &&
			    now_ns() - acted >= NSEC_PER_SEC) {
				if (off > band_kb)
					regulate(&mi, target_kb, spans);
				if (hoff > band_kb)
					regulate_high(&mi);
				acted = now_ns();
			}
			continue;
		}
		if (off > tol_kb)
			regulate(&mi, target_kb, spans);
		if (hoff > tol_kb)
			regulate_high(&mi);
	}
}

int main(int argc, char **argv)
{
	unsigned long target_mib = 0, tol_mib = 2, secs = 120, band_kb = 0;
	unsigned long target_kb, goal_kb, deficit, want, got, spans = 0;
	int have_band = 0;
	struct rlimit nofile;
	unsigned long start_kb, dropped;
	struct sigaction sa = { .sa_handler = nop, .sa_flags = SA_NOCLDSTOP };
	int have_target = 0, dry = 0, opt;
	sigset_t stop_set, hold_set;
	struct meminfo mi;
	int64_t deadline;

	while ((opt = getopt(argc, argv, ":l:H:t:b:T:m:nh")) != -1) {
		switch (opt) {
		case 'H':
			high.target_kb = parse_num(optarg, "HighFree target", 1, 1UL << 30);
			break;
		case 'l':
			target_mib = parse_num(optarg, "target", 0, 1UL << 20);
			have_target = 1;
			break;
		case 't':
			tol_mib = parse_num(optarg, "tolerance", 0, 1UL << 20);
			break;
		case 'b':
			band_kb = parse_num(optarg, "band", 0, 1UL << 30);
			have_band = 1;
			break;
		case 'T':
			secs = parse_num(optarg, "time bound", 1, 86400);
			break;
		case 'm':
			meminfo_path = optarg;
			if (!*optarg)
				die_usage("empty -m MEMINFO");
			break;
		case 'n':
			dry = 1;
			break;
		default:
			common_option(opt);
		}
	}
	no_more_args(argc, argv);
	if (!have_target)
		die_usage("-l TARGET_MIB is required");

	target_kb = target_mib * KIB;
	goal_kb = target_kb + tol_mib * KIB;
	if (!have_band)
		band_kb = tol_mib * KIB;
	deadline = now_ns() + (int64_t)secs * NSEC_PER_SEC;

	setup_signals(&stop_set);
	hold_set = stop_set;
	sigaddset(&hold_set, SIGCHLD);
	sigaddset(&hold_set, SIGUSR1);
	sigaddset(&hold_set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &hold_set, NULL);
	sigaction(SIGCHLD, &sa, NULL);

	/* two pipes a child: raise the open-file limit to what is allowed */
	if (!getrlimit(RLIMIT_NOFILE, &nofile)) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	kids = calloc(MAX_CHILDREN, sizeof(*kids));
	signal(SIGPIPE, SIG_IGN);	/* a dead child's pipe: die() says why */
	if (!kids)
		die("out of memory");
	read_meminfo(&mi);
	start_kb = mi.low_kb;
	if (high.target_kb && !mi.has_high)
		die("no HighFree in %s: -H needs a HIGHMEM kernel", meminfo_path);
	if (high.target_kb && !dry) {
		high.base = mmap(NULL, HIGH_RESERVE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (high.base == MAP_FAILED ||
		    madvise(high.base, HIGH_RESERVE, MADV_DONTFORK))
			die("highmem reserve: %s", strerror(errno));
	}

	if (dry) {
		deficit = mi.low_kb > target_kb ? mi.low_kb - target_kb : 0;
		want = mi.low_kb > goal_kb ? deficit / PTE_PAGE_KB : 0;
		print_state("would fill", &mi, target_kb);
		printf(" tolerance=%lu kB pte_pages=%lu children=%lu\n",
		       tol_mib * KIB, want, (want + MAX_SPANS - 1) / MAX_SPANS);
		return 0;
	}

	while (mi.low_kb > goal_kb) {
		/* deadline 0: only takes a stop signal already pending */
		if (wait_until(&stop_set, 0))
			die("stopped at LowFree=%lu kB before the target %lu kB",
			    mi.low_kb, target_kb);
		if (nr_kids == MAX_CHILDREN)
			die("%d children and LowFree still %lu kB", MAX_CHILDREN,
			    mi.low_kb);
		if (now_ns() >= deadline)
			die("time bound of %lu s hit at LowFree=%lu kB", secs,
			    mi.low_kb);
		deficit = mi.low_kb - target_kb;
		want = deficit > CHILD_KB + PTE_PAGE_KB ?
			(deficit - CHILD_KB) / PTE_PAGE_KB : 1;
		if (want > MAX_SPANS)
			want = MAX_SPANS;
		got = spawn(want, deadline);
		if (!got)
			die("child %u could not map any address space", nr_kids);
		spans += got;
		read_meminfo(&mi);

		if (nr_kids < STALL_CHILDREN)
			continue;
		dropped = start_kb > mi.low_kb ? start_kb - mi.low_kb : 0;
		if (10 * dropped < spans * PTE_PAGE_KB)
			die("LowFree fell only %lu kB for %lu kB of page tables over %u children: page tables are not in lowmem here (CONFIG_HIGHPTE? a 64-bit kernel?)",
			    dropped, spans * PTE_PAGE_KB, nr_kids);
	}

	print_state("holding", &mi, target_kb);
	printf(" children=%u pte_pages=%lu\n", nr_kids, spans);
	fflush(stdout);

	hold(&hold_set, target_kb, tol_mib * KIB, band_kb, &spans);
	kill_kids();
	return 0;
}
