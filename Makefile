# Thin wrapper over CMake: `make run` and `make test` are the README's two commands.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
SCENE ?= cloth_ball
FRAMES ?= 60

.PHONY: all deps configure build run test test-asan test-tsan bench fuzz install clean

all: build

deps:
	bash scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHY_WERROR=ON $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j$(JOBS)

# The main job: the default scene, headless.
run:
	bash scripts/run.sh $(SCENE) --frames $(FRAMES)

test:
	bash scripts/test.sh

test-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DHY_SANITIZE=ON -DHY_WERROR=ON -DHY_VIEWER=OFF
	cmake --build build-asan -j$(JOBS)
	cd build-asan && HY_TEST_SANITIZER=1 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j$(JOBS) -LE long

test-tsan: deps
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHY_TSAN=ON -DHY_WERROR=ON -DHY_VIEWER=OFF
	cmake --build build-tsan -j$(JOBS)
	cd build-tsan && HY_TEST_SANITIZER=1 TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j$(JOBS) -LE long -R "pool|determinism|cloth|frames|viewer_sim|runtime|intercept|integrate_sched|integrate_groups|feed|contact_order"

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) build-asan build-tsan
