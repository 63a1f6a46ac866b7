// SPDX-License-Identifier: GPL-2.0
/*
 * divtrace: a QEMU TCG plugin that writes a boot's fingerprint, so that
 * two boots of one bundle can be compared and the first place where they
 * part named (bench/diverge). Under -icount with one vCPU a guest is a
 * pure function of its inputs; two boots part only where the host gives
 * them something at another instruction: an interrupt, or a value a
 * device returns.
 *
 * Arguments (-plugin divtrace.so,out=FILE,map=FILE[,every=N][,from=N,to=N]
 *           [,kbase=N]):
 *   out    the trace it writes (below); created, truncated
 *   map    the kernel's System.map (text symbols)
 *   every  instructions between checkpoints (default 1000000)
 *   from, to  also write every function entry with a count in [from, to):
 *          where a first pass found the boots part, a second names the
 *          first function they run apart
 *   kbase  the lowest kernel address (default 0xc0000000)
 *
 * What it follows: the exact count of executed instructions (one inline
 * add per instruction, as insnprof), and the kernel's function entries,
 * the translated blocks that start at a symbol's first byte. Those do
 * not depend on how QEMU happens to split blocks (it splits them at
 * -icount deadlines, which move with the host), so neither does the hash
 * of their sequence.
 *
 * Output, text:
 *   divtrace 1 every=N kbase=0x...
 *   cp COUNT HASH SYM   at each multiple COUNT of N: the hash of every
 *                       function entry before it (FNV-1a of their
 *                       addresses and counts), and the last function
 *                       entered ("-": none yet; the boot code below
 *                       kbase, the decompressor, has no symbols)
 *   fn COUNT SYM        a function entry in [from, to)
 *   irq COUNT ENTRY HANDLER
 *                       an asynchronous entry at COUNT: ENTRY is the
 *                       entry stub (irq_entries_start+0xOFF: vector
 *                       0x20 + OFF / 8; or an asm_sysvec_* vector);
 *                       HANDLER the first function entered after
 *                       __handle_irq_event_percpu (the device's
 *                       handler), "-" for system vectors
 *   mark COUNT open|close ID
 *                       insnmark's window markers (the lab's jobs)
 *   end COUNT HASH      when QEMU exits
 * Counts and hashes are exact with one vCPU only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

#include "ksyms.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define FNV_OFFSET	0xcbf29ce484222325ull
#define FNV_PRIME	0x100000001b3ull

/* what a kernel symbol is to the trace */
enum kind {
	K_PLAIN,
	K_IRQ_STUBS,	/* irq_entries_start, spurious_entries_start */
	K_SYSVEC,	/* asm_sysvec_*: local APIC vectors */
	K_IRQ_EVENT,	/* __handle_irq_event_percpu: the handler comes next */
};

static struct ksym *syms;	/* sorted by addr */
static enum kind *kinds;	/* of each symbol */
static size_t nsyms;
static uint64_t kbase = 0xc0000000u;
static uint64_t every = 1000000;
static uint64_t insns;		/* every instruction run, inline */
static uint64_t hash = FNV_OFFSET;
static uint64_t next_cp;
static uint64_t from, to;
static size_t last_sym = (size_t)-1;
static FILE *out;

/* an interrupt whose handler is not known yet */
static struct {
	int state;		/* 0 none; 1 entered; 2 in the irq event */
	uint64_t count;
	size_t sym;
	uint64_t off;
} pending;

static enum kind kind_of(const char *name)
{
	if (!strcmp(name, "irq_entries_start") ||
	    !strcmp(name, "spurious_entries_start"))
		return K_IRQ_STUBS;
	if (!strncmp(name, "asm_sysvec_", 11))
		return K_SYSVEC;
	if (!strcmp(name, "__handle_irq_event_percpu"))
		return K_IRQ_EVENT;
	return K_PLAIN;
}

/* the symbols of System.map path and their kinds: 0, or -1 for none */
static int load_map(const char *path)
{
	size_t i;

	if (ksyms_load(path, kbase, 0, &syms, &nsyms) || !nsyms)
		return -1;
	kinds = malloc(nsyms * sizeof(*kinds));
	if (!kinds)
		return -1;
	for (i = 0; i < nsyms; i++)
		kinds[i] = kind_of(syms[i].name);
	return 0;
}

/* index of the symbol holding vaddr, nsyms for none */
static size_t symbol_of(uint64_t vaddr)
{
	return ksyms_find(syms, 0, nsyms, vaddr);
}

static void mix(uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++) {
		hash ^= (v >> (8 * i)) & 0xff;
		hash *= FNV_PRIME;
	}
}

static void flush_pending(const char *handler)
{
	if (!pending.state)
		return;
	fprintf(out, "irq %" PRIu64 " %s+0x%" PRIx64 " %s\n", pending.count,
		syms[pending.sym].name, pending.off, handler);
	pending.state = 0;
}

/* a block that starts a function, or an entry stub, runs */
static void on_entry(unsigned int vcpu, void *udata)
{
	uint64_t vaddr = (uint64_t)(uintptr_t)udata;
	size_t s = symbol_of(vaddr);
	enum kind kind = kinds[s];

	while (insns >= next_cp) {
		fprintf(out, "cp %" PRIu64 " %016" PRIx64 " %s\n", next_cp, hash,
			last_sym < nsyms ? syms[last_sym].name : "-");
		next_cp += every;
	}
	mix(vaddr);
	mix(insns);
	last_sym = s;
	if (insns >= from && insns < to)
		fprintf(out, "fn %" PRIu64 " %s+0x%" PRIx64 "\n", insns,
			syms[s].name, vaddr - syms[s].addr);

	if (kind == K_IRQ_STUBS || kind == K_SYSVEC) {
		flush_pending("-");
		pending.state = 1;
		pending.count = insns;
		pending.sym = s;
		pending.off = vaddr - syms[s].addr;
		if (kind == K_SYSVEC)
			flush_pending("-");
	} else if (kind == K_IRQ_EVENT) {
		if (pending.state == 1)
			pending.state = 2;
	} else if (pending.state == 2 && vaddr == syms[s].addr) {
		flush_pending(syms[s].name);
	}
}

static void on_marker(unsigned int vcpu, void *udata)
{
	uint32_t mark = (uint32_t)(uintptr_t)udata;

	fprintf(out, "mark %" PRIu64 " %s %u\n", insns,
		(mark & MARK_KIND) == MARK_OPEN ? "open" : "close",
		mark & MARK_ID);
	fflush(out);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	uint64_t pc = qemu_plugin_tb_vaddr(tb);

	if (pc >= kbase) {
		size_t s = symbol_of(pc);

		/* a function's first byte, or anywhere in an entry stub */
		if (s < nsyms && (pc == syms[s].addr ||
				  kinds[s] == K_IRQ_STUBS))
			qemu_plugin_register_vcpu_tb_exec_cb(tb, on_entry,
				QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)pc);
	}
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		qemu_plugin_register_vcpu_insn_exec_inline(insn,
			QEMU_PLUGIN_INLINE_ADD_U64, &insns, 1);
		insnmark_register(insn, kbase, on_marker);
	}
}

static void on_qemu_exit(qemu_plugin_id_t id, void *udata)
{
	flush_pending("-");
	fprintf(out, "end %" PRIu64 " %016" PRIx64 "\n", insns, hash);
	fclose(out);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *outpath = NULL, *map = NULL;
	const struct plugin_opt opts[] = {
		{ "every", NULL, &every },
		{ "from", NULL, &from },
		{ "to", NULL, &to },
		{ NULL, NULL, NULL },
	};

	if (plugin_args(argc, argv, &outpath, &map, &kbase, opts) ||
	    !outpath || !map || !every)
		goto bad;
	if (load_map(map)) {
		fprintf(stderr, "divtrace: cannot read symbols from %s\n", map);
		return -1;
	}
	out = plugin_start(id, "divtrace", outpath, on_translate, on_qemu_exit);
	if (!out)
		return -1;
	next_cp = every;
	fprintf(out, "divtrace 1 every=%" PRIu64 " kbase=0x%" PRIx64
		" vcpus=%d\n", every, kbase, plugin_vcpus(info));
	return 0;
bad:
	fprintf(stderr, "divtrace: usage: out=FILE,map=SYSTEM_MAP[,every=N][,from=N,to=N][,kbase=ADDR]\n");
	return -1;
}
