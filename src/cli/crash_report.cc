#include "cli/crash_report.h"

#include <csignal>
#include <cstring>

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#define PEBENCH_CRASH_REPORT 1
#include <execinfo.h>
#include <unistd.h>
#endif

namespace pebench {

#ifdef PEBENCH_CRASH_REPORT
namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

// Only async-signal-safe calls from here on: the heap may be what broke.
void write_err(const char* s) {
  const ssize_t n = write(STDERR_FILENO, s, std::strlen(s));
  (void)n;
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV (invalid memory access)";
    case SIGBUS: return "SIGBUS (bus error)";
    case SIGFPE: return "SIGFPE (arithmetic exception)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGABRT: return "SIGABRT (abort: a failed check, often the C library's heap checks)";
    default: return "a fatal signal";
  }
}

void on_fatal_signal(int sig) {
  write_err("pebench: crashed with ");
  write_err(signal_name(sig));
  write_err("; backtrace (innermost first):\n");
  void* frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
  // SA_RESETHAND restored the default action: the signal, raised again, ends
  // the process as it would have ended (core dump and exit status included)
  // once this handler returns.
  raise(sig);
}

// A stack of its own, so that a stack overflow still gets its report.
alignas(16) char g_signal_stack[64 * 1024];

}  // namespace

bool install_crash_report() {
  // backtrace() loads libgcc on its first call, which allocates: do that now,
  // not in a handler running on a corrupted heap.
  void* warm[1];
  backtrace(warm, 1);
  stack_t ss{};
  ss.ss_sp = g_signal_stack;
  ss.ss_size = sizeof g_signal_stack;
  const bool alt = sigaltstack(&ss, nullptr) == 0;
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | (alt ? SA_ONSTACK : 0);
  bool ok = true;
  for (int sig : kFatalSignals) ok = sigaction(sig, &sa, nullptr) == 0 && ok;
  return ok;
}

#else

bool install_crash_report() { return false; }

#endif

}  // namespace pebench
