# softhca: build everything, boot the lab, run the tests.
#   make        build the device (in QEMU), the driver, the provider, the image
#   make kernels  the driver and the image for every guest kernel we support
#   make run    build, boot two VMs and show RDMA working between them
#   make test   build and run the whole test suite
#   make test-full  the same with the long runs (a 5-minute soak)
#   make fuzz   fuzz the device, each fuzzer for FUZZ_SECONDS [600]
#   make bench  softhca against Soft-RoCE on this machine, side by side
# Build trees and downloads live in $(SOFTHCA_CACHE), outside the checkout.

SOFTHCA_CACHE ?= /var/cache/softhca
export SOFTHCA_CACHE

.PHONY: all deps qemu driver provider guest-tests image kernels run test test-full fuzz bench clean

all: qemu image

deps:
	scripts/host-deps.sh

qemu: deps
	qemu-device/build.sh >/dev/null

driver: deps
	guest-driver/build.sh >/dev/null

provider: deps
	guest-provider/build.sh >/dev/null

guest-tests: provider
	$(MAKE) -C tests/guest

image: driver provider guest-tests
	images/build.sh

# scripts/kernels.sh lists the kernels
kernels: image
	guest-driver/build.sh all >/dev/null
	images/build.sh --kernel all

run: all
	tests/demo

test: all kernels
	tests/run unit qtest sanitize fuzz vm

test-full: all kernels
	SOAK_SECONDS=300 tests/run unit qtest sanitize fuzz vm

FUZZ_SECONDS ?= 600
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/run fuzz

bench: all
	tests/bench/run

clean:
	rm -rf $(SOFTHCA_CACHE)/build/driver
	$(MAKE) -C tests/guest clean
