# SPDX-License-Identifier: GPL-2.0
# bouncelab: make targets for the common steps. Each one calls run.sh or a
# script under kernels/, guest/, tests/; the scripts do the work.

.PHONY: all deps kernels guest test test-helpers test-analysis test-scripts test-build test-patches test-boot test-guest test-compare help

all: kernels

help:
	@./run.sh help

deps:
	./run.sh deps

kernels: deps
	./run.sh build

guest: deps
	./run.sh guest

# The full suite: installs what it needs, builds the kernels and the guest.
test: kernels guest
	tests/run-all.sh

test-helpers:
	tests/run-all.sh helpers

test-analysis:
	tests/run-all.sh analysis

# The host scripts' failure paths, with stubs: no kernels, no QEMU.
test-scripts:
	tests/run-all.sh scripts

test-build: kernels
	tests/run-all.sh build

test-patches: kernels
	tests/run-all.sh patches

test-boot: kernels
	tests/run-all.sh boot

test-guest: kernels guest
	tests/run-all.sh guest

test-compare: kernels guest
	tests/run-all.sh compare
