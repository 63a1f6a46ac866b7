/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pieces the helpers share: a monotonic clock, number parsing, stop
 * signals (SIGTERM, SIGINT) that are only taken at chosen points, and the
 * usage error.
 */
#ifndef LABUTIL_H
#define LABUTIL_H

#include <signal.h>
#include <stdint.h>

#define NSEC_PER_MSEC	1000000LL
#define NSEC_PER_SEC	1000000000LL

int64_t now_ns(void);

/* Parse a plain decimal in [min, max] into *v; -1 on anything else. */
int parse_ulong(const char *s, unsigned long min, unsigned long max,
		unsigned long *v);

/* Block the stop signals; take them only in wait_until(). */
void setup_signals(sigset_t *set);

/* Sleep until @deadline (now_ns() time); 1 if a stop signal came. */
int wait_until(const sigset_t *set, int64_t deadline);

/*
 * Each program defines its name and its usage text; die_usage() prints
 * "NAME: message", the usage text, and exits 2.
 */
extern const char *prog_name;
void usage(void);
void __attribute__((noreturn, format(printf, 1, 2))) die_usage(const char *fmt, ...);

/* parse_ulong(), or die_usage() naming @what. */
unsigned long parse_num(const char *s, const char *what,
			unsigned long min, unsigned long max);

/* The getopt cases every helper shares: -h, a missing argument, an unknown
 * option (getopt's string starts with ':'); and no operands after them. */
void __attribute__((noreturn)) common_option(int opt);
void no_more_args(int argc, char **argv);

#endif
