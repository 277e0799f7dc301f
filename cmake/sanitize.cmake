# The sanitizer build (-DDSEC_SANITIZE=ON, clang): the library, the tools and dsec-unit
# with AddressSanitizer and UndefinedBehaviorSanitizer, and the fuzz targets of
# tests/fuzz in the same build directory (the library carries libFuzzer's coverage
# instrumentation, fuzzer-no-link, so one build serves both). Any report aborts the
# program: a sanitizer finding fails its test.
#
# Left unsanitized, static and as in the normal build: dsec-init and dsec-probe, which
# are copied into sandboxes (a static binary cannot carry ASan's runtime, and inside a
# sandbox its shadow memory would count against the sandbox's memory limit).
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "DSEC_SANITIZE needs clang (CC=clang CXX=clang++): libFuzzer comes with it")
endif()

# clang before 16 cannot compile libstdc++ 12's <expected> (it needs conditionally
# trivial destructors): give it the small stand-in under cmake/compat.
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-std=c++2b")
check_cxx_source_compiles("#include <expected>
int main() { std::expected<int, int> e{1}; return *e - 1; }" DSEC_HAVE_STD_EXPECTED)
unset(CMAKE_REQUIRED_FLAGS)

set(DSEC_SAN_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
# The init's code, which the library carries for one-shot sandboxes (ns/init.h), runs as
# it does in dsec-init: it forks commands onto stacks of its own, which ASan cannot follow.
set_source_files_properties(lib/dsec/ns/init.c PROPERTIES COMPILE_OPTIONS -fno-sanitize=all)
get_property(dsec_targets DIRECTORY PROPERTY BUILDSYSTEM_TARGETS)
foreach(t ${dsec_targets})
  get_target_property(type ${t} TYPE)
  if(t STREQUAL "dsec-init" OR t STREQUAL "dsec-probe" OR type STREQUAL "INTERFACE_LIBRARY")
    continue()
  endif()
  target_compile_options(${t} PRIVATE ${DSEC_SAN_FLAGS})
  # Every file parses nlohmann/json: once per target instead (a third of the build).
  if(NOT type STREQUAL "OBJECT_LIBRARY")
    target_precompile_headers(${t} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:<nlohmann/json.hpp$<ANGLE-R>>")
  endif()
  if(NOT DSEC_HAVE_STD_EXPECTED)
    target_include_directories(${t} SYSTEM BEFORE PRIVATE ${CMAKE_SOURCE_DIR}/cmake/compat)
  endif()
  # Not position-independent: the coverage tables and ASan's globals hold a pointer per
  # function and per global, 630,000 relocations that each start of a PIE applied (and
  # wrote, page by page) before main: a sanitized `dsec-run ls` took 157 ms of CPU.
  if(type STREQUAL "EXECUTABLE")
    target_link_options(${t} PRIVATE -fsanitize=address,undefined -no-pie)
    target_sources(${t} PRIVATE ${CMAKE_SOURCE_DIR}/cmake/sanitizer-defaults.c)
  endif()
endforeach()
# What the fuzzers explore: coverage in the library they call into.
target_compile_options(dsec PRIVATE -fsanitize=fuzzer-no-link)
if(NOT DSEC_HAVE_STD_EXPECTED)
  target_include_directories(dsec SYSTEM BEFORE INTERFACE ${CMAKE_SOURCE_DIR}/cmake/compat)
endif()

add_subdirectory(tests/fuzz)
