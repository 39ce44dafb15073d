// A crash (a fatal signal in pebench or in the Vulkan driver it loaded)
// names its signal and prints a backtrace on stderr before the process dies
// as it would have, so that a crash seen once, in CI, says where it was.
// Frames in pebench print as `pebench(+0xOFFSET)`: `addr2line -Cfe
// build/pebench 0xOFFSET` names the function.
#pragma once

namespace pebench {

// Installs the handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT.
// Does nothing under AddressSanitizer (its own reports say more) or without
// glibc's backtrace(); returns whether the handlers are in place.
bool install_crash_report();

}  // namespace pebench
