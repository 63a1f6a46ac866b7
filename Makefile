# SPDX-License-Identifier: GPL-2.0
# bouncelab: make targets for the common steps. Each one calls run.sh or a
# script under kernels/, guest/, tests/; the scripts do the work.

.PHONY: all deps test-deps kernels kernels-all guest test test-versions test-helpers test-analysis test-scripts test-build test-patches test-boot test-guest test-regression test-compare help

all: kernels

help:
	@./run.sh help

deps:
	./run.sh deps

# What the lab needs and what only the suites need (openssh-server).
test-deps:
	./run.sh deps --test

kernels: deps
	./run.sh build

guest: deps
	./run.sh guest

# Every base's variants (kernels/bases: fetched when missing), not only the
# default base's.
kernels-all: deps
	./run.sh build --all

# The full suite: installs what it needs, builds the kernels and the guest.
test: test-deps kernels guest
	tests/run-all.sh

test-helpers:
	tests/run-all.sh helpers

test-analysis:
	tests/run-all.sh analysis

# The host scripts' failure paths, with stubs: no kernels, no QEMU. Every
# scripts-* suite, or one: make test-scripts-plan (tests/scripts-*.settings).
test-scripts:
	tests/run-all.sh scripts

test-scripts-%:
	tests/run-all.sh scripts-$*

test-build: kernels
	tests/run-all.sh build

test-patches: kernels
	tests/run-all.sh patches

test-boot: kernels
	tests/run-all.sh boot

test-guest: kernels guest
	tests/run-all.sh guest

test-regression: kernels guest
	tests/run-all.sh regression

test-compare: test-deps kernels guest
	tests/run-all.sh compare

# The other kernel bases (5.10, 6.1, 7.2): fetched over the network, built,
# their truth tables booted, the backport checked against 7.2. Not in
# `make test`: about 45 min cold on 2 cores.
test-versions: kernels-all guest
	tests/run-all.sh versions
