// SPDX-License-Identifier: GPL-2.0
/*
 * insnprof: a QEMU TCG plugin that counts the guest's executed
 * instructions between window markers, user mode in one bin and kernel
 * mode by the kernel symbol each instruction belongs to.
 *
 * It only watches: it adds no instruction to the guest, so under -icount
 * the guest's virtual time, and every number the guest measures, are the
 * same with and without it (tests/boot-test.sh checks this).
 *
 * Arguments (-plugin insnprof.so,out=FILE[,map=FILE][,kbase=N]):
 *   out    the file it writes (below); created, truncated
 *   map    the kernel's System.map: kernel instructions are counted per
 *          text symbol (t, T, w, W); without it, in one bin "[kernel]"
 *   kbase  the lowest kernel address (default 0xc0000000, i386's
 *          PAGE_OFFSET); below it an instruction counts as user mode
 *
 * Markers: a user-mode "nopl 0x<M>(%eax)" (0f 1f 80 + imm32) whose imm32
 * is 0xb0c1_0000 | ID opens window ID, 0xb0c2_0000 | ID closes it
 * (guest/helpers/insnmark.c executes them). Windows do not nest.
 *
 * Output, text, one block per closed window:
 *   insnprof 2 vcpus=N kbase=0x... symbols=N    (first line)
 *   window ID user=U kernel=K                   (counts in the window)
 *   sym NAME COUNT CALLS COPY BYTES             (each symbol with COUNT > 0)
 * COUNT is every instruction run in the symbol; CALLS the runs of its
 * first instruction (its calls); COPY the iterations of "rep movs" among
 * COUNT (one iteration counts as one instruction, for -icount too: a
 * byte-wise copy of 4 KiB is 4096 of them, a dword-wise one 1024); BYTES
 * what those iterations moved, each iteration its operand's width
 * (movsb 1, movsw 2, movsl 4 bytes). A "rep movs" run with a count of
 * 0 still executes once, and counts one iteration of its width.
 * (Format 1, before BYTES, had the same lines without it.)
 *   end ID
 * A window opened but never closed (the guest died) has no block.
 * Counts are exact with one vCPU (the icount clocks); with more, vCPUs
 * race on the counters and the header's vcpus= says so.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

#include "ksyms.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static struct ksym *syms;	/* sorted by addr; syms[0] is the catch-all */
static size_t nsyms;
/*
 * [0] user; [1 + i] instructions of symbol i; [1 + nsyms + i] its calls;
 * [1 + 2 * nsyms + i] its rep movs iterations; [1 + 3 * nsyms + i] the
 * bytes they moved
 */
static uint64_t *counts;
static uint64_t *opened;	/* counts when the window opened */
static size_t ncounts;
static long window = -1;	/* the open window, -1 when none */
static uint64_t kbase = 0xc0000000u;
static FILE *out;

/* the symbol of a kernel address, 0 (the catch-all) for none */
static size_t kernel_symbol(uint64_t vaddr)
{
	size_t s = ksyms_find(syms, 1, nsyms, vaddr);

	return s < nsyms ? s : 0;
}

static void close_window(long id)
{
	uint64_t kernel = 0;
	size_t i;

	for (i = 0; i < nsyms; i++)
		kernel += counts[1 + i] - opened[1 + i];
	fprintf(out, "window %ld user=%" PRIu64 " kernel=%" PRIu64 "\n",
		id, counts[0] - opened[0], kernel);
	for (i = 0; i < nsyms; i++)
		if (counts[1 + i] != opened[1 + i])
			fprintf(out, "sym %s %" PRIu64 " %" PRIu64 " %" PRIu64
				" %" PRIu64 "\n",
				syms[i].name, counts[1 + i] - opened[1 + i],
				counts[1 + nsyms + i] - opened[1 + nsyms + i],
				counts[1 + 2 * nsyms + i] -
				opened[1 + 2 * nsyms + i],
				counts[1 + 3 * nsyms + i] -
				opened[1 + 3 * nsyms + i]);
	fprintf(out, "end %ld\n", id);
	fflush(out);
}

static void on_marker(unsigned int vcpu, void *udata)
{
	uint32_t mark = (uint32_t)(uintptr_t)udata;
	long id = mark & MARK_ID;

	if ((mark & MARK_KIND) == MARK_OPEN) {
		memcpy(opened, counts, ncounts * sizeof(*counts));
		window = id;
	} else if (window == id) {
		close_window(id);
		window = -1;
	}
}

/*
 * the bytes one iteration of a "rep movs" moves (f3 a4: 1; f3 a5: 4, or 2
 * after an operand-size prefix 66; any address-size or segment prefixes
 * allowed), 0 for any other instruction
 */
static unsigned int rep_movs(struct qemu_plugin_insn *insn)
{
	const uint8_t *b = qemu_plugin_insn_data(insn);
	size_t i, n = qemu_plugin_insn_size(insn);
	bool rep = false, word = false;

	for (i = 0; i < n; i++) {
		switch (b[i]) {
		case 0xf3:
			rep = true;
			continue;
		case 0x66:
			word = true;
			continue;
		case 0x67: case 0x26: case 0x2e:
		case 0x36: case 0x3e: case 0x64: case 0x65:
			continue;
		case 0xa4:
			return rep ? 1 : 0;
		case 0xa5:
			return rep ? (word ? 2 : 4) : 0;
		default:
			return 0;
		}
	}
	return 0;
}

/* add n to *counter each time insn runs */
static void add_insn(struct qemu_plugin_insn *insn, uint64_t *counter,
		     uint64_t n)
{
	qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
						   counter, n);
}

/* add one to *counter each time insn runs */
static void count_insn(struct qemu_plugin_insn *insn, uint64_t *counter)
{
	add_insn(insn, counter, 1);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t vaddr = qemu_plugin_insn_vaddr(insn);
		size_t sym = vaddr >= kbase ? kernel_symbol(vaddr) : 0;
		unsigned int width;

		if (vaddr < kbase) {
			count_insn(insn, &counts[0]);
		} else {
			count_insn(insn, &counts[1 + sym]);
			if (sym && vaddr == syms[sym].addr)
				count_insn(insn, &counts[1 + nsyms + sym]);
			width = rep_movs(insn);
			if (width) {
				count_insn(insn, &counts[1 + 2 * nsyms + sym]);
				add_insn(insn, &counts[1 + 3 * nsyms + sym], width);
			}
		}
		insnmark_register(insn, kbase, on_marker);
	}
}

static void on_qemu_exit(qemu_plugin_id_t id, void *udata)
{
	fclose(out);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *outpath = NULL, *map = NULL;

	if (plugin_args(argc, argv, &outpath, &map, &kbase, NULL) || !outpath)
		goto bad;
	/* slot 0, before the map's symbols: the catch-all */
	if (map && ksyms_load(map, kbase, 1, &syms, &nsyms)) {
		fprintf(stderr, "insnprof: cannot read %s\n", map);
		return -1;
	}
	if (!map) {
		syms = malloc(sizeof(*syms));
		nsyms = 1;
	}
	syms[0] = (struct ksym){ 0, "[kernel]" };
	ncounts = 1 + 4 * nsyms;
	counts = calloc(ncounts, sizeof(*counts));
	opened = calloc(ncounts, sizeof(*opened));
	if (!counts || !opened) {
		fprintf(stderr, "insnprof: out of memory for %zu counts\n", ncounts);
		return -1;
	}
	out = plugin_start(id, "insnprof", outpath, on_translate, on_qemu_exit);
	if (!out)
		return -1;
	fprintf(out, "insnprof 2 vcpus=%d kbase=0x%" PRIx64 " symbols=%zu\n",
		plugin_vcpus(info), kbase, nsyms);
	fflush(out);
	return 0;
bad:
	fprintf(stderr, "insnprof: usage: out=FILE[,map=SYSTEM_MAP][,kbase=ADDR]\n");
	return -1;
}
