/* The start of the ivshmem server's shared memory as tests/qemu/t_qemu_vfio.sh
 * uses it: one 64-byte slot per party (the host client, guest A, guest B)
 * in which each says its doorbell ID and how far it has got.  Each party
 * writes only its own slot and reads the others'. */
#ifndef VFIO_MAILBOX_H
#define VFIO_MAILBOX_H

#include <stdint.h>

#define MBOX_MAGIC 0x58424d53u  /* "SMBX" */
enum { MBOX_HOST, MBOX_A, MBOX_B, MBOX_SLOTS };
enum mbox_state {
	MBOX_NONE,
	MBOX_READY,     /* interrupts set up: ring me */
	MBOX_PEERS_DONE,/* the guest-to-guest rounds are over */
	MBOX_FINISHED,
};
/* Vectors: A rings B on 1, B answers A on 2; the host rings a guest on 3,
 * the guest answers the host on 0. */
enum { VEC_HOST_ANSWER = 0, VEC_A_TO_B = 1, VEC_B_TO_A = 2, VEC_HOST_RING = 3,
       VEC_COUNT = 4 };

struct mbox_slot {
	uint32_t magic;
	uint32_t id;
	uint32_t state;
	uint32_t pad[13];
};

static inline volatile struct mbox_slot *mbox_slot(void *shm, int who)
{
	return (volatile struct mbox_slot *)shm + who;
}

static inline void mbox_publish(void *shm, int who, uint32_t id,
				uint32_t state)
{
	volatile struct mbox_slot *s = mbox_slot(shm, who);
	s->id = id;
	s->magic = MBOX_MAGIC;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	s->state = state;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* The state of WHO's slot, 0 while it has not written it. */
static inline uint32_t mbox_state(void *shm, int who)
{
	volatile struct mbox_slot *s = mbox_slot(shm, who);
	uint32_t st = s->state;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return s->magic == MBOX_MAGIC ? st : MBOX_NONE;
}

#endif
