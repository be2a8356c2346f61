/*
 * softhca: memory regions and access through their keys (spec §13.3)
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bitops.h"
#include "qemu/cutils.h"
#include "softhca-rdma.h"
#include "trace.h"

#define SOFTHCA_MR_ACCESS       (SHCA_ACCESS_LOCAL_WRITE | \
                                 SHCA_ACCESS_REMOTE_WRITE | \
                                 SHCA_ACCESS_REMOTE_READ | \
                                 SHCA_ACCESS_REMOTE_ATOMIC | \
                                 SHCA_ACCESS_MW_BIND | \
                                 SHCA_ACCESS_FLUSH_GLOBAL | \
                                 SHCA_ACCESS_PHYS)

uint32_t softhca_mr_key(const SofthcaState *s, const SofthcaMr *mr)
{
    return (uint32_t)(mr - s->mrs) << SOFTHCA_KEY_TAG_BITS | mr->tag;
}

/* The lowest free MR index (from 1), or NULL. */
SofthcaMr *softhca_mr_free_slot(SofthcaState *s)
{
    for (uint32_t i = 1; i < SOFTHCA_MR_TABLE; i++) {
        if (!s->mrs[i].valid) {
            return &s->mrs[i];
        }
    }
    return NULL;
}

SofthcaMr *softhca_mr_lookup(SofthcaState *s, uint32_t key)
{
    uint32_t index = key >> SOFTHCA_KEY_TAG_BITS;
    SofthcaMr *mr;

    if (index == 0 || index >= SOFTHCA_MR_TABLE) {
        return NULL;
    }
    mr = &s->mrs[index];
    if (!mr->valid ||
        mr->tag != (key & MAKE_64BIT_MASK(0, SOFTHCA_KEY_TAG_BITS))) {
        return NULL;
    }
    return mr;
}

static bool softhca_mr_access_ok(uint32_t access)
{
    uint32_t needs_write = SHCA_ACCESS_REMOTE_WRITE |
                           SHCA_ACCESS_REMOTE_ATOMIC;

    return !(access & ~SOFTHCA_MR_ACCESS) &&
           (!(access & needs_write) || (access & SHCA_ACCESS_LOCAL_WRITE));
}

/*
 * Check the description of an MR that is not FAST_REG (its PD already
 * checked) and fill in @mr's PD, access, range and pages.  @freed pages
 * are about to be given back: they count as free.  On failure @mr is left
 * as it was.
 */
static uint8_t softhca_mr_describe(SofthcaState *s,
                                   const struct shca_aq_reg_mr *c,
                                   uint32_t freed, SofthcaMr *mr)
{
    static const struct shca_buf_desc no_pages;
    uint32_t access = le32_to_cpu(c->access);
    uint64_t iova = le64_to_cpu(c->iova);
    uint64_t length = le64_to_cpu(c->length);
    uint32_t first_offset = le32_to_cpu(c->first_offset);
    bool phys = access & SHCA_ACCESS_PHYS;
    SofthcaBuf pages = { 0 };

    /* 0 bytes: an MR with pages, that grants 0-byte accesses (spec §13.3) */
    if (!softhca_mr_access_ok(access) || c->rsvd ||
        (length == 0 && phys) || (length && iova + length - 1 < iova)) {
        return SHCA_AQ_BAD_PARAM;
    }
    if (phys ? first_offset || memcmp(&c->pages, &no_pages, sizeof(no_pages))
             : length > SOFTHCA_MAX_MR_SIZE ||
               first_offset >= 1ull << MIN(c->pages.page_shift, 63)) {
        return SHCA_AQ_BAD_PARAM;
    }
    if (!phys) {
        uint8_t status;

        if (le32_to_cpu(c->pages.npages) >
            SOFTHCA_MAX_MR_PAGES - s->mr_pages + freed) {
            return SHCA_AQ_NO_RESOURCES;
        }
        status = softhca_buf_init_list2(s, &pages, &c->pages,
                                        first_offset + length);
        if (status != SHCA_AQ_OK) {
            return status;
        }
    }
    s->mr_pages = s->mr_pages - freed + pages.npages;
    softhca_buf_free(&mr->pages);
    mr->pages = pages;
    mr->pdn = le32_to_cpu(c->pdn);
    mr->access = access;
    mr->iova = iova;
    mr->length = length;
    mr->first_offset = first_offset;
    return SHCA_AQ_OK;
}

/*
 * REG_MR with FAST_REG (spec §13.3): no range and no rights yet, and a
 * DIRECT one-page buffer of 4 KiB that will list up to npages pages.
 */
static uint8_t softhca_mr_reg_fast(SofthcaState *s, SofthcaMr *mr,
                                   const struct shca_aq_reg_mr *c,
                                   uint32_t *key)
{
    const struct shca_buf_desc *d = &c->pages;
    uint64_t list = le64_to_cpu(d->addr);
    uint32_t npages = le32_to_cpu(d->npages);

    if (le32_to_cpu(c->access) != SHCA_ACCESS_FAST_REG || c->iova ||
        c->length || c->first_offset || d->flags != SHCA_BUF_DIRECT ||
        d->page_shift != SOFTHCA_FAST_PAGE_SHIFT_MIN || d->rsvd ||
        npages == 0 || npages > SOFTHCA_MAX_FAST_REG_PAGES) {
        return SHCA_AQ_BAD_PARAM;
    }
    if (!QEMU_IS_ALIGNED(list, SOFTHCA_FAST_LIST_SIZE) ||
        !softhca_dma_ok(s, list, SOFTHCA_FAST_LIST_SIZE)) {
        return SHCA_AQ_BAD_ADDR;
    }
    if (npages > SOFTHCA_MAX_MR_PAGES - s->mr_pages) {
        return SHCA_AQ_NO_RESOURCES;
    }
    s->mr_pages += npages;
    mr->valid = true;
    mr->fast_reg = true;
    mr->fast_valid = false;
    mr->pdn = le32_to_cpu(c->pdn);
    softhca_pd_hold(s, mr->pdn);
    mr->list_addr = list;
    mr->max_pages = npages;
    *key = softhca_mr_key(s, mr);
    trace_softhca_mr_reg(*key, mr->pdn, SHCA_ACCESS_FAST_REG, 0, 0, npages);
    return SHCA_AQ_OK;
}

uint8_t softhca_mr_reg(SofthcaState *s, const struct shca_aq_reg_mr *c,
                       uint32_t *key)
{
    uint32_t pdn = le32_to_cpu(c->pdn);
    uint32_t access = le32_to_cpu(c->access);
    SofthcaMr *mr;
    uint8_t status;

    if (!softhca_pd_ok(s, pdn)) {
        return SHCA_AQ_BAD_HANDLE;
    }
    if ((access & (SHCA_ACCESS_PHYS | SHCA_ACCESS_FAST_REG)) &&
        s->pd_uctx[pdn] != 0) {
        return SHCA_AQ_BAD_PARAM;       /* guest-physical: the kernel's */
    }
    if (access & SHCA_ACCESS_FAST_REG) {
        if (!softhca_has_dgram(s) || c->rsvd) {
            return SHCA_AQ_BAD_PARAM;
        }
        mr = softhca_mr_free_slot(s);
        return mr ? softhca_mr_reg_fast(s, mr, c, key)
                  : SHCA_AQ_NO_RESOURCES;
    }
    mr = softhca_mr_free_slot(s);
    if (!mr) {
        return SHCA_AQ_NO_RESOURCES;
    }
    status = softhca_mr_describe(s, c, 0, mr);
    if (status != SHCA_AQ_OK) {
        return status;
    }
    mr->valid = true;
    softhca_pd_hold(s, pdn);
    *key = softhca_mr_key(s, mr);
    trace_softhca_mr_reg(*key, pdn, access, le64_to_cpu(c->iova),
                         le64_to_cpu(c->length), mr->pages.npages);
    return SHCA_AQ_OK;
}

/* REREG_MR (spec §13.3): the MR keeps its key, not its description. */
uint8_t softhca_mr_rereg(SofthcaState *s, const struct shca_aq_rereg_mr *c)
{
    uint32_t key = le32_to_cpu(c->key);
    SofthcaMr *mr = softhca_mr_lookup(s, key);
    uint32_t pdn = le32_to_cpu(c->mr.pdn);
    uint32_t access = le32_to_cpu(c->mr.access);
    uint32_t old_pdn;
    uint8_t status;

    if (!mr || mr->mw_type || mr->fast_reg ||
        (mr->access & SHCA_ACCESS_PHYS)) {
        return SHCA_AQ_BAD_HANDLE;
    }
    if (!softhca_pd_ok(s, pdn)) {
        return SHCA_AQ_BAD_HANDLE;
    }
    if (c->rsvd || (access & (SHCA_ACCESS_PHYS | SHCA_ACCESS_FAST_REG)) ||
        s->pd_uctx[pdn] != s->pd_uctx[mr->pdn]) {
        return SHCA_AQ_BAD_PARAM;
    }
    if (mr->mws_bound) {
        return SHCA_AQ_BUSY;            /* windows are bound to it */
    }
    old_pdn = mr->pdn;
    status = softhca_mr_describe(s, &c->mr, mr->pages.npages, mr);
    if (status != SHCA_AQ_OK) {
        return status;
    }
    /* the MR moves to its new PD */
    softhca_pd_release(s, old_pdn);
    softhca_pd_hold(s, pdn);
    trace_softhca_mr_rereg(key, pdn, access, mr->iova, mr->length,
                           mr->pages.npages);
    return SHCA_AQ_OK;
}

void softhca_mr_free(SofthcaState *s, SofthcaMr *mr)
{
    uint8_t tag = mr->tag;

    if (mr->valid) {
        softhca_pd_release(s, mr->pdn);
    }
    s->mr_pages -= mr->fast_reg ? mr->max_pages : mr->pages.npages;
    softhca_buf_free(&mr->pages);
    /* The next MR at this index gets another key. */
    *mr = (SofthcaMr) { .tag = tag + 1 };
}

uint8_t softhca_mr_dereg(SofthcaState *s, uint32_t key)
{
    uint32_t index = key >> SOFTHCA_KEY_TAG_BITS;
    SofthcaMr *mr = softhca_mr_lookup(s, key);

    /*
     * Software chooses a fast-registration MR's tag, and a REG_MR WQE that
     * failed or never ran leaves it unsure of the tag: the index decides.
     */
    if (!mr && index > 0 && index < SOFTHCA_MR_TABLE &&
        s->mrs[index].valid && s->mrs[index].fast_reg) {
        mr = &s->mrs[index];
    }
    if (!mr || mr->mw_type) {
        return SHCA_AQ_BAD_HANDLE;
    }
    if (mr->mws_bound) {
        return SHCA_AQ_BUSY;            /* windows are bound to it */
    }
    softhca_mr_free(s, mr);
    trace_softhca_mr_dereg(key);
    return SHCA_AQ_OK;
}

void softhca_mr_reset(SofthcaState *s)
{
    for (uint32_t i = 1; i < SOFTHCA_MR_TABLE; i++) {
        /*
         * Entries never used are only read: the table's host memory is
         * allocated as the guest's MRs reach it (spec §19).
         */
        if (s->mrs[i].valid || s->mrs[i].tag) {
            softhca_mr_free(s, &s->mrs[i]);
            s->mrs[i].tag = 0;
        }
    }
    s->mr_pages = 0;
}

/* Whether a bound window grants a QP's request access (remote only). */
static bool softhca_mw_usable(const SofthcaMr *mw, const SofthcaQp *qp,
                              uint32_t access)
{
    return mw->mw_bound && (access & SOFTHCA_MW_ACCESS) &&
           (mw->mw_type == 1 || mw->mw_qpn == qp->qpn);
}

/* The checks of an access through a key; whole: the key's own range. */
static SofthcaMemStatus softhca_mem_key(SofthcaState *s, const SofthcaQp *qp,
                                        uint32_t key, uint64_t addr,
                                        uint64_t len, uint32_t access,
                                        bool whole, SofthcaMr **mrp)
{
    SofthcaMr *mr = softhca_mr_lookup(s, key);

    if (!mr || mr->pdn != qp->pdn || (mr->fast_reg && !mr->fast_valid) ||
        (mr->mw_type && !softhca_mw_usable(mr, qp, access))) {
        trace_softhca_err_mem(key, addr, len, SOFTHCA_MEM_BAD_KEY);
        return SOFTHCA_MEM_BAD_KEY;
    }
    if (whole) {
        addr = mr->iova;
        len = 0;
    }
    /* addr .. addr + len within iova .. iova + length, without overflow */
    if (addr < mr->iova || len > mr->length ||
        addr - mr->iova > mr->length - len) {
        trace_softhca_err_mem(key, addr, len, SOFTHCA_MEM_BAD_RANGE);
        return SOFTHCA_MEM_BAD_RANGE;
    }
    if ((mr->access & access) != access) {
        trace_softhca_err_mem(key, addr, len, SOFTHCA_MEM_NO_ACCESS);
        return SOFTHCA_MEM_NO_ACCESS;
    }
    *mrp = mr;
    return SOFTHCA_MEM_OK;
}

SofthcaMemStatus softhca_mem_check(SofthcaState *s, const SofthcaQp *qp,
                                   uint32_t key, uint64_t addr, uint64_t len,
                                   uint32_t access, bool whole)
{
    SofthcaMr *mr;

    return softhca_mem_key(s, qp, key, addr, len, access, whole, &mr);
}

uint64_t *softhca_mem_map_word(SofthcaState *s, const SofthcaQp *qp,
                               uint32_t key, uint64_t addr, uint32_t access)
{
    SofthcaMr *mr;
    uint64_t *word;
    uint64_t gpa;

    if (softhca_mem_key(s, qp, key, addr, sizeof(*word), access, false,
                        &mr) != SOFTHCA_MEM_OK) {
        return NULL;
    }
    if (mr->mw_type) {
        mr = &s->mrs[mr->mw_mr];
    }
    gpa = mr->access & SHCA_ACCESS_PHYS ? addr :
          softhca_buf_addr(&mr->pages, addr - mr->iova + mr->first_offset);
    /* an MR whose iova and first_offset disagree modulo 8 misaligns it */
    word = softhca_dma_map_word(s, gpa);
    if (!word) {
        trace_softhca_err_mem(key, addr, sizeof(*word),
                              SOFTHCA_MEM_DMA_ERROR);
    }
    return word;
}

/*
 * The MR behind len bytes (not 0) at addr through key, checked as
 * softhca_mem_copy() checks them: a window's own MR, which outlives the
 * binding and holds the window's range.
 */
static SofthcaMemStatus softhca_mem_resolve(SofthcaState *s,
                                            const SofthcaQp *qp, uint32_t key,
                                            uint64_t addr, uint64_t len,
                                            uint32_t access, SofthcaMr **mr)
{
    SofthcaMemStatus st = softhca_mem_key(s, qp, key, addr, len, access,
                                          false, mr);

    if (st == SOFTHCA_MEM_OK && (*mr)->mw_type) {
        *mr = &s->mrs[(*mr)->mw_mr];
    }
    return st;
}

typedef bool SofthcaPieceFn(SofthcaState *s, uint64_t gpa, uint64_t len,
                            void *opaque);

/*
 * fn on each guest-physical piece of len bytes at addr of mr, in order,
 * until one fails: a PHYS MR's range is one piece, a paged MR's a piece
 * per page.
 */
static bool softhca_mem_pieces(SofthcaState *s, const SofthcaMr *mr,
                               uint64_t addr, uint64_t len,
                               SofthcaPieceFn *fn, void *opaque)
{
    uint64_t off;

    if (mr->access & SHCA_ACCESS_PHYS) {
        return fn(s, addr, len, opaque);
    }
    /* Registration checked that first_offset + length fits the pages. */
    off = addr - mr->iova + mr->first_offset;
    while (len) {
        uint64_t page_size = 1ull << mr->pages.page_shift;
        uint64_t chunk = MIN(len, page_size - (off & (page_size - 1)));

        if (!fn(s, softhca_buf_addr(&mr->pages, off), chunk, opaque)) {
            return false;
        }
        off += chunk;
        len -= chunk;
    }
    return true;
}

/* Check the access, then fn on each piece; a piece fn fails is a DMA error */
static SofthcaMemStatus softhca_mem_walk(SofthcaState *s, const SofthcaQp *qp,
                                         uint32_t key, uint64_t addr,
                                         uint64_t len, uint32_t access,
                                         SofthcaPieceFn *fn, void *opaque)
{
    SofthcaMemStatus st;
    SofthcaMr *mr;

    st = softhca_mem_resolve(s, qp, key, addr, len, access, &mr);
    if (st != SOFTHCA_MEM_OK || len == 0) {
        return st;
    }
    if (!softhca_mem_pieces(s, mr, addr, len, fn, opaque)) {
        trace_softhca_err_mem(key, addr, len, SOFTHCA_MEM_DMA_ERROR);
        return SOFTHCA_MEM_DMA_ERROR;
    }
    return SOFTHCA_MEM_OK;
}

typedef struct SofthcaPieceCopy {
    uint8_t *p;
    bool to_guest;
} SofthcaPieceCopy;

static bool softhca_piece_copy(SofthcaState *s, uint64_t gpa, uint64_t len,
                               void *opaque)
{
    SofthcaPieceCopy *c = opaque;
    bool ok = c->to_guest ? softhca_dma_write(s, gpa, c->p, len)
                          : softhca_dma_read(s, gpa, c->p, len);

    c->p += len;
    return ok;
}

SofthcaMemStatus softhca_mem_copy(SofthcaState *s, const SofthcaQp *qp,
                                  uint32_t key, uint64_t addr, void *buf,
                                  uint64_t len, uint32_t access, bool to_guest)
{
    SofthcaPieceCopy c = { .p = buf, .to_guest = to_guest };

    return softhca_mem_walk(s, qp, key, addr, len, access, softhca_piece_copy,
                            &c);
}

typedef struct SofthcaPieceMap {
    struct iovec *iov;
    int *n;
    int max;
} SofthcaPieceMap;

static bool softhca_piece_map(SofthcaState *s, uint64_t gpa, uint64_t len,
                              void *opaque)
{
    SofthcaPieceMap *m = opaque;

    return softhca_dma_map_read(s, gpa, len, m->iov, m->n, m->max);
}

bool softhca_mem_map_read(SofthcaState *s, const SofthcaQp *qp, uint32_t key,
                          uint64_t addr, uint64_t len, uint32_t access,
                          struct iovec *iov, int *n, int max)
{
    SofthcaPieceMap m = { .iov = iov, .n = n, .max = max };

    return len && softhca_mem_walk(s, qp, key, addr, len, access,
                                   softhca_piece_map, &m) == SOFTHCA_MEM_OK;
}

static bool softhca_piece_ok(SofthcaState *s, uint64_t gpa, uint64_t len,
                             void *opaque)
{
    return softhca_dma_ok(s, gpa, len);
}

SofthcaMemStatus softhca_mem_readable(SofthcaState *s, const SofthcaQp *qp,
                                      uint32_t key, uint64_t addr,
                                      uint64_t len, uint32_t access)
{
    return softhca_mem_walk(s, qp, key, addr, len, access, softhca_piece_ok,
                            NULL);
}
