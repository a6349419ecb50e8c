/* smq_copy(), the message path's copy (inline up to 64 bytes): every size
 * from 0 to 200 bytes, at every alignment of source and destination in a
 * line, copies exactly its bytes, and not one byte before or after them
 * (a receiver's buffer may be just the message's size). */
#include "testlib.h"
#include "testint.h"

int main(void)
{
	uint8_t src[512], dst[512];
	uint64_t rs = 0x5eed, cases = 0;

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)test_rand(&rs);
	for (size_t n = 0; n <= 200; n++)
		for (size_t so = 0; so < 64; so += 7)
			for (size_t d0 = 0; d0 < 64; d0 += 5) {
				memset(dst, 0xee, sizeof(dst));
				smq_copy(dst + 64 + d0, src + 64 + so, n);
				for (size_t i = 0; i < sizeof(dst); i++) {
					size_t at = 64 + d0;
					uint8_t want = i >= at && i < at + n
						? src[64 + so + (i - at)] : 0xee;
					if (dst[i] != want)
						FAIL("%zu bytes from +%zu to +%zu: "
						     "byte %zu is 0x%02x, not 0x%02x",
						     n, so, d0, i, dst[i], want);
				}
				cases++;
			}
	test_work("copies", cases, 201 * 10 * 13);
	return 0;
}
