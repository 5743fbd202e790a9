# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
# Functions of tests/kernels/run.sh (sourced; uses $top, $here, $cache, $out).

# debian_abi SERIES: the ABI of Debian's current kernel of SERIES, e.g.
# 6.1.0-56 for 6.1 (the default kernel), 6.12.117+deb12 for 6.12.
debian_abi() {
	case $1 in
	6.1)	apt-cache depends linux-image-amd64 2>/dev/null |
			sed -n 's/.*Depends: linux-image-\(6\.1\.0-[0-9]*\)-amd64.*/\1/p' ;;
	6.12)	apt-cache depends linux-image-6.12-amd64 2>/dev/null |
			sed -n 's/.*Depends: linux-image-\(6\.12\.[0-9]*+deb[0-9]*\)-amd64.*/\1/p' ;;
	esac | head -n1
}

# fetch_deb PACKAGE[:ARCH]: downloads a package once into the cache.
fetch_deb() {
	name=${1%%:*}
	arch=${1#*:}
	[ "$arch" != "$1" ] || arch=amd64
	set -- "$cache"/debs/"${name}"_*_"${arch}".deb
	[ -f "$1" ] && return 0
	mkdir -p "$cache/debs"
	spec="$name:$arch"
	[ "$arch" != all ] || spec=$name
	(cd "$cache/debs" && apt-get download -q -o APT::Sandbox::User=root "$spec" >/dev/null)
}

# deb_path PACKAGE ARCH: the cached .deb.
deb_path() {
	set -- "$cache"/debs/"$1"_*_"$2".deb
	echo "$1"
}

# extract PACKAGE ARCH DIR: unpacks a cached .deb into DIR once.
extract() {
	[ -d "$3" ] && return 0
	mkdir -p "$3.tmp"
	dpkg-deb -x "$(deb_path "$1" "$2")" "$3.tmp"
	mv "$3.tmp" "$3"
}

# What the guest's /init and the test runner use of busybox.
guest_applets="sh mount mkdir cat echo ls cp rm ln chmod sed grep cut tail head wc
	date sleep timeout mktemp dmesg basename dirname uname insmod rmmod poweroff
	reboot sync id true false test tr sort printf kill find"

# make_initramfs BUSYBOX TESTS_DIR OUTPUT [MODULE...]: a gzip'ed cpio with
# busybox, /init, the runner and its argument sets (tests/*.args), the test
# binaries of TESTS_DIR and of the kernel series ($series_dir/tests, when
# set), the kernel modules for /init to load, the benchmarks guest_bench
# put in $bench_dir, and $require (what the tier is for) as mmkit/require,
# which /init exports as MMKIT_TEST_REQUIRE.
make_initramfs() {
	root="$3.root"
	rm -rf "$root"
	mkdir -p "$root/bin" "$root/sbin" "$root/dev" "$root/proc" "$root/sys" \
		"$root/tmp" "$root/mmkit/tests" "$root/mmkit/build/tests"
	cp "$1" "$root/bin/busybox"
	for applet in $guest_applets; do
		ln -s busybox "$root/bin/$applet"
	done
	cp "$here/guest-init" "$root/init"
	cp "$top/tests/run-tests.sh" "$top/tests/pool.sh" "$top"/tests/*.args "$root/mmkit/tests/"
	cp "$2"/tests/test-* "$root/mmkit/build/tests/"
	[ -z "$series_dir" ] || cp "$series_dir"/tests/test-* "$root/mmkit/build/tests/"
	cp "$2/mmkit" "$root/mmkit/build/"
	[ ! -d "$bench_dir" ] || cp -r "$bench_dir" "$root/mmkit/bench"
	[ -z "$require" ] || echo "$require" > "$root/mmkit/require"
	mkdir -p "$root/mmkit/modules"
	image=$3
	shift 3
	for module in "$@"; do
		cp "$module" "$root/mmkit/modules/"
	done
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$image"
	rm -rf "$root"
}

# expect_coverage TIER LOG: 0 when the guest ran what TIER is for.  The
# custom612-arm64-mte guest's tests fail rather than skip without MTE or
# the system call (MMKIT_TEST_REQUIRE); here the MTE selftest, which
# skips without them, must have run every case, and the probe must name
# the syscall backend for tagged pages.  Its benchmarks' exit codes are
# keep_bench_reports' to judge.  On custom612-amd64 (the config with
# LRU_GEN, DEBUG_FS, NUMA and KSM that the refpage selftest's cases need)
# that selftest must have run every case: a new case that skips there
# would pass the tier unnoticed.
expect_coverage() {
	case $1 in
	custom612-amd64)
		kselftest_totals "$2" test-kselftest-refpage refpage || return 1 ;;
	custom612-arm64-mte)
		kselftest_totals "$2" test-kselftest-refpage-mte refpage_mte || return 1
		grep -a -q '^mmkit-guest: probe: refpage .*tagged (MTE): syscall' "$2" || {
			echo "the probe does not name the syscall backend for tagged pages (MTE)"
			return 1
		} ;;
	esac
	return 0
}

# kselftest_totals LOG TEST NAME: 0 when the guest's TEST passed with its
# kselftest Totals saying fail:0 skip:0 error:0.
kselftest_totals() {
	totals=$(sed -n "/^PASS  \\[build\\] $2 /,/# Totals:/p" "$1" |
		grep -a '# Totals:' | tr -d '\r')
	case "$totals" in
	*" fail:0 "*" skip:0 error:0")
		echo "$3: ${totals#*# }" ;;
	*)	echo "$3 did not pass every case: ${totals:-no PASS line with Totals}"
		return 1 ;;
	esac
}

# judge LOG: 0 when the guest ran the suite cleanly.
judge() {
	summary=$(grep -a -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$1" | tail -n1)
	runner=$(grep -a 'mmkit-guest: runner exit' "$1" | tail -n1)
	bad=$(grep -a -E 'BUG:|WARNING:|Oops:|Call Trace:|Kernel panic|sleeping function called|suspicious RCU usage|mmkit-guest: .*FAILED' "$1" || true)
	ok=0
	if [ -z "$summary" ] || [ -z "$runner" ]; then
		echo "no summary from the guest (panic, hang or timeout): see $1"
		tail -n 30 "$1"
		ok=1
	fi
	case "$summary" in
	"0 passed, 0 failed, 0 skipped")
		echo "the guest ran no test: see $1"
		ok=1 ;;
	esac
	if [ -n "$bad" ]; then
		echo "kernel log shows trouble:"
		echo "$bad" | head -n 40
		ok=1
	fi
	echo "guest: ${summary:-none}; ${runner:-no runner exit}"
	case "$runner" in *"runner exit 0"*) ;; *) ok=1 ;; esac
	return $ok
}

# boot ARCH KERNEL INITRD LOG: with $guest_mib of memory.
boot() {
	# loglevel=5: warnings (WARN's "WARNING:", lockdep's and RCU's
	# reports) print at KERN_WARNING, which loglevel=4 kept off the console
	# and so out of judge()'s sight.
	append="panic=-1 secretmem.enable=1 loglevel=5"
	case $1 in
	# no_timer_check: on a loaded host the emulated 8254 can miss the
	# IO-APIC timer check, and 6.1 panics at boot ("IO-APIC + timer
	# doesn't work!", seen once with a load average of 28).
	amd64)	timeout "$boot_timeout" qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m "$guest_mib" \
			-nographic -no-reboot -kernel "$2" -initrd "$3" \
			-append "console=ttyS0 no_timer_check $append" </dev/null >"$4" 2>&1 ;;
	arm64)	timeout "$boot_timeout" "$arm64_qemu" -machine "$arm64_machine" \
			${arm64_qemu_data:+-L "$arm64_qemu_data"} \
			-cpu max,pauth-impdef=on -smp 2 -m "$guest_mib" -nographic -no-reboot \
			-kernel "$2" -initrd "$3" \
			-append "console=ttyAMA0 $append" </dev/null >"$4" 2>&1 ;;
	esac || true
}

# custom_kernel TIER VERSION: path of the kernel self-built from
# linux-source-VERSION with $here/TIER.config and the series of
# kernel/patches/VERSION/ applied, if there is one; built once per config
# and series (the patches are part of the cache key).  0000-*.patch is the
# series' cover letter, which changes no file.  An arm64 TIER (named
# *-arm64*) is cross-built.
custom_kernel() {
	config="$here/$1.config"
	patches=$(ls "$top/kernel/patches/$2"/*.patch 2>/dev/null | grep -v '/0000-[^/]*$')
	case $1 in
	*-arm64*)	build_arch=arm64 image=Image ;;
	*)		build_arch=amd64 image=bzImage ;;
	esac
	builder="$here/build-kernel.sh"
	key=$(cat "$config" "$builder" $patches | sha256sum | cut -c1-12)
	work="$cache/$1-$key"
	if [ ! -f "$work/$image" ]; then
		fetch_deb "linux-source-$2:all" >&2 || return 1
		deb=$(deb_path "linux-source-$2" all)
		if [ -n "$patches" ] && [ ! -d "$work/src" ]; then
			patched_source "$deb" "$2" "$work" $patches >&2 || return 1
		fi
		echo "building the $1 kernel from linux-source-$2 (10-30 minutes on 2 cores)" >&2
		"$builder" "$deb" "$2" "$config" "$work" $build_arch >&2 || return 1
	fi
	echo "$work/$image"
}

# patched_source DEB VERSION WORK PATCH...: linux-source-VERSION unpacked
# into WORK/src with the patches applied in order; build-kernel.sh then
# builds it as it is (it unpacks only where WORK has no src).
patched_source() {
	deb=$1 version=$2 work=$3
	shift 3
	rm -rf "$work/unpack" && mkdir -p "$work/unpack"
	dpkg-deb -x "$deb" "$work/unpack"
	tar -C "$work/unpack" -xaf "$work/unpack/usr/src/linux-source-$version.tar.xz"
	for patch in "$@"; do
		echo "applying $(basename "$patch")"
		patch -d "$work/unpack/linux-source-$version" -p1 --batch --quiet <"$patch" ||
			return 1
	done
	mv "$work/unpack/linux-source-$version" "$work/src"
	rm -rf "$work/unpack"
}

# series_programs SRC DIR [arm64]: the kernel series' selftest and
# benchmark (tools/testing/selftests/mm/refpage.c, refpage_bench.c), built
# static against SRC's exported headers: DIR/tests/test-kselftest-refpage,
# which the guest's runner runs with the suite, and DIR/refpage_bench.
# For arm64 they are cross-built, with the MTE selftest (refpage_mte.c,
# test-kselftest-refpage-mte), which only an MTE guest runs.
series_programs() {
	mm="$1/tools/testing/selftests/mm"
	karch=x86_64 cross="" cc=cc mte=""
	if [ "${3:-}" = arm64 ]; then
		karch=arm64 cross=aarch64-linux-gnu- cc=aarch64-linux-gnu-gcc mte=refpage_mte
	fi
	make -s -C "$1" ARCH=$karch CROSS_COMPILE=$cross headers >&2 || return 1
	mkdir -p "$2/tests"
	for test in refpage $mte; do
		$cc -static -O2 -Wall -isystem "$1/usr/include" -I "$1/tools/testing/selftests" \
			"$mm/$test.c" -o "$2/tests/test-kselftest-$(echo $test | tr _ -)" ||
			return 1
	done
	$cc -static -O2 -Wall -isystem "$1/usr/include" "$mm/refpage_bench.c" -o "$2/refpage_bench"
}

# custom_series TIER: the linux-source series a self-built TIER is built
# from; nothing for the other tiers.
custom_series() {
	case $1 in
	custom-amd64|bench-amd64)	echo 6.1 ;;
	custom612-amd64|custom612-arm64-mte)	echo 6.12 ;;
	esac
}

# prebuild TIER...: the self-built kernels of TIER... that the cache lacks,
# built one after the other in the background at the lowest priority (log:
# $out/prebuild.log), each marked $out/prebuilt.TIER when done.  On a
# fresh machine they take about half an hour of both cores; built so, they
# use what the tiers before them leave idle (an emulated guest mostly
# keeps one core busy).  $out/prebuilt.TIER holds the seconds it took (0:
# in the cache).  Sets prebuild_pid.
prebuild() {
	rm -f "$out"/prebuilt.*
	(
		renice -n 19 -p "$(sh -c 'echo $PPID')" >/dev/null
		for tier in "$@"; do
			series=$(custom_series "$tier")
			[ -n "$series" ] || continue
			start=$(date +%s)
			custom_kernel "$tier" "$series" >/dev/null
			echo $(( $(date +%s) - start )) >"$out/prebuilt.$tier"
		done
	) >"$out/prebuild.log" 2>&1 &
	prebuild_pid=$!
}

# wait_prebuilt TIER: until prebuild() is done with TIER's kernel (or has
# stopped); custom_kernel then finds it in the cache, or builds it (and
# shows why it fails) where the background build failed.
wait_prebuilt() {
	[ -n "${prebuild_pid:-}" ] || return 0
	[ -f "$out/prebuilt.$1" ] || ! kill -0 "$prebuild_pid" 2>/dev/null ||
		echo "waiting for the $1 kernel, building in the background ($out/prebuild.log)"
	while [ ! -f "$out/prebuilt.$1" ] && kill -0 "$prebuild_pid" 2>/dev/null; do
		sleep 5
	done
}

# debian_kernel ABI [ARCH]: Debian's kernel of ABI for ARCH (amd64), unpacked
# in the cache.
debian_kernel() {
	set -- "$1" "${2:-amd64}"
	fetch_deb "linux-image-$1-$2:$2" >&2 || return 1
	extract "linux-image-$1-$2" "$2" "$cache/linux-image-$1-$2"
	echo "$cache/linux-image-$1-$2/boot/vmlinuz-$1-$2"
}

# debian_brd ABI DIR [ARCH]: brd.ko of Debian's kernel ABI for ARCH (amd64);
# 6.12 ships it xz'ed, which busybox insmod cannot load, so it is unpacked
# into DIR.
debian_brd() {
	brd="$cache/linux-image-$1-${3:-amd64}/lib/modules/$1-${3:-amd64}/kernel/drivers/block/brd.ko"
	if [ -f "$brd.xz" ]; then
		mkdir -p "$2" && xz -dc "$brd.xz" > "$2/brd.ko" && brd="$2/brd.ko"
	fi
	echo "$brd"
}

# build_module KERNEL_BUILD_TREE DIR [MAKE_ARGUMENT...]: refpage.ko built out
# of tree in DIR.
build_module() {
	tree=$1 dir=$2
	shift 2
	rm -rf "$dir" && mkdir -p "$dir"
	cp "$top"/kmod/refpage/refpage.c "$top"/kmod/refpage/refpage.h \
		"$top"/kmod/refpage/Makefile "$dir/"
	make -s -C "$tree" M="$dir" "$@" modules >&2 || return 1
	echo "$dir/refpage.ko"
}

# debian_arm64_headers ABI: the build tree of Debian's arm64 kernel ABI, for
# cross-building modules.  The package is unpacked, never installed: as
# linux-headers-ABI-arm64:arm64 it would pull gcc-12:arm64, which removes
# the native and cross compilers.  Its Makefile includes the -common
# package by absolute path and its scripts/ and tools/ point, relatively,
# at linux-kbuild-SERIES: both are Architecture all or foreign, installed
# with the amd64 headers (tools/install-deps), and the kbuild link is made
# to resolve to the installed one.
debian_arm64_headers() {
	dir="$cache/linux-headers-$1-arm64"
	if [ ! -d "$dir" ]; then
		fetch_deb "linux-headers-$1-arm64:arm64" >&2 || return 1
		rm -rf "$dir.tmp"
		extract "linux-headers-$1-arm64" arm64 "$dir.tmp"
		kbuild=$(readlink "$dir.tmp/usr/src/linux-headers-$1-arm64/scripts")
		kbuild=${kbuild#../../lib/}
		kbuild=${kbuild%/scripts}
		mkdir -p "$dir.tmp/usr/lib"
		ln -s "/usr/lib/$kbuild" "$dir.tmp/usr/lib/$kbuild"
		mv "$dir.tmp" "$dir"
	fi
	tree="$dir/usr/src/linux-headers-$1-arm64"
	common=$(sed -n 's/^include \(.*\)\/Makefile$/\1/p' "$tree/Makefile")
	[ -d "$common" ] || { echo "$common missing: tools/install-deps installs it" >&2; return 1; }
	echo "$tree"
}

# qemu_mte: the directory holding usr/bin/qemu-system-aarch64 and its data
# (usr/share/qemu), a QEMU that keeps MTE tags per 16-byte granule.
# Debian 12's QEMU 7.2 keeps one tag per page (QEMU issue 1416, fixed in
# 8.0), so bookworm-backports' qemu-system-arm is unpacked into the cache
# (with its data) and run from there.  Installing it instead would replace
# qemu-system-common, which qemu-system-x86 7.2 depends on at its own
# version: the amd64 tiers would change emulator too.  The backport links
# against bookworm's libraries only.
qemu_mte() {
	dir="$cache/qemu-backports"
	if [ ! -x "$dir/usr/bin/qemu-system-aarch64" ]; then
		rm -rf "$dir.tmp" && mkdir -p "$dir.tmp/debs"
		(cd "$dir.tmp/debs" && apt-get download -q -o APT::Sandbox::User=root \
			qemu-system-arm/bookworm-backports qemu-system-data/bookworm-backports \
			>/dev/null) ||
			{ echo "no QEMU in bookworm-backports: tools/install-deps adds its source" >&2
			  return 1; }
		for deb in "$dir.tmp"/debs/*.deb; do
			dpkg-deb -x "$deb" "$dir.tmp" || return 1
		done
		rm -rf "$dir.tmp/debs"
		mv "$dir.tmp" "$dir"
	fi
	major=$("$dir/usr/bin/qemu-system-aarch64" --version |
		sed -n 's/^QEMU emulator version \([0-9]*\)\..*/\1/p')
	[ "${major:-0}" -ge 8 ] ||
		{ echo "$dir: QEMU ${major:-?} keeps MTE tags per page; 8.0 or newer needed" >&2
		  return 1; }
	echo "$dir"
}

# static_tests DIR: the test binaries built static for an amd64 guest
# (MMKIT_STATIC: what a static build cannot test says so and skips).
static_tests() {
	make -s -C "$top" B="$1" LDFLAGS=-static CPPFLAGS=-DMMKIT_STATIC BENCH_SRCS= "$1/mmkit" \
		$(cd "$top" && ls tests/test-*.c | sed "s|^tests/\(.*\)\.c$|$1/tests/\1|")
}

# guest_bench NAME BINARY ARGS: the guest runs benchmark NAME (BINARY,
# static) as "bench-NAME ARGS --json" after the suite; keep_bench_reports
# keeps its report.
guest_bench() {
	mkdir -p "$bench_dir"
	cp "$2" "$bench_dir/bench-$1"
	echo "$3" > "$bench_dir/bench-$1.args"
}

# keep_bench_reports TIER LOG: each benchmark's report, printed by the guest
# between markers, into $out/TIER.NAME.json; 0 when every one finished,
# is JSON and measured every row (a tier runs only what its kernel has).
keep_bench_reports() {
	kept=0
	for args in "$bench_dir"/bench-*.args; do
		[ -f "$args" ] || continue
		name=$(basename "$args" .args)
		report="$out/$1.${name#bench-}.json"
		sed -n "/mmkit-guest: $name json begin/,/mmkit-guest: $name json end/p" "$2" |
			tr -d '\r' | grep -a -v 'mmkit-guest: ' > "$report"
		grep -a -q "mmkit-guest: $name exit 0 " "$2" ||
			{ echo "$name did not finish cleanly"; kept=1; continue; }
		python3 - "$report" <<'END' || kept=1
import json, sys
try:
    report = json.load(open(sys.argv[1]))
except ValueError as e:
    sys.exit("%s is not JSON: %s" % (sys.argv[1], e))
print("%s:" % sys.argv[1])
missing = [r for r in report.get("rows", []) if not r.get("available", True)]
for r in report.get("rows", []):
    where = " ".join(str(r[k]) for k in ("table", "series", "label", "x") if k in r)
    figures = ", ".join("%s %.4g %s" % (m, v["median"], v["unit"])
                        for m, v in r.get("metrics", {}).items())
    print("  %s: %s" % (where, figures or r.get("reason", "")))
for r in report.get("ratios", []):
    print("  %s: %.3f" % (r["what"], r["value"]))
if missing:
    sys.exit("%d rows not measured in the guest" % len(missing))
END
	done
	return $kept
}

# Which tiers run which benchmarks, with what: sized for CI under emulation.
# The arm64 guest has address authentication (-cpu max), so bench-pac
# measures there: 200,000 calls per key configuration and round take about
# 25 s emulated.
pac_bench_args="--calls 200000 --rounds 5"
# Naming needs CONFIG_ANON_VMA_NAME, which only the self-built kernels
# have; bench-amd64 is the one without KASAN and lockdep, which made the
# published 65,536 VMAs impossible in CI time.  At that size (make
# bench-kernels: MMKIT_KERNEL_BENCH=published) its guest needs 4 GiB, the
# row with 10 pages touched in each VMA holding 2.5 GiB; building the 30
# sets of VMAs takes most of the time (about 5 minutes emulated on one
# host, 12 on a slower one, 937 s in all there); the forks, 4 per set, one
# to three.  make check-kernels runs the same experiment, the same rows
# and rounds, at an eighth of the VMAs: fork's cost grows with the VMAs it
# copies, named or not, so the comparison keeps its shape in an eighth of
# the time, in a 2 GiB guest.
if [ "${MMKIT_KERNEL_BENCH:-}" = published ]; then
	names_bench_args="--vmas 65536 --forks 20" names_guest_mib=4096
else
	names_bench_args="--vmas 8192 --forks 20" names_guest_mib=2048
fi
# The direct-map experiment needs a kernel whose direct map no secret page
# has split yet, which a long-running host is not: the guest runs it before
# the suite, one round (the pool first, then one memfd_secret region per
# secret, which finds the ranges the pool split already split), about 1 s.
direct_map_bench_args="--direct-map --rounds 1"
# The MTE guest compares tagging up front with tagged reference pages
# (kmod and memfd), 20 iterations of every row and touch size: about 4 s
# emulated.
tagged_bench_args="--tagged --iterations 20"
# The kernel series' refpage_bench (map 4,096,000 bytes, touch, unmap; 1000
# times on real hardware): 100 iterations of its 12 rows, 10 of its first
# touches by 1 and 2 threads (each 4 or 8 MB of first stores, emulated).
series_bench_args="-n 100 -t 10"
# The series' benchmark on the arm64 MTE guest, smaller: its 12 rows 20
# times, first touches by threads 5 times.
arm64_series_bench_args="-n 20 -t 5"
# First stores from 1 and 2 threads (the guest's CPUs) on the series'
# kernel, where every row is available: memset, syscall, kmod, memfd.
threads_bench_args="--threads --iterations 10"

# arm64_mte_tests DIR: what the custom612-arm64-mte guest runs of the
# suite (build-aarch64, cross-built), into DIR: mmkit and the tests of
# reference pages and MTE, which that tier is for; the Debian arm64 tiers
# run the rest under TCG already.  Not test-refpage-cost either, which
# measures the memfd backend's page cache (112 s of the guest's 274 s
# here), no kernel's.
arm64_mte_tests() {
	rm -rf "$1" && mkdir -p "$1/tests" || return 1
	cp "$top/build-aarch64/mmkit" "$1/" || return 1
	for test in "$top"/build-aarch64/tests/test-refpage* "$top/build-aarch64/tests/test-mte" \
		    "$top/build-aarch64/tests/test-probe"; do
		case $test in */test-refpage-cost) continue ;; esac
		[ ! -x "$test" ] || cp "$test" "$1/tests/" || return 1
	done
	echo "$1"
}

# prepare_tier TIER: the kernel (fetched, or waited for while it builds in
# the background), the modules, the tests and the initramfs of TIER's
# guest, $out/TIER.cpio.gz; sets what boot_tier uses and kernel_secs, the
# seconds spent getting the kernel.  It writes what tiers share (the
# cache, the static tests, build-aarch64): one tier at a time.
prepare_tier() {
	kernel="" modules="" arch=amd64 guest_mib=2048 kernel_secs=0 series_dir="" require=""
	bench_dir="$out/bench-$1"
	rm -rf "$bench_dir" "$out/$1".*.json
	arm64_qemu=qemu-system-aarch64 arm64_qemu_data="" arm64_machine=virt
	case $1 in
	debian-amd64|debian612-amd64)
		series=6.1
		[ "$1" = debian-amd64 ] || series=6.12
		abi=$(debian_abi $series)
		[ -n "$abi" ] || { echo "cannot find Debian's $series kernel ABI (apt-get update?)"; return 1; }
		headers=/usr/src/linux-headers-$abi-amd64
		[ -d "$headers" ] || { echo "$headers missing: tools/install-deps installs it"; return 1; }
		kernel_start=$(date +%s)
		kernel=$(debian_kernel "$abi") || return 1
		kernel_secs=$(( $(date +%s) - kernel_start ))
		modules="$(build_module "$headers" "$out/kmod-$1") $(debian_brd "$abi" "$out/brd-$1")" ||
			return 1
		static_tests "$out/static-amd64" || return 1
		tests="$out/static-amd64" ;;
	custom-amd64|custom612-amd64|bench-amd64)
		kernel_start=$(date +%s)
		wait_prebuilt "$1"
		kernel=$(custom_kernel "$1" "$(custom_series "$1")") || return 1
		kernel_secs=$(( $(date +%s) - kernel_start ))
		src="$(dirname "$kernel")/src"
		modules="$(build_module "$src" "$out/kmod-$1") $src/drivers/block/brd.ko" || return 1
		static_tests "$out/static-amd64" || return 1
		tests="$out/static-amd64"
		# A kernel built with the series (kernel/patches/): its selftest
		# runs with the suite, its benchmark before it.
		if [ -f "$src/tools/testing/selftests/mm/refpage.c" ]; then
			series_dir="$out/series-$1"
			series_programs "$src" "$series_dir" || return 1
			guest_bench refpage-series "$series_dir/refpage_bench" "$series_bench_args"
			make -s -C "$top" B="$out/static-amd64" LDFLAGS=-static PKG_CONFIG=false \
				"$out/static-amd64/bench/bench-refpage" || return 1
			guest_bench refpage-threads "$out/static-amd64/bench/bench-refpage" \
				"$threads_bench_args"
		fi
		if [ "$1" = bench-amd64 ]; then
			guest_mib=$names_guest_mib
			make -s -C "$top" B="$out/static-amd64" LDFLAGS=-static PKG_CONFIG=false \
				"$out/static-amd64/bench/bench-names" \
				"$out/static-amd64/bench/bench-secret" || return 1
			guest_bench names "$out/static-amd64/bench/bench-names" "$names_bench_args"
			guest_bench secret "$out/static-amd64/bench/bench-secret" "$direct_map_bench_args"
		fi ;;
	custom612-arm64-mte)
		arch=arm64
		require="mte syscall"
		qemu=$(qemu_mte) || return 1
		arm64_qemu=$qemu/usr/bin/qemu-system-aarch64
		arm64_qemu_data=$qemu/usr/share/qemu
		arm64_machine=virt,mte=on
		kernel_start=$(date +%s)
		wait_prebuilt "$1"
		kernel=$(custom_kernel "$1" "$(custom_series "$1")") || return 1
		kernel_secs=$(( $(date +%s) - kernel_start ))
		src="$(dirname "$kernel")/src"
		modules="$(build_module "$src" "$out/kmod-$1" ARCH=arm64 \
			CROSS_COMPILE=aarch64-linux-gnu-) $src/drivers/block/brd.ko" || return 1
		make -s -C "$top" cross-aarch64 || return 1
		series_dir="$out/series-$1"
		series_programs "$src" "$series_dir" arm64 || return 1
		tests=$(arm64_mte_tests "$out/tests-$1") || return 1
		guest_bench refpage-series "$series_dir/refpage_bench" "$arm64_series_bench_args"
		make -s -C "$top" B=build-aarch64 CC=aarch64-linux-gnu-gcc LDFLAGS=-static \
			build-aarch64/bench/bench-refpage || return 1
		guest_bench refpage "$top/build-aarch64/bench/bench-refpage" "$tagged_bench_args" ;;
	debian-arm64|debian-arm64-mte|debian612-arm64-mte)
		arch=arm64
		series=6.1
		[ "$1" != debian612-arm64-mte ] || series=6.12
		abi=$(debian_abi $series)
		[ -n "$abi" ] ||
			{ echo "cannot find Debian's $series kernel ABI (apt-get update?)"; return 1; }
		# Debian 12's QEMU keeps MTE tags per page: the tier without MTE
		# runs on it, the MTE tiers on a QEMU that keeps them per granule.
		if [ "$1" != debian-arm64 ]; then
			qemu=$(qemu_mte) || return 1
			arm64_qemu=$qemu/usr/bin/qemu-system-aarch64
			arm64_qemu_data=$qemu/usr/share/qemu
			arm64_machine=virt,mte=on
		fi
		kernel_start=$(date +%s)
		kernel=$(debian_kernel "$abi" arm64) || return 1
		kernel_secs=$(( $(date +%s) - kernel_start ))
		headers=$(debian_arm64_headers "$abi") || return 1
		modules="$(build_module "$headers" "$out/kmod-$1" ARCH=arm64 \
			CROSS_COMPILE=aarch64-linux-gnu-) $(debian_brd "$abi" "$out/brd-$1" arm64)" ||
			return 1
		make -s -C "$top" cross-aarch64 || return 1
		tests="$top/build-aarch64"
		if [ "$1" = debian-arm64 ]; then
			make -s -C "$top" B=build-aarch64 CC=aarch64-linux-gnu-gcc LDFLAGS=-static \
				build-aarch64/bench/bench-pac || return 1
			guest_bench pac "$top/build-aarch64/bench/bench-pac" "$pac_bench_args"
		fi
		if [ "$1" != debian-arm64 ]; then
			make -s -C "$top" B=build-aarch64 CC=aarch64-linux-gnu-gcc LDFLAGS=-static \
				build-aarch64/bench/bench-refpage || return 1
			guest_bench refpage "$top/build-aarch64/bench/bench-refpage" \
				"$tagged_bench_args"
		fi ;;
	*)	echo "unknown tier $1"; return 1 ;;
	esac
	fetch_deb "busybox-static:$arch" || return 1
	extract busybox-static "$arch" "$cache/busybox-static-$arch"
	make_initramfs "$cache/busybox-static-$arch/bin/busybox" "$tests" "$out/$1.cpio.gz" $modules
}

# boot_tier TIER: boots the guest prepare_tier made and judges its console
# (tiers boot side by side).
boot_tier() {
	log="$out/$1.console.log"
	start=$(date +%s)
	boot "$arch" "$kernel" "$out/$1.cpio.gz" "$log"
	echo "booted $(basename "$kernel") and ran the suite in $(( $(date +%s) - start ))s"
	grep -a -E '^(PASS|FAIL|SKIP) |mmkit-guest' "$log" || true
	judge "$log" || return 1
	expect_coverage "$1" "$log" || return 1
	keep_bench_reports "$1" "$log"
}
