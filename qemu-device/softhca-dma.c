/*
 * softhca: the device as a bus master: guest memory access, and MSI-X
 * messages
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
#include "hw/pci/msix.h"
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

/*
 * Copy between buf and guest RAM, translating each piece of the range once.
 * A read copies straight from the RAM block; a write maps the piece, so that
 * QEMU marks it dirty (migration, display) and drops any TCG translation of
 * code it held.  A piece that is not RAM (MMIO, or ROM for a write) fails
 * the access before any of it touches that region: a read never reads MMIO,
 * and a write's bounce buffer is unmapped unwritten.  Pieces before it may
 * have been copied, as with pci_dma_rw().
 */
/*
 * Where guest RAM at addr lies in this process, for reading in place, and
 * in *plen how much of the *plen bytes from addr lie on there; NULL if it
 * is not RAM.  The caller holds the RCU read lock.
 */
static uint8_t *softhca_dma_ram_at(AddressSpace *as, uint64_t addr,
                                   hwaddr *plen)
{
    hwaddr xlat;
    MemoryRegion *mr = address_space_translate(as, addr, &xlat, plen, false,
                                               MEMTXATTRS_UNSPECIFIED);

    if (!memory_access_is_direct(mr, false, MEMTXATTRS_UNSPECIFIED) ||
        *plen == 0) {
        return NULL;
    }
    /* where generic-fuzz puts its own bytes in, as flatview_read() */
    fuzz_dma_read_cb(addr, *plen, mr);
    return (uint8_t *)memory_region_get_ram_ptr(mr) + xlat;
}

static bool softhca_dma_read_ram(AddressSpace *as, uint64_t addr,
                                 uint8_t *buf, uint64_t len)
{
    RCU_READ_LOCK_GUARD();
    while (len) {
        hwaddr plen = len;
        uint8_t *host = softhca_dma_ram_at(as, addr, &plen);

        if (!host) {
            return false;
        }
        memcpy(buf, host, plen);
        addr += plen;
        buf += plen;
        len -= plen;
    }
    return true;
}

static bool softhca_dma_write_ram(AddressSpace *as, uint64_t addr,
                                  const uint8_t *buf, uint64_t len)
{
    while (len) {
        hwaddr plen = len, off;
        void *host = address_space_map(as, addr, &plen, true,
                                       MEMTXATTRS_UNSPECIFIED);
        bool ram = host && memory_region_from_host(host, &off);

        if (!ram) {
            if (host) {
                address_space_unmap(as, host, plen, true, 0);
            }
            return false;
        }
        memcpy(host, buf, plen);
        address_space_unmap(as, host, plen, true, plen);
        addr += plen;
        buf += plen;
        len -= plen;
    }
    return true;
}

static bool softhca_dma_rw(SofthcaState *s, uint64_t addr, void *buf,
                           size_t len, DMADirection dir)
{
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(s));
    bool ok;

    /* ordered against the device's other accesses, as pci_dma_rw() is */
    dma_barrier(as, dir);
    ok = len && addr + len >= addr &&
         (dir == DMA_DIRECTION_TO_DEVICE ?
          softhca_dma_read_ram(as, addr, buf, len) :
          softhca_dma_write_ram(as, addr, buf, len));
    if (!ok) {
        trace_softhca_err_dma(dir == DMA_DIRECTION_TO_DEVICE ? "read" : "write",
                              addr, len);
    }
    return ok;
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

bool softhca_dma_map_read(SofthcaState *s, uint64_t addr, uint64_t len,
                          struct iovec *iov, int *n, int max)
{
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(s));

    if (len == 0 || addr + len < addr) {
        return false;
    }
    while (len) {
        hwaddr plen = len;
        uint8_t *host = softhca_dma_ram_at(as, addr, &plen);

        if (!host) {
            return false;
        }
        if (*n && (uint8_t *)iov[*n - 1].iov_base + iov[*n - 1].iov_len ==
                  host) {
            iov[*n - 1].iov_len += plen;    /* pages next to each other */
        } else if (*n < max) {
            iov[*n].iov_base = host;
            iov[(*n)++].iov_len = plen;
        } else {
            return false;
        }
        addr += plen;
        len -= plen;
    }
    return true;
}

/*
 * An 8-byte aligned guest word, mapped in place for an atomic access
 * (spec §16): guest RAM the device may write, never a bounce buffer,
 * which would not be atomic against the vCPUs.  The mapping holds a
 * reference to its RAM block until the word is unmapped.
 */
uint64_t *softhca_dma_map_word(SofthcaState *s, uint64_t addr)
{
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(s));
    MemTxAttrs attrs = MEMTXATTRS_UNSPECIFIED;
    hwaddr xlat, len = sizeof(uint64_t);
    bool direct = false;
    void *word;

    WITH_RCU_READ_LOCK_GUARD() {
        MemoryRegion *mr = address_space_translate(as, addr, &xlat, &len,
                                                   true, attrs);

        direct = memory_access_is_direct(mr, true, attrs);
    }
    if (!direct || len < sizeof(uint64_t) ||
        (addr & (sizeof(uint64_t) - 1))) {
        goto bad;
    }
    word = address_space_map(as, addr, &len, true, attrs);
    if (!word) {
        goto bad;
    }
    if (len < sizeof(uint64_t) || ((uintptr_t)word & (sizeof(uint64_t) - 1))) {
        address_space_unmap(as, word, len, true, 0);
        goto bad;
    }
    return word;

bad:
    trace_softhca_err_dma("map", addr, sizeof(uint64_t));
    return NULL;
}

void softhca_dma_unmap_word(SofthcaState *s, uint64_t *word, bool written)
{
    address_space_unmap(pci_get_address_space(PCI_DEVICE(s)), word,
                        sizeof(*word), true, written ? sizeof(*word) : 0);
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
 * Read n little-endian page addresses at addr into pages[], as a step of
 * an admin command (softhca_work_step).
 */
static bool softhca_buf_read_list(SofthcaState *s, uint64_t addr,
                                  uint64_t *pages, uint32_t n)
{
    if (!softhca_work_step(s, n * SOFTHCA_WORK_PAGE) ||
        !softhca_dma_read(s, addr, pages, (size_t)n * sizeof(uint64_t))) {
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        pages[i] = le64_to_cpu(pages[i]);
    }
    return true;
}

/*
 * Take a buffer descriptor (spec §5.2, and LIST2 of §13.3 where flags_ok
 * has it) and check every page now, so that later accesses only have to
 * check their offset against the buffer's size.  A step of an admin
 * command: a LIST2 walk of 2^18 pages goes on across callbacks.
 */
static uint8_t softhca_buf_take(SofthcaState *s, SofthcaBuf *buf,
                                const struct shca_buf_desc *desc,
                                uint64_t min_len, uint8_t flags_ok,
                                uint64_t max_pages)
{
    uint64_t addr = le64_to_cpu(desc->addr);
    uint32_t npages = le32_to_cpu(desc->npages);
    uint8_t shift = desc->page_shift;
    uint8_t flags = desc->flags;
    uint32_t i;

    if (shift < SHCA_BUF_PAGE_SHIFT_MIN || shift > SHCA_BUF_PAGE_SHIFT_MAX ||
        npages == 0 || npages > max_pages || (flags & ~flags_ok) ||
        (flags & SHCA_BUF_DIRECT && flags & SHCA_BUF_LIST2) ||
        (!flags && npages > SHCA_BUF_LIST_MAX) || desc->rsvd ||
        ((uint64_t)npages << shift) < min_len) {
        return SHCA_AQ_BAD_PARAM;
    }

    buf->pages = g_new(uint64_t, npages);
    buf->npages = npages;
    buf->page_shift = shift;

    if (flags & SHCA_BUF_DIRECT) {
        for (i = 0; i < npages; i++) {
            buf->pages[i] = addr + ((uint64_t)i << shift);
        }
    } else if (flags & SHCA_BUF_LIST2) {
        uint32_t nlists = DIV_ROUND_UP(npages, SHCA_BUF_LIST_MAX);
        uint64_t lists[SHCA_BUF_LIST_MAX];

        if (!softhca_buf_read_list(s, addr, lists, nlists)) {
            goto bad_addr;
        }
        for (i = 0; i < nlists; i++) {
            uint32_t first = i * SHCA_BUF_LIST_MAX;

            if (!softhca_buf_read_list(s, lists[i], buf->pages + first,
                                       MIN(npages - first,
                                           SHCA_BUF_LIST_MAX))) {
                goto bad_addr;
            }
        }
    } else if (!softhca_buf_read_list(s, addr, buf->pages, npages)) {
        goto bad_addr;
    }

    for (i = 0; i < npages; i++) {
        if ((i % SHCA_BUF_LIST_MAX == 0 &&
             !softhca_work_step(s, MIN(npages - i, SHCA_BUF_LIST_MAX) *
                                    SOFTHCA_WORK_PAGE)) ||
            !softhca_page_ok(s, buf->pages[i], shift)) {
            goto bad_addr;
        }
    }
    return SHCA_AQ_OK;

bad_addr:
    softhca_buf_free(buf);
    return SHCA_AQ_BAD_ADDR;
}

/* Queue buffers: DIRECT or a one-level list, at most 512 pages. */
uint8_t softhca_buf_init(SofthcaState *s, SofthcaBuf *buf,
                         const struct shca_buf_desc *desc, uint64_t min_len)
{
    return softhca_buf_take(s, buf, desc, min_len, SHCA_BUF_DIRECT,
                            SHCA_BUF_LIST_MAX);
}

/*
 * Memory regions: DIRECT, a one-level list of up to 512 pages, or LIST2
 * (addr lists up to 512 list pages of up to 512 addresses each).
 */
uint8_t softhca_buf_init_list2(SofthcaState *s, SofthcaBuf *buf,
                               const struct shca_buf_desc *desc,
                               uint64_t min_len)
{
    return softhca_buf_take(s, buf, desc, min_len,
                            SHCA_BUF_DIRECT | SHCA_BUF_LIST2,
                            SHCA_BUF_LIST_MAX * SHCA_BUF_LIST_MAX);
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

void softhca_irq_now(SofthcaState *s, unsigned vector)
{
    PCIDevice *pdev = PCI_DEVICE(s);

    if (msix_enabled(pdev)) {
        trace_softhca_irq(vector);
        msix_notify(pdev, vector);
    }
}

/* MSI-X needs the BQL, which an iothread leaves to the main loop. */
void softhca_irq(SofthcaState *s, unsigned vector)
{
    if (s->iothread) {
        softhca_irq_out(s, vector);
    } else {
        softhca_irq_now(s, vector);
    }
}
