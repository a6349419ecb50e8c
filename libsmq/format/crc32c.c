/* CRC-32C (Castagnoli; as iSCSI, SCTP and ext4 use it): the reflected
 * polynomial 0x82F63B78, the register preset to all ones and inverted at
 * the end.  Over a message shorter than 2^31 bits it detects every error
 * of up to 3 bits, and every burst of up to 32 bits.
 *
 * On x86-64 with SSE4.2 the processor's crc32 instruction does the work.
 * It takes three cycles and can start every cycle, so long buffers are cut
 * in three, summed side by side, and the three sums joined: the sum of A
 * followed by B is the sum of A carried over |B| zero bytes, xored with the
 * sum of B from zero.  Carrying over a fixed length is linear in the 32
 * bits of the sum, so it is four table lookups (tables made once, from 32
 * carried bits).  Where the processor multiplies without carries 512 bits
 * at a time (VPCLMULQDQ on AVX-512), long buffers are folded instead, 256
 * bytes a step (see fold_sum).  Elsewhere, eight bytes at a time by
 * tables. */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include "format.h"

#define POLY 0x82f63b78u
#define SHORT 256          /* each third, for buffers of 768 bytes on */
#define LONG 8192          /* ...of 24 KiB on */

static uint32_t table[8][256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__)
#define HAVE_HW 1
static bool hw, fold;
static uint32_t carry_short[4][256], carry_long[4][256];
/* Folding constants (fold_sum): for each distance, x^(d+31) and x^(d-33)
 * modulo the polynomial, in the register's reflected order. */
#define FOLD_MIN 256       /* buffers of 256 bytes on are folded */
static uint64_t k_step[2], k_64[2], k_48[2], k_32[2], k_16[2];
static bool fold_off;      /* smq_crc32c_folding(false): the tests' */

__attribute__((target("sse4.2")))
static uint32_t hw_zeros(uint32_t s, size_t n)
{
	uint64_t r = s;
	for (size_t i = 0; i < n / 8; i++)
		r = __builtin_ia32_crc32di(r, 0);
	return (uint32_t)r;
}

/* t[k][v]: the sum v << 8k carried over n zero bytes */
static void make_carry(uint32_t t[4][256], size_t n)
{
	uint32_t bit[32];

	for (unsigned b = 0; b < 32; b++)
		bit[b] = hw_zeros(1u << b, n);
	for (unsigned k = 0; k < 4; k++)
		for (unsigned v = 0; v < 256; v++) {
			uint32_t c = 0;
			for (unsigned j = 0; j < 8; j++)
				if (v >> j & 1)
					c ^= bit[8 * k + j];
			t[k][v] = c;
		}
}

static inline uint32_t carry(uint32_t t[4][256], uint32_t s)
{
	return t[0][s & 0xff] ^ t[1][s >> 8 & 0xff] ^ t[2][s >> 16 & 0xff] ^
	       t[3][s >> 24];
}
#endif

#ifdef HAVE_HW
/* x^n modulo the polynomial, in the register's order (its bit 31 is x^0,
 * its bit 0 x^31): multiplying by x shifts it right. */
static uint32_t xpow(unsigned n)
{
	uint32_t r = 1u << 31;

	while (n--)
		r = (r >> 1) ^ (POLY & -(r & 1));
	return r;
}

static void make_fold(uint64_t k[2], unsigned bits)
{
	k[0] = xpow(bits + 31);
	k[1] = xpow(bits - 33);
}
#endif

static void make_tables(void)
{
	for (unsigned i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (POLY & -(c & 1));
		table[0][i] = c;
	}
	for (unsigned i = 0; i < 256; i++)
		for (unsigned k = 1; k < 8; k++)
			table[k][i] = (table[k - 1][i] >> 8) ^
				      table[0][table[k - 1][i] & 0xff];
#ifdef HAVE_HW
	__builtin_cpu_init();
	hw = __builtin_cpu_supports("sse4.2");
	if (hw) {
		make_carry(carry_short, SHORT);
		make_carry(carry_long, LONG);
	}
	fold = hw && __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("avx512vl") &&
	       __builtin_cpu_supports("vpclmulqdq") &&
	       __builtin_cpu_supports("pclmul");
	if (fold) {
		make_fold(k_step, 8 * 256);
		make_fold(k_64, 8 * 64);
		make_fold(k_48, 8 * 48);
		make_fold(k_32, 8 * 32);
		make_fold(k_16, 8 * 16);
	}
#endif
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* The register (not inverted) over n bytes; a copy to dst if not NULL. */
static uint32_t sw_sum(uint32_t s, uint8_t *dst, const uint8_t *p, size_t n)
{
	if (dst)
		memcpy(dst, p, n);
	for (; n >= 8; n -= 8, p += 8) {
		uint64_t v = load64(p) ^ s;  /* little-endian, as the sum reads */
		s = table[7][v & 0xff] ^ table[6][v >> 8 & 0xff] ^
		    table[5][v >> 16 & 0xff] ^ table[4][v >> 24 & 0xff] ^
		    table[3][v >> 32 & 0xff] ^ table[2][v >> 40 & 0xff] ^
		    table[1][v >> 48 & 0xff] ^ table[0][v >> 56];
	}
	while (n--)
		s = (s >> 8) ^ table[0][(s ^ *p++) & 0xff];
	return s;
}

#ifdef HAVE_HW
/* Three thirds of len bytes each, side by side; dst, if not NULL, gets
 * the bytes as they are summed (a copy that reads the source once). */
#define THIRDS(len, t) do {						\
	uint64_t a = s, b = 0, c = 0;					\
	for (size_t i = 0; i < (len); i += 8) {				\
		uint64_t va = load64(p + i), vb = load64(p + (len) + i);	\
		uint64_t vc = load64(p + 2 * (len) + i);		\
		a = __builtin_ia32_crc32di(a, va);			\
		b = __builtin_ia32_crc32di(b, vb);			\
		c = __builtin_ia32_crc32di(c, vc);			\
		if (dst) {						\
			memcpy(dst + i, &va, 8);			\
			memcpy(dst + (len) + i, &vb, 8);		\
			memcpy(dst + 2 * (len) + i, &vc, 8);		\
		}							\
	}								\
	s = carry(t, carry(t, (uint32_t)a) ^ (uint32_t)b) ^ (uint32_t)c; \
	p += 3 * (len);							\
	if (dst)							\
		dst += 3 * (len);					\
	n -= 3 * (len);							\
} while (0)

/* Folding.  Each 128-bit lane of the data, as loaded, is a polynomial
 * whose bit 0 is its highest power (the first bit the sum reads).  Carried
 * d bits further on, a lane is congruent, modulo the polynomial, to its
 * low 64 bits times x^(d+31) plus its high 64 times x^(d-33), each product
 * of a 64-bit and a 32-bit polynomial lining up with the lane d bits on:
 * so four accumulators of 64 bytes fold onto the next 256 bytes with two
 * carry-less multiplies a lane, then onto one another, then their lanes
 * onto the last, and the 16 bytes left have the sum of the whole (leading
 * zeros add nothing to a sum from 0).  The register starts as the first 4
 * bytes xored with it, as the crc32 instruction takes it.  n is a multiple
 * of 256; dst, if not NULL, gets the bytes as they are loaded. */
#define FOLD_T \
	__attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.2")))

FOLD_T static inline __m512i fold_k(const uint64_t k[2])
{
	return _mm512_broadcast_i32x4(_mm_set_epi64x((long long)k[1],
						     (long long)k[0]));
}

/* x carried k's distance on, xored with y */
FOLD_T static inline __m512i fold512(__m512i x, __m512i k, __m512i y)
{
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
					 _mm512_clmulepi64_epi128(x, k, 0x11),
					 y, 0x96);
}

FOLD_T static inline __m128i fold128(__m128i x, const uint64_t k[2])
{
	__m128i kk = _mm_set_epi64x((long long)k[1], (long long)k[0]);

	return _mm_xor_si128(_mm_clmulepi64_si128(x, kk, 0x00),
			     _mm_clmulepi64_si128(x, kk, 0x11));
}

FOLD_T static inline __attribute__((always_inline)) uint32_t
fold_body(uint32_t s, uint8_t *dst, const uint8_t *p, size_t n)
{
	__m512i x0 = _mm512_loadu_si512(p), x1 = _mm512_loadu_si512(p + 64);
	__m512i x2 = _mm512_loadu_si512(p + 128);
	__m512i x3 = _mm512_loadu_si512(p + 192);

	if (dst) {
		_mm512_storeu_si512(dst, x0);
		_mm512_storeu_si512(dst + 64, x1);
		_mm512_storeu_si512(dst + 128, x2);
		_mm512_storeu_si512(dst + 192, x3);
	}
	x0 = _mm512_xor_si512(x0, _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, s));
	__m512i k = fold_k(k_step);
	for (size_t i = 256; i < n; i += 256) {
		__m512i y0 = _mm512_loadu_si512(p + i);
		__m512i y1 = _mm512_loadu_si512(p + i + 64);
		__m512i y2 = _mm512_loadu_si512(p + i + 128);
		__m512i y3 = _mm512_loadu_si512(p + i + 192);
		if (dst) {
			_mm512_storeu_si512(dst + i, y0);
			_mm512_storeu_si512(dst + i + 64, y1);
			_mm512_storeu_si512(dst + i + 128, y2);
			_mm512_storeu_si512(dst + i + 192, y3);
		}
		x0 = fold512(x0, k, y0);
		x1 = fold512(x1, k, y1);
		x2 = fold512(x2, k, y2);
		x3 = fold512(x3, k, y3);
	}
	k = fold_k(k_64);
	x1 = fold512(x0, k, x1);
	x2 = fold512(x1, k, x2);
	x3 = fold512(x2, k, x3);
	__m128i a = _mm_xor_si128(
		_mm512_extracti32x4_epi32(x3, 3),
		_mm_xor_si128(fold128(_mm512_extracti32x4_epi32(x3, 0), k_48),
			      _mm_xor_si128(
				      fold128(_mm512_extracti32x4_epi32(x3, 1),
					      k_32),
				      fold128(_mm512_extracti32x4_epi32(x3, 2),
					      k_16))));
	uint64_t r = __builtin_ia32_crc32di(0, (uint64_t)_mm_cvtsi128_si64(a));
	return (uint32_t)__builtin_ia32_crc32di(r,
					(uint64_t)_mm_extract_epi64(a, 1));
}

FOLD_T static uint32_t fold_sum(uint32_t s, const uint8_t *p, size_t n)
{
	return fold_body(s, NULL, p, n);
}

FOLD_T static uint32_t fold_copy(uint32_t s, uint8_t *dst, const uint8_t *p,
				 size_t n)
{
	return fold_body(s, dst, p, n);
}

__attribute__((target("sse4.2")))
static inline __attribute__((always_inline)) uint32_t
hw_sum_inline(uint32_t s, uint8_t *dst, const uint8_t *p, size_t n)
{
	/* the length first: a small message reads neither flag */
	if (n >= FOLD_MIN && fold && !fold_off) {
		size_t m = n & ~(size_t)255;
		s = dst ? fold_copy(s, dst, p, m) : fold_sum(s, p, m);
		p += m;
		n -= m;
		if (dst)
			dst += m;
	}
	while (n >= 3 * LONG)
		THIRDS(LONG, carry_long);
	while (n >= 3 * SHORT)
		THIRDS(SHORT, carry_short);
	uint64_t r = s;
	for (; n >= 8; n -= 8, p += 8) {
		uint64_t v = load64(p);
		r = __builtin_ia32_crc32di(r, v);
		if (dst) {
			memcpy(dst, &v, 8);
			dst += 8;
		}
	}
	s = (uint32_t)r;
	for (; n; n--, p++) {
		s = __builtin_ia32_crc32qi(s, *p);
		if (dst)
			*dst++ = *p;
	}
	return s;
}

__attribute__((target("sse4.2")))
static uint32_t hw_sum(uint32_t s, const uint8_t *p, size_t n)
{
	return hw_sum_inline(s, NULL, p, n);
}

/* An entry's register: its size and signature (the instruction reads an
 * integer's bytes little-endian, as the format lays them), then its
 * payload. */
__attribute__((target("sse4.2")))
static uint32_t hw_entry(uint32_t size, uint64_t sig, uint8_t *dst,
			 const uint8_t *p, size_t n)
{
	uint64_t r = __builtin_ia32_crc32si(~0u, size);
	r = __builtin_ia32_crc32di(r, sig);
	return dst ? hw_sum_inline((uint32_t)r, dst, p, n)
		   : hw_sum_inline((uint32_t)r, NULL, p, n);
}

__attribute__((target("sse4.2")))
static uint32_t hw_copy(uint32_t s, uint8_t *dst, const uint8_t *p, size_t n)
{
	return hw_sum_inline(s, dst, p, n);
}
#endif

uint32_t smq_crc32c(uint32_t crc, const void *p, size_t n)
{
	pthread_once(&once, make_tables);
#ifdef HAVE_HW
	if (hw)
		return ~hw_sum(~crc, p, n);
#endif
	return ~sw_sum(~crc, NULL, p, n);
}

uint32_t smq_crc32c_copy(uint32_t crc, void *dst, const void *src, size_t n)
{
	pthread_once(&once, make_tables);
#ifdef HAVE_HW
	if (hw)
		return ~hw_copy(~crc, dst, src, n);
#endif
	return ~sw_sum(~crc, dst, src, n);
}

/* The tables alone, whatever the processor has (for the tests). */
uint32_t smq_crc32c_portable(uint32_t crc, void *dst, const void *src,
			     size_t n)
{
	pthread_once(&once, make_tables);
	return ~sw_sum(~crc, dst, src, n);
}

/* For the tests: folding off (the crc32 instruction's three thirds do
 * the long buffers) or on again; whether this processor folds at all. */
bool smq_crc32c_folding(bool on)
{
	pthread_once(&once, make_tables);
#ifdef HAVE_HW
	fold_off = !on;
	return fold;
#else
	(void)on;
	return false;
#endif
}

/* The byte-at-a-time definition, for the tests to hold the others to. */
uint32_t smq_crc32c_bitwise(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;

	crc = ~crc;
	while (n--) {
		crc ^= *b++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (POLY & -(crc & 1));
	}
	return ~crc;
}

/* An entry's check (smq(7), feature checksum): the CRC-32C of its size
 * and its signature, little-endian, 12 bytes, and then of its payload;
 * the payload copied to dst as it is summed, if dst. */
uint32_t smq_entry_check(uint32_t size, uint64_t signature, void *dst,
			 const void *payload, size_t n)
{
	uint8_t h[12];

	pthread_once(&once, make_tables);
#ifdef HAVE_HW
	if (hw)
		return ~hw_entry(size, signature, dst, payload, n);
#endif
	for (int i = 0; i < 4; i++)
		h[i] = (uint8_t)(size >> 8 * i);
	for (int i = 0; i < 8; i++)
		h[4 + i] = (uint8_t)(signature >> 8 * i);
	return ~sw_sum(sw_sum(~0u, NULL, h, sizeof(h)), dst, payload, n);
}

/* Products modulo the CRC-32C polynomial, in the reflected order the
 * register keeps (its top bit is x^0): carrying a register through n zero
 * bytes multiplies it by x^(8n), which squaring builds in log2(n) steps
 * instead of n. */
#define POLY_REFLECTED 0x82f63b78u

static uint32_t poly_mul(uint32_t a, uint32_t b)
{
	uint32_t p = 0;

	for (uint32_t m = 1u << 31; m; m >>= 1) {
		if (a & m)
			p ^= b;
		b = b & 1 ? (b >> 1) ^ POLY_REFLECTED : b >> 1;
	}
	return p;
}

uint32_t smq_crc32c_zeros(uint32_t reg, uint64_t n)
{
	uint32_t x = 1u << 23;  /* x^8: one byte */
	uint32_t r = 1u << 31;  /* x^0 */

	for (; n; n >>= 1) {
		if (n & 1)
			r = poly_mul(r, x);
		x = poly_mul(x, x);
	}
	return poly_mul(r, reg);
}

/* An entry's check from a payload summed apart, from a register of 0, as
 * it was written (a loan): the register of the header carried through the
 * payload's length in zero bytes, joined to the payload's own. */
uint32_t smq_entry_check_join(uint32_t size, uint64_t signature,
			      uint32_t payload_reg, uint64_t n)
{
	uint8_t h[12];

	for (int i = 0; i < 4; i++)
		h[i] = (uint8_t)(size >> 8 * i);
	for (int i = 0; i < 8; i++)
		h[4 + i] = (uint8_t)(signature >> 8 * i);
	uint32_t head = ~smq_crc32c(0, h, sizeof(h));
	return ~(smq_crc32c_zeros(head, n) ^ payload_reg);
}
