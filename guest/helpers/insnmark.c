// SPDX-License-Identifier: GPL-2.0
/*
 * insnmark - open or close an instruction-count window of the insnprof
 * QEMU plugin (bench/qemu-plugin/insnprof.c), and note when.
 *
 * Contract:
 *   insnmark open|close ID FILE
 * executes the marker instruction of window ID (1..65535) and appends
 * "open ID NS" or "close ID NS" to FILE, NS being CLOCK_MONOTONIC in ns,
 * read before the marker that opens and after the marker that closes, so
 * the span covers the window. Exit 0 on success, 1 if the marker cannot
 * be built or FILE written, 2 on bad usage.
 *
 * The marker is "nopl 0xb0c1NNNN(%eax)" (open) or 0xb0c2NNNN (close): a
 * no-op on any x86, with or without the plugin; the plugin reads the ID
 * from the instruction's bytes, so each marker is written into a fresh
 * executable page and called.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "labutil.h"

#define MARK_OPEN	0xb0c10000u
#define MARK_CLOSE	0xb0c20000u

const char *prog_name = "insnmark";

void usage(void)
{
	fputs("usage: insnmark open|close ID FILE\n"
	      "  executes the window marker ID (1..65535) of the insnprof\n"
	      "  plugin and appends \"open|close ID NS\" to FILE\n", stderr);
}

/* Run "nopl MARK(%eax); ret" from a page of its own. */
static int run_marker(uint32_t mark)
{
	static const uint8_t nopl[] = { 0x0f, 0x1f, 0x80 };
	uint8_t *code;

	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return -1;
	memcpy(code, nopl, sizeof(nopl));
	memcpy(code + sizeof(nopl), &mark, sizeof(mark));
	code[sizeof(nopl) + sizeof(mark)] = 0xc3;	/* ret */
	((void (*)(void))code)();
	munmap(code, 4096);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long id;
	int64_t ns = 0;
	int open;
	FILE *f;

	if (argc != 4)
		die_usage("want 3 arguments, got %d", argc - 1);
	if (!strcmp(argv[1], "open"))
		open = 1;
	else if (!strcmp(argv[1], "close"))
		open = 0;
	else
		die_usage("unknown action '%s'", argv[1]);
	id = parse_num(argv[2], "window id", 1, 65535);
	f = fopen(argv[3], "a");
	if (!f) {
		perror(argv[3]);
		return 1;
	}
	if (open)
		ns = now_ns();
	if (run_marker((open ? MARK_OPEN : MARK_CLOSE) | id)) {
		perror("insnmark: mmap");
		return 1;
	}
	if (!open)
		ns = now_ns();
	fprintf(f, "%s %lu %lld\n", argv[1], id, (long long)ns);
	return fclose(f) ? (perror(argv[3]), 1) : 0;
}
