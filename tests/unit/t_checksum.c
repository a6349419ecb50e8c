/* Checked payloads (the window feature "checksum").
 *
 * The sum: CRC-32C of the standard check string, and the fast paths (the
 * processor's instruction, three thirds side by side, folding by carry-less
 * multiplies where the processor has them and the same buffers without it,
 * the copy that sums, the tables any processor runs) equal to the
 * byte-at-a-time definition over every length across their thresholds.
 * What it promises over an entry of 64 bytes: every error of 1 and 2 bits,
 * a million of 3 bits, and every burst up to 32 bits change the check.
 *
 * The queue: a window formatted with checksums says so (its incompatible
 * feature bit); a message whose payload, size or check was flipped in the
 * ring is never handed over: smq_receive and smq_peek return SMQ_EPAYLOAD
 * for it naming its size and sender, take it off the ring (the next one
 * comes), write nothing past its size, and count it in the queue's
 * corrupt count, not in its received one.  Messages of 0 bytes and of a
 * whole 64 KiB entry go through.  Without the feature the same flip is
 * delivered as good: what checksums are for.  Messages and a loan's
 * pieces either side of the length from which the sender sums first and
 * copies after arrive whole. */
#include "testint.h"
#include "testlib.h"

static uint64_t rng = 0xc4c32c;

static void sums(const char *way)
{
	static uint8_t src[3 * 8192 * 2 + 200], dst[sizeof(src) + 16];

	CHECK(smq_crc32c(0, "123456789", 9) == 0xe3069283u);
	CHECK(smq_crc32c_bitwise(0, "123456789", 9) == 0xe3069283u);
	CHECK(smq_crc32c_copy(0, dst, "123456789", 9) == 0xe3069283u);
	CHECK(!memcmp(dst, "123456789", 9));
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)test_rand(&rng);
	/* every length to 1 KiB, then steps across 3 x 256 and 3 x 8192 */
	for (size_t n = 0; n < sizeof(src) - 8; n += n < 1024 ? 1 : 61) {
		size_t off = n % 7;
		uint32_t want = smq_crc32c_bitwise(0x1234, src + off, n);
		memset(dst, 0, sizeof(dst));
		if (smq_crc32c(0x1234, src + off, n) != want)
			FAIL("CRC-32C of %zu bytes (%s) differs from the "
			     "definition", n, way);
		if (smq_crc32c_copy(0x1234, dst + 3, src + off, n) != want)
			FAIL("the copying CRC-32C of %zu bytes (%s) differs", n,
			     way);
		if (memcmp(dst + 3, src + off, n) || dst[2] || dst[3 + n])
			FAIL("the copying CRC-32C (%s) copied %zu bytes wrong",
			     way, n);
		if (smq_crc32c_portable(0x1234, NULL, src + off, n) != want ||
		    smq_crc32c_portable(0x1234, dst, src + off, n) != want)
			FAIL("the portable CRC-32C of %zu bytes differs", n);
		/* an entry's check: size and signature, little-endian, then
		 * the payload */
		uint8_t head[12];
		uint64_t sig = test_rand(&rng);
		for (int i = 0; i < 4; i++)
			head[i] = (uint8_t)(n >> 8 * i);
		for (int i = 0; i < 8; i++)
			head[4 + i] = (uint8_t)(sig >> 8 * i);
		want = smq_crc32c_bitwise(smq_crc32c_bitwise(0, head, 12),
					  src + off, n);
		if (smq_entry_check((uint32_t)n, sig, NULL, src + off, n) != want ||
		    smq_entry_check((uint32_t)n, sig, dst, src + off, n) != want)
			FAIL("an entry's check of %zu bytes (%s) differs from "
			     "the definition", n, way);
		/* a loan's: the payload summed apart from 0, in two pieces,
		 * joined to its header at the end */
		size_t half = n / 3;
		uint32_t reg = ~smq_crc32c(~0u, src + off, half);
		reg = ~smq_crc32c(~reg, src + off + half, n - half);
		if (smq_entry_check_join((uint32_t)n, sig, reg, n) != want)
			FAIL("a loan's check of %zu bytes differs from the "
			     "definition", n);
	}
}

/* An entry as the check covers it: size, signature, 64 bytes. */
static uint32_t entry_sum(const uint8_t *e)
{
	return smq_crc32c(0, e, 12 + 64);
}

static void flip_bit(uint8_t *e, unsigned bit)
{
	e[bit / 8] ^= (uint8_t)(1u << (bit % 8));
}

/* Random 3-bit errors: up to 10^6, or for a second, whichever ends first,
 * and at least 10^5 (testlib's test_going(); 10^6 take 0.3 s idle). */
#define TRIPLES_MOST 1000000
#define TRIPLES_SECS 1.0
#define TRIPLES_FLOOR 100000

/* Returns the 3-bit errors tried. */
static uint64_t promises(void)
{
	uint8_t e[12 + 64];
	const unsigned bits = sizeof(e) * 8;

	for (size_t i = 0; i < sizeof(e); i++)
		e[i] = (uint8_t)test_rand(&rng);
	uint32_t good = entry_sum(e);
	for (unsigned a = 0; a < bits; a++) {
		flip_bit(e, a);
		if (entry_sum(e) == good)
			FAIL("a flip of bit %u goes unseen", a);
		for (unsigned b = a + 1; b < bits; b++) {
			flip_bit(e, b);
			if (entry_sum(e) == good)
				FAIL("flips of bits %u and %u go unseen", a, b);
			flip_bit(e, b);
		}
		flip_bit(e, a);
	}
	struct test_budget budget;
	uint64_t tried;
	test_budget(&budget, TRIPLES_SECS, TRIPLES_FLOOR, TRIPLES_MOST);
	for (tried = 0; test_going(&budget, tried); tried++) {
		unsigned a = (unsigned)(test_rand(&rng) % bits), b, c;
		do b = (unsigned)(test_rand(&rng) % bits); while (b == a);
		do c = (unsigned)(test_rand(&rng) % bits); while (c == a || c == b);
		flip_bit(e, a), flip_bit(e, b), flip_bit(e, c);
		if (entry_sum(e) == good)
			FAIL("flips of bits %u, %u and %u go unseen", a, b, c);
		flip_bit(e, a), flip_bit(e, b), flip_bit(e, c);
	}
	/* a burst: first and last bit flipped, any between */
	for (unsigned len = 1; len <= 32; len++)
		for (unsigned at0 = 0; at0 + len <= bits; at0++)
			for (int k = 0; k < 8; k++) {
				uint64_t mid = test_rand(&rng);
				unsigned flipped[32], n = 0;
				for (unsigned j = 0; j < len; j++)
					if (j == 0 || j == len - 1 || (mid >> j & 1))
						flip_bit(e, flipped[n++] = at0 + j);
				if (entry_sum(e) == good)
					FAIL("a burst of %u bits at bit %u goes "
					     "unseen", len, at0);
				while (n)
					flip_bit(e, flipped[--n]);
			}
	CHECK(entry_sum(e) == good);
	return tried;
}

#define ESIZE 256
#define GUARD 32

/* A byte of the entry sender s wrote for sequence seq. */
static uint8_t *entry_byte(struct smq_window *w, unsigned s, uint64_t seq,
			   uint64_t off)
{
	return at(w, lay_entry(&w->lay, 0, s, seq) + off);
}

static void fill(uint8_t *m, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		m[i] = (uint8_t)(seed * 131 + i * 7);
}

/* Receives one message into a guarded buffer; returns the error, checks
 * the guards and, on success, the contents. */
static int take_one(struct smq_queue *q, size_t want_len, unsigned seed,
		    size_t *len, unsigned *from)
{
	uint8_t buf[GUARD + ESIZE + GUARD], m[ESIZE];

	memset(buf, 0xcb, sizeof(buf));
	*len = (size_t)-1;
	*from = 99;
	int err = smq_receive(q, buf + GUARD, ESIZE, len, from, 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		if ((i < GUARD || i >= GUARD + (*len <= ESIZE ? *len : 0)) &&
		    buf[i] != 0xcb)
			FAIL("receive (%s) wrote byte %zu outside the message",
			     smq_strerror(err), i);
	if (!err) {
		fill(m, want_len, seed);
		CHECK(*len == want_len && !memcmp(buf + GUARD, m, want_len));
	}
	return err;
}

static void queue_flips(const char *spec, bool checksum)
{
	struct smq_window *w0, *w1;
	struct smq_queue *rx, *tx;
	struct smq_window_info wi;
	struct smq_queue_info qi;
	uint8_t m[ESIZE];
	size_t len;
	unsigned from;
	const void *data;

	setenv("SMQ_TEST_CHECKSUM", checksum ? "1" : "0", 1);
	w0 = test_init(spec, 2, 1, 16, ESIZE);
	OK(smq_window_info(w0, &wi, sizeof(wi)));
	CHECK(!!(wi.features_incompat & SMQ_FEATURE_CHECKSUM) == checksum);
	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, 0, &rx));
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));

	/* seq 0..5: good, payload flipped, good, size flipped, check
	 * flipped, size flipped past the entry size */
	for (unsigned i = 0; i < 6; i++) {
		fill(m, 100, i);
		OK(smq_send(tx, m, 100, 0));
	}
	*entry_byte(w0, 1, 1, SMQ_ENTRY_HEADER + 40) ^= 0x10;
	*entry_byte(w0, 1, 3, offsetof(struct smq_entry, size)) ^= 0x08;
	*entry_byte(w0, 1, 4, offsetof(struct smq_entry, check) + 2) ^= 0x80;
	*entry_byte(w0, 1, 5, offsetof(struct smq_entry, size) + 2) ^= 0x01;

	OK(take_one(rx, 100, 0, &len, &from));
	if (!checksum) {
		/* the flipped payload passes as good: the limit checksums
		 * lift */
		uint8_t buf[ESIZE];
		EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 0), 0);
		fill(m, 100, 1);
		CHECK(len == 100 && memcmp(buf, m, 100));
		/* a check where the window has none is damage */
		OK(take_one(rx, 100, 2, &len, &from));
		EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 0), 0);
		CHECK(len == 108);
		EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 0),
		       -SMQ_ECORRUPT);
		goto out;
	}
	EXPECT(take_one(rx, 100, 1, &len, &from), -SMQ_EPAYLOAD);
	CHECK(len == 100 && from == 1);
	OK(take_one(rx, 100, 2, &len, &from));
	/* smq_peek refuses the same way, and takes it off */
	EXPECT(smq_peek(rx, &data, &len, &from, 0), -SMQ_EPAYLOAD);
	CHECK(len == 108 && from == 1);
	EXPECT(smq_commit(rx), -ENOMSG);
	EXPECT(take_one(rx, 100, 4, &len, &from), -SMQ_EPAYLOAD);
	CHECK(len == 100);
	EXPECT(take_one(rx, 100, 5, &len, &from), -SMQ_EPAYLOAD);
	CHECK(len == 0 && from == 1);  /* the size it claims is no size */
	EXPECT(smq_receive(rx, m, sizeof(m), &len, &from, 0), -EAGAIN);

	/* a message peeked in place is checked there */
	fill(m, 77, 9);
	OK(smq_send(tx, m, 77, 0));
	OK(smq_peek(rx, &data, &len, &from, 0));
	CHECK(len == 77 && !memcmp(data, m, 77));
	OK(smq_commit(rx));
	OK(smq_send(tx, m, 77, 0));
	*entry_byte(w0, 1, 7, SMQ_ENTRY_HEADER + 76) ^= 0x01;
	EXPECT(smq_peek(rx, &data, &len, &from, 0), -SMQ_EPAYLOAD);
	/* empty messages are summed too */
	OK(smq_send(tx, NULL, 0, 0));
	OK(smq_receive(rx, m, sizeof(m), &len, &from, 0));
	CHECK(len == 0);
	OK(smq_send(tx, NULL, 0, 0));
	*entry_byte(w0, 1, 9, offsetof(struct smq_entry, check)) ^= 0x01;
	EXPECT(smq_receive(rx, m, sizeof(m), &len, &from, 0), -SMQ_EPAYLOAD);

	OK(smq_queue_info(w0, 0, &qi, sizeof(qi)));
	if (qi.corrupt != 6 || qi.received != 4)
		FAIL("after 6 refused and 4 good messages the queue counts "
		     "%llu corrupt and %llu received",
		     (unsigned long long)qi.corrupt,
		     (unsigned long long)qi.received);
out:
	OK(smq_queue_close(tx));
	OK(smq_queue_close(rx));
	OK(smq_close(w1));
	OK(smq_close(w0));
}

/* A whole entry of 64 KiB, through the long path of the sum. */
static void large(const char *spec)
{
	static uint8_t m[65536], got[65536];
	struct smq_window *w0, *w1;
	struct smq_queue *rx, *tx;
	size_t len;

	setenv("SMQ_TEST_CHECKSUM", "1", 1);
	w0 = test_init(spec, 2, 1, 4, sizeof(m));
	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, 0, &rx));
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	for (size_t n = sizeof(m); n > 60000; n -= 1001) {
		fill(m, n, (unsigned)n);
		OK(smq_send(tx, m, n, 0));
		OK(smq_receive(rx, got, sizeof(got), &len, NULL, 0));
		CHECK(len == n && !memcmp(got, m, n));
	}
	OK(smq_send(tx, m, sizeof(m), 0));
	*entry_byte(w0, 1, 6, SMQ_ENTRY_HEADER + 40000) ^= 0x20;
	EXPECT(smq_receive(rx, got, sizeof(got), &len, NULL, 0), -SMQ_EPAYLOAD);
	OK(smq_queue_close(tx));
	OK(smq_queue_close(rx));
	OK(smq_close(w1));
	OK(smq_close(w0));
}

/* Messages and a loan's pieces on either side of the length from which a
 * sender sums the caller's bytes first and then copies them, rather than
 * summing as it copies (SMQ_SUM_FIRST): each arrives whole, its check
 * right, whichever way each piece went. */
static void either_way(const char *spec)
{
	static uint8_t m[3 * SMQ_SUM_FIRST], got[sizeof(m)];
	struct smq_window *w0, *w1;
	struct smq_queue *rx, *tx;
	size_t len, piece[] = { SMQ_SUM_FIRST + 1, 7, SMQ_SUM_FIRST,
				SMQ_SUM_FIRST - 9 };
	void *data;

	setenv("SMQ_TEST_CHECKSUM", "1", 1);
	w0 = test_init(spec, 2, 1, 4, sizeof(m));
	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, 0, &rx));
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	for (size_t n = SMQ_SUM_FIRST - 70; n <= SMQ_SUM_FIRST + 70; n++) {
		fill(m, n, (unsigned)n);
		OK(smq_send(tx, m, n, 0));
		memset(got, 0, sizeof(got));
		OK(smq_receive(rx, got, sizeof(got), &len, NULL, 0));
		CHECK(len == n && !memcmp(got, m, n));
	}
	fill(m, sizeof(m), 3);
	OK(smq_loan(tx, sizeof(m), &data, 0));
	size_t at = 0;
	for (size_t i = 0; i < sizeof(piece) / sizeof(piece[0]); i++) {
		OK(smq_loan_write(tx, at, m + at, piece[i]));
		at += piece[i];
	}
	OK(smq_loan_submit(tx, at));
	memset(got, 0, sizeof(got));
	OK(smq_receive(rx, got, sizeof(got), &len, NULL, 0));
	CHECK(len == at && !memcmp(got, m, at));
	OK(smq_queue_close(tx));
	OK(smq_queue_close(rx));
	OK(smq_close(w1));
	OK(smq_close(w0));
}

int main(void)
{
	const char *spec = test_window();

	/* every way this processor has: with folding, and without it */
	bool folds = smq_crc32c_folding(true);
	sums(folds ? "folded" : "this processor cannot fold");
	CHECK(smq_crc32c_folding(false) == folds);
	sums("not folded");
	smq_crc32c_folding(true);
	printf("checksum: CRC-32C agrees with its definition at every length, "
	       "%s\n", folds ? "folded (VPCLMULQDQ) and not" :
	       "not folded (no VPCLMULQDQ on AVX-512 here)");
	uint64_t triples = promises();
	printf("checksum: every 1- and 2-bit error, %llu 3-bit errors and "
	       "every burst to 32 bits of a 64-byte entry change its check\n",
	       (unsigned long long)triples);
	queue_flips(spec, true);
	printf("checksum: flipped payload, size and check refused "
	       "(SMQ_EPAYLOAD), taken off and counted\n");
	queue_flips(spec, false);
	printf("checksum: without the feature a flipped payload is delivered\n");
	either_way(spec);
	printf("checksum: messages and loan pieces either side of %d bytes, "
	       "summed as copied or first, checked\n", SMQ_SUM_FIRST);
	large(spec);
	printf("checksum: 64 KiB entries summed and checked\n");
	test_work("3-bit errors tried", triples, TRIPLES_FLOOR);
	return 0;
}
