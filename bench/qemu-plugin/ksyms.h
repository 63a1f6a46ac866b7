/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the lab's QEMU plugins (insnprof.c, divtrace.c) share: their
 * "key=value" arguments, the start of their install (output file,
 * callbacks), the kernel's text symbols from its System.map, and
 * insnmark's window markers. A header, not a plugin: bench/qemu-plugin/
 * build makes a plugin of every *.c there, and rebuilds them all when
 * this file changes.
 */
#ifndef BOUNCELAB_KSYMS_H
#define BOUNCELAB_KSYMS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

/*
 * insnmark's markers: a user-mode "nopl 0x<M>(%eax)" (0f 1f 80 + imm32)
 * whose imm32 is MARK_OPEN | ID opens window ID, MARK_CLOSE | ID closes it
 */
#define MARK_OPEN	0xb0c10000u
#define MARK_CLOSE	0xb0c20000u
#define MARK_KIND	0xffff0000u
#define MARK_ID		0x0000ffffu

/* the imm32 of a marker instruction, 0 for any other */
static inline uint32_t insnmark(struct qemu_plugin_insn *insn)
{
	const uint8_t *b = qemu_plugin_insn_data(insn);
	uint32_t imm;

	if (qemu_plugin_insn_size(insn) != 7 ||
	    b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80)
		return 0;
	memcpy(&imm, b + 3, sizeof(imm));
	if ((imm & MARK_KIND) != MARK_OPEN && (imm & MARK_KIND) != MARK_CLOSE)
		return 0;
	return imm;
}

/*
 * Call on_marker, with the marker's imm32 as its udata, each time insn
 * runs, when insn is a marker in user mode (below kbase).
 */
static inline void insnmark_register(struct qemu_plugin_insn *insn,
				     uint64_t kbase,
				     qemu_plugin_vcpu_udata_cb_t on_marker)
{
	uint32_t mark;

	if (qemu_plugin_insn_vaddr(insn) >= kbase)
		return;
	mark = insnmark(insn);
	if (mark)
		qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker,
						       QEMU_PLUGIN_CB_NO_REGS,
						       (void *)(uintptr_t)mark);
}

/* one "key=value" argument a plugin takes: into *str, or a number into *num */
struct plugin_opt {
	const char *key;
	const char **str;
	uint64_t *num;
};

/*
 * Set the options from the plugin's arguments: out=FILE, map=SYSTEM_MAP
 * and kbase=ADDR, which every plugin takes, into *out, *map and *kbase;
 * the plugin's own into opts (ended by a NULL key; NULL for none). 0, or
 * -1 for an argument without "=" or with a key neither names.
 */
static inline int plugin_args(int argc, char **argv, const char **out,
			      const char **map, uint64_t *kbase,
			      const struct plugin_opt *opts)
{
	const struct plugin_opt common[] = {
		{ "out", out, NULL },
		{ "map", map, NULL },
		{ "kbase", NULL, kbase },
		{ NULL, NULL, NULL },
	};
	const struct plugin_opt *o;
	int i;

	for (i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (!eq)
			return -1;
		*eq = '\0';
		for (o = common; o->key && strcmp(argv[i], o->key); o++)
			;
		if (!o->key && opts)
			for (o = opts; o->key && strcmp(argv[i], o->key); o++)
				;
		if (!o->key)
			return -1;
		if (o->str)
			*o->str = eq + 1;
		else
			*o->num = strtoull(eq + 1, NULL, 0);
	}
	return 0;
}

/*
 * The end of a plugin's install: its output file path opened for writing
 * (created, truncated), on_translate and on_exit registered. The file, or
 * NULL after "NAME: cannot write PATH" on stderr.
 */
static inline FILE *plugin_start(qemu_plugin_id_t id, const char *name,
				 const char *path,
				 qemu_plugin_vcpu_tb_trans_cb_t on_translate,
				 qemu_plugin_udata_cb_t on_exit)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "%s: cannot write %s\n", name, path);
		return NULL;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_exit, NULL);
	return f;
}

/* the vCPUs the guest has (exact counts want one) */
static inline int plugin_vcpus(const qemu_info_t *info)
{
	return info->system_emulation ? info->system.max_vcpus : 1;
}

struct ksym {
	uint64_t addr;
	char *name;
};

static inline int ksym_by_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * The text symbols (t, T, w, W) at or above kbase of System.map path,
 * into *syms sorted by address, after `first` slots left for the caller
 * (*n counts them too): 0, or -1 when the file cannot be read or memory
 * runs out.
 */
static inline int ksyms_load(const char *path, uint64_t kbase, size_t first,
			     struct ksym **syms, size_t *n)
{
	FILE *f = fopen(path, "r");
	char line[512], name[256], type;
	unsigned long long addr;
	size_t cap = first + 1024;
	struct ksym *s;

	if (!f)
		return -1;
	s = calloc(cap, sizeof(*s));
	*n = first;
	while (s && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!strchr("tTwW", type) || addr < kbase)
			continue;
		if (*n == cap) {
			struct ksym *more = realloc(s, 2 * cap * sizeof(*s));

			if (!more) {
				free(s);
				s = NULL;
				break;
			}
			s = more;
			cap *= 2;
		}
		s[(*n)++] = (struct ksym){ addr, strdup(name) };
	}
	fclose(f);
	*syms = s;
	if (!s)
		return -1;
	qsort(s + first, *n - first, sizeof(*s), ksym_by_addr);
	return 0;
}

/* the index in [lo, n) of the symbol holding vaddr, n for none */
static inline size_t ksyms_find(const struct ksym *syms, size_t lo, size_t n,
				uint64_t vaddr)
{
	size_t first = lo, hi = n, mid;

	while (lo < hi) {	/* first symbol above vaddr */
		mid = lo + (hi - lo) / 2;
		if (syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > first ? lo - 1 : n;
}

#endif
