// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * One round of the secure-heap figures, for bench/openssl-secure-heap.sh:
 * ns per CRYPTO_secure_malloc(32) + CRYPTO_secure_free() pair, and
 * operations per second of EC P-256 key generation, ECDSA P-256 signing and
 * RSA-2048 signing (whose private keys live in the secure heap).
 *
 *   openssl-secure-heap [--init]
 *
 * --init makes OpenSSL's own secure heap first (1 MiB, 16-byte blocks);
 * without it and without the shim preloaded, "secure" memory is malloc's.
 * Prints "name value" lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#define PAIRS		200000
#define OPS_SECONDS	0.25

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double ns_per_pair(void)
{
	double start = now();

	for (int i = 0; i < PAIRS; i++) {
		void *p = OPENSSL_secure_malloc(32);

		if (!p) {
			fprintf(stderr, "openssl-secure-heap: CRYPTO_secure_malloc(32) failed\n");
			exit(1);
		}
		/* Touched, as a key would be: the compiler cannot drop the pair. */
		*(volatile char *)p = (char)i;
		OPENSSL_secure_free(p);
	}
	return (now() - start) * 1e9 / PAIRS;
}

static EVP_PKEY *keygen(const char *type)
{
	EVP_PKEY *key = strcmp(type, "EC") ? EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048) :
					     EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");

	if (!key) {
		fprintf(stderr, "openssl-secure-heap: %s key generation failed\n", type);
		exit(1);
	}
	return key;
}

static double keygens_per_sec(void)
{
	double start = now(), t;
	long n = 0;

	do {
		EVP_PKEY_free(keygen("EC"));
		n++;
	} while ((t = now() - start) < OPS_SECONDS);
	return (double)n / t;
}

static double signs_per_sec(const char *type)
{
	static const unsigned char msg[] = "mmkit secret memory";
	EVP_PKEY *key = keygen(type);
	unsigned char sig[512];
	double start = now(), t;
	long n = 0;

	do {
		EVP_MD_CTX *md = EVP_MD_CTX_new();
		size_t len = sizeof(sig);

		if (!md || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) != 1 ||
		    EVP_DigestSign(md, sig, &len, msg, sizeof(msg)) != 1) {
			fprintf(stderr, "openssl-secure-heap: %s signing failed\n", type);
			exit(1);
		}
		EVP_MD_CTX_free(md);
		n++;
	} while ((t = now() - start) < OPS_SECONDS);
	EVP_PKEY_free(key);
	return (double)n / t;
}

int main(int argc, char **argv)
{
	if (argc > 2 || (argc == 2 && strcmp(argv[1], "--init"))) {
		fprintf(stderr, "usage: openssl-secure-heap [--init]\n");
		return 2;
	}
	/* 2 is a heap that could not be locked: still OpenSSL's heap, measured. */
	if (argc == 2 && !CRYPTO_secure_malloc_init(1 << 20, 16)) {
		fprintf(stderr, "openssl-secure-heap: CRYPTO_secure_malloc_init failed\n");
		return 1;
	}
	printf("alloc_free_32_ns %.1f\n", ns_per_pair());
	printf("ec_p256_keygen_per_s %.1f\n", keygens_per_sec());
	printf("ecdsa_p256_sign_per_s %.1f\n", signs_per_sec("EC"));
	printf("rsa2048_sign_per_s %.1f\n", signs_per_sec("RSA"));
	return 0;
}
