# smq: libsmq and smqctl.  `make`, `make check`, `make install`.
# make SAN=address,undefined check   (or SAN=thread) builds into build-SAN/.

# The version is smq.h's (SMQ_VERSION_MAJOR, _MINOR, _PATCH); the soname
# follows the major version, which moves when the ABI breaks.
smq_h_version = $(shell sed -n 's/^\#define SMQ_VERSION_$(1) \([0-9]*\)$$/\1/p' include/smq.h)
SOMAJOR   := $(call smq_h_version,MAJOR)
VERSION   := $(SOMAJOR).$(call smq_h_version,MINOR).$(call smq_h_version,PATCH)
PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
LIBDIR    ?= $(PREFIX)/lib
INCLUDEDIR?= $(PREFIX)/include
MANDIR    ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
UNITDIR   ?= $(PREFIX)/lib/systemd/system
EXAMPLEDIR ?= $(PREFIX)/share/doc/libsmq/examples
DOCDIR    ?= $(PREFIX)/share/doc/smq
DESTDIR   ?=

CC        ?= cc
OBJCOPY   ?= objcopy
CFLAGS    ?= -O2 -g
WARN      := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
ifdef WERROR
WARN      += -Werror
endif
CPPFLAGS  += -D_GNU_SOURCE -DSMQ_VERSION='"$(VERSION)"' -Iinclude -Ilibsmq -Iprobes
ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS) -fPIC -pthread
# each object's header dependencies, in a .d file beside it
DEPFLAGS  = -MMD -MP

comma     := ,
NOUNDEF   := -Wl,--no-undefined
ifdef SAN
NOUNDEF   :=
B         ?= build-$(notdir $(CC))-$(subst $(comma),-,$(SAN))
ALL_CFLAGS += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS   += -fsanitize=$(SAN)
else
B         ?= build
endif

LIB_SRC   := $(filter-out libsmq/examples/%,$(wildcard libsmq/*/*.c))
LIB_OBJ   := $(LIB_SRC:%.c=$(B)/%.o)
SONAME    := libsmq.so.$(SOMAJOR)
SHLIB     := $(B)/libsmq.so.$(VERSION)
STLIB     := $(B)/libsmq.a
INTLIB    := $(B)/libsmq-internal.a
TOOLSLIB  := $(B)/libsmq-tools.a

# tests/unit: C tests of the library; tests/cli: scripts that drive smqctl;
# tests/docs, tests/build, tests/qemu: the pages, the build and the guests
TEST_SRC  := $(wildcard tests/unit/t_*.c)
TEST_BIN  := $(TEST_SRC:tests/unit/%.c=$(B)/tests/%)
EXAMPLE   := $(B)/smq-example
CLI_SRC   := $(wildcard cli/*.c cli/*/*.c)
CLI_OBJ   := $(CLI_SRC:%.c=$(B)/%.o)
PROBE_SRC := $(wildcard probes/*.c)
PROBE_OBJ := $(PROBE_SRC:%.c=$(B)/%.o)
PCI_LIBS  := -lpci
SMQCTL    := $(B)/smqctl
# the smq project's benchmark (bench/): built by make tests and make bench,
# never installed
SMQ_BENCH := $(B)/smq-bench
BENCH_SRC := $(wildcard bench/*.c)
BENCH_OBJ := $(BENCH_SRC:%.c=$(B)/%.o)
VFIO_CHECK := $(B)/tests/qemu/vfio_check
IVSHMEM_HOST := $(B)/tests/qemu/ivshmem_host

.PHONY: all tests check check-all install clean bench bench-compare demo fuzz \
	reliability deps package-check mutants fresh-check
# `make` builds the product; `make tests` the test programs too, which
# `make check` runs.
all: $(STLIB) $(TOOLSLIB) $(SHLIB) $(SMQCTL) $(EXAMPLE)
TEST_PROGS := $(TEST_BIN) $(VFIO_CHECK) $(IVSHMEM_HOST) $(SMQ_BENCH)
# what every test program built from its sources depends on
TEST_HDRS := $(wildcard include/*.h libsmq/*/*.h tests/*/*.h) Makefile

$(B)/%.o: %.c Makefile
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(DEPFLAGS) -c -o $@ $<
# smqctl and the probes see the library through include/smq.h only: an
# include of an internal header does not compile there.
$(CLI_OBJ) $(PROBE_OBJ): CPPFLAGS := $(filter-out -Ilibsmq,$(CPPFLAGS))

# The static library a user links shows only the public API, as the
# shared one does: its objects are linked into one and every global name
# but the exported ones made local, so that our internals can never clash
# with a name of the user's.  Tests and the test programs reach internals
# through libsmq-internal.a, which is never installed.
$(B)/libsmq.syms: libsmq/libsmq.map
	@mkdir -p $(@D)
	sed -n 's/^[[:space:]]*\(smq_[a-z0-9_]*\);/\1/p' $< >$@
$(B)/libsmq-all.o: $(LIB_OBJ)
	$(LD) -r -o $@ $(LIB_OBJ)
$(STLIB): $(B)/libsmq-all.o $(B)/libsmq.syms
	$(OBJCOPY) --keep-global-symbols=$(B)/libsmq.syms $(B)/libsmq-all.o \
		$(B)/libsmq-api.o
	rm -f $@
	$(AR) rcs $@ $(B)/libsmq-api.o
$(INTLIB): $(LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $^
# smqctl links the public calls and the tools' (include/smq_tools.h: the
# ivshmem server, the vfio broker, the window's map and the raw link),
# which applications do not get: made as libsmq.a is, never installed.
$(B)/libsmq-tools.syms: $(B)/libsmq.syms include/smq_tools.h
	{ cat $(B)/libsmq.syms; grep -oE '\bsmq_[a-z0-9_]+\(' include/smq_tools.h | \
		tr -d '('; } | sort -u >$@
$(TOOLSLIB): $(B)/libsmq-all.o $(B)/libsmq-tools.syms
	$(OBJCOPY) --keep-global-symbols=$(B)/libsmq-tools.syms $(B)/libsmq-all.o \
		$(B)/libsmq-tools.o
	rm -f $@
	$(AR) rcs $@ $(B)/libsmq-tools.o

$(SHLIB): $(LIB_OBJ) libsmq/libsmq.map
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=libsmq/libsmq.map \
		$(NOUNDEF) $(LDFLAGS) -pthread -o $@ $(LIB_OBJ)
	ln -sf libsmq.so.$(VERSION) $(B)/$(SONAME)
	ln -sf $(SONAME) $(B)/libsmq.so


# t_baseline runs the baselines themselves: it links the cli objects they need.
BASELINE_OBJ := $(patsubst %.c,$(B)/%.o,$(wildcard cli/measure/baseline_*.c \
		bench/baseline_*.c)) \
		$(B)/cli/measure/stats.o $(B)/cli/measure/machine.o
$(B)/tests/t_baseline: tests/unit/t_baseline.c tests/lib/testlib.c $(TEST_HDRS) cli/measure/measure.h \
		bench/products.h \
		$(BASELINE_OBJ) $(INTLIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/lib $(ALL_CFLAGS) -o $@ $< tests/lib/testlib.c \
		$(BASELINE_OBJ) $(INTLIB) $(LDFLAGS)

# The split test, and those that hold a call at a hook, run on a library
# that counts every read across regions and has the hooks (SMQ_COUNT_FAR):
# built apart, never installed.
COUNT_OBJ := $(LIB_SRC:%.c=$(B)/count/%.o)
$(B)/count/%.o: %.c Makefile
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DSMQ_COUNT_FAR $(ALL_CFLAGS) $(DEPFLAGS) -c -o $@ $<
$(B)/libsmq-count.a: $(COUNT_OBJ)
	rm -f $@
	$(AR) rcs $@ $^
COUNT_TESTS := $(B)/tests/t_split $(B)/tests/t_stall $(B)/tests/t_maint_kill \
	$(B)/tests/t_wake $(B)/tests/t_lines $(B)/tests/t_burst_crash \
	$(B)/tests/t_scratch $(B)/tests/t_room $(B)/tests/t_sync $(B)/tests/t_journal \
	$(B)/tests/t_ivshmem_late $(B)/tests/t_syscalls $(B)/tests/t_guards \
	$(B)/tests/t_open_check $(B)/tests/t_group $(B)/tests/t_lanelock \
	$(B)/tests/t_server_restart $(B)/tests/t_membarrier
$(COUNT_TESTS): $(B)/tests/%: tests/unit/%.c tests/lib/testlib.c $(TEST_HDRS) $(B)/libsmq-count.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DSMQ_COUNT_FAR -Itests/lib $(ALL_CFLAGS) -o $@ $< tests/lib/testlib.c \
		$(B)/libsmq-count.a $(LDFLAGS)
# smqctl on that library, held at the hook SMQ_TEST_HOLD names
# (tests/lib/hold_hook.c), for t_cli_held.sh: never installed.
SMQCTL_HOOKED := $(B)/tests/smqctl-hooked
$(B)/tests/hold_hook.o: tests/lib/hold_hook.c $(TEST_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DSMQ_COUNT_FAR $(ALL_CFLAGS) -c -o $@ $<
# ...and with the faults SMQ_TEST_VIEW and SMQ_TEST_SKIP name
# (tests/lib/fault_hook.c), for t_check_cross.sh
$(B)/tests/fault_hook.o: tests/lib/fault_hook.c $(TEST_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DSMQ_COUNT_FAR $(ALL_CFLAGS) -c -o $@ $<
$(SMQCTL_HOOKED): $(CLI_OBJ) $(PROBE_OBJ) $(B)/tests/hold_hook.o $(B)/tests/fault_hook.o \
		$(B)/libsmq-count.a
	$(CC) $(ALL_CFLAGS) -o $@ $(CLI_OBJ) $(PROBE_OBJ) $(B)/tests/hold_hook.o \
		$(B)/tests/fault_hook.o $(B)/libsmq-count.a $(LDFLAGS) $(PCI_LIBS) \
		-lncursesw -lmicrohttpd -lm
TEST_PROGS += $(SMQCTL_HOOKED)
# t_ivshmem_conform.sh: strict clients of the ivshmem protocol, churn, and
# a sleeping receiver whose wake-ups the test build's hooks tell apart.
IVSHMEM_CONFORM := $(B)/tests/ivshmem_conform
$(IVSHMEM_CONFORM): tests/cli/ivshmem_conform.c tests/cli/ivshmem_strict.c \
		$(TEST_HDRS) $(B)/libsmq-count.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DSMQ_COUNT_FAR -Itests/lib $(ALL_CFLAGS) -o $@ $< \
		tests/cli/ivshmem_strict.c $(B)/libsmq-count.a $(LDFLAGS)
TEST_PROGS += $(IVSHMEM_CONFORM)

# Probe and model tests link the probes (and libpci).
$(B)/tests/t_probe_%: tests/unit/t_probe_%.c tests/lib/testlib.c $(TEST_HDRS) $(PROBE_OBJ) $(INTLIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/lib $(ALL_CFLAGS) -o $@ $< tests/lib/testlib.c \
		$(PROBE_OBJ) $(INTLIB) $(LDFLAGS) $(PCI_LIBS) -lm

# The ivshmem tests share a server in a child process (tests/unit/ivshmem_srv.c).
IVSHMEM_TESTS := $(B)/tests/t_ivshmem $(B)/tests/t_ivshmem_idle $(B)/tests/t_eintr
$(IVSHMEM_TESTS): $(B)/tests/%: tests/unit/%.c tests/unit/ivshmem_srv.c tests/unit/ivshmem_srv.h \
		tests/lib/testlib.c $(TEST_HDRS) $(INTLIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/lib $(ALL_CFLAGS) -o $@ $< tests/unit/ivshmem_srv.c \
		tests/lib/testlib.c $(INTLIB) $(LDFLAGS)

# Tests link libsmq-internal.a: they may reach internals (format tests
# corrupt windows field by field), which the shared library does not export.
$(B)/tests/%: tests/unit/%.c tests/lib/testlib.c $(TEST_HDRS) $(INTLIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/lib $(ALL_CFLAGS) -o $@ $< tests/lib/testlib.c $(INTLIB) $(LDFLAGS)

# t_qemu_vfio.sh: the guest side drives libsmq's VFIO and doorbell modules
# in a QEMU guest (copied into its initramfs with its shared libraries); the
# host side is a peer through the ivshmem client module.
$(VFIO_CHECK): tests/qemu/vfio_check.c tests/qemu/vfio_mailbox.h $(TEST_HDRS) $(INTLIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(INTLIB) $(LDFLAGS)
$(IVSHMEM_HOST): tests/qemu/ivshmem_host.c tests/qemu/vfio_mailbox.h $(TEST_HDRS) $(INTLIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(INTLIB) $(LDFLAGS)

# smqctl links libsmq statically: one binary to copy onto a board.  Its
# archive has the tools' calls beside the public ones, and nothing else.
$(SMQCTL): $(CLI_OBJ) $(PROBE_OBJ) $(TOOLSLIB)
	$(CC) $(ALL_CFLAGS) -o $@ $(CLI_OBJ) $(PROBE_OBJ) $(TOOLSLIB) $(LDFLAGS) \
		$(PCI_LIBS) -lncursesw -lmicrohttpd -lm

# The benchmark program runs smq through smqctl's measurement module: it
# links smqctl's objects from an archive (the linker takes only those it
# needs), never smqctl's main.
$(B)/smqctl-parts.a: $(filter-out $(B)/cli/main.o,$(CLI_OBJ))
	rm -f $@
	$(AR) rcs $@ $^
$(SMQ_BENCH): $(BENCH_OBJ) $(B)/smqctl-parts.a $(PROBE_OBJ) $(TOOLSLIB)
	$(CC) $(ALL_CFLAGS) -o $@ $(BENCH_OBJ) $(B)/smqctl-parts.a $(PROBE_OBJ) \
		$(TOOLSLIB) $(LDFLAGS) $(PCI_LIBS) -lm

$(EXAMPLE): libsmq/examples/twoboards.c $(SHLIB)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< -L$(B) -lsmq -Wl,-rpath,'$$ORIGIN' $(LDFLAGS)

# t_journal.sh: an application linked with the shared library alone, whose
# steps the library journals without smqctl.
JOURNAL_APP := $(B)/tests/journal_app
$(JOURNAL_APP): tests/cli/journal_app.c $(SHLIB)
	@mkdir -p $(@D)
	$(CC) -Iinclude $(ALL_CFLAGS) -o $@ $< -L$(B) -lsmq \
		-Wl,-rpath,'$$ORIGIN/..' $(LDFLAGS)
TEST_PROGS += $(JOURNAL_APP)

# TESTS=t_a,t_b runs only those; the scripts run with the plain build.
ALL_SCRIPTS := $(wildcard tests/build/t_*.sh tests/docs/t_*.sh tests/cli/t_*.sh \
		tests/qemu/t_*.sh)
# under a sanitizer: the scripts that drive smqctl itself
SAN_SCRIPTS := tests/cli/t_cli.sh tests/cli/t_recv.sh tests/cli/t_measure.sh tests/cli/t_measure_ways.sh tests/cli/t_top.sh tests/cli/t_security.sh \
		tests/cli/t_server.sh tests/cli/t_cli_held.sh tests/cli/t_metrics.sh \
		tests/cli/t_ivshmem_conform.sh
SCRIPTS   := $(if $(TESTS),,$(if $(SAN),$(SAN_SCRIPTS),$(ALL_SCRIPTS)))
RUN_BIN   := $(if $(TESTS),$(addprefix $(B)/tests/,$(subst $(comma), ,$(TESTS))),$(TEST_BIN))

# A sanitizer's report exits 86, never 1 or 2, which the CLI tests expect
# for ordinary failures.
SAN_ENV   := ASAN_OPTIONS=exitcode=86:detect_leaks=1 \
	     UBSAN_OPTIONS=exitcode=86:print_stacktrace=1 \
	     TSAN_OPTIONS=exitcode=86

tests: all $(TEST_PROGS)

# TESTS=... builds only those (CI's ThreadSanitizer step built every test
# program and smqctl to run four)
check: $(if $(TESTS),$(RUN_BIN),tests)
	@$(if $(SAN),$(SAN_ENV)) B=$(B) sh tests/run.sh $(SCRIPTS) $(RUN_BIN)

check-all:
	sh tests/check-all.sh

# The Debian packages of debian/, built from git archive HEAD, checked by
# lintian and installed in a fresh Debian 12 root where smqctl and an
# example run.  Minutes, root and the network to Debian's mirror: in
# neither check nor check-all; it needs dpkg-dev, debhelper, lintian and
# debootstrap beside the build's own packages (HACKING.md, Packages).
package-check:
	sh tests/build/package.sh

# The README's two commands for a fresh Debian machine (set up, build and
# demo; then make deps and make check-all), exactly, in a fresh minimal
# Debian 12 root with git, make and gcc (as a container image has) from
# this machine's mirror, on git archive HEAD.  Root, the network and an
# hour: in neither check nor check-all.
fresh-check:
	sh tests/build/fresh.sh

# Everything the full test suite (make check-all) needs, on Debian 12:
# compilers and sanitizer runtimes, groff for the man pages, bash and zsh
# for the completions, tmux for top's live view, libpci and pciutils for
# the probes and lspci, QEMU, busybox and cpio for the guest with a PCI
# BAR, valgrind, faketime, a cross compiler for the aarch64 build, and
# abidiff for the ABI check; libmicrohttpd for smqctl metrics --listen,
# and Prometheus and node_exporter, which t_metrics.sh runs against it;
# UCX's ucx_perftest, which the benchmark program measures beside smq
# (and t_bench_products.sh runs, briefly); procps (ps, which the scripts'
# cleanup reads the process tree with), man-db (man, t_man.sh), xz-utils
# (the guest kernel's modules) and g++ (smq.h compiled as C++, t_header.sh),
# which a minimal Debian lacks.
# .ci/run installs through this target, so the two never disagree;
# make fresh-check runs it in a minimal Debian root.
DEPS := gcc g++ make libc6-dev binutils pkgconf groff-base \
	clang libclang-rt-14-dev \
	python3 zsh util-linux procps man-db xz-utils libncurses-dev tmux \
	libpci-dev pciutils qemu-system-x86 busybox-static cpio valgrind ndctl \
	faketime gcc-aarch64-linux-gnu libc6-dev-arm64-cross abigail-tools \
	libmicrohttpd-dev prometheus prometheus-node-exporter ucx-utils
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
deps:
	$(SUDO) apt-get update -q
	$(SUDO) env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends $(DEPS)

# Speed, never in timed tests, as ratios to what is measured in the same
# run: smqctl bench --baseline, smq against the limits of this machine
# (the bare two-core ring, cache-line and futex ping-pongs, memcpy, the
# lane lock beside CPU hogs), then the project's benchmark program
# (smq-bench, from bench/, never installed), smq against other products:
# POSIX message queues, Unix sockets, pipes, and UCX when ucx_perftest
# (ucx-utils, in DEPS) is installed.  Both exit 0 whether their targets
# hold or not (they measured); make bench fails when one was missed, after
# the tables and their last lines (MISSED ...), so that no one reads a
# missed target as a passing bench.
bench: $(SMQCTL) $(SMQ_BENCH)
	@$(SMQCTL) bench --baseline >$(B)/bench.txt; rc=$$?; cat $(B)/bench.txt; \
	[ $$rc -eq 0 ] || exit $$rc; \
	$(SMQ_BENCH) >$(B)/bench-products.txt; rc=$$?; echo; \
	cat $(B)/bench-products.txt; [ $$rc -eq 0 ] || exit $$rc; \
	if grep -q '^targets: .* MISSED$$' $(B)/bench.txt \
		$(B)/bench-products.txt; then \
		echo "make bench: a target was missed (MISSED above)" >&2; exit 1; fi

# This tree's smqctl beside REF's (a commit or tag, built apart from git
# archive), alternated ROUNDS times (default 5) on the rows of bench
# --baseline --json and of each build's smq-bench --json, where it has
# one: each row's medians, the spread between rounds of one build, the
# rows that moved beyond it (tests/bench-compare.sh; ten to twenty
# minutes).  BENCH_ARGS: options for both builds' benches.
bench-compare: $(SMQCTL) $(SMQ_BENCH)
	@[ -n "$(REF)" ] || { echo "make bench-compare: name the build to compare with: REF=<commit or tag>" >&2; exit 2; }
	sh tests/bench-compare.sh "$(REF)" $(SMQCTL) $(SMQ_BENCH)

# The long forms of the reliability campaigns (make check runs short ones,
# bounded by time): the crash campaign with 200 kills of each side, init
# and clear killed 1000 times, and re-init under load 20 times in a row
# with two CPU hogs, each with 50 and 150 re-inits in a row.
reliability: $(B)/tests/t_crash $(B)/tests/t_maint_kill $(B)/tests/t_reinit
	$(B)/tests/t_crash --full
	SMQ_KILLS=1000 $(B)/tests/t_maint_kill
	SMQ_REINIT_ROW=150 sh tests/under-load.sh 20 $(B)/tests/t_reinit

# Bugs planted on purpose (tests/mutants/*.patch: bounds, order, checks
# skipped, recovery, fairness, retries), each applied to a copy of the
# tree, built, and run against the tests it names; a mutant none of them
# fails is reported as survived.  Tens of minutes: in neither check nor
# check-all.  Run it before resolving an issue that touches the message
# path, maintenance or validation.
mutants:
	sh tests/mutants/run.sh

# libFuzzer on the window validator and everything dump reads of a window
# (clang).  FUZZ_TIME seconds (default 600); check-all runs a short one.
FUZZ_TIME ?= 600
FUZZ_B    := build-fuzz
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
$(FUZZ_B)/fuzz_window: tests/fuzz/fuzz_window.c $(LIB_SRC) $(wildcard include/*.h libsmq/*/*.h)
	@mkdir -p $(@D)
	clang $(CPPFLAGS) -Itests/lib -std=c11 $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_window.c $(LIB_SRC)
fuzz: $(FUZZ_B)/fuzz_window
	sh tests/fuzz/run.sh $(FUZZ_B)/fuzz_window $(FUZZ_TIME)

demo: $(SMQCTL)
	SMQCTL=$(SMQCTL) sh cli/demo.sh

install: $(STLIB) $(SHLIB) $(SMQCTL)
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(UNITDIR)
	install -m 755 $(SMQCTL) $(DESTDIR)$(BINDIR)/
	install -m 644 man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 completions/smqctl.bash $(DESTDIR)$(BASHCOMPDIR)/smqctl
	install -m 644 completions/_smqctl $(DESTDIR)$(ZSHCOMPDIR)/_smqctl
	for u in systemd/*.service; do \
		sed 's|@BINDIR@|$(BINDIR)|g' $$u > $(DESTDIR)$(UNITDIR)/$${u##*/}; \
	done
	install -d $(DESTDIR)$(DOCDIR)
	install -m 644 systemd/smq-window.conf cli/metrics/smq-alerts.yml \
		$(DESTDIR)$(DOCDIR)/
	install -m 644 $(STLIB) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libsmq.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libsmq.so
	install -m 644 include/smq.h $(DESTDIR)$(INCLUDEDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    libsmq/libsmq.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libsmq.pc
	install -m 644 man/*.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 644 man/*.7 $(DESTDIR)$(MANDIR)/man7/
	install -d $(DESTDIR)$(EXAMPLEDIR)
	install -m 644 libsmq/examples/*.c $(DESTDIR)$(EXAMPLEDIR)/
	install -m 644 libsmq/examples/Makefile.examples $(DESTDIR)$(EXAMPLEDIR)/Makefile

clean:
	rm -rf build build-*

-include $(shell find $(B) -name '*.d' 2>/dev/null)
