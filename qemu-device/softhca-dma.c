/*
 * softhca: guest memory access
 *
 * Every access the device makes to guest memory goes through these helpers.
 * An address is usable only if the whole range is guest RAM as seen by the
 * function's bus-master address space: never MMIO (our own BARs or another
 * device's), never past the end of the address space, never wrapping.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/rcu.h"
#include "system/dma.h"
#include "exec/memory.h"
#include "softhca.h"
#include "trace.h"

bool softhca_dma_ok(SofthcaState *s, uint64_t addr, uint64_t len)
{
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(s));

    if (len == 0 || addr + len < addr) {
        return false;
    }

    RCU_READ_LOCK_GUARD();
    while (len) {
        hwaddr xlat, plen = len;
        MemoryRegion *mr = address_space_translate(as, addr, &xlat, &plen,
                                                   true,
                                                   MEMTXATTRS_UNSPECIFIED);

        if (!memory_region_is_ram(mr) || memory_region_is_rom(mr) ||
            plen == 0) {
            return false;
        }
        addr += plen;
        len -= plen;
    }
    return true;
}

static bool softhca_dma_rw(SofthcaState *s, uint64_t addr, void *buf,
                           size_t len, DMADirection dir)
{
    if (!softhca_dma_ok(s, addr, len) ||
        pci_dma_rw(PCI_DEVICE(s), addr, buf, len, dir,
                   MEMTXATTRS_UNSPECIFIED) != MEMTX_OK) {
        trace_softhca_err_dma(dir == DMA_DIRECTION_TO_DEVICE ? "read" : "write",
                              addr, len);
        return false;
    }
    return true;
}

bool softhca_dma_read(SofthcaState *s, uint64_t addr, void *buf, size_t len)
{
    return softhca_dma_rw(s, addr, buf, len, DMA_DIRECTION_TO_DEVICE);
}

bool softhca_dma_write(SofthcaState *s, uint64_t addr, const void *buf,
                       size_t len)
{
    return softhca_dma_rw(s, addr, (void *)buf, len, DMA_DIRECTION_FROM_DEVICE);
}

/*
 * Write an entry whose last byte hands it to the driver (phase or DONE
 * flags): the body first, then that byte, so that a driver polling on
 * another vCPU never sees the flag before the body.
 */
bool softhca_dma_write_owned(SofthcaState *s, uint64_t addr, const void *entry,
                             size_t len)
{
    return softhca_dma_write(s, addr, entry, len - 1) &&
           softhca_dma_write(s, addr + len - 1,
                             (const uint8_t *)entry + len - 1, 1);
}

static bool softhca_page_ok(SofthcaState *s, uint64_t page, uint8_t shift)
{
    return (page & ((1ull << shift) - 1)) == 0 &&
           softhca_dma_ok(s, page, 1ull << shift);
}

/*
 * Take a buffer descriptor (spec §5.2) and check every page now, so that
 * later accesses only have to check their offset against the buffer's size.
 */
uint8_t softhca_buf_init(SofthcaState *s, SofthcaBuf *buf,
                         const struct shca_buf_desc *desc, uint64_t min_len)
{
    uint64_t addr = le64_to_cpu(desc->addr);
    uint32_t npages = le32_to_cpu(desc->npages);
    uint8_t shift = desc->page_shift;
    uint32_t i;

    if (shift < SHCA_BUF_PAGE_SHIFT_MIN || shift > SHCA_BUF_PAGE_SHIFT_MAX ||
        npages == 0 || npages > SHCA_BUF_LIST_MAX ||
        (desc->flags & ~SHCA_BUF_DIRECT) || desc->rsvd ||
        ((uint64_t)npages << shift) < min_len) {
        return SHCA_AQ_BAD_PARAM;
    }

    buf->pages = g_new(uint64_t, npages);
    buf->npages = npages;
    buf->page_shift = shift;

    if (desc->flags & SHCA_BUF_DIRECT) {
        for (i = 0; i < npages; i++) {
            buf->pages[i] = addr + ((uint64_t)i << shift);
        }
    } else {
        if (!softhca_dma_read(s, addr, buf->pages,
                              npages * sizeof(uint64_t))) {
            goto bad_addr;
        }
        for (i = 0; i < npages; i++) {
            buf->pages[i] = le64_to_cpu(buf->pages[i]);
        }
    }

    for (i = 0; i < npages; i++) {
        if (!softhca_page_ok(s, buf->pages[i], shift)) {
            goto bad_addr;
        }
    }
    return SHCA_AQ_OK;

bad_addr:
    softhca_buf_free(buf);
    return SHCA_AQ_BAD_ADDR;
}

void softhca_buf_free(SofthcaBuf *buf)
{
    g_free(buf->pages);
    *buf = (SofthcaBuf) { 0 };
}

/* Callers keep offset below npages << page_shift. */
uint64_t softhca_buf_addr(const SofthcaBuf *buf, uint64_t offset)
{
    uint64_t mask = (1ull << buf->page_shift) - 1;

    return buf->pages[offset >> buf->page_shift] + (offset & mask);
}
