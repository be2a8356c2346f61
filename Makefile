# softhca: build everything, boot the lab, run the tests.
#   make        build the device (in QEMU), the driver, the provider, the image
#   make kernels  the driver and the image for every guest kernel we support
#                 (make test builds only the driver for each: kernels-driver)
#   make packages  softhca-dkms and the provider as .debs for your own VM,
#                  and softhca-qemu, our QEMU, for the host
#   make series  the QEMU, Linux and rdma-core patch series, from the tree
#   make mpi-tests  the MPI programs the VM tests copy into the guests
#   make fio    fio, which the NVMe over RDMA cases and make bench copy in
#   make run    build, boot two VMs and show RDMA working between them
#   make test   build and run the whole test suite
#   make test-full  the same with the repeats and long runs (a 5-minute soak)
#   make fuzz   fuzz the device and the tests' agent client, each fuzzer
#               for FUZZ_SECONDS [600]
#   make bench  softhca against Soft-RoCE on this machine, side by side
# Build trees and downloads live in $(SOFTHCA_CACHE), outside the checkout.

SOFTHCA_CACHE ?= /var/cache/softhca
export SOFTHCA_CACHE

.PHONY: all deps qemu qemu-releases qemu-sanitized driver provider guest-tests image kernels-driver kernels packages smb-kernel \
	stock-image mpi-tests fio series run test test-full fuzz bench clean

# Each stage prints one line; its output goes to $(SOFTHCA_CACHE)/logs
# (scripts/stage.sh; SOFTHCA_VERBOSE=1 shows it all).
STAGE = @scripts/stage.sh

all: qemu image

deps:
	$(STAGE) deps "installing the host packages softhca needs" scripts/host-deps.sh

qemu: deps
	$(STAGE) qemu "building QEMU with the device" qemu-device/build.sh

# make test-full runs the qtests on every QEMU release of scripts/common.sh:
# the others than the default build an emulator for the qtests alone
qemu-releases: qemu
	$(STAGE) qemu-releases "building the device on every QEMU release" \
		env SOFTHCA_QEMU_VERSION=all SOFTHCA_QTEST_ONLY=1 qemu-device/build.sh

# the build with ASan, UBSan and libFuzzer of make test's sanitizer and
# fuzz suites: a stage, so that it compiles while other stages download
qemu-sanitized: deps
	$(STAGE) qemu-sanitized "building QEMU with ASan, UBSan and libFuzzer" \
		env SOFTHCA_SANITIZE=1 qemu-device/build.sh

driver: deps
	$(STAGE) driver "building softhca.ko for the default guest kernel" guest-driver/build.sh

provider: deps
	$(STAGE) provider "building the rdma-core provider" guest-provider/build.sh

guest-tests: provider
	$(STAGE) guest-tests "building the programs the guests run" $(MAKE) -C tests/guest

# tests/vm/mpi.sh copies them into the nodes; the image needs none of them
mpi-tests: deps
	$(STAGE) mpi-tests "building the MPI programs in the Debian 13 build root" \
		tests/guest/mpi/build.sh

# tests/vm/nvme.sh copies it into the nodes, as mpi-tests
fio: deps
	$(STAGE) fio "building fio for the guests" tests/guest/fio/build.sh

image: driver provider guest-tests
	$(STAGE) image "making the guest image" images/build.sh

# scripts/kernels.sh lists the kernels.  make test compiles the driver for
# each; make test-full also boots each (an image per kernel).
kernels-driver: image
	$(STAGE) kernels-driver "building softhca.ko for every guest kernel" guest-driver/build.sh all

kernels: kernels-driver
	$(STAGE) kernels-image "making an image for every guest kernel" images/build.sh --kernel all

packages: provider qemu
	$(STAGE) packages "making the softhca-dkms, provider and QEMU packages" scripts/packages.sh

# QEMU's needs the source that the qemu stage fetches
series: qemu provider
	$(STAGE) series "writing the QEMU, Linux and rdma-core patch series" scripts/series.sh
	@echo "softhca: the series are in $(SOFTHCA_CACHE)/series/patches"

# a kernel of our own with SMB Direct, for make test-full's SMB cases
smb-kernel: deps
	$(STAGE) smb-kernel "building a kernel with SMB Direct (the newest guest kernel's linux-source)" scripts/smb-kernel.sh

# a stock Debian 13 disk, where the VM tests install the packages
stock-image: deps
	$(STAGE) stock-image "making a stock Debian 13 guest disk" images/stock.sh

# Stages two at a time: a QEMU build keeps the CPUs busy while the image,
# kernel and disk stages mostly download and unpack.  Each stage then
# prints its line when it ends.
PARALLEL_STAGES = @env SOFTHCA_STAGE_PARALLEL=1 $(MAKE) --no-print-directory -j2

run:
	$(PARALLEL_STAGES) all
	@tests/demo

test:
	$(PARALLEL_STAGES) all kernels-driver packages stock-image mpi-tests fio qemu-sanitized
	@tests/run qtest unit sanitize fuzz vm series

# the repeats too: the qtests on the other QEMU releases and on the QEMU
# series' build, the VM smoke on the other guest kernels, the 8-node
# cluster, sizes and address families (tests/vm/run); and a 5-minute soak
test-full:
	$(PARALLEL_STAGES) all qemu-releases kernels packages stock-image mpi-tests fio smb-kernel \
		qemu-sanitized
	@SOFTHCA_TEST_FULL=1 SOAK_SECONDS=300 tests/run qtest unit sanitize fuzz vm series

FUZZ_SECONDS ?= 600
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/run fuzz

bench: all mpi-tests fio
	tests/bench/run

clean:
	rm -rf $(SOFTHCA_CACHE)/build/driver
	$(MAKE) -C tests/guest clean
