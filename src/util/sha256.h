/* sha256.h - SHA-256 (FIPS 180-4), for the cache keys and source hashes of
 * users' own variant files. */
#ifndef KB_SHA256_H
#define KB_SHA256_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KB_SHA256_BYTES 32
/* Hex digits of a digest, and the buffer that holds them with the NUL. */
#define KB_SHA256_HEX (2 * KB_SHA256_BYTES + 1)

/* A hash in progress; zero-initialising is not enough: kb_sha256_init it. */
typedef struct kb_sha256 {
    uint32_t h[8];
    uint64_t len;          /* bytes hashed so far */
    unsigned char buf[64]; /* the block being filled */
    size_t used;           /* bytes of buf in use */
} kb_sha256;

void kb_sha256_init(kb_sha256 *s);
/* Adds n bytes at p (p may be NULL when n is 0). */
void kb_sha256_update(kb_sha256 *s, const void *p, size_t n);
/* Finishes the hash into out; s must be initialised again to be reused. */
void kb_sha256_final(kb_sha256 *s, unsigned char out[KB_SHA256_BYTES]);
/* out = lowercase hex of the digest, NUL-terminated. */
void kb_sha256_hex(const unsigned char digest[KB_SHA256_BYTES], char out[KB_SHA256_HEX]);
/* The hex digest of n bytes at p into out. */
void kb_sha256_of(const void *p, size_t n, char out[KB_SHA256_HEX]);

#ifdef __cplusplus
}
#endif
#endif
