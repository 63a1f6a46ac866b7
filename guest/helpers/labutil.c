// SPDX-License-Identifier: GPL-2.0
/*
 * Shared by labmon and memhog, see labutil.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "labutil.h"

int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

int parse_ulong(const char *s, unsigned long min, unsigned long max,
		unsigned long *v)
{
	char *end;

	/* strtoul() would accept " 5", "+5" and wrap "-5" */
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 10);
	if (errno || *end || *v < min || *v > max)
		return -1;
	return 0;
}

static void nop(int sig)
{
	(void)sig;
}

/*
 * Stop signals are blocked and taken with sigtimedwait(), so a signal can
 * never cut a line or a pass in half, and no wakeup is lost.  The handler
 * replaces a SIG_IGN inherited from a non-interactive shell's "&": POSIX
 * leaves it open whether a blocked but ignored signal is kept pending.
 */
void setup_signals(sigset_t *set)
{
	struct sigaction sa = { .sa_handler = nop };

	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigprocmask(SIG_BLOCK, set, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

int wait_until(const sigset_t *set, int64_t deadline)
{
	struct timespec ts;
	int64_t left;

	for (;;) {
		left = deadline - now_ns();
		if (left < 0)
			left = 0;
		/* wake up hourly: keeps tv_sec in range of a 32-bit time_t */
		if (left > 3600 * NSEC_PER_SEC)
			left = 3600 * NSEC_PER_SEC;
		ts.tv_sec = left / NSEC_PER_SEC;
		ts.tv_nsec = left % NSEC_PER_SEC;
		if (sigtimedwait(set, NULL, &ts) >= 0)
			return 1;
		if (errno != EINTR && now_ns() >= deadline)
			return 0;
	}
}

void die_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", prog_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	usage();
	exit(2);
}

void common_option(int opt)
{
	if (opt == 'h') {
		usage();
		exit(0);
	}
	if (opt == ':')
		die_usage("option -%c needs an argument", optopt);
	die_usage("unknown option -%c", optopt);
}

void no_more_args(int argc, char **argv)
{
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
}

unsigned long parse_num(const char *s, const char *what,
			unsigned long min, unsigned long max)
{
	unsigned long v;

	if (parse_ulong(s, min, max, &v))
		die_usage("invalid %s '%s'", what, s);
	return v;
}
