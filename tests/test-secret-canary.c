// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Secret memory, the canaries: SipHash-2-4 as its authors define it, and
 * a canary read through a leak, with its slot's address, does not give
 * another slot's: not as it did when the canary was an unkeyed mix of key
 * and address, which can be run backwards to the key.  Both backends.
 */
#include <stdint.h>

#include "harness.h"
#include "secret-backends.h"
#include "mmkit.h"
#include "secret.h"

/* The multiplier of the canary mix before SipHash. */
#define OLD_MIX		0x9e3779b97f4a7c15ULL
#define LOW_BITS	0x0101010101010101ULL

static void test_siphash_vector(void)
{
	/* Key bytes 00..0f, message bytes 00..07: the reference vector for 8 bytes. */
	const uint64_t key[2] = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL };

	T_CASE("SipHash-2-4 of 8 bytes matches the reference vector");
	T_EQ(secret__siphash24(key, 0x0706050403020100ULL), 0x93f5f5799a932462ULL);
}

/* The 8 canary bytes after a @size-byte pooled secret at @p. */
static uint64_t canary_of(const unsigned char *p, size_t size)
{
	uint64_t v;

	memcpy(&v, p + size, sizeof(v));
	return v;
}

static uint64_t old_pattern(uint64_t key, uint64_t addr)
{
	uint64_t x = (key ^ addr) * OLD_MIX;

	return (x ^ (x >> 29)) | LOW_BITS;
}

/*
 * Every key the old transform could have had to give @canary at @addr:
 * the eight low bits it forced to 1 are guessed, the rest run backwards.
 */
static int old_transform_predicts(uint64_t canary, uint64_t addr, uint64_t other_canary,
				  uint64_t other_addr)
{
	uint64_t inv = OLD_MIX, y, x;
	unsigned int guess, bit;
	int i;

	/* The inverse of an odd number modulo 2^64 by Newton's iteration. */
	for (i = 0; i < 6; i++)
		inv *= 2 - OLD_MIX * inv;
	T_EQ(OLD_MIX * inv, 1);
	for (guess = 0; guess < 256; guess++) {
		y = canary & ~LOW_BITS;
		for (bit = 0; bit < 8; bit++)
			y |= (uint64_t)(guess >> bit & 1) << (8 * bit);
		x = y ^ (y >> 29) ^ (y >> 58);
		if (old_pattern((x * inv) ^ addr, other_addr) == other_canary)
			return 1;
	}
	return 0;
}

static void test_unpredictable(void)
{
	unsigned char *p = NULL, *q = NULL;
	uint64_t cp, cq;
	int i;

	T_CASE("canaries: no zero byte, different per slot, not predictable from one another");
	T_EQ(mmkit_secret_alloc((void **)&p, 32, MMKIT_SECRET_QUIET), 0);
	T_EQ(mmkit_secret_alloc((void **)&q, 32, MMKIT_SECRET_QUIET), 0);
	cp = canary_of(p, 32);
	cq = canary_of(q, 32);
	for (i = 0; i < 8; i++)
		T_ASSERT((cp >> (8 * i) & 0xff) && (cq >> (8 * i) & 0xff));
	T_ASSERT(cp != cq);
	/* The self-check of the predictor: it does find what the old transform made. */
	T_ASSERT(old_transform_predicts(old_pattern(0x1234, (uintptr_t)p), (uintptr_t)p,
					old_pattern(0x1234, (uintptr_t)q), (uintptr_t)q));
	if (old_transform_predicts(cp, (uintptr_t)p, cq, (uintptr_t)q))
		T_FAIL("the canary at %p follows from the one at %p by the old transform",
		       (void *)q, (void *)p);
	mmkit_secret_free(p);
	mmkit_secret_free(q);
}

static void suite(void)
{
	test_siphash_vector();
	test_unpredictable();
}

int main(void)
{
	t_secret_backends(suite);
	return T_EXIT_PASS;
}
