/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * libmmkit-perturb.so's table of large ranges, keyed by address: open
 * addressing with linear probing, in memory of its own (not malloc).  The
 * caller holds its lock.  A header of static functions and variables for
 * its one user, the allocator (perturb.c); perturb-lock.c reaches the
 * table only through the allocator's large_each_overlapping().
 */
#ifndef MMKIT_PRELOAD_LARGE_TABLE_H
#define MMKIT_PRELOAD_LARGE_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#include "perturb.h"

#define SLOT_EMPTY	((uintptr_t)0)
#define SLOT_GONE	((uintptr_t)1)

static struct large *table;
static size_t table_slots, table_used, table_live;
/* Any large range ever: before the first, free() asks no lock. */
static int have_large;

static size_t slot_of(uintptr_t addr, size_t slots)
{
	return (size_t)(((addr >> 12) * 0x9e3779b97f4a7c15ULL) >> 20) & (slots - 1);
}

static struct large *table_find(uintptr_t addr)
{
	size_t i;

	if (!table)
		return NULL;
	for (i = slot_of(addr, table_slots);; i = (i + 1) & (table_slots - 1)) {
		if (table[i].addr == addr)
			return &table[i];
		if (table[i].addr == SLOT_EMPTY)
			return NULL;
	}
}

/* Rebuilds the table with room for twice the live ranges, dropping SLOT_GONE. */
static int table_rebuild(void)
{
	size_t slots = 1024, i, j;
	struct large *fresh;
	void *mem;

	while (slots < 4 * (table_live + 1))
		slots *= 2;
	mem = mmap(NULL, slots * sizeof(*fresh), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return -1;
	fresh = mem;
	for (i = 0; i < table_slots; i++) {
		if (table[i].addr <= SLOT_GONE)
			continue;
		for (j = slot_of(table[i].addr, slots); fresh[j].addr; j = (j + 1) & (slots - 1))
			;
		fresh[j] = table[i];
	}
	if (table)
		munmap(table, table_slots * sizeof(*table));
	table = fresh;
	table_slots = slots;
	table_used = table_live;
	return 0;
}

static int table_insert(const struct large *l)
{
	size_t i;

	if (2 * (table_used + 1) > table_slots && table_rebuild())
		return -1;
	for (i = slot_of(l->addr, table_slots); table[i].addr > SLOT_GONE;
	     i = (i + 1) & (table_slots - 1))
		;
	if (table[i].addr == SLOT_EMPTY)
		table_used++;
	table[i] = *l;
	table_live++;
	__atomic_store_n(&have_large, 1, __ATOMIC_RELEASE);
	return 0;
}

static void table_remove(struct large *slot)
{
	slot->addr = SLOT_GONE;
	table_live--;
}

#endif /* MMKIT_PRELOAD_LARGE_TABLE_H */
