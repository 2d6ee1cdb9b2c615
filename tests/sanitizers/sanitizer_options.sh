# Sourced by the tests that run the sanitized build (sanitized_unit_tests.sh, tests/cli/without_torch.sh):
# the first ASan or UBSan report fails the process, and leaks are reports.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
