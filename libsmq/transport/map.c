/* What every transport does with its mapping, beneath the table of
 * transports (registry.c) that names them: a pool of interrupt vectors,
 * a window mapped as one segment, and unmapping. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "format/format.h"
#include "common.h"

void smq_vectors_init(struct smq_vector_pool *p, unsigned n)
{
	pthread_mutex_init(&p->lock, NULL);
	p->used = 0;
	p->n = n < 64 ? n : 64;
}

int smq_vectors_take(struct smq_vector_pool *p)
{
	int v = -EBUSY;

	pthread_mutex_lock(&p->lock);
	for (unsigned i = 0; i < p->n; i++)
		if (!(p->used & (1ull << i))) {
			p->used |= 1ull << i;
			v = (int)i;
			break;
		}
	pthread_mutex_unlock(&p->lock);
	return v;
}

void smq_vectors_give(struct smq_vector_pool *p, unsigned v)
{
	pthread_mutex_lock(&p->lock);
	if (v < 64)
		p->used &= ~(1ull << v);
	pthread_mutex_unlock(&p->lock);
}

void smq_map_single(struct smq_map *m)
{
	m->nseg = 0;
	if (!m->base || !m->size)
		return;
	m->seg[0] = (struct smq_segment){ 0, m->size, m->base, SMQ_SEG_WINDOW };
	m->nseg = 1;
}

int smq_map_fixed_layout(struct smq_map *m, const struct smq_layout *l,
			 bool grow)
{
	(void)grow;
	if (l->size > m->size)
		return grow ? -ENOSPC : -SMQ_ETOOSMALL;
	smq_map_single(m);
	return 0;
}

/* Every single-window transport maps a file descriptor: unmapping is the
 * same for all. */
void smq_map_retire(struct smq_map *m, void *base, uint64_t size)
{
	if (!base)
		return;
	if (m->nretired == sizeof(m->retired) / sizeof(m->retired[0])) {
		munmap(m->retired[0].base, m->retired[0].size);
		memmove(m->retired, m->retired + 1,
			sizeof(m->retired) - sizeof(m->retired[0]));
		m->nretired--;
	}
	m->retired[m->nretired].base = base;
	m->retired[m->nretired].size = size;
	m->nretired++;
}

void smq_map_close(struct smq_map *m)
{
	for (unsigned i = 0; i < m->nretired; i++)
		munmap(m->retired[i].base, m->retired[i].size);
	m->nretired = 0;
	if (m->base)
		munmap(m->base, m->size);
	if (m->fd >= 0)
		close(m->fd);
	m->base = NULL;
	m->fd = -1;
	m->nseg = 0;
}
