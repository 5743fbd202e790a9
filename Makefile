# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# make                 library (shared + static), the mmkit command, tests, benchmarks
# make run             build the library, mmkit and the examples, then run
#                      the main job: mmkit probe
# make check           native tests and the same tests under ASan+UBSan;
#                      the arm64 cross build must succeed too; the fuzz
#                      targets 10 s each, the threaded tests under TSan
#                      and the stress test (STRESS_SECONDS, 60): side by
#                      side, CHECK_JOBS (the cores) at a time; log in
#                      build/check.log
# make fuzz            each libFuzzer target for FUZZ_SECONDS (60), with clang
# make check-tsan      the threaded tests under ThreadSanitizer
# make stress          the stress programs side by side for STRESS_SECONDS (60)
# make cross-aarch64   everything, cross-compiled for arm64 (static)
# make check-kernels   the test suite inside real kernels under QEMU
# make bench-kernels   the bench-amd64 tier at the published sizes
# make install         PREFIX=/usr/local DESTDIR=
#
# Overrides: CC, CFLAGS, CPPFLAGS, LDFLAGS, LDLIBS add to the project's own
# flags; B=DIR builds elsewhere; V=1 shows the full commands; PKG_CONFIG
# finds the benchmark peers (PKG_CONFIG=false builds without them).

VERSION		:= 0.1.0
SOVERSION	:= 0

PREFIX		?= /usr/local
BINDIR		?= $(PREFIX)/bin
LIBDIR		?= $(PREFIX)/lib
# The shims are plugins, not libraries to link with: a directory of their own.
PRELOADDIR	?= $(LIBDIR)/mmkit
INCLUDEDIR	?= $(PREFIX)/include
LIBEXECDIR	?= $(PREFIX)/libexec
DATADIR		?= $(PREFIX)/share
MANDIR		?= $(DATADIR)/man
BASHCOMPDIR	?= $(DATADIR)/bash-completion/completions

CC		?= cc
CFLAGS		?= -O2 -g
PKG_CONFIG	?= pkg-config
B		?= build

# A cross compiler named TRIPLET-gcc comes with TRIPLET-ld, -ar and -objcopy,
# which the static library is made with.
TOOL_PREFIX	:= $(patsubst %gcc,%,$(filter %-gcc,$(notdir $(CC))))
ifeq ($(origin LD),default)
LD		:= $(TOOL_PREFIX)ld
endif
ifeq ($(origin AR),default)
AR		:= $(TOOL_PREFIX)ar
endif
OBJCOPY		?= $(TOOL_PREFIX)objcopy

# The project's own flags; the user's CFLAGS come after them and cannot
# take them away.  Each compile writes a .d file of the headers it read.
MMKIT_CFLAGS	:= -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow \
		   -Wstrict-prototypes -Wmissing-prototypes -Iinclude -pthread
LIB_CFLAGS	:= $(MMKIT_CFLAGS) -fPIC -fvisibility=hidden
CLI_CFLAGS	:= $(MMKIT_CFLAGS) -Ilib -DMMKIT_LIBEXECDIR='"$(LIBEXECDIR)/mmkit"' \
		   -DMMKIT_PRELOADDIR='"$(PRELOADDIR)"' \
		   -DMMKIT_VERSION='"$(VERSION)"'
DEPFLAGS	= -MMD -MP -MF $(basename $@).d -MT $@
MMKIT_LDLIBS	:= -pthread

# lib/SOURCES lists the library's C files, one a line: the bindings' builds
# (bindings/) read the same list.
LIB_SRCS	:= $(addprefix lib/,$(file < lib/SOURCES))
CLI_SRCS	:= $(wildcard cli/*.c)
TEST_SRCS	:= $(wildcard tests/test-*.c)
# Target programs tests/test-hostile.sh attacks the readers with (not tests).
HOSTILE_SRCS	:= $(wildcard tests/hostile/hostile-*.c)
FUZZ_SRCS	:= $(wildcard tests/fuzz/fuzz-*.c)
STRESS_SRCS	:= $(wildcard tests/stress/stress-*.c)
BENCH_SRCS	:= $(wildcard bench/bench-*.c)
EXAMPLE_SRCS	:= $(wildcard examples/*.c)
# The preloadable shims: each export list preload/NAME.map makes a
# libmmkit-NAME.so of preload/NAME.c (and of the parts its link rule
# names), the library linked in with its symbols hidden, installed into
# PRELOADDIR.
PRELOAD_MAPS	:= $(wildcard preload/*.map)
PRELOAD_SRCS	:= $(wildcard preload/*.c)

LIB_OBJS	:= $(LIB_SRCS:%.c=$(B)/%.o)
CLI_OBJS	:= $(CLI_SRCS:%.c=$(B)/%.o)
TESTS		:= $(TEST_SRCS:tests/%.c=$(B)/tests/%)
HOSTILES	:= $(HOSTILE_SRCS:tests/%.c=$(B)/tests/%)
FUZZERS		:= $(FUZZ_SRCS:tests/fuzz/%.c=$(B)/fuzz/%)
STRESSORS	:= $(STRESS_SRCS:tests/stress/%.c=$(B)/stress/%)
BENCHES		:= $(BENCH_SRCS:bench/%.c=$(B)/bench/%)
EXAMPLES	:= $(EXAMPLE_SRCS:examples/%.c=$(B)/examples/%)
PRELOADS	:= $(PRELOAD_MAPS:preload/%.map=$(B)/libmmkit-%.so)
DEPS		:= $(B)/bench/report.d $(B)/bench/options.d $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(TESTS:=.d) $(BENCHES:=.d) \
		   $(EXAMPLES:=.d) $(HOSTILES:=.d) $(FUZZERS:=.d) $(STRESSORS:=.d) \
		   $(PRELOAD_SRCS:preload/%.c=$(B)/preload/%.d)

SHLIB		:= $(B)/libmmkit.so.$(VERSION)
SHLIB_LINKS	:= $(B)/libmmkit.so.$(SOVERSION) $(B)/libmmkit.so
STLIB		:= $(B)/libmmkit.a
MAN_PAGES	:= $(wildcard man/*.1 man/*.3 man/*.7)
BASH_COMPLETION	:= $(wildcard cli/mmkit.bash)

# The peers bench-secret compares against, each built in when pkg-config
# finds it (a machine with only a compiler and make builds it without them).
# Asked only when benchmarks are built: the ASan and cross builds skip them.
ifneq ($(BENCH_SRCS),)
have_peer	= $(shell $(PKG_CONFIG) --exists $(1) 2>/dev/null && echo yes)
HAVE_LIBSODIUM	:= $(call have_peer,libsodium)
HAVE_OPENSSL	:= $(call have_peer,libcrypto)
endif
BENCH_CFLAGS_bench-secret := \
	$(if $(HAVE_LIBSODIUM),-DHAVE_LIBSODIUM $(shell $(PKG_CONFIG) --cflags libsodium)) \
	$(if $(HAVE_OPENSSL),-DHAVE_OPENSSL $(shell $(PKG_CONFIG) --cflags libcrypto))
BENCH_LIBS_bench-secret := \
	$(if $(HAVE_LIBSODIUM),$(shell $(PKG_CONFIG) --libs libsodium)) \
	$(if $(HAVE_OPENSSL),$(shell $(PKG_CONFIG) --libs libcrypto))

# Writes $(1) into the target only when it differs from what is there: a
# target depending on that file is rebuilt when the setting changes.
record		= @mkdir -p $(@D); echo '$(1)' | cmp -s - $@ 2>/dev/null || echo '$(1)' > $@

# Short lines ("  CC      build/lib/sys.o") unless V=1; none with make -s.
ifeq ($(V),1)
Q		:=
say		=
else
Q		:= @
ifneq ($(findstring s,$(firstword -$(MAKEFLAGS))),)
say		=
else
say		= printf '  %-7s %s\n' '$(1)' '$(2)';
endif
endif

# A recipe that fails leaves no half-written target behind.
.DELETE_ON_ERROR:

all: $(SHLIB) $(SHLIB_LINKS) $(STLIB) $(B)/mmkit $(TESTS) $(BENCHES) $(EXAMPLES) $(HOSTILES) \
	$(PRELOADS)

$(B)/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(LIB_CFLAGS) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(SHLIB): $(LIB_OBJS) lib/libmmkit.map
	$(Q)$(call say,LD,$@)$(CC) $(CFLAGS) $(LDFLAGS) -shared \
		-Wl,-soname,libmmkit.so.$(SOVERSION) -Wl,--version-script=lib/libmmkit.map \
		-o $@ $(LIB_OBJS) $(MMKIT_LDLIBS) $(LDLIBS)

$(SHLIB_LINKS): $(SHLIB)
	$(Q)$(call say,LN,$@)ln -sf $(notdir $(SHLIB)) $@

# The archive holds one object: the library linked together, its hidden
# (internal) symbols made local, so that only mmkit_ names are global and
# a program's own sys_open or the like cannot collide with the library's.
$(B)/libmmkit.o: $(LIB_OBJS)
	$(Q)$(call say,LD,$@)$(LD) -r -o $@ $^
	$(Q)$(call say,OBJCOPY,$@)$(OBJCOPY) --localize-hidden $@

$(STLIB): $(B)/libmmkit.o
	@rm -f $@
	$(Q)$(call say,AR,$@)$(AR) rcs $@ $^

# The command looks for installed benchmarks in LIBEXECDIR and for the
# shims in PRELOADDIR: it is rebuilt when they change (make; make install
# PREFIX=...).
$(CLI_OBJS): $(B)/cli/dirs.set

$(B)/cli/dirs.set: FORCE
	$(call record,$(LIBEXECDIR)/mmkit $(PRELOADDIR))

$(B)/cli/%.o: cli/%.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(CLI_CFLAGS) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

# The command reads /proc through the library's procfs layer (lib/procfs.h),
# which the archive keeps local: it links the objects.
$(B)/mmkit: $(CLI_OBJS) $(LIB_OBJS)
	$(Q)$(call say,LD,$@)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LIB_OBJS) \
		$(MMKIT_LDLIBS) $(LDLIBS)

# A shim is PIC like the library, and exports only what its map lists.
# It links the library's objects but keeps only the sections it uses
# (--gc-sections): the rest would be paid in resident memory by every
# program it is preloaded into.  A shim of more than one file has the
# objects of its other parts (preload/NAME-PART.c) as prerequisites.
$(B)/preload/%.o: preload/%.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(LIB_CFLAGS) -Ilib $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(B)/libmmkit-%.so: $(B)/preload/%.o $(LIB_OBJS) preload/%.map
	$(Q)$(call say,LD,$@)$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,--gc-sections \
		-Wl,--version-script=preload/$*.map -o $@ $(filter $(B)/preload/%.o,$^) \
		$(LIB_OBJS) $(MMKIT_LDLIBS) -ldl $(LDLIBS)

# libmmkit-perturb.so: the allocator, and the madvise and mlock wrappers.
$(B)/libmmkit-perturb.so: $(B)/preload/perturb-lock.o

# Tests (and the hostile targets, tests/hostile/) may look inside the
# library (lib/*.h) and call its internal functions, which the archive
# keeps local: they link the objects.
$(B)/tests/%: tests/%.c $(LIB_OBJS)
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(MMKIT_CFLAGS) -Ilib $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) \
		$(LDFLAGS) -o $@ $< $(LIB_OBJS) $(MMKIT_LDLIBS) $(LDLIBS)

# The libFuzzer targets and the stress programs look inside the library too.
# The command's escapers and parsers are fuzzed too.
$(B)/fuzz/fuzz-cli: $(B)/cli/util.o
$(B)/fuzz/fuzz-cli: CPPFLAGS += -Icli

$(B)/fuzz/%: tests/fuzz/%.c $(LIB_OBJS)
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(MMKIT_CFLAGS) -Ilib $(CPPFLAGS) $(CFLAGS) -fsanitize=fuzzer \
		$(DEPFLAGS) $(LDFLAGS) -o $@ $< $(filter %.o,$^) $(MMKIT_LDLIBS) $(LDLIBS)

$(B)/stress/%: tests/stress/%.c $(LIB_OBJS)
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(MMKIT_CFLAGS) -Ilib -Itests $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) \
		$(LDFLAGS) -o $@ $< $(LIB_OBJS) $(MMKIT_LDLIBS) $(LDLIBS)

# bench-secret is rebuilt when the peers found change (one is installed).
$(B)/bench/bench-secret: $(B)/bench/bench-secret.peers

$(B)/bench/bench-secret.peers: FORCE
	$(call record,$(strip $(BENCH_CFLAGS_bench-secret) $(BENCH_LIBS_bench-secret)))

# bench-sodium finds the installed shim where mmkit run does: it is rebuilt
# when PRELOADDIR changes, as the command is.
BENCH_CFLAGS_bench-sodium := -DMMKIT_PRELOADDIR='"$(PRELOADDIR)"'
$(B)/bench/bench-sodium: $(B)/cli/dirs.set

# Every benchmark writes its JSON through one report (bench/report.h) and
# reads its options through one parser (bench/options.h), which takes sizes
# with the command's own parser (cli/util.c).
BENCH_OBJS	:= $(B)/bench/report.o $(B)/bench/options.o $(B)/cli/util.o

$(B)/bench/report.o $(B)/bench/options.o: $(B)/bench/%.o: bench/%.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(MMKIT_CFLAGS) -Icli $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(B)/bench/%: bench/%.c $(BENCH_OBJS) $(STLIB)
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(MMKIT_CFLAGS) $(BENCH_CFLAGS_$*) $(CPPFLAGS) $(CFLAGS) \
		$(DEPFLAGS) $(LDFLAGS) -o $@ $< $(BENCH_OBJS) $(STLIB) $(BENCH_LIBS_$*) \
		$(MMKIT_LDLIBS) $(LDLIBS)

$(B)/examples/%: examples/%.c $(STLIB)
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$@)$(CC) $(MMKIT_CFLAGS) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) \
		$(LDFLAGS) -o $@ $< $(STLIB) $(MMKIT_LDLIBS) $(LDLIBS)

-include $(wildcard $(DEPS))

# Needs only a C compiler and make: no benchmark peers.  The examples are
# built too: the README tries one right after.
run: $(SHLIB) $(SHLIB_LINKS) $(STLIB) $(B)/mmkit $(EXAMPLES)
	$(B)/mmkit probe

# The ASan+UBSan build lives beside the normal one; it skips the peer
# benchmarks, whose libraries are not instrumented.
ASAN_FLAGS	:= -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
		   -fno-sanitize-recover=all

build-asan: FORCE
	$(Q)$(MAKE) --no-print-directory B=build-asan CFLAGS="$(ASAN_FLAGS)" \
		LDFLAGS="$(ASAN_FLAGS)" BENCH_SRCS= PRELOAD_MAPS= all

# Every suite on this machine, CHECK_JOBS side by side (as many as the
# machine has cores), the longest first; a new suite is one more command
# line in CHECK_SUITES.  The builds run with as many jobs too, unless make
# was given -j (CI calls make check without).  The log of everything, each
# test's whole output included, is $(B)/check.log; the run ends with a
# table of where the time went and a line adding up all the suites.
CHECK_JOBS	?= $(shell nproc 2>/dev/null || echo 1)
CHECK_SUITES	= "MMKIT_TEST_JOBS=$(CHECK_JOBS) tests/run-tests.sh $(B) build-asan" \
		  "tests/run-tsan.sh build-tsan $(TSAN_TESTS)" \
		  "tests/fuzz/run.sh build-fuzz 10" \
		  "tests/stress/run.sh $(B) $(STRESS_SECONDS)"
# Each binding's tests: 60 s of make check from a cold build cache (issue
# 21); the time table shows each beside its budget.
CHECK_BUDGETS	= test-rust:60 test-go:60 test-python:60 test-rust-package:60 test-python-package:60

check-build: all build-asan cross-aarch64 build-fuzz build-tsan $(STRESSORS)

check: FORCE
	tests/check.sh -j $(CHECK_JOBS) -l $(B)/check.log -t "$(CHECK_BUDGETS)" \
		-b "$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(CHECK_JOBS)) check-build" \
		$(CHECK_SUITES)

# libFuzzer needs clang; the library is built again with its coverage.
FUZZ_CC		?= clang
FUZZ_SECONDS	?= 60
FUZZ_FLAGS	:= -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
		   -fno-sanitize-recover=all

build-fuzz: FORCE
	$(Q)$(MAKE) --no-print-directory B=build-fuzz CC=$(FUZZ_CC) \
		CFLAGS="$(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -DMMKIT_FUZZ_DEAD_WRITER_NS=1000000ull" \
		LDFLAGS="$(FUZZ_FLAGS)" \
		BENCH_SRCS= $(FUZZ_SRCS:tests/fuzz/%.c=build-fuzz/fuzz/%)

fuzz: build-fuzz
	tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

# The tests that start threads, under ThreadSanitizer.  gcc warns that
# TSan does not model atomic_thread_fence (the names registry's seqlock
# uses them): -Wno-tsan lets it build; those reads are not checked by it.
TSAN_TESTS	:= $(notdir $(basename $(shell grep -l pthread_create $(TEST_SRCS))))
TSAN_FLAGS	:= -O1 -g -fsanitize=thread -Wno-tsan

build-tsan: FORCE
	$(Q)$(MAKE) --no-print-directory B=build-tsan CFLAGS="$(TSAN_FLAGS)" \
		LDFLAGS="$(TSAN_FLAGS)" BENCH_SRCS= $(TSAN_TESTS:%=build-tsan/tests/%)

check-tsan: build-tsan
	tests/run-tsan.sh build-tsan $(TSAN_TESTS)

STRESS_SECONDS	?= 60

stress: $(STRESSORS)
	tests/stress/run.sh $(B) $(STRESS_SECONDS)

check-native: all
	tests/run-tests.sh $(B)

# LD, AR and OBJCOPY follow from the compiler's name.
cross-aarch64: FORCE
	$(Q)$(MAKE) --no-print-directory B=build-aarch64 CC=aarch64-linux-gnu-gcc \
		LDFLAGS=-static CPPFLAGS=-DMMKIT_STATIC BENCH_SRCS= \
		build-aarch64/libmmkit.a build-aarch64/mmkit \
		$(TEST_SRCS:tests/%.c=build-aarch64/tests/%)

# The real-kernel tier under QEMU: Debian's 6.1 kernels (amd64, arm64 without
# and with MTE), its 6.12 ones (amd64, arm64 with MTE) and one built from
# linux-source-6.1 with ANON_VMA_NAME, KASAN and lockdep; bench-amd64, the
# same without the debugging, runs the naming benchmark; custom612-arm64-mte
# is 6.12 with the refpage_create(2) series cross-built for arm64, booted
# with MTE.
KERNEL_TIERS	?= debian-amd64 debian-arm64 debian-arm64-mte debian612-amd64 \
		   debian612-arm64-mte custom-amd64 custom612-amd64 bench-amd64 \
		   custom612-arm64-mte

check-kernels: FORCE
	tests/kernels/run.sh $(KERNEL_TIERS)

# The bench-amd64 tier with the naming benchmark at the published 65,536
# VMAs (check-kernels runs it at 8,192): the figures of docs/bench/bench-amd64.*.
bench-kernels: FORCE
	MMKIT_KERNEL_BENCH=published tests/kernels/run.sh bench-amd64

# The man pages of section $(1), into their directory.
install_man	= $(if $(filter %.$(1),$(MAN_PAGES)),install -d $(DESTDIR)$(MANDIR)/man$(1) && \
		  install -m 644 $(filter %.$(1),$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man$(1)/)

# mmkit.pc is written at install time: it names the PREFIX of this install.
# Man pages that are ".so" stubs are installed as they are: man follows them.
install: $(SHLIB) $(STLIB) $(B)/mmkit $(BENCHES) $(PRELOADS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBEXECDIR)/mmkit
	install -m 755 $(B)/mmkit $(DESTDIR)$(BINDIR)/mmkit
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libmmkit.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libmmkit.so.$(SOVERSION)
	ln -sf libmmkit.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libmmkit.so
	install -m 644 $(STLIB) $(DESTDIR)$(LIBDIR)/
	$(if $(PRELOADS),install -d $(DESTDIR)$(PRELOADDIR) && \
		install -m 644 $(PRELOADS) $(DESTDIR)$(PRELOADDIR)/)
	install -m 644 include/mmkit.h $(DESTDIR)$(INCLUDEDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    mmkit.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/mmkit.pc
	$(if $(BENCHES),install -m 755 $(BENCHES) $(DESTDIR)$(LIBEXECDIR)/mmkit/)
	$(call install_man,1)
	$(call install_man,3)
	$(call install_man,7)
	$(if $(BASH_COMPLETION),install -D -m 644 $(BASH_COMPLETION) \
		$(DESTDIR)$(BASHCOMPDIR)/mmkit)

clean:
	rm -rf build build-asan build-aarch64 build-kernels build-fuzz build-tsan

FORCE:
.PHONY: all run check check-build check-native check-kernels bench-kernels cross-aarch64 build-asan install clean FORCE \
	build-fuzz fuzz build-tsan check-tsan stress

# The Debian packages, into build-deb/ (debian/README.source).
deb:
	debian/build-debs build-deb
.PHONY: deb
